"""Delivery across processes through PostgreSQL's LISTEN/NOTIFY (the default on PostgreSQL):
the change is sent with `pg_notify` after its commit, in a batch with the other changes of the
moment, to every other process that listens (this one's own watchers get it at once)."""

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

    What that costs, as with Redis (`RedisBroker`):
    - An event is sent after its commit: a process that dies in between (or whose commit was
      made but not acknowledged to it, a fault on the way back) loses it for the other
      processes' watchers, never the move.
    - Two processes' changes of one game made moments apart may cross: v6 sent by one can
      arrive before v5 sent by the other (in one process they go out in commit order, the
      service publishing under the game's lock).

    A watcher drops a version it has, and a client that sees a gap in the versions watches
    again with `since`. This process's own watchers and taps get its changes and signals at
    once, as with Redis, and its own notifications, which come back with the listening
    connection's backend pid, are skipped. While the events cannot be sent (the listening
    connection is down or reconnecting, or a send failed or took over `SEND_S`), they are kept,
    at most `HELD_MAX`, and go out once the connection is back.
    """

    RECONNECT_DELAY = 0.5
    PROBE_INTERVAL = 10.0
    CONNECT_S = 5.0
    CLOSE_S = 1.0
    SEND_S = 5.0
    HELD_MAX = 10_000

    def __init__(self, url: str) -> None:
        super().__init__()
        self.connect_args = asyncpg_connect_args(url)
        self.connection: Any = None
        self.task: asyncio.Task[None] | None = None
        self.listening = asyncio.Event()
        self.signals: set[str] = set()
        self.in_use = asyncio.Lock()
        self.signaller: asyncio.Task[None] | None = None
        self.events: list[str] = []
        """The notifications of changes committed and not sent yet, in the order of their
        commits."""
        self.pid: int | None = None
        """The listening connection's backend: the sender of this process's notifications."""
        self.sender: asyncio.Task[None] | None = None

    async def published(self, applied: Applied, answer: str | None = None) -> None:
        """Delivered here at once; queued, not awaited, for the other processes: the changes of
        one moment go out together (`_send_events`)."""
        self.delivered_here(applied)
        row = applied.view.row
        self.events.append(f"{row.id} {row.version} {answer or encode_answer(applied)}")
        self._wake_sender()

    def _wake_sender(self) -> None:
        if self.events and (self.sender is None or self.sender.done()):
            self.sender = asyncio.create_task(self._send_events())

    async def _send_events(self) -> None:
        """Sends the queued events, a batch (all those queued) at a time. What cannot be sent
        is kept (see the class docstring); `_listen_forever` wakes this again once it listens.
        A batch the database refused is dropped: sending it again would be refused again."""
        while self.events:
            batch = list(self.events)
            if await self._notify(batch, "game events") is False:
                if len(self.events) > self.HELD_MAX:
                    dropped = len(self.events) - self.HELD_MAX
                    log.warning("%d game events not sent to the other processes: too many", dropped)
                    del self.events[:dropped]
                return
            del self.events[: len(batch)]

    async def _notify(self, texts: list[str], what: str) -> bool | None:
        """Sends `texts` in one transaction of `pg_notify`s on the listening connection. True:
        sent. None: refused by the database, the connection sound (another server's payload
        limit?). False: not sent, for now: not listening, or the send failed or took over
        `SEND_S`, and then the connection is ended (the listener connects again)."""
        import asyncpg

        async with self.in_use:  # one operation at a time on the connection
            connection = self.connection
            if connection is None:
                return False
            try:
                await connection.executemany(
                    "SELECT pg_notify($1, $2)",
                    [(CHANNEL, text) for text in texts],
                    timeout=self.SEND_S,
                )
                return True
            except Exception as exc:
                log_fault(log, f"sending {len(texts)} {what} failed", exc)
                if isinstance(exc, asyncpg.PostgresError) and not connection.is_closed():
                    return None
                connection.terminate()
                return False

    async def signal(self, key: str) -> None:
        """Delivered here at once; queued, not awaited, for the other processes: the signals of
        one moment go out together, one per key (the watchers read the latest state anyway), so
        a burst of changes costs one NOTIFY each."""
        self.deliver(key, 0, None)
        self.signals.add(key)
        if self.signaller is None or self.signaller.done():
            self.signaller = asyncio.create_task(self._send_signals())

    async def _send_signals(self) -> None:
        while self.signals:
            keys, self.signals = self.signals, set()
            await self._notify([f"{key} 0 -" for key in keys], "signals")

    def _on_notification(self, _connection: Any, pid: int, _channel: str, payload: str) -> None:
        if pid == self.pid:  # this process's own, delivered here already
            return
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
                self.pid = connection.get_server_pid()
                await connection.add_listener(CHANNEL, self._on_notification)
                self.connection = connection
                self.listening.set()
                self._wake_sender()  # the events that could not be sent meanwhile
                while not lost.is_set():
                    # A dropped connection that nobody closed is found by a periodic probe.
                    try:
                        await asyncio.wait_for(lost.wait(), self.PROBE_INTERVAL)
                    except TimeoutError:
                        await asyncio.wait_for(self._probe(connection), self.SEND_S * 2)
            except Exception as exc:  # listen again all the same, a fault or not
                log_fault(log, "event listener failed; reconnecting", exc)
            finally:
                self.listening.clear()
                self.pid = None
                if self.connection is not None:
                    with contextlib.suppress(Exception):
                        await self.connection.close(timeout=1)
                    self.connection = None
            await asyncio.sleep(self.RECONNECT_DELAY)

    async def _probe(self, connection: Any) -> None:
        async with self.in_use:  # one operation at a time on the connection
            await connection.fetchval("SELECT 1")

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
        if self.events:
            log.warning("%d game events not sent to the other processes: closing", len(self.events))
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
