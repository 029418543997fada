"""`/api/v1/players`: sign-up, public profile, play settings (SPEC 2.2, 1.7), statistics, a
player's games and their export (SPEC 2.5)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from server.api.access import authenticate, viewer
from server.api.problems import read_json, validation_problem
from server.api.render import game_json, iso, json_response, next_link, replay_json
from server.api.schemas import GamesQueryIn, NewPlayerIn, SettingsIn, path_id, query_of
from server.engine import Status
from server.keys import BOARDS, PLAYERS
from server.services.players import PlayerInfo
from server.store.games import GameFilter

routes = web.RouteTableDef()


@routes.post("/api/v1/players")
async def create_player(request: web.Request) -> web.Response:
    body = await read_json(request, NewPlayerIn)
    player = await request.app[PLAYERS].create_player(body.name)
    return json_response(
        {"id": player.id, "name": player.name, "token": player.token},
        status=201,
        headers={"Location": f"/api/v1/players/{player.id}"},
    )


@routes.get("/api/v1/players/{id}")
async def get_player(request: web.Request) -> web.Response:
    player = await request.app[PLAYERS].get_player(path_id(request))
    return json_response(
        {"id": player.id, "name": player.name, "created_at": iso(player.created_ms)}
    )


def _settings(player: PlayerInfo) -> web.Response:
    return json_response({"player_id": player.id, **player.settings})


@routes.get("/api/v1/players/{id}/settings")
async def get_settings(request: web.Request) -> web.Response:
    player_id = path_id(request)
    principal = await authenticate(request)
    return _settings(await request.app[PLAYERS].update_settings(principal, player_id, {}))


@routes.patch("/api/v1/players/{id}/settings")
async def patch_settings(request: web.Request) -> web.Response:
    player_id = path_id(request)
    principal = await authenticate(request)
    body = await read_json(request, SettingsIn)
    changes = body.changes()
    return _settings(await request.app[PLAYERS].update_settings(principal, player_id, changes))


@routes.get("/api/v1/players/{id}/stats")
async def stats(request: web.Request) -> web.Response:
    player_id = path_id(request)
    name, per_rule = await request.app[BOARDS].stats(player_id)
    return json_response({"player": {"id": player_id, "name": name}, "rules": per_rule})


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
    body: dict[str, Any] = {
        "games": [game_json(view) for view in page.items],
        "next": page.next,
    }
    return json_response(body, headers=next_link(request, page.next))


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
    response = web.StreamResponse(
        headers={
            "Content-Type": "application/x-ndjson",
            "Content-Disposition": f'attachment; filename="games-{player_id}.ndjson"',
        }
    )
    await response.prepare(request)
    async for view, log in games:
        line = json.dumps(replay_json(view, log), ensure_ascii=False) + "\n"
        await response.write(line.encode())
    await response.write_eof()
    return response
