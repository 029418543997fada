"""Delivery across processes through Redis pub/sub (`BROKER_URL=redis://...`): one channel per
game and per race; each process subscribes only to what its sockets watch."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError

from server.live.broker import Broker, Watcher
from server.services.values import Applied, encode_answer

log = logging.getLogger(__name__)


class RedisBroker(Broker):
    """Redis pub/sub (`BROKER_URL=redis://host:port/db`), for several processes or machines.

    - One channel per game (`solitaire:game:<id>`) and per race (`solitaire:race:<id>`). A
      process subscribes to a channel when the first local watcher of its key (or tap of its
      game) comes, and unsubscribes when the last one goes: other games' events never reach it.
    - The change is published after its commit (`PUBLISH`), written at once on a connection of
      its own whose replies a task reads, so the event leaves as the action is answered, and
      the answer does not wait for Redis. The changes a process makes to a game go out in
      order (the service publishes under the game's lock); changes to one game made by two
      processes moments apart may not: v6 published by one can reach a watcher before v5
      published by the other. A watcher keeps the highest version it has
      seen and drops an older one (`server.api.live.games`); the v6 event carries the whole
      game, and the client, seeing v4 then v6, detects the gap by the versions and watches
      again with `since` for the move it missed, as it does for an event lost while Redis was
      away. The message is
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
        self.publisher_name = f"solitaire-publisher-{os.getpid()}"
        """The publishing connection's."""
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

    async def published(self, applied: Applied, answer: str | None = None) -> None:
        """The change is encoded here, after its commit: nothing is kept for a change whose
        commit fails."""
        row = applied.view.row
        if self.wanted(row.id):
            self.heard[row.id] = row.version
        self.delivered_here(applied)
        data = f"{self.origin} {row.version} {answer or encode_answer(applied)}"
        # The last change first: a subscriber confirmed after the PUBLISH reads it.
        last = ("SET", self.PREFIX + "last:" + row.id, data, "EX", self.LAST_TTL_S)
        await self._send(last, ("PUBLISH", self.channel(row.id), data))

    async def signal(self, key: str) -> None:
        """Delivered here at once, and sent to the others."""
        self.deliver(key, 0, None)
        await self._send(("PUBLISH", self.channel(key), f"{self.origin} 0 -"))

    async def _send(self, *commands: tuple[Any, ...]) -> None:
        """Writes the commands now (no wait for a task to be scheduled, nor for the replies):
        the event leaves as the action is answered. While Redis is away, nothing is sent (see
        the class docstring)."""
        writer = self.writer
        if writer is None:
            return
        try:
            await writer.send_packed_command(writer.pack_commands(commands), check_health=False)
        except (OSError, RedisError) as exc:
            if self.writer is writer:
                log.warning("publishing events to Redis failed: %s", exc)
                self.writer = None
                self.replies.release()  # wakes `_replies_forever`, which connects again
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
                self.url,
                socket_timeout=None,
                socket_connect_timeout=5,
                retry=Retry(NoBackoff(), 0),
                client_name=self.publisher_name,
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
                    if self.writer is not connection:  # a write failed (`_send`)
                        break
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
                self.deliver(key, 0, None)  # read again: a change may have come before
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
