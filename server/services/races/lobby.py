"""Races (SPEC 2.6.1): several players on the same secret deal, live standings, ratings.

A race is created with its deal already drawn (and certified when `winnable`), so the start is
instant. Seats are taken and given up while it is open; when it is full, or its creator starts
it with at least two players, every racer gets a game of the deal at once, each clock starting at
`starts_at`, five seconds ahead. Actions before `starts_at` and at or after the deadline are
refused by the game's own change path (`GameService`); the commit itself is conditional on the
deadline, so nothing lands after it.

The race ends when every racer's game has ended (checked on each racer's last change) or at the
deadline, whichever is first. The server moves races on by itself: every process runs `tick()`
once a second, which finds the races whose countdown or deadline is over (and open races left
30 minutes) and settles each in a transaction that locks the race row first, so that exactly one
process ends a race however many look at it; the others find it finished. Ending a race times
out the games still active, gives places, updates the racers' OpenSkill ratings (Plackett-Luce,
per rule, the `openskill` package) in the same transaction, and reveals the deal.

While a race runs, its games are visible to their racer only (code included); everyone sees the
standings: progress, never a card. Watchers of a race (`watch_race` over the WebSocket) get the
whole race document on every change, in every process: each change is published on the broker
under the key `race:<id>`, and each process with watchers reads the document once and sends it
to all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from openskill.models import PlackettLuce
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.engine import DealCode, Game, Rule
from server.engine.snapshot import dumps, loads
from server.live.broker import Broker
from server.services.errors import Forbidden, NotFound, RaceConflict
from server.services.games import GameService
from server.services.races.standings import RaceView
from server.services.values import Applied, Clock, Principal, wall_clock_ms
from server.services.workers import Client
from server.store import games as game_rows
from server.store import players as player_rows
from server.store import races as store
from server.store.models import Rating
from server.store.records import GameRecord, RaceRecord, Seat

log = logging.getLogger(__name__)

COUNTDOWN_MS = 5_000
OPEN_FOR_MS = 30 * 60_000
TICK_S = 1.0
SEATS = (2, 8)
TIME_LIMITS = (60, 3600)
MODEL = PlackettLuce()


def refused(rule: str, detail: str) -> RaceConflict:
    return RaceConflict(detail, rule=rule)


RaceListener = Callable[[int, RaceView], None]


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


class RaceService:
    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        writers: async_sessionmaker[AsyncSession],
        games: GameService,
        broker: Broker,
        winnable_code: Callable[[Rule, Client], Any],
        clock: Clock = wall_clock_ms,
        snapshots: async_sessionmaker[AsyncSession] | None = None,
    ) -> None:
        self.readers = readers
        self.snapshots = snapshots if snapshots is not None else readers
        """Reads of a whole race (its row, seats and games at one moment)."""
        self.writers = writers
        self.games = games
        self.broker = broker
        self.winnable_code = winnable_code
        self.clock = clock
        self.feeds: dict[str, Feed] = {}
        self.ticker: asyncio.Task[None] | None = None
        games.on_race_change = self.on_game_change

    # ---------------------------------------------------------------- reading

    async def view(self, race_id: str, session: AsyncSession | None = None) -> RaceView:
        if session is None:
            async with self.snapshots.begin() as session:
                return await self.view(race_id, session)
        found = await store.race(session, race_id)
        if found is None:
            raise NotFound(f"There is no race {race_id!r}.")
        seats = await store.seats(session, race_id)
        games = await store.race_games(session, race_id) if found.starts_ms is not None else []
        last = await store.last_actions(session, [g.id for g in games])
        creator = await player_rows.player_by_id(session, found.creator_id)
        name = creator.name if creator is not None else ""
        return RaceView(found, seats, games, last, self.clock(), name)

    async def page(
        self, *, status: str | None, rule: str | None, limit: int, after: tuple[int, str] | None
    ) -> tuple[list[RaceView], tuple[int, str] | None]:
        async with self.snapshots.begin() as session:
            ids = await store.public_races(
                session, status=status, rule=rule, limit=limit + 1, after=after
            )
            more = len(ids) > limit
            ids = ids[:limit]
            views = [await self.view(race_id, session) for race_id in ids]
        cursor = (views[-1].race.created_ms, views[-1].race.id) if more and views else None
        return views, cursor

    # ---------------------------------------------------------------- seats

    async def create(
        self,
        player: Principal,
        *,
        rule: Rule,
        seats: int,
        winnable: bool,
        time_limit_s: int,
        public: bool,
        client: Client,
    ) -> RaceView:
        """A new race of `player`'s; `client` is who asks, for the certification's share of
        the solver."""
        if winnable:
            code: DealCode = await self.winnable_code(rule, client)
        else:
            code = DealCode(rule, secrets.randbits(128), 2)
        race_id = str(uuid.uuid4())
        now = self.clock()
        async with self.writers.begin() as session:
            await store.insert_race(
                session,
                id=race_id,
                rule=rule.value,
                status="open",
                seats=seats,
                public=public,
                winnable=winnable,
                time_limit_s=time_limit_s,
                creator_id=player.id,
                code=str(code),
                created_ms=now,
                starts_ms=None,
                ended_ms=None,
                version=0,
            )
            await store.add_seat(session, race_id, player.id, 0, now)
            view = await self.view(race_id, session)
        await self.publish(race_id)
        return view

    async def join(self, player: Principal, race_id: str) -> RaceView:
        async with self.writers.begin() as session:
            race, seated = await self._locked(session, race_id)
            if any(s.player_id == player.id for s in seated):
                raise refused("already_seated", "You already have a seat in this race.")
            if len(seated) >= race.seats:
                raise refused("race_full", "Every seat of this race is taken.")
            if race.status != "open":
                raise refused("race_started", f"This race is no longer open: it is {race.status}.")
            now = self.clock()
            seat = max(s.seat for s in seated) + 1 if seated else 0
            await store.add_seat(session, race_id, player.id, seat, now)
            await store.update_race(session, race_id)
            if len(seated) + 1 == race.seats:
                await self._start(session, race, now)
            view = await self.view(race_id, session)
        await self.publish(race_id)
        return view

    async def leave(self, player: Principal, race_id: str) -> RaceView:
        async with self.writers.begin() as session:
            race, seated = await self._locked(session, race_id)
            if race.status != "open":
                raise refused(
                    "race_started",
                    "This race has started: abandon your game to quit it.",
                )
            if not any(s.player_id == player.id for s in seated):
                raise refused("not_seated", "You have no seat in this race.")
            await store.remove_seat(session, race_id, player.id)
            rest = [s for s in seated if s.player_id != player.id]
            changes: dict[str, Any] = {}
            if not rest:
                changes = {"status": "cancelled", "ended_ms": self.clock()}
            elif race.creator_id == player.id:
                changes = {"creator_id": rest[0].player_id}
            await store.update_race(session, race_id, **changes)
            view = await self.view(race_id, session)
        await self.publish(race_id)
        return view

    async def start(self, player: Principal, race_id: str) -> RaceView:
        async with self.writers.begin() as session:
            race, seated = await self._locked(session, race_id)
            if race.creator_id != player.id:
                raise Forbidden("Only the creator of a race may start it.")
            if race.status != "open":
                raise refused("race_started", "This race has already started.")
            if len(seated) < 2:
                raise refused("too_few_players", "A race starts with at least two players.")
            await self._start(session, race, self.clock())
            view = await self.view(race_id, session)
        await self.publish(race_id)
        return view

    async def _locked(self, session: AsyncSession, race_id: str) -> tuple[RaceRecord, list[Seat]]:
        race = await store.race(session, race_id, lock=True)
        if race is None:
            raise NotFound(f"There is no race {race_id!r}.")
        return race, await store.seats(session, race_id)

    async def _start(self, session: AsyncSession, race: RaceRecord, now: int) -> None:
        """The countdown: a game of the race's deal for every racer, each clock at starts_at."""
        starts = now + COUNTDOWN_MS
        deadline = starts + race.time_limit_s * 1000
        code = DealCode.parse(race.code)
        snapshot = dumps(Game.deal(code))
        for seat in await store.seats(session, race.id):
            game_id = str(uuid.uuid4())
            await game_rows.insert_game(
                session,
                id=game_id,
                player_id=seat.player_id,
                code=race.code,
                rule=race.rule,
                chosen=False,
                status="active",
                score=0,
                moves=0,
                version=0,
                snapshot=snapshot,
                created_ms=now,
                started_ms=starts,
                finished_ms=None,
                elapsed_ms=None,
                assisted=False,
                daily=None,
                practice=True,
                secret_deal=True,
                ranked_score=0,
                race_id=race.id,
                timed_out=False,
                deadline_ms=deadline,
                race_hidden=True,
                active_ms=now,
            )
            await store.update_seat(session, race.id, seat.player_id, game_id=game_id)
        await store.update_race(session, race.id, status="starting", starts_ms=starts)

    # ---------------------------------------------------------------- the end

    async def on_game_change(self, applied: Applied) -> None:
        """A racer's game changed (in this process): a game that ended may end the race. The
        watchers' standings follow from the change itself, which the broker brings to every
        process with watchers (`_game_changed`); only a change of the race row is signalled."""
        row = applied.view.row
        assert row.race_id is not None
        if row.status != "active":
            await self.settle(row.race_id)

    async def settle(self, race_id: str) -> bool:
        """Moves the race on if it is due: running at starts_at, ended when every game has ended
        or at the deadline, cancelled when open too long. True when it changed. Locks the race
        row first, so one process does it; the others then find nothing to do."""
        ended_games: list[GameRecord] = []
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
                deadline = race.starts_ms + race.time_limit_s * 1000
                games = await store.race_games(session, race_id, lock=True)
                if now >= deadline or all(g.status != "active" for g in games):
                    ended_games = await self._finish(session, race, games, now, deadline)
                elif race.status == "starting" and now >= race.starts_ms:
                    await store.update_race(session, race_id, status="running")
                else:
                    return False
            else:
                return False
        for game in ended_games:
            self.games.cache.forget(game.id)
        await self.publish(race_id)
        return True

    async def _finish(
        self,
        session: AsyncSession,
        race: RaceRecord,
        games: list[GameRecord],
        now: int,
        deadline: int,
    ) -> list[GameRecord]:
        """Times out the games still active, places the racers, rates them, reveals the deal."""
        finished: list[GameRecord] = []
        for game in games:
            changes: dict[str, Any] = {"race_hidden": False}
            if game.status == "active":
                state = loads(game.snapshot)
                state.abandon()
                changes |= {
                    "status": state.status.value,
                    "snapshot": dumps(state),
                    "version": game.version + 1,
                    "finished_ms": deadline,
                    "elapsed_ms": race.time_limit_s * 1000,
                    "timed_out": True,
                    "active_ms": now,
                }
            await game_rows.update_game_row(session, game.id, **changes)
            finished.append(game)
        games = await store.race_games(session, race.id)
        seats = await store.seats(session, race.id)
        last = await store.last_actions(session, [g.id for g in games])
        view = RaceView(race, seats, games, last, now, "")
        standings = view.standings()
        # The racers are locked (in id order) while their ratings change: two races with a
        # racer in common that end at once wait for each other, also for a first rating.
        await store.lock_players(session, [s.player_id for s in standings])
        current = await store.ratings(session, race.rule, [s.player_id for s in standings])
        before = [
            MODEL.create_rating([current[s.player_id].mu, current[s.player_id].sigma])
            if s.player_id in current
            else MODEL.rating()
            for s in standings
        ]
        after = MODEL.rate([[r] for r in before], ranks=[float(s.place) for s in standings])
        for s, old, (new,) in zip(standings, before, after, strict=True):
            await store.update_seat(
                session,
                race.id,
                s.player_id,
                place=s.place,
                mu_before=old.mu,
                sigma_before=old.sigma,
                mu_after=new.mu,
                sigma_after=new.sigma,
            )
            races = current[s.player_id].races + 1 if s.player_id in current else 1
            await store.save_rating(
                session,
                Rating(
                    player_id=s.player_id,
                    rule=race.rule,
                    mu=new.mu,
                    sigma=new.sigma,
                    ordinal=new.ordinal(),
                    races=races,
                ),
                exists=s.player_id in current,
            )
        await store.update_race(session, race.id, status="finished", ended_ms=min(now, deadline))
        return finished

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
            except Exception:
                log.exception("settling race %s failed", race_id)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            try:
                await self.tick()
            except Exception:
                log.exception("race tick failed")

    def start_ticking(self) -> None:
        self.ticker = asyncio.create_task(self.run())

    async def close(self) -> None:
        if self.ticker is not None:
            self.ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.ticker
        for feed in self.feeds.values():
            if feed.task is not None:
                feed.task.cancel()

    # ---------------------------------------------------------------- watching

    async def publish(self, race_id: str) -> None:
        await self.broker.signal(race_key(race_id))

    def watch(self, race_id: str, listener: RaceListener) -> None:
        feed = self.feeds.get(race_id)
        if feed is None:
            feed = self.feeds[race_id] = Feed()
            signalled = self._signalled(race_id)
            self.broker.subscribe(race_key(race_id), signalled)
            signalled(0, "")  # the first read, which starts following the race's games
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

    def _signalled(self, race_id: str) -> Callable[[int, str], None]:
        def on_signal(_version: int, _text: str) -> None:
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
                view = await self.view(race_id)
            except NotFound:
                return  # a watcher named a race that does not exist: it is told so (404)
            except Exception:
                log.exception("reading race %s failed", race_id)
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


def race_key(race_id: str) -> str:
    return f"race:{race_id}"
