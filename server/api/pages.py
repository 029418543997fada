"""The web client (`server/web/`): `/` is its page, `/web/{name}` its other files, where a name
may go down into the client's folders (`/web/lib/api.js`, `/web/views/play/view.js`).

Only regular files that lie in that folder or its subfolders are served: every part of the name is
a plain name (no `..`, no dot files), and no part is a link, so a path can never reach outside it.
The page is plain HTML, CSS and JavaScript modules: no build step. It uses only the public API and
WebSocket, like any other client.

**Cheap to serve** (issue 21: every path is metered, `server.api.limits`, and these are the
cheapest). A file's bytes and its `ETag` (a digest of them) are kept in memory (`Kept`, at most
`KEPT_MAX` files: the client has about thirty), and a request re-reads a file only when its
`lstat` (inode, size, modification time) has changed: one `lstat` of the file and of each folder
on its way (they are checked not to be links), done on the event loop (microseconds on the local
disk the package lies on; a thread's hop cost more), and no read, no hash, no database. Every
answer carries `Cache-Control: no-cache` and its `ETag`: a browser keeps the file and asks again
with `If-None-Match` on the next load, answered `304` without a body. Not a `max-age`: the
modules import one another by names that do not change with their content, so a browser that
kept some for a while could run a new module with an old one after an upgrade. The API documents
(`server.api.docs`) are served the same way (`send_kept`).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import stat
from dataclasses import dataclass
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

HEADERS = {
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


# A file name the client can have: up to two folders and a file, each a plain name, nothing the
# file system could read otherwise.
PART = r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}"
NAME = re.compile(rf"(?:{PART}/){{0,2}}{PART}\.(?:html|js|css|svg)")


KEPT_MAX = 256
"""Files kept in memory at most (the client has about thirty; the API documents two more)."""


@dataclass(frozen=True, slots=True)
class Kept:
    """A file's bytes as last read, its entity tag, and the `lstat` figures they were read at."""

    signature: tuple[int, int, int]
    body: bytes
    etag: str


KEPT: dict[Path, Kept] = {}


async def kept(path: Path, found: os.stat_result) -> Kept:
    """The bytes and tag of `path`, whose `stat` is `found`: from memory while its inode, size
    and modification time are those it was read at, else read again (off the event loop)."""
    signature = (found.st_ino, found.st_size, found.st_mtime_ns)
    known = KEPT.get(path)
    if known is not None and known.signature == signature:
        return known
    body = await asyncio.to_thread(path.read_bytes)
    fresh = Kept(signature, body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')
    if len(KEPT) >= KEPT_MAX and path not in KEPT:
        KEPT.pop(next(iter(KEPT)))  # the oldest kept
    KEPT[path] = fresh
    return fresh


def send_kept(
    request: web.Request, file: Kept, content_type: str, headers: dict[str, str]
) -> web.Response:
    """A kept file's answer: `200` with its bytes, or `304` without when `If-None-Match` names
    its tag; `ETag` and `Cache-Control: no-cache` on both."""
    headers = {**headers, "ETag": file.etag, "Cache-Control": "no-cache"}
    if matches(request.headers.get("If-None-Match"), file.etag):
        return web.Response(status=304, headers=headers)
    return web.Response(body=file.body, content_type=content_type, charset="utf-8", headers=headers)


async def send_file(request: web.Request, name: str) -> web.Response:
    if not NAME.fullmatch(name):
        raise not_found(name)
    path = FOLDER / name
    try:
        file = await kept(path, regular_file(path))
    except OSError as error:
        raise not_found(name) from error
    return send_kept(request, file, TYPES[path.suffix], HEADERS)


def regular_file(path: Path) -> os.stat_result:
    """The `lstat` of a regular file of the folder (not a link, not a folder), in folders of
    its own (not links either); `FileNotFoundError` otherwise."""
    folders = path.relative_to(FOLDER).parents[:-1]  # all but the client's folder itself
    if any((FOLDER / folder).is_symlink() for folder in folders):
        raise FileNotFoundError(path)
    found = path.lstat()
    if not stat.S_ISREG(found.st_mode):
        raise FileNotFoundError(path)
    return found


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
