"""The sockets' guard: a WebSocket signed in with a session is closed with `4401` within 2 s of
that session ending (SPEC 2.2: signed out, revoked, a password changed, the account erased), in
every process.

A session ended in this process closes its sockets here at once (`SessionService.ended`). For
the sessions ended elsewhere, the guard asks the database, once every `CHECK_S`, which of the
sessions of this process's sockets still hold: one read for all of them, whatever the broker (or
none: SQLite's processes share no broker), and nothing to lose when a notification would have
been missed. While the database does not answer, the sockets stay as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from aiohttp import web

from server.keys import CONNECTIONS, SESSIONS
from server.store.db import unavailable

if TYPE_CHECKING:
    from server.api.live import Connection

log = logging.getLogger(__name__)

CHECK_S = 1.0
CLOSE_SESSION_ENDED = 4401


def close_ended(app: web.Application, ended: set[str]) -> None:
    connections: set[Connection] = app[CONNECTIONS]
    for connection in list(connections):
        player = connection.player
        if player is not None and player.session_id in ended:
            connection.close_soon(CLOSE_SESSION_ENDED, "session ended")


async def _check_forever(app: web.Application) -> None:
    sessions = app[SESSIONS]
    while True:
        await asyncio.sleep(CHECK_S)
        held = {c.player.session_id for c in app[CONNECTIONS] if c.player is not None}
        if not held:
            continue
        try:
            alive = await sessions.alive(held)
        except Exception as exc:
            if not unavailable(exc):
                log.exception("checking the sockets' sessions failed")
            continue
        close_ended(app, held - alive)


async def guard(app: web.Application) -> AsyncIterator[None]:
    """The cleanup context: the guard runs while the app does."""
    app[SESSIONS].ended.append(lambda ended: close_ended(app, ended))
    task = asyncio.create_task(_check_forever(app))
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
