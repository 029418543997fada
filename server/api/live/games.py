"""The games a connection watches (`watch`, `unwatch`): subscribe, then read.

A game is subscribed to first, then read, so nothing committed in between is missed: changes
that arrive meanwhile are held, and sent after the snapshot if they are newer. Each version is
sent once, in order: a change older than what was sent is dropped (two processes' changes of
one game may cross, with either broker; the client detects a gap by the versions and watches
again with `since`). A change is rendered once per version for all the watchers of this process
(`LiveTexts`).

Watching a game this connection already watches answers again (`watching`, or `resync`) and
never sends a version twice, whatever its `since` (0 included): the connection knows what it
has sent (everything up to the last version sent, but the gaps a crossing left), so a `since`
below that counts as the last version the connection has without a gap after it, and only the
versions it never sent come as missed events.
"""

from __future__ import annotations

from server import metrics
from server.api.live.outbox import Outbox
from server.api.render import LiveTexts, missed_messages, resync_message, watching_message
from server.live.broker import Broker, Change, Watcher
from server.services.games import GameService
from server.services.values import Applied, Principal

MISSED_LIMIT = 100
"""At most this many missed changes are sent one by one; more, and the watcher resyncs."""


class GameWatching:
    def __init__(
        self, broker: Broker, games: GameService, texts: LiveTexts, outbox: Outbox
    ) -> None:
        self.broker = broker
        self.games = games
        self.texts = texts
        self.outbox = outbox
        self.watchers: dict[str, Watcher] = {}
        self.seen: dict[str, int] = {}
        """The last version sent of each game (its snapshot's, or its last event's)."""
        self.gaps: dict[str, set[int]] = {}
        """The versions below `seen` that were never sent (a change that came after a newer
        one, or never came), the last MISSED_LIMIT + 1 of each jump: a re-watch with `since`
        sends them; more missed than that resyncs anyway."""
        self.held: dict[str, list[tuple[int, Applied]]] = {}
        """Changes that came while a game was being read: sent after its snapshot."""

    def _watcher(self, game_id: str) -> Watcher:
        def watcher(version: int, change: Change) -> None:
            if change is None:  # a game's key carries changes, not signals
                return
            held = self.held.get(game_id)
            if held is not None:
                held.append((version, change))
            else:
                self._send(game_id, version, change)

        return watcher

    def _send(self, game_id: str, version: int, change: Applied) -> None:
        last = self.seen.get(game_id, -1)
        if version > last:
            if 0 <= last < version - 1:
                low = max(last + 1, version - MISSED_LIMIT - 1)
                self.gaps.setdefault(game_id, set()).update(range(low, version))
            self.seen[game_id] = version
            self.outbox.put(self.texts.event(change))

    def _had(self, game_id: str, since: int) -> int:
        """The version this connection's watcher has everything up to, told that the client
        has everything up to `since`."""
        after = [gap for gap in self.gaps.get(game_id, ()) if gap > since]
        if after:
            return min(after) - 1
        return max(since, self.seen.get(game_id, -1))

    async def watch(
        self, mid: str | int | None, game_id: str, since: int | None, viewer: Principal | None
    ) -> None:
        """`watching` with the game now (after the changes missed since `since`, if any), or
        `resync` when too much was missed; then every later change. Re-watching sends no
        version this connection has sent before."""
        sent: set[int] | None = None
        """What was sent of the versions after `since` (None: the game was not watched)."""
        if game_id in self.watchers:
            last = self.seen.get(game_id, -1)
            if since is not None:
                since = self._had(game_id, since)
                sent = set(range(since + 1, last + 1)) - self.gaps.get(game_id, set())
        else:
            watcher = self._watcher(game_id)
            self.broker.subscribe(game_id, watcher)
            self.watchers[game_id] = watcher
            metrics.watchers(1)
        self.held[game_id] = []
        # With Redis, a subscription takes effect a moment later: read only once it has.
        await self.broker.ready(game_id)
        try:
            view, log = await self.games.missed(game_id, viewer, since, MISSED_LIMIT)
        except BaseException:
            self.held.pop(game_id, None)
            self.unwatch(game_id)  # an unknown or hidden game is not watched
            raise
        version = view.row.version
        if since is not None and (since > version or version - since > MISSED_LIMIT):
            self.outbox.send(resync_message(mid, view))
            self.gaps.pop(game_id, None)  # the game now: nothing before it is missing
        else:
            if since is not None:
                for missed in missed_messages(game_id, since, version, log):
                    if sent is None or missed.version not in sent:
                        self.outbox.send(missed)
                gaps = self.gaps.get(game_id)
                if gaps is not None:
                    gaps.difference_update(range(since + 1, version + 1))
            self.outbox.send(watching_message(mid, view))
        self.seen[game_id] = max(self.seen.get(game_id, -1), version)
        for held_version, change in self.held.pop(game_id, []):
            self._send(game_id, held_version, change)

    def unwatch(self, game_id: str) -> None:
        watcher = self.watchers.pop(game_id, None)
        if watcher is not None:
            self.broker.unsubscribe(game_id, watcher)
            metrics.watchers(-1)
        self.seen.pop(game_id, None)
        self.gaps.pop(game_id, None)

    def unwatch_all(self) -> None:
        for game_id in list(self.watchers):
            self.unwatch(game_id)
