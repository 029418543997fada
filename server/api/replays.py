"""Replays: download (`/api/v1/games/{id}/replay`) and verification (SPEC 2.4)."""

from __future__ import annotations

from aiohttp import web

from server.api.access import client_of, service, viewer
from server.api.problems import invalid, read_json
from server.api.render import (
    deal_json,
    json_response,
    refused_json,
    replay_json,
    verification_json,
)
from server.api.schemas import ReplayIn, path_id
from server.engine import DealCode
from server.keys import SOLVER
from server.services.deals import SolverService

routes = web.RouteTableDef()


@routes.get("/api/v1/games/{id}/replay")
async def download(request: web.Request) -> web.Response:
    game_id = path_id(request)
    view, log = await service(request).move_log(game_id, await viewer(request))
    return json_response(replay_json(view, log))


@routes.post("/api/v1/replays/verify")
async def verify(request: web.Request) -> web.Response:
    solver = request.app[SOLVER]
    # Refused at once, before the body is read, when the client has a costly request running
    # or the workers are busy.
    with solver.public_slot(await client_of(request)):
        return await verified(request, solver)


async def verified(request: web.Request, solver: SolverService) -> web.Response:
    body = await read_json(request, ReplayIn)
    assert body.code is not None
    code = DealCode.parse(body.code)
    actions: list[str] = []
    for index, item in enumerate(body.actions):
        move = item.get("move") if isinstance(item, dict) else item
        if not isinstance(move, str):
            raise invalid(f"actions.{index}", "expected {'move': '<move text>'}")
        actions.append(move)
    if body.deal_commitment is not None and body.deal_commitment != code.commitment:
        return refused(code, "commitment_mismatch", f"{code} is not the deal committed to.")
    if body.deal is not None and body.deal != deal_json(code):
        return refused(code, "deal_mismatch", f"The deal is not the deal of {code}.")
    result = await solver.verify_replay(code, actions, body.result)
    return json_response(verification_json(code, result))


def refused(code: DealCode, rule: str, reason: str) -> web.Response:
    """The verdict on a replay whose code or deal does not hold."""
    return json_response(refused_json(code, rule, reason))
