"""Edges of the rate budget (issue 14): IPv6 addresses stand for their /64, a rate that is not
whole stays a one-second window from 1 up, and a Redis storage that hangs neither holds the
requests nor is asked again at once."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp.test_utils import TestClient
from limits import RateLimitItemPerSecond

from server.api.limits import per_second
from tests.api.test_rate_budget import BUDGET, from_address, limited, rate_limited, too_many
from tests.conftest import ClientFactory

__all__ = ["limited"]  # the fixture, used by name


async def test_ipv6_addresses_of_one_64_network_share_one_budget(
    limited: TestClient[Any, Any],
) -> None:
    # Anonymous requests spend their address's anonymous BUDGET: hosts of one /64 spend one.
    for n in range(BUDGET):
        response = await limited.get("/api/v1/leaderboards", headers=from_address(f"2001:db8::{n}"))
        assert response.status == 200, await response.text()
    # Another host of the same /64: the same (spent) budget.
    await too_many(
        await limited.get("/api/v1/leaderboards", headers=from_address("2001:db8::ffff:1"))
    )
    # Another /64: a budget of its own.
    response = await limited.get("/api/v1/leaderboards", headers=from_address("2001:db8:0:1::1"))
    assert response.status == 200, await response.text()


def test_a_rate_from_one_up_is_whole_requests_a_second() -> None:
    assert per_second(49.99) == RateLimitItemPerSecond(50)
    assert per_second(50) == RateLimitItemPerSecond(50)
    assert per_second(2.5) == RateLimitItemPerSecond(2)  # round half to even: never 2.5 in 2 s
    assert per_second(0.625) == RateLimitItemPerSecond(5, 8)


async def test_a_redis_that_hangs_lets_requests_through_and_is_left_alone_awhile(
    aiohttp_client: ClientFactory, database_url: str
) -> None:
    """A server that accepts connections and never answers, standing for a hung Redis."""
    accepted: list[asyncio.StreamWriter] = []

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)
        await reader.read()  # until the client gives up

    hung = await asyncio.start_server(hang, "127.0.0.1", 0)
    port = hung.sockets[0].getsockname()[1]
    try:
        client = await rate_limited(
            aiohttp_client, database_url, rate=50, rate_limit_storage=f"redis://127.0.0.1:{port}/0"
        )
        response = await client.get("/api/v1/leaderboards")
        assert response.status == 200, await response.text()
        asked = len(accepted)
        assert asked >= 1  # it was asked, and did not answer
        for _ in range(10):
            response = await client.get("/api/v1/leaderboards")
            assert response.status == 200
        assert len(accepted) == asked  # not asked again meanwhile
    finally:
        for writer in accepted:
            writer.close()
        hung.close()
        await hung.wait_closed()
