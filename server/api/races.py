"""`/api/v1/races`: create, list, read, join, leave, start; the race board (SPEC 2.6.1)."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from aiohttp import web

from server.api.boards import next_link, query_of
from server.api.common import authenticate, json_response, path_id
from server.api.problems import read_json
from server.api.schemas import NewRaceIn, RaceBoardQueryIn, RacesQueryIn
from server.errors import InvalidInput
from server.keys import RACES
from server.store import races as store
from server.views import race_json

routes = web.RouteTableDef()


def encode(values: list[Any]) -> str:
    raw = json.dumps(values, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(cursor: str, types: tuple[type, ...]) -> list[Any]:
    """A cursor made by `encode` for the same kind of page, or 422."""
    try:
        values = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        ok = (
            isinstance(values, list)
            and len(values) == len(types)
            and all(
                isinstance(v, t) and not isinstance(v, bool)
                for v, t in zip(values, types, strict=True)
            )
        )
    except (ValueError, TypeError, binascii.Error, RecursionError):
        ok = False
    if not ok:
        raise InvalidInput(
            "The cursor 'after' is not one this list gave out.",
            errors=[{"field": "after", "message": "invalid cursor"}],
        )
    return list(values)


@routes.post("/api/v1/races")
async def create(request: web.Request) -> web.Response:
    player = await authenticate(request)
    body = await read_json(request, NewRaceIn)
    view = await request.app[RACES].create(
        player,
        rule=body.rule,
        seats=body.seats,
        winnable=body.winnable,
        time_limit_s=body.time_limit_s,
        public=body.public,
    )
    return json_response(
        race_json(view), status=201, headers={"Location": f"/api/v1/races/{view.race.id}"}
    )


@routes.get("/api/v1/races")
async def listing(request: web.Request) -> web.Response:
    q = query_of(request, RacesQueryIn)
    after = None
    if q.after is not None:
        created, race_id = decode(q.after, (int, str))
        after = (created, race_id)
    views, cursor = await request.app[RACES].page(
        status=q.status, rule=q.rule.value if q.rule else None, limit=q.limit, after=after
    )
    next_cursor = encode(list(cursor)) if cursor is not None else None
    body = {"races": [race_json(v) for v in views], "next": next_cursor}
    return json_response(body, headers=next_link(request, next_cursor))


@routes.get("/api/v1/races/{id}")
async def read(request: web.Request) -> web.Response:
    view = await request.app[RACES].view(path_id(request))
    return json_response(race_json(view))


@routes.post("/api/v1/races/{id}/join")
async def join(request: web.Request) -> web.Response:
    race_id = path_id(request)
    player = await authenticate(request)
    return json_response(race_json(await request.app[RACES].join(player, race_id)))


@routes.post("/api/v1/races/{id}/leave")
async def leave(request: web.Request) -> web.Response:
    race_id = path_id(request)
    player = await authenticate(request)
    return json_response(race_json(await request.app[RACES].leave(player, race_id)))


@routes.post("/api/v1/races/{id}/start")
async def start(request: web.Request) -> web.Response:
    race_id = path_id(request)
    player = await authenticate(request)
    return json_response(race_json(await request.app[RACES].start(player, race_id)))


@routes.get("/api/v1/leaderboards/races")
async def board(request: web.Request) -> web.Response:
    """Players by their race rating's ordinal (players with a finished race)."""
    q = query_of(request, RaceBoardQueryIn)
    after = None
    rank = 0
    if q.after is not None:
        ordinal, races, player_id, rank = decode(q.after, (float, int, str, int))
        after = (ordinal, races, player_id)
    races_service = request.app[RACES]
    async with races_service.readers.begin() as session:
        rows = await store.rating_board(session, q.rule.value, q.limit + 1, after)
    more = len(rows) > q.limit
    rows = rows[: q.limit]
    next_cursor = None
    if more and rows:
        last = rows[-1]
        next_cursor = encode([last.ordinal, last.races, last.player_id, rank + len(rows)])
    body = {
        "rule": q.rule.value,
        "entries": [
            {
                "rank": rank + i + 1,
                "player": {"id": row.player_id, "name": row.name},
                "mu": row.mu,
                "sigma": row.sigma,
                "ordinal": row.ordinal,
                "races": row.races,
            }
            for i, row in enumerate(rows)
        ],
        "next": next_cursor,
    }
    return json_response(body, headers=next_link(request, next_cursor))
