"""Redis for the broker tests: the server's URL (TEST_REDIS_URL), required under CI.

Without CI, tests that need Redis are skipped when it does not answer; with CI set, a missing
TEST_REDIS_URL or a Redis that does not answer fails them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.exceptions import RedisError
from yarl import URL

REDIS_DB = 9
"""The database of the tests' `last` keys (pub/sub channels are server-wide)."""


def redis_server_url() -> str:
    url = os.environ.get("TEST_REDIS_URL")
    if url is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but TEST_REDIS_URL is not: the Redis broker would not be tested")
        url = "redis://127.0.0.1:6379"
    return url


async def open_redis() -> tuple[str, Any]:
    """(the broker URL for the servers, a client of that Redis)."""
    url = str(URL(redis_server_url()).with_path(f"/{REDIS_DB}"))
    client: Any = Redis.from_url(url)
    try:
        await client.ping()
    except (OSError, RedisError) as exc:
        await client.aclose()
        if os.environ.get("CI"):
            pytest.fail(f"Redis at {url} does not answer: {exc}")
        pytest.skip(f"Redis at {url} does not answer: {exc}")
    return url, client


@pytest.fixture
async def redis() -> AsyncIterator[tuple[str, Any]]:
    url, client = await open_redis()
    try:
        yield url, client
    finally:
        await client.aclose()


def game_channel(game_id: str) -> str:
    return f"solitaire:game:{game_id}"


def race_channel(race_id: str) -> str:
    return f"solitaire:race:{race_id}"


async def numsub(client: Any, *channels: str) -> list[int]:
    """How many connections subscribe to each channel, across every process."""
    found = dict(await client.pubsub_numsub(*channels))
    return [int(found[channel.encode()]) for channel in channels]


async def subscriptions(client: Any, pid: int) -> int | None:
    """How many channels the event subscriber of server process `pid` subscribes to (None: it
    is not connected)."""
    for entry in await client.client_list():
        if entry.get("name") == f"solitaire-events-{pid}":
            return int(entry["sub"])
    return None


async def publishing(client: Any, pid: int) -> bool:
    """Whether the publishing connection of server process `pid` is connected to Redis."""
    return any(
        entry.get("name") == f"solitaire-publisher-{pid}" for entry in await client.client_list()
    )


async def eventually(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 10) -> None:
    """Waits for `check` to hold (a subscription takes effect a moment after it is asked)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"never happened: {what}")
        await asyncio.sleep(0.02)
