"""The daily deal across real server processes and databases (SPEC 2.3 "Fair play", 2.5; issue
12). The daily deal is drawn from a deal secret: `DEAL_SECRET`, else one generated once and kept
in the database. So two processes on one database deal the same daily deal (for each rule, also
when they start at the same moment, and after they restart), a fresh database deals another one,
and two fresh databases with the same `DEAL_SECRET` deal the same one.

Today's code is secret, so the deals are compared by their `deal_commitment`. Each test runs on
both databases (two processes on one SQLite file work too); the other database is a fresh SQLite
file that the server migrates itself.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from sqlalchemy import func, select

from server.store.db import make_engine
from server.store.models import ServerSecret
from tests.names import unique_name
from tests.process import ServerProcess

RULES = ("classic", "relaxed")
Deals = dict[str, dict[str, Any]]


async def dailies(session: aiohttp.ClientSession, base: str) -> Deals:
    """Today's daily deal of each rule, as a process shows it. While the deal is still being
    drawn the answer is 503 with Retry-After: like a client, ask again after it (a few times)."""
    found = {}
    for rule in RULES:
        for _ in range(10):
            async with session.get(f"{base}/api/v1/daily", params={"rule": rule}) as response:
                body = await response.json()
                if response.status != 503:
                    break
                await asyncio.sleep(float(response.headers["Retry-After"]))
        assert response.status == 200, body
        assert body["rule"] == rule and body["code"] is None, body
        assert len(body["deal_commitment"]) == 64, body
        found[rule] = body
    return found


async def todays_deals(*servers: ServerProcess) -> list[Deals]:
    """Today's daily deals of each server, all read on the same UTC day."""
    async with aiohttp.ClientSession() as session:
        for _ in range(3):
            found = await asyncio.gather(*(dailies(session, server.base) for server in servers))
            if len({deal["date"] for deals in found for deal in deals.values()}) == 1:
                return list(found)
    raise AssertionError("the UTC day kept changing")


def commitments(deals: Deals) -> dict[str, str]:
    return {rule: deal["deal_commitment"] for rule, deal in deals.items()}


async def daily_game(base: str, rule: str) -> dict[str, Any]:
    """A new player's game of today's daily deal of `rule`."""
    async with aiohttp.ClientSession() as session:
        name = {"name": unique_name("daily")}
        async with session.post(f"{base}/api/v1/players", json=name) as response:
            auth = {"Authorization": f"Bearer {(await response.json())['token']}"}
        body = {"daily": True, "rule": rule}
        async with session.post(f"{base}/api/v1/games", json=body, headers=auth) as response:
            game: dict[str, Any] = await response.json()
            assert response.status == 201, game
    return game


async def stored_secrets(database_url: str) -> int:
    """The number of deal secrets stored (the cursor secret is another one)."""
    engine = make_engine(database_url, pool_size=1)
    try:
        async with engine.connect() as connection:
            found = await connection.execute(
                select(func.count())
                .select_from(ServerSecret)
                .where(ServerSecret.name == "deal_secret")
            )
            count: int = found.scalar_one()
        return count
    finally:
        await engine.dispose()


def fresh_sqlite(tmp_path: Path, name: str) -> str:
    """A new SQLite database that the server process migrates itself."""
    return f"sqlite:///{tmp_path / name}"


async def test_two_processes_on_one_database_deal_the_same_daily_deal(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEAL_SECRET", raising=False)
    # Both start at once: each looks for the deal secret, one stores it, both use it.
    one, two = ServerProcess(database_url), ServerProcess(database_url)
    fresh = ServerProcess(fresh_sqlite(tmp_path, "fresh.db"))
    servers = [one, two, fresh]
    try:
        await asyncio.gather(*(server.ready() for server in servers))
        first, second, other = await todays_deals(one, two, fresh)
        assert commitments(first) == commitments(second), (first, second)
        assert first["classic"]["deal_commitment"] != first["relaxed"]["deal_commitment"]
        # A fresh database has its own secret, so another daily deal.
        for rule in RULES:
            assert other[rule]["deal_commitment"] != first[rule]["deal_commitment"], rule
        # A daily game dealt by the other process is of the same deal.
        for rule in RULES:
            game = await daily_game(two.base, rule)
            assert game["code"] is None, game
            if game["daily"] == first[rule]["date"]:
                assert game["deal_commitment"] == first[rule]["deal_commitment"], rule
        assert await stored_secrets(database_url) == 1
        one.terminate()
        two.terminate()
        # A process started later on the same database deals the same daily deal again.
        three = ServerProcess(database_url)
        servers.append(three)
        await three.ready()
        (again,) = await todays_deals(three)
        if again["classic"]["date"] == first["classic"]["date"]:
            assert commitments(again) == commitments(first)
        assert await stored_secrets(database_url) == 1
    finally:
        for server in servers:
            server.close()


async def test_the_same_deal_secret_deals_the_same_daily_deal_on_fresh_databases(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = f"fair-play-{uuid.uuid4().hex}"
    monkeypatch.setenv("DEAL_SECRET", secret)
    one = ServerProcess(database_url)
    two = ServerProcess(fresh_sqlite(tmp_path, "same-secret.db"))
    monkeypatch.setenv("DEAL_SECRET", f"fair-play-{uuid.uuid4().hex}")
    other = ServerProcess(fresh_sqlite(tmp_path, "other-secret.db"))
    servers = [one, two, other]
    try:
        await asyncio.gather(*(server.ready() for server in servers))
        first, second, third = await todays_deals(one, two, other)
        assert commitments(first) == commitments(second), (first, second)
        for rule in RULES:
            assert third[rule]["deal_commitment"] != first[rule]["deal_commitment"], rule
    finally:
        for server in servers:
            server.close()
