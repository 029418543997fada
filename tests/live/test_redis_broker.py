"""The Redis broker in one process (issue 14 item 8; `server.live.redis.RedisBroker`): a server app
with `BROKER_URL` beside a second broker of its own, on a real Redis and a real database.

Another process's broker is stood in for by a second `RedisBroker` in the test: it subscribes
only when asked, hears the app's changes as values (rendered, the same event as the app's own
watchers get), gets the last change of a game committed before its subscription took effect,
and leaves nothing subscribed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from aiohttp import WSMsgType
from aiohttp.test_utils import TestClient

from server.api.render import event_message
from server.keys import BROKER
from server.live import make_broker
from server.live.broker import Change
from server.live.redis import RedisBroker
from server.services.values import Applied
from server.settings import Settings
from server.store.db import CHANNEL
from tests.conftest import Api
from tests.redis_support import eventually, game_channel, numsub, race_channel, redis

__all__ = ["redis"]  # the fixture

CODE = "RU1-C-AAAAAFN"  # 3D-t3, QD-t4 and AC-f are legal at once
LIVE = "/api/v1/live"


@pytest.fixture
def settings(database_url: str, redis: tuple[str, Any]) -> Settings:
    return Settings(database_url=database_url, rate_limit=0, migrate=False, broker_url=redis[0])


@pytest.fixture
async def other(redis: tuple[str, Any]) -> AsyncIterator[RedisBroker]:
    """A second process's broker, as the server makes it."""
    broker = make_broker("sqlite:///unused.db", redis[0])
    assert isinstance(broker, RedisBroker)
    await broker.start()
    try:
        yield broker
    finally:
        await broker.close()


class Heard:
    """A watcher's calls, awaited one at a time."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[int, Change]] = asyncio.Queue()

    def __call__(self, version: int, change: Change) -> None:
        self.queue.put_nowait((version, change))

    async def next(self) -> tuple[int, Change]:
        return await asyncio.wait_for(self.queue.get(), 5)

    async def change(self) -> tuple[int, Applied]:
        """The next call, a game's change (not a signal)."""
        version, change = await self.next()
        assert change is not None, version
        return version, change


async def test_with_redis_a_commit_sends_no_postgresql_notification(
    client: TestClient[Any, Any], api: Api, settings: Settings
) -> None:
    """The change travels over Redis only: on PostgreSQL, a listener of the servers' NOTIFY
    channel hears nothing of it (its own notification, sent after the action was answered,
    comes first: notifications arrive in commit order)."""
    assert isinstance(client.app[BROKER], RedisBroker)
    if not settings.database_url.startswith("postgresql"):
        return
    heard: asyncio.Queue[str] = asyncio.Queue()
    listener = await asyncpg.connect(settings.database_url)
    try:
        await listener.add_listener(CHANNEL, lambda *args: heard.put_nowait(args[-1]))
        _, auth = await api.player()
        game_id = (await api.game(auth, code=CODE))["id"]
        await api.act(auth, game_id, {"card": "3D", "to": "t3"})
        await listener.execute(f"NOTIFY {CHANNEL}, 'sentinel'")
        assert await asyncio.wait_for(heard.get(), 5) == "sentinel"
    finally:
        await listener.close()


async def test_another_process_hears_the_changes_of_what_it_watches_and_nothing_else(
    client: TestClient[Any, Any], api: Api, redis: tuple[str, Any], other: RedisBroker
) -> None:
    _, admin = redis
    _, auth = await api.player()
    watched = (await api.game(auth, code=CODE))["id"]
    unwatched = (await api.game(auth, code=CODE))["id"]
    heard = Heard()

    # The app's own watcher, over the socket, for the event text to compare with.
    ws = await client.ws_connect(LIVE)
    await ws.send_json({"type": "watch", "id": 1, "game_id": watched})
    assert json.loads((await ws.receive(5)).data)["type"] == "watching"
    assert await client.app[BROKER].ready(watched)

    other.subscribe(watched, heard)
    assert await other.ready(watched)
    # The app's watcher and the other broker; nobody watches the other game.
    assert await numsub(admin, game_channel(watched), game_channel(unwatched)) == [2, 0]

    for version, move in enumerate(("3D-t3", "QD-t4"), start=1):
        card, to = move.split("-")
        await api.act(auth, watched, {"card": card, "to": to})
        await api.act(auth, unwatched, {"card": card, "to": to})
        local = await ws.receive(5)
        assert local.type == WSMsgType.TEXT
        got_version, change = await heard.change()
        assert got_version == version
        event = event_message(change).model_dump()
        assert (event["type"], event["game_id"], event["version"], event["move"]) == (
            "event",
            watched,
            version,
            move,
        )
        # The same event as the app's own watcher got: the change travelled as data.
        assert event == json.loads(local.data)
    assert heard.queue.empty()  # nothing of the other game

    other.unsubscribe(watched, heard)

    async def gone() -> bool:
        return await numsub(admin, game_channel(watched)) == [1]  # the app's own watcher

    await eventually(gone, "the other broker unsubscribed")
    await ws.close()

    async def none() -> bool:
        return await numsub(admin, game_channel(watched)) == [0]

    await eventually(none, "the app unsubscribed when its last watcher left")


async def test_a_change_made_before_a_subscription_took_effect_is_delivered(
    client: TestClient[Any, Any], api: Api, redis: tuple[str, Any], other: RedisBroker
) -> None:
    _, admin = redis
    _, auth = await api.player()
    game_id = (await api.game(auth, code=CODE))["id"]
    await api.act(auth, game_id, {"card": "3D", "to": "t3"})
    await api.act(auth, game_id, {"card": "QD", "to": "t4"})

    async def published() -> bool:  # the app publishes after answering
        last = await admin.get(f"solitaire:last:{game_id}")
        return last is not None and last.split()[1] == b"2"

    await eventually(published, "the app published its second change")
    heard = Heard()
    other.subscribe(game_id, heard)  # after the changes went out: the last one comes all the same
    assert await other.ready(game_id)
    version, change = await heard.change()
    assert (version, change.move) == (2, "QD-t4")

    # A tap (a race's standings) hears the change as data.
    taps: asyncio.Queue[Any] = asyncio.Queue()
    other.tap(game_id, taps.put_nowait)
    await api.act(auth, game_id, {"card": "AC", "to": "f"})
    applied = await asyncio.wait_for(taps.get(), 5)
    assert (applied.move, applied.view.row.version, applied.view.row.id) == ("AC-f", 3, game_id)
    assert (await heard.next())[0] == 3


async def test_a_signal_reaches_the_watchers_of_its_key_in_every_process(
    client: TestClient[Any, Any], redis: tuple[str, Any], other: RedisBroker
) -> None:
    _, admin = redis
    app_broker = client.app[BROKER]
    key = "race:00000000-0000-4000-8000-000000000001"
    here, there = Heard(), Heard()
    app_broker.subscribe(key, here)
    other.subscribe(key, there)
    assert await other.ready(key)
    assert await app_broker.ready(key)
    assert await numsub(admin, race_channel(key.removeprefix("race:"))) == [2]
    while not there.queue.empty():  # the read that follows a new subscription
        there.queue.get_nowait()
    while not here.queue.empty():
        here.queue.get_nowait()
    await app_broker.signal(key)
    assert await here.next() == (0, None)
    assert await there.next() == (0, None)
    app_broker.unsubscribe_all(key)
    other.unsubscribe_all(key)

    async def none() -> bool:
        return await numsub(admin, race_channel(key.removeprefix("race:"))) == [0]

    await eventually(none, "both unsubscribed")


async def test_a_message_that_cannot_be_delivered_is_dropped_and_the_next_change_arrives(
    client: TestClient[Any, Any], api: Api, redis: tuple[str, Any], other: RedisBroker
) -> None:
    """A malformed message, one from another server version (a rolling deploy) or a watcher
    that raises costs that message only: the process still hears the game's next changes."""
    _, admin = redis
    _, auth = await api.player()
    game_id = (await api.game(auth, code=CODE))["id"]
    heard = Heard()

    def broken(version: int, change: Change) -> None:
        raise RuntimeError("a watcher that fails")

    other.subscribe(game_id, heard)
    other.subscribe(game_id, broken)
    assert await other.ready(game_id)
    channel = game_channel(game_id)
    for bad in (
        b"no spaces",
        b"someone not-a-version -",
        b"someone 1 {not json",
        b'someone 1 {"row": {"id": "x"}}',  # an answer of another shape: no player_name...
        b"\xff\xfe 1 -",
    ):
        assert await admin.publish(channel, bad) == 1  # the other broker is the one subscriber
    await api.act(auth, game_id, {"card": "3D", "to": "t3"})
    version, change = await heard.change()
    assert (version, change.move) == (1, "3D-t3")
    await api.act(auth, game_id, {"card": "QD", "to": "t4"})
    version, change = await heard.change()
    assert (version, change.move) == (2, "QD-t4")
    assert heard.queue.empty()


async def test_a_new_watcher_is_ready_only_once_its_own_subscription_took_effect(
    redis: tuple[str, Any], other: RedisBroker
) -> None:
    """The last watcher of a game leaves (UNSUBSCRIBE goes out) and a new one comes at once:
    `ready` waits for the new SUBSCRIBE, not for the subscription that is going away."""
    _, admin = redis
    game_id = "00000000-0000-4000-8000-0000000000aa"
    channel = game_channel(game_id)
    first, second = Heard(), Heard()
    other.subscribe(game_id, first)
    assert await other.ready(game_id)
    assert await numsub(admin, channel) == [1]
    for _ in range(3):
        other.unsubscribe(game_id, first)
        while channel in other.asked:  # until the UNSUBSCRIBE is sent
            await asyncio.sleep(0)
        other.subscribe(game_id, second)
        assert await other.ready(game_id)
        assert await numsub(admin, channel) == [1]
        first, second = second, first
    other.unsubscribe(game_id, first)

    async def none() -> bool:
        return await numsub(admin, channel) == [0]

    await eventually(none, "unsubscribed")
