"""Server-sent events when things go wrong after a stream began (SPEC 2.6.2, 2.7): two changes
of a game that cross (as two processes' changes may on Redis) leave no hole in the stream's ids,
and a database fault in the middle of a stream ends it cleanly (its client reconnects with its
`Last-Event-ID`), never with a second HTTP answer written into the stream."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from server.keys import BROKER, NOTICES
from tests.api.helpers import action_body, cross_versions_2_and_3, new_player
from tests.api.test_notices import call
from tests.api.test_races import client
from tests.api.test_sse import Stream, open_stream, streams
from tests.conftest import Api

__all__ = ["client", "streams"]  # the fixtures (`clock` is tests/api/conftest.py's)

CODE = "RU1-C-AAAAAFN"


async def test_a_games_stream_fills_a_gap_a_crossing_left(
    client: TestClient[Any, Any], streams: list[Stream], monkeypatch: pytest.MonkeyPatch
) -> None:
    ana = await new_player(client, "ana-sse-gap")
    api = Api(client)
    game_id = (await api.game(ana.auth, code=CODE))["id"]
    cross_versions_2_and_3(monkeypatch, client.app[BROKER], game_id)
    stream = await open_stream(client, f"/api/v1/games/{game_id}/events")
    streams.append(stream)
    first = await stream.next()
    assert (first.event, first.id) == ("watching", "0")
    for text in ("AC-f", "undo", "AC-f"):
        await api.act(ana.auth, game_id, action_body(text))
    got = [await stream.next() for _ in range(3)]
    assert [(e.event, e.id) for e in got] == [("event", "1"), ("event", "2"), ("event", "3")]
    assert [e.data["move"] for e in got] == ["AC-f", "undo", "AC-f"]
    assert [e.data["version"] for e in got] == [1, 2, 3]
    await stream.quiet(0.5)  # version 2, late, is not sent again


async def test_a_database_fault_in_a_stream_ends_it_cleanly(
    client: TestClient[Any, Any], streams: list[Stream], monkeypatch: pytest.MonkeyPatch
) -> None:
    ana, bo = [await new_player(client, f"{n}-sse-fault") for n in ("ana", "bo")]
    stream = await open_stream(client, "/api/v1/me/events", ana)
    streams.append(stream)
    notices = client.app[NOTICES]

    async def refused(*_: object, **__: object) -> object:
        raise ConnectionRefusedError("the database is restarting")

    monkeypatch.setattr(notices, "since", refused)
    body = {"seats": 3, "winnable": False, "time_limit_s": 60}
    race_id = (await call(client, "POST", "/api/v1/races", ana, body, 201))["id"]
    await call(client, "POST", f"/api/v1/races/{race_id}/join", bo)  # ana is told: a read
    await stream.ended()  # nothing but the end: no problem document inside the stream
    monkeypatch.undo()
    # The client reconnects from the last id it had (none): the notice is there.
    again = await open_stream(client, "/api/v1/me/events", ana, last="0")
    streams.append(again)
    joined = await again.next()
    assert (joined.event, joined.id) == ("race_joined", "1")
    assert joined.data["player"]["id"] == bo.id
