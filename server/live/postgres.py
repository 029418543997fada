"""Delivery across processes through PostgreSQL's LISTEN/NOTIFY (the default on PostgreSQL):
the change is sent with `pg_notify` after its commit, in a batch with the other changes of the
moment, to every process that listens (this one included: its own watchers hear it so too)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from server.live.broker import Broker
from server.services.values import Applied, encode_answer
from server.store.db import CHANNEL, asyncpg_connect_args
from server.store.faults import log_fault

log = logging.getLogger(__name__)


class PgBroker(Broker):
    """LISTEN/NOTIFY on one channel (`CHANNEL`), through one connection that listens and sends.

    The change is not notified by its commit but after it (`published`), batched: every change
    committed in one moment goes out in one transaction of `pg_notify`s, in order, on the
    listening connection. PostgreSQL serialises the commits of transactions that notify on one
    global lock, held until their commit record is flushed, so a commit that notified waited
    for the flush of every other one before it (no group commit): measured with 32 clients,
    1-statement commits went from 10,000-12,000 a second to 2,200-3,300 with a `pg_notify` each.
    Batched, the moves' commits are flushed together again, and the lock is taken once a batch.

    What that costs: an event is sent after its commit is acknowledged, so a process that dies
    in between loses it for the other processes' watchers (never the move). They see the gap in
    the versions of the events and watch again with `since`, as with Redis (`RedisBroker`); while
    the listening connection is down, this process's own watchers get the events directly.
    """

    RECONNECT_DELAY = 0.5
    PROBE_INTERVAL = 10.0
    CONNECT_S = 5.0
    CLOSE_S = 1.0

    def __init__(self, url: str) -> None:
        super().__init__()
        self.connect_args = asyncpg_connect_args(url)
        self.connection: Any = None
        self.task: asyncio.Task[None] | None = None
        self.listening = asyncio.Event()
        self.signals: set[str] = set()
        self.in_use = asyncio.Lock()
        self.signaller: asyncio.Task[None] | None = None
        self.events: list[tuple[Applied, str]] = []
        """Changes committed and not sent yet, in the order of their commits."""
        self.sender: asyncio.Task[None] | None = None

    async def published(self, applied: Applied) -> None:
        """Queued, not awaited: the changes of one moment go out together (`_send_events`)."""
        row = applied.view.row
        self.events.append((applied, f"{row.id} {row.version} {encode_answer(applied)}"))
        if self.sender is None or self.sender.done():
            self.sender = asyncio.create_task(self._send_events())

    async def _send_events(self) -> None:
        while self.events:
            events, self.events = self.events, []
            connection = self.connection
            if connection is not None:
                try:
                    async with self.in_use:
                        await connection.executemany(
                            "SELECT pg_notify($1, $2)", [(CHANNEL, text) for _, text in events]
                        )
                    continue  # this process hears them too, as the others do
                except Exception as exc:
                    log_fault(log, f"sending {len(events)} game events failed", exc)
            for applied, _ in events:  # not sent: this process's own watchers get them at least
                self.delivered_here(applied)

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
                    self.deliver(key, 0, None)
                continue
            try:
                async with self.in_use:
                    await connection.executemany(
                        "SELECT pg_notify($1, $2)", [(CHANNEL, f"{key} 0 -") for key in keys]
                    )
            except Exception as exc:
                log_fault(log, f"sending {len(keys)} signals failed", exc)

    def _on_notification(self, _connection: Any, _pid: int, _channel: str, payload: str) -> None:
        try:
            key, version, answer = payload.split(" ", 2)
            self.received(key, int(version), answer)
        except Exception:  # one bad notification (another server version's?) is dropped
            log.exception("a game event from PostgreSQL could not be delivered: %.80r", payload)

    async def _listen_forever(self) -> None:
        import asyncpg

        while True:
            try:
                connection = await asyncpg.connect(**self.connect_args, timeout=self.CONNECT_S)
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
            except Exception as exc:  # listen again all the same, a fault or not
                log_fault(log, "event listener failed; reconnecting", exc)
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
        # The last changes' events still go out (a stopping process's last moves are heard by
        # the others' watchers), if that takes at most a second.
        pending = [task for task in (self.sender, self.signaller) if task and not task.done()]
        if pending:
            await asyncio.wait(pending, timeout=self.CLOSE_S)
        for task in (self.sender, self.signaller):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        if self.connection is not None:
            with contextlib.suppress(Exception):
                await self.connection.close(timeout=1)
