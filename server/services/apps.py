"""Apps (SPEC 2.2.1): the OAuth 2.0 authorization code grant with PKCE for public clients with no
registration. An app's `client_id` is any name of 1 to 64 printable characters, shown to the
player; its `redirect_uri` is `https://…`, or `http://localhost…` / `http://127.0.0.1…` (an app
on the player's own machine); its code challenge is `S256` only. A code lives 60 s, is bound to
its client, redirect URI and challenge, and is used once: a second use is `invalid_grant` and
ends the session the first use made (RFC 6749 10.5). The token is a session of the player
(`server.services.sessions`), with the scopes granted, the app's client_id, and a year to live;
there are no refresh tokens.

**Why oauthlib, not Authlib.** Both are kept libraries that implement RFC 6749 and RFC 7636.
Authlib's server side is built around its framework integrations: its documented servers are
the Flask and the Django ones, its grants ask for client, code and token models that implement
its mixins (`ClientMixin`, `AuthorizationCodeMixin`, with SQLAlchemy helpers in
`authlib.integrations.sqla_oauth2`), and its generic `AuthorizationServer` is there to be
subclassed by such an integration. oauthlib is the framework-free protocol core: "the logic of
OAuth2 without assuming a specific HTTP request object or web framework", with every decision
about clients, codes and tokens asked of one validator object (`RequestValidator`). That is
what an async server can drive: oauthlib itself is synchronous and does no I/O but through the
validator, so here

1. what a request needs from the database is loaded first (async): the code row of a token
   request, else nothing;
2. oauthlib runs (`validate_authorization_request`, `create_authorization_response`,
   `create_token_response`, `create_revocation_response`) with a `Validator` that answers from
   what was loaded and only *records* the writes it is asked for (`save_authorization_code`,
   `save_bearer_token`, `invalidate_authorization_code`, `revoke_token`, and a code used twice);
3. the recorded writes are made (async), in one transaction: a code row; a session and the
   code marked used by it (if another exchange of the same code won the race, the session is
   rolled back and the answer is `invalid_grant`).

oauthlib's bearer token is replaced by the session's own token (`SessionService.add` draws it);
oauthlib draws none (`token_generator` gives a placeholder).

oauthlib does the protocol's checks; on top of them `Validator` says what a client_id, a
redirect URI and a scope may be, and two checks of its own run inside oauthlib's
(`pre_auth` / `pre_token`): the challenge is 43 to 128 characters of `[A-Za-z0-9-._~]` with
method `S256` (oauthlib also takes `plain`, and takes a bad challenge or method for an error it
may redirect with, where SPEC 2.2.1 wants an error page), and the grant type is
`authorization_code` only (oauthlib's code grant also answers `openid`).
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

from oauthlib.common import Request
from oauthlib.oauth2 import (
    AccessDeniedError,
    AuthorizationCodeGrant,
    AuthorizationEndpoint,
    BearerToken,
    FatalClientError,
    InvalidGrantError,
    InvalidRequestError,
    InvalidRequestFatalError,
    OAuth2Error,
    RequestValidator,
    RevocationEndpoint,
    TokenEndpoint,
    UnsupportedGrantTypeError,
)
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.services.sessions import ALL_SCOPES, SessionService, hash_token, require, scope_text
from server.services.values import Clock, is_printable_ascii, wall_clock_ms
from server.store import sessions as session_rows
from server.store.sessions import CodeRecord

CODE_LIFETIME_MS = 60_000
"""An authorization code lives 60 s (SPEC 2.2.1)."""
TOKEN_LIFETIME_S = 31_536_000
"""An app's token (its session) lives a year: the `expires_in` of the token answer."""
FORGET_AFTER_MS = 24 * 3_600_000
"""Codes are kept a day after they expired, so that a second use within it still finds the code
and ends the session it made; then they are deleted."""
FORGET_EVERY_MS = 60_000
"""How often (at most) a process deletes the codes past FORGET_AFTER_MS, when it issues one."""
CLIENT_ID_MAX = 64
REDIRECT_URI_MAX = 2048
CODE_MAX = 256
"""The longest code looked up (ours are 30 characters)."""
TOKEN_MAX = 256
"""The longest token a revocation looks up (ours are 43 characters)."""
CHALLENGE = re.compile(r"[A-Za-z0-9._~-]{43,128}")
"""A PKCE code challenge (RFC 7636 4.2: base64url of a SHA-256 is 43 of these)."""
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1"})
DNS_NAME = re.compile(
    r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
)

AUTHORIZE_PARAMS = (
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
)
"""The parameters of an authorization request that oauthlib is given (others are ignored, as
RFC 6749 3.1 says; `response_mode` among them: the code always comes in the query)."""
TOKEN_PARAMS = ("grant_type", "code", "code_verifier", "redirect_uri", "client_id")
REVOKE_PARAMS = ("token", "token_type_hint", "client_id")
PENDING = "(the session's token)"
"""What oauthlib's bearer token holds until the session's token replaces it."""

Pairs = Sequence[tuple[str, str]]


# ---------------------------------------------------------------- what a client may send


def valid_client_id(client_id: str | None) -> bool:
    """1 to 64 printable characters (the app's name, as the player is shown it)."""
    return (
        client_id is not None
        and 0 < len(client_id) <= CLIENT_ID_MAX
        and client_id.isprintable()
        and bool(client_id.strip())
    )


@dataclass(frozen=True, slots=True)
class Target:
    """Where a redirect URI sends the player: its host (as the consent page shows it) and its
    origin (the one other place the consent form may send the browser)."""

    host: str
    origin: str


def redirect_target(uri: str | None) -> Target | None:
    """The target of an acceptable redirect URI, else None: `https://host…` (a DNS name or an IP
    address), or `http://localhost[:port]…` / `http://127.0.0.1[:port]…`; absolute, ASCII, at
    most 2048 characters, with no user name, password or fragment (RFC 6749 3.1.2)."""
    if uri is None or not 0 < len(uri) <= REDIRECT_URI_MAX or not is_printable_ascii(uri):
        return None
    if " " in uri or "#" in uri or "\\" in uri:
        return None
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if host is None or "@" in parts.netloc:
        return None
    if parts.scheme == "http":
        if host not in LOOPBACK_HOSTS:
            return None
    elif parts.scheme == "https":
        if not (DNS_NAME.fullmatch(host) or _ip_literal(host)):
            return None
    else:
        return None
    shown = f"[{host}]" if ":" in host else host
    if port is not None:
        shown += f":{port}"
    return Target(shown, f"{parts.scheme}://{shown}")


def _ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _only(pairs: Pairs, names: Iterable[str]) -> list[tuple[str, str]]:
    wanted = set(names)
    return [(name, value) for name, value in pairs if name in wanted]


def _first(pairs: Pairs, name: str) -> str | None:
    for key, value in pairs:
        if key == name:
            return value
    return None


# ---------------------------------------------------------------- oauthlib's side


@dataclass(frozen=True, slots=True)
class PublicClient:
    """What oauthlib calls `request.client`: a client_id, nothing more (no registration)."""

    client_id: str


@dataclass(frozen=True, slots=True)
class IssuedCode:
    """A code oauthlib issued (`save_authorization_code`), to be stored."""

    code: str
    player_id: str
    client_id: str
    redirect_uri: str
    code_challenge: str
    scopes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """A token oauthlib issued (`save_bearer_token`): a session to make."""

    player_id: str
    client_id: str
    scopes: tuple[str, ...]
    answer: dict[str, Any]


@dataclass
class Validator(RequestValidator):
    """oauthlib's questions, answered from what was loaded before it ran (`code`: the row of the
    code a token request names, if any), and its writes, recorded for the caller to make."""

    now_ms: int
    code: CodeRecord | None = None
    revocation: bool = False
    issued_code: IssuedCode | None = None
    issued_token: IssuedToken | None = None
    code_used: bool = False
    reused: CodeRecord | None = None
    """A code presented again after its first use: the session it made is to end."""
    revoked: list[str] = field(default_factory=list)

    # -- clients: public, unregistered, named by their client_id

    def client_authentication_required(self, request: Request, *args: Any, **kwargs: Any) -> bool:
        return False

    def authenticate_client_id(
        self, client_id: str, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        if self.revocation:  # RFC 7009 with public clients: anyone holding a token may end it
            request.client = PublicClient(client_id or "")
            return True
        if not valid_client_id(client_id):
            return False
        request.client = PublicClient(client_id)
        return True

    def validate_client_id(
        self, client_id: str, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        if not valid_client_id(client_id):
            return False
        request.client = PublicClient(client_id)
        return True

    def validate_redirect_uri(
        self, client_id: str, redirect_uri: str, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        return redirect_target(redirect_uri) is not None

    def get_default_redirect_uri(
        self, client_id: str, request: Request, *args: Any, **kwargs: Any
    ) -> str:
        return ""  # none: with no registration, every request names its redirect URI

    def validate_response_type(
        self,
        client_id: str,
        response_type: str,
        client: Any,
        request: Request,
        *args: Any,
        **kwargs: Any,
    ) -> bool:
        return response_type == "code"

    def validate_grant_type(
        self,
        client_id: str,
        grant_type: str,
        client: Any,
        request: Request,
        *args: Any,
        **kwargs: Any,
    ) -> bool:
        return grant_type == "authorization_code"

    def is_pkce_required(self, client_id: str, request: Request) -> bool:
        return True

    # -- scopes

    def get_default_scopes(
        self, client_id: str, request: Request, *args: Any, **kwargs: Any
    ) -> list[str]:
        return []  # no scope asked for: a token that only tells who the player is

    def validate_scopes(
        self,
        client_id: str,
        scopes: list[str],
        client: Any,
        request: Request,
        *args: Any,
        **kwargs: Any,
    ) -> bool:
        return set(scopes) <= ALL_SCOPES

    # -- codes

    def save_authorization_code(
        self, client_id: str, code: Any, request: Request, *args: Any, **kwargs: Any
    ) -> None:
        assert isinstance(request.user, str) and request.redirect_uri is not None
        self.issued_code = IssuedCode(
            code["code"],
            request.user,
            client_id,
            request.redirect_uri,
            request.code_challenge or "",
            tuple(request.scopes or ()),
        )

    def validate_code(
        self, client_id: str, code: str, client: Any, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        row = self.code
        if row is None or row.code_hash != hash_token(code):
            return False
        if row.used_ms is not None:
            self.reused = row
            return False
        if row.expires_ms <= self.now_ms or row.client_id != client_id:
            return False
        if request.redirect_uri is not None and request.redirect_uri != row.redirect_uri:
            # invalid_grant (RFC 6749 5.2), where oauthlib's own check (confirm_redirect_uri,
            # below) would say invalid_request
            return False
        request.user = row.player_id
        request.scopes = row.scopes.split()
        return True

    def get_code_challenge(self, code: str, request: Request) -> str:
        assert self.code is not None  # asked only once validate_code has found the code
        return self.code.code_challenge

    def get_code_challenge_method(self, code: str, request: Request) -> str:
        return "S256"  # the only one a code is issued for

    def confirm_redirect_uri(
        self,
        client_id: str,
        code: str,
        redirect_uri: str,
        client: Any,
        request: Request,
        *args: Any,
        **kwargs: Any,
    ) -> bool:
        return self.code is not None and redirect_uri == self.code.redirect_uri

    def invalidate_authorization_code(
        self, client_id: str, code: str, request: Request, *args: Any, **kwargs: Any
    ) -> None:
        self.code_used = True

    # -- tokens

    def save_bearer_token(self, token: Any, request: Request, *args: Any, **kwargs: Any) -> object:
        assert isinstance(request.user, str) and isinstance(request.client_id, str)
        self.issued_token = IssuedToken(
            request.user, request.client_id, tuple(request.scopes or ()), dict(token)
        )
        return None

    def revoke_token(
        self, token: str, token_type_hint: str, request: Request, *args: Any, **kwargs: Any
    ) -> None:
        self.revoked.append(token)


def _challenge_s256(request: Request) -> dict[str, Any]:
    """A `pre_auth` check: a challenge of the right form, by S256 (else an error page)."""
    for name in ("code_challenge", "code_challenge_method"):
        if name in request.duplicate_params:
            raise InvalidRequestFatalError(
                description=f"Duplicate {name} parameter.", request=request
            )
    challenge = request.code_challenge
    if not isinstance(challenge, str) or not CHALLENGE.fullmatch(challenge):
        raise InvalidRequestFatalError(
            description="code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ "
            "(PKCE, RFC 7636).",
            request=request,
        )
    if request.code_challenge_method != "S256":
        raise InvalidRequestFatalError(
            description="code_challenge_method must be S256.", request=request
        )
    return {}


def _authorization_code_only(request: Request) -> None:
    """A `pre_token` check: the code grant only, each parameter once."""
    if request.grant_type != "authorization_code":
        raise UnsupportedGrantTypeError(request=request)
    for name in ("code", "code_verifier"):
        if name in request.duplicate_params:
            raise InvalidRequestError(description=f"Duplicate {name} parameter.", request=request)


def _pending_token(request: Request) -> str:
    return PENDING


class Server(AuthorizationEndpoint, TokenEndpoint, RevocationEndpoint):
    """oauthlib's authorization, token and revocation endpoints over one validator: the code
    grant (no refresh tokens) and bearer tokens."""

    def __init__(self, validator: Validator) -> None:
        grant = AuthorizationCodeGrant(
            validator,
            pre_auth=[_challenge_s256],
            pre_token=[_authorization_code_only],
            refresh_token=False,
        )
        bearer = BearerToken(validator, _pending_token, TOKEN_LIFETIME_S)
        AuthorizationEndpoint.__init__(
            self,
            default_response_type="code",
            default_token_type=bearer,  # type: ignore[arg-type]  # the stubs say str
            response_types={"code": grant},
        )
        TokenEndpoint.__init__(
            self,
            default_grant_type="authorization_code",
            default_token_type=bearer,  # type: ignore[arg-type]
            grant_types={"authorization_code": grant},
        )
        RevocationEndpoint.__init__(self, validator)


# ---------------------------------------------------------------- answers


@dataclass(frozen=True, slots=True)
class Consent:
    """An authorization request that holds: what the consent page shows, and the request's own
    parameters that its form sends back."""

    client_id: str
    redirect_uri: str
    target: Target
    scopes: tuple[str, ...]
    params: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Redirect:
    """The answer goes back to the app: the browser is sent to `location`."""

    location: str


@dataclass(frozen=True, slots=True)
class Refused:
    """A request that must not go back to the app (a bad client_id, redirect URI or
    challenge): an error page, with oauthlib's description."""

    description: str


@dataclass(frozen=True, slots=True)
class TokenAnswer:
    """The answer of the token or the revocation endpoint: status, JSON body (None: empty)."""

    status: int
    body: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Password:
    """The player signs in on the consent page with a name and a password."""

    name: str
    password: str


@dataclass(frozen=True, slots=True)
class StoredSession:
    """The player continues as the web client's session of this browser (its token)."""

    token: str


Credentials = Password | StoredSession

ENDPOINT = "https://authorization.invalid/oauth/"
"""The address oauthlib is told a request came to: it reads only its query."""


def _uri(path: str, pairs: Pairs) -> str:
    query = urlencode(list(pairs))
    return ENDPOINT + path + ("?" + query if query else "")


DESCRIPTIONS = {
    "invalid_grant": "The code is not valid: unknown, expired, used already, or issued for "
    "another client_id, redirect_uri or code challenge.",
    "invalid_client": "client_id must be 1 to 64 printable characters.",
    "unsupported_grant_type": "grant_type must be authorization_code.",
    "invalid_request": "The request is missing a parameter or has one twice.",
}
"""oauthlib's errors that come without a description, described."""


def _error_body(error: OAuth2Error) -> dict[str, Any]:
    name = error.error or "invalid_request"
    return {"error": name, "error_description": error.description or DESCRIPTIONS.get(name, name)}


class AppService:
    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        writers: async_sessionmaker[AsyncSession],
        sessions: SessionService,
        clock: Clock = wall_clock_ms,
    ) -> None:
        self.readers = readers
        self.writers = writers
        self.sessions = sessions
        self.clock = clock
        self._forgot_ms = -FORGET_EVERY_MS

    # ---------------------------------------------------------------- the consent page

    def ask(self, pairs: Pairs) -> Consent | Redirect | Refused:
        """What an authorization request asks for (the consent page), or why it cannot be
        asked: an error page (Refused), or an error the app hears of (Redirect)."""
        validator = Validator(self.clock())
        params = _only(pairs, AUTHORIZE_PARAMS)
        try:
            scopes, info = Server(validator).validate_authorization_request(
                _uri("authorize", params)
            )
        except FatalClientError as error:
            return Refused(error.description)
        except OAuth2Error as error:
            if error.redirect_uri is None:
                return Refused(error.description)
            return Redirect(error.in_uri(error.redirect_uri))
        redirect_uri = info["redirect_uri"]
        target = redirect_target(redirect_uri)
        assert target is not None  # oauthlib asked validate_redirect_uri
        wanted = set(scopes or ())
        return Consent(
            info["client_id"],
            redirect_uri,
            target,
            tuple(scope for scope in scope_text(wanted).split()),
            tuple(params),
        )

    def deny(self, pairs: Pairs) -> Redirect | Refused:
        """The player said no: `access_denied` to the app (RFC 6749 4.1.2.1)."""
        asked = self.ask(pairs)
        if not isinstance(asked, Consent):
            return asked
        error = AccessDeniedError(
            description="The player denied the request.", state=_first(asked.params, "state")
        )
        return Redirect(error.in_uri(asked.redirect_uri))

    async def approve(self, pairs: Pairs, credentials: Credentials) -> Redirect | Refused:
        """The player said yes, as who `credentials` say: a code for the app. Raises
        InvalidCredentials / TooManySignIns (a name and password: `SessionService.verify`, so
        the name's limit holds), or Unauthorized / MissingScope (a stored session that ended,
        or one without `account`)."""
        asked = self.ask(pairs)
        if not isinstance(asked, Consent):
            return asked
        if isinstance(credentials, Password):
            player_id, _ = await self.sessions.verify(credentials.name, credentials.password)
        else:
            principal = await self.sessions.authenticate(credentials.token)
            require(principal, "account")
            player_id = principal.id
        now = self.clock()
        validator = Validator(now)
        try:
            headers, _, _ = Server(validator).create_authorization_response(
                _uri("authorize", asked.params),
                scopes=list(asked.scopes),
                credentials={"user": player_id},
            )
        except OAuth2Error as error:  # it held a moment ago: it cannot fail now
            return Refused(error.description)
        issued = validator.issued_code
        if issued is None:  # an error for the app (oauthlib redirected with it)
            return Redirect(headers["Location"])
        async with self.writers.begin() as session:
            await session_rows.insert_code(
                session,
                code_hash=hash_token(issued.code),
                player_id=issued.player_id,
                client_id=issued.client_id,
                redirect_uri=issued.redirect_uri,
                code_challenge=issued.code_challenge,
                scopes=scope_text(issued.scopes),
                expires_ms=now + CODE_LIFETIME_MS,
                used_ms=None,
                session_id=None,
            )
            if now - self._forgot_ms >= FORGET_EVERY_MS:
                self._forgot_ms = now
                await session_rows.forget_codes(session, now - FORGET_AFTER_MS)
        return Redirect(headers["Location"])

    # ---------------------------------------------------------------- the token endpoint

    async def exchange(self, pairs: Pairs, query: str = "") -> TokenAnswer:
        """A code for a token (RFC 6749 4.1.3, RFC 7636 4.5). `query`: the request's own query
        string (oauthlib refuses parameters there)."""
        code = _first(pairs, "code")
        row = None
        if code is not None and 0 < len(code) <= CODE_MAX and is_printable_ascii(code):
            async with self.readers.begin() as session:
                row = await session_rows.code_by_hash(session, hash_token(code))
        now = self.clock()
        validator = Validator(now, row)
        try:
            _, body, status = Server(validator).create_token_response(
                ENDPOINT + "token" + ("?" + query if query else ""),
                body=urlencode(_only(pairs, TOKEN_PARAMS)),
            )
        except OAuth2Error as error:  # the endpoint's own checks (a query, the method)
            return TokenAnswer(400, _error_body(error))
        if validator.reused is not None:
            await self._end_session_of(validator.reused)
        issued = validator.issued_token
        if status != 200 or issued is None or row is None or not validator.code_used:
            return self._token_error(status, body)
        expires_ms = now + TOKEN_LIFETIME_S * 1000
        try:
            async with self.writers.begin() as session:
                token, record = await self.sessions.add(
                    session,
                    issued.player_id,
                    issued.client_id,
                    issued.scopes,
                    client_id=issued.client_id,
                    expires_ms=expires_ms,
                )
                if not await session_rows.use_code(session, row.code_hash, now, record.id):
                    raise _LostRace()
        except _LostRace:
            # Another exchange of this code won: this is a second use (and the rollback took
            # this session back).
            async with self.readers.begin() as session:
                again = await session_rows.code_by_hash(session, row.code_hash)
            if again is not None:
                await self._end_session_of(again)
            return TokenAnswer(400, _error_body(InvalidGrantError()))
        answer = dict(issued.answer)
        answer.update(
            access_token=token,
            token_type="Bearer",
            scope=scope_text(issued.scopes),
            expires_in=TOKEN_LIFETIME_S,
        )
        return TokenAnswer(200, answer)

    async def _end_session_of(self, row: CodeRecord) -> None:
        """A code used twice: the session its first use made ends (RFC 6749 4.1.2, 10.5)."""
        if row.session_id is None:
            return
        async with self.writers.begin() as session:
            ended = await session_rows.delete_session(session, row.player_id, row.session_id)
        if ended:
            self.sessions.told({row.session_id})

    @staticmethod
    def _token_error(status: int, body: str | None) -> TokenAnswer:
        try:
            parsed = json.loads(body or "{}")
        except ValueError:
            parsed = {}
        if not isinstance(parsed, dict) or "error" not in parsed:
            parsed = {"error": "invalid_request"}
        error = str(parsed["error"])
        description = str(parsed.get("error_description") or DESCRIPTIONS.get(error, error))
        # invalid_client is 400 here: a public client sends no credentials, so there is no
        # authentication scheme to name in a 401 (RFC 6749 5.2).
        if status == 401 or status < 400 or status >= 500:
            status = 400
        return TokenAnswer(status, {"error": error, "error_description": description})

    # ---------------------------------------------------------------- revocation

    async def revoke(self, pairs: Pairs, query: str = "") -> TokenAnswer:
        """RFC 7009: the token's session ends, if it is one; 200 whatever the token."""
        validator = Validator(self.clock(), revocation=True)
        try:
            _, body, status = Server(validator).create_revocation_response(
                ENDPOINT + "revoke" + ("?" + query if query else ""),
                body=urlencode(_only(pairs, REVOKE_PARAMS)),
            )
        except OAuth2Error as error:
            return TokenAnswer(400, _error_body(error))
        for token in validator.revoked:
            if 0 < len(token) <= TOKEN_MAX:
                await self.sessions.end_token(token)
        if status != 200:
            return self._token_error(status, body)
        return TokenAnswer(200, None)


class _LostRace(Exception):
    """Two exchanges of one code at once: this one lost (its transaction is rolled back)."""
