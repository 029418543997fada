"""Helpers shared by the handlers: authentication, ids, JSON responses."""

from __future__ import annotations

import ipaddress

from aiohttp import web

from server.keys import SERVICE, SETTINGS
from server.services.errors import Unauthorized
from server.services.games import GameService, is_printable_ascii
from server.services.values import Principal
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
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return address


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


async def authenticate(request: web.Request) -> Principal:
    header = request.headers.get("Authorization")
    if not header:
        raise Unauthorized("This call needs 'Authorization: Bearer <token>'.")
    token = bearer_token(header)
    if token is None:
        raise Unauthorized("The Authorization header must be 'Bearer <token>'.")
    return await service(request).authenticate(token)
