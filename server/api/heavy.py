"""Costly reads (SPEC 2.7, issue 21): replays (`GET /api/v1/games/{id}/replay`), move-log pages
(`GET /api/v1/games/{id}/moves`), exports (`GET /api/v1/players/{id}/games/export`,
`GET /api/v1/me/export`) and replay verification (`POST /api/v1/replays/verify`) are charged
to the rate budgets by their size and rendered off the event loop.

**Charged by size.** A request that returns or checks N actions costs
`1 + N // ACTIONS_PER_CHARGE` requests (250: a 5,000-action replay costs 21, a full 1,000-entry
page 5, a game document or a short game's replay 1) against the address's and the client's
budgets (`server.api.limits`). The middleware has charged the first request, as for any other;
`charge` charges the rest once the size is known (the game's version as read, the page's
entries, the body's actions), before anything is rendered: when a budget cannot take it the
answer is `429 too-many-requests` with `Retry-After`, and `RateLimit`'s `r` shows what the
request spent. A cost is never more than a budget's whole quota (`RATE_LIMIT` 5 still lets a
client read a 5,000-action replay, once a second). An export is charged as it streams, a batch at
a time: its first batch before the answer begins (so a `429` is still possible), each later one
when its turn comes, waiting for the budget when it is spent (the stream is paced at the
client's budget, never refused half-way).

**Off the event loop.** A replay, a page and each export batch is made into JSON bytes in a
thread (`asyncio.to_thread`): the loop keeps answering while a 5,000-action replay is rendered
(the thread still shares the interpreter; it yields every `sys.getswitchinterval()`, 5 ms).
A finished game's replay never changes but for its player's erasure and its code's reveal, so
its bytes are kept in `REPLAYS`, an LRU of at most `REPLAY_CACHE_BYTES` (16 MB) per process,
under (game id, version, player name, code as shown): a second download of a long replay reads
one row and renders nothing. (Per process, not per app: game ids are UUIDs, so the key names
one game of one database; the cache holds nothing any viewer may not see, as visibility is
checked on the row before the cache is asked.)

**Memory bounded while exporting.** The export reads a player's games a hundred rows at a time
and their move logs in batches of at most `EXPORT_ACTIONS` (1,000) actions (a longer game
alone, its log read 1,000 entries a statement), renders a batch, writes it (the write waits
while the client is slow to read) and forgets it: whatever the player's history, an export
holds one batch.

Measured on a busy 2-core machine (SQLite), the longest single step of the event loop during
one request, before and after: a 5,000-action replay 6.6 → 1.6 ms (0.9 ms cached), a
1,000-entry page 3.9 → 1.5 ms, an export of four 5,000-action games 31 → 2.4-3 ms; a heartbeat
task's longest stall 8 → 5.6, 7.5-10.7 → 4.2 and 55-92 → 15-23 ms. (PostgreSQL before: a replay
held the loop 16.7 ms, an export 220 ms at the median; not measured after.)"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from aiohttp import web

from server.api.render import code_json
from server.keys import BUDGET
from server.services.values import GameView
from server.store.records import LoggedMove

Batch = list[tuple[GameView, list[LoggedMove]]]
"""Games of an export with their move logs (`BoardService.export`)."""

ACTIONS_PER_CHARGE = 250
"""A costly read is charged one request more for each this many actions it returns."""
REPLAY_CACHE_BYTES = 16 * 1024 * 1024
"""The most that the finished games' rendered replays kept in a process take."""
OVER_BUDGET = "Slow down: this answer of {n} actions costs {c} requests, more than is left."


def cost_of(actions: int) -> int:
    """What an answer of `actions` actions costs, in requests."""
    return 1 + max(0, actions) // ACTIONS_PER_CHARGE


async def charge(request: web.Request, actions: int) -> web.Response | None:
    """Charges `request` for an answer of `actions` actions beyond the one request the middleware
    charged; the `429` to send when a budget cannot take it (after the refusals' delay)."""
    budget = request.app[BUDGET]
    extra = cost_of(actions) - 1
    if extra < 1:
        return None
    refusal = await budget.charge_more(request, extra, OVER_BUDGET.format(n=actions, c=1 + extra))
    return None if refusal is None else await refusal.slow_response()


class Meter:
    """What an export has cost so far: charged as it streams, a batch at a time, so that the
    whole costs `1 + N // ACTIONS_PER_CHARGE` for its N actions."""

    def __init__(self, request: web.Request) -> None:
        self.request = request
        self.actions = 0
        self.charged = 0

    def owed(self, actions: int) -> int:
        self.actions += actions
        return cost_of(self.actions) - 1 - self.charged

    async def first(self, actions: int) -> web.Response | None:
        """Charges the first batch, before the answer begins; the `429` when it cannot be."""
        extra = self.owed(actions)
        if extra < 1:
            return None
        budget = self.request.app[BUDGET]
        detail = OVER_BUDGET.format(n=self.actions, c=1 + extra)
        refusal = await budget.charge_more(self.request, extra, detail)
        if refusal is not None:
            return await refusal.slow_response()
        self.charged += extra
        return None

    async def pay(self, actions: int) -> None:
        """Charges a later batch, waiting until the budgets can take it."""
        extra = self.owed(actions)
        if extra < 1:
            return
        budget = self.request.app[BUDGET]
        detail = OVER_BUDGET.format(n=self.actions, c=extra)
        while (refusal := await budget.charge_more(self.request, extra, detail)) is not None:
            await asyncio.sleep(refusal.retry_after)
        self.charged += extra


async def rendered(render: Callable[..., Any], *args: Any) -> bytes:
    """`render(*args)` (a document of `server.api.render`) as UTF-8 JSON, made in a thread."""
    return await asyncio.to_thread(_dumped, render, args)


def _dumped(render: Callable[..., Any], args: Sequence[Any]) -> bytes:
    return json.dumps(render(*args), ensure_ascii=False).encode()


async def joined(
    render: Callable[..., Any], items: Sequence[tuple[Any, ...]], sep: bytes, end: bytes = b""
) -> bytes:
    """Each of `items` rendered as JSON, joined by `sep` and followed by `end` (an export's
    batch), in a thread."""
    return await asyncio.to_thread(_joined, render, items, sep, end)


def _joined(
    render: Callable[..., Any], items: Sequence[tuple[Any, ...]], sep: bytes, end: bytes
) -> bytes:
    texts = (json.dumps(render(*item), ensure_ascii=False).encode() for item in items)
    return sep.join(texts) + end


def json_body(body: bytes) -> web.Response:
    """A JSON answer of bytes already rendered (as `json_response` would send them)."""
    return web.Response(body=body, content_type="application/json", charset="utf-8")


ReplayKey = tuple[str, int, str, str | None, str | None]


def replay_key(view: GameView, seed: dict[str, Any] | None = None) -> ReplayKey | None:
    """What a finished game's replay depends on: its id and version, its player's name (an
    erased player's games read as "deleted player"), its code as shown at the read (a daily
    game's appears when its day ends) and its server seed as shown (once its pair is rotated
    or its race ended); None for a game in play (its clock and log move)."""
    row = view.row
    if row.status == "active":
        return None
    shown = seed.get("server_seed") if seed else None
    return (row.id, row.version, view.player_name, code_json(row, view.now_ms), shown)


class RenderCache:
    """The rendered replays of finished games, least recently used first out, at most
    `capacity` bytes in all."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.size = 0
        self.items: OrderedDict[ReplayKey, bytes] = OrderedDict()

    def get(self, key: ReplayKey | None) -> bytes | None:
        if key is None:
            return None
        body = self.items.get(key)
        if body is not None:
            self.items.move_to_end(key)
        return body

    def put(self, key: ReplayKey | None, body: bytes) -> None:
        if key is None or len(body) > self.capacity or key in self.items:
            return
        self.items[key] = body
        self.size += len(body)
        while self.size > self.capacity:
            _, old = self.items.popitem(last=False)
            self.size -= len(old)


REPLAYS = RenderCache(REPLAY_CACHE_BYTES)


def actions_in(batch: Sequence[tuple[GameView, Sequence[Any]]]) -> int:
    return sum(len(log) for _, log in batch)
