"""Sessions (SPEC 2.2): a token per device or app, who a token is, signing in and out, scopes.

A token is 256 random bits, stored as its SHA-256 hash only, and shown once: in the answer
that made its session (a sign-up, a sign-in, an OAuth token exchange).

**Who a token is, at once in every process.** A revoked session is deleted, and every request
that carries a token reads its session (one indexed read joined with its player), but for the
moves of a known token, whose commits test it (below): so a token is refused on every route and
in every process from the moment its revocation committed, with no cache to go stale. The one
thing remembered without any test is the opposite: a made-up token once looked up is
not looked up again (the most recent 10,000), since a token reaches its client only once its
session is stored, and a revoked one never comes back. A live WebSocket checked its token when it
signed in; `alive` tells the sockets' guard which of their sessions still hold
(`server.api.live.guard`).

**Known tokens, for the moves alone.** A move is the one request that comes many times a second,
and its token's read was a round trip of its own: about 15% of a move's CPU under wrk, and a
second wait for a pooled connection (bench/load.py). So a process remembers the tokens it
verified (the most recent 10,000, each until its session expires or is due its `last_used_at`
write, or ends in this process, or is found ended), and a move of a remembered token (`known`)
is not read first: its commit is made only if the session still holds, tested in the commit's
own statement (`GameCommit.session`, `server.store.commits`), and every other answer to it (a
refusal, a stored answer, a bad body, no such game, a missing scope, a spent rate budget) reads the
token first (`server.api.access.confirm`); only a fault of the database is answered as it is.
So the rule above still holds: a move of a token sent once its revocation has committed (its
`204` received) is not made and is answered `401`, in every process. (A move already in flight
at that moment may still be made, as before: its read of the token could have come first.)
The first such move in a process is charged to its player's rate budget before it is refused;
the token is then forgotten there.

**Sign-in.** A wrong name, a guest's name and a wrong password are one answer
(`InvalidCredentials`), after the same Argon2 work (`server.services.passwords`), so neither the
answer nor its time tells which names exist. Failures are counted per name (its key) in the
database, so the limit (10 in 15 minutes) holds whatever the address and across every process:
an in-process counter (`limits`' memory storage) would give each process its own 10, and Redis
is optional. Past the limit, the name's sign-ins are `429` for the rest of the window, without
the password being checked, so a flood costs no hashing either.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.services.errors import (
    InvalidCredentials,
    MissingScope,
    NotFound,
    TooManySignIns,
    Unauthorized,
)
from server.services.names import name_key
from server.services.passwords import hash_password, needs_rehash, verify_password
from server.services.values import Clock, Principal, is_printable_ascii, wall_clock_ms
from server.store import players as player_rows
from server.store import sessions as session_rows
from server.store.sessions import SessionRecord, TokenReader

if TYPE_CHECKING:
    from server.services.notices import NoticeService

SCOPES = ("play", "race", "account", "read")
"""Every scope, in the order they are listed (SPEC 2.2)."""
ALL_SCOPES = frozenset(SCOPES)

REMEMBERED = 10_000
"""How many made-up tokens a process remembers, and how many verified ones ("Known tokens")."""
TOUCH_MS = 60_000
"""`last_used_at` is written at most this often per session."""
FAILURES = 10
FAILURE_WINDOW_MS = 15 * 60_000
LABEL_MAX = 64


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


def scope_text(scopes: Iterable[str]) -> str:
    """Scopes as stored and as OAuth writes them: space-separated, in SCOPES' order."""
    wanted = set(scopes)
    return " ".join(scope for scope in SCOPES if scope in wanted)


def require(principal: Principal, scope: str) -> None:
    """MissingScope (403) unless the principal's token has `scope`."""
    if scope not in principal.scopes:
        raise MissingScope(scope)


def label_of(raw: str | None) -> str:
    """A session's label: the one given, else "device" (at most LABEL_MAX printable
    characters)."""
    text = "".join(char for char in (raw or "") if char.isprintable()).strip()
    return text[:LABEL_MAX] or "device"


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A session as its player sees it (never its token)."""

    id: str
    label: str
    created_ms: int
    last_used_ms: int
    scopes: tuple[str, ...]
    client_id: str | None
    current: bool

    @classmethod
    def of(cls, record: SessionRecord, current_id: str) -> SessionInfo:
        return cls(
            record.id,
            record.label,
            record.created_ms,
            record.last_used_ms,
            tuple(record.scopes.split()),
            record.client_id,
            record.id == current_id,
        )


@dataclass(frozen=True, slots=True)
class Known:
    """A token verified in this process: its principal, until when its session lasts, and
    when its `last_used_at` was last written."""

    principal: Principal
    expires_ms: int | None
    last_used_ms: int


@dataclass(frozen=True, slots=True)
class NewSession:
    """A session just made: its token, shown this once."""

    token: str
    session: SessionInfo
    player_id: str
    player_name: str


class SessionService:
    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        writers: async_sessionmaker[AsyncSession],
        clock: Clock = wall_clock_ms,
        tokens: TokenReader | None = None,
    ) -> None:
        self.readers = readers
        self.writers = writers
        self.clock = clock
        self.tokens = tokens
        """The token read on the driver itself (`server.store.sessions.TokenReader`); without
        one, through SQLAlchemy."""
        self._unknown: OrderedDict[str, None] = OrderedDict()
        """Hashes of tokens looked up and found to be no session's."""
        self._known: OrderedDict[str, Known] = OrderedDict()
        """Tokens verified here (see "Known tokens" above), by their hash."""
        self.notices: NoticeService | None = None
        """Where a player is told that one of their sessions ended (`session_revoked`, SPEC
        2.6.2), in the transaction that ends it; set by the wiring."""
        self.ended: list[Callable[[set[str]], None]] = []
        """Told in this process of the sessions that just ended here (the sockets' guard
        closes theirs at once; other processes' guards find out on their next check)."""

    # ---------------------------------------------------------------- making sessions

    async def add(
        self,
        session: AsyncSession,
        player_id: str,
        label: str,
        scopes: Iterable[str] = SCOPES,
        *,
        client_id: str | None = None,
        expires_ms: int | None = None,
    ) -> tuple[str, SessionRecord]:
        """A new session of the player, in the caller's transaction: (token, its record)."""
        token = new_token()
        now = self.clock()
        record = SessionRecord(
            id=str(uuid.uuid4()),
            player_id=player_id,
            label=label_of(label),
            scopes=scope_text(scopes),
            client_id=client_id,
            created_ms=now,
            last_used_ms=now,
            expires_ms=expires_ms,
        )
        await session_rows.insert_session(
            session,
            id=record.id,
            player_id=player_id,
            token_hash=hash_token(token),
            label=record.label,
            scopes=record.scopes,
            client_id=client_id,
            created_ms=now,
            last_used_ms=now,
            expires_ms=expires_ms,
        )
        return token, record

    async def sign_in(self, name: str, password: str, label: str | None) -> NewSession:
        """A new session of the player called `name` whose password this is (SPEC 2.2)."""
        player_id, player_name = await self.verify(name, password)
        async with self.writers.begin() as session:
            token, record = await self.add(session, player_id, label or "device")
        return NewSession(token, SessionInfo.of(record, record.id), player_id, player_name)

    async def verify(self, name: str, password: str) -> tuple[str, str]:
        """(id, name) of the player called `name` whose password this is; InvalidCredentials
        (401) if there is none, TooManySignIns (429) past the name's limit of failures. Every
        sign-in asks here (the OAuth consent page's too)."""
        key = name_key(name)
        now = self.clock()
        async with self.readers.begin() as session:
            failures = await session_rows.failures_since(session, key, now - FAILURE_WINDOW_MS)
            player = await player_rows.player_by_name_key(session, key)
        if len(failures) >= FAILURES:
            oldest = failures[-FAILURES]
            wait_ms = oldest + FAILURE_WINDOW_MS - now
            raise TooManySignIns(max(1, -(-wait_ms // 1000)))
        stored = player.password_hash if player is not None else None
        if player is None or stored is None or not await verify_password(stored, password):
            if player is None or stored is None:
                await verify_password(None, password)  # as long as a real check
            async with self.writers.begin() as session:
                await session_rows.add_failure(session, key, self.clock(), FAILURE_WINDOW_MS)
            raise InvalidCredentials()
        if needs_rehash(stored):
            rehashed = await hash_password(password)
            async with self.writers.begin() as session:
                await player_rows.update_player(session, player.id, password_hash=rehashed)
        return player.id, player.name

    # ---------------------------------------------------------------- who a token is

    async def authenticate(self, token: str) -> Principal:
        """The principal of a live session's token, or Unauthorized (401). A token is printable
        ASCII (ours are URL-safe base64): anything else is no token of ours."""
        if not is_printable_ascii(token):
            raise Unauthorized("The bearer token is not valid.")
        token_hash = hash_token(token)
        if token_hash in self._unknown:
            raise Unauthorized("The bearer token is not valid.")
        now = self.clock()
        if self.tokens is not None:
            holder = await self.tokens.holder(token_hash, now)
        else:
            async with self.readers.begin() as session:
                holder = await session_rows.holder_of(session, token_hash, now)
        if holder is None:
            self._known.pop(token_hash, None)  # its session ended: no move of it is unread
            self._unknown[token_hash] = None
            if len(self._unknown) > REMEMBERED:
                self._unknown.popitem(last=False)
            raise Unauthorized("The bearer token is not valid.")
        record = holder.session
        used = record.last_used_ms
        if now - used >= TOUCH_MS:
            async with self.writers.begin() as session:
                await session_rows.touch(session, record.id, now)
            used = now
        principal = Principal(
            record.player_id,
            holder.player_name,
            record.id,
            frozenset(record.scopes.split()),
            holder.player_created_ms,
        )
        self._known[token_hash] = Known(principal, record.expires_ms, used)
        self._known.move_to_end(token_hash)
        if len(self._known) > REMEMBERED:
            self._known.popitem(last=False)
        return principal

    def known(self, token: str) -> Principal | None:
        """The principal of a token this process verified lately, without reading it: only for
        a change whose commit tests that its session still holds, and whose other answers read
        the token first (see "Known tokens" above). None when it must be read: never verified
        here, its session expired, or its `last_used_at` due to be written."""
        if not is_printable_ascii(token):
            return None
        entry = self._known.get(hash_token(token))
        if entry is None:
            return None
        now = self.clock()
        expires = entry.expires_ms
        if (expires is not None and now >= expires) or now - entry.last_used_ms >= TOUCH_MS:
            return None
        return entry.principal

    async def holds(self, session_id: str) -> bool:
        """Whether the session still holds now (the test of a commit's `session`)."""
        now = self.clock()
        if self.tokens is not None:
            return await self.tokens.holds(session_id, now)
        async with self.readers.begin() as session:
            return await session_rows.holds(session, session_id, now)

    async def alive(self, session_ids: Iterable[str]) -> set[str]:
        """Which of these sessions still hold."""
        wanted = sorted(set(session_ids))
        if not wanted:
            return set()
        async with self.readers.begin() as session:
            return await session_rows.live_sessions(session, wanted, self.clock())

    # ---------------------------------------------------------------- a player's sessions

    async def sessions(self, principal: Principal) -> list[SessionInfo]:
        async with self.readers.begin() as session:
            records = await session_rows.sessions_of(session, principal.id)
        return [SessionInfo.of(record, principal.session_id) for record in records]

    async def current(self, principal: Principal) -> SessionInfo:
        for info in await self.sessions(principal):
            if info.current:
                return info
        raise Unauthorized("The bearer token is not valid.")  # ended while we looked

    async def end(self, principal: Principal, session_id: str) -> None:
        """Ends one of the player's sessions (`current`: the token's own: signing out).
        Another session needs the `account` scope; NotFound if there is no such session."""
        if session_id == "current":
            session_id = principal.session_id
        else:
            require(principal, "account")
        async with self.writers.begin() as session:
            found = await session_rows.delete_session(session, principal.id, session_id)
            if found:
                await self.revoking(session, principal.id, [session_id])
        if not found:
            raise NotFound(f"There is no session {session_id!r} of this player.")
        await self.revoked(principal.id, [session_id])

    async def end_token(self, token: str) -> None:
        """Ends the session of a token, if it is one (OAuth revocation, RFC 7009)."""
        if not is_printable_ascii(token):
            return
        async with self.writers.begin() as session:
            player_id = await session_rows.player_of_token_hash(session, hash_token(token))
            ended = await session_rows.delete_by_token_hash(session, hash_token(token))
            if ended is not None and player_id is not None:
                await self.revoking(session, player_id, [ended])
        if ended is not None and player_id is not None:
            await self.revoked(player_id, [ended])

    async def revoking(self, session: AsyncSession, player_id: str, ended: list[str]) -> None:
        """Tells the player that these sessions of theirs end (`session_revoked`), in the
        transaction that ends them."""
        if self.notices is not None and ended:
            await self.notices.post_many(
                session,
                [(player_id, "session_revoked", {"session_id": sid}) for sid in sorted(ended)],
            )

    async def revoked(self, player_id: str, ended: list[str]) -> None:
        """After the commit that ended the player's sessions: this process's sockets closed,
        the player's followers in every process signalled."""
        self.told(set(ended))
        if self.notices is not None and ended:
            await self.notices.signal([player_id])

    def told(self, ended: set[str]) -> None:
        if not ended:
            return
        # Their tokens are not known here any more: their next move is read (and refused)
        # before anything else is done for it, a rate budget's charge included.
        for token_hash, entry in list(self._known.items()):
            if entry.principal.session_id in ended:
                del self._known[token_hash]
        for listener in list(self.ended):
            listener(ended)
