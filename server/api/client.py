"""The web client (`server/web/`): `/` is its page, `/web/{name}` its other files.

Only the files that lie in that folder are served (no subfolders, no dot files), so a path can
never reach outside it. The page is plain HTML, CSS and JavaScript modules: no build step. It uses
only the public API and WebSocket, like any other client.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from aiohttp import web

from server.api.problems import Problem

routes = web.RouteTableDef()

FOLDER = Path(__file__).resolve().parent.parent / "web"
TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".json": "application/json",
}
# The page may load and connect to its own origin only: no other host is ever asked for anything.
POLICY = (
    "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; "
    "script-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


async def send_file(request: web.Request, name: str) -> web.Response:
    path = FOLDER / name
    content_type = TYPES.get(path.suffix)
    if content_type is None or name.startswith(".") or "/" in name or "\\" in name:
        raise not_found(name)
    try:
        body = await asyncio.to_thread(path.read_bytes)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as error:
        raise not_found(name) from error
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    headers = {
        "ETag": etag,
        "Cache-Control": "no-cache",
        "Content-Security-Policy": POLICY,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    if etag in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    return web.Response(body=body, content_type=content_type, charset="utf-8", headers=headers)


def not_found(name: str) -> Problem:
    return Problem(404, "not-found", "Not found", f"There is no file {name!r} in the web client.")


@routes.get("/")
async def page(request: web.Request) -> web.Response:
    return await send_file(request, "index.html")


@routes.get("/web/{name}")
async def asset(request: web.Request) -> web.Response:
    return await send_file(request, request.match_info["name"])
