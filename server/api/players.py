"""`/api/v1/players`: sign-up, public profile, play settings (SPEC 2.2, 1.7)."""

from __future__ import annotations

from aiohttp import web

from server.api.common import authenticate, json_response, path_id, service
from server.api.problems import read_json
from server.api.schemas import NewPlayerIn, SettingsIn
from server.service import PlayerInfo
from server.views import iso

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


@routes.get("/api/v1/players/{id}")
async def get_player(request: web.Request) -> web.Response:
    player = await service(request).get_player(path_id(request))
    return json_response(
        {"id": player.id, "name": player.name, "created_at": iso(player.created_ms)}
    )


def _settings(player: PlayerInfo) -> web.Response:
    return json_response({"player_id": player.id, **player.settings})


@routes.get("/api/v1/players/{id}/settings")
async def get_settings(request: web.Request) -> web.Response:
    player_id = path_id(request)
    principal = await authenticate(request)
    return _settings(await service(request).update_settings(principal, player_id, {}))


@routes.patch("/api/v1/players/{id}/settings")
async def patch_settings(request: web.Request) -> web.Response:
    player_id = path_id(request)
    principal = await authenticate(request)
    body = await read_json(request, SettingsIn)
    return _settings(await service(request).update_settings(principal, player_id, body.changes()))
