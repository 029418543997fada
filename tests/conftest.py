"""Shared fixtures: a fresh, migrated database per test on SQLite and (when TEST_DATABASE_URL
is set) PostgreSQL, and a real app served by pytest-aiohttp's test server.

Every database test runs once per database. PostgreSQL never silently skips: when CI is set,
TEST_DATABASE_URL must be set too, and an unreachable server is an error, not a skip.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from aiohttp.test_utils import TestClient
from yarl import URL

from server.app import create_app
from server.settings import Settings
from server.store.db import migrate
from tests.names import unique_name

# When a hypothesis test fails, its pytest plugin imports its patch writer, which imports libcst,
# which uses the deprecated mypy_extensions.TypedDict: under `filterwarnings = error` that turns
# the failure report into an INTERNALERROR hiding the example. Import it once here, silenced.
with warnings.catch_warnings(), contextlib.suppress(ImportError):
    warnings.simplefilter("ignore", DeprecationWarning)
    import hypothesis.extra._patching  # noqa: F401

DATA = Path(__file__).parent / "data"
PG_URL = os.environ.get("TEST_DATABASE_URL")
DATABASES = ["sqlite"] + (["postgresql"] if PG_URL else [])


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("CI") and not PG_URL:
        raise pytest.UsageError("CI is set but TEST_DATABASE_URL is not: PostgreSQL would not run")


TIERS = {"processes": "processes", "web": "browser", "faults": "faults", "replicas": "replicas"}
"""The folders whose every test carries a tier's marker: `tests/processes/` starts real server
processes (`processes`), `tests/web/` drives Chromium (`browser`), `tests/faults/` fails the
database, Redis and server processes under players (`faults`), `tests/replicas/` reads on a
hot standby of its own (`replicas`). The fast tier is
`pytest -m "not processes and not browser and not faults and not replicas and not slow"` (the
README)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = Path(__file__).parent
    for item in items:
        folder = Path(str(item.path)).relative_to(tests).parts[0]
        if folder in TIERS:
            item.add_marker(TIERS[folder])


def load_data(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def pg_url_for(database: str) -> str:
    assert PG_URL is not None
    return str(URL(PG_URL).with_path("/" + database))


async def pg_admin(sql: str) -> None:
    assert PG_URL is not None
    connection = await asyncpg.connect(PG_URL)
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "template.db"
    migrate(f"sqlite:///{path}")
    return path


_pg_template: str | None = None


async def pg_template() -> str:
    """A database migrated once per test session, cloned for each test."""
    global _pg_template
    if _pg_template is None:
        name = f"solitaire_tpl_{uuid.uuid4().hex[:12]}"
        await pg_admin(f'CREATE DATABASE "{name}"')
        import asyncio

        await asyncio.to_thread(migrate, pg_url_for(name))
        _pg_template = name
    return _pg_template


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _pg_template is not None:
        import asyncio

        asyncio.run(pg_admin(f'DROP DATABASE IF EXISTS "{_pg_template}" WITH (FORCE)'))


@pytest.fixture(params=DATABASES)
async def database_url(
    request: pytest.FixtureRequest, tmp_path: Path, sqlite_template: Path
) -> AsyncIterator[str]:
    """The URL of a fresh database at the latest migration, dropped after the test."""
    if request.param == "sqlite":
        path = tmp_path / "solitaire.db"
        shutil.copy(sqlite_template, path)
        yield f"sqlite:///{path}"
        return
    template = await pg_template()
    name = f"solitaire_t_{uuid.uuid4().hex[:12]}"
    await pg_admin(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    try:
        yield pg_url_for(name)
    finally:
        await pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(database_url=database_url, rate_limit=0, migrate=False)


ClientFactory = Callable[..., Awaitable[TestClient[Any, Any]]]


@pytest.fixture
async def client(settings: Settings, aiohttp_client: ClientFactory) -> TestClient[Any, Any]:
    # `settings` (and so the database) first: it is then torn down after the app has closed.
    return await aiohttp_client(create_app(settings))


class Api:
    """Small helpers over the test client for the common calls."""

    def __init__(self, client: TestClient[Any, Any]) -> None:
        self.client = client

    async def player(self, name: str | None = None) -> tuple[str, dict[str, str]]:
        """A new player called `name`, or "ana-..." (names are unique on the server)."""
        name = name if name is not None else unique_name("ana")
        response = await self.client.post("/api/v1/players", json={"name": name})
        assert response.status == 201, await response.text()
        body = await response.json()
        return body["id"], {"Authorization": f"Bearer {body['token']}"}

    async def game(self, auth: dict[str, str], **body: Any) -> dict[str, Any]:
        response = await self.client.post("/api/v1/games", json=body, headers=auth)
        assert response.status == 201, await response.text()
        game: dict[str, Any] = await response.json()
        return game

    async def act(
        self, auth: dict[str, str], game_id: str, body: dict[str, Any], status: int = 200
    ) -> dict[str, Any]:
        response = await self.client.post(f"/api/v1/games/{game_id}/moves", json=body, headers=auth)
        assert response.status == status, await response.text()
        result: dict[str, Any] = await response.json()
        return result

    async def get(self, path: str, status: int = 200) -> Any:
        response = await self.client.get(path)
        assert response.status == status, await response.text()
        return await response.json()


@pytest.fixture
def api(client: TestClient[Any, Any]) -> Api:
    return Api(client)
