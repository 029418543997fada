"""`GET /metrics`, and the middleware that counts, times and logs every request.

The middleware is the outermost: it sees each request's final status (a problem, a `429`, a
`404` of the router) and its whole duration. For each request it writes one access-log line
(logger `server.access`: method, route template, status, duration in ms, request id) and moves
the request metrics. The request id is the client's `X-Request-Id` when it is sane (1 to 64
characters of `A-Z a-z 0-9 . _ : -`), else a fresh one; it is sent back in `X-Request-Id` and
carried by every log line written while the request is handled (`REQUEST_ID`).

The database pool in use is followed through SQLAlchemy's pool events, and set exactly from the
pool at each scrape.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any, Final

from aiohttp import web
from sqlalchemy import event

from server import metrics
from server.api.problems import Handler
from server.keys import ENGINE

routes = web.RouteTableDef()

access_log = logging.getLogger("server.access")

HEADER: Final = "X-Request-Id"
SANE_ID: Final = re.compile(r"[A-Za-z0-9._:-]{1,64}")
LOGGED_METHOD: Final = 16
"""Characters of a method kept in the access log (aiohttp takes any token as a method)."""

REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)
"""The id of the request being handled, for the log lines written meanwhile."""
ID_KEY: Final = web.RequestKey("request_id", str)


def request_id(request: web.BaseRequest) -> str:
    """The client's `X-Request-Id` if it is sane, else a new random one."""
    sent = request.headers.get(HEADER, "")
    return sent if SANE_ID.fullmatch(sent) else uuid.uuid4().hex


def route_of(request: web.Request) -> str:
    """The template of the route that took the request, or `metrics.UNMATCHED`."""
    resource = request.match_info.route.resource
    if resource is None:
        return metrics.UNMATCHED
    return resource.canonical


@web.middleware
async def observe(request: web.Request, handler: Handler) -> web.StreamResponse:
    rid = request_id(request)
    request[ID_KEY] = rid
    token = REQUEST_ID.set(rid)
    started = time.perf_counter()
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    except web.HTTPException as exc:  # one that the problem middleware let through (< 400)
        status = exc.status
        raise
    except asyncio.CancelledError:
        status = 499  # the client went away before the answer
        raise
    finally:
        seconds = time.perf_counter() - started
        route = route_of(request)
        metrics.request_answered(route, request.method, status, seconds)
        duration_ms = round(seconds * 1000, 3)
        method = request.method[:LOGGED_METHOD]
        access_log.info(
            "%s %s %d %.1fms",
            method,
            route,
            status,
            duration_ms,
            extra={
                "method": method,
                "route": route,
                "status": status,
                "duration_ms": duration_ms,
                "request_id": rid,
            },
        )
        REQUEST_ID.reset(token)


async def send_request_id(request: web.Request, response: web.StreamResponse) -> None:
    """Every response (a WebSocket's handshake and a file's too) names its request id."""
    rid = request.get(ID_KEY)
    if rid is not None:
        response.headers[HEADER] = rid


@routes.get("/metrics")
async def scrape(request: web.Request) -> web.Response:
    engine = request.app.get(ENGINE)
    if engine is not None:
        checked_out = getattr(engine.pool, "checkedout", None)
        if callable(checked_out):
            metrics.pool_in_use(int(checked_out()))
    body, content_type = await asyncio.to_thread(metrics.exposition, request.headers.get("Accept"))
    return web.Response(body=body, headers={"Content-Type": content_type})


async def follow_pool(app: web.Application) -> AsyncIterator[None]:
    """Moves the pool gauge as connections are checked out of the engine's pool and back."""
    target = app[ENGINE].sync_engine

    def checked_out(*_: Any) -> None:
        metrics.pool_checked_out(1)

    def checked_in(*_: Any) -> None:
        metrics.pool_checked_out(-1)

    listeners = [("checkout", checked_out), ("checkin", checked_in), ("detach", checked_in)]
    for name, listener in listeners:
        event.listen(target, name, listener)
    yield
    for name, listener in listeners:
        event.remove(target, name, listener)


def setup(app: web.Application) -> None:
    """`/metrics`, the request id header and the pool gauge; the middleware `observe` is put
    first by `create_app`. Call after the database's cleanup context has been added."""
    app.router.add_routes(routes)
    app.on_response_prepare.append(send_request_id)
    app.cleanup_ctx.append(follow_pool)
