"""The API documents themselves: `GET /openapi.yaml` and `GET /asyncapi.yaml`.

Served as the web client's files are (`server.api.pages.kept`): from memory while the file is
unchanged (a `stat`, no read), with an `ETag` and `Cache-Control: no-cache`, `304` to an
`If-None-Match` that names it. Metered like every path (`server.api.limits`).
"""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from server.api.pages import kept, send_kept
from server.files import asyncapi_path, openapi_path

routes = web.RouteTableDef()

OPENAPI = openapi_path()
ASYNCAPI = asyncapi_path()
YAML = "application/yaml"


async def send_document(request: web.Request, path: Path) -> web.Response:
    return send_kept(request, await kept(path, path.stat()), YAML, {})


@routes.get("/openapi.yaml")
async def openapi(request: web.Request) -> web.Response:
    return await send_document(request, OPENAPI)


@routes.get("/asyncapi.yaml")
async def asyncapi(request: web.Request) -> web.Response:
    return await send_document(request, ASYNCAPI)
