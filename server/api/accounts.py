"""One's own account (SPEC 2.2, 2.2.2): signing in on another device (`POST /api/v1/sessions`),
`/api/v1/me` (whose a token is), the password, the sessions and signing out, the data export and
the account's erasure. Sign-up is `POST /api/v1/players` (`server.api.players`)."""

from __future__ import annotations

import json

from aiohttp import web

from server.api import heavy
from server.api.access import authenticate
from server.api.problems import invalid, read_json
from server.api.render import (
    ended_pair_json,
    iso,
    json_response,
    me_json,
    new_session_json,
    notice_message,
    race_json,
    replay_json,
    seeds_json,
    session_json,
    sessions_json,
    settings_json,
    stats_json,
)
from server.api.schemas import DeletionIn, NewSessionIn, PasswordIn
from server.api.seeding import seeded
from server.keys import BOARDS, CLOCK, NOTICES, PLAYERS, RACES, SEEDS, SESSIONS
from server.services.errors import NotFound
from server.services.passwords import checked_password
from server.services.values import is_printable_ascii

routes = web.RouteTableDef()

EXPORT_FORMAT = "russian-solitaire-export"
EXPORT_VERSION = 1


def device_label(request: web.Request) -> str:
    """A new session's label when the client gave none: its User-Agent, shortened."""
    agent = request.headers.get("User-Agent", "")
    return agent[:64] if agent and is_printable_ascii(agent[:64]) else "device"


@routes.post("/api/v1/sessions")
async def sign_in(request: web.Request) -> web.Response:
    body = await read_json(request, NewSessionIn)
    made = await request.app[SESSIONS].sign_in(
        body.name, body.password, body.label or device_label(request)
    )
    return json_response(new_session_json(made), status=201)


@routes.get("/api/v1/me")
async def me(request: web.Request) -> web.Response:
    principal = await authenticate(request)
    return json_response(me_json(await request.app[PLAYERS].me(principal)))


@routes.put("/api/v1/me/password")
async def change_password(request: web.Request) -> web.Response:
    principal = await authenticate(request, "account")
    body = await read_json(request, PasswordIn)
    try:
        password = checked_password(body.password, principal.name)
    except ValueError as exc:
        raise invalid("password", str(exc)) from None
    await request.app[PLAYERS].change_password(principal, password, body.current_password)
    return web.Response(status=204)


@routes.get("/api/v1/me/sessions")
async def list_sessions(request: web.Request) -> web.Response:
    principal = await authenticate(request, "account")
    return json_response(sessions_json(await request.app[SESSIONS].sessions(principal)))


@routes.delete("/api/v1/me/sessions/{id}")
async def end_session(request: web.Request) -> web.Response:
    principal = await authenticate(request)
    session_id = request.match_info["id"]
    if len(session_id) > 64 or not is_printable_ascii(session_id):
        raise NotFound(f"There is no session {session_id[:64]!r} of this player.")
    await request.app[SESSIONS].end(principal, session_id)
    return web.Response(status=204)


@routes.get("/api/v1/me/export")
async def export(request: web.Request) -> web.StreamResponse:
    """Everything held about the player as one JSON document, streamed: the games (each with
    its replay, hidden ones as hidden as anywhere else) a chunk at a time."""
    principal = await authenticate(request, "account")
    app = request.app
    account = await app[PLAYERS].me(principal)
    settings = await app[PLAYERS].update_settings(principal, principal.id, {})
    sessions = await app[SESSIONS].sessions(principal)
    races = await app[RACES].races_of(principal.id)
    stats = await app[BOARDS].stats(principal.id)
    games = await app[BOARDS].every_game(principal)
    notices = await app[NOTICES].kept(principal.id)
    current_seeds = await app[SEEDS].seeds(principal)
    ended = await app[SEEDS].history(principal, limit=2**31 - 1)
    head = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": iso(app[CLOCK]()),
        "profile": {
            "id": account.id,
            "name": account.name,
            "created_at": iso(account.created_ms),
            "has_password": account.has_password,
        },
        "settings": settings_json(settings),
        "sessions": [session_json(info) for info in sessions],
        "seeds": {**seeds_json(current_seeds), "history": [ended_pair_json(p) for p in ended]},
        "races": [race_json(view) for view in races],
        "stats": stats_json(stats),
        "notices": [notice_message(notice).model_dump() for notice in notices],
    }
    response = web.StreamResponse(
        headers={
            "Content-Type": "application/json; charset=utf-8",
            "Content-Disposition": f'attachment; filename="solitaire-{principal.id}.json"',
            "Cache-Control": "no-store",
        }
    )
    # Charged by its games' actions as it streams, each batch rendered in a thread
    # (`server.api.heavy`).
    meter = heavy.Meter(request)
    batch: heavy.Batch = await anext(games, [])
    refused = await meter.first(heavy.actions_in(batch))
    if refused is not None:
        return refused
    await response.prepare(request)
    opening = json.dumps(head, ensure_ascii=False)[:-1] + ', "games": ['
    await response.write(opening.encode())
    sep = b""
    while batch:
        items = await seeded(request.app, batch)
        await response.write(sep + await heavy.joined(replay_json, items, b","))
        sep = b","
        batch = await anext(games, [])
        await meter.pay(heavy.actions_in(batch))
    await response.write(b"]}")
    await response.write_eof()
    return response


@routes.delete("/api/v1/me")
async def erase(request: web.Request) -> web.Response:
    principal = await authenticate(request, "account")
    body = await read_json(request, DeletionIn)
    await request.app[PLAYERS].erase(principal, body.password)
    return web.Response(status=204)
