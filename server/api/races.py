"""`/api/v1/races`: create, list, read, join, leave, start; the race board (SPEC 2.6.1)."""

from __future__ import annotations

from aiohttp import web

from server.api.access import authenticate, client_of
from server.api.problems import read_json
from server.api.render import (
    json_response,
    next_link,
    race_board_json,
    race_json,
    races_page_json,
)
from server.api.schemas import NewRaceIn, RaceBoardQueryIn, RacesQueryIn, path_id, query_of
from server.keys import RACES

routes = web.RouteTableDef()


@routes.post("/api/v1/races")
async def create(request: web.Request) -> web.Response:
    player = await authenticate(request, "race")
    body = await read_json(request, NewRaceIn)
    view = await request.app[RACES].create(
        player,
        rule=body.rule,
        seats=body.seats,
        winnable=body.winnable,
        time_limit_s=body.time_limit_s,
        public=body.public,
        client=await client_of(request, player),
    )
    return json_response(
        race_json(view), status=201, headers={"Location": f"/api/v1/races/{view.race.id}"}
    )


@routes.get("/api/v1/races")
async def listing(request: web.Request) -> web.Response:
    q = query_of(request, RacesQueryIn)
    page = await request.app[RACES].page(status=q.status, rule=q.rule, limit=q.limit, after=q.after)
    return json_response(races_page_json(page), headers=next_link(request, page.next))


@routes.get("/api/v1/races/{id}")
async def read(request: web.Request) -> web.Response:
    view = await request.app[RACES].view(path_id(request))
    return json_response(race_json(view))


@routes.post("/api/v1/races/{id}/join")
async def join(request: web.Request) -> web.Response:
    race_id = path_id(request)
    player = await authenticate(request, "race")
    client = await client_of(request, player)  # the join that fills a race fixes its deal
    return json_response(race_json(await request.app[RACES].join(player, race_id, client)))


@routes.post("/api/v1/races/{id}/leave")
async def leave(request: web.Request) -> web.Response:
    race_id = path_id(request)
    player = await authenticate(request, "race")
    return json_response(race_json(await request.app[RACES].leave(player, race_id)))


@routes.post("/api/v1/races/{id}/start")
async def start(request: web.Request) -> web.Response:
    race_id = path_id(request)
    player = await authenticate(request, "race")
    client = await client_of(request, player)  # the start fixes the deal (and certifies it)
    return json_response(race_json(await request.app[RACES].start(player, race_id, client)))


@routes.get("/api/v1/leaderboards/races")
async def board(request: web.Request) -> web.Response:
    """Players by their race rating's ordinal (players with a finished race)."""
    q = query_of(request, RaceBoardQueryIn)
    page = await request.app[RACES].board(q.rule, limit=q.limit, after=q.after)
    return json_response(race_board_json(page), headers=next_link(request, page.next))
