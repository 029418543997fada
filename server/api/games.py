"""`/api/v1/games`: deal, read, act, targets, legal moves, abandon, move log (SPEC 2.3); hints
(SPEC 2.5); the games being played now (`/api/v1/live/games`). A deal's verdict and the daily
deal are in `api/deals.py`, a game's replay in `api/replays.py`."""

from __future__ import annotations

from aiohttp import web

from server.api import heavy
from server.api.access import (
    authenticate,
    checked_at_commit,
    client_of,
    confirm,
    service,
    unread_session,
    viewer,
)
from server.api.problems import invalid, read_json, validation_problem
from server.api.render import (
    action_json,
    game_json,
    games_page_json,
    hint_json,
    json_response,
    legal_json,
    moves_json,
    next_link,
    targets_json,
)
from server.api.schemas import (
    ActionIn,
    LiveGamesQueryIn,
    MovesQueryIn,
    NewGameIn,
    idempotency_key,
    path_id,
    query_of,
)
from server.engine import Card, NotationError, Rule
from server.keys import BOARDS, SOLVER
from server.store.faults import unavailable
from server.store.records import utc_day

routes = web.RouteTableDef()

REPLAYED = {"Idempotent-Replayed": "true"}


@routes.post("/api/v1/games")
async def create_game(request: web.Request) -> web.Response:
    player = await authenticate(request, "play")
    body = await read_json(request, NewGameIn)
    rule = body.rule or Rule.CLASSIC
    games = service(request)
    if body.daily:
        day = utc_day(games.clock())
        code = await request.app[SOLVER].daily_code(day, rule)
        view = await games.create_game(player, rule, code, secret=True, daily=day)
    elif body.winnable:
        client = await client_of(request, player)
        code, seed = await request.app[SOLVER].seeded_winnable(player, rule, client)
        view = await games.create_game(player, rule, code, secret=True, seed=seed)
    else:
        view = await games.create_game(player, body.rule, body.deal_code())
    return json_response(
        game_json(view), status=201, headers={"Location": f"/api/v1/games/{view.row.id}"}
    )


@routes.get("/api/v1/games/{id}")
async def get_game(request: web.Request) -> web.Response:
    game_id = path_id(request)
    view = await service(request).get_game(game_id, await viewer(request))
    return json_response(game_json(view))


@routes.post("/api/v1/games/{id}/moves")
@checked_at_commit
async def act(request: web.Request) -> web.Response:
    game_id = path_id(request)  # a malformed id is a 404 whatever the token, as on every route
    try:
        player = await authenticate(request, "play")
        key = idempotency_key(request.headers.get("Idempotency-Key"), "Idempotency-Key")
        body = await read_json(request, ActionIn)
        applied = await service(request).act(
            player, game_id, body.request(), key, unread_session(request)
        )
        if applied.replayed:  # not committed now: its token is read before it is answered
            await confirm(request)
    except Exception as exc:
        if not unavailable(exc):  # a refusal of a revoked token is its 401 (checked_at_commit)
            await confirm(request)
        raise
    return json_response(action_json(applied), headers=REPLAYED if applied.replayed else None)


@routes.get("/api/v1/games/{id}/moves")
async def move_log(request: web.Request) -> web.Response:
    game_id = path_id(request)
    q = query_of(request, MovesQueryIn)
    view, log, more = await service(request).move_page(
        game_id, await viewer(request), after=q.after, limit=q.limit
    )
    # Charged by its entries, rendered in a thread (`server.api.heavy`).
    refused = await heavy.charge(request, len(log))
    if refused is not None:
        return refused
    return heavy.json_body(await heavy.rendered(moves_json, view, log, more))


@routes.get("/api/v1/games/{id}/targets")
async def targets(request: web.Request) -> web.Response:
    game_id = path_id(request)
    text = request.query.get("card")
    if text is None:
        raise invalid("card", "the query parameter is required")
    try:
        card = Card.parse(text)
    except NotationError as exc:
        raise invalid("card", str(exc)) from None
    places = await service(request).targets(game_id, card, await viewer(request))
    return json_response(targets_json(card, places))


@routes.get("/api/v1/games/{id}/legal")
async def legal(request: web.Request) -> web.Response:
    """Every legal move of the position and whether an undo would be accepted (SPEC 2.3): the
    game's visibility; no parameters."""
    game_id = path_id(request)
    if request.query:
        raise validation_problem(
            [{"field": name, "message": "unknown parameter"} for name in request.query]
        )
    view, found = await service(request).legal(game_id, await viewer(request))
    return json_response(legal_json(view, found))


@routes.get("/api/v1/games/{id}/hint")
async def hint(request: web.Request) -> web.Response:
    """A next move from a winning line (the game becomes assisted), or the verdict."""
    game_id = path_id(request)
    if request.query:
        raise validation_problem(
            [{"field": name, "message": "unknown parameter"} for name in request.query]
        )
    player = await authenticate(request, "play")
    found = await request.app[SOLVER].hint(player, game_id, await client_of(request, player))
    return json_response(hint_json(found))


@routes.post("/api/v1/games/{id}/abandon")
async def abandon(request: web.Request) -> web.Response:
    game_id = path_id(request)
    player = await authenticate(request, "play")
    applied = await service(request).abandon(player, game_id)
    return json_response(game_json(applied.view))


@routes.get("/api/v1/live/games")
async def live_games(request: web.Request) -> web.Response:
    """Games in play that anyone may watch, most recently active first, paged."""
    q = query_of(request, LiveGamesQueryIn)
    page = await request.app[BOARDS].live_games(limit=q.limit, after=q.after)
    return json_response(games_page_json(page), headers=next_link(request, page.next))
