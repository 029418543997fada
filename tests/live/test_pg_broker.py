"""The PostgreSQL broker in one process (`server.live.postgres.PgBroker`), on a real PostgreSQL:
the actions' commits notify nothing; the broker sends their events after them on its own
listening connection; the process's own watchers get them at once, also while that connection
is down, and the others get them once it is back; a closing broker sends what it holds.

A notification names the backend that sent it: a listener of the test sees that every event
comes from the broker's connection, never from a connection of the commits' pool (a
`pg_notify` in a commit waits on PostgreSQL's global notify lock until the commit is flushed,
and so flushes the commits one at a time)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import asyncpg
import pytest
from aiohttp import WSMsgType
from aiohttp.test_utils import TestClient

from server.keys import BROKER
from server.live.postgres import PgBroker
from server.services.values import decode_answer
from server.settings import is_sqlite
from server.store.db import CHANNEL
from tests.conftest import Api
from tests.redis_support import eventually

CODE = "RU1-C-AAAAAFN"  # 3D-t3, QD-t4 and AC-f are legal at once
LIVE = "/api/v1/live"
MOVES = ({"card": "3D", "to": "t3"}, {"card": "QD", "to": "t4"}, {"card": "AC", "to": "f"})


@pytest.fixture(autouse=True)
def postgresql_only(database_url: str) -> None:
    if is_sqlite(database_url):
        pytest.skip("PostgreSQL's LISTEN/NOTIFY (this test runs on PostgreSQL)")


async def test_the_events_come_after_the_commits_from_the_brokers_connection(
    client: TestClient[Any, Any], api: Api, database_url: str
) -> None:
    broker = client.app[BROKER]
    assert isinstance(broker, PgBroker)
    await eventually(lambda: _true(broker.connection is not None), "the broker listens")
    sender = broker.connection.get_server_pid()
    heard: asyncio.Queue[tuple[int, str]] = asyncio.Queue()  # (sender's pid, payload)
    listener = await asyncpg.connect(database_url)
    try:
        await listener.add_listener(
            CHANNEL, lambda _c, pid, _ch, text: heard.put_nowait((pid, text))
        )
        _, auth = await api.player()
        games = [(await api.game(auth, code=CODE))["id"] for _ in range(3)]
        # Three games' moves at once, then each game's next two, in order.
        for move in MOVES:
            await asyncio.gather(*(api.act(auth, game_id, move) for game_id in games))
        got = [await asyncio.wait_for(heard.get(), 5) for _ in range(len(games) * len(MOVES))]
    finally:
        await listener.close()
    assert {pid for pid, _ in got} == {sender}, (sender, got)
    for game_id in games:
        texts = [text.split(" ", 2) for _, text in got if text.startswith(game_id + " ")]
        assert [int(version) for _, version, _ in texts] == [1, 2, 3]
    assert heard.empty()


async def test_while_the_listening_connection_is_down_own_watchers_hear_and_the_rest_waits(
    client: TestClient[Any, Any], api: Api, database_url: str
) -> None:
    """The moves made while the broker's connection is down reach this process's watchers at
    once, and the other processes (a listener of the test) once it is back, in order; this
    process's watchers do not get them twice when they come back as its own notifications."""
    broker = client.app[BROKER]
    assert isinstance(broker, PgBroker)
    _, auth = await api.player()
    game_id = (await api.game(auth, code=CODE))["id"]
    ws = await client.ws_connect(LIVE)
    await ws.send_json({"type": "watch", "id": 1, "game_id": game_id})
    assert json.loads((await ws.receive(5)).data)["type"] == "watching"
    heard: asyncio.Queue[str] = asyncio.Queue()
    listener = await asyncpg.connect(database_url)
    try:
        await listener.add_listener(CHANNEL, lambda *args: heard.put_nowait(args[-1]))
        await eventually(lambda: _true(broker.connection is not None), "the broker listens")
        broker.RECONNECT_DELAY = 3  # the moves below are made before it connects again
        await listener.execute(
            "SELECT pg_terminate_backend($1)", broker.connection.get_server_pid()
        )
        await eventually(lambda: _true(broker.connection is None), "the broker's connection drops")

        for version, move in enumerate(MOVES, start=1):
            await api.act(auth, game_id, move)
            message = await ws.receive(5)
            assert message.type == WSMsgType.TEXT, message
            event = json.loads(message.data)
            assert (event["type"], event["version"]) == ("event", version), event
        assert broker.connection is None  # all three were made while it was down
        assert heard.empty()

        texts = [await asyncio.wait_for(heard.get(), 10) for _ in MOVES]
        assert [text.split(" ", 2)[:2] for text in texts] == [
            [game_id, str(version)] for version in range(1, len(MOVES) + 1)
        ]
        await ws.send_json({"type": "ping", "id": "p"})
        assert json.loads((await ws.receive(5)).data)["type"] == "pong"  # and no event again
    finally:
        await listener.close()
    await ws.close()


async def test_a_closing_broker_sends_the_events_it_still_holds(
    client: TestClient[Any, Any], api: Api, database_url: str
) -> None:
    """A stopping process's last changes still reach the others' watchers: `close` lets the
    batch queued by `published` go out before it stops the sender."""
    broker = client.app[BROKER]
    assert isinstance(broker, PgBroker)
    await eventually(lambda: _true(broker.connection is not None), "the broker listens")
    heard: asyncio.Queue[str] = asyncio.Queue()
    listener = await asyncpg.connect(database_url)
    try:
        await listener.add_listener(CHANNEL, lambda *args: heard.put_nowait(args[-1]))
        _, auth = await api.player()
        game_id = (await api.game(auth, code=CODE))["id"]
        await api.act(auth, game_id, MOVES[0])
        text = await asyncio.wait_for(heard.get(), 5)
        applied = decode_answer(text.split(" ", 2)[2])
        assert (applied.view.row.id, applied.view.row.version) == (game_id, 1)
        # Queued, and the broker closed before its sender has run once.
        await broker.published(applied)
        await broker.close()
        assert await asyncio.wait_for(heard.get(), 5) == text
    finally:
        await listener.close()


async def _true(value: bool) -> bool:
    return value
