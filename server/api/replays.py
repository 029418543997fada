"""Replays: download (`/api/v1/games/{id}/replay`) and verification (SPEC 2.4)."""

from __future__ import annotations

from aiohttp import web

from server.api import heavy
from server.api.access import client_of, service, viewer
from server.api.problems import invalid, read_json
from server.api.render import (
    deal_json,
    json_response,
    refused_json,
    replay_json,
    verification_json,
)
from server.api.replicas import on_primary
from server.api.schemas import ReplayIn, path_id
from server.api.seeding import seeds_of
from server.engine import DealCode, Status
from server.keys import SOLVER
from server.services.deals import SolverService
from server.services.values import MOVE_PAGE_MAX
from server.store.records import LoggedMove

routes = web.RouteTableDef()


@routes.get("/api/v1/games/{id}/replay")
async def download(request: web.Request) -> web.Response:
    """The replay, charged by its length before it is read (`server.api.heavy`): the game's row
    first (its version is the log's length), then, unless the finished game's replay is kept
    rendered, its log a page at a time (no step of the event loop handles more than a page's
    rows) up to the version first read, rendered in a thread."""
    game_id = path_id(request)
    who = await viewer(request)
    games = service(request)
    view = await games.get_game(game_id, who)
    if view.row.status is Status.ACTIVE and on_primary(request):
        view = await games.get_game(game_id, who)  # a game in play: read where it is played
    over = await heavy.charge(request, view.row.version)
    if over is not None:
        return over
    (seed,) = await seeds_of(request.app, [view])
    key = heavy.replay_key(view, seed)
    body = heavy.REPLAYS.get(key)
    if body is None:
        version = view.row.version
        log: list[LoggedMove] = []
        more = version > 0
        while more:
            after = log[-1].seq if log else 0
            _, page, more = await games.move_page(game_id, who, after=after, limit=MOVE_PAGE_MAX)
            log += [m for m in page if m.seq <= version]
            more = more and bool(page) and page[-1].seq < version
        body = await heavy.rendered(replay_json, view, log, seed)
        heavy.REPLAYS.put(key, body)
    return heavy.json_body(body)


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
    over = await heavy.charge(request, len(body.actions))
    if over is not None:
        return over
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
