"""The replica suite's fixtures: a primary and a hot standby of it for the whole session
(`tests/replicas/cluster.py`; a database migrated once on the primary, cloned for each test and
replicated), and a test client of an app reading on the standby.

Under CI these never skip: no `initdb`/`pg_basebackup` (or no `postgres` user to run them as
root) is a failure (`tests.faults.cluster.require`).
"""

from __future__ import annotations

import pwd
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import pytest
from aiohttp.test_utils import TestClient

from server.app import create_app
from server.settings import Settings
from server.store.db import migrate
from tests.conftest import Api, ClientFactory
from tests.faults.cluster import PgCluster, as_postgres, pg_bindir, require
from tests.replicas.cluster import Standby

TEMPLATE = "replicas_template"


@dataclass
class Pair:
    primary: PgCluster
    standby: Standby


@dataclass
class Databases:
    """One test's database: its URL on the primary and on the standby."""

    pair: Pair
    name: str

    @property
    def primary_url(self) -> str:
        return self.pair.primary.url(self.name)

    @property
    def standby_url(self) -> str:
        return self.pair.standby.url(self.name)

    def settings(self, **changes: Any) -> Settings:
        options: dict[str, Any] = {
            "database_url": self.primary_url,
            "database_replica_urls": (self.standby_url,),
            "replica_max_lag_s": 1.0,
            "rate_limit": 0,
            "migrate": False,
            "database_wait_s": 2.0,
        }
        options.update(changes)
        return Settings(**options)


def has_postgres_user() -> bool:
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return False
    return True


@pytest.fixture(scope="session")
def pair() -> Iterator[Pair]:
    bindir = pg_bindir()
    require(bindir is not None, "PostgreSQL's initdb and pg_ctl are not installed (pg_config)")
    require(not as_postgres() or has_postgres_user(), "no postgres user to run initdb")
    assert bindir is not None
    require((bindir / "pg_basebackup").exists(), "pg_basebackup is not installed")
    primary = PgCluster(bindir)
    standby: Standby | None = None
    try:
        primary.start()
        admin(primary, f'CREATE DATABASE "{TEMPLATE}"')
        migrate(primary.url(TEMPLATE))
        admin(primary, "CREATE EXTENSION pg_stat_statements", TEMPLATE)
        standby = Standby(primary)
        standby.start()
        yield Pair(primary, standby)
    finally:
        if standby is not None:
            standby.close()
        primary.close()


def admin(primary: PgCluster, sql: str, database: str = "postgres") -> None:
    command = [str(primary.bindir / "psql"), "-h", "127.0.0.1", "-p", str(primary.port)]
    command += ["-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-qc", sql]
    subprocess.run(command, check=True, capture_output=True)


@pytest.fixture
async def databases(pair: Pair) -> AsyncIterator[Databases]:
    """A fresh migrated database on the primary (started again if a test left it down), once
    the standby has it too; dropped afterwards."""
    try:
        admin(pair.primary, "SELECT 1")
    except Exception:
        pair.primary.start()
    await pair.standby.resume()
    name = f"rep_{uuid.uuid4().hex[:12]}"
    admin(pair.primary, f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"')
    await pair.standby.has_database(name)
    yield Databases(pair, name)
    try:
        connection = await asyncpg.connect(pair.primary.url())
        await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await connection.close()
    except (OSError, asyncpg.PostgresError):
        pass


@pytest.fixture
async def client(databases: Databases, aiohttp_client: ClientFactory) -> TestClient[Any, Any]:
    return await aiohttp_client(create_app(databases.settings()))


@pytest.fixture
def api(client: TestClient[Any, Any]) -> Api:
    return Api(client)
