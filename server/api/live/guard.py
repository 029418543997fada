"""The sockets' guards: a WebSocket signed in with a session is closed with `4401` within 2 s of
that session ending (SPEC 2.2: signed out, revoked, a password changed, the account erased), in
every process; and a message over its rate budget is answered with an `error` before the socket
is closed for it (`Pacing`).

A session ended in this process closes its sockets here at once (`SessionService.ended`). For
the sessions ended elsewhere, the guard asks the database, once every `CHECK_S`, which of the
sessions of this process's sockets still hold: one read for all of them, whatever the broker (or
none: SQLite's processes share no broker), and nothing to lose when a notification would have
been missed. While the database does not answer, the sockets stay as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from server.api.limits import Refusal
from server.api.problems import problem_body
from server.api.schemas import ErrorOut, echoed_id
from server.keys import CONNECTIONS, SESSIONS
from server.services.errors import Problem
from server.store.faults import periodic

if TYPE_CHECKING:
    from server.api.live import Connection

log = logging.getLogger(__name__)

CHECK_S = 1.0
CLOSE_SESSION_ENDED = 4401
OVER_BUDGET = "rate limit exceeded"
"""The reason of the 1008 close of a socket that kept sending over its budget."""


class Pacing:
    """What a socket's messages over its rate budget get (SPEC 2.7, issue 20): the first is
    answered with an `error`, a `429` problem (`too-many-requests`) whose `retry_after` says
    the seconds until the budget frees up (HTTP's `Retry-After`), and is not read otherwise;
    the socket is closed with 1008 only when another message over the budget comes before
    those seconds have passed (a client that keeps going regardless). One over the budget after
    them is warned again.

    Decisions where the spec is silent: the warning repeats the refused message's `id` (the
    text is read as JSON for that alone, at most once a retry window, so a flood costs one
    parse per socket before its close); a message within the budget in between neither
    closes nor forgives anything (the window stands as first told)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.until = -math.inf
        """Until when the last warning's `retry_after` runs (monotonic seconds)."""

    def warn(self, refusal: Refusal, raw: str) -> ErrorOut | None:
        """The `error` answering a message over the budget, or None: close the socket."""
        now = self.clock()
        if now < self.until:
            return None
        self.until = now + refusal.retry_after
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            data = None
        mid = echoed_id(data) if isinstance(data, dict) else None
        problem = problem_body(
            429,
            "too-many-requests",
            "Too many requests",
            refusal.detail,
            retry_after=refusal.retry_after,
        )
        return ErrorOut(id=mid, problem=problem)


def with_retry_after(exc: Exception, problem: dict[str, Any]) -> dict[str, Any]:
    """A refusal's problem as the WebSocket sends it: what HTTP says in `Retry-After` (a busy
    solver, one costly request at a time, the database unavailable) is the problem's
    `retry_after` member, in seconds."""
    headers = exc.headers if isinstance(exc, Problem) else {}
    seconds = headers.get("Retry-After")
    if seconds is None and problem.get("status") == 503:
        seconds = "1"  # as the HTTP middleware answers a 503
    if seconds is None or not seconds.isdigit():
        return problem
    return {**problem, "retry_after": int(seconds)}


def close_ended(app: web.Application, ended: set[str]) -> None:
    connections: set[Connection] = app[CONNECTIONS]
    for connection in list(connections):
        player = connection.player
        if player is not None and player.session_id in ended:
            connection.close_soon(CLOSE_SESSION_ENDED, "session ended")


async def _check(app: web.Application) -> None:
    held = {c.player.session_id for c in app[CONNECTIONS] if c.player is not None}
    if held:
        close_ended(app, held - await app[SESSIONS].alive(held))


async def guard(app: web.Application) -> AsyncIterator[None]:
    """The cleanup context: the guard runs while the app does."""
    app[SESSIONS].ended.append(lambda ended: close_ended(app, ended))
    task = periodic("checking the sockets' sessions", CHECK_S, lambda: _check(app), log)
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
