"""The fault suite's fixtures: a PostgreSQL cluster of its own for the whole session (a database
migrated once, cloned for each test), a Redis of its own per test, and `show`, which prints a
run's figures to the terminal whatever pytest captures.

Under CI these never skip: no `initdb` (or no `postgres` user to run it as root), no
`redis-server`, is a failure (tests/faults/cluster.py `require`).
"""

from __future__ import annotations

import pwd
import subprocess
import uuid
from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from server.store.db import migrate
from tests.faults.cluster import OwnRedis, PgCluster, as_postgres, pg_bindir, require

TEMPLATE = "faults_template"


def has_postgres_user() -> bool:
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return False
    return True


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    bindir = pg_bindir()
    require(bindir is not None, "PostgreSQL's initdb and pg_ctl are not installed (pg_config)")
    require(bool(as_postgres()) is False or has_postgres_user(), "no postgres user to run initdb")
    assert bindir is not None
    cluster = PgCluster(bindir)
    try:
        cluster.start()
        psql(cluster, f'CREATE DATABASE "{TEMPLATE}"')
        migrate(cluster.url(TEMPLATE))
        yield cluster
    finally:
        cluster.close()


def psql(cluster: PgCluster, sql: str) -> None:
    command = [str(cluster.bindir / "psql"), "-h", "127.0.0.1", "-p", str(cluster.port)]
    command += ["-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qc", sql]
    subprocess.run(command, check=True, capture_output=True)


@pytest.fixture
def pg_database(pg_cluster: PgCluster) -> Iterator[str]:
    """A fresh database at the latest migration in the suite's own cluster (started again if
    an earlier test left it down)."""
    try:
        psql(pg_cluster, "SELECT 1")
    except subprocess.CalledProcessError:
        pg_cluster.start()
    name = f"faults_{uuid.uuid4().hex[:12]}"
    psql(pg_cluster, f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"')
    yield pg_cluster.url(name)


@pytest.fixture
async def own_redis() -> AsyncIterator[OwnRedis]:
    redis = OwnRedis()
    try:
        await redis.start()
        yield redis
    finally:
        redis.close()


@pytest.fixture
def show(capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest) -> Callable[..., None]:
    """Prints lines to the terminal, past pytest's capture, under the test's name."""

    def print_lines(*lines: str) -> None:
        with capsys.disabled():
            print(f"\n{request.node.name}:")
            for line in lines:
                print(f"  {line}")

    return print_lines
