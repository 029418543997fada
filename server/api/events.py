"""Server-sent events (SPEC 2.6.2), for clients where WebSockets are blocked: the player's own
notices at `GET /api/v1/me/events` and a watched game's events at `GET /api/v1/games/{id}/events`,
as `text/event-stream` by aiohttp-sse (no hand-written framing).

Each event's `data` is the document the WebSocket sends for it (`server.api.render`), its
`event:` the message's kind and its `id:` what a reconnection resumes from:

- `/me/events` (token, scope `read`, as `follow_me`): one event per notice, `event:` its kind
  (`race_joined`, ...), `id:` the notice id. A reconnection with `Last-Event-ID: n` first sends
  the notices numbered above `n` that are kept (the last 100 at least, or 24 h), then the new
  ones; without it, the stream starts from now. The stream ends when the session of its own
  token ends (after its `session_revoked` event).
- A stream opened with a token also ends when its session does not hold any more (revoked, or
  an app's token expired), as the sockets' guard closes a socket: it checks at least every
  `SESSION_CHECK_S` (one indexed read), so a revoked token reads nothing more after 2 s.
- `/games/{id}/events` (anyone who may watch the game, with the same refusals as `watch`):
  exactly the messages a `watch` with `since` = `Last-Event-ID` gets over the WebSocket, each
  with the game's version as its `id:` and its message type as `event:`: the missed changes
  (`event`, from the move log), `watching` with the game now, then an `event` per change; or
  one `resync` (the whole game) when more than 100 were missed or the id is ahead of the game.
  The stream stays open after the game ends (its last event tells so); the client closes it.

Both: listen first, then read (nothing committed in between is missed), then send only what is
newer than what was sent, so a reconnection with the last id it got loses nothing and repeats
nothing. A `Last-Event-ID` that is not a whole number ≥ 0 is a `422` before the stream starts.
A comment line (`: ping`) goes out every `KEEPALIVE_S` seconds (aiohttp-sse's ping), which also
finds a client that went away. A stream counts as a WebSocket in the caps of open connections
(`server.api.limits.SocketCaps`). A client too slow to take a game's events (`QUEUE` behind) is
ended: it reconnects with its `Last-Event-ID`. Shutdown ends every stream. The rate limiter
charges a stream as one request and does not hold it in flight (as a WebSocket).
`Authorization: Bearer` is the only way to give the token (no token in the URL, where logs keep
it): a browser reads these streams with `fetch`, or an EventSource polyfill that sends headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator

from aiohttp import ClientConnectionResetError, web
from aiohttp_sse import EventSourceResponse, sse_response

from server.api.access import authenticate, service, viewer
from server.api.live.games import MISSED_LIMIT
from server.api.problems import invalid
from server.api.render import (
    message_text,
    missed_messages,
    notice_message,
    resync_message,
    watching_message,
)
from server.api.schemas import path_id
from server.keys import BROKER, BUDGET, NOTICES, SESSIONS, STREAMS, TEXTS
from server.live.broker import Change
from server.services.errors import Problem
from server.services.notices import PAGE
from server.services.sessions import SessionService
from server.services.values import Applied, Principal
from server.store.faults import unavailable

log = logging.getLogger(__name__)

routes = web.RouteTableDef()

KEEPALIVE_S = 10.0
"""A comment line at least this often (SPEC: at least every 15 s)."""
QUEUE = 256
SESSION_CHECK_S = 2.0
"""A stream opened with a token checks at least this often that its session holds."""
HEADERS = {"X-Accel-Buffering": "no"}
"""Tells a buffering proxy (nginx) to pass each event on at once."""


def last_event_id(request: web.Request) -> int | None:
    raw = request.headers.get("Last-Event-ID")
    if raw is None or raw.strip() == "":
        return None
    text = raw.strip()
    if not text.isdigit() or not text.isascii() or len(text) > 18:
        raise invalid("Last-Event-ID", "expected the id of an event of this stream (an integer)")
    return int(text)


@contextlib.asynccontextmanager
async def stream(
    request: web.Request, who: Principal | None, wake: asyncio.Event
) -> AsyncIterator[Ending]:
    """The response, prepared, kept among the app's streams (ended at shutdown) and counted in
    the caps of open connections as a WebSocket is (per address, per player: over one, `429`
    before the stream starts)."""
    budget = request.app[BUDGET]
    address = budget.address(request)
    player = who.id if who is not None else None
    over = budget.sockets.open(address, player)
    if over is not None:
        raise Problem(
            f"Refused: {over}.",
            status=429,
            slug="too-many-requests",
            title="Too many requests",
            headers={"Retry-After": "1"},
        )
    try:
        async with sse_response(request, ping_interval=KEEPALIVE_S, headers=HEADERS) as response:
            streams = request.app[STREAMS]
            streams.add(response)
            session_id = who.session_id if who is not None else None
            ending = Ending(response, wake, request.app[SESSIONS], session_id)
            try:
                yield ending
            except (ConnectionError, ClientConnectionResetError):
                pass  # the client went away: nothing to tell it
            except Exception as exc:
                # Once the stream has begun, no problem document can follow it: the stream
                # ends (the client reconnects with its Last-Event-ID), with one line logged.
                log.warning("an event stream ended on a fault: %s", fault_line(exc))
            finally:
                streams.discard(response)
                await ending.close()
    finally:
        budget.sockets.close(address, player)


def fault_line(exc: BaseException) -> str:
    """One line for the log: the database's outage as such, anything else by its type."""
    what = "the database is unavailable" if unavailable(exc) else type(exc).__name__
    return f"{what} ({exc})"


class Ending:
    """Waits for a stream's wake-ups or its end (the client gone, or shutdown). One task waits
    for the end for the stream's whole life: cancelling a wait on the stream's ping task would
    cancel the ping task itself, and so end the stream."""

    def __init__(
        self,
        response: EventSourceResponse,
        wake: asyncio.Event,
        sessions: SessionService,
        session_id: str | None,
    ) -> None:
        self.response = response
        self.wake = wake
        self.sessions = sessions
        self.session_id = session_id
        """The session of the request's token, if it had one: the stream ends with it."""
        self.ended = asyncio.create_task(response.wait())
        self.checked = time.monotonic()
        """When the session was last found to hold."""

    async def woken(self) -> bool:
        """Waits for `wake` or the end, at most `SESSION_CHECK_S`; False when the stream is to
        end (the client went away, shutdown, or the token's session ended meanwhile)."""
        woken = asyncio.create_task(self.wake.wait())
        try:
            await asyncio.wait(
                [woken, self.ended], timeout=SESSION_CHECK_S, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            woken.cancel()
            await asyncio.gather(woken, return_exceptions=True)
        if not self.response.is_connected():
            return False
        due = time.monotonic() - self.checked >= SESSION_CHECK_S
        if self.session_id is not None and due:  # however busy the stream: a revoked token
            try:  # reads nothing more after SESSION_CHECK_S
                alive = await self.sessions.alive([self.session_id])
            except Exception as exc:  # the database away: the stream goes on as it is
                log.warning("checking the session of an event stream failed: %s", fault_line(exc))
                return True
            self.checked = time.monotonic()
            return self.session_id in alive
        return True

    async def close(self) -> None:
        self.ended.cancel()
        await asyncio.gather(self.ended, return_exceptions=True)


@routes.get("/api/v1/me/events")
async def my_events(request: web.Request) -> web.StreamResponse:
    principal = await authenticate(request, "read")
    after = last_event_id(request)
    notices = request.app[NOTICES]
    player = principal.id
    wake = asyncio.Event()
    notices.listen(player, wake.set)
    try:
        await notices.ready(player)
        last = await notices.last_id(player)
        sent = last if after is None else min(after, last)
        async with stream(request, principal, wake) as ending:
            response = ending.response
            while response.is_connected():
                wake.clear()
                found = await notices.since(player, sent, PAGE)
                for notice in found:
                    sent = notice.id
                    text = message_text(notice_message(notice))
                    await response.send(text, id=str(notice.id), event=notice.kind)
                    if (
                        notice.kind == "session_revoked"
                        and notice.data.get("session_id") == principal.session_id
                    ):
                        break  # this stream's own session ended
                if len(found) == PAGE:
                    continue
                if not await ending.woken():
                    break
        return response
    finally:
        notices.unlisten(player, wake.set)


@routes.get("/api/v1/games/{id}/events")
async def game_events(request: web.Request) -> web.StreamResponse:
    game_id = path_id(request)
    since = last_event_id(request)
    who = await viewer(request)
    broker = request.app[BROKER]
    texts = request.app[TEXTS]
    changes: asyncio.Queue[tuple[int, Applied]] = asyncio.Queue(QUEUE)
    wake = asyncio.Event()
    behind = False

    def watcher(version: int, change: Change) -> None:
        nonlocal behind
        if change is None:
            return
        try:
            changes.put_nowait((version, change))
        except asyncio.QueueFull:
            behind = True
        wake.set()

    broker.subscribe(game_id, watcher)
    try:
        await broker.ready(game_id)
        games = service(request)
        view, entries = await games.missed(game_id, who, since, MISSED_LIMIT)
        version = view.row.version
        async with stream(request, who, wake) as ending:
            response = ending.response
            if since is not None and (since > version or version - since > MISSED_LIMIT):
                text = message_text(resync_message(None, view))
                await response.send(text, str(version), "resync")
            else:
                if since is not None:
                    for missed in missed_messages(game_id, since, version, entries):
                        await response.send(message_text(missed), str(missed.version), "event")
                text = message_text(watching_message(None, view))
                await response.send(text, str(version), "watching")
            seen = version
            while response.is_connected() and not behind:
                wake.clear()
                while not changes.empty():
                    changed, change = changes.get_nowait()
                    if changed > seen + 1:
                        # A change came before the one above what was sent (two processes'
                        # changes crossed, with either broker): the versions between are read
                        # from the move log, so that the stream's ids stay whole, nothing lost.
                        view, entries = await games.missed(game_id, who, seen, MISSED_LIMIT)
                        if view.row.version - seen > MISSED_LIMIT:
                            return response  # too far behind: the client reconnects
                        for missed in missed_messages(game_id, seen, view.row.version, entries):
                            await response.send(message_text(missed), str(missed.version), "event")
                        seen = view.row.version
                    if changed > seen:
                        seen = changed
                        await response.send(texts.event(change), str(changed), "event")
                if behind or not await ending.woken():
                    break
        return response
    finally:
        broker.unsubscribe(game_id, watcher)


async def end_streams(app: web.Application) -> None:
    """On shutdown: every stream ends (its client reconnects with its `Last-Event-ID`)."""
    streams = app[STREAMS]
    for response in list(streams):
        with contextlib.suppress(RuntimeError):
            response.stop_streaming()


def setup(app: web.Application) -> None:
    streams: set[EventSourceResponse] = set()
    app[STREAMS] = streams
    app.on_shutdown.append(end_streams)
    app.router.add_routes(routes)
