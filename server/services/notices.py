"""A player's own events, "notices" (SPEC 2.6.2): what concerns a player, whoever caused it and in
whichever process, kept in the database and pushed to the player's followers (`follow_me` over
the WebSocket, `GET /api/v1/me/events` as server-sent events).

**A notice exists if and only if its cause committed.** Its producer posts it inside the
transaction of the change itself (`post`, `post_many`), and signals the broker key
`notices:<player id>` after the commit (`signal`): a rolled-back change leaves no notice, and a
follower told of one reads it from the database. The broker signal reaches every process (each
broker carries signals across processes); a follower reads what is new itself, so a signal lost
(Redis away) costs only the delay until the next one or the follower's reconnection with `since`.

**Numbers.** Each player's notices are numbered 1, 2, 3, ... in the order their transactions
commit (the player's row is locked while a number is taken, `server.store.notices`): a
follower that has seen `n` reads `> n`, and misses nothing or sees nothing twice. A player keeps
at least their last `KEEP` notices and every notice of the last `KEEP_MS` (older ones are pruned
as new ones come).

**Kinds and their fields** (besides `id`, `kind` and `at`): never a card, never a code before
its reveal.

- `race_joined`, `race_left`: `race_id`, `player` `{id, name}`: someone took or gave up a seat
  in a race the player sits in (told to the other seated players, not to who did it).
- `race_starting`: `race_id`, `starts_ms` (rendered `starts_at`), `game_id` (the player's own
  game of the race): told to every racer when the countdown begins.
- `race_finished`: `race_id`, `place`, `rating` `{mu, sigma, ordinal, races}` (the player's
  race rating of the rule after the race) and `ordinal_change` (after minus before), both null
  when the race changed no rating of theirs.
- `game_ended`: `game_id`, `race_id`, `reason`: one of the player's games ended without them
  acting: `timed_out` (a race's deadline), told when the race ends, in the race's ending
  transaction (so exactly once, whichever process ends it); `action_limit` (the game's last
  accepted action was its 5,000th: the game ended with it), told right after that action's
  commit, in a transaction of its own (a game's change commits through the committer, which
  carries no notice): a process that stops in between loses that one notice.
- `daily_revealed`: `date`, `rule`, `code`: a day whose daily deal the player played has ended,
  and its code is public. Every process checks every `DAILY_CHECK_S` whether yesterday (UTC)
  was announced (one indexed read): the first to insert the mark `daily:<date>` posts the
  notices in that transaction, so a day is announced exactly once however many processes
  look. Only yesterday is checked: a server down for a whole day does not announce it later
  (its notices would be nearly pruned by then).
- `session_revoked`: `session_id`: one of the player's sessions ended (signed out, ended from
  another session, by a password change, revoked by its app, the account erased). Told to the
  player, whose streams of that very session then end (`server.api.events`; its sockets are
  closed by their guard).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.live.broker import Broker, Change, Watcher
from server.services.values import Clock, wall_clock_ms
from server.store import notices as store
from server.store import players as player_rows
from server.store.faults import periodic
from server.store.notices import NoticeRecord as Notice
from server.store.records import utc_day

__all__ = ["KINDS", "Notice", "NoticeService", "notices_key"]

log = logging.getLogger(__name__)

KINDS = (
    "race_joined",
    "race_left",
    "race_starting",
    "race_finished",
    "game_ended",
    "daily_revealed",
    "session_revoked",
)
KEEP = 100
KEEP_MS = 24 * 3600 * 1000
DAY_MS = 24 * 3600 * 1000
DAILY_CHECK_S = 5.0
PAGE = 100
"""At most this many notices are read at once."""

Post = tuple[str, str, dict[str, Any]]
"""(player id, kind, fields) of a notice to post."""


def notices_key(player_id: str) -> str:
    """The broker key a player's notices are signalled on."""
    return f"notices:{player_id}"


class NoticeService:
    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        writers: async_sessionmaker[AsyncSession],
        broker: Broker,
        clock: Clock = wall_clock_ms,
    ) -> None:
        self.readers = readers
        self.writers = writers
        self.broker = broker
        self.clock = clock
        self.watchers: dict[tuple[str, Callable[[], None]], Watcher] = {}
        self.ticker: asyncio.Task[None] | None = None

    # ---------------------------------------------------------------- posting

    async def post(
        self, session: AsyncSession, player_id: str, kind: str, data: dict[str, Any]
    ) -> set[str]:
        """One notice, in the caller's transaction; the players to `signal` after its commit."""
        return await self.post_many(session, [(player_id, kind, data)])

    async def post_many(self, session: AsyncSession, posts: Iterable[Post]) -> set[str]:
        """Notices, in the caller's transaction (in the order given, per player); the players to
        `signal` once it has committed."""
        posts = list(posts)
        if not posts:
            return set()
        assert all(kind in KINDS for _, kind, _ in posts)
        players = sorted({player_id for player_id, _, _ in posts})
        await player_rows.lock_players(session, players)
        last = await store.last_ids(session, players)
        now = self.clock()
        rows = []
        for player_id, kind, data in posts:
            number = last.get(player_id, 0) + 1
            last[player_id] = number
            rows.append(
                {"player_id": player_id, "id": number, "kind": kind, "at_ms": now, "data": data}
            )
        await store.insert_notices(session, rows)
        for player_id in players:
            await store.prune(session, player_id, last[player_id] - KEEP + 1, now - KEEP_MS)
        return set(players)

    async def signal(self, player_ids: Iterable[str]) -> None:
        """Tells the players' followers, in every process, that they have something new (after
        the commit of what was posted)."""
        for player_id in sorted(set(player_ids)):
            try:
                await self.broker.signal(notices_key(player_id))
            except Exception as exc:  # the notice is kept: a follower finds it on its next read
                log.warning("signalling the notices of %s failed: %r", player_id, exc)

    async def game_ended(
        self, player_id: str, game_id: str, race_id: str | None, reason: str
    ) -> None:
        """`game_ended` in a transaction of its own, right after the commit of the change that
        ended the game (`GameService.on_ended`: a game's changes commit through the committer,
        which takes no notice with them)."""
        data = {"game_id": game_id, "race_id": race_id, "reason": reason}
        async with self.writers.begin() as session:
            told = await self.post(session, player_id, "game_ended", data)
        await self.signal(told)

    # ---------------------------------------------------------------- following

    def listen(self, player_id: str, callback: Callable[[], None]) -> None:
        """Calls `callback` (which must not block) whenever the player may have new notices."""

        def watcher(_version: int, _change: Change) -> None:
            callback()

        self.watchers[(player_id, callback)] = watcher
        self.broker.subscribe(notices_key(player_id), watcher)

    def unlisten(self, player_id: str, callback: Callable[[], None]) -> None:
        watcher = self.watchers.pop((player_id, callback), None)
        if watcher is not None:
            self.broker.unsubscribe(notices_key(player_id), watcher)

    async def ready(self, player_id: str) -> bool:
        """Waits until signals from other processes reach this one (after `listen`, before the
        first read, so that nothing committed in between is missed)."""
        return await self.broker.ready(notices_key(player_id))

    async def since(self, player_id: str, after_id: int, limit: int = PAGE) -> list[Notice]:
        """The player's notices numbered above `after_id`, oldest first, at most `limit`."""
        async with self.readers.begin() as session:
            return await store.notices_after(session, player_id, after_id, limit)

    async def kept(self, player_id: str) -> list[Notice]:
        """Every notice the player still has (their data export, SPEC 2.2.2)."""
        found: list[Notice] = []
        while True:
            page = await self.since(player_id, found[-1].id if found else 0, PAGE)
            found += page
            if len(page) < PAGE:
                return found

    async def last_id(self, player_id: str) -> int:
        """The number of the player's last notice (0: none yet)."""
        async with self.readers.begin() as session:
            return await store.last_id(session, player_id)

    # ---------------------------------------------------------------- the daily reveal

    async def reveal_daily(self) -> bool:
        """Announces yesterday's daily deals (UTC) to those who played them, unless a process
        did already; True when this call did."""
        now = self.clock()
        day = utc_day(now - DAY_MS)
        key = f"daily:{day}"
        async with self.readers.begin() as session:
            if await store.has_mark(session, key):
                return False
        async with self.writers.begin() as session:
            if not await store.mark(session, key, now):
                return False
            played = await store.daily_players(session, day)
            told = await self.post_many(
                session,
                [
                    (player_id, "daily_revealed", {"date": day, "rule": rule, "code": code})
                    for player_id, rule, code in played
                ],
            )
        await self.signal(told)
        return True

    def start_ticking(self) -> None:
        # The first check a period after the start, not at once: a server that has just
        # started holds no connection for it while it answers its first requests.
        self.ticker = periodic("announcing the daily reveal", DAILY_CHECK_S, self.reveal_daily, log)

    async def close(self) -> None:
        if self.ticker is not None:
            self.ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.ticker
