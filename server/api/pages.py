"""The web client (`server/web/`): `/` is its page, `/web/{name}` its other files, where a name
may go down into the client's folders (`/web/lib/api.js`, `/web/views/play/view.js`).

Only regular files that lie in that folder or its subfolders are served: every part of the name is
a plain name (no `..`, no dot files), and no part is a link, so a path can never reach outside it.
The page is plain HTML, CSS and JavaScript modules: no build step. It uses only the public API and
WebSocket, like any other client.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from pathlib import Path

from aiohttp import web

from server.services.errors import NotFound

routes = web.RouteTableDef()

FOLDER = Path(__file__).resolve().parent.parent / "web"
TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
}
# The page may load and connect to its own origin only: no other host is ever asked for anything.
POLICY = (
    "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; "
    "script-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


# A file name the client can have: up to two folders and a file, each a plain name, nothing the
# file system could read otherwise.
PART = r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}"
NAME = re.compile(rf"(?:{PART}/){{0,2}}{PART}\.(?:html|js|css|svg)")


async def send_file(request: web.Request, name: str) -> web.Response:
    if not NAME.fullmatch(name):
        raise not_found(name)
    path = FOLDER / name
    try:
        body = await asyncio.to_thread(read_regular_file, path)
    except OSError as error:
        raise not_found(name) from error
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    headers = {
        "ETag": etag,
        "Cache-Control": "no-cache",
        "Content-Security-Policy": POLICY,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    if matches(request.headers.get("If-None-Match"), etag):
        return web.Response(status=304, headers=headers)
    return web.Response(
        body=body, content_type=TYPES[path.suffix], charset="utf-8", headers=headers
    )


def read_regular_file(path: Path) -> bytes:
    """The bytes of a regular file of the folder (not a link, not a folder), in folders of its
    own (not links either)."""
    folders = path.relative_to(FOLDER).parents[:-1]  # all but the client's folder itself
    if any((FOLDER / folder).is_symlink() for folder in folders):
        raise FileNotFoundError(path)
    if path.is_symlink() or not path.is_file():
        raise FileNotFoundError(path)
    return path.read_bytes()


def matches(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110 13.1.2: `*`, or a list of entity tags compared weakly."""
    if if_none_match is None:
        return False
    tags = [tag.strip() for tag in if_none_match.split(",")]
    return any(tag == "*" or tag.removeprefix("W/") == etag for tag in tags)


def not_found(name: str) -> NotFound:
    return NotFound(f"There is no file {name!r} in the web client.")


@routes.get("/")
async def page(request: web.Request) -> web.Response:
    return await send_file(request, "index.html")


# `.+`: the name may hold slashes (folders); NAME decides what it may be.
@routes.get("/web/{name:.+}")
async def asset(request: web.Request) -> web.Response:
    return await send_file(request, request.match_info["name"])
