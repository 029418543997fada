"""Defences found by `bench/abuse.py` (issue 14): a client holding many requests open, a costly
request refused before its body is read, a client gone mid-body, a database that has no
connection to give. Real sockets against a real server; the tests wait for the server's own
state, never for a time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy.exc
from aiohttp.test_utils import TestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

import server.services.deals
from server.api.limits import IN_FLIGHT_PER_ADDRESS
from server.api.problems import known_problem
from server.app import create_app
from server.keys import BUDGET, SOLVER
from server.settings import Settings, async_url
from server.store.faults import unavailable
from tests.api.helpers import problem, read_answer, token_reads
from tests.conftest import ClientFactory

SLOW_DEAL = "RU1-R-AAAABOC"


@pytest.fixture
async def limited(settings: Settings, aiohttp_client: ClientFactory) -> TestClient[Any, Any]:
    """A client of an app with the default rate limit on (the other tests turn it off)."""
    app = create_app(Settings(database_url=settings.database_url, migrate=False))
    return await aiohttp_client(app)


async def until(condition: Callable[[], bool]) -> None:
    for _ in range(600):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the condition never held")


async def open_post(
    client: TestClient[Any, Any], path: str, length: int = 1000
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A POST whose head is sent and whose body is not: the server holds it, reading."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n{{".encode()
    )
    await writer.drain()
    return reader, writer


async def test_an_address_holding_many_requests_open_is_refused_at_once(
    limited: TestClient[Any, Any],
) -> None:
    in_flight = limited.app[BUDGET].in_flight
    held = [await open_post(limited, "/api/v1/players") for _ in range(IN_FLIGHT_PER_ADDRESS)]
    await until(lambda: sum(in_flight.values()) == IN_FLIGHT_PER_ADDRESS)
    response = await limited.get("/api/v1/leaderboards")
    body = await problem(response, 429)
    assert response.headers["Retry-After"] == "1"
    assert str(IN_FLIGHT_PER_ADDRESS) in body["detail"], body
    for _, writer in held:
        writer.close()
        await writer.wait_closed()
    await until(lambda: not in_flight)
    response = await limited.get("/api/v1/leaderboards")
    assert response.status == 200, await response.text()


async def test_a_verification_is_refused_before_its_body_is_read(
    client: TestClient[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the address has a costly request running, another one is refused although its
    body has not even arrived."""
    monkeypatch.setattr(server.services.deals, "DEAL_NODES", 200_000)
    work = client.app[SOLVER].work
    slow = asyncio.ensure_future(client.get(f"/api/v1/deals/{SLOW_DEAL}/winnable"))
    await until(lambda: work.public.pending == 1)
    reader, writer = await open_post(client, "/api/v1/replays/verify", length=200_000)
    status, headers, body = await read_answer(reader)
    assert (status, body["type"], headers["retry-after"]) == (
        429,
        "/problems/too-many-requests",
        "1",
    )
    writer.close()
    slow.cancel()


@pytest.mark.slow
async def test_a_client_gone_mid_body_is_one_line_not_a_traceback(
    client: TestClient[Any, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    _, writer = await open_post(client, "/api/v1/players", length=5000)
    writer.write(b'"name": "gone')
    await writer.drain()
    writer.close()
    await writer.wait_closed()
    # The server notices and answers nobody; then it serves as before.
    for _ in range(100):
        response = await client.get("/healthz")
        assert response.status == 200
        if any("unhandled" in r.getMessage() or r.exc_info for r in caplog.records):
            break
        await asyncio.sleep(0.02)
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]


async def test_a_database_with_no_connection_to_give_is_a_503(database_url: str) -> None:
    """A real pool with one connection, held: the next request waits its timeout and fails;
    that failure is 'unavailable', answered 503 with Retry-After, not a 500."""
    engine = create_async_engine(
        async_url(database_url), pool_size=1, max_overflow=0, pool_timeout=0.1
    )
    try:
        async with engine.connect() as held:
            await held.execute(text("SELECT 1"))
            with pytest.raises(sqlalchemy.exc.TimeoutError) as caught:
                async with engine.connect():
                    pass
    finally:
        await engine.dispose()
    assert unavailable(caught.value)
    body = known_problem(caught.value, "en")
    assert body is not None and (body["status"], body["type"]) == (
        503,
        "/problems/database-unavailable",
    )
    assert not unavailable(ValueError("a bug is not the database's fault"))
    assert known_problem(ValueError("x"), "en") is None


async def test_a_made_up_token_is_looked_up_once(client: TestClient[Any, Any]) -> None:
    """Flooding with a made-up token costs one database read, not one a request (the read of a
    token is on the driver: `server.store.sessions.TokenReader`)."""
    async with token_reads(client) as lookups:
        for _ in range(5):
            response = await client.post(
                "/api/v1/games", json={}, headers={"Authorization": "Bearer made-up-token"}
            )
            await problem(response, 401)
    assert len(lookups) == 1, lookups
