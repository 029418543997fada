"""One rate budget across real server processes (issue 14, README "Configuration"): with
`RATE_LIMIT_STORAGE=redis://…` two processes charge a player and an address in one shared
budget, over HTTP and the WebSocket upgrade alike; with `memory://` each process counts its own.

Redis comes from TEST_REDIS_URL (default redis://127.0.0.1:6379 outside CI). Without CI a Redis
that does not answer skips the Redis case; with CI set it fails it. Each run speaks from
addresses of its own (the servers trust `X-Forwarded-For`) with a player of its own, so the
budgets it spends are its own even in a Redis shared with other runs.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from redis.asyncio import Redis
from redis.exceptions import RedisError
from yarl import URL

from tests.process import ROOT, ServerProcess

RATE = 0.625
"""5 requests every 8 seconds: what a burst spends stays spent however slowly the test runs."""
BUDGET = 5
REDIS_DB = 11
"""The Redis database of these tests' budgets (their keys expire within seconds)."""


async def redis_url() -> str:
    """The URL of a Redis database that answers (required under CI)."""
    base = os.environ.get("TEST_REDIS_URL")
    if base is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but TEST_REDIS_URL is not: the shared budget would not run")
        base = "redis://127.0.0.1:6379"
    url = str(URL(base).with_path(f"/{REDIS_DB}"))
    client: Any = Redis.from_url(url)
    try:
        await client.ping()
    except (OSError, RedisError) as exc:
        if os.environ.get("CI"):
            pytest.fail(f"Redis at {url} does not answer: {exc}")
        pytest.skip(f"Redis at {url} does not answer: {exc}")
    finally:
        await client.aclose()
    return url


@pytest.fixture(params=["redis", "memory"])
async def storage(request: pytest.FixtureRequest) -> str:
    return await redis_url() if request.param == "redis" else "memory://"


@pytest.fixture
async def servers(
    storage: str, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[ServerProcess, ServerProcess]]:
    """Two processes on one database, with the rate limit RATE and the budgets in `storage`."""
    monkeypatch.setenv("RATE_LIMIT_STORAGE", storage)
    monkeypatch.setenv("TRUST_FORWARDED", "1")
    pair = (
        ServerProcess(database_url, ROOT, "--rate-limit", str(RATE)),
        ServerProcess(database_url, ROOT, "--rate-limit", str(RATE)),
    )
    try:
        await asyncio.gather(*(server.ready() for server in pair))
        yield pair
    finally:
        for server in pair:
            server.close()


def fresh_address() -> str:
    """An address no other run speaks from (10.0.0.0/8 has 16 million)."""
    return "10." + ".".join(str(random.randrange(256)) for _ in range(3))


async def test_two_processes_share_one_budget(
    servers: tuple[ServerProcess, ServerProcess], storage: str
) -> None:
    shared = storage.startswith("redis")
    a, b = servers
    async with aiohttp.ClientSession() as session:
        async with session.post(
            a.base + "/api/v1/players",
            json={"name": "everywhere"},
            headers={"X-Forwarded-For": fresh_address()},
        ) as response:
            assert response.status == 201, await response.text()
            player = await response.json()
        auth = {"Authorization": f"Bearer {player['token']}"}

        # The player's budget, from addresses that have sent nothing (theirs is not spent).
        statuses = []
        for n in range(2 * BUDGET):
            server = (a, b)[n % 2]
            headers = {**auth, "X-Forwarded-For": fresh_address()}
            path = f"/api/v1/players/{player['id']}/settings"
            async with session.get(server.base + path, headers=headers) as response:
                statuses.append(response.status)
                if response.status == 429:
                    assert int(response.headers["Retry-After"]) >= 1
        if shared:
            assert statuses == [200] * BUDGET + [429] * BUDGET, statuses
            # The WebSocket upgrade is a request of the player's too: refused on either.
            for server in (a, b):
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await session.ws_connect(
                        server.base + "/api/v1/live",
                        protocols=("solitaire.v1",),
                        headers={**auth, "X-Forwarded-For": fresh_address()},
                    )
                assert refused.value.status == 429
        else:
            # Each process counts its own: twice the budget in all.
            assert statuses == [200] * (2 * BUDGET), statuses

        # An address's anonymous requests, alternating between the processes.
        address = {"X-Forwarded-For": fresh_address()}
        statuses = []
        for n in range(2 * BUDGET):
            server = (a, b)[n % 2]
            async with session.get(server.base + "/api/v1/races", headers=address) as response:
                statuses.append(response.status)
        if shared:
            assert statuses == [200] * BUDGET + [429] * BUDGET, statuses
        else:
            assert statuses == [200] * (2 * BUDGET), statuses
