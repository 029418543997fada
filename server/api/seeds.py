"""A player's seed pairs (SPEC 1.8.2): `GET/PUT /api/v1/me/seeds`, `GET /api/v1/me/seeds/history`.

The current pair's server seed is shown by its hash only, and the next pair's hash before the
player chooses the client seed that goes with it; a rotation (`PUT`) reveals the ended pair's
server seed, with which every game it dealt can be checked offline (`python -m server.verify`).
"""

from __future__ import annotations

from aiohttp import web

from server.api.access import authenticate
from server.api.problems import read_json
from server.api.render import ended_pair_json, json_response, seeds_json
from server.api.schemas import SeedHistoryQueryIn, SeedsIn, query_of
from server.keys import SEEDS

routes = web.RouteTableDef()


@routes.get("/api/v1/me/seeds")
async def seeds(request: web.Request) -> web.Response:
    principal = await authenticate(request, "account")
    return json_response(seeds_json(await request.app[SEEDS].seeds(principal)))


@routes.put("/api/v1/me/seeds")
async def rotate(request: web.Request) -> web.Response:
    principal = await authenticate(request, "account")
    body = await read_json(request, SeedsIn)
    current, previous = await request.app[SEEDS].rotate(principal, body.client_seed)
    return json_response({**seeds_json(current), "previous": ended_pair_json(previous)})


@routes.get("/api/v1/me/seeds/history")
async def history(request: web.Request) -> web.Response:
    principal = await authenticate(request, "account")
    q = query_of(request, SeedHistoryQueryIn)
    ended = await request.app[SEEDS].history(principal, q.limit + 1, q.before)
    page = ended[: q.limit]
    more = len(ended) > q.limit
    return json_response(
        {
            "seeds": [ended_pair_json(pair) for pair in page],
            "next": page[-1].position if more and page else None,
        }
    )
