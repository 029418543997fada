"""The one write of every accepted change to a game, committed as one unit.

A `GameCommit` is "update the game if it is still at the version before this one", with, in the
same transaction, the move-log entry (for an action), the idempotency record (for a request
with an `Idempotency-Key`) and the player's statistics when the change finishes a solo game
(`server.store.stats`). The watchers' events are sent after it (`server.live`): a `pg_notify`
in the commit would serialise every commit on PostgreSQL's notify lock. Through SQLAlchemy's
async layer each statement costs about 200 µs of CPU, so this runs on the database driver
itself, with the fewest round trips each database allows:

- PostgreSQL: one statement (`WITH g AS (UPDATE ... WHERE version = $2 RETURNING ...), m AS
  (INSERT INTO moves ...), k AS (INSERT INTO idempotency_keys ...) SELECT 1 FROM g`) in
  its own implicit transaction, on an asyncpg pool.
- SQLite: `BEGIN IMMEDIATE; UPDATE ...; INSERT ...; INSERT ...; COMMIT` in one hop to a
  dedicated writer thread with its own connection.

The outcome says what happened: `COMMITTED`; `STALE` (the game is at another version: another
process changed it; or the session the commit names no longer holds; nothing was written);
`KEY_TAKEN` (the player's idempotency key already has a record: nothing was written, and the
stored answer is the one to give). The unique (game_id, seq) key of the move log is the last
guard.

The idempotency record keeps the answer as data (`server.services.values.encode_answer`): the
change's move and the game as it was right after it, so that a retry is answered with exactly
the first answer.
"""

from __future__ import annotations

import asyncio
import enum
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from sqlalchemy.engine import make_url

from server.settings import DEFAULT_DATABASE_WAIT_S, async_url, is_sqlite
from server.store.db import DriverPool, configure_sqlite_connection, open_pool, pooled
from server.store.records import STATE_FIELDS, GameRecord
from server.store.sessions import HOLDS_SQL
from server.store.stats import Finish, pg_arity, pg_ctes, sqlite_apply


class Outcome(enum.Enum):
    COMMITTED = "committed"
    STALE = "stale"
    KEY_TAKEN = "key_taken"


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    """What a request with an `Idempotency-Key` leaves behind: the request's fingerprint and the
    answer to give again (`server.services.values.encode_answer`)."""

    player_id: str
    key: str
    fingerprint: str
    answer: str
    created_ms: int


@dataclass(frozen=True, slots=True)
class GameCommit:
    """One accepted change at `at_ms`: `row` is the game after it (at the version after the
    expected one); `move` makes its move-log entry (None for a change that is not a move);
    `record` is stored with it.
    `timed_out` marks the time-out of a race game, the one change it takes at or after its
    deadline: every other change of a race game is conditional on the deadline too."""

    row: GameRecord
    at_ms: int
    move: str | None = None
    record: IdempotencyRecord | None = None
    timed_out: bool = False
    stats: Finish | None = None
    """The figures this change adds to its player's statistics when it finishes a solo game
    (`server.store.stats`), in the same transaction."""
    session: str | None = None
    """A session that must still hold at `at_ms` (not ended, not expired, its player not
    erased) for the change to be made: the one whose token asked for it, when that token was
    not read at the start of the request (`server.services.sessions`, "known tokens"). Without
    it the change is not made, and the outcome is `STALE`."""

    def state(self) -> list[Any]:
        return [getattr(self.row, name) for name in STATE_FIELDS]


class Committer(Protocol):
    async def commit(self, c: GameCommit) -> Outcome: ...

    async def close(self) -> None: ...


# ---------------------------------------------------------------- PostgreSQL

_RECORD_COLUMNS = ("player_id", "key", "fingerprint", "answer", "created_ms")


@cache
def _pg_statement(
    log: bool,
    record: bool,
    timed_out: bool = False,
    stats: bool = False,
    daily: bool = False,
    session: bool = False,
) -> str:
    """The one statement of a commit: $1 the game id, $2 the expected version, $3 the time of
    the change, then the state columns, then the move text (`log`), the record's columns
    (`record`), the statistics (`stats`) and the session that must still
    hold (`session`). A race game takes nothing at or after its deadline but its time-out
    (`timed_out`)."""
    n = 4
    sets = []
    for name in STATE_FIELDS:
        sets.append(f"{name} = ${n}")
        n += 1
    # A time-out takes $3 too (so that the parameters are the same): it is never null.
    deadline = (
        "$3::bigint IS NOT NULL" if timed_out else "(deadline_ms IS NULL OR deadline_ms > $3)"
    )
    # The session is the last parameter: its number is known once the others are counted.
    last = n + int(log) + len(_RECORD_COLUMNS) * int(record) + int(stats) * pg_arity(daily)
    held = f" AND EXISTS ({HOLDS_SQL.format(f'${last}', '$3')})" if session else ""
    parts = [
        f"g AS (UPDATE games SET {', '.join(sets)} WHERE id = $1 AND version = $2 "
        f"AND {deadline}{held} RETURNING id, version, score)"
    ]
    if log:
        parts.append(
            "m AS (INSERT INTO moves (game_id, seq, move, score, at_ms) "
            f"SELECT id, version, ${n}, score, $3 FROM g)"
        )
        n += 1
    if record:
        values = ", ".join(f"${n + i}" for i in range(len(_RECORD_COLUMNS)))
        parts.append(
            f"k AS (INSERT INTO idempotency_keys ({', '.join(_RECORD_COLUMNS)}) "
            f"SELECT {values} FROM g)"
        )
        n += len(_RECORD_COLUMNS)
    if stats:  # the finish of a solo game: its figures (`Finish.args()`), a won daily's day too
        parts += pg_ctes(n, daily)
    return "WITH " + ", ".join(parts) + " SELECT 1 FROM g"


class PgCommitter:
    def __init__(self, pool: DriverPool, wait_s: float = DEFAULT_DATABASE_WAIT_S) -> None:
        self.pool = pool
        self.wait_s = wait_s

    @classmethod
    async def open(
        cls, url: str, size: int = 20, wait_s: float = DEFAULT_DATABASE_WAIT_S
    ) -> PgCommitter:
        return cls(await open_pool(url, size, wait_s), wait_s)

    async def commit(self, c: GameCommit) -> Outcome:
        """The one statement; a fault of the database raises (the change may or may not have
        been made: a retry with the same idempotency key tells, `KEY_TAKEN`), and the connection
        it met is not used again (`server.store.db.pooled`)."""
        import asyncpg

        args: list[Any] = [c.row.id, c.row.version - 1, c.at_ms, *c.state()]
        if c.move is not None:
            args.append(c.move)
        if c.record is not None:
            args += [getattr(c.record, name) for name in _RECORD_COLUMNS]
        if c.stats is not None:
            args += c.stats.args()
        if c.session is not None:
            args.append(c.session)
        sql = _pg_statement(
            c.move is not None,
            c.record is not None,
            c.timed_out,
            c.stats is not None,
            c.stats is not None and c.stats.daily_day is not None,
            c.session is not None,
        )
        try:
            async with pooled(self.pool, self.wait_s) as connection:
                status: str = await connection.execute(sql, *args)
        except asyncpg.UniqueViolationError as exc:
            if exc.table_name == "idempotency_keys":
                return Outcome.KEY_TAKEN
            raise
        return Outcome.COMMITTED if status.endswith(" 1") else Outcome.STALE

    async def close(self) -> None:
        await self.pool.close()


# ---------------------------------------------------------------- SQLite

_SQLITE_UPDATE = (
    f"UPDATE games SET {', '.join(f'{name} = ?' for name in STATE_FIELDS)} "
    "WHERE id = ? AND version = ? AND (deadline_ms IS NULL OR deadline_ms > ?)"
)
_SQLITE_TIME_OUT = (
    f"UPDATE games SET {', '.join(f'{name} = ?' for name in STATE_FIELDS)} "
    "WHERE id = ? AND version = ? AND ? IS NOT NULL"
)
"""The update of a race game's time-out, at or after its deadline (the same parameters)."""
_SQLITE_LOG = "INSERT INTO moves (game_id, seq, move, score, at_ms) VALUES (?, ?, ?, ?, ?)"
_SQLITE_RECORD = (
    f"INSERT INTO idempotency_keys ({', '.join(_RECORD_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in _RECORD_COLUMNS)})"
)


class SqliteCommitter:
    """The writer thread. A commit waits at most `wait_s` in all, its turn in the thread's
    queue included: one that comes up after that is refused unwritten (a fault: `503`), and the
    lock is waited for only what is left of it (SQLite's busy timeout, set per commit)."""

    def __init__(self, path: str, wait_s: float = DEFAULT_DATABASE_WAIT_S) -> None:
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-writer")
        self.path = path
        self.wait_s = wait_s
        self.connection: sqlite3.Connection | None = None
        self.busy_ms = 0

    def _connect(self) -> sqlite3.Connection:
        if self.connection is None:
            connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            configure_sqlite_connection(connection, self.wait_s)
            self.connection = connection
            self.busy_ms = int(self.wait_s * 1000)
        return self.connection

    def _commit(self, c: GameCommit, queued: float) -> Outcome:
        left_ms = int((self.wait_s - (time.monotonic() - queued)) * 1000)
        if left_ms <= 0:
            raise sqlite3.OperationalError(
                "database is locked: the commit waited its turn past DATABASE_WAIT_S"
            )
        connection = self._connect()
        if abs(left_ms - self.busy_ms) > 50:
            connection.execute(f"PRAGMA busy_timeout={left_ms}")
            self.busy_ms = left_ms
        row = c.row
        connection.execute("BEGIN IMMEDIATE")
        try:
            if c.session is not None and (
                connection.execute(HOLDS_SQL.format("?", "?"), (c.session, c.at_ms)).fetchone()
                is None
            ):
                connection.execute("ROLLBACK")
                return Outcome.STALE
            cursor = connection.execute(
                _SQLITE_TIME_OUT if c.timed_out else _SQLITE_UPDATE,
                (*c.state(), row.id, row.version - 1, c.at_ms),
            )
            if cursor.rowcount != 1:
                connection.execute("ROLLBACK")
                return Outcome.STALE
            if c.move is not None:
                connection.execute(_SQLITE_LOG, (row.id, row.version, c.move, row.score, c.at_ms))
            if c.record is not None:
                try:
                    connection.execute(
                        _SQLITE_RECORD, tuple(getattr(c.record, n) for n in _RECORD_COLUMNS)
                    )
                except sqlite3.IntegrityError as exc:
                    if "idempotency_keys" not in str(exc):
                        raise
                    connection.execute("ROLLBACK")
                    return Outcome.KEY_TAKEN
            if c.stats is not None:
                sqlite_apply(connection, c.stats)
            connection.execute("COMMIT")
            return Outcome.COMMITTED
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise

    async def commit(self, c: GameCommit) -> Outcome:
        return await asyncio.get_running_loop().run_in_executor(
            self.executor, self._commit, c, time.monotonic()
        )

    def _close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self.executor, self._close)
        self.executor.shutdown(wait=True)


async def open_committer(url: str, wait_s: float = DEFAULT_DATABASE_WAIT_S) -> Committer:
    parsed = make_url(async_url(url))
    if is_sqlite(url):
        return SqliteCommitter(parsed.database or ":memory:", wait_s)
    return await PgCommitter.open(url, wait_s=wait_s)
