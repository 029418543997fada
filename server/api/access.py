"""Who a request is: its principal (the player of its bearer token, through its session, with
its scopes) and its address.

The principal is resolved once per request, by the first to ask (the rate budget's middleware,
else the handler), and kept on the request (`PRINCIPAL`): the token is parsed and looked up at
most once (twice for a known token's move: `confirm`), and every later ask gets the same answer,
a refusal included.

A move (`checked_at_commit`) of a token this process verified lately is not looked up: its
principal is the one remembered (`SessionService.known`), its commit tests that the session
still holds, and every answer but a committed move reads the token first (`confirm`): see
"Known tokens" in `server.services.sessions`."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, replace

from aiohttp import web

from server.api.problems import Handler
from server.keys import SERVICE, SESSIONS, SETTINGS
from server.services.errors import Unauthorized
from server.services.games import GameService
from server.services.sessions import require
from server.services.values import Principal, is_printable_ascii
from server.services.workers import Client

TOKEN_MAX = 256
"""The longest bearer token looked up (ours are 43 characters); longer ones are refused."""


def service(request: web.Request) -> GameService:
    return request.app[SERVICE]


def client_address(request: web.Request, trust_forwarded: bool) -> str:
    """The client's address: the peer's, or behind a trusted proxy (`TRUST_FORWARDED`) the last
    address of `X-Forwarded-For` (the one the proxy saw), when it is a plausible one. An IPv6
    address stands for its /64 network, which one host may hold whole: rotating addresses inside
    it buys no fresh budgets."""
    address = request.remote or "?"
    if trust_forwarded:
        last = request.headers.get("X-Forwarded-For", "").rsplit(",", 1)[-1].strip()
        if last and len(last) <= 64 and is_printable_ascii(last):
            address = last
    return address_of(address)


def address_of(peer: str) -> str:
    """The address a peer counts against (its budgets, its open connections): an IPv6
    address's /64 network (one host may hold it whole), any other address itself."""
    try:
        ip = ipaddress.ip_address(peer)
    except ValueError:
        return peer
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return peer


async def client_of(request: web.Request, player: Principal | None = None) -> Client:
    """Who a costly request is held to (one at a time): its player (`player`, else the one of
    its token, if any), else its address."""
    address = client_address(request, request.app[SETTINGS].trust_forwarded)
    if player is None:
        player = await viewer(request)
    key = f"player:{player.id}" if player is not None else f"address:{address}"
    return Client(key, address)


async def viewer(request: web.Request) -> Principal | None:
    """The player of the request if it carries a token (reads need none)."""
    if not request.headers.get("Authorization"):
        return None
    return await authenticate(request)


def bearer_token(header: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, if it is well-formed (1 to
    TOKEN_MAX characters)."""
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not 0 < len(token) <= TOKEN_MAX:
        return None
    return token


@dataclass(frozen=True, slots=True)
class Resolved:
    """The principal of a request, or why it has none (the detail of its 401)."""

    principal: Principal | None
    refusal: str | None = None
    known: bool = False
    """The principal is the one this process remembers of the token, not read for this request
    (`checked_at_commit`)."""


PRINCIPAL = web.RequestKey("principal", Resolved)
"""The request's principal once resolved (`authenticate`)."""

CHECKED_AT_COMMIT: set[Handler] = set()


def checked_at_commit(handler: Handler) -> Handler:
    """Marks a handler whose one change tests the token's session in its commit (the game
    service's `session`) and that calls `confirm` before any other answer: its token, if known
    here, is not looked up first."""
    CHECKED_AT_COMMIT.add(handler)
    return handler


def unread_session(request: web.Request) -> str | None:
    """The session of the request's principal when it was not read for this request: the one
    its change's commit must test."""
    resolved: Resolved | None = request.get(PRINCIPAL)
    if resolved is None or not resolved.known or resolved.principal is None:
        return None
    return resolved.principal.session_id


async def confirm(request: web.Request) -> None:
    """Reads the request's token if its principal was not read (`checked_at_commit`): Unauthorized
    (401) if its session no longer holds. Every answer of such a handler but a committed change
    asks this first."""
    resolved = request.get(PRINCIPAL)
    if resolved is None or not resolved.known:
        return
    request[PRINCIPAL] = replace(resolved, known=False)  # read once, even if the read fails
    request[PRINCIPAL] = fresh = await _resolve(request, known=False)
    if fresh.principal is None:
        raise Unauthorized(fresh.refusal or "The bearer token is not valid.")


async def authenticate(request: web.Request, scope: str | None = None) -> Principal:
    """The player of the request's bearer token, or Unauthorized (401); MissingScope (403)
    when the token lacks `scope`. Resolved once per request: a failure to read the database is
    not kept (it is raised, and asked again)."""
    resolved = request.get(PRINCIPAL)
    if resolved is None:
        resolved = request[PRINCIPAL] = await _resolve(request)
    if resolved.principal is None:
        raise Unauthorized(resolved.refusal or "The bearer token is not valid.")
    if scope is not None:
        require(resolved.principal, scope)
    return resolved.principal


async def _resolve(request: web.Request, known: bool = True) -> Resolved:
    header = request.headers.get("Authorization")
    if not header:
        return Resolved(None, "This call needs 'Authorization: Bearer <token>'.")
    token = bearer_token(header)
    if token is None:
        return Resolved(None, "The Authorization header must be 'Bearer <token>'.")
    sessions = request.app[SESSIONS]
    if known and request.match_info.handler in CHECKED_AT_COMMIT:
        remembered = sessions.known(token)
        if remembered is not None:
            return Resolved(remembered, known=True)
    try:
        return Resolved(await sessions.authenticate(token))
    except Unauthorized as exc:
        return Resolved(None, exc.detail)
