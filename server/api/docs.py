"""The API documents themselves: `GET /openapi.yaml` and `GET /asyncapi.yaml`."""

from __future__ import annotations

import asyncio

from aiohttp import web

from server.files import asyncapi_path, openapi_path

routes = web.RouteTableDef()

OPENAPI = openapi_path()
ASYNCAPI = asyncapi_path()


@routes.get("/openapi.yaml")
async def openapi(request: web.Request) -> web.Response:
    return web.Response(
        body=await asyncio.to_thread(OPENAPI.read_bytes), content_type="application/yaml"
    )


@routes.get("/asyncapi.yaml")
async def asyncapi(request: web.Request) -> web.Response:
    return web.Response(
        body=await asyncio.to_thread(ASYNCAPI.read_bytes), content_type="application/yaml"
    )
