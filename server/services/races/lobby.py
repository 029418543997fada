"""Races (SPEC 2.6.1): several players on the same secret deal, live standings, ratings.

This module is the lobby: a race is created, read and listed, its seats are taken and given up,
and it is started. `RaceService` holds the race's other concerns too, each in a module of its
own: `settle` (the countdown's end and the end of a race, by the race tick), `ratings` (OpenSkill
ratings and the race board), `feed` (the watchers of races in this process) and `standings` (a
race as read).

A race is created with its deal already drawn (and certified when `winnable`), so the start is
instant. Seats are taken and given up while it is open; when it is full, or its creator starts
it with at least two players, every racer gets a game of the deal at once, each clock starting at
`starts_at`, five seconds ahead. Actions before `starts_at` and at or after the deadline are
refused by the game's own change path (`GameService`); the commit itself is conditional on the
deadline, so nothing lands after it but the game's time-out.

While a race runs, its games are visible to their racer only (code included); everyone sees the
standings: progress, never a card.
"""

from __future__ import annotations

import asyncio
import secrets
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.engine import DealCode, Game, Rule
from server.live.broker import Broker
from server.services.cursors import Cursors
from server.services.errors import Forbidden, NotFound, refused
from server.services.games import GameService, new_game_row
from server.services.notices import NoticeService, Post
from server.services.races.feed import RaceFeeds, RaceListener
from server.services.races.ratings import RatingBoard, RatingPage
from server.services.races.settle import Settler
from server.services.races.standings import RaceView
from server.services.values import Applied, Clock, Page, Principal, wall_clock_ms
from server.services.workers import Client
from server.store import games as game_rows
from server.store import players as player_rows
from server.store import races as store
from server.store.records import RaceRecord, Seat

COUNTDOWN_MS = 5_000
SEATS = (2, 8)
TIME_LIMITS = (60, 3600)


class RaceService:
    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        writers: async_sessionmaker[AsyncSession],
        games: GameService,
        broker: Broker,
        winnable_code: Callable[[Rule, Client], Awaitable[DealCode]],
        cursors: Cursors,
        clock: Clock = wall_clock_ms,
        snapshots: async_sessionmaker[AsyncSession] | None = None,
        notices: NoticeService | None = None,
    ) -> None:
        self.readers = readers
        self.snapshots = snapshots if snapshots is not None else readers
        """Reads of a whole race (its row, seats and games at one moment)."""
        self.writers = writers
        self.games = games
        self.winnable_code = winnable_code
        self.cursors = cursors
        self.clock = clock
        if notices is None:
            notices = NoticeService(readers, writers, broker, clock)
        self.notices = notices
        """Where the racers are told of joins, leaves, the start and the end (SPEC 2.6.2)."""
        self.feeds = RaceFeeds(broker, self.view, clock)
        self.settler = Settler(readers, writers, games, self.feeds, clock, self.notices)
        self.ratings = RatingBoard(readers, cursors)
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

    async def races_of(self, player_id: str) -> list[RaceView]:
        """Every race the player sits or sat in (their data export, SPEC 2.2.2)."""
        async with self.snapshots.begin() as session:
            ids = await store.races_of(session, player_id)
            return [await self.view(race_id, session) for race_id in ids]

    async def page(
        self, *, status: str | None, rule: Rule | None, limit: int, after: str | None
    ) -> Page[RaceView]:
        """A page of the public races, newest first (`status` running includes starting)."""
        position = None
        if after is not None:
            created, race_id = self.cursors.decode(after, "races", (int, str))
            position = (created, race_id)
        async with self.snapshots.begin() as session:
            ids = await store.public_races(
                session, status=status, rule=rule, limit=limit + 1, after=position
            )
            more = len(ids) > limit
            ids = ids[:limit]
            views = [await self.view(race_id, session) for race_id in ids]
        cursor = None
        if more and views:
            last = views[-1].race
            cursor = self.cursors.encode([last.created_ms, last.id], "races")
        return Page(views, cursor)

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
            code = await self.winnable_code(rule, client)
        else:
            code = DealCode(rule, secrets.randbits(128), 2)
        race_id = str(uuid.uuid4())
        now = self.clock()
        async with self.writers.begin() as session:
            await store.insert_race(
                session,
                id=race_id,
                rule=rule,
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
            posts = seat_posts("race_joined", race_id, player, seated)
            if len(seated) + 1 == race.seats:
                posts += await self._start(session, race, now)
            told = await self.notices.post_many(session, posts)
            view = await self.view(race_id, session)
        await self.notices.signal(told)
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
            told = await self.notices.post_many(
                session, seat_posts("race_left", race_id, player, rest)
            )
            view = await self.view(race_id, session)
        await self.notices.signal(told)
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
            told = await self.notices.post_many(
                session, await self._start(session, race, self.clock())
            )
            view = await self.view(race_id, session)
        await self.notices.signal(told)
        await self.publish(race_id)
        return view

    async def _locked(self, session: AsyncSession, race_id: str) -> tuple[RaceRecord, list[Seat]]:
        race = await store.race(session, race_id, lock=True)
        if race is None:
            raise NotFound(f"There is no race {race_id!r}.")
        return race, await store.seats(session, race_id)

    async def _start(self, session: AsyncSession, race: RaceRecord, now: int) -> list[Post]:
        """The countdown: a game of the race's deal for every racer, each clock at starts_at;
        the racers' `race_starting` notices to post."""
        posts: list[Post] = []
        starts = now + COUNTDOWN_MS
        deadline = starts + race.time_limit_s * 1000
        assert race.code is not None  # drawn at creation
        code = DealCode.parse(race.code)
        game = Game.deal(code)
        for seat in await store.seats(session, race.id):
            row = new_game_row(
                seat.player_id,
                code,
                game,
                now,
                secret=True,
                race_id=race.id,
                starts_ms=starts,
                deadline_ms=deadline,
            )
            await game_rows.insert_game(session, row)
            await store.update_seat(session, race.id, seat.player_id, game_id=row.id)
            data = {"race_id": race.id, "starts_ms": starts, "game_id": row.id}
            posts.append((seat.player_id, "race_starting", data))
        await store.update_race(session, race.id, status="starting", starts_ms=starts)
        return posts

    # ---------------------------------------------------------------- the other concerns

    async def on_game_change(self, applied: Applied) -> None:
        await self.settler.on_game_change(applied)

    async def settle(self, race_id: str) -> bool:
        return await self.settler.settle(race_id)

    async def tick(self) -> None:
        await self.settler.tick()

    @property
    def ticker(self) -> asyncio.Task[None] | None:
        """The race tick of this process (`settle.Settler.run`)."""
        return self.settler.ticker

    def start_ticking(self) -> None:
        self.settler.start_ticking()

    async def close(self) -> None:
        await self.settler.close()
        self.feeds.close()

    async def publish(self, race_id: str) -> None:
        await self.feeds.publish(race_id)

    def watch(self, race_id: str, listener: RaceListener) -> None:
        self.feeds.watch(race_id, listener)

    def unwatch(self, race_id: str, listener: RaceListener) -> None:
        self.feeds.unwatch(race_id, listener)

    async def board(self, rule: Rule, *, limit: int, after: str | None) -> RatingPage:
        """A page of the race board of `rule` (`ratings.RatingBoard`)."""
        return await self.ratings.page(rule, limit=limit, after=after)


def seat_posts(kind: str, race_id: str, player: Principal, told: list[Seat]) -> list[Post]:
    """`race_joined` or `race_left` (`kind`) by `player`, to the seated players `told` (never
    to who did it)."""
    data = {"race_id": race_id, "player": {"id": player.id, "name": player.name}}
    return [(s.player_id, kind, data) for s in told if s.player_id != player.id]
