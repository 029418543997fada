"""How races move on by themselves (SPEC 2.6.1): the countdown's end, the end of a race.

A race ends when every racer's game has ended (checked on each racer's last change) or at the
deadline, whichever is first. Every process runs `tick()` once a second, which finds the races
whose countdown or deadline is over (and open races left 30 minutes) and settles each.

At the deadline, the games still active are timed out first, each a change through the game's
one change path (`GameService.time_out`: a version, its watchers told, the cache swapped), so
that nothing about a game is written anywhere else. Then one transaction, which locks the race
row first so that exactly one process ends a race however many look at it, places the racers,
rates those who moved (`ratings.rate`), reveals the race's games and the deal, and marks the
race finished; the other processes find it finished. A process that stops between the two
steps leaves a race whose games have all ended: the next tick ends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.engine import Status
from server.services.games import GameService
from server.services.notices import NoticeService, Post
from server.services.races.feed import RaceFeeds
from server.services.races.ratings import MODEL, rate
from server.services.races.standings import RaceView
from server.services.values import Applied, Clock
from server.store import races as store
from server.store.faults import log_fault, periodic
from server.store.records import GameRecord, RaceRecord

log = logging.getLogger(__name__)

OPEN_FOR_MS = 30 * 60_000
"""How long a race may stay open before it is cancelled."""
TICK_S = 1.0


def deadline_of(race: RaceRecord) -> int:
    assert race.starts_ms is not None
    return race.starts_ms + race.time_limit_s * 1000


class Settler:
    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        writers: async_sessionmaker[AsyncSession],
        games: GameService,
        feeds: RaceFeeds,
        clock: Clock,
        notices: NoticeService,
    ) -> None:
        self.readers = readers
        self.writers = writers
        self.games = games
        self.feeds = feeds
        self.clock = clock
        self.notices = notices
        self.ticker: asyncio.Task[None] | None = None

    async def on_game_change(self, applied: Applied) -> None:
        """A racer's game changed (in this process): a game that ended may end the race. The
        watchers' standings follow from the change itself, which the broker brings to every
        process with watchers; only a change of the race row is signalled. A time-out is the
        settling's own change: it goes on from there."""
        row = applied.view.row
        assert row.race_id is not None
        if row.status is not Status.ACTIVE and not row.timed_out:
            await self.settle(row.race_id)

    async def settle(self, race_id: str) -> bool:
        """Moves the race on if it is due: running at starts_at, ended when every game has ended
        or at the deadline, cancelled when open too long. True when it changed. Locks the race
        row first, so one process does it; the others then find nothing to do."""
        await self._time_out(race_id)
        ended: list[GameRecord] = []
        told: set[str] = set()
        async with self.writers.begin() as session:
            race = await store.race(session, race_id, lock=True)
            if race is None:
                return False
            now = self.clock()
            if race.status == "open":
                if now - race.created_ms < OPEN_FOR_MS:
                    return False
                await store.update_race(session, race_id, status="cancelled", ended_ms=now)
            elif race.status in ("starting", "running"):
                assert race.starts_ms is not None
                games = await store.race_games(session, race_id, lock=True)
                if all(g.status is not Status.ACTIVE for g in games):
                    # Every game ended, or was timed out at the deadline.
                    ended = await self._finish(session, race, now)
                    told = await self.notices.post_many(session, await self._told(session, race))
                elif race.status == "starting" and now >= race.starts_ms:
                    await store.update_race(session, race_id, status="running")
                else:
                    return False  # on (a time-out that failed is tried again by the next tick)
            else:
                return False
        for game in ended:
            self.games.cache.forget(game.id)  # revealed: its row changed
        await self.notices.signal(told)
        await self.feeds.publish(race_id)
        return True

    async def _time_out(self, race_id: str) -> None:
        """Times out the games still active of a race past its deadline, each through the
        game's one change path (before the race row is locked: a commit takes its own
        connection)."""
        async with self.readers.begin() as session:
            race = await store.race(session, race_id)
            if race is None or race.status not in ("starting", "running"):
                return
            deadline = deadline_of(race)
            if self.clock() < deadline:
                return
            games = await store.race_games(session, race_id)
        for game in games:
            if game.status is Status.ACTIVE:
                await self.games.time_out(game.id, deadline, race.time_limit_s * 1000)

    async def _finish(self, session: AsyncSession, race: RaceRecord, now: int) -> list[GameRecord]:
        """Places the racers, rates them, reveals the race's games and its deal."""
        await store.reveal_games(session, race.id)
        games = await store.race_games(session, race.id)
        seats = await store.seats(session, race.id)
        last = await store.last_actions(session, [g.id for g in games])
        standings = RaceView(race, seats, games, last, now, "").standings()
        ended_ms = min(now, deadline_of(race))
        assert race.starts_ms is not None
        moved = {g.player_id for g in games if last.get(g.id, -1) >= race.starts_ms}
        await rate(session, race, standings, moved, ended_ms)
        await store.update_race(session, race.id, status="finished", ended_ms=ended_ms)
        return games

    async def _told(self, session: AsyncSession, race: RaceRecord) -> list[Post]:
        """What the racers of a race that just ended are told (SPEC 2.6.2): each game of
        theirs timed out (`game_ended`), then their place and rating change
        (`race_finished`; no rating when the race changed none of theirs)."""
        games = await store.race_games(session, race.id)
        reason = "timed_out"
        posts: list[Post] = [
            (g.player_id, "game_ended", {"game_id": g.id, "race_id": race.id, "reason": reason})
            for g in games
            if g.timed_out
        ]
        seats = await store.seats(session, race.id)
        ratings = await store.ratings(session, race.rule, [s.player_id for s in seats])
        for seat in seats:
            rating: dict[str, float | int] | None = None
            change: float | None = None
            held = ratings.get(seat.player_id)
            if seat.mu_after is not None and seat.sigma_after is not None and held is not None:
                rating = {
                    "mu": held.mu,
                    "sigma": held.sigma,
                    "ordinal": held.ordinal,
                    "races": held.races,
                }
                after = MODEL.create_rating([seat.mu_after, seat.sigma_after]).ordinal()
                before = after
                if seat.mu_before is not None and seat.sigma_before is not None:
                    before = MODEL.create_rating([seat.mu_before, seat.sigma_before]).ordinal()
                change = after - before
            data = {
                "race_id": race.id,
                "place": seat.place,
                "rating": rating,
                "ordinal_change": change,
            }
            posts.append((seat.player_id, "race_finished", data))
        return posts

    # ---------------------------------------------------------------- the clock

    async def tick(self) -> None:
        """Settles every race that is due (see the module docstring)."""
        now = self.clock()
        # A read (no write lock on SQLite every second): settle() locks each race it moves on.
        async with self.readers.begin() as session:
            due = await store.due_races(session, now, now - OPEN_FOR_MS)
        for race_id in due:
            try:
                await self.settle(race_id)
            except Exception as exc:
                log_fault(log, f"settling race {race_id} failed", exc)

    def start_ticking(self) -> None:
        self.ticker = periodic("the races' tick", TICK_S, self.tick, log)

    async def close(self) -> None:
        if self.ticker is not None:
            self.ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.ticker
