"""`/healthz` (the process serves) and `/readyz` (the database answers)."""

from __future__ import annotations

import asyncio

from aiohttp import web
from sqlalchemy import text

from server.api.problems import problem_response
from server.keys import ENGINE

routes = web.RouteTableDef()


@routes.get("/healthz")
async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


@routes.get("/readyz")
async def readyz(request: web.Request) -> web.Response:
    try:
        async with asyncio.timeout(2):
            async with request.app[ENGINE].connect() as connection:
                await connection.execute(text("SELECT 1"))
    except Exception:
        return problem_response(
            503,
            "not-ready",
            "Not ready",
            "The database does not answer.",
            headers={"Retry-After": "1"},
        )
    return web.json_response({"status": "ready"})
