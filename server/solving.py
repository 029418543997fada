"""The solver as a service: hints, deal verdicts, certified-winnable deals and the daily deal.

The solver (`server.engine.solver`) is pure and bounded by a node budget, so a verdict is the
same in every process; it runs in a process pool, off the event loop, and each call is also
bounded in wall time here (a call over time answers "unknown"; its worker finishes within its
node budget). Verdicts on deals are cached in the `deal_verdicts` table.
"""

from __future__ import annotations

import asyncio
import hashlib
import multiprocessing
import secrets
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.domain import Clock, Principal, wall_clock_ms
from server.engine import DealCode, Rule, Status
from server.engine.codes import SEED_LIMIT, splitmix64
from server.engine.snapshot import loads
from server.engine.solver import SolveStatus, solve, solve_deal
from server.errors import Forbidden, Problem
from server.service import GameService
from server.store import queries

T = TypeVar("T")

HINT_NODES = 300_000
DEAL_NODES = 300_000
CALL_SECONDS = 20.0
WINNABLE_TRIES = 200
DAILY_TRIES = 500


class SolverBusy(Problem):
    status = 503
    slug = "solver-unavailable"
    title = "Solver unavailable"
    headers = {"Retry-After": "5"}  # noqa: RUF012


# ---------------------------------------------------------------- in the worker processes


def solve_snapshot(snapshot: str, max_nodes: int) -> tuple[str, list[str], int]:
    verdict = solve(loads(snapshot), max_nodes=max_nodes)
    return verdict.status.value, [str(m) for m in verdict.line or ()], verdict.nodes


def solve_code(code: str, take_backs: bool, max_nodes: int) -> tuple[str, int]:
    verdict = solve_deal(DealCode.parse(code), take_backs=take_backs, max_nodes=max_nodes)
    return verdict.status.value, verdict.nodes


def first_winnable(
    codes: list[str], max_nodes: int
) -> tuple[str | None, list[tuple[str, str, int]]]:
    """The first of `codes` certified winnable (with take-backs), and every verdict found."""
    found = []
    for code in codes:
        status, nodes = solve_code(code, True, max_nodes)
        found.append((code, status, nodes))
        if status == SolveStatus.WINNABLE:
            return code, found
    return None, found


# ---------------------------------------------------------------- in the server


def daily_candidates(day: str, rule: Rule, count: int) -> list[str]:
    """The codes that the daily deal of `day` is drawn from, in order: the same everywhere."""
    state = int.from_bytes(hashlib.sha256(f"RU1 daily {day}".encode()).digest()[:8], "big")
    codes = []
    for _ in range(count):
        state, value = splitmix64(state)
        codes.append(str(DealCode(rule, value % SEED_LIMIT)))
    return codes


@dataclass(frozen=True, slots=True)
class Hint:
    status: str
    move: str | None
    line_length: int | None


class SolverService:
    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        writers: async_sessionmaker[AsyncSession],
        games: GameService,
        workers: int = 1,
        clock: Clock = wall_clock_ms,
    ) -> None:
        self.readers = readers
        self.writers = writers
        self.games = games
        self.clock = clock
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._daily: dict[tuple[str, Rule], str] = {}

    @property
    def pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn")
            )
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    async def _call(self, fn: Callable[..., T], *args: object) -> T:
        """`fn(*args)` in the pool, bounded by CALL_SECONDS (TimeoutError past it)."""
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self.pool, fn, *args)
        return await asyncio.wait_for(future, CALL_SECONDS)

    async def hint(self, player: Principal, game_id: str) -> Hint:
        """A next move from a winning line of the current position; marks the game assisted."""
        view = await self.games.get_game(game_id, player)
        if view.row.player_id != player.id:
            raise Forbidden("Only the player of a game may ask for a hint.")
        if view.game.status is not Status.ACTIVE:
            return Hint("game_over", None, None)
        try:
            status, line, _ = await self._call(solve_snapshot, view.row.snapshot, HINT_NODES)
        except TimeoutError:
            return Hint(SolveStatus.UNKNOWN.value, None, None)
        if status != SolveStatus.WINNABLE or not line:
            return Hint(status, None, None)
        await self.games.mark_assisted(player, game_id)
        return Hint(status, line[0], len(line))

    async def verdict(self, code: DealCode, take_backs: bool = True) -> tuple[str, int]:
        """The verdict on a deal (with or without take-backs), from the cache or the solver."""
        async with self.readers.begin() as session:
            known = await queries.deal_verdicts(session, [str(code)], take_backs)
        if str(code) in known:
            return known[str(code)]
        try:
            status, nodes = await self._call(solve_code, str(code), take_backs, DEAL_NODES)
        except TimeoutError:
            return SolveStatus.UNKNOWN.value, 0
        await self._store([(str(code), status, nodes)], take_backs)
        return status, nodes

    async def _store(self, verdicts: list[tuple[str, str, int]], take_backs: bool) -> None:
        for code, status, nodes in verdicts:
            try:
                async with self.writers.begin() as session:
                    await queries.insert_deal_verdict(
                        session, code, take_backs, status, nodes, self.clock()
                    )
            except IntegrityError:
                pass  # another process stored the same (deterministic) verdict first

    async def winnable_code(self, rule: Rule) -> DealCode:
        """A random deal that the solver certifies winnable (with take-backs)."""
        codes = [str(DealCode(rule, secrets.randbelow(SEED_LIMIT))) for _ in range(WINNABLE_TRIES)]
        try:
            found, verdicts = await self._call(first_winnable, codes, DEAL_NODES)
        except TimeoutError:
            found, verdicts = None, []
        await self._store(verdicts, True)
        if found is None:
            raise SolverBusy("No certified-winnable deal was found in time; try again.")
        return DealCode.parse(found)

    async def daily_code(self, day: str, rule: Rule) -> DealCode:
        """The daily deal of `day` (UTC date): the first certified-winnable code of a sequence
        drawn from the date, so every process and every player gets the same."""
        cached = self._daily.get((day, rule))
        if cached is not None:
            return DealCode.parse(cached)
        candidates = daily_candidates(day, rule, DAILY_TRIES)
        async with self.readers.begin() as session:
            known = await queries.deal_verdicts(session, candidates, True)
        index = 0
        while index < len(candidates):
            code = candidates[index]
            if code in known:
                if known[code][0] == SolveStatus.WINNABLE:
                    self._daily[(day, rule)] = code
                    return DealCode.parse(code)
                index += 1
                continue
            chunk = [c for c in candidates[index : index + 20] if c not in known]
            try:
                _, verdicts = await self._call(first_winnable, chunk, DEAL_NODES)
            except TimeoutError:
                raise SolverBusy("The daily deal is still being chosen; try again.") from None
            await self._store(verdicts, True)
            known.update({c: (status, nodes) for c, status, nodes in verdicts})
        raise SolverBusy("No certified-winnable daily deal was found for this day.")
