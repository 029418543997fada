"""Helpers shared by the handlers: authentication, ids, JSON responses."""

from __future__ import annotations

import json
import uuid
from typing import Any

from aiohttp import web

from server.api.problems import Problem
from server.errors import Unauthorized
from server.keys import SERVICE
from server.service import GameService, Principal


def service(request: web.Request) -> GameService:
    return request.app[SERVICE]


def json_response(
    data: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    return web.Response(
        text=json.dumps(data, ensure_ascii=False),
        status=status,
        content_type="application/json",
        headers=headers,
    )


def path_id(request: web.Request, name: str = "id") -> str:
    """A resource id from the path; anything that is not a UUID names nothing (404)."""
    raw = request.match_info[name]
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise Problem(404, "not-found", "Not found", f"There is no resource {raw!r}.") from None


async def viewer(request: web.Request) -> Principal | None:
    """The player of the request if it carries a token (reads need none)."""
    if not request.headers.get("Authorization"):
        return None
    return await authenticate(request)


async def authenticate(request: web.Request) -> Principal:
    header = request.headers.get("Authorization")
    challenge = Unauthorized.headers
    if not header:
        raise Problem(
            401,
            "unauthorized",
            "Unauthorized",
            "This call needs 'Authorization: Bearer <token>'.",
            headers=challenge,
        )
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 256:
        raise Problem(
            401,
            "unauthorized",
            "Unauthorized",
            "The Authorization header must be 'Bearer <token>'.",
            headers=challenge,
        )
    return await service(request).authenticate(token)
