"""CORS for browser frontends on other origins: which headers a page may send and read, on
every `/api/` route.

CORS is `aiohttp-cors`, set on every `/api/` resource: any origin, no credentials (tokens are
explicit, there are no cookies), the headers below allowed and exposed (`If-None-Match` is
allowed too, so that a page may make its own conditional reads; a browser's cache sends it
without a preflight). The library echoes the request's `Origin` instead of answering `*`, and
answers a preflight with `200` and the one method asked; since the answer then depends on the
`Origin`, every `/api/` answer carries `Vary: Origin` so that a shared cache never hands one
origin's answer to another.
"""

from __future__ import annotations

import aiohttp_cors
from aiohttp import web

ALLOWED_HEADERS = (
    "Authorization",
    "Content-Type",
    "Idempotency-Key",
    "Accept-Language",
    "X-Request-Id",
    "If-None-Match",
    "Last-Event-ID",
)
"""What a page may send beside the CORS-safelisted headers: its token, a JSON body's type, an
idempotency key, a language, its own request id, the entity tag of a conditional read, and the
last event id a stream of server-sent events resumes from (read with `fetch`)."""
EXPOSED_HEADERS = (
    "Location",
    "Retry-After",
    "Link",
    "Content-Language",
    "Content-Disposition",
    "Idempotent-Replayed",
    "X-Request-Id",
    "RateLimit",
    "RateLimit-Policy",
    "WWW-Authenticate",
    "ETag",
    "X-Read-From",
)
"""What a page may read beside the CORS-safelisted response headers (`Content-Type` and the
like): every header the API sends that a client acts on."""
ALLOWED_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
CORS_MAX_AGE_S = 86400


def setup_cors(app: web.Application) -> None:
    """CORS on every `/api/` resource of `app` (call it once every route is added)."""
    # (A mapping would do, but aiohttp-cors 0.8 refuses `allow_methods` in one; its
    # ResourceOptions has no annotations.)
    options = aiohttp_cors.ResourceOptions(  # type: ignore[no-untyped-call]
        allow_credentials=False,
        expose_headers=EXPOSED_HEADERS,
        allow_headers=ALLOWED_HEADERS,
        allow_methods=ALLOWED_METHODS,
        max_age=CORS_MAX_AGE_S,
    )
    cors = aiohttp_cors.setup(app, defaults={"*": options})
    for resource in list(app.router.resources()):
        if resource.canonical.startswith("/api/"):
            cors.add(resource)
    app.on_response_prepare.append(_vary_on_origin)


async def _vary_on_origin(request: web.Request, response: web.StreamResponse) -> None:
    if request.path.startswith("/api/") and "Origin" not in response.headers.getall("Vary", []):
        response.headers.add("Vary", "Origin")
