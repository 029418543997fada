"""Delivery of game events to watchers, in this process and across processes (SPEC 2.6).

A broker routes the event of each committed action to the local watchers of that game:

- `LocalBroker` (SQLite, or one process): the service hands it the change after the commit.
- `PgBroker` (PostgreSQL, the zero-setup default): the change is sent with `pg_notify` inside its
  own transaction (`payload()` is written by the commit itself), so PostgreSQL delivers it on
  commit and only on commit, to every process that listens, this one included; a dedicated
  asyncpg connection LISTENs and reconnects when it is dropped. Every event of every game goes
  to every process, and PostgreSQL serializes the commits of notifying transactions on one
  global lock: right for one machine, the wall beyond it.
- `RedisBroker` (`BROKER_URL=redis://...`, on either database): Redis pub/sub with one channel
  per game and per race; each process subscribes only to the channels of what its sockets watch
  or its taps follow, and publishes after the commit (see its docstring).

The payload is the change as data (the encoding an idempotency record keeps,
`server.store.commits.encode_answer`), not the rendered event. The broker renders a change as
the watchers' `event` message (`server.views`) in the process that delivers it, once, and only
when that process has watchers of the game. Watchers are callbacks that must not block (they
put the message on a bounded queue).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import uuid
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError
from sqlalchemy.engine import make_url

from server.domain import Applied
from server.settings import async_url
from server.store.commits import decode_answer, encode_answer
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

    async def ready(self, key: str, timeout: float = 5.0) -> bool:
        """Waits until the changes of `key` made in other processes reach this one (a new
        subscription has taken effect); True when they do. Call it after `subscribe` or `tap`
        and before the first read, so that nothing committed in between is missed."""
        return True

    def received(self, key: str, version: int, answer: str) -> None:
        """A change (or, with `answer` "-", a signal) that came from another process."""
        watched = bool(self.watchers.get(key))
        if answer == "-":  # a signal: the watchers read what changed themselves
            if watched:
                self.deliver(key, version, "")
            return
        if not watched and key not in self.taps:
            return
        applied = decode_answer(answer)
        if watched:
            self.deliver(key, version, event_text(applied))
        self.tapped(applied)

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
        try:
            key, version, answer = payload.split(" ", 2)
            self.received(key, int(version), answer)
        except Exception:  # one bad notification (another server version's?) is dropped
            log.exception("a game event from PostgreSQL could not be delivered: %.80r", payload)

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
            except Exception:  # anything else: listen again all the same
                log.exception("event listener failed; reconnecting")
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


class RedisBroker(Broker):
    """Redis pub/sub (`BROKER_URL=redis://host:port/db`), for several processes or machines.

    - One channel per game (`solitaire:game:<id>`) and per race (`solitaire:race:<id>`). A
      process subscribes to a channel when the first local watcher of its key (or tap of its
      game) comes, and unsubscribes when the last one goes: other games' events never reach it.
    - The change is published after its commit (`PUBLISH`), written at once on a connection of
      its own whose replies a task reads, so the commit carries no `pg_notify`, the event leaves
      as the action is answered, and the answer does not wait for Redis. The changes a process
      makes to a game go out in order (the service publishes under the game's lock); changes
      to one game made by two processes moments apart may not: v6 published by one can reach a
      watcher before v5 published by the other. A watcher keeps the highest version it has seen
      and drops an older one (`server.api.live`); the v6 event carries the whole game, and the
      client, seeing v4 then v6, detects the gap by the versions and watches again with `since`
      for the move it missed, as it does for an event lost while Redis was away. The message is
      `<origin> <version> <answer>`, the answer `encode_answer(applied)` (as PostgreSQL's
      notification carries it: the whole game row, its secret code and face-down cards
      included, so Redis must be kept as private as the database), "-" for a signal; this
      process's own watchers and taps get the change at once, and skip its echo.
    - A subscription takes effect a moment after `subscribe` returns: the last change of each
      game is also kept in Redis (`solitaire:last:<id>`, for a minute, written before it is
      published) and delivered when the subscription is confirmed, and a race's watchers are
      signalled then (they read the race again). `ready(key)` waits for the confirmation.
    - A message that cannot be delivered (malformed, or from another server version during a
      rolling deploy) is logged and dropped; the subscriber goes on. When Redis drops, or the
      subscriber fails in any other way, it logs one line and reconnects every half second,
      subscribing again to what is watched then; it also pings Redis when it has heard nothing
      for `PROBE_INTERVAL`, so a connection that died silently is found. Events published
      meanwhile are lost for the other processes: their watchers detect the gap by the
      versions of the events (a client then watches again with `since` and resyncs), get the
      last change of each game on the new subscription, and a race's watchers read it again.
      This process's own watchers miss nothing.

    Pub/sub ignores the database number of the URL (channels are server-wide; the game ids in
    them are UUIDs); the `last` keys are kept in that database.
    """

    PREFIX = "solitaire:"
    LAST_TTL_S = 60
    RECONNECT_DELAY = 0.5
    PROBE_INTERVAL = 10.0

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self.origin = uuid.uuid4().hex
        self.name = f"solitaire-events-{os.getpid()}"
        """The subscriber's client name in Redis (`CLIENT LIST`)."""
        self.writer: Any = None
        """The publishing connection, while it works: commands are written on it at once."""
        self.replies = asyncio.Semaphore(0)
        """Replies the publishing connection owes (read, and checked, by `_replies_forever`)."""
        self.changed: set[str] = set()
        """Keys whose subscription may have to change (the syncer compares them)."""
        self.dirty = asyncio.Event()
        self.asked: set[str] = set()
        """Channels asked for on the current connection."""
        self.unanswered: dict[str, int] = {}
        """SUBSCRIBE and UNSUBSCRIBE commands sent on the current connection whose reply has not
        come yet, by channel: only the reply to the last one sent says where a channel stands."""
        self.confirmed: set[str] = set()
        """Channels whose last SUBSCRIBE has taken effect (and no UNSUBSCRIBE was sent since)."""
        self.heard: dict[str, int] = {}
        """The last version of each watched game delivered here (a late `last` is not news)."""
        self.waiting: dict[str, list[asyncio.Future[None]]] = {}
        self.connected = asyncio.Event()
        self.client: Any = None
        self.listener: asyncio.Task[None] | None = None
        self.replier: asyncio.Task[None] | None = None
        self.fetches: set[asyncio.Task[None]] = set()

    # ---------------------------------------------------------------- channels

    def channel(self, key: str) -> str:
        return self.PREFIX + (key if key.startswith("race:") else "game:" + key)

    def key_of(self, channel: str) -> str:
        key = channel.removeprefix(self.PREFIX)
        return key.removeprefix("game:")

    def _touch(self, key: str) -> None:
        self.changed.add(key)
        self.dirty.set()

    def subscribe(self, game_id: str, watcher: Watcher) -> None:
        super().subscribe(game_id, watcher)
        self._touch(game_id)

    def unsubscribe(self, game_id: str, watcher: Watcher) -> None:
        super().unsubscribe(game_id, watcher)
        self._touch(game_id)

    def unsubscribe_all(self, key: str) -> None:
        super().unsubscribe_all(key)
        self._touch(key)

    def tap(self, game_id: str, listener: Callable[[Applied], None]) -> None:
        super().tap(game_id, listener)
        self._touch(game_id)

    def untap(self, game_id: str) -> None:
        super().untap(game_id)
        self._touch(game_id)

    def wanted(self, key: str) -> bool:
        return bool(self.watchers.get(key)) or key in self.taps

    async def ready(self, key: str, timeout: float = 5.0) -> bool:
        channel = self.channel(key)
        if channel in self.confirmed:
            return True
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(channel, []).append(waiter)
        try:
            await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            return False
        finally:
            waiters = self.waiting.get(channel)
            if waiters is not None and waiter in waiters:
                waiters.remove(waiter)
                if not waiters:
                    del self.waiting[channel]
        return True

    # ---------------------------------------------------------------- publishing

    async def published(self, applied: Applied) -> None:
        """The change is encoded here, after its commit: nothing is kept for a change whose
        commit fails (the commit carries nothing, so `payload()` is the base's None)."""
        row = applied.view.row
        if self.watchers.get(row.id):
            self.deliver(row.id, row.version, event_text(applied))
        if self.wanted(row.id):
            self.heard[row.id] = row.version
        self.tapped(applied)
        data = f"{self.origin} {row.version} {encode_answer(applied)}"
        # The last change first: a subscriber confirmed after the PUBLISH reads it.
        last = ("SET", self.PREFIX + "last:" + row.id, data, "EX", self.LAST_TTL_S)
        await self._send(last, ("PUBLISH", self.channel(row.id), data))

    async def signal(self, key: str) -> None:
        """Delivered here at once, and sent to the others."""
        self.deliver(key, 0, "")
        await self._send(("PUBLISH", self.channel(key), f"{self.origin} 0 -"))

    async def _send(self, *commands: tuple[Any, ...]) -> None:
        """Writes the commands now (no wait for a task to be scheduled, nor for the replies):
        the event leaves as the action is answered, as a NOTIFY leaves with its commit. While
        Redis is away, nothing is sent (see the class docstring)."""
        writer = self.writer
        if writer is None:
            return
        try:
            await writer.send_packed_command(writer.pack_commands(commands), check_health=False)
        except (OSError, RedisError) as exc:
            if self.writer is writer:
                log.warning("publishing events to Redis failed: %s", exc)
                self.writer = None
            return
        for _ in commands:
            self.replies.release()

    async def _replies_forever(self) -> None:
        """Connects the publishing connection (again, when it drops) and reads its replies."""
        from redis.asyncio import ConnectionPool
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff
        from redis.exceptions import ResponseError

        lost = False
        while True:
            # No socket timeout: a write is then made at once, not in a task of its own.
            pool: Any = ConnectionPool.from_url(
                self.url, socket_timeout=None, socket_connect_timeout=5, retry=Retry(NoBackoff(), 0)
            )
            try:
                connection = await pool.get_connection()
                if lost:
                    log.warning("publishing events to Redis works again")
                lost = False
                self.replies = asyncio.Semaphore(0)
                self.writer = connection
                refused = False
                while self.writer is connection:
                    await self.replies.acquire()
                    try:
                        await connection.read_response()
                    except ResponseError as exc:  # Redis refused one (out of memory...)
                        if not refused:
                            log.warning("Redis refused an event: %s", exc)
                        refused = True
            except (OSError, RedisError) as exc:
                if not lost and self.writer is not None:
                    log.warning("publishing events to Redis failed: %s", exc)
                lost = True
            finally:
                self.writer = None
                with contextlib.suppress(Exception):
                    await pool.disconnect()
            lost = True
            await asyncio.sleep(self.RECONNECT_DELAY)

    # ---------------------------------------------------------------- subscribing

    def _on_message(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind not in ("message", "subscribe", "unsubscribe"):
            return
        channel = message["channel"].decode()
        key = self.key_of(channel)
        if kind == "message":
            origin, text, answer = message["data"].decode().split(" ", 2)
            version = int(text)
            if origin != self.origin:
                wanted = answer != "-" and self.wanted(key)
                if wanted and version <= self.heard.get(key, 0):
                    return  # delivered already, read as the game's last change on subscribing
                self.received(key, version, answer)
                if wanted:
                    self.heard[key] = max(self.heard.get(key, 0), version)
            return
        left = self.unanswered.get(channel, 0) - 1
        if left > 0:  # a later command of this channel is still on its way: it decides
            self.unanswered[channel] = left
            return
        self.unanswered.pop(channel, None)
        if kind == "subscribe" and channel in self.asked:
            self.confirmed.add(channel)
            for waiter in self.waiting.pop(channel, []):
                if not waiter.done():
                    waiter.set_result(None)
            if key.startswith("race:"):
                self.deliver(key, 0, "")  # read again: a change may have come before
            else:
                task = asyncio.create_task(self._last_change(key))
                self.fetches.add(task)
                task.add_done_callback(self.fetches.discard)

    async def _last_change(self, key: str) -> None:
        """The last change of a game, delivered when its subscription is confirmed: one
        committed before it took effect would be missed otherwise."""
        try:
            data = await self.client.get(self.PREFIX + "last:" + key)
        except (OSError, RedisError) as exc:
            log.warning("reading the last change of %s from Redis failed: %s", key, exc)
            return
        if data is None:
            return
        try:
            origin, text, answer = data.decode().split(" ", 2)
            version = int(text)
            if origin != self.origin and self.wanted(key) and version > self.heard.get(key, 0):
                self.heard[key] = version
                self.received(key, version, answer)
        except Exception:
            log.exception("the last change of %s in Redis could not be delivered", key)

    async def _sync_forever(self, pubsub: Any) -> None:
        while True:
            await self.dirty.wait()
            self.dirty.clear()
            changed, self.changed = self.changed, set()
            add, drop = [], []
            for key in changed:
                channel = self.channel(key)
                if self.wanted(key) and channel not in self.asked:
                    add.append(channel)
                elif not self.wanted(key) and channel in self.asked:
                    drop.append(channel)
            if add:
                self.asked.update(add)
                for channel in add:
                    self.unanswered[channel] = self.unanswered.get(channel, 0) + 1
                await pubsub.subscribe(*add)
            if drop:
                self.asked.difference_update(drop)
                # No longer ready: a new watcher waits for its own SUBSCRIBE to take effect.
                self.confirmed.difference_update(drop)
                for channel in drop:
                    self.unanswered[channel] = self.unanswered.get(channel, 0) + 1
                    self.heard.pop(self.key_of(channel), None)
                await pubsub.unsubscribe(*drop)

    async def _read_forever(self, pubsub: Any) -> None:
        probing = False
        while True:
            message = await pubsub.get_message(timeout=self.PROBE_INTERVAL)
            if message is None:
                if probing:
                    raise TimeoutError(f"no answer to a ping in {self.PROBE_INTERVAL} s")
                await pubsub.ping()
                probing = True
                continue
            probing = False
            try:
                self._on_message(message)
            except Exception:  # one bad message (another server version's?) is dropped
                log.exception("a game event from Redis could not be delivered: %.120r", message)

    async def _listen_forever(self) -> None:
        from redis.asyncio import Redis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        lost = False
        while True:
            # No retries of its own: a dropped connection comes here, to subscribe afresh.
            client: Any = Redis.from_url(
                self.url,
                retry=Retry(NoBackoff(), 0),
                client_name=self.name,
                socket_connect_timeout=5,
            )
            pubsub: Any = client.pubsub()
            tasks: list[asyncio.Task[None]] = []
            try:
                await pubsub.connect()
                if lost:
                    log.warning("event subscriber: connected to Redis again")
                lost = False
                self.asked.clear()
                self.changed.update(self.watchers)
                self.changed.update(self.taps)
                self.dirty.set()
                self.connected.set()
                tasks = [
                    asyncio.create_task(self._read_forever(pubsub)),
                    asyncio.create_task(self._sync_forever(pubsub)),
                ]
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
                for task in done:
                    task.result()
            except (OSError, RedisError, TimeoutError) as exc:
                if not lost:
                    log.warning("event subscriber: %s; reconnecting", exc)
                lost = True
            except Exception as exc:  # anything else: subscribe afresh all the same
                if not lost:
                    log.warning("event subscriber failed: %r; reconnecting", exc)
                lost = True
            finally:
                self.connected.clear()
                self.confirmed.clear()
                self.unanswered.clear()
                for task in tasks:
                    task.cancel()
                for task in tasks:
                    with contextlib.suppress(BaseException):
                        await task
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                with contextlib.suppress(Exception):
                    await client.aclose()
            await asyncio.sleep(self.RECONNECT_DELAY)

    async def start(self) -> None:
        from redis.asyncio import Redis

        self.client = Redis.from_url(self.url, socket_connect_timeout=5)
        self.replier = asyncio.create_task(self._replies_forever())
        self.listener = asyncio.create_task(self._listen_forever())
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(10):
                await self.connected.wait()
                while self.writer is None:
                    await asyncio.sleep(0.01)

    async def close(self) -> None:
        if self.listener is not None:
            self.listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.listener
        for task in list(self.fetches):
            task.cancel()
        await asyncio.gather(*self.fetches, return_exceptions=True)
        if self.replier is not None:
            self.replier.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.replier
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.aclose()


def make_broker(url: str, broker_url: str | None = None) -> Broker:
    """The broker for the database at `url`, or Redis's at `broker_url` (`BROKER_URL`)."""
    if broker_url is not None:
        return RedisBroker(broker_url)
    if make_url(async_url(url)).get_backend_name() == "sqlite":
        return LocalBroker()
    return PgBroker(url)
