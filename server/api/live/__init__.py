"""Live play and watching over one WebSocket endpoint, `/api/v1/live` (SPEC 2.6; the protocol is
`asyncapi.yaml`, its messages the models of `server.api.schemas`).

Each connection reads its messages in order and answers each; the action path is the same
use-case (`GameService.act`) and the same transaction as `POST /api/v1/games/{id}/moves`;
`abandon` and `hint` are the use-cases of `POST .../abandon` and `GET .../hint`, with their
scope and refusals (a hint holds the player's one costly request, as over HTTP). A
connection is its outbox (`outbox.py`: the bounded queue, backpressure, closing), the games it
watches (`games.py`) and the races it watches (`races.py`); this module reads its messages.
A socket whose session ends is closed with 4401; a message over the rate budget is answered
with a 429 `error`, and only the next one within its `retry_after` closes the socket with 1008
(`guard.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any, assert_never

from aiohttp import WSMsgType, web

from server import metrics
from server.api.access import authenticate, service
from server.api.live.games import GameWatching
from server.api.live.guard import OVER_BUDGET, Pacing, guard, with_retry_after
from server.api.live.notices import NoticeFollowing
from server.api.live.outbox import CLOSE_NORMAL, Outbox
from server.api.live.races import RaceWatching
from server.api.problems import internal_error, known_problem, problem_body
from server.api.render import LiveTexts, abandoned_message, hinted_message, result_message
from server.api.schemas import (
    AbandonIn,
    ActIn,
    AuthenticatedOut,
    AuthIn,
    ErrorOut,
    FollowMeIn,
    HintIn,
    PingIn,
    PlayerRefOut,
    PongOut,
    UnwatchedOut,
    UnwatchedRaceOut,
    UnwatchIn,
    UnwatchRaceIn,
    WatchIn,
    WatchRaceIn,
    client_message,
    echoed_id,
)
from server.api.texts import localize
from server.engine.messages import negotiate
from server.keys import BROKER, BUDGET, CONNECTIONS, NOTICES, RACES, SESSIONS, SOLVER, TEXTS
from server.services.errors import Problem, Unauthorized
from server.services.sessions import require
from server.services.values import Principal
from server.services.workers import Client

log = logging.getLogger(__name__)

routes = web.RouteTableDef()

SUBPROTOCOL = "solitaire.v1"
MAX_MESSAGE = 16 * 1024
HEARTBEAT_S = 20.0
CLOSE_GOING_AWAY = 1001
CLOSE_UNSUPPORTED = 1003
CLOSE_POLICY = 1008
PLAYER_FIRST = frozenset({"act", "abandon", "hint", "follow_me"})
"""Messages read only once the connection has a player (as HTTP authenticates first)."""


class Connection:
    def __init__(self, request: web.Request, ws: web.WebSocketResponse) -> None:
        self.request = request
        self.ws = ws
        app = request.app
        self.lang = negotiate(request.headers.get("Accept-Language"))
        self.player: Principal | None = None
        self.outbox = Outbox(ws)
        self.games = GameWatching(app[BROKER], service(request), app[TEXTS], self.outbox)
        self.races = RaceWatching(app[RACES], app[TEXTS], self.outbox)
        self.notices = NoticeFollowing(app[NOTICES], self.outbox)
        self.busy = asyncio.Lock()
        """Held while a message is answered (shutdown waits for the one in flight)."""
        self.budget = app[BUDGET]
        self.address = self.budget.address(request)
        self.counted: str | None = None
        """The player this socket is counted for in the socket caps (None: nobody's yet)."""
        self.pacing = Pacing()

    def close_soon(self, code: int, reason: str) -> None:
        self.outbox.close_soon(code, reason)

    def unwatch_all(self) -> None:
        self.games.unwatch_all()
        self.races.unwatch_all()
        self.notices.unfollow()

    # ------------------------------------------------------------------ budgets and caps

    async def take_token(self, raw: str) -> bool:
        """Charges a message to the player's and the address's budgets, shared with every
        other connection and every HTTP request of theirs; False when it is over either: it
        is then answered with a 429 `error`, or the socket closes (`guard.Pacing`)."""
        player = self.player.id if self.player is not None else None
        refusal = await self.budget.charge(self.address, player)
        if refusal is None:
            return True
        warning = self.pacing.warn(refusal, raw)
        if warning is None:
            self.close_soon(CLOSE_POLICY, OVER_BUDGET)
        else:
            problem = localize(warning.problem, self.lang)
            self.outbox.send(ErrorOut(id=warning.id, problem=problem))
        return False

    def count_player(self) -> bool:
        """Counts this socket for its (new) player; False, and the socket closing, when that
        is over the player's cap."""
        if self.player is None or self.player.id == self.counted:
            return True
        over = self.budget.sockets.change_player(self.counted, self.player.id)
        self.counted = None if over else self.player.id
        if over:
            self.close_soon(CLOSE_POLICY, over)
        return not over

    # ------------------------------------------------------------------ messages

    async def handle(self, raw: str) -> None:
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            problem = problem_body(
                400, "malformed-json", "Malformed JSON", f"The message is not JSON: {exc}."
            )
            problem = localize(problem, self.lang)
            self.outbox.send(ErrorOut(id=None, problem=problem))
            return
        if not isinstance(data, dict):
            problem = problem_body(
                422, "validation-error", "Validation error", "A message is a JSON object."
            )
            problem = localize(problem, self.lang)
            self.outbox.send(ErrorOut(id=None, problem=problem))
            return
        try:
            await self.dispatch(data)
        except Exception as exc:
            body = known_problem(exc, self.lang)
            if body is None:
                log.exception("live message failed")
                body = internal_error(self.lang)
            self.outbox.send(ErrorOut(id=echoed_id(data), problem=with_retry_after(exc, body)))

    async def dispatch(self, data: dict[str, Any]) -> None:
        if data.get("type") in PLAYER_FIRST and self.player is None:
            # As over HTTP, the player first: an action without one is not read.
            raise Unauthorized("Send an auth message (or connect with a bearer token) first.")
        message = client_message(data)
        mid = message.id
        match message:
            case PingIn():
                self.outbox.send(PongOut(id=mid))
            case AuthIn():
                await self.auth(message)
            case ActIn():
                await self.act(message)
            case AbandonIn():
                await self.abandon(message)
            case HintIn():
                await self.hint(message)
            case FollowMeIn():
                assert self.player is not None  # (checked before the message was read)
                await self.notices.follow(mid, self.player, message.since)
            case WatchIn():
                await self.games.watch(mid, message.game_id, message.since, self.player)
            case UnwatchIn():
                self.games.unwatch(message.game_id)
                self.outbox.send(UnwatchedOut(id=mid, game_id=message.game_id))
            case WatchRaceIn():
                await self.races.watch(mid, message.race_id)
            case UnwatchRaceIn():
                self.races.unwatch(message.race_id)
                self.outbox.send(UnwatchedRaceOut(id=mid, race_id=message.race_id))
            case _:
                assert_never(message)

    async def auth(self, message: AuthIn) -> None:
        self.player = await self.request.app[SESSIONS].authenticate(message.token)
        if self.notices.player not in (None, self.player.id):
            self.notices.unfollow()  # another player now: the first one's notices stop
        if not self.count_player():
            return
        player = PlayerRefOut(id=self.player.id, name=self.player.name)
        self.outbox.send(AuthenticatedOut(id=message.id, player=player))

    async def act(self, message: ActIn) -> None:
        player = self.acting()
        applied = await service(self.request).act(
            player, message.game_id, message.action.request(), message.idempotency_key
        )
        self.outbox.send(result_message(message.id, applied))

    async def abandon(self, message: AbandonIn) -> None:
        """As POST /api/v1/games/{id}/abandon: the same use-case, scope and refusals."""
        player = self.acting()
        applied = await service(self.request).abandon(player, message.game_id)
        self.outbox.send(abandoned_message(message.id, applied))

    async def hint(self, message: HintIn) -> None:
        """As GET /api/v1/games/{id}/hint: the same use-case, scope and refusals (none in a
        race, one costly request at a time for the player and the address's share). The
        connection reads its next message once the hint is answered, as for any message."""
        player = self.acting()
        client = Client(f"player:{player.id}", self.address)
        found = await self.request.app[SOLVER].hint(player, message.game_id, client)
        self.outbox.send(hinted_message(message.id, message.game_id, found))

    def acting(self) -> Principal:
        """The connection's player, granted `play` (401, 403 `missing-scope` otherwise)."""
        if self.player is None:  # (checked before the message was read)
            raise Unauthorized("Send an auth message (or connect with a bearer token) first.")
        require(self.player, "play")
        return self.player


@routes.get("/api/v1/live")
async def live(request: web.Request) -> web.StreamResponse:
    ws = web.WebSocketResponse(
        protocols=(SUBPROTOCOL,),
        heartbeat=HEARTBEAT_S,
        # aiohttp refuses a message of exactly max_msg_size bytes: allow MAX_MESSAGE itself.
        max_msg_size=MAX_MESSAGE + 1,
    )
    if not ws.can_prepare(request).ok:
        raise Problem(
            "This address is a WebSocket endpoint: connect with an Upgrade: websocket request.",
            slug="websocket-required",
            title="WebSocket required",
        )
    connection = Connection(request, ws)
    if request.headers.get("Authorization"):
        connection.player = await authenticate(request)
    await ws.prepare(request)
    sockets = request.app[BUDGET].sockets
    player_id = connection.player.id if connection.player is not None else None
    over = sockets.open(connection.address, player_id)
    if over is not None:
        await ws.close(code=CLOSE_POLICY, message=over.encode())
        return ws
    connection.counted = player_id
    metrics.socket_opened()
    request.app[CONNECTIONS].add(connection)
    outbox = connection.outbox
    sender = outbox.start()
    try:
        async for msg in ws:
            if outbox.closing:
                break
            if msg.type == WSMsgType.TEXT:
                if not await connection.take_token(msg.data):
                    if outbox.closing:
                        break
                    continue  # answered with an error
                async with connection.busy:
                    if outbox.closing:
                        break  # closing: take no new action
                    await connection.handle(msg.data)
            elif msg.type == WSMsgType.BINARY:
                connection.close_soon(CLOSE_UNSUPPORTED, "text messages only")
                break
            elif msg.type == WSMsgType.ERROR:
                break
    finally:
        request.app[CONNECTIONS].discard(connection)
        sockets.close(connection.address, connection.counted)
        metrics.socket_closed()
        connection.unwatch_all()
        connection.close_soon(outbox.close_code or CLOSE_NORMAL, "")
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(sender, 5)
        sender.cancel()
    return ws


async def close_all(app: web.Application) -> None:
    """On shutdown: let each connection finish its action in flight, then close it with 1001."""

    async def close(connection: Connection) -> None:
        async with connection.busy:  # the action in flight, if any, is answered first
            connection.close_soon(CLOSE_GOING_AWAY, "server shutting down")
        # The sender sends what is queued (that answer included), then closes with 1001.
        await connection.outbox.flushed(5)
        with contextlib.suppress(Exception):
            await connection.ws.close(code=CLOSE_GOING_AWAY, message=b"server shutting down")

    connections: set[Connection] = app[CONNECTIONS]
    await asyncio.gather(*(close(c) for c in list(connections)))


def setup(app: web.Application) -> None:
    app[CONNECTIONS] = set()
    app[TEXTS] = LiveTexts()
    app.on_shutdown.append(close_all)
    app.cleanup_ctx.append(guard)
    app.router.add_routes(routes)
