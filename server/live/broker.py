"""Delivery of game events to watchers, in this process and across processes (SPEC 2.6).

A broker routes the event of each committed action to the local watchers of that game:

- `LocalBroker` (SQLite, or one process): the service hands it the change after the commit.
- `PgBroker` (PostgreSQL, the zero-setup default): the change is sent with `pg_notify` after
  its commit, batched with the other changes of the moment (one notifying transaction, not one
  per commit: see its docstring), to every process that listens (this one's own watchers get
  it at once); a dedicated asyncpg connection LISTENs, sends, and reconnects when it is
  dropped. Every event of every game goes to every process: right for one machine, the wall
  beyond it.
- `RedisBroker` (`BROKER_URL=redis://...`, on either database): Redis pub/sub with one channel
  per game and per race; each process subscribes only to the channels of what its sockets watch
  or its taps follow, and publishes after the commit (see its docstring).

The payload is the change as data (the encoding an idempotency record keeps,
`server.services.values.encode_answer`), and the watchers get it as a value: the `Applied` change,
decoded once in the process that delivers it, and only when that process has watchers (or taps)
of the game. Delivery renders nothing: the watchers' `event` message is rendered at the edge
(`server.api.render`), once per version for all the watchers of a process. Watchers are
callbacks that must not block (they put the message on a bounded queue).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from server.services.values import Applied, decode_answer

log = logging.getLogger(__name__)

Change = Applied | None
"""What a watcher gets with a version: a game's change, or None for a signal (the watchers of a
key such as a race's read what changed themselves)."""

Watcher = Callable[[int, Change], None]
"""Called with (version, change); must not block."""


class Broker:
    """The local half, common to all: who watches which game here."""

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

    def deliver(self, key: str, version: int, change: Change) -> None:
        for watcher in list(self.watchers.get(key, ())):
            try:
                watcher(version, change)
            except Exception:  # a broken watcher must not stop the others
                log.exception("watcher failed")

    def unsubscribe_all(self, key: str) -> None:
        self.watchers.pop(key, None)

    async def signal(self, key: str) -> None:
        """Tells the watchers of `key` (in every process) that it changed; they read it again
        themselves (a race's watchers read its document)."""
        self.deliver(key, 0, None)

    async def published(self, applied: Applied, answer: str | None = None) -> None:
        """Called after the change's transaction committed, under the game's lock: one
        process's changes of a game come here in the order of their commits. `answer` is the
        change's `encode_answer`, when the commit made it already (for its idempotency record)."""

    def delivered_here(self, applied: Applied) -> None:
        """The change to this process's own watchers and taps of its game."""
        game_id = applied.view.row.id
        if self.watchers.get(game_id):
            self.deliver(game_id, applied.view.row.version, applied)
        self.tapped(applied)

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
                self.deliver(key, version, None)
            return
        if not watched and key not in self.taps:
            return
        applied = decode_answer(answer)
        if watched:
            self.deliver(key, version, applied)
        self.tapped(applied)

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass


class LocalBroker(Broker):
    async def published(self, applied: Applied, answer: str | None = None) -> None:
        self.delivered_here(applied)
