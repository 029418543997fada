"""Faults of the database told from bugs, and a connection that met one never used again
(SPEC 2.7 "Faults", "Bounded waits"), on real databases: a backend killed under a statement, a
statement past its timeout, a port that refuses, an SQLite file locked by another connection.
The suite under `tests/faults/` does the same to whole server processes."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from dataclasses import replace

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from server.app import create_app
from server.settings import Settings, async_url, is_sqlite
from server.store.db import asyncpg_connect_args, make_engine, open_pool, pooled
from server.store.faults import fault_line, unavailable
from tests.api.helpers import action_body
from tests.conftest import ClientFactory

WAIT_S = 0.5


def pg_only(url: str) -> None:
    if is_sqlite(url):
        pytest.skip("a PostgreSQL fault (this test runs on PostgreSQL)")


def sqlite_only(url: str) -> None:
    if not is_sqlite(url):
        pytest.skip("SQLite's lock (this test runs on SQLite)")


async def kill_backend(url: str, pid: int) -> None:
    """Ends one backend as an operator's `pg_terminate_backend` (or a crash) does: the server
    sends a FATAL error and closes the socket."""
    admin = await asyncpg.connect(**asyncpg_connect_args(url))
    try:
        await admin.execute("SELECT pg_terminate_backend($1)", pid)
    finally:
        await admin.close()


async def test_a_connection_killed_under_its_statement_is_never_handed_out_again(
    database_url: str,
) -> None:
    """The committer's and the token reader's pools skip asyncpg's reset on release (a round
    trip a statement). A connection whose backend died mid-statement must not go back to the
    pool still waiting for the end of that statement: the next statement on it would fail with
    "cannot switch to state 12; another operation (2) is in progress". Every later statement
    runs on a fresh backend, and succeeds."""
    pg_only(database_url)
    pool = await open_pool(database_url, 2, WAIT_S * 10)
    try:
        async with pooled(pool) as connection:
            doomed = await connection.fetchval("SELECT pg_backend_pid()")

        async def sleep_on_it() -> None:
            async with pooled(pool) as connection:
                assert await connection.fetchval("SELECT pg_backend_pid()") == doomed
                await connection.execute("SELECT pg_sleep(3)")

        sleeper = asyncio.ensure_future(sleep_on_it())
        await asyncio.sleep(0.3)
        await kill_backend(database_url, doomed)
        with pytest.raises(Exception) as caught:
            await sleeper
        assert unavailable(caught.value), repr(caught.value)
        assert "Traceback" not in fault_line(caught.value)

        pids = set()
        for _ in range(12):
            async with pooled(pool) as connection:
                pids.add(await connection.fetchval("SELECT pg_backend_pid()"))
                assert await connection.fetchval("SELECT 1") == 1
        assert doomed not in pids
    finally:
        await pool.close()


async def test_a_statement_past_the_wait_is_a_fault_and_its_connection_is_replaced(
    database_url: str,
) -> None:
    pg_only(database_url)
    pool = await open_pool(database_url, 1, WAIT_S)
    try:
        async with pooled(pool, WAIT_S) as connection:
            slow = await connection.fetchval("SELECT pg_backend_pid()")
        with pytest.raises(Exception) as caught:
            async with pooled(pool, WAIT_S) as connection:
                await connection.execute("SELECT pg_sleep(3)")
        assert unavailable(caught.value), repr(caught.value)
        async with pooled(pool, WAIT_S) as connection:
            assert await connection.fetchval("SELECT pg_backend_pid()") != slow
    finally:
        await pool.close()


async def test_faults_are_told_from_bugs(database_url: str) -> None:
    """Real errors of real databases: the faults are worth a `503` and a retry; the database's
    refusal of a statement (a constraint, bad SQL) is the server's own bug or the request's."""
    engine = make_engine(database_url, wait_s=WAIT_S)
    try:
        async with engine.connect() as connection:
            with pytest.raises(Exception) as bad_sql:
                await connection.execute(text("SELECT * FROM no_such_table"))
        assert not unavailable(bad_sql.value)
        async with engine.connect() as connection:
            with pytest.raises(Exception) as constraint:
                await connection.execute(text("INSERT INTO players (id, name) VALUES (NULL, NULL)"))
        assert not unavailable(constraint.value)
        if not is_sqlite(database_url):
            async with engine.connect() as connection:
                with pytest.raises(Exception) as slow:
                    await connection.execute(text("SELECT pg_sleep(3)"))
            assert unavailable(slow.value), repr(slow.value)
            # The engine drops the connection that timed out and answers again at once.
            async with engine.connect() as connection:
                assert (await connection.execute(text("SELECT 1"))).scalar() == 1
            with pytest.raises(Exception) as refused:
                await asyncpg.connect(host="127.0.0.1", port=1, user="x", database="x")
            assert unavailable(refused.value), repr(refused.value)
    finally:
        await engine.dispose()
    assert not unavailable(ValueError("a bug"))
    assert not unavailable(sqlite3.IntegrityError("UNIQUE constraint failed: players.name"))


def hold_lock(path: str) -> sqlite3.Connection:
    """Another process's writer holding the SQLite file (`BEGIN EXCLUSIVE`)."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    return other


async def test_a_locked_sqlite_file_is_a_503_within_the_wait_and_a_keyed_retry_lands_once(
    database_url: str, aiohttp_client: ClientFactory
) -> None:
    """A write while another connection holds SQLite's lock waits `DATABASE_WAIT_S` at most,
    then is a `503 database-unavailable` with `Retry-After`; reads go on (WAL). Once the lock is
    released, the same keyed request is applied, once."""
    sqlite_only(database_url)
    settings = Settings(
        database_url=database_url, rate_limit=0, migrate=False, database_wait_s=WAIT_S
    )
    client = await aiohttp_client(create_app(settings))
    made = await client.post("/api/v1/players", json={"name": f"ana-{uuid.uuid4().hex[:6]}"})
    auth = {"Authorization": f"Bearer {(await made.json())['token']}"}
    game = await (
        await client.post("/api/v1/games", json={"code": "RU1-C-AAAAAAB"}, headers=auth)
    ).json()
    legal = await (await client.get(f"/api/v1/games/{game['id']}/legal", headers=auth)).json()
    move = action_body(legal["moves"][0])
    keyed = {**auth, "Idempotency-Key": uuid.uuid4().hex}
    path = make_url(async_url(database_url)).database
    assert path is not None
    other = hold_lock(path)
    try:
        started = asyncio.get_running_loop().time()
        refused = await client.post(f"/api/v1/games/{game['id']}/moves", json=move, headers=keyed)
        waited = asyncio.get_running_loop().time() - started
        body = await refused.json()
        assert refused.status == 503, body
        assert body["type"].endswith("/problems/database-unavailable")
        assert refused.headers["Retry-After"] == "1"
        assert waited < 10 * WAIT_S  # bounded by the setting, not SQLite's usual 30 s
        read = await client.get(f"/api/v1/games/{game['id']}", headers=auth)
        assert read.status == 200
        assert (await read.json())["version"] == 0
    finally:
        other.execute("ROLLBACK")
        other.close()
    applied = await client.post(f"/api/v1/games/{game['id']}/moves", json=move, headers=keyed)
    assert applied.status == 200, await applied.text()
    again = await client.post(f"/api/v1/games/{game['id']}/moves", json=move, headers=keyed)
    assert again.status == 200
    first, second = await applied.json(), await again.json()
    assert first["game"]["version"] == second["game"]["version"] == 1
    log = await (await client.get(f"/api/v1/games/{game['id']}/moves", headers=auth)).json()
    assert len(log["moves"]) == 1, log


def test_the_wait_is_a_setting() -> None:
    from server.settings import SettingsError, from_args

    assert from_args([], {}).database_wait_s == 5.0
    assert from_args([], {"DATABASE_WAIT_S": "2.5"}).database_wait_s == 2.5
    for bad in ("0", "-1", "nan", "soon"):
        with pytest.raises(SettingsError):
            from_args([], {"DATABASE_WAIT_S": bad})
    assert replace(Settings(), database_wait_s=1.0).database_wait_s == 1.0
