"""One rate budget per client (SPEC 2.7) and caps on open WebSockets.

**Rate budgets.** Every `/api/` request (preflights and WebSocket upgrades included) is charged
before anything else looks at it, to two budgets at once, and refused with `429` and
`Retry-After` when either is spent (every other path too, to the first alone: see below):

- the *address's*, first: `ADDRESS_FACTOR` (4) times `RATE_LIMIT`, for everything from one
  address (players and anonymous requests together): a household or an office behind one NAT
  gets four players' worth, and no number of sign-ups or tokens buys one address more than that.
- then the *client's*: `RATE_LIMIT` requests a second (one that is not whole is counted over
  the shortest window of whole seconds that holds whole requests: 2.5 is 5 every 2 seconds).
  The client is the player of the bearer token when the token is a real player's, else the
  address (its anonymous requests). Whether a token is real is asked only once the address's
  budget has allowed the request: tokens this process has verified are known without a read
  (`PlayerService.authenticate`), others are looked up once (and then known). The principal so
  resolved is kept on the request for its handler (`server.api.access.authenticate`): a token
  is parsed once a request. A made-up token is no player: the request is charged as anonymous,
  and the handler answers it with `401`.

**Every other path is metered too** (issue 21): `/healthz`, `/readyz`, `/metrics`,
`/openapi.yaml`, `/asyncapi.yaml`, `/rules`, `/problems` and `/problems/{slug}`, `/` and the web
client's files (`/web/...`), and every path no route takes (a `404`, a `405`) are charged to
the address's budget, the same one as its `/api/` requests, and refused alike (`429`,
`Retry-After`, after `REFUSAL_DELAY_S`): a flood of health checks or 404s from one address
spends that address's budget and nobody else's. Only the address's: no token is read for them
(a page's files carry none), and their answers name the budget in `RateLimit-Policy` without a
`RateLimit` (one storage hit, no second read: they are the cheapest answers the server gives,
`server.api.pages` serves the files from memory with an `ETag`). They are not held to the
in-flight cap: a browser fetching the client's thirty-odd modules at once through a proxy's
HTTP/2 would meet it, and none of them waits on the database but `/readyz` (one `SELECT 1`,
within 2 s). The OAuth routes (`SELF_METERED`) charge the budgets themselves as `/api/` requests.
A health checker or a Prometheus scraper asks a few times a minute, far below any budget.

Before any budget, an address may have `IN_FLIGHT_PER_ADDRESS` (16) requests being answered at
once in a process (a WebSocket session is charged, not counted): one more is refused, so that a
client holding many requests open cannot take the server's time from everyone else. Every refusal
is answered after `REFUSAL_DELAY_S` (half a second), out of any count: however cheap a refusal,
a client sending as fast as its connections allow would otherwise take the event loop's time.

Sign-ups (`POST /api/v1/players`) are charged a third budget besides: `SIGNUP_LIMIT` (20) a
minute per address; and sign-ins (`POST /api/v1/sessions`, and the OAuth consent page's form)
`SIGNIN_LIMIT` (30) a minute per address, right or wrong, since each costs an Argon2 hash
(`server.services.passwords`): a flood of guesses from one address is refused before it hashes
(the limit of failures per name, whatever the address, is the sessions service's own,
`server.services.sessions`). Every message of every WebSocket connection is charged like a
request, to its player (once authenticated) and its address (see `server/api/live/`).

The budgets are counted by the `limits` package with its moving window: at most the budget in
any window (a second for requests, a minute for sign-ups); `Retry-After` says when the
oldest request of the window leaves it. `RATE_LIMIT_STORAGE` says where: `memory://` (the
default) counts in each process; `redis://host:port/db` counts in Redis, shared by every process
and replica, so `--workers N` or N replicas do not multiply a budget. If Redis cannot be reached,
requests are let through (and a warning logged at most once a minute): the rate limit protects
the server, it is not worth refusing every player for. `RATE_LIMIT=0` turns every budget and
cap off.

**Rate-limit headers** (SPEC 2.7; draft-ietf-httpapi-ratelimit-headers, structured fields).
Every answer to a charged request (every `/api/` answer, a WebSocket's handshake, the OAuth
forms') names the budgets that charged it in `RateLimit-Policy`, in the order they were
charged: `"address";q=200;w=1, "player";q=50;w=1` (`anonymous` instead of `player` for a
request without a real player's token; `signup` and `signin` besides for sign-ups and
sign-ins; a refused request names the budgets up to the one that refused it). `RateLimit` gives
the state of the budget nearest to its end, the one with the fewest requests left (of two with
as few, the one that frees up later): `"player";r=37;t=1`, `r` the requests it still allows,
`t` the seconds until the oldest request of its window leaves it (so that `r` grows again):
on a `429`, `r=0` and `t` is the `Retry-After`. The figures are read from the `limits` storage
(`get_window_stats`) right after the request is charged, one read per budget (measured on a busy
2-core machine: 8 us a budget in memory, as much as its hit; in Redis one round trip, at best
170 us a budget against 370 to 520 for its hit; asking both at once was no faster): a client that
paces itself by `r` is refused exactly when `r` was `0` (in one process, or with Redis in every
one). A refusal by the in-flight cap charges no budget: it names that cap as
`"in-flight";q=16;qu="concurrent-requests"` with `r=0;t=1`. When the storage cannot be reached
the request goes through with `RateLimit-Policy` alone (what remains is not known), and with
`RATE_LIMIT=0` nothing is counted and no header is sent.

**Open WebSockets** are capped per process: `SOCKETS_PER_PLAYER` (8) per player and
`SOCKETS_PER_ADDRESS` (32) per address. A socket over a cap is closed at once with `1008` and a
reason. (Counting sockets across processes would need a lease that expires when a process dies
without closing them; per process is exact and needs nothing else. Behind N replicas a client can
hold N times as many, each still charged to one shared message budget.)
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Middleware
from limits import RateLimitItem, RateLimitItemPerMinute, RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.errors import StorageError
from limits.util import WindowStats
from redis.asyncio import ConnectionPool

from server import metrics
from server.api.access import authenticate, client_address, confirm, unread_session
from server.api.problems import Handler, error_response, problem_response
from server.settings import DEFAULT_SIGNUP_LIMIT, REDIS_SCHEMES, SettingsError

log = logging.getLogger(__name__)

ADDRESS_FACTOR = 4
"""An address may send this many times a client's budget (players behind one NAT)."""
"""Sign-ups a minute per address: enough for a classroom, far below any use of the API."""
SIGNUP_PATH = "/api/v1/players"
SIGNIN_PATHS = frozenset({"/api/v1/sessions", "/oauth/authorize"})
"""Where a password is checked: a sign-in, and the OAuth consent page's form."""
SIGNIN_LIMIT = 30
"""Sign-ins a minute from one address (each costs an Argon2 hash)."""
SELF_METERED = frozenset(
    {"/oauth/authorize", "/oauth/token", "/oauth/revoke", "/.well-known/oauth-authorization-server"}
)
"""Routes outside `/api/` that charge the budgets themselves, as `/api/` requests are
(`server.api.oauth`: its forms answer a refusal as a page or as OAuth JSON)."""
LIVE_PATH = "/api/v1/live"
STREAM_PATH = re.compile(r"/api/v1/(?:me|games/[^/]+)/events")
"""The two streams of server-sent events (`server.api.events`)."""
REFUSAL_DELAY_S = 0.5
"""How long an HTTP request over a budget or cap waits for its 429 (out of any in-flight
count): however cheap a refusal, a client sending as fast as its connections allow would
otherwise take the event loop's time from everyone."""
IN_FLIGHT_PER_ADDRESS = 16
"""Requests of one address being answered at once in a process (WebSocket sessions aside);
one more is refused, before any budget is asked: a client that keeps many requests
open cannot take the server's time from the others however cheap each refusal is."""
SOCKETS_PER_PLAYER = 8
SOCKETS_PER_ADDRESS = 32
KEY_PREFIX = "solitaire-rate"
"""The prefix of the budgets' keys in Redis."""
STORAGE_WARNING_S = 60.0
STORAGE_RETRY_S = 5.0
"""After the storage failed, requests are let through without asking it for this long."""
REDIS_TIMEOUT_S = 0.5


POLICY_HEADER = "RateLimit-Policy"
STATE_HEADER = "RateLimit"


@dataclass(frozen=True, slots=True)
class Window:
    """One budget that charged a request, as the rate-limit headers name it: `quota` requests
    (`q`) every `seconds` (`w`; None for a cap of requests at once, `qu="concurrent-requests"`),
    `remaining` (`r`) and `reset` (`t`, seconds until the oldest request of the window leaves
    it); None when the storage could not say."""

    name: str
    quota: int
    seconds: int | None
    remaining: int | None = None
    reset: int | None = None

    def policy(self) -> str:
        if self.seconds is None:
            return f'"{self.name}";q={self.quota};qu="concurrent-requests"'
        return f'"{self.name}";q={self.quota};w={self.seconds}'


def rate_headers(windows: list[Window]) -> dict[str, str]:
    """`RateLimit-Policy` for every budget of `windows`, and `RateLimit` for the one nearest to
    its end (fewest left; then the one that frees up later), when any is known."""
    headers = {POLICY_HEADER: ", ".join(window.policy() for window in windows)}
    known = [window for window in windows if window.remaining is not None]
    if known:
        nearest = min(known, key=lambda window: (window.remaining, -(window.reset or 0)))
        headers[STATE_HEADER] = f'"{nearest.name}";r={nearest.remaining};t={nearest.reset}'
    return headers


RATE_WINDOWS = web.RequestKey("rate_windows", list[Window])
"""The budgets that charged a request, kept for its answer's headers (`send_rate_headers`)."""
IN_FLIGHT_WINDOW = Window("in-flight", IN_FLIGHT_PER_ADDRESS, None, 0, 1)


async def send_rate_headers(request: web.Request, response: web.StreamResponse) -> None:
    """Every answer to a charged request (a WebSocket's handshake, a stream, a problem and a
    `304` too) carries the rate-limit headers of its budgets. An answer that brings its own (the
    costly-work cap's `429`, `server.services.workers`) keeps its `RateLimit`: its policy is
    listed after the budgets'."""
    windows = request.get(RATE_WINDOWS)
    if not windows:
        return
    headers = rate_headers(windows)
    own = response.headers.get(POLICY_HEADER)
    if own is not None:
        headers[POLICY_HEADER] += ", " + own
        headers.pop(STATE_HEADER, None)
    response.headers.update(headers)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request or message over a budget: when to try again, and why."""

    retry_after: int
    detail: str

    async def slow_response(self) -> web.Response:
        """The refusal, after REFUSAL_DELAY_S: a client that keeps sending regardless is slowed
        to what its open connections allow, at the cost of a sleeping coroutine each."""
        await asyncio.sleep(REFUSAL_DELAY_S)
        return self.response()

    def response(self) -> web.Response:
        return problem_response(
            429,
            "too-many-requests",
            "Too many requests",
            self.detail,
            headers={"Retry-After": str(self.retry_after)},
        )


def per_second(rate: float) -> RateLimitItem:
    """`rate` requests a second as a `limits` item. From 1 up, whole requests a second (49.99 →
    50): a longer window would let its whole budget through in one second. Below 1, whole
    requests over the shortest window of whole seconds (at most a minute) that holds a whole
    number of them: 0.625 → 5 every 8 seconds, 0.2 → 1 every 5 seconds."""
    if rate >= 1:
        return RateLimitItemPerSecond(round(rate))
    fraction = Fraction(rate).limit_denominator(60)
    if fraction.numerator < 1:
        fraction = Fraction(1, 60)
    return RateLimitItemPerSecond(fraction.numerator, fraction.denominator)


def storage_of(url: str) -> tuple[Storage, ConnectionPool | None]:
    """The `limits` async storage of a `RATE_LIMIT_STORAGE` URL (and the Redis connection pool to
    close at shutdown): `memory://`, or `redis://` / `rediss://` / `unix://` (redis-py's own URLs)
    for `limits`' `async+redis` storage."""
    if url.startswith("memory://"):
        return MemoryStorage(), None
    if url.startswith(REDIS_SCHEMES):
        # Short timeouts: a Redis that hangs must not hold every request (it is let through).
        pool = ConnectionPool.from_url(
            url, socket_timeout=REDIS_TIMEOUT_S, socket_connect_timeout=REDIS_TIMEOUT_S
        )
        # `limits` builds its redis-py client on the pool given; the pool is ours to close.
        options: dict[str, Any] = {"connection_pool": pool}
        storage = RedisStorage(
            "async+redis://",
            wrap_exceptions=True,
            implementation="redispy",
            key_prefix=KEY_PREFIX,
            **options,
        )
        return storage, pool
    raise SettingsError(f"RATE_LIMIT_STORAGE {url!r}: expected memory:// or redis://host:port[/db]")


class RateBudget:
    """The rate budgets of clients, addresses and sign-ups, and the socket caps, of one app."""

    def __init__(
        self,
        rate: float,
        storage_url: str,
        trust_forwarded: bool = False,
        signup_limit: int = DEFAULT_SIGNUP_LIMIT,
    ) -> None:
        self.rate = rate
        self.trust_forwarded = trust_forwarded
        self.on = rate > 0
        self.client_item = per_second(rate) if self.on else RateLimitItemPerSecond(1)
        self.address_item = RateLimitItemPerSecond(
            self.client_item.amount * ADDRESS_FACTOR, self.client_item.multiples
        )
        self.signup_item = RateLimitItemPerMinute(signup_limit)
        self.signin_item = RateLimitItemPerMinute(SIGNIN_LIMIT)
        self.storage: Storage | None = None
        self.pool: ConnectionPool | None = None
        self.limiter: MovingWindowRateLimiter | None = None
        if self.on:
            self.storage, self.pool = storage_of(storage_url)
            self.limiter = MovingWindowRateLimiter(self.storage)
        self.sockets = SocketCaps(self.on)
        self.in_flight: dict[str, int] = {}
        self._warned = -math.inf
        self._down_until = -math.inf

    async def close(self) -> None:
        if self.pool is not None:
            await self.pool.aclose()

    # ------------------------------------------------------------------ clients

    def address(self, request: web.Request) -> str:
        return client_address(request, self.trust_forwarded)

    @staticmethod
    async def player(request: web.Request) -> str | None:
        """The id of the request's player, if its token is a real player's (resolved once for
        the request: the handler gets the same principal)."""
        if not request.headers.get("Authorization"):
            return None
        try:
            return (await authenticate(request)).id
        except Exception:  # the handler answers for the token (401, or the database's failure)
            return None

    # ------------------------------------------------------------------ charging

    async def charge(self, address: str, player: str | None) -> Refusal | None:
        """Charges one request or message to `address` and to its client (`player`, else the
        address as an anonymous client); the refusal of the first budget that is spent."""
        return await self.charge_address(address) or await self.charge_client(address, player)

    async def charge_address(self, address: str) -> Refusal | None:
        if not self.on:
            return None
        refused = await self._hit(self.address_item, "address", address)
        if refused is not None:
            metrics.rate_refused("address")
            limit = self.address_item.amount / self.address_item.multiples
            return Refusal(
                refused, f"Slow down: at most {limit:g} requests a second from one address."
            )
        return None

    @staticmethod
    def client_of(address: str, player: str | None) -> tuple[str, str]:
        """The client's budget: (its kind, its name): the player, else the address's anonymous
        requests."""
        return ("player", player) if player is not None else ("anonymous", address)

    async def charge_client(self, address: str, player: str | None) -> Refusal | None:
        if not self.on:
            return None
        kind, name = self.client_of(address, player)
        refused = await self._hit(self.client_item, kind, name)
        if refused is not None:
            metrics.rate_refused(kind)
            return Refusal(refused, f"Slow down: at most {self.rate:g} requests a second.")
        return None

    async def sign_up(self, address: str) -> Refusal | None:
        if not self.on:
            return None
        refused = await self._hit(self.signup_item, "signup", address)
        if refused is not None:
            metrics.rate_refused("signup")
            return Refusal(
                refused,
                f"Slow down: at most {self.signup_item.amount} sign-ups a minute from one address.",
            )
        return None

    async def sign_in(self, address: str) -> Refusal | None:
        if not self.on:
            return None
        refused = await self._hit(self.signin_item, "signin", address)
        if refused is not None:
            metrics.rate_refused("signin")
            return Refusal(
                refused,
                f"Slow down: at most {self.signin_item.amount} sign-ins a minute from one address.",
            )
        return None

    async def charge_more(self, request: web.Request, cost: int, detail: str) -> Refusal | None:
        """Charges a request the middleware has charged `cost` requests more, to its address's
        and its client's budgets (a costly read by its size, `server.api.heavy`); each at most
        its whole quota, so that a budget can always take it once it is free. The refusal (with
        `detail`) of the first budget that cannot take it now, which is then not charged (nor
        the client's, when the address's refuses). The rate-limit headers of the answer show
        the budgets after the charge."""
        if not self.on or cost < 1 or RATE_WINDOWS not in request:
            return None
        assert self.limiter is not None
        address = self.address(request)
        kind, name = self.client_of(address, await self.player(request))
        budgets = [(self.address_item, "address", address), (self.client_item, kind, name)]
        windows: list[Window] = []
        refusal: Refusal | None = None
        for item, budget, who in budgets:
            if refusal is None and time.monotonic() >= self._down_until:
                try:
                    taken = await self.limiter.hit(item, budget, who, cost=min(cost, item.amount))
                    if not taken:
                        stats = await self.limiter.get_window_stats(item, budget, who)
                        wait = max(1, math.ceil(stats.reset_time - time.time()))
                        metrics.rate_refused(budget)
                        refusal = Refusal(wait, detail)
                        windows.append(Window(budget, item.amount, item.get_expiry(), 0, wait))
                        continue
                except StorageError:
                    self._down_until = time.monotonic() + STORAGE_RETRY_S
            windows.append(await self._window(item, budget, who))
        kept = [w for w in request[RATE_WINDOWS] if w.name not in {"address", kind}]
        request[RATE_WINDOWS] = windows + kept
        return refusal

    async def _hit(self, item: RateLimitItem, kind: str, name: str) -> int | None:
        """None when `item` allows one more for (`kind`, `name`), else the seconds to wait."""
        assert self.limiter is not None
        if time.monotonic() < self._down_until:
            return None  # the storage failed a moment ago: not asked again for a while
        try:
            if await self.limiter.hit(item, kind, name):
                return None
            stats = await self.limiter.get_window_stats(item, kind, name)
        except StorageError as exc:
            now = time.monotonic()
            self._down_until = now + STORAGE_RETRY_S
            if now - self._warned >= STORAGE_WARNING_S:
                self._warned = now
                log.warning("rate limit storage unavailable, not limiting: %s", exc)
            return None
        return max(1, math.ceil(stats.reset_time - time.time()))

    async def _window(self, item: RateLimitItem, kind: str, name: str) -> Window:
        """What remains of (`kind`, `name`)'s `item` and when its oldest request leaves it (both
        None when the storage cannot say)."""
        assert self.limiter is not None
        stats: WindowStats | None = None
        if time.monotonic() >= self._down_until:
            try:
                stats = await self.limiter.get_window_stats(item, kind, name)
            except StorageError:
                self._down_until = time.monotonic() + STORAGE_RETRY_S
        window = Window(kind, item.amount, item.get_expiry())
        if stats is None:
            return window
        reset = max(0, math.ceil(stats.reset_time - time.time()))
        return Window(kind, item.amount, item.get_expiry(), max(0, stats.remaining), reset)

    # ------------------------------------------------------------------ middleware

    async def charge_request(self, request: web.Request, address: str) -> Refusal | None:
        """Charges a request to its address's budget, its client's and (a sign-up or a
        sign-in) the address's sign-ups or sign-ins; the refusal when one is spent. The budgets
        charged are kept on the request (`RATE_WINDOWS`) for the rate-limit headers of its
        answer: the one that refused with `r=0` and its `Retry-After`, the others as the storage
        has them now."""
        charged: list[tuple[RateLimitItem, str, str]] = [(self.address_item, "address", address)]
        refusal = await self.charge_address(address)
        if refusal is None:
            player = await self.player(request)
            charged.append((self.client_item, *self.client_of(address, player)))
            refusal = await self.charge_client(address, player)
        if refusal is None and request.method == "POST":
            if request.path == SIGNUP_PATH:
                charged.append((self.signup_item, "signup", address))
                refusal = await self.sign_up(address)
            elif request.path in SIGNIN_PATHS:
                charged.append((self.signin_item, "signin", address))
                refusal = await self.sign_in(address)
        # The last budget charged is the one that refused, if any: nothing left, and its wait.
        allowed = charged if refusal is None else charged[:-1]
        windows = [await self._window(*budget) for budget in allowed]
        if refusal is not None:
            item, kind, _ = charged[-1]
            windows.append(Window(kind, item.amount, item.get_expiry(), 0, refusal.retry_after))
        request[RATE_WINDOWS] = windows
        return refusal

    async def charge_other(self, request: web.Request, address: str) -> Refusal | None:
        """Charges a request outside `/api/` (the health checks, `/metrics`, the documents, the
        rules, the web client's files, a 404) to its address's budget alone: one hit, no token
        read, no `RateLimit` read (its answer names the budget in `RateLimit-Policy`; a refusal
        says `r=0` and its wait)."""
        item = self.address_item
        refusal = await self.charge_address(address)
        window = Window("address", item.amount, item.get_expiry())
        if refusal is not None:
            window = Window("address", item.amount, item.get_expiry(), 0, refusal.retry_after)
        request[RATE_WINDOWS] = [window]
        return refusal

    def middleware(self) -> Middleware:
        @web.middleware
        async def rate_limit(request: web.Request, handler: Handler) -> web.StreamResponse:
            if not self.on:
                return await handler(request)
            address = self.address(request)
            if not request.path.startswith("/api/"):
                if request.path in SELF_METERED and request.match_info.http_exception is None:
                    return await handler(request)  # the OAuth routes charge themselves
                refusal = await self.charge_other(request, address)
                if refusal is None:
                    return await handler(request)
                return await refusal.slow_response()
            # A WebSocket session or a stream of server-sent events (`/api/v1/me/events`,
            # `/api/v1/games/{id}/events`): charged, not held in flight.
            if request.path == LIVE_PATH or STREAM_PATH.fullmatch(request.path):
                refusal = await self.charge_request(request, address)
                if refusal is None:
                    return await handler(request)
                return await refusal.slow_response()
            held = self.in_flight.get(address, 0)
            if held >= IN_FLIGHT_PER_ADDRESS:
                metrics.rate_refused("in_flight")
                request[RATE_WINDOWS] = [IN_FLIGHT_WINDOW]
                return await Refusal(
                    1, f"At most {IN_FLIGHT_PER_ADDRESS} requests of one address at a time."
                ).slow_response()
            self.in_flight[address] = held + 1
            try:
                refusal = await self.charge_request(request, address)
                if refusal is None:
                    return await handler(request)
            finally:
                left = self.in_flight[address] - 1
                if left:
                    self.in_flight[address] = left
                else:
                    del self.in_flight[address]
            if unread_session(request) is not None:
                # A known token's move (server.api.access.checked_at_commit) was charged to its
                # player unread: the token is read before a 429, and a revoked one is a 401.
                try:
                    await confirm(request)
                except Exception as exc:
                    return error_response(request, exc)
            return await refusal.slow_response()

        return rate_limit


class SocketCaps:
    """How many WebSockets each player and each address has open in this process."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self.players: dict[str, int] = {}
        self.addresses: dict[str, int] = {}

    def open(self, address: str, player: str | None) -> str | None:
        """Counts a new socket in; the reason to close it when it is over a cap."""
        over = self._add(self.addresses, address, SOCKETS_PER_ADDRESS)
        if over:
            self._remove(self.addresses, address)
            metrics.rate_refused("address_sockets")
            return f"too many connections from this address (at most {SOCKETS_PER_ADDRESS})"
        if player is not None and self._add(self.players, player, SOCKETS_PER_PLAYER):
            self._remove(self.players, player)
            self._remove(self.addresses, address)
            metrics.rate_refused("player_sockets")
            return f"too many connections of this player (at most {SOCKETS_PER_PLAYER})"
        return None

    def change_player(self, old: str | None, new: str) -> str | None:
        """A socket that authenticated as `new` (it was `old`'s, or nobody's); the reason to close
        it when `new` is over the cap (it is then counted as nobody's)."""
        if old == new:
            return None
        if old is not None:
            self._remove(self.players, old)
        if self._add(self.players, new, SOCKETS_PER_PLAYER):
            self._remove(self.players, new)
            metrics.rate_refused("player_sockets")
            return f"too many connections of this player (at most {SOCKETS_PER_PLAYER})"
        return None

    def close(self, address: str, player: str | None) -> None:
        self._remove(self.addresses, address)
        if player is not None:
            self._remove(self.players, player)

    def _add(self, counts: dict[str, int], key: str, cap: int) -> bool:
        """Counts one more for `key`; whether that is over `cap` (never when caps are off)."""
        counts[key] = counts.get(key, 0) + 1
        return self.on and counts[key] > cap

    @staticmethod
    def _remove(counts: dict[str, int], key: str) -> None:
        left = counts.get(key, 0) - 1
        if left > 0:
            counts[key] = left
        else:
            counts.pop(key, None)
