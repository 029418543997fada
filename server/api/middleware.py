"""CORS for `/api/*` and the per-client rate limit (SPEC 2.7)."""

from __future__ import annotations

import math
import time

from aiohttp import web
from aiohttp.typedefs import Middleware

from server.api.problems import Handler, problem_response
from server.keys import SERVICE

ALLOWED_HEADERS = "Authorization, Content-Type, Idempotency-Key, Accept-Language"
EXPOSED_HEADERS = "Location, Retry-After, Link, Content-Language, Idempotent-Replayed"
ALLOWED_METHODS = "GET, POST, PATCH, OPTIONS"


@web.middleware
async def cors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Lets a page from any origin use the API (there are no cookies: tokens are explicit)."""
    if not request.path.startswith("/api/"):
        return await handler(request)
    origin = request.headers.get("Origin")
    if request.method == "OPTIONS" and origin:
        return web.Response(
            status=204,
            headers={
                "Access-Control-Allow-Origin": "*",
                "Access-Control-Allow-Methods": ALLOWED_METHODS,
                "Access-Control-Allow-Headers": ALLOWED_HEADERS,
                "Access-Control-Max-Age": "86400",
            },
        )
    response = await handler(request)
    if origin:
        response.headers["Access-Control-Allow-Origin"] = "*"
        response.headers["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
    return response


class TokenBucket:
    """`rate` requests a second, bursts of up to `rate` (at least 1): the rate limit of an HTTP
    client and of a WebSocket connection (SPEC 2.7; `rate` 0 lets everything through)."""

    __slots__ = ("capacity", "last", "rate", "tokens")

    def __init__(self, rate: float, now: float) -> None:
        self.rate = rate
        self.capacity = max(1.0, rate)
        self.tokens = self.capacity
        self.last = now

    def take(self, now: float) -> float:
        """0 when the request may go ahead, else the seconds to wait."""
        if self.rate <= 0:
            return 0.0
        self.tokens = min(self.capacity, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate

    def full(self, now: float) -> bool:
        return self.tokens + (now - self.last) * self.rate >= self.capacity


class RateLimiter:
    """A `TokenBucket` per client: the player of a bearer token this process has verified,
    else its address."""

    MAX_CLIENTS = 50_000

    def __init__(self, rate: float, trust_forwarded: bool = False) -> None:
        self.rate = rate
        self.trust_forwarded = trust_forwarded
        self.buckets: dict[str, TokenBucket] = {}

    def take(self, client: str, now: float) -> float:
        """0 when the request may go ahead, else the seconds to wait."""
        bucket = self.buckets.get(client)
        if bucket is None:
            bucket = self.buckets[client] = TokenBucket(self.rate, now)
        wait = bucket.take(now)
        if len(self.buckets) > self.MAX_CLIENTS:
            self._forget_idle(now)
        return wait

    def _forget_idle(self, now: float) -> None:
        for client, bucket in list(self.buckets.items()):
            if bucket.full(now):
                del self.buckets[client]

    def client(self, request: web.Request) -> str:
        """The player of a bearer token this process has already verified, else the address
        (so made-up tokens cannot buy fresh buckets)."""
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and token:
            player = request.app[SERVICE].known_player(token.strip())
            if player is not None:
                return "player:" + player
        return "address:" + self.address(request)

    def address(self, request: web.Request) -> str:
        if self.trust_forwarded:
            forwarded = request.headers.get("X-Forwarded-For", "")
            # The last address is the one the trusted proxy saw.
            last = forwarded.rsplit(",", 1)[-1].strip()
            if last:
                return last
        return request.remote or "?"

    def middleware(self) -> Middleware:
        @web.middleware
        async def rate_limit(request: web.Request, handler: Handler) -> web.StreamResponse:
            if not request.path.startswith("/api/") or request.method == "OPTIONS":
                return await handler(request)
            client = self.client(request)
            wait = self.take(client, time.monotonic())
            if wait > 0:
                return problem_response(
                    429,
                    "too-many-requests",
                    "Too many requests",
                    f"Slow down: at most {self.rate:g} requests a second.",
                    headers={"Retry-After": str(max(1, math.ceil(wait)))},
                )
            return await handler(request)

        return rate_limit
