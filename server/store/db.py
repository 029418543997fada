"""Database engines, sessions and migrations.

SQLite is put in WAL mode with a busy timeout, and every write transaction starts with
`BEGIN IMMEDIATE`, so that writers are serialized (SQLite's single writer) instead of failing on
a lock upgrade. Changes to a game are written by `server.store.commits`, conditional on the
game's version.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

import sqlalchemy.exc
from alembic import command
from alembic.config import Config
from sqlalchemy import event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from server.files import migrations_dir
from server.settings import async_url, is_sqlite

MIGRATIONS = migrations_dir()
SQLITE_BUSY_TIMEOUT_MS = 30_000
CHANNEL = "solitaire_events"
"""The PostgreSQL NOTIFY channel of game events (`server.live.postgres`, `server.store.commits`)."""


def make_engine(url: str, *, pool_size: int = 10) -> AsyncEngine:
    """An async engine for a user-facing database URL (sqlite:/// or postgresql://)."""
    full = async_url(url)
    if is_sqlite(url):
        engine = create_async_engine(full, pool_size=pool_size, max_overflow=pool_size)
        _configure_sqlite(engine)
        return engine
    return create_async_engine(
        full, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=False
    )


def configure_sqlite_connection(connection: Any) -> None:
    """The settings of every SQLite connection (SQLAlchemy's and the committer's): WAL, a busy
    timeout, foreign keys, and `synchronous=FULL` (a commit is on disk before the response that
    acknowledges it is sent).

    WAL is a property of the file, kept once set, so a connection sets it only when the file is
    not in WAL yet. Switching needs the file to itself, and SQLite answers "database is locked"
    at once rather than waiting out the busy timeout: a connection opened while another process
    holds the file (two servers starting at once on a new file, one of them migrating) tries
    again for up to the busy timeout instead of failing."""
    cursor = connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode")
            if str(cursor.fetchone()[0]).lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.close()


def asyncpg_connect_args(url: str) -> dict[str, Any]:
    """The keyword arguments of `asyncpg.connect` / `create_pool` for a PostgreSQL URL (the
    committer's pool and the broker's listening connection)."""
    parsed = make_url(async_url(url))
    return {
        "host": parsed.host,
        "port": parsed.port,
        "user": parsed.username,
        "password": parsed.password,
        "database": parsed.database,
    }


def _configure_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy emit BEGIN itself (the driver's own transaction handling is off).
        dbapi_connection.isolation_level = None
        configure_sqlite_connection(dbapi_connection)

    @event.listens_for(engine.sync_engine, "begin")
    def on_begin(connection: Connection) -> None:
        immediate = connection.get_execution_options().get("sqlite_immediate", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def sessionmakers(
    engine: AsyncEngine,
) -> tuple[async_sessionmaker[AsyncSession], async_sessionmaker[AsyncSession]]:
    """(readers, writers): writers take SQLite's write lock at BEGIN; the same on PostgreSQL."""
    readers = async_sessionmaker(engine, expire_on_commit=False)
    writers = async_sessionmaker(
        engine.execution_options(sqlite_immediate=True), expire_on_commit=False
    )
    return readers, writers


def snapshot_sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Readers whose statements all see one moment: REPEATABLE READ on PostgreSQL (READ
    COMMITTED lets each statement see a later one); an SQLite read transaction already does."""
    if not is_sqlite(engine.url.render_as_string(hide_password=False)):
        engine = engine.execution_options(isolation_level="REPEATABLE READ")
    return async_sessionmaker(engine, expire_on_commit=False)


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


@contextlib.contextmanager
def migration_lock(url: str) -> Iterator[None]:
    """Server processes that start together on one SQLite file migrate one at a time, as they
    do on PostgreSQL (an advisory lock, `migrations/env.py`): an exclusive `flock` on a file
    beside the database (`<file>.migrate-lock`), held while alembic runs. Without it two
    processes upgrading a new file at once both create its tables, and one fails."""
    path = make_url(async_url(url)).database if is_sqlite(url) else None
    if not path or path == ":memory:":
        yield
        return
    with open(f"{path}.migrate-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def migrate(url: str, revision: str = "head") -> None:
    """Upgrade the database at `url` to `revision` (blocking; runs its own event loop)."""
    with migration_lock(url):
        command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    command.downgrade(alembic_config(url), revision)


async def migrate_async(url: str) -> None:
    await asyncio.to_thread(migrate, url)


def unavailable(exc: BaseException) -> bool:
    """Whether `exc` says the database cannot take the request now (no connection to be had:
    the pool is exhausted, the server refuses more clients or does not answer, SQLite stays
    locked), rather than anything wrong with the request or the code: such a request is worth
    retrying a moment later (503)."""
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, sqlalchemy.exc.TimeoutError | ConnectionRefusedError):
            return True
        name = type(error).__name__
        if name in (
            "TooManyConnectionsError",
            "CannotConnectNowError",
            "ConnectionDoesNotExistError",
        ):
            return True  # asyncpg's, named so that this module does not need asyncpg
        if isinstance(error, sqlite3.OperationalError) and "locked" in str(error):
            return True
        error = getattr(error, "orig", None) or error.__cause__
    return False
