"""Conditional reads (RFC 9110 8.8.3, 13.1.2, 15.4.5): an `ETag` on every `200` JSON answer to
a `GET` (or `HEAD`) under `/api/`, and `304 Not Modified` when the request's `If-None-Match`
names it: games, move logs, targets, replays, races, boards, profiles, statistics, the daily
deal, every JSON read.

**The tag is a digest of the answer's body, not the resource's version** (the spec is silent on
how it is made). A version alone would not change whenever the body does: a daily game's code
appears when its UTC day ends and a race's games' codes when the race ends, without a move; the
same game reads differently for its player (with `read`) and for anyone else; boards, standings
and statistics have no version at all. So the tag is `"<BLAKE2b-128 of the body, base64url>"`:
strong (equal tags mean equal bytes, RFC 9110 8.8.1), and it changes whenever the body does,
for every viewer. The read itself is not skipped: what a client may see is decided on each
request, as before, and only the sending of an unchanged body is saved (the cost is one hash of
the body, about 1 µs per KiB). `If-None-Match` is compared weakly, as RFC 9110 13.1.2 says
(`W/"x"` matches `"x"`), and `*` matches any answer.

Tagged answers carry `Cache-Control: no-cache`: a browser (or any client cache) may keep them,
but asks again each time with `If-None-Match`, so that it never shows a game older than the
server's. A `304` carries the headers the `200` would (`ETag`, `Cache-Control`, `Link`, ...,
and those added as it is sent: `Vary`, the CORS, rate-limit and request-id headers) without the
body's own (`Content-Type`, `Content-Length`). Answers that say `no-store` (a data export), that
already carry a tag, that are streamed (an export, server-sent events, a WebSocket) or that are
not `200` are left as they are.
"""

from __future__ import annotations

import base64
import hashlib

from aiohttp import web
from multidict import CIMultiDict

from server.api.problems import Handler

READS = frozenset({"GET", "HEAD"})
JSON = "application/json"
CACHE_CONTROL = "no-cache"
BODY_HEADERS = frozenset({"Content-Type", "Content-Length", "Content-Encoding"})


def entity_tag(body: bytes) -> str:
    """The strong entity tag of a body: its BLAKE2b-128, base64url without padding, quoted."""
    digest = hashlib.blake2b(body, digest_size=16).digest()
    return '"' + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii") + '"'


def matches(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110 13.1.2: `*`, or a list of entity tags of which one equals `etag`, compared
    weakly (a `W/` prefix is ignored)."""
    if if_none_match is None:
        return False
    tags = (tag.strip() for tag in if_none_match.split(","))
    return any(tag == "*" or tag.removeprefix("W/") == etag for tag in tags)


def taggable(request: web.Request, response: web.StreamResponse) -> bytes | None:
    """The body to tag, when `response` is a read's whole JSON answer that is not tagged yet."""
    if (
        request.method not in READS
        or response.status != 200
        or type(response) is not web.Response
        or response.content_type != JSON
        or "ETag" in response.headers
        or "no-store" in response.headers.get("Cache-Control", "")
    ):
        return None
    body = response.body
    return body if isinstance(body, bytes) else None


@web.middleware
async def conditional(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Tags the answers of `/api/` reads and answers `304` to an `If-None-Match` that names the
    tag (put innermost, next to the handlers: it sees their answers as they made them)."""
    response = await handler(request)
    if not request.path.startswith("/api/"):
        return response
    body = taggable(request, response)
    if body is None:
        return response
    etag = entity_tag(body)
    response.headers["ETag"] = etag
    response.headers.setdefault("Cache-Control", CACHE_CONTROL)
    if not matches(request.headers.get("If-None-Match"), etag):
        return response
    kept = CIMultiDict(response.headers)
    for name in BODY_HEADERS:
        kept.popall(name, None)
    return web.Response(status=304, headers=kept)
