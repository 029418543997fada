"""`/api/v1/games`: deal, read, act, targets, abandon, move log (SPEC 2.3)."""

from __future__ import annotations

from aiohttp import web

from server.api.common import authenticate, json_response, path_id, service
from server.api.problems import Problem, read_json, validation_problem
from server.api.schemas import ActionIn, NewGameIn
from server.engine import Card, NotationError, place_text
from server.service import StoredResponse
from server.views import game_json, moves_json

routes = web.RouteTableDef()

IDEMPOTENCY_KEY_MAX = 255


@routes.post("/api/v1/games")
async def create_game(request: web.Request) -> web.Response:
    player = await authenticate(request)
    body = await read_json(request, NewGameIn)
    view = await service(request).create_game(player, body.rule, body.deal_code())
    return json_response(
        game_json(view), status=201, headers={"Location": f"/api/v1/games/{view.row.id}"}
    )


@routes.get("/api/v1/games/{id}")
async def get_game(request: web.Request) -> web.Response:
    view = await service(request).get_game(path_id(request))
    return json_response(game_json(view))


@routes.post("/api/v1/games/{id}/moves")
async def act(request: web.Request) -> web.Response:
    game_id = path_id(request)
    player = await authenticate(request)
    key = request.headers.get("Idempotency-Key")
    if key is not None and not 1 <= len(key) <= IDEMPOTENCY_KEY_MAX:
        raise validation_problem(
            [{"field": "Idempotency-Key", "message": "must be 1 to 255 characters"}]
        )
    body = await read_json(request, ActionIn)
    result = await service(request).act(player, game_id, body.request(), key)
    if isinstance(result, StoredResponse):
        return web.Response(
            text=result.body,
            status=result.status,
            content_type="application/json",
            headers={"Idempotent-Replayed": "true"},
        )
    return web.Response(text=result.body, content_type="application/json")


@routes.get("/api/v1/games/{id}/moves")
async def move_log(request: web.Request) -> web.Response:
    view, log = await service(request).move_log(path_id(request))
    return json_response(moves_json(view, log))


@routes.get("/api/v1/games/{id}/targets")
async def targets(request: web.Request) -> web.Response:
    game_id = path_id(request)
    text = request.query.get("card")
    if text is None:
        raise validation_problem([{"field": "card", "message": "the query parameter is required"}])
    try:
        card = Card.parse(text)
    except NotationError as exc:
        raise validation_problem([{"field": "card", "message": str(exc)}]) from None
    places = await service(request).targets(game_id, card)
    return json_response({"card": str(card), "targets": [place_text(p) for p in places]})


@routes.post("/api/v1/games/{id}/abandon")
async def abandon(request: web.Request) -> web.Response:
    game_id = path_id(request)
    player = await authenticate(request)
    view = await service(request).abandon(player, game_id)
    return json_response(game_json(view))


__all__ = ["Problem", "routes"]
