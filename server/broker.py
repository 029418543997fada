"""Delivery of game events to watchers, in this process and across processes (SPEC 2.6).

A broker routes the event of each committed action to the local watchers of that game:

- `LocalBroker` (SQLite, or one process): the service hands it the change after the commit.
- `PgBroker` (PostgreSQL): the change is sent with `pg_notify` inside its own transaction
  (`payload()` is written by the commit itself), so PostgreSQL delivers it on commit and only on
  commit, to every process that listens, this one included; a dedicated asyncpg connection
  LISTENs and reconnects when it is dropped. The payload is the change as data (the encoding an
  idempotency record keeps, `server.store.commits.encode_answer`), not the rendered event.

The broker renders a change as the watchers' `event` message (`server.views`) in the process
that delivers it, once, and only when that process has watchers of the game. Watchers are
callbacks that must not block (they put the message on a bounded queue).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import make_url

from server.domain import Applied
from server.settings import async_url
from server.store.commits import decode_answer
from server.store.db import CHANNEL, asyncpg_connect_args
from server.views import event_json

log = logging.getLogger(__name__)

Watcher = Callable[[int, str], None]
"""Called with (version, event text); must not block."""


class Broker:
    """The local half, common to both: who watches which game here."""

    carries_answers = False
    """Whether `payload()` needs the change's encoded answer (`encode_answer`)."""

    def __init__(self) -> None:
        self.watchers: dict[str, set[Watcher]] = {}
        self.taps: dict[str, Callable[[Applied], None]] = {}
        """Who wants the changes of a game as data (a race's standings), by game id."""

    def tap(self, game_id: str, listener: Callable[[Applied], None]) -> None:
        self.taps[game_id] = listener

    def untap(self, game_id: str) -> None:
        self.taps.pop(game_id, None)

    def tapped(self, applied: Applied) -> None:
        listener = self.taps.get(applied.view.row.id)
        if listener is not None:
            try:
                listener(applied)
            except Exception:
                log.exception("a game's tap failed")

    def subscribe(self, game_id: str, watcher: Watcher) -> None:
        self.watchers.setdefault(game_id, set()).add(watcher)

    def unsubscribe(self, game_id: str, watcher: Watcher) -> None:
        watchers = self.watchers.get(game_id)
        if watchers is not None:
            watchers.discard(watcher)
            if not watchers:
                del self.watchers[game_id]

    def deliver(self, game_id: str, version: int, event: str) -> None:
        for watcher in list(self.watchers.get(game_id, ())):
            try:
                watcher(version, event)
            except Exception:  # a broken watcher must not stop the others
                log.exception("watcher failed")

    def payload(self, applied: Applied, answer: str | None) -> str | None:
        """What the change's commit sends with `pg_notify` (None: nothing)."""
        return None

    def unsubscribe_all(self, key: str) -> None:
        self.watchers.pop(key, None)

    async def signal(self, key: str) -> None:
        """Tells the watchers of `key` (in every process) that it changed; they read it again
        themselves (a race's watchers read its document)."""
        self.deliver(key, 0, "")

    async def published(self, applied: Applied) -> None:
        """Called after the change's transaction committed."""

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass


def event_text(applied: Applied) -> str:
    return json.dumps(event_json(applied), ensure_ascii=False)


class LocalBroker(Broker):
    async def published(self, applied: Applied) -> None:
        game_id = applied.view.row.id
        if self.watchers.get(game_id):
            self.deliver(game_id, applied.view.row.version, event_text(applied))
        self.tapped(applied)


class PgBroker(Broker):
    carries_answers = True
    RECONNECT_DELAY = 0.5
    PROBE_INTERVAL = 10.0

    def __init__(self, url: str) -> None:
        super().__init__()
        self.connect_args = asyncpg_connect_args(url)
        self.connection: Any = None
        self.task: asyncio.Task[None] | None = None
        self.listening = asyncio.Event()
        self.signals: set[str] = set()
        self.in_use = asyncio.Lock()
        self.signaller: asyncio.Task[None] | None = None

    def payload(self, applied: Applied, answer: str | None) -> str | None:
        assert answer is not None
        row = applied.view.row
        return f"{row.id} {row.version} {answer}"

    async def signal(self, key: str) -> None:
        """Queued, not awaited: the signals of one moment go out together, one per key (the
        watchers read the latest state anyway), so a burst of changes costs one NOTIFY each."""
        self.signals.add(key)
        if self.signaller is None or self.signaller.done():
            self.signaller = asyncio.create_task(self._send_signals())

    async def _send_signals(self) -> None:
        while self.signals:
            keys, self.signals = self.signals, set()
            connection = self.connection
            if connection is None:  # not listening right now: this process hears them at least
                for key in keys:
                    self.deliver(key, 0, "")
                continue
            try:
                async with self.in_use:
                    await connection.executemany(
                        "SELECT pg_notify($1, $2)", [(CHANNEL, f"{key} 0 -") for key in keys]
                    )
            except Exception:
                log.exception("sending %d signals failed", len(keys))

    def _on_notification(self, _connection: Any, _pid: int, _channel: str, payload: str) -> None:
        key, version, answer = payload.split(" ", 2)
        watched = bool(self.watchers.get(key))
        if answer == "-":  # a signal: the watchers read what changed themselves
            if watched:
                self.deliver(key, int(version), "")
            return
        if not watched and key not in self.taps:
            return
        applied = decode_answer(answer)
        if watched:
            self.deliver(key, int(version), event_text(applied))
        self.tapped(applied)

    async def _listen_forever(self) -> None:
        import asyncpg

        while True:
            try:
                connection = await asyncpg.connect(**self.connect_args)
                lost = asyncio.Event()
                connection.add_termination_listener(lambda _c, event=lost: event.set())
                await connection.add_listener(CHANNEL, self._on_notification)
                self.connection = connection
                self.listening.set()
                while not lost.is_set():
                    # A dropped connection that nobody closed is found by a periodic probe.
                    try:
                        await asyncio.wait_for(lost.wait(), self.PROBE_INTERVAL)
                    except TimeoutError:
                        async with self.in_use:  # one operation at a time on a connection
                            await asyncio.wait_for(connection.fetchval("SELECT 1"), 5)
            except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                log.warning("event listener: %s; reconnecting", exc)
            finally:
                self.listening.clear()
                if self.connection is not None:
                    with contextlib.suppress(Exception):
                        await self.connection.close(timeout=1)
                    self.connection = None
            await asyncio.sleep(self.RECONNECT_DELAY)

    async def start(self) -> None:
        self.task = asyncio.create_task(self._listen_forever())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.listening.wait(), 10)

    async def close(self) -> None:
        if self.signaller is not None:
            self.signaller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.signaller
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        if self.connection is not None:
            with contextlib.suppress(Exception):
                await self.connection.close(timeout=1)


def make_broker(url: str) -> Broker:
    if make_url(async_url(url)).get_backend_name() == "sqlite":
        return LocalBroker()
    return PgBroker(url)
