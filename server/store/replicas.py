"""Read replicas: PostgreSQL streaming hot standbys that take the reads which tolerate a short lag
(SPEC 2.8 "Read replicas"; `DATABASE_REPLICA_URLS`, `REPLICA_MAX_LAG_S`).

`Replicas` keeps an engine per replica (the primary's pool settings and bounded waits:
`server.store.db.make_engine`) and checks each one's lag every CHECK_PERIOD_S in the background
(`server.store.faults.periodic`): 0 when it has replayed all the WAL it received
(`pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()`: caught up, also while the primary is
idle), else `now() - pg_last_xact_replay_timestamp()`. That alone cannot see a standby whose WAL
receiver has stopped (cut off from the primary, or its `primary_conninfo` gone): it has replayed
all it received and looks caught up forever. So each check also marks the primary's flushed WAL
position (`pg_current_wal_flush_lsn()`) while the primary answers, and a replica that has not
replayed up to a mark taken more than the limit ago is behind by at least that mark's age. While
the primary does not answer, the marks are not used and the replica's own figures judge it
(SPEC 2.8: the replicas serve while the primary is down, also one that missed its last WAL).
A replica behind by more than the limit, or that does not answer within CHECK_TIMEOUT_S (on a
connection of its own), is skipped until a later check finds it caught up; one whose connection
meets a fault (`server.store.faults.unavailable`) is skipped at once.

`route(sessionmaker)` wraps a sessionmaker of the primary: a session it makes is bound to the
primary, except while the task's request is a lag-tolerant read (`CURRENT` holds its `Reads`,
set by `server.api.replicas` for the routes it names): then it is bound to a healthy replica,
chosen round robin once per request and kept for the request's other transactions, or to the
primary when none is healthy. So a service is unchanged: the same `readers.begin()` reads where
its request may. Writers are never routed.

The transactions of the lag-tolerant reads are counted by where they ran, and each replica's lag
is a gauge (`server.metrics`).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from sqlalchemy import event, text
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from server import metrics
from server.settings import DEFAULT_DATABASE_WAIT_S
from server.store.db import make_engine
from server.store.faults import fault_line, periodic

log = logging.getLogger(__name__)

CHECK_PERIOD_S: Final = 1.0
CHECK_TIMEOUT_S: Final = 1.0
"""A replica whose lag query is not answered this long is skipped (not answering)."""
LAG_SQL: Final = text(
    "SELECT pg_is_in_recovery(), CASE"
    " WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0"
    " ELSE EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()) END,"
    " pg_last_wal_replay_lsn()::text"
)
"""Whether the server is a standby, its lag in seconds (0 when it has replayed all it received,
NULL when it has replayed no transaction yet: not caught up) and how far it has replayed."""
MARK_SQL: Final = text("SELECT pg_current_wal_flush_lsn()::text")
MARKS_KEPT_S: Final = 600.0
"""How long the primary's marks are kept: the longest lag a cut-off replica is reported with."""
"""The primary's WAL position, as far as a standby can have received it."""


def lsn(text_lsn: str) -> int:
    """A WAL position (`16/B374D848`) as a number."""
    high, _, low = text_lsn.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


PRIMARY: Final = "primary"
REPLICA: Final = "replica"


@dataclass(eq=False)
class Replica:
    """One replica, its engine and its state as last checked."""

    index: int
    engine: AsyncEngine
    checker: AsyncEngine
    """The lag check's own engine (one connection): a pool full of reads does not delay it."""
    lag_s: float | None = None
    """The lag found by the last check; None before one, or when it did not answer."""
    healthy: bool = False

    @property
    def label(self) -> str:
        return str(self.index)


@dataclass(eq=False)
class Reads:
    """Where one lag-tolerant request reads: on `replica` once it has chosen one (None: not yet,
    or on the primary), never on those in `failed`; everywhere on the primary once `primary`."""

    task: asyncio.Task[Any] | None = field(default_factory=asyncio.current_task)
    """The request's task: a task it starts (copying the context) reads on the primary."""
    replica: Replica | None = None
    primary: bool = False
    failed: set[int] = field(default_factory=set)
    target: str | None = None
    """Where its last transaction ran (`primary`, `replica`); None before one."""

    def applies(self) -> bool:
        return asyncio.current_task() is self.task

    def on_primary(self) -> bool:
        """Reads the rest of the request on the primary; whether it was on a replica."""
        was = self.target == REPLICA or self.replica is not None
        self.primary = True
        self.replica = None
        return was


CURRENT: contextvars.ContextVar[Reads | None] = contextvars.ContextVar(
    "replica_reads", default=None
)
"""The `Reads` of the lag-tolerant request being handled, if any (`server.api.replicas`)."""


class Replicas:
    """The replicas of `DATABASE_REPLICA_URLS` (none: every read on the primary)."""

    def __init__(
        self,
        urls: Sequence[str],
        *,
        max_lag_s: float,
        wait_s: float = DEFAULT_DATABASE_WAIT_S,
        primary_url: str | None = None,
    ) -> None:
        self.max_lag_s = max_lag_s
        self.primary = (
            make_engine(primary_url, pool_size=1, wait_s=CHECK_TIMEOUT_S)
            if primary_url is not None and urls
            else None
        )
        """The engine that marks the primary's WAL position (one connection)."""
        self.marks: deque[tuple[float, int]] = deque()
        """(monotonic time, the primary's flushed WAL position), oldest first, kept for
        MARKS_KEPT_S (or the lag limit, if longer)."""
        self.primary_answers = True
        self.replicas = [
            Replica(
                index,
                make_engine(url, wait_s=wait_s, application_name="solitaire-replica"),
                make_engine(url, pool_size=1, wait_s=CHECK_TIMEOUT_S),
            )
            for index, url in enumerate(urls)
        ]
        for replica in self.replicas:
            self._skip_on_fault(replica)
        self._next = 0
        self._task: asyncio.Task[None] | None = None

    @property
    def configured(self) -> bool:
        return bool(self.replicas)

    async def start(self) -> None:
        """Checks every replica once (so that the first requests can use them), then every
        CHECK_PERIOD_S in the background."""
        if not self.replicas:
            return
        await self.check()
        self._task = periodic("replica lag check", CHECK_PERIOD_S, self.check, log)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        for replica in self.replicas:
            await replica.engine.dispose()
            await replica.checker.dispose()
        if self.primary is not None:
            await self.primary.dispose()

    # ---------------------------------------------------------------- health

    async def check(self) -> None:
        """Marks the primary and asks every replica at once (a primary that hangs delays no
        replica's check), then judges each replica."""
        marked, *found = await asyncio.gather(
            self._mark(), *(self._ask(replica) for replica in self.replicas)
        )
        for replica, answer in zip(self.replicas, found, strict=True):
            if isinstance(answer, str):
                self._set(replica, None, answer)
                continue
            standby, lag, replayed = answer
            seconds = 0.0 if not standby else (None if lag is None else max(0.0, float(lag)))
            if marked and standby and seconds is not None and replayed is not None:
                seconds = max(seconds, self.behind_s(lsn(replayed)))
            self._set(replica, seconds, None)

    async def _mark(self) -> bool:
        """Marks the primary's WAL position now; whether it answered. While it does not, the
        marks are not used: a replica that missed the last WAL of a primary that has just gone
        down would otherwise be behind a mark for as long as the primary stays down, and the
        replicas serve while it is down (SPEC 2.8)."""
        if self.primary is None:
            return False
        try:
            async with asyncio.timeout(CHECK_TIMEOUT_S):
                async with self.primary.connect() as connection:
                    position = (await connection.execute(MARK_SQL)).scalar_one()
        except Exception as exc:  # the primary down: the requests report its faults
            if self.primary_answers:
                log.warning("replica check: the primary's WAL position: %s", fault_line(exc))
            self.primary_answers = False
            return False
        if not self.primary_answers:
            log.info("replica check: the primary's WAL position is read again")
        self.primary_answers = True
        now = time.monotonic()
        self.marks.append((now, lsn(position)))
        horizon = max(self.max_lag_s, MARKS_KEPT_S)
        while len(self.marks) > 1 and self.marks[1][0] <= now - horizon:
            self.marks.popleft()
        return True

    def behind_s(self, replayed: int) -> float:
        """How long ago the primary had WAL that a replica which replayed up to `replayed`
        lacks: the age of the oldest mark past it (0: it has all that was marked; at most
        MARKS_KEPT_S, or the lag limit if that is longer, and a check period)."""
        now = time.monotonic()
        for at, position in self.marks:
            if position > replayed:
                return now - at
        return 0.0

    async def _ask(self, replica: Replica) -> tuple[Any, Any, Any] | str:
        """The replica's answer to LAG_SQL, or why it gave none."""
        try:
            async with asyncio.timeout(CHECK_TIMEOUT_S):
                async with replica.checker.connect() as connection:
                    standby, lag, replayed = (await connection.execute(LAG_SQL)).one()
        except Exception as exc:  # a fault, or a replica that cannot serve (a wrong URL)
            return f"not answering ({fault_line(exc)})"
        return standby, lag, replayed

    def _set(self, replica: Replica, lag_s: float | None, why: str | None) -> None:
        replica.lag_s = lag_s
        healthy = lag_s is not None and lag_s <= self.max_lag_s
        metrics.replica_lag(replica.label, math.nan if lag_s is None else lag_s)
        if healthy == replica.healthy:
            return
        replica.healthy = healthy
        if healthy:
            log.info("replica %d caught up (lag %.1f s): reads go to it", replica.index, lag_s)
        else:
            reason = why or (
                "no transaction replayed yet"
                if lag_s is None
                else f"lag {lag_s:.1f} s over REPLICA_MAX_LAG_S {self.max_lag_s:g}"
            )
            log.warning("replica %d skipped: %s", replica.index, reason)

    def failed(self, replica: Replica, exc: BaseException) -> None:
        """A read on `replica` met a fault of its connection: it is skipped until a check finds
        it answering and caught up."""
        if replica.healthy:
            replica.healthy = False
            log.warning("replica %d skipped: %s", replica.index, fault_line(exc))

    def _skip_on_fault(self, replica: Replica) -> None:
        @event.listens_for(replica.engine.sync_engine, "handle_error")
        def on_error(context: ExceptionContext) -> None:
            # After server.store.db's own listener: a fault it took for a dead connection.
            if context.is_disconnect:
                self.failed(replica, context.original_exception)

    # ---------------------------------------------------------------- routing

    def pick(self, reads: Reads) -> Replica | None:
        """The request's replica: the one it has while healthy, else the next healthy one
        round robin (none: the primary)."""
        if reads.primary:
            return None
        if reads.replica is not None and reads.replica.healthy:
            return reads.replica
        count = len(self.replicas)
        for step in range(count):
            replica = self.replicas[(self._next + step) % count]
            if replica.healthy and replica.index not in reads.failed:
                self._next = (replica.index + 1) % count
                reads.replica = replica
                return replica
        reads.replica = None
        return None

    def route(self, sessions: async_sessionmaker[AsyncSession]) -> async_sessionmaker[AsyncSession]:
        """`sessions` (of the primary), routed: see the module's docstring. Without replicas,
        `sessions` itself."""
        if not self.replicas:
            return sessions
        return Routed(self, sessions)


class Routed(async_sessionmaker[AsyncSession]):
    """A sessionmaker whose sessions of a lag-tolerant request are bound to a replica: the
    primary's sessionmaker, with the same execution options on each replica's engine (the
    snapshot readers' REPEATABLE READ)."""

    def __init__(self, replicas: Replicas, primary: async_sessionmaker[AsyncSession]) -> None:
        super().__init__(class_=primary.class_)
        self.kw = dict(primary.kw)
        bind = self.kw["bind"]
        options = bind.get_execution_options() if bind is not None else {}
        self.replicas = replicas
        self.binds = {
            r.index: r.engine.execution_options(**options) if options else r.engine
            for r in replicas.replicas
        }

    def __call__(self, **local_kw: Any) -> AsyncSession:
        reads = CURRENT.get()
        if reads is None or not reads.applies():
            return super().__call__(**local_kw)
        replica = self.replicas.pick(reads)
        reads.target = PRIMARY if replica is None else REPLICA
        metrics.read_from(reads.target)
        if replica is not None:
            local_kw.setdefault("bind", self.binds[replica.index])
        return super().__call__(**local_kw)
