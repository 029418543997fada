"""Races (SPEC 2.6.1): several players on the same secret deal, live standings, ratings.

This module is the lobby: a race is created, read and listed, its seats are taken and given up,
and it is started. `RaceService` holds the race's other concerns too, each in a module of its
own: `settle` (the countdown's end and the end of a race, by the race tick), `ratings` (OpenSkill
ratings and the race board), `feed` (the watchers of races in this process) and `standings` (a
race as read).

**The deal mixes every racer (SPEC 1.8.2).** A race is created with a server seed of its own (32
random bytes, sealed like the players' seeds: `server.services.seeds.SeedBox`), committed by its
`server_seed_hash` from then on, and no code. When the race fills, or its creator starts it, the
racers' current client seeds are read, and the code is the HMAC of the race's seed over them
(sorted, joined by a newline; `:j` added for candidates j = 0, 1, ... of a winnable race, the
first one that the solver certifies). The solver never runs inside a transaction: the start is
two phases. The first reads the race and its seats (with the joiner, for a join that takes the
last seat) and fixes the deal; the second, in a transaction that locks the race, checks that
the racers and their client seeds are still those the deal was fixed from (else it does it
again, at most FIX_TRIES times, then answers `409` to retry), stores the code, the client seeds
and the candidate, and begins the countdown (a game for every racer, each clock at `starts_at`,
five seconds ahead). A solver that cannot certify within CERTIFY_SECONDS answers that start or
join `503` (`WorkBusy`, `Retry-After`): nothing is written, the race stays open. The race's seed
is revealed with its code, once the race has finished. Races made before seeds existed (a code
drawn at their creation, no seed) start with that code.

Actions before `starts_at` and at or after the deadline are refused by the game's own change
path (`GameService`); the commit itself is conditional on the deadline, so nothing lands after
it but the game's time-out.

While a race runs, its games are visible to their racer only (code included); everyone sees the
standings: progress, never a card.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.engine import DealCode, Game, Rule
from server.engine.seeds import race_message, seed_hash, seeded_code
from server.live.broker import Broker
from server.services.cursors import Cursors
from server.services.deals import WINNABLE_TRIES
from server.services.errors import Busy, Forbidden, NotFound, refused
from server.services.games import GameService, new_game_row
from server.services.notices import NoticeService, Post
from server.services.races.feed import RaceFeeds, RaceListener
from server.services.races.ratings import RatingBoard, RatingPage
from server.services.races.settle import Settler
from server.services.races.standings import RaceView
from server.services.seeds import SeedService, new_server_seed
from server.services.values import Applied, Clock, Page, Principal, wall_clock_ms
from server.services.workers import Client
from server.store import games as game_rows
from server.store import players as player_rows
from server.store import races as store
from server.store import seeds as seed_rows
from server.store.records import RaceRecord, Seat

COUNTDOWN_MS = 5_000
SEATS = (2, 8)
TIME_LIMITS = (60, 3600)
CERTIFY_SECONDS = 20.0
"""How long a start (or the join that fills a race) waits for the solver to certify a winnable
race's deal before it answers `503` (SPEC 2.6.1)."""
FIX_TRIES = 3
"""How many times a start fixes the deal again when the racers changed meanwhile."""

Certify = Callable[[list[DealCode], Client, float], Awaitable[int]]
"""The index of the first of the codes that the solver certifies winnable, within the seconds
given (`SolverService.first_certified`; `WorkBusy` when none is)."""


@dataclass(frozen=True, slots=True)
class Fixed:
    """A race's deal as fixed for its countdown: the racers it was fixed for, their client
    seeds (sorted; None for a race made before seeds) and the candidate (winnable races)."""

    racers: frozenset[str]
    client_seeds: tuple[str, ...] | None
    candidate: int | None
    code: DealCode


class RaceService:
    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        writers: async_sessionmaker[AsyncSession],
        games: GameService,
        broker: Broker,
        certify: Certify,
        cursors: Cursors,
        clock: Clock = wall_clock_ms,
        snapshots: async_sessionmaker[AsyncSession] | None = None,
        notices: NoticeService | None = None,
        *,
        seeds: SeedService,
    ) -> None:
        self.readers = readers
        self.snapshots = snapshots if snapshots is not None else readers
        """Reads of a whole race (its row, seats and games at one moment)."""
        self.writers = writers
        self.games = games
        self.certify = certify
        self.seeds = seeds
        """The players' seeds (their client seeds) and the box that seals the races' seeds."""
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
        revealed = None
        if found.status == "finished":
            revealed = await self._server_seed(session, found)
        view = RaceView(found, seats, games, last, self.clock(), name)
        return replace(view, server_seed=revealed) if revealed is not None else view

    async def _server_seed(self, session: AsyncSession, race: RaceRecord) -> str | None:
        """The race's server seed in hex (for a finished race only: it reveals the code)."""
        if race.server_seed_hash is None:
            return None
        sealed = await store.sealed_seed(session, race.id)
        if sealed is None:
            return None
        return self.seeds.box.open(sealed, race.server_seed_hash).hex()

    async def seed_info(self, race_id: str) -> dict[str, Any] | None:
        """The `seed` member of a race game's replay (SPEC 1.8.2): the race's server seed's
        hash; the client seeds and candidate once the countdown began (null before); the
        server seed (hex) once the race has finished. None for a race made before seeds."""
        async with self.snapshots.begin() as session:
            race = await store.race(session, race_id)
            if race is None or race.server_seed_hash is None:
                return None
            revealed = await self._server_seed(session, race) if race.status == "finished" else None
        seeds = race.client_seeds
        return {
            "server_seed_hash": race.server_seed_hash,
            "client_seeds": list(seeds) if seeds is not None else None,
            "candidate": race.candidate,
            "server_seed": revealed,
        }

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
        """A new race of `player`'s, with a server seed of its own, committed by its hash, and
        no deal yet (fixed at the start). `client` is kept for the callers' sake: nothing
        costly is done here any more."""
        del client
        seed = new_server_seed()
        digest = seed_hash(seed)
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
                code=None,
                server_seed=self.seeds.box.seal(seed),
                server_seed_hash=digest,
                created_ms=now,
                starts_ms=None,
                ended_ms=None,
                version=0,
            )
            await store.add_seat(session, race_id, player.id, 0, now)
            view = await self.view(race_id, session)
        await self.publish(race_id)
        return view

    async def join(self, player: Principal, race_id: str, client: Client | None = None) -> RaceView:
        """Takes a seat; the join that takes the last one begins the countdown, its deal fixed
        first (`_fix`, out of any transaction): `503` when the solver cannot certify it in time,
        and then the join is not done. `client` is who asks, for the solver's share."""
        asker = client if client is not None else own_client(player)
        for _ in range(FIX_TRIES):
            async with self.readers.begin() as session:
                race, seated = await self._read(session, race_id)
            check_join(player, race, seated)
            fixed = None
            if len(seated) + 1 == race.seats:
                fixed = await self._fix(race, [*(s.player_id for s in seated), player.id], asker)
            async with self.writers.begin() as session:
                race, seated = await self._locked(session, race_id)
                check_join(player, race, seated)
                fills = len(seated) + 1 == race.seats
                racers = [*(s.player_id for s in seated), player.id]
                if fills and not await self._still(session, fixed, racers):
                    continue  # the racers changed meanwhile (nothing written): fix it again
                now = self.clock()
                seat = max(s.seat for s in seated) + 1 if seated else 0
                await store.add_seat(session, race_id, player.id, seat, now)
                await store.update_race(session, race_id)
                posts = seat_posts("race_joined", race_id, player, seated)
                if fills:
                    assert fixed is not None
                    posts += await self._start(session, race, now, fixed)
                told = await self.notices.post_many(session, posts)
                view = await self.view(race_id, session)
            await self.notices.signal(told)
            await self.publish(race_id)
            return view
        raise changed_meanwhile()

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

    async def start(
        self, player: Principal, race_id: str, client: Client | None = None
    ) -> RaceView:
        """The creator starts the race with the players seated: its deal fixed first, as for
        the join that fills a race (`join`)."""
        asker = client if client is not None else own_client(player)
        for _ in range(FIX_TRIES):
            async with self.readers.begin() as session:
                race, seated = await self._read(session, race_id)
            check_start(player, race, seated)
            fixed = await self._fix(race, [s.player_id for s in seated], asker)
            async with self.writers.begin() as session:
                race, seated = await self._locked(session, race_id)
                check_start(player, race, seated)
                if not await self._still(session, fixed, [s.player_id for s in seated]):
                    continue  # the racers changed meanwhile (nothing written): fix it again
                told = await self.notices.post_many(
                    session, await self._start(session, race, self.clock(), fixed)
                )
                view = await self.view(race_id, session)
            await self.notices.signal(told)
            await self.publish(race_id)
            return view
        raise changed_meanwhile()

    async def _read(self, session: AsyncSession, race_id: str) -> tuple[RaceRecord, list[Seat]]:
        race = await store.race(session, race_id)
        if race is None:
            raise NotFound(f"There is no race {race_id!r}.")
        return race, await store.seats(session, race_id)

    async def _locked(self, session: AsyncSession, race_id: str) -> tuple[RaceRecord, list[Seat]]:
        race = await store.race(session, race_id, lock=True)
        if race is None:
            raise NotFound(f"There is no race {race_id!r}.")
        return race, await store.seats(session, race_id)

    async def _client_seeds(self, racers: Sequence[str]) -> dict[str, str]:
        """The racers' current client seeds (a racer made before seeds gets their pairs)."""
        async with self.readers.begin() as session:
            found = await seed_rows.current_client_seeds(session, list(racers))
        missing = [p for p in racers if p not in found]
        if missing:
            for player_id in missing:
                await self.seeds.ensure(player_id)
            async with self.readers.begin() as session:
                found = await seed_rows.current_client_seeds(session, list(racers))
        return found

    async def _fix(self, race: RaceRecord, racers: Sequence[str], client: Client) -> Fixed:
        """The deal of `race` for `racers` (SPEC 1.8.2): the HMAC of the race's server seed over
        their client seeds, sorted (the first candidate that the solver certifies, when
        winnable, within CERTIFY_SECONDS: `WorkBusy` else). Runs out of any transaction."""
        group = frozenset(racers)
        if race.server_seed_hash is None:  # made before seeds: its code was drawn then
            assert race.code is not None
            return Fixed(group, None, None, DealCode.parse(race.code))
        found = await self._client_seeds(racers)
        seeds = tuple(sorted(found[p] for p in racers))
        async with self.readers.begin() as session:
            sealed = await store.sealed_seed(session, race.id)
        assert sealed is not None
        server_seed = self.seeds.box.open(sealed, race.server_seed_hash)
        if not race.winnable:
            code = seeded_code(server_seed, race_message(seeds), race.rule)
            return Fixed(group, seeds, None, code)
        candidates = [
            seeded_code(server_seed, race_message(seeds, j), race.rule)
            for j in range(WINNABLE_TRIES)
        ]
        j = await self.certify(candidates, client, CERTIFY_SECONDS)
        return Fixed(group, seeds, j, candidates[j])

    async def _still(self, session: AsyncSession, fixed: Fixed | None, racers: list[str]) -> bool:
        """In the start's transaction (the race locked): the deal was fixed for these racers,
        with the client seeds they have now."""
        if fixed is None or fixed.racers != frozenset(racers) or len(racers) != len(fixed.racers):
            return False
        if fixed.client_seeds is None:
            return True
        found = await seed_rows.current_client_seeds(session, racers)
        return tuple(sorted(found.get(p, "") for p in racers)) == fixed.client_seeds

    async def _start(
        self, session: AsyncSession, race: RaceRecord, now: int, fixed: Fixed
    ) -> list[Post]:
        """The countdown: the deal fixed (`fixed`) stored with the race, a game of it for every
        racer, each clock at starts_at; the racers' `race_starting` notices to post."""
        posts: list[Post] = []
        starts = now + COUNTDOWN_MS
        deadline = starts + race.time_limit_s * 1000
        code = fixed.code
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
        deal: dict[str, Any] = {}
        if fixed.client_seeds is not None:
            deal = {
                "code": str(code),
                "client_seeds": json.dumps(list(fixed.client_seeds)),
                "candidate": fixed.candidate,
            }
        await store.update_race(session, race.id, status="starting", starts_ms=starts, **deal)
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


def check_join(player: Principal, race: RaceRecord, seated: list[Seat]) -> None:
    if any(s.player_id == player.id for s in seated):
        raise refused("already_seated", "You already have a seat in this race.")
    if len(seated) >= race.seats:
        raise refused("race_full", "Every seat of this race is taken.")
    if race.status != "open":
        raise refused("race_started", f"This race is no longer open: it is {race.status}.")


def check_start(player: Principal, race: RaceRecord, seated: list[Seat]) -> None:
    if race.creator_id != player.id:
        raise Forbidden("Only the creator of a race may start it.")
    if race.status != "open":
        raise refused("race_started", "This race has already started.")
    if len(seated) < 2:
        raise refused("too_few_players", "A race starts with at least two players.")


def own_client(player: Principal) -> Client:
    """The player as the client of the solver's work, when the caller named none."""
    return Client(f"player:{player.id}", "")


def changed_meanwhile() -> Busy:
    return Busy("The racers changed while the race's deal was being fixed; try again.")


def seat_posts(kind: str, race_id: str, player: Principal, told: list[Seat]) -> list[Post]:
    """`race_joined` or `race_left` (`kind`) by `player`, to the seated players `told` (never
    to who did it)."""
    data = {"race_id": race_id, "player": {"id": player.id, "name": player.name}}
    return [(s.player_id, kind, data) for s in told if s.player_id != player.id]
