"""The watchers of races in this process (`watch_race` over the WebSocket).

Watchers of a race get the whole race on every change, in every process: a change of the race
row (a join, a leave, the start, the end) is signalled on the broker under `race:<id>`, and each
process with watchers reads the race once and hands it to all of them; a change of one of its
games reaches every process through the broker already, and updates the standings here without
reading the database.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from server.live.broker import Broker
from server.services.errors import NotFound
from server.services.races.standings import RaceView
from server.services.values import Applied, Clock
from server.store.faults import log_fault

log = logging.getLogger(__name__)

RaceListener = Callable[[int, RaceView], None]


def race_key(race_id: str) -> str:
    return f"race:{race_id}"


@dataclass(slots=True)
class Feed:
    """The watchers of one race in this process, and the refresh in flight."""

    listeners: set[RaceListener] = field(default_factory=set)
    task: asyncio.Task[None] | None = None
    again: bool = False
    sent: int = -1
    view: RaceView | None = None
    """The race as last read or updated here."""
    tapped: set[str] = field(default_factory=set)
    """The race's games whose changes this process follows."""


class RaceFeeds:
    """The feeds of the races watched in this process; `read` reads a whole race."""

    def __init__(
        self, broker: Broker, read: Callable[[str], Awaitable[RaceView]], clock: Clock
    ) -> None:
        self.broker = broker
        self.read = read
        self.clock = clock
        self.feeds: dict[str, Feed] = {}

    async def publish(self, race_id: str) -> None:
        """Signals a change of the race row to its watchers in every process."""
        await self.broker.signal(race_key(race_id))

    def watch(self, race_id: str, listener: RaceListener) -> None:
        feed = self.feeds.get(race_id)
        if feed is None:
            feed = self.feeds[race_id] = Feed()
            signalled = self._signalled(race_id)
            self.broker.subscribe(race_key(race_id), signalled)
            signalled(0, None)  # the first read, which starts following the race's games
        feed.listeners.add(listener)

    def unwatch(self, race_id: str, listener: RaceListener) -> None:
        feed = self.feeds.get(race_id)
        if feed is None:
            return
        feed.listeners.discard(listener)
        if not feed.listeners:
            del self.feeds[race_id]
            self.broker.unsubscribe_all(race_key(race_id))
            for game_id in feed.tapped:
                self.broker.untap(game_id)
            if feed.task is not None:
                feed.task.cancel()

    def close(self) -> None:
        for feed in self.feeds.values():
            if feed.task is not None:
                feed.task.cancel()

    def _signalled(self, race_id: str) -> Callable[[int, object], None]:
        def on_signal(_version: int, _change: object) -> None:
            feed = self.feeds.get(race_id)
            if feed is None:
                return
            if feed.task is not None and not feed.task.done():
                feed.again = True
                return
            feed.task = asyncio.create_task(self._refresh(race_id, feed))

        return on_signal

    async def _refresh(self, race_id: str, feed: Feed) -> None:
        """Reads the race once for all its watchers here (a change of the race row: a join, a
        leave, the start, the end), and again if it changed meanwhile."""
        if feed.view is None:  # the first read: once the race's signals reach this process
            await self.broker.ready(race_key(race_id))
        while True:
            feed.again = False
            try:
                view = await self.read(race_id)
            except NotFound:
                return  # a watcher named a race that does not exist: it is told so (404)
            except Exception as exc:
                log_fault(log, f"reading race {race_id} failed", exc)
                return
            if feed.view is not None:  # keep the newer of each game (changes went on meanwhile)
                held = {g.id: g for g in feed.view.games}
                games = [
                    held[g.id] if g.id in held and held[g.id].version > g.version else g
                    for g in view.games
                ]
                last = {**view.last_actions, **feed.view.last_actions}
                view = replace(view, games=games, last_actions=last)
            new = self._tap(race_id, feed, view)
            self._send(feed, view)
            if new:
                # Read once more, once the new games' changes reach this process: a change
                # made before the tap is in that read.
                await asyncio.gather(*(self.broker.ready(game_id) for game_id in new))
                feed.again = True
            if not feed.again:
                return

    def _tap(self, race_id: str, feed: Feed, view: RaceView) -> list[str]:
        """Follows the race's games through the broker: each change updates the standings here
        without reading the database. The games it began to follow."""
        new = [game.id for game in view.games if game.id not in feed.tapped]
        for game_id in new:
            feed.tapped.add(game_id)
            self.broker.tap(game_id, self._changed(race_id))
        return new

    def _changed(self, race_id: str) -> Callable[[Applied], None]:
        def on_change(applied: Applied) -> None:
            feed = self.feeds.get(race_id)
            if feed is None or feed.view is None:
                return
            row = applied.view.row
            games = [
                row if g.id == row.id and row.version > g.version else g for g in feed.view.games
            ]
            last = feed.view.last_actions
            if applied.move is not None:
                last = {**last, row.id: applied.view.now_ms}
            self._send(
                feed, replace(feed.view, games=games, last_actions=last, now_ms=self.clock())
            )

        return on_change

    def _send(self, feed: Feed, view: RaceView) -> None:
        feed.view = view
        if view.version <= feed.sent:
            return
        feed.sent = view.version
        for listener in list(feed.listeners):
            try:
                listener(view.version, view)
            except Exception:
                log.exception("race watcher failed")
