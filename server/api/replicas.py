"""Which routes read on the replicas (SPEC 2.8 "Read replicas"), and `X-Read-From`.

The lag-tolerant reads are the routes of LAG_TOLERANT: boards, statistics, listings, replays
(of finished games), exports. For them, `reads` (the innermost middleware) gives the request a
`server.store.replicas.Reads`, and every read transaction the request opens through the routed
sessionmakers runs on one healthy replica (the primary when none is). Everything else reads on
the primary: a game in play and its moves, targets and legal moves, a race being run, the
player's own `/me` documents, sessions and tokens, and every write.

A read that meets a database fault on a replica (`server.store.faults.unavailable`) before its
answer has begun is made once more, on another replica or the primary; that replica is skipped
from then on if its connection failed. Answers of these routes say where they read:
`X-Read-From: replica` or `primary` (nothing without DATABASE_REPLICA_URLS).
"""

from __future__ import annotations

from typing import Final

from aiohttp import web

from server.api.problems import Handler
from server.keys import REPLICAS
from server.services.errors import NotFound
from server.store.faults import unavailable
from server.store.replicas import CURRENT, Reads

HEADER: Final = "X-Read-From"
LAG_TOLERANT: Final = frozenset(
    {
        "/api/v1/leaderboards",
        "/api/v1/leaderboards/races",
        "/api/v1/players/{id}/stats",
        "/api/v1/players/{id}/games",
        "/api/v1/players/{id}/games/export",
        "/api/v1/games/{id}/replay",
        "/api/v1/live/games",
        "/api/v1/races",
    }
)
"""The route templates whose GETs read on a replica: what a client reads of others' finished
play, where a few seconds of lag change nothing a player did themselves."""
READS: Final = web.RequestKey("replica_reads", Reads)
STARTED: Final = web.RequestKey("replica_answer_started", bool)


def lag_tolerant(request: web.Request) -> bool:
    if request.method not in ("GET", "HEAD"):
        return False
    resource = request.match_info.route.resource
    return resource is not None and resource.canonical in LAG_TOLERANT


@web.middleware
async def reads(request: web.Request, handler: Handler) -> web.StreamResponse:
    replicas = request.app.get(REPLICAS)
    if replicas is None or not replicas.configured or not lag_tolerant(request):
        return await handler(request)
    where = Reads()
    request[READS] = where
    token = CURRENT.set(where)
    try:
        try:
            return await handler(request)
        except NotFound:
            # A row made a moment ago (the player's own new game, a new player) that the
            # replica has not replayed yet: asked again on the primary, not answered 404.
            if request.get(STARTED, False) or not where.on_primary():
                raise
            return await handler(request)
        except Exception as exc:
            replica = where.replica
            if replica is None or not unavailable(exc) or request.get(STARTED, False):
                raise
            where.failed.add(replica.index)  # once more elsewhere, never on it again
            where.replica = None
            return await handler(request)
    finally:
        CURRENT.reset(token)


def on_primary(request: web.Request) -> bool:
    """The rest of the request reads on the primary (a replay of a game still in play: it is
    read where its moves are written). Whether it had read on a replica (read it again)."""
    where = request.get(READS)
    return where is not None and where.on_primary()


async def send_read_from(request: web.Request, response: web.StreamResponse) -> None:
    """`X-Read-From` on the answers of the lag-tolerant routes: where they read."""
    where = request.get(READS)
    if where is None:
        return
    request[STARTED] = True
    if where.target is not None:
        response.headers[HEADER] = where.target
