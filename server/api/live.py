"""Live play and watching over one WebSocket endpoint (SPEC 2.6). The protocol is described in
the README ("Live play") and in openapi.yaml.

Each connection reads its messages in order and answers each; the action path is the same
use-case (`GameService.act`) and the same transaction as `POST /api/v1/games/{id}/moves`.
Outgoing messages go through a bounded queue drained by one sender task: a watcher too slow to
keep up is closed with 1013 instead of holding anything up, and reconnects with `since`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from typing import Any

from aiohttp import WSMsgType, web
from pydantic import ValidationError

from server import metrics
from server.api.access import TOKEN_MAX, authenticate, service
from server.api.limits import BUDGET
from server.api.problems import (
    invalid,
    known_problem,
    problem_body,
    validation_errors,
    validation_problem,
)
from server.api.render import action_json, game_json, race_json
from server.api.schemas import ActionIn, idempotency_key
from server.engine.messages import negotiate
from server.keys import BROKER, RACES
from server.services.errors import NotFound, Problem, Unauthorized
from server.services.races.standings import RaceView
from server.services.values import Principal
from server.store.records import LoggedMove

log = logging.getLogger(__name__)

routes = web.RouteTableDef()

SUBPROTOCOL = "solitaire.v1"
MAX_MESSAGE = 16 * 1024
SEND_QUEUE = 256
HEARTBEAT_S = 20.0
MISSED_LIMIT = 100
CLOSE_GOING_AWAY = 1001
CLOSE_UNSUPPORTED = 1003
CLOSE_POLICY = 1008
CLOSE_TRY_AGAIN = 1013

CONNECTIONS = web.AppKey("live_connections", set["Connection"])
RACE_MESSAGES = web.AppKey("live_race_messages", dict[str, tuple[int, str]])
"""The last `race` message of each race watched here, as sent (rendered once per version)."""
RACE_MESSAGES_KEPT = 1000


class Connection:
    def __init__(self, request: web.Request, ws: web.WebSocketResponse) -> None:
        self.request = request
        self.ws = ws
        self.app = request.app
        self.lang = negotiate(request.headers.get("Accept-Language"))
        self.player: Principal | None = None
        self.outbox: asyncio.Queue[str | None] = asyncio.Queue(SEND_QUEUE)
        self.watching: dict[str, Any] = {}
        self.races: dict[str, Any] = {}
        self.race_seen: dict[str, int] = {}
        self.race_held: dict[str, list[tuple[int, RaceView]]] = {}
        """Changes of a race that came while `watch_race` was reading it: sent after its answer."""
        self.seen: dict[str, int] = {}
        self.pending: dict[str, list[tuple[int, str]]] = {}
        self.busy = asyncio.Lock()
        self.close_code: int | None = None
        self.reason = ""
        self.sender_task: asyncio.Task[None] | None = None
        self.budget = request.app[BUDGET]
        self.address = self.budget.address(request)
        self.counted: str | None = None
        """The player this socket is counted for in the socket caps (None: nobody's yet)."""

    # ------------------------------------------------------------------ sending

    def push(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, ensure_ascii=False)
        try:
            text.encode()
        except UnicodeEncodeError:  # a lone surrogate a client sent (an id): JSON escapes it
            text = json.dumps(message)
        self.enqueue(text)

    def enqueue(self, text: str) -> None:
        try:
            self.outbox.put_nowait(text)
        except asyncio.QueueFull:
            self.close_soon(CLOSE_TRY_AGAIN, "too slow: reconnect and watch with 'since'")

    def close_soon(self, code: int, reason: str) -> None:
        if self.close_code is None:
            self.close_code = code
            with contextlib.suppress(asyncio.QueueFull):
                self.outbox.put_nowait(None)
            self.reason = reason

    async def sender(self) -> None:
        while True:
            text = await self.outbox.get()
            if text is None or self.ws.closed:
                break
            try:
                await self.ws.send_str(text)
            except (ConnectionError, RuntimeError):
                break
        if not self.ws.closed:
            await self.ws.close(code=self.close_code or 1000, message=self.reason.encode())

    # ------------------------------------------------------------------ watching

    def on_event(self, game_id: str) -> Any:
        def watcher(version: int, event: str) -> None:
            held = self.pending.get(game_id)
            if held is not None:
                held.append((version, event))  # sent after the `watching` snapshot
            elif version > self.seen.get(game_id, -1):
                self.seen[game_id] = version
                self.enqueue(event)

        return watcher

    async def watch(self, mid: Any, game_id: str, since: int | None) -> None:
        svc = service(self.request)
        if game_id not in self.watching:
            watcher = self.on_event(game_id)
            # Subscribe first, then read: nothing committed in between can be missed. Events
            # that arrive meanwhile are held, and sent after the snapshot if they are newer.
            self.app[BROKER].subscribe(game_id, watcher)
            self.watching[game_id] = watcher
            metrics.watchers(1)
        self.pending[game_id] = []
        # With Redis, a subscription takes effect a moment later: read only once it has.
        await self.app[BROKER].ready(game_id)
        try:
            view, log_rows = await svc.missed(game_id, self.player, since, MISSED_LIMIT)
        except BaseException:
            self.pending.pop(game_id, None)
            self.unwatch(game_id)  # an unknown or hidden game is not watched
            raise
        version = view.row.version
        if since is not None and (since > version or version - since > MISSED_LIMIT):
            self.push(
                {
                    "type": "resync",
                    "id": mid,
                    "game_id": game_id,
                    "version": version,
                    "game": game_json(view),
                }
            )
        else:
            if since is not None:
                self.push_missed(game_id, since, version, log_rows)
            self.push(
                {
                    "type": "watching",
                    "id": mid,
                    "game_id": game_id,
                    "version": version,
                    "game": game_json(view),
                }
            )
        self.seen[game_id] = max(self.seen.get(game_id, -1), version)
        for held_version, event in self.pending.pop(game_id, []):
            if held_version > self.seen[game_id]:
                self.seen[game_id] = held_version
                self.enqueue(event)

    def push_missed(self, game_id: str, since: int, version: int, log: list[LoggedMove]) -> None:
        """The changes after `since`, up to `version`, from the move log. A version without a log
        entry is a change that is not a move (a hint marking the game assisted, an abandonment):
        its event has `move` null and the score as it stood."""
        score = 0
        logged: dict[int, LoggedMove] = {}
        for entry in log:
            if entry.seq <= since:
                score = entry.score
            else:
                logged[entry.seq] = entry
        for seq in range(since + 1, version + 1):
            found = logged.get(seq)
            if found is not None:
                score = found.score
            self.push(
                {
                    "type": "event",
                    "game_id": game_id,
                    "version": seq,
                    "move": found.move if found is not None else None,
                    "score": score,
                    "missed": True,
                }
            )

    def unwatch(self, game_id: str) -> None:
        watcher = self.watching.pop(game_id, None)
        if watcher is not None:
            self.app[BROKER].unsubscribe(game_id, watcher)
            metrics.watchers(-1)
        self.seen.pop(game_id, None)

    def unwatch_all(self) -> None:
        for game_id in list(self.watching):
            self.unwatch(game_id)
        for race_id in list(self.races):
            self.unwatch_race(race_id)

    # ------------------------------------------------------------------ messages

    async def take_token(self) -> bool:
        """Charges a message to the player's and the address's budgets, shared with every
        other connection and every HTTP request of theirs; False when it is over either."""
        player = self.player.id if self.player is not None else None
        return await self.budget.charge(self.address, player) is None

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

    async def handle(self, raw: str) -> None:
        try:
            message = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            self.push(
                {
                    "type": "error",
                    "id": None,
                    "problem": problem_body(
                        400, "malformed-json", "Malformed JSON", f"The message is not JSON: {exc}."
                    ),
                }
            )
            return
        if not isinstance(message, dict):
            self.push(
                {
                    "type": "error",
                    "id": None,
                    "problem": problem_body(
                        422, "validation-error", "Validation error", "A message is a JSON object."
                    ),
                }
            )
            return
        mid = message.get("id")
        if not isinstance(mid, (str, int)) or isinstance(mid, bool):
            mid = None
        try:
            await self.dispatch(mid, message)
        except Exception as exc:
            problem = known_problem(exc, self.lang)
            if problem is None:
                log.exception("live message failed")
                problem = problem_body(
                    500, "internal-error", "Internal server error", "The server failed to answer."
                )
            self.push({"type": "error", "id": mid, "problem": problem})

    async def dispatch(self, mid: Any, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "ping":
            self.push({"type": "pong", "id": mid})
        elif kind == "auth":
            token = message.get("token")
            if not isinstance(token, str) or not token or len(token) > TOKEN_MAX:
                raise invalid("token", "expected the bearer token as text")
            self.player = await service(self.request).authenticate(token)
            if not self.count_player():
                return
            self.push(
                {
                    "type": "authenticated",
                    "id": mid,
                    "player": {"id": self.player.id, "name": self.player.name},
                }
            )
        elif kind == "act":
            await self.act(mid, message)
        elif kind == "watch":
            since = message.get("since")
            if since is not None and (
                not isinstance(since, int) or isinstance(since, bool) or since < 0
            ):
                raise invalid("since", "expected a version number (an integer >= 0)")
            await self.watch(mid, game_id_of(message), since)
        elif kind == "unwatch":
            self.unwatch(game_id_of(message))
            self.push({"type": "unwatched", "id": mid, "game_id": game_id_of(message)})
        elif kind == "watch_race":
            await self.watch_race(mid, race_id_of(message))
        elif kind == "unwatch_race":
            race_id = race_id_of(message)
            self.unwatch_race(race_id)
            self.push({"type": "unwatched_race", "id": mid, "race_id": race_id})
        else:
            raise invalid(
                "type",
                "expected one of auth, act, watch, unwatch, watch_race, unwatch_race, ping",
            )

    # ------------------------------------------------------------------ races

    async def watch_race(self, mid: Any, race_id: str) -> None:
        """The race now, then a `race` message with the whole document on every change (changes
        that come while the race is being read are held, and sent after it if newer)."""
        races = self.app[RACES]
        held: list[tuple[int, RaceView]] = []
        self.race_held[race_id] = held
        if race_id not in self.races:
            seen = self.race_seen

            rendered = self.app[RACE_MESSAGES]

            def listener(version: int, view: RaceView) -> None:
                waiting = self.race_held.get(race_id)
                if waiting is not None:
                    waiting.append((version, view))
                elif version > seen.get(race_id, -1):
                    seen[race_id] = version
                    # Every watcher of the race in this process gets the same text: made once.
                    last = rendered.get(race_id)
                    if last is None or last[0] != version:
                        message = {
                            "type": "race",
                            "race_id": race_id,
                            "version": version,
                            "race": race_json(view),
                        }
                        text = json.dumps(message, ensure_ascii=False)
                        last = rendered[race_id] = (version, text)
                        if len(rendered) > RACE_MESSAGES_KEPT:
                            del rendered[next(iter(rendered))]
                    self.enqueue(last[1])

            races.watch(race_id, listener)  # first, so that no change is missed meanwhile
            self.races[race_id] = listener
            metrics.watchers(1)
        try:
            view = await races.view(race_id)
        except BaseException:
            self.unwatch_race(race_id)
            raise
        finally:
            if self.race_held.get(race_id) is held:
                del self.race_held[race_id]
        self.race_seen[race_id] = max(self.race_seen.get(race_id, -1), view.version)
        self.push({"type": "watching_race", "id": mid, "race_id": race_id, "race": race_json(view)})
        following = self.races.get(race_id)
        if following is not None:
            for version, later in held:
                following(version, later)

    def unwatch_race(self, race_id: str) -> None:
        listener = self.races.pop(race_id, None)
        if listener is not None:
            self.app[RACES].unwatch(race_id, listener)
            metrics.watchers(-1)
        self.race_seen.pop(race_id, None)

    async def act(self, mid: Any, message: dict[str, Any]) -> None:
        if self.player is None:
            raise Unauthorized("Send an auth message (or connect with a bearer token) first.")
        game_id = game_id_of(message)
        action = message.get("action")
        if not isinstance(action, dict):
            raise invalid("action", "expected an action object, as the body of POST .../moves")
        key = idempotency_key(message.get("idempotency_key"), "idempotency_key")
        try:
            request = ActionIn.model_validate(action).request()
        except ValidationError as exc:
            raise validation_problem(
                [{**e, "field": "action." + e["field"]} for e in validation_errors(exc)]
            ) from None
        applied = await service(self.request).act(self.player, game_id, request, key)
        version = applied.view.row.version
        head = {"type": "result", "id": mid, "game_id": game_id, "version": version}
        self.push(head | action_json(applied))


def race_id_of(message: dict[str, Any]) -> str:
    return uuid_of(message, "race_id", "race")


def game_id_of(message: dict[str, Any]) -> str:
    return uuid_of(message, "game_id", "game")


def uuid_of(message: dict[str, Any], field: str, what: str) -> str:
    """The id a message names; anything that is not a UUID names nothing (404)."""
    raw = message.get(field)
    try:
        return str(uuid.UUID(raw)) if isinstance(raw, str) else str(uuid.UUID(""))
    except ValueError:
        raise NotFound(f"There is no {what} {raw!r}.") from None


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
    sender = connection.sender_task = asyncio.create_task(connection.sender())
    try:
        async for msg in ws:
            if connection.close_code is not None:
                break
            if msg.type == WSMsgType.TEXT:
                if not await connection.take_token():
                    connection.close_soon(CLOSE_POLICY, "rate limit exceeded")
                    break
                async with connection.busy:
                    if connection.close_code is not None:
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
        connection.close_soon(connection.close_code or 1000, "")
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
        if connection.sender_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(connection.sender_task), 5)
        with contextlib.suppress(Exception):
            await connection.ws.close(code=CLOSE_GOING_AWAY, message=b"server shutting down")

    connections: set[Connection] = app[CONNECTIONS]
    await asyncio.gather(*(close(c) for c in list(connections)))


def setup(app: web.Application) -> None:
    app[CONNECTIONS] = set()
    app[RACE_MESSAGES] = {}
    app.on_shutdown.append(close_all)
    app.router.add_routes(routes)
