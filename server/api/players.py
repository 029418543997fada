"""`/api/v1/players`: sign-up, public profile, play settings (SPEC 2.2, 1.7), statistics, a
player's games and their export (SPEC 2.5)."""

from __future__ import annotations

from datetime import UTC, datetime

from aiohttp import web

from server.api import heavy
from server.api.access import authenticate, viewer
from server.api.accounts import device_label
from server.api.problems import read_json, validation_problem
from server.api.render import (
    games_page_json,
    json_response,
    new_player_json,
    next_link,
    player_json,
    replay_json,
    settings_json,
    stats_json,
)
from server.api.schemas import GamesQueryIn, NewPlayerIn, SettingsIn, path_id, query_of
from server.api.seeding import seeded
from server.engine import Status
from server.keys import BOARDS, PLAYERS
from server.store.games import GameFilter

routes = web.RouteTableDef()


@routes.post("/api/v1/players")
async def create_player(request: web.Request) -> web.Response:
    body = await read_json(request, NewPlayerIn)
    player = await request.app[PLAYERS].create_player(
        body.name, body.password, device_label(request)
    )
    return json_response(
        new_player_json(player),
        status=201,
        headers={"Location": f"/api/v1/players/{player.id}"},
    )


@routes.get("/api/v1/players/{id}")
async def get_player(request: web.Request) -> web.Response:
    player = await request.app[PLAYERS].get_player(path_id(request))
    return json_response(player_json(player))


@routes.get("/api/v1/players/{id}/settings")
async def get_settings(request: web.Request) -> web.Response:
    player_id = path_id(request)
    principal = await authenticate(request, "account")
    player = await request.app[PLAYERS].update_settings(principal, player_id, {})
    return json_response(settings_json(player))


@routes.patch("/api/v1/players/{id}/settings")
async def patch_settings(request: web.Request) -> web.Response:
    player_id = path_id(request)
    principal = await authenticate(request, "account")
    body = await read_json(request, SettingsIn)
    changes = body.changes()
    player = await request.app[PLAYERS].update_settings(principal, player_id, changes)
    return json_response(settings_json(player))


@routes.get("/api/v1/players/{id}/stats")
async def stats(request: web.Request) -> web.Response:
    return json_response(stats_json(await request.app[BOARDS].stats(path_id(request))))


def _filter(player_id: str, q: GamesQueryIn) -> GameFilter:
    def ms(moment: datetime | None) -> int | None:
        if moment is None:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1000)

    statuses = q.statuses()
    return GameFilter(
        player_id=player_id,
        rule=q.rule,
        status=tuple(Status(s) for s in statuses) if statuses is not None else None,
        since_ms=ms(q.since),
        until_ms=ms(q.until),
    )


@routes.get("/api/v1/players/{id}/games")
async def player_games(request: web.Request) -> web.Response:
    player_id = path_id(request)
    q = query_of(request, GamesQueryIn)
    f = _filter(player_id, q)
    page = await request.app[BOARDS].games(f, await viewer(request), after=q.after, limit=q.limit)
    return json_response(games_page_json(page), headers=next_link(request, page.next))


@routes.get("/api/v1/players/{id}/games/export")
async def export(request: web.Request) -> web.StreamResponse:
    """The player's finished games as NDJSON replays, streamed a chunk at a time."""
    player_id = path_id(request)
    q = query_of(request, GamesQueryIn)
    paging = [name for name in ("limit", "after") if name in request.query]
    if paging:
        raise validation_problem(
            [
                {"field": name, "message": "the export has no pages: it streams every game"}
                for name in paging
            ]
        )
    games = await request.app[BOARDS].export(_filter(player_id, q), await viewer(request))
    # Charged by its actions as it streams, each batch rendered in a thread (`server.api.heavy`).
    meter = heavy.Meter(request)
    batch: heavy.Batch = await anext(games, [])
    refused = await meter.first(heavy.actions_in(batch))
    if refused is not None:
        return refused
    response = web.StreamResponse(
        headers={
            "Content-Type": "application/x-ndjson",
            "Content-Disposition": f'attachment; filename="games-{player_id}.ndjson"',
        }
    )
    await response.prepare(request)
    while batch:
        items = await seeded(request.app, batch)
        await response.write(await heavy.joined(replay_json, items, b"\n", b"\n"))
        batch = await anext(games, [])
        await meter.pay(heavy.actions_in(batch))
    await response.write_eof()
    return response
