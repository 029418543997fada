"""The solver as a service: hints, deal verdicts, certified-winnable deals and the daily deal.

Deals the server picks are secret RU2 codes (SPEC 1.8.1, 2.3): a winnable-only deal is the first
of fresh 128-bit codes that the solver certifies; the daily deal of a rule and UTC date is the
first certified of the codes whose seeds are the first 128 bits of
HMAC-SHA256(deal secret, "daily|<rule>|<YYYY-MM-DD>|<k>") for k = 0, 1, 2, ... The deal secret is
`DEAL_SECRET`, else one generated once and kept in the database (`load_deal_secret`), so every
process and replica deals the same daily deal, and nobody can compute one before it is shown.
The daily deal is stored (`daily_deals`) when it is first drawn, so it never changes afterwards;
a background draw (`draw_ahead`) draws and certifies each day's deals a week before the day, so
that their commitments are published ahead (`upcoming`, SPEC 1.8.2): the server could not choose
a day's deal after seeing who plays it.

The solver (`server.engine.solver`) is pure and bounded by a node budget, so a verdict is the same
in every process. It runs in worker processes, off the event loop (`server.services.workers`):
hints, certification and the daily draw in the play lane, a deal's verdict and a replay's
verification (anyone may ask) in the public lane; one costly request per client at a time. Verdicts
on deals, `unknown` ones with their budget included, are kept in the `deal_verdicts` table and
answered from it; a request that waited longer than CALL_SECONDS is answered `503` (a hint:
`unknown`)
and the search's verdict is stored when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, replace

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.engine import DealCode, Rule, Status
from server.engine.replay import Verification, verify_replay
from server.engine.snapshot import loads
from server.engine.solver import SolveStatus, solve, solve_deal
from server.services.errors import Forbidden, InvalidInput, NotFound, RaceConflict, WorkBusy
from server.services.games import GameService
from server.services.secrets import DEAL_SECRET, load_server_secret
from server.services.seeds import SeedService, SeedUse
from server.services.values import Clock, Principal, wall_clock_ms
from server.services.workers import JOB_SECONDS, Client, CostlyWork
from server.store import deals as deal_rows
from server.store.faults import log_fault, periodic
from server.store.records import day_start_ms, utc_day

DAY_MS = 86_400_000

HINT_NODES = 60_000
DEAL_NODES = 60_000
"""Node budgets: the slowest searches seen run about 6,500 nodes a second on one core of a
2-core machine (a relaxed deal whose search branches widely), so a budget of 60,000 nodes ends
within about 10 s, half of JOB_SECONDS; ordinary deals are decided in a few hundred nodes."""
CALL_SECONDS = JOB_SECONDS
"""How long a request waits for its job."""
LATE_SECONDS = 10 * JOB_SECONDS
"""How long a search that nobody waits for any more is followed, to store its verdict (a job
that takes longer than this is taken to be lost)."""
DAILY_WAIT = 10.0
AHEAD_DAYS = 7
"""The days after today whose daily deals are drawn ahead and committed to (SPEC 1.8.2)."""
DRAW_AHEAD_S = 600.0
DRAW_AHEAD_FIRST_S = 60.0
"""The background draw's period, and the delay of its first round: a process that starts and
stops at once (a command, a test) does no solver work, and a day is drawn a week before it
comes, so the delay is never what a player waits for (only a deployment's very first minute
answers `/daily/upcoming` with `503`)."""
WINNABLE_TRIES = 200
DAILY_TRIES = 500

log = logging.getLogger(__name__)


# ---------------------------------------------------------------- in the worker processes


def solve_snapshot(snapshot: str, max_nodes: int) -> tuple[str, list[str], int]:
    verdict = solve(loads(snapshot), max_nodes=max_nodes)
    return verdict.status.value, [str(m) for m in verdict.line or ()], verdict.nodes


def solve_code(code: str, take_backs: bool, max_nodes: int) -> tuple[str, int]:
    verdict = solve_deal(DealCode.parse(code), take_backs=take_backs, max_nodes=max_nodes)
    return verdict.status.value, verdict.nodes


# ---------------------------------------------------------------- in the server


def daily_candidates(secret: bytes, day: str, rule: Rule, count: int) -> list[str]:
    """The codes that the daily deal of `day` is drawn from, in order: the same in every
    process that shares the deal secret, unknowable without it."""
    codes = []
    for k in range(count):
        digest = hmac.new(secret, f"daily|{rule.value}|{day}|{k}".encode(), hashlib.sha256)
        codes.append(str(DealCode(rule, int.from_bytes(digest.digest()[:16], "big"), 2)))
    return codes


def days_after(day: str, count: int) -> list[str]:
    """`day` (a UTC date YYYY-MM-DD) and the `count` days after it."""
    start = day_start_ms(day)
    return [utc_day(start + k * DAY_MS) for k in range(count + 1)]


def random_codes(rule: Rule, count: int) -> list[str]:
    """Fresh secret RU2 codes: 128 random bits each."""
    return [str(DealCode(rule, secrets.randbits(128), 2)) for _ in range(count)]


async def load_deal_secret(
    writers: async_sessionmaker[AsyncSession], clock: Clock = wall_clock_ms
) -> bytes:
    """The deal secret kept in the database, generated by the first process that asks."""
    return await load_server_secret(writers, DEAL_SECRET, clock)


@dataclass(frozen=True, slots=True)
class Hint:
    status: str
    move: str | None
    line_length: int | None


@dataclass(frozen=True, slots=True)
class Daily:
    """The daily deal of a rule and UTC date; `revealed` once its day has ended (SPEC 2.3: until
    then only its commitment may be shown)."""

    day: str
    rule: Rule
    code: DealCode
    revealed: bool

    @property
    def reveals_ms(self) -> int:
        """When its code is revealed (SPEC 2.3): the end of its UTC day, which is the first
        millisecond of the next (`code_revealed` shows it from then on)."""
        return day_start_ms(self.day) + DAY_MS


class SolverService:
    """Hints, verdicts, certified deals, the daily deal and replay verification, each run in a
    lane of `CostlyWork` (`server.services.workers`) and held to one request in flight per
    client."""

    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        writers: async_sessionmaker[AsyncSession],
        games: GameService,
        deal_secret: bytes,
        work: CostlyWork | None = None,
        clock: Clock = wall_clock_ms,
        seeds: SeedService | None = None,
    ) -> None:
        self.readers = readers
        self.writers = writers
        self.games = games
        self.seeds = seeds
        self.deal_secret = deal_secret
        self.clock = clock
        self.work = work or CostlyWork()
        self._daily: dict[tuple[str, Rule], str] = {}
        self._drawing: dict[tuple[str, Rule], asyncio.Task[str]] = {}
        self._searching: dict[tuple[str, bool], asyncio.Task[tuple[str, int]]] = {}
        self.drawer: asyncio.Task[None] | None = None

    def close(self) -> None:
        for task in [*self._drawing.values(), *self._searching.values()]:
            task.cancel()
        self.work.close()

    async def hint(self, player: Principal, game_id: str, client: Client) -> Hint:
        """A next move from a winning line of the current position, else the verdict alone
        (`unwinnable`, or `unknown` within the budget or the wait). Every one of them marks the
        game assisted (SPEC 2.5): each is computed from the face-down cards, and "no winning
        line from here" tells a player which position to undo out of as surely as a move tells
        them where to go (a silent dead-end oracle). Only `game_over`, which the game's own
        state answers, marks nothing; nor does a hint refused before the search."""
        view = await self.games.get_game(game_id, player)
        if view.row.player_id != player.id:
            raise Forbidden("Only the player of a game may ask for a hint.")
        if view.row.race_id is not None:
            raise RaceConflict("There are no hints in a race.", rule="race_no_hints")
        if view.game.status is not Status.ACTIVE:
            return Hint("game_over", None, None)
        with self.work.one_at_a_time(client):
            try:
                status, line, _ = await self.work.play.run(
                    solve_snapshot, view.row.snapshot, HINT_NODES, seconds=CALL_SECONDS
                )
            except TimeoutError:
                status, line = SolveStatus.UNKNOWN.value, []
        await self.games.mark_assisted(player, game_id)
        if status != SolveStatus.WINNABLE or not line:
            return Hint(status, None, None)
        return Hint(status, line[0], len(line))

    async def verdict(self, code: DealCode, take_backs: bool, client: Client) -> tuple[str, int]:
        """The verdict on a deal (with or without take-backs): from the store (whoever asks),
        else from the solver (stored, an `unknown` with its node budget too, so it is not
        searched again)."""
        async with self.readers.begin() as session:
            known = await deal_rows.deal_verdicts(session, [str(code)], take_backs)
        if str(code) in known:
            return known[str(code)]
        with self.public_slot(client):
            search = self._searching.get((str(code), take_backs))
            if search is None:  # else the same search, asked for meanwhile, is joined
                search = asyncio.ensure_future(self._search(code, take_backs))
                self._searching[(str(code), take_backs)] = search
                search.add_done_callback(
                    lambda _: self._searching.pop((str(code), take_backs), None)
                )
            try:
                return await asyncio.wait_for(asyncio.shield(search), CALL_SECONDS)
            except TimeoutError:
                raise WorkBusy(
                    "The verdict on this deal is still being searched; ask again shortly."
                ) from None

    async def _search(self, code: DealCode, take_backs: bool) -> tuple[str, int]:
        """Searches a deal in the public lane and stores its verdict (also when the request
        that started it has stopped waiting)."""
        verdict: tuple[str, int] = await self.work.public.run(
            solve_code, str(code), take_backs, DEAL_NODES, seconds=LATE_SECONDS
        )
        await self._store([(str(code), *verdict)], take_backs)
        return verdict

    @contextlib.contextmanager
    def public_slot(self, client: Client) -> Iterator[None]:
        """Holds `client`'s one costly request in the public lane, refused at once (before
        anything is read: a body, the store) when the client has one running or the lane is
        full."""
        with self.work.one_at_a_time(client):
            self.work.public.check_room()
            yield

    async def verify_replay(
        self, code: DealCode, actions: list[str], claimed: dict[str, object] | None
    ) -> Verification:
        """`server.engine.replay.verify_replay` in a worker of the public lane (the caller holds a
        `public_slot`)."""
        try:
            return await self.work.public.run(
                verify_replay, code, actions, claimed, seconds=CALL_SECONDS
            )
        except TimeoutError:
            raise WorkBusy("The replay could not be verified in time; try again.") from None

    async def _store(self, verdicts: list[tuple[str, str, int]], take_backs: bool) -> None:
        for code, status, nodes in verdicts:
            try:
                async with self.writers.begin() as session:
                    await deal_rows.insert_deal_verdict(
                        session, code, take_backs, status, nodes, self.clock()
                    )
            except IntegrityError:
                pass  # another process stored the same (deterministic) verdict first

    async def _first_winnable(self, codes: list[str], known: dict[str, tuple[str, int]]) -> str:
        """The first of `codes` that is certified winnable (with take-backs), one search a job
        in the play lane so that other players' work takes turns with it; every verdict that
        comes back is stored (a caller that stops waiting drops the search in progress: a
        fresh random code is worth nothing to anyone else). Raises `LookupError` when none is."""
        for code in codes:
            verdict = known.get(code)
            if verdict is None:
                verdict = await self.work.play.run(
                    solve_code, code, True, DEAL_NODES, seconds=LATE_SECONDS
                )
                await self._store([(code, *verdict)], True)
            if verdict[0] == SolveStatus.WINNABLE:
                return code
        raise LookupError("no certified-winnable code")

    async def first_certified(
        self, codes: list[DealCode], client: Client, seconds: float = CALL_SECONDS
    ) -> int:
        """The index of the first of `codes` that the solver certifies winnable (with
        take-backs), searched in order within `seconds`; WorkBusy (`503`) when none is in time."""
        texts = [str(c) for c in codes]
        with self.work.one_at_a_time(client):
            try:
                found = await asyncio.wait_for(self._first_winnable(texts, {}), seconds)
            except (TimeoutError, LookupError):
                raise WorkBusy("No certified-winnable deal was found in time; try again.") from None
        return texts.index(found)

    async def seeded_winnable(
        self, player: Principal, rule: Rule, client: Client
    ) -> tuple[DealCode, SeedUse | None]:
        """A winnable-only deal from the player's seed pair (SPEC 1.8.2): the next nonce of
        their current pair, and the first of its candidates `client:nonce:j`, j = 0, 1, ...,
        that the solver certifies. The nonce is taken first, in a transaction of its own: one
        whose certification fails is left unused (never dealt again)."""
        if self.seeds is None:
            return await self.winnable_code(rule, client), None
        reserved = await self.seeds.reserve_now(player.id)
        candidates = [reserved.code(rule, j) for j in range(WINNABLE_TRIES)]
        j = await self.first_certified(candidates, client)
        return candidates[j], replace(reserved.use, candidate=j)

    async def winnable_code(self, rule: Rule, client: Client) -> DealCode:
        """A random deal that the solver certifies winnable (with take-backs)."""
        with self.work.one_at_a_time(client):
            try:
                found = await asyncio.wait_for(
                    self._first_winnable(random_codes(rule, WINNABLE_TRIES), {}), CALL_SECONDS
                )
            except (TimeoutError, LookupError):
                raise WorkBusy("No certified-winnable deal was found in time; try again.") from None
        return DealCode.parse(found)

    async def daily_code(self, day: str, rule: Rule) -> DealCode:
        """The daily deal of `day` (UTC date) and `rule`: the stored one, else the first
        certified-winnable code of the day's secret sequence, stored for good (when two
        processes draw it at once, the first stored wins and both answer it).

        The draw is one task per day and rule in a process, shared by every request that asks
        meanwhile; a request waits for it at most DAILY_WAIT seconds, then is answered `503` with
        `Retry-After` while the draw goes on."""
        cached = self._daily.get((day, rule))
        if cached is not None:
            return DealCode.parse(cached)
        task = self._draw_task(day, rule)
        try:
            return DealCode.parse(await asyncio.wait_for(asyncio.shield(task), DAILY_WAIT))
        except TimeoutError:
            raise WorkBusy("The daily deal is still being chosen; try again.") from None

    def _draw_task(self, day: str, rule: Rule) -> asyncio.Task[str]:
        """The draw of a day's deal in this process: the one under way, else a new one."""
        task = self._drawing.get((day, rule))
        if task is None:
            task = asyncio.ensure_future(self._draw_and_store(day, rule))
            self._drawing[(day, rule)] = task
            task.add_done_callback(lambda done: self._drawn(day, rule, done))
        return task

    def _drawn(self, day: str, rule: Rule, task: asyncio.Future[str]) -> None:
        """The draw's end: the next request starts another if it failed (the request that
        waited for it was answered; one that gave up on it was not, so it is logged here)."""
        self._drawing.pop((day, rule), None)
        if not task.cancelled() and (error := task.exception()) is not None:
            log_fault(log, f"drawing the daily deal of {day} failed", error)

    async def _draw_and_store(self, day: str, rule: Rule) -> str:
        async with self.readers.begin() as session:
            stored = await deal_rows.daily_deal(session, day, rule)
        if stored is None:
            drawn = await self._draw_daily(day, rule)
            try:
                async with self.writers.begin() as session:
                    await deal_rows.insert_daily_deal(session, day, rule, drawn, self.clock())
            except IntegrityError:
                pass  # another process stored the day's deal first
            async with self.readers.begin() as session:
                stored = await deal_rows.daily_deal(session, day, rule)
            assert stored is not None
        self._daily[(day, rule)] = stored
        return stored

    async def daily(self, rule: Rule, day: str | None = None) -> Daily:
        """The daily deal of `rule` on `day` (a UTC date YYYY-MM-DD, today by default): today's
        is drawn if need be (`daily_code`); a past day's is the one stored, if any was drawn
        (else `NotFound`); a day still to come is refused (422)."""
        today = utc_day(self.clock())
        if day is None:
            day = today
        if day > today:
            message = f"the daily deal of {day} is not dealt yet (today is {today}, UTC)"
            raise InvalidInput(f"date: {message}", errors=[{"field": "date", "message": message}])
        if day == today:
            code: DealCode | None = await self.daily_code(day, rule)
        else:
            code = await self.stored_daily_code(day, rule)
            if code is None:
                raise NotFound(f"There was no {rule.value} daily deal on {day}.")
        assert code is not None
        return Daily(day, rule, code, revealed=day < today)

    async def upcoming(self, rule: Rule) -> list[tuple[str, str]]:
        """The commitments of the daily deals of `rule` on the AHEAD_DAYS days after today (UTC),
        `(day, deal_commitment)` in date order, never a code (SPEC 1.8.2). Each is the stored
        deal of its day, drawn ahead by the background draw (`draw_ahead`), so it is the deal
        that day will deal. A day not drawn yet (a server just started, its first round still to
        come) is drawn now, as `daily_code` draws today's: the request waits for the draws at
        most DAILY_WAIT seconds in all, then is answered `WorkBusy` (`503` with `Retry-After`)
        while they go on."""
        days = days_after(utc_day(self.clock()), AHEAD_DAYS)[1:]
        missing = [day for day in days if (day, rule) not in self._daily]
        if missing:
            async with self.readers.begin() as session:
                stored = await deal_rows.daily_deals(session, missing, rule)
            for day, code in stored.items():
                self._daily[(day, rule)] = code
        missing = [day for day in days if (day, rule) not in self._daily]
        if missing:
            draws = [asyncio.shield(self._draw_task(day, rule)) for day in missing]
            # Still drawing past the wait (or a draw failed: drawn again by the next ask).
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.gather(*draws), DAILY_WAIT)
        missing = [day for day in days if (day, rule) not in self._daily]
        if missing:
            raise WorkBusy(f"The daily deal of {missing[0]} is still being drawn; try again.")
        return [(day, DealCode.parse(self._daily[(day, rule)]).commitment) for day in days]

    async def draw_ahead(self) -> None:
        """One round of the background draw: the daily deals of today and the AHEAD_DAYS days
        after it, of both rules, each drawn, certified and stored unless it is already, one
        after another (the play lane is the players' too). A draw that fails is logged (by
        `_drawn`) and tried again in the next round."""
        for day in days_after(utc_day(self.clock()), AHEAD_DAYS):
            for rule in Rule:
                if (day, rule) in self._daily:
                    continue
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._draw_task(day, rule))

    def start_drawing(self) -> None:
        """Starts the background draw: a round DRAW_AHEAD_FIRST_S after the start, then every
        DRAW_AHEAD_S, in every process (the first to store a day's deal wins; the others read
        it)."""
        self.drawer = periodic(
            "drawing the daily deals ahead",
            DRAW_AHEAD_S,
            self.draw_ahead,
            log,
            first_delay_s=DRAW_AHEAD_FIRST_S,
        )

    async def stop_drawing(self) -> None:
        if self.drawer is not None:
            self.drawer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.drawer
            self.drawer = None

    async def stored_daily_code(self, day: str, rule: Rule) -> DealCode | None:
        """The daily deal of a day if it was ever drawn (a past day never drawn has none)."""
        cached = self._daily.get((day, rule))
        if cached is None:
            async with self.readers.begin() as session:
                cached = await deal_rows.daily_deal(session, day, rule)
            if cached is None:
                return None
            self._daily[(day, rule)] = cached
        return DealCode.parse(cached)

    async def _draw_daily(self, day: str, rule: Rule) -> str:
        candidates = daily_candidates(self.deal_secret, day, rule, DAILY_TRIES)
        async with self.readers.begin() as session:
            known = await deal_rows.deal_verdicts(session, candidates, True)
        while True:
            try:
                return await self._first_winnable(candidates, known)
            except LookupError:
                raise WorkBusy("No certified-winnable daily deal was found for this day.") from None
            except (WorkBusy, TimeoutError):
                # The play lane is full, or a search outlived its wait (its verdict is stored
                # when it ends): the draw goes on after a pause.
                await asyncio.sleep(1.0)
                async with self.readers.begin() as session:
                    known = await deal_rows.deal_verdicts(session, candidates, True)
