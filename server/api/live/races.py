"""The races a connection watches (`watch_race`, `unwatch_race`): the race now, then the whole
race document on every change.

As for a game, the race is watched first and read then: changes that come while it is being
read are held, and sent after its `watching_race` answer if they are newer. A watcher gets each
version at most once, newest last. Each version's `race` message is rendered once for all the
watchers of this process (`LiveTexts`); the race service reads the race once for all of them.
"""

from __future__ import annotations

from collections.abc import Callable

from server import metrics
from server.api.live.outbox import Outbox
from server.api.render import LiveTexts, watching_race_message
from server.services.races.lobby import RaceService
from server.services.races.standings import RaceView

RaceListener = Callable[[int, RaceView], None]
"""Called with each version of a race, as read or updated once for all its watchers here."""


class RaceWatching:
    def __init__(self, races: RaceService, texts: LiveTexts, outbox: Outbox) -> None:
        self.races = races
        self.texts = texts
        self.outbox = outbox
        self.listeners: dict[str, RaceListener] = {}
        self.seen: dict[str, int] = {}
        """The last version sent of each race."""
        self.held: dict[str, list[tuple[int, RaceView]]] = {}
        """Changes of a race that came while `watch` was reading it: sent after its answer."""

    def _listener(self, race_id: str) -> RaceListener:
        def listener(version: int, view: RaceView) -> None:
            held = self.held.get(race_id)
            if held is not None:
                held.append((version, view))
            elif version > self.seen.get(race_id, -1):
                self.seen[race_id] = version
                self.outbox.put(self.texts.race(version, view))

        return listener

    async def watch(self, mid: str | int | None, race_id: str) -> None:
        held: list[tuple[int, RaceView]] = []
        self.held[race_id] = held
        if race_id not in self.listeners:
            listener = self._listener(race_id)
            self.races.watch(race_id, listener)  # first, so that no change is missed meanwhile
            self.listeners[race_id] = listener
            metrics.watchers(1)
        try:
            view = await self.races.view(race_id)
        except BaseException:
            self.unwatch(race_id)
            raise
        finally:
            if self.held.get(race_id) is held:
                del self.held[race_id]
        self.seen[race_id] = max(self.seen.get(race_id, -1), view.version)
        self.outbox.send(watching_race_message(mid, view))
        following = self.listeners.get(race_id)
        if following is not None:
            for version, later in held:
                following(version, later)

    def unwatch(self, race_id: str) -> None:
        listener = self.listeners.pop(race_id, None)
        if listener is not None:
            self.races.unwatch(race_id, listener)
            metrics.watchers(-1)
        self.seen.pop(race_id, None)

    def unwatch_all(self) -> None:
        for race_id in list(self.listeners):
            self.unwatch(race_id)
