"""A player's own events across real server processes (SPEC 2.6.2; issue 20): the player follows
on process B (`follow_me` over the WebSocket, and `GET /api/v1/me/events` as server-sent events)
while everything that concerns them happens on process A or by the servers' own ticks: seats
taken and given up by others, the countdown, the race's time-out and end, the reveal of a daily
deal they played, and another of their sessions ended. Every kind reaches B, in order, once;
`since` and `Last-Event-ID` resume exactly; the stream and the socket carry the same documents.

With PostgreSQL's broker (PostgreSQL only: on SQLite each process hears only its own changes,
so there the follower is on A itself) and with the Redis broker (on both databases).

The processes use the wall clock: the race's time limit is not waited for, its start is moved
back in the database (as `tests/processes/test_race_processes.py` does); the end of a day is
not waited for either: the test's daily game is moved to yesterday in the database and
yesterday's reveal mark removed, which is the state the end of that day leaves (each process
checks for the reveal every few seconds).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest
from sqlalchemy import delete, insert, select, update

from server.services.notices import DAILY_CHECK_S
from server.store.models import DailyDeal, GameRow, NoticeMark
from tests.names import unique_name
from tests.process import ServerProcess
from tests.processes.test_race_processes import (
    LIMIT_MS,
    Client,
    Db,
    is_postgresql,
    now_ms,
)
from tests.redis_support import redis

__all__ = ["redis"]  # the fixture

LIVE = "/api/v1/live"
SUBPROTOCOL = "solitaire.v1"
DELIVERY_S = 3.0
SETTLE_S = 4.0
"""The race tick is 1 s; real processes on a busy machine get more."""
PASSWORD = "correct horse battery"


class SseReader:
    """An event stream read by aiohttp: (id, event, data) of each event."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response

    async def next(self, timeout: float) -> tuple[str, str, dict[str, Any]]:
        fields: dict[str, str] = {}
        data: list[str] = []
        async with asyncio.timeout(timeout):
            while True:
                raw = await self.response.content.readline()
                assert raw, "the stream ended"
                line = raw.decode().rstrip("\r\n")
                if line == "":
                    if data:
                        return fields["id"], fields["event"], json.loads("\n".join(data))
                    continue
                if line.startswith(":"):
                    continue
                name, _, value = line.partition(":")
                if name == "data":
                    data.append(value.removeprefix(" "))
                else:
                    fields[name] = value.removeprefix(" ")


async def notices_until(
    ws: aiohttp.ClientWebSocketResponse, kinds: list[str], timeout: float
) -> list[dict[str, Any]]:
    """The next notices on `ws`, exactly of `kinds` in that order."""
    got = []
    for kind in kinds:
        msg = await ws.receive(timeout)
        assert msg.type == aiohttp.WSMsgType.TEXT, (msg.type, msg.data)
        body: dict[str, Any] = json.loads(msg.data)
        assert body["type"] == "notice", body
        assert body["kind"] == kind, (kind, body, got)
        got.append(body)
    return got


async def follow(
    session: aiohttp.ClientSession, base: str, auth: dict[str, str], since: int | None = None
) -> tuple[aiohttp.ClientWebSocketResponse, dict[str, Any], list[dict[str, Any]]]:
    ws = await session.ws_connect(base + LIVE, protocols=(SUBPROTOCOL,), headers=auth)
    message: dict[str, Any] = {"type": "follow_me", "id": "f"}
    if since is not None:
        message["since"] = since
    await ws.send_json(message)
    missed = []
    while True:
        body = json.loads((await ws.receive(10)).data)
        if body["type"] == "following_me":
            return ws, body, missed
        assert body["type"] == "notice", body
        missed.append(body)


async def to_yesterday(db: Db, game_id: str) -> str:
    """Makes a daily game of today one of yesterday's, as the end of the day would find it (its
    deal stored as yesterday's, yesterday not announced yet); the day."""
    yesterday = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%d")
    async with db.engine.begin() as connection:
        found = await connection.execute(
            select(GameRow.code, GameRow.rule).where(GameRow.id == game_id)
        )
        code, rule = found.one()
        await connection.execute(
            delete(DailyDeal).where(DailyDeal.day == yesterday, DailyDeal.rule == rule)
        )
        await connection.execute(
            insert(DailyDeal).values(day=yesterday, rule=rule, code=code, created_ms=now_ms())
        )
        await connection.execute(
            update(GameRow).where(GameRow.id == game_id).values(daily=yesterday)
        )
        await connection.execute(delete(NoticeMark).where(NoticeMark.key == f"daily:{yesterday}"))
    return yesterday


async def every_kind_reaches_the_other_process(
    a: ServerProcess, b: ServerProcess, database_url: str
) -> None:
    """The scenario: ana follows on B; the others act on A (see the module docstring)."""
    db = Db(database_url)
    try:
        await asyncio.gather(*(server.ready() for server in {a, b}))
        async with aiohttp.ClientSession() as session:
            client = Client(session)
            ana_name = unique_name("ana")
            ana, ana_auth = await client.player(a.base, ana_name)
            bo, bo_auth = await client.player(a.base, unique_name("bo"))
            cy, cy_auth = await client.player(a.base, unique_name("cy"))
            ws, following, _ = await follow(session, b.base, ana_auth)
            assert following["last"] == 0
            sse = await session.get(b.base + "/api/v1/me/events", headers=ana_auth)
            assert sse.status == 200
            stream = SseReader(sse)

            body = {"seats": 3, "winnable": False, "time_limit_s": LIMIT_MS // 1000}
            race = await client.call("POST", f"{a.base}/api/v1/races", ana_auth, body, 201)
            race_id = race["id"]
            for auth, action in ((bo_auth, "join"), (bo_auth, "leave"), (bo_auth, "join")):
                await client.call("POST", f"{a.base}/api/v1/races/{race_id}/{action}", auth)
            seated = await notices_until(
                ws, ["race_joined", "race_left", "race_joined"], DELIVERY_S
            )
            assert all(n["player"]["id"] == bo and n["race_id"] == race_id for n in seated)
            started = await client.call("POST", f"{a.base}/api/v1/races/{race_id}/join", cy_auth)
            assert started["status"] == "starting"
            joined, starting = await notices_until(ws, ["race_joined", "race_starting"], DELIVERY_S)
            assert joined["player"]["id"] == cy
            assert starting["game_id"] == started["games"][ana]

            # The deadline passes (the start moved back): the servers end the race by themselves.
            await db.move_start([race_id], now_ms() - LIMIT_MS - 1_000)
            ended, finished = await notices_until(
                ws, ["game_ended", "race_finished"], DELIVERY_S + SETTLE_S
            )
            assert ended["game_id"] == started["games"][ana] and ended["reason"] == "timed_out"
            assert finished["race_id"] == race_id and finished["place"] in (1, 2, 3)

            # A daily game of ana's, and its day ends.
            daily = await client.call(
                "POST", f"{a.base}/api/v1/games", ana_auth, {"daily": True}, 201
            )
            day = await to_yesterday(db, daily["id"])
            (revealed,) = await notices_until(
                ws, ["daily_revealed"], DELIVERY_S + DAILY_CHECK_S + 2
            )
            assert revealed["date"] == day and revealed["code"] is not None
            # A second session of ana's, ended on A.
            async with session.put(
                f"{a.base}/api/v1/me/password", json={"password": PASSWORD}, headers=ana_auth
            ) as response:
                assert response.status == 204, await response.text()
            signed = await client.call(
                "POST",
                f"{a.base}/api/v1/sessions",
                None,
                {"name": ana_name, "password": PASSWORD},
                201,
            )
            other = {"Authorization": f"Bearer {signed['token']}"}
            async with session.delete(
                f"{a.base}/api/v1/me/sessions/current", headers=other
            ) as response:
                assert response.status == 204
            (revoked,) = await notices_until(ws, ["session_revoked"], DELIVERY_S)
            assert revoked["session_id"] == signed["session"]["id"]

            everything = [*seated, joined, starting, ended, finished, revealed, revoked]
            assert [n["id"] for n in everything] == list(range(1, 10))
            # Once each: nothing more came.
            with pytest.raises(TimeoutError):
                await ws.receive(0.5)
            # The stream carried the same documents, with their ids and kinds.
            for notice in everything:
                got = await stream.next(DELIVERY_S)
                assert got == (str(notice["id"]), notice["kind"], notice)
            sse.close()
            await ws.close()

            # Resuming on B, and on A: exactly what came after.
            for base in (b.base, a.base):
                for since in (0, 4, 8, 9):
                    again, following, missed = await follow(session, base, ana_auth, since)
                    assert missed == everything[since:], (base, since)
                    assert following["last"] == 9
                    await again.close()
                resumed = await session.get(
                    base + "/api/v1/me/events", headers={**ana_auth, "Last-Event-ID": "7"}
                )
                reader = SseReader(resumed)
                assert [await reader.next(DELIVERY_S) for _ in everything[7:]] == [
                    (str(n["id"]), n["kind"], n) for n in everything[7:]
                ]
                resumed.close()
    finally:
        await db.close()


async def test_every_notice_kind_crosses_processes_by_postgresql(database_url: str) -> None:
    a = ServerProcess(database_url)
    b = ServerProcess(database_url) if is_postgresql(database_url) else a
    try:
        await every_kind_reaches_the_other_process(a, b, database_url)
    finally:
        a.close()
        b.close()


@pytest.fixture
def redis_servers(
    database_url: str, redis: tuple[str, Any], monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    monkeypatch.setenv("BROKER_URL", redis[0])
    a, b = ServerProcess(database_url), ServerProcess(database_url)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


async def test_every_notice_kind_crosses_processes_by_redis(
    redis_servers: tuple[ServerProcess, ServerProcess], database_url: str
) -> None:
    a, b = redis_servers
    await every_kind_reaches_the_other_process(a, b, database_url)
