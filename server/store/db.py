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
from collections.abc import AsyncIterator, Iterator
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import event
from sqlalchemy.engine import Connection, ExceptionContext, make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from server.files import migrations_dir
from server.settings import DEFAULT_DATABASE_WAIT_S, async_url, is_sqlite
from server.store.faults import unavailable

MIGRATIONS = migrations_dir()
CHANNEL = "solitaire_events"
"""The PostgreSQL NOTIFY channel of game events (`server.live.postgres`)."""


def make_engine(
    url: str,
    *,
    pool_size: int = 10,
    wait_s: float = DEFAULT_DATABASE_WAIT_S,
    application_name: str | None = None,
) -> AsyncEngine:
    """An async engine for a user-facing database URL (sqlite:/// or postgresql://).

    Every wait is bounded by `wait_s` (`DATABASE_WAIT_S`): a checkout from the pool, SQLite's
    lock (its busy timeout), and on PostgreSQL connecting, each statement (asyncpg's
    `command_timeout`, and the server's own `statement_timeout` besides, so that a statement the
    client gave up on does not go on holding its locks). A connection that meets a fault
    (`server.store.faults.unavailable`) is dropped, with every other connection the pool had
    when it happened: none of them is handed out again (`_drop_faulty`). `application_name`
    names its PostgreSQL sessions (`pg_stat_activity`: the replicas' readers)."""
    full = async_url(url)
    if is_sqlite(url):
        engine = create_async_engine(
            full, pool_size=pool_size, max_overflow=pool_size, pool_timeout=wait_s
        )
        _configure_sqlite(engine, wait_s)
    else:
        connect_args = asyncpg_timeouts(wait_s)
        if application_name is not None:
            connect_args["server_settings"]["application_name"] = application_name
        engine = create_async_engine(
            full,
            pool_size=pool_size,
            max_overflow=pool_size,
            pool_pre_ping=False,
            pool_timeout=wait_s,
            connect_args=connect_args,
        )
    _drop_faulty(engine)
    return engine


def asyncpg_timeouts(wait_s: float) -> dict[str, Any]:
    """asyncpg's keyword arguments that bound its waits by `wait_s`: connecting (`timeout`),
    every statement (`command_timeout`, on the client) and `statement_timeout` (on the server,
    a little later, so that the client's own timeout is the one that speaks)."""
    return {
        "timeout": wait_s,
        "command_timeout": wait_s,
        "server_settings": {"statement_timeout": str(int(wait_s * 1000) + 500)},
    }


class DriverPool:
    """An asyncpg pool (`open_pool`) behind a fair gate: a semaphore of as many places as the
    pool has connections, taken before a connection and given back after it.

    asyncpg's pool hands its free connections out through an `asyncio.Queue`, which is not fair:
    a connection given back wakes the longest waiter, but any request arriving before that
    waiter runs takes the connection first, and the waiter goes to the back of the line. Under
    load (bench/load.py: 64 connections of wrk on 10 or 20 of the pool) a few moves waited again
    and again, the moves' p99 was 130-200 ms for a median of 30, and it fell to 60 ms only with
    a connection per client. The semaphore (asyncio's, first come first served) lets no more
    requests at the pool than it has connections, so the queue never has a waiter to pass over.
    """

    def __init__(self, pool: Any, size: int) -> None:
        self.pool = pool
        self.gate = asyncio.Semaphore(size)

    async def close(self) -> None:
        await self.pool.close()


async def open_pool(url: str, size: int, wait_s: float = DEFAULT_DATABASE_WAIT_S) -> DriverPool:
    """An asyncpg pool of `size` connections for one-statement work on the driver itself (the
    commits, the token reads), its waits bounded by `wait_s`. A released connection is not
    reset (asyncpg's reset costs a round trip per statement, and one statement in its own
    implicit transaction leaves no session state: no SET, LISTEN, cursor or advisory lock):
    `pooled` is what makes that safe."""
    import asyncpg

    pool = await asyncpg.create_pool(
        **asyncpg_connect_args(url),
        min_size=0,
        max_size=size,
        reset=_keep_session,
        **asyncpg_timeouts(wait_s),
    )
    return DriverPool(pool, size)


async def _keep_session(_connection: Any) -> None:
    """The reset of a released connection of `open_pool`: nothing to do (see there)."""


@contextlib.asynccontextmanager
async def pooled(driver: DriverPool, wait_s: float = DEFAULT_DATABASE_WAIT_S) -> AsyncIterator[Any]:
    """A connection of an `open_pool` pool for one statement, waited for at most `wait_s`.

    A connection whose statement failed with anything but the database's own refusal of the
    statement (a constraint, after which the server has said it is ready again) is terminated,
    and the pool's other connections are expired (replaced when next released or acquired):
    none is handed out again. Without this a connection that met a fault could go back to the
    pool with its protocol still waiting for the end of the failed statement (asyncpg's
    `ERROR_CONSUME` state: a FATAL error arrived before the socket closed), and the next
    statement on it failed with "cannot switch to state 12; another operation (2) is in
    progress": asyncpg's own reset would have caught that with a round trip, and the no-op reset
    of `open_pool` skips it."""
    # The wait is bounded by a timer of the loop, not by acquire's own timeout: that one runs
    # the wait in a task of its own (asyncpg's wait_for), a cost on every statement.
    pool = driver.pool
    async with asyncio.timeout(wait_s):
        await driver.gate.acquire()
        try:
            connection = await pool.acquire()
        except BaseException:
            driver.gate.release()
            raise
    try:
        yield connection
    except BaseException as exc:
        if not _refused_cleanly(exc):
            connection.terminate()
            await pool.expire_connections()
        raise
    finally:
        try:
            await pool.release(connection)
        finally:
            driver.gate.release()


def _refused_cleanly(exc: BaseException) -> bool:
    """The database refused the statement itself (a constraint, a bad value): it answered in
    full and the connection is ready for the next one."""
    state = getattr(exc, "sqlstate", None)
    return isinstance(state, str) and not unavailable(exc)


def _drop_faulty(engine: AsyncEngine) -> None:
    """SQLAlchemy drops a connection, and the pool's others, when its dialect says the error was
    a disconnect; asyncpg's dialect says so only of "connection is closed". Every fault counts:
    a connection that died mid-statement can be left with a protocol in a state no later
    statement can use."""

    @event.listens_for(engine.sync_engine, "handle_error")
    def on_error(context: ExceptionContext) -> None:
        error = context.original_exception
        if not context.is_disconnect and unavailable(error) and not _statement_fault(error):
            context.is_disconnect = True


def _statement_fault(error: BaseException) -> bool:
    """A fault of one statement, not of its connection (a timeout or a lock): the connection is
    still good."""
    if isinstance(error, sqlite3.OperationalError):
        return True
    state = getattr(error, "sqlstate", None) or getattr(error.__cause__, "sqlstate", None)
    return state in ("57014", "55P03", "40001", "40P01")


def configure_sqlite_connection(connection: Any, wait_s: float = DEFAULT_DATABASE_WAIT_S) -> None:
    """The settings of every SQLite connection (SQLAlchemy's and the committer's): WAL, a busy
    timeout, foreign keys, and `synchronous=FULL` (a commit is on disk before the response that
    acknowledges it is sent).

    WAL is a property of the file, kept once set, so a connection sets it only when the file is
    not in WAL yet. Switching needs the file to itself, and SQLite answers "database is locked"
    at once rather than waiting out the busy timeout: a connection opened while another process
    holds the file (two servers starting at once on a new file, one of them migrating) tries
    again for up to the busy timeout instead of failing."""
    cursor = connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={int(wait_s * 1000)}")
    deadline = time.monotonic() + wait_s
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


def _configure_sqlite(engine: AsyncEngine, wait_s: float) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy emit BEGIN itself (the driver's own transaction handling is off).
        dbapi_connection.isolation_level = None
        configure_sqlite_connection(dbapi_connection, wait_s)

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
