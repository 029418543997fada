"""`/api/v1/players`: sign-up (SPEC 2.2)."""

from __future__ import annotations

from aiohttp import web

from server.api.common import json_response, service
from server.api.problems import read_json
from server.api.schemas import NewPlayerIn

routes = web.RouteTableDef()


@routes.post("/api/v1/players")
async def create_player(request: web.Request) -> web.Response:
    body = await read_json(request, NewPlayerIn)
    player = await service(request).create_player(body.name)
    return json_response(
        {"id": player.id, "name": player.name, "token": player.token},
        status=201,
        headers={"Location": f"/api/v1/players/{player.id}"},
    )
