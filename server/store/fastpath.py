"""The hot path of a move: one conditional write on the database driver itself.

A move's write is "update the game if it is still at the version I read, and append to the move
log", committed as one unit. Through SQLAlchemy's async layer each statement costs about 200 µs
of CPU, so the move endpoint would be bound by it; these writers run the same guarantee with the
fewest round trips the databases allow:

- PostgreSQL: one statement (`WITH g AS (UPDATE ... WHERE version = $2 RETURNING id) INSERT ...
  SELECT ... FROM g`) in its own implicit transaction, on an asyncpg pool.
- SQLite: `BEGIN IMMEDIATE; UPDATE ... WHERE version = ?; INSERT ...; COMMIT` in one hop to a
  dedicated writer thread with its own connection.

A write that finds the game at another version changes nothing and reports False: the caller
then takes the locked path. The unique (game_id, seq) key of the move log is the last guard.
"""

from __future__ import annotations

import asyncio
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy.engine import make_url

from server.settings import async_url
from server.store.db import SQLITE_BUSY_TIMEOUT_MS


@dataclass(frozen=True, slots=True)
class MoveWrite:
    game_id: str
    expected_version: int
    version: int
    status: str
    score: int
    moves: int
    snapshot: str
    at_ms: int
    started_ms: int
    finished_ms: int | None
    elapsed_ms: int | None
    move: str
    event: str | None = None
    """PostgreSQL: the payload to `pg_notify` with the write (delivered on commit)."""


class MoveWriter(Protocol):
    async def write(self, w: MoveWrite) -> bool: ...

    async def close(self) -> None: ...


_PG_WRITE = """
WITH g AS (
    UPDATE games SET status = $4, score = $5, moves = $6, version = $3, snapshot = $7,
        started_ms = $9, finished_ms = $10, elapsed_ms = $11
    WHERE id = $1 AND version = $2
    RETURNING id
)
INSERT INTO moves (game_id, seq, move, score, at_ms)
SELECT id, $3, $12, $5, $8 FROM g
"""

_PG_WRITE_NOTIFY = """
WITH g AS (
    UPDATE games SET status = $4, score = $5, moves = $6, version = $3, snapshot = $7,
        started_ms = $9, finished_ms = $10, elapsed_ms = $11
    WHERE id = $1 AND version = $2
    RETURNING id
), m AS (
    INSERT INTO moves (game_id, seq, move, score, at_ms)
    SELECT id, $3, $12, $5, $8 FROM g
    RETURNING game_id
)
SELECT pg_notify('solitaire_events', $13) FROM m
"""

_SQLITE_UPDATE = """
UPDATE games SET status = ?, score = ?, moves = ?, version = ?, snapshot = ?,
    started_ms = ?, finished_ms = ?, elapsed_ms = ?
WHERE id = ? AND version = ?
"""
_SQLITE_INSERT = "INSERT INTO moves (game_id, seq, move, score, at_ms) VALUES (?, ?, ?, ?, ?)"


class PgMoveWriter:
    def __init__(self, pool: Any) -> None:
        self.pool = pool

    @classmethod
    async def open(cls, url: str, size: int = 10) -> PgMoveWriter:
        import asyncpg

        parsed = make_url(async_url(url))
        pool = await asyncpg.create_pool(
            host=parsed.host,
            port=parsed.port,
            user=parsed.username,
            password=parsed.password,
            database=parsed.database,
            min_size=0,
            max_size=size,
        )
        return cls(pool)

    async def write(self, w: MoveWrite) -> bool:
        args = (
            w.game_id, w.expected_version, w.version, w.status, w.score, w.moves,
            w.snapshot, w.at_ms, w.started_ms, w.finished_ms, w.elapsed_ms, w.move,
        )  # fmt: skip
        if w.event is None:
            status: str = await self.pool.execute(_PG_WRITE, *args)
        else:
            status = await self.pool.execute(_PG_WRITE_NOTIFY, *args, w.event)
        return status.endswith(" 1")

    async def close(self) -> None:
        await self.pool.close()


class SqliteMoveWriter:
    def __init__(self, path: str) -> None:
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-writer")
        self.path = path
        self.connection: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self.connection is None:
            connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            connection.execute("PRAGMA synchronous=FULL")
            connection.execute("PRAGMA foreign_keys=ON")
            self.connection = connection
        return self.connection

    def _write(self, w: MoveWrite) -> bool:
        connection = self._connect()
        connection.execute("BEGIN IMMEDIATE")
        try:
            cursor = connection.execute(
                _SQLITE_UPDATE,
                (
                    w.status,
                    w.score,
                    w.moves,
                    w.version,
                    w.snapshot,
                    w.started_ms,
                    w.finished_ms,
                    w.elapsed_ms,
                    w.game_id,
                    w.expected_version,
                ),
            )
            if cursor.rowcount != 1:
                connection.execute("ROLLBACK")
                return False
            connection.execute(_SQLITE_INSERT, (w.game_id, w.version, w.move, w.score, w.at_ms))
            connection.execute("COMMIT")
            return True
        except BaseException:
            connection.execute("ROLLBACK")
            raise

    async def write(self, w: MoveWrite) -> bool:
        return await asyncio.get_running_loop().run_in_executor(self.executor, self._write, w)

    def _close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self.executor, self._close)
        self.executor.shutdown(wait=True)


async def open_move_writer(url: str) -> MoveWriter:
    parsed = make_url(async_url(url))
    if parsed.get_backend_name() == "sqlite":
        return SqliteMoveWriter(parsed.database or ":memory:")
    return await PgMoveWriter.open(url)
