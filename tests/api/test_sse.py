"""Server-sent events (SPEC 2.6.2; issue 20), read by an aiohttp client as a plain HTTP stream, in
one process on both databases: `GET /api/v1/me/events` (the player's notices) and
`GET /api/v1/games/{id}/events` (a watched game's events).

Each event's data is the document the WebSocket sends for it; a reconnection with
`Last-Event-ID` resumes exactly (nothing lost, nothing twice); a game's stream is the same
sequence of messages as a WebSocket `watch` with the same `since`; comment lines keep the stream
alive; bad input is a problem before any stream; a stream is not held against the cap of
requests in flight of its address, but counts against the caps of open connections as a
WebSocket does; the player's stream, like `follow_me`, needs the scope `read`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import ClientResponse, WSMsgType
from aiohttp.test_utils import TestClient

from server.api import events
from server.api.limits import IN_FLIGHT_PER_ADDRESS, SOCKETS_PER_ADDRESS, SOCKETS_PER_PLAYER
from server.app import create_app
from server.settings import Settings
from tests.api.helpers import Player, action_body, new_player, problem
from tests.api.test_live_loose_ends import scoped_token
from tests.api.test_notices import call, follow
from tests.api.test_races import Socket, client
from tests.conftest import ClientFactory

__all__ = ["client"]  # the fixtures (`clock` is tests/api/conftest.py's)

CODE = "RU1-C-AAAAAFN"
MOVES = ["3D-t3", "QD-t4", "AC-f"]
"""Legal at once on CODE."""


@dataclass
class Event:
    id: str | None
    event: str | None
    data: Any


class Stream:
    """An event stream being read: its events, and the comment lines seen."""

    def __init__(self, response: ClientResponse) -> None:
        self.response = response
        self.comments: list[str] = []

    async def next(self, timeout: float = 10.0) -> Event:
        fields: dict[str, list[str]] = {}
        async with asyncio.timeout(timeout):
            while True:
                raw = await self.response.content.readline()
                assert raw, "the stream ended"
                line = raw.decode().rstrip("\r\n")
                if line == "":
                    if fields:
                        data = "\n".join(fields.get("data", []))
                        ids, kinds = fields.get("id"), fields.get("event")
                        return Event(
                            ids[-1] if ids else None,
                            kinds[-1] if kinds else None,
                            json.loads(data),
                        )
                    continue
                if line.startswith(":"):
                    self.comments.append(line[1:].strip())
                    continue
                name, _, value = line.partition(":")
                fields.setdefault(name, []).append(value.removeprefix(" "))

    async def ended(self, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while True:
                raw = await self.response.content.readline()
                if not raw:
                    return
                line = raw.decode().strip()
                assert line == "" or line.startswith(":"), f"more came: {line}"

    async def quiet(self, seconds: float) -> None:
        try:
            event = await self.next(seconds)
        except TimeoutError:
            return
        raise AssertionError(f"unexpected event: {event}")


async def open_stream(
    client: TestClient[Any, Any],
    path: str,
    player: Player | None = None,
    last: str | None = None,
) -> Stream:
    headers = dict(player.auth) if player is not None else {}
    if last is not None:
        headers["Last-Event-ID"] = last
    response = await client.get(path, headers=headers)
    assert response.status == 200, await response.text()
    assert response.headers["Content-Type"].startswith("text/event-stream")
    return Stream(response)


@pytest.fixture
async def streams() -> AsyncIterator[list[Stream]]:
    opened: list[Stream] = []
    yield opened
    for stream in opened:
        stream.response.close()


async def test_my_events_need_a_token_and_a_good_last_event_id(
    client: TestClient[Any, Any],
) -> None:
    response = await client.get("/api/v1/me/events")
    assert response.status == 401
    assert response.headers["Content-Type"].startswith("application/problem+json")
    ana = await new_player(client, "ana-sse-401")
    for bad in ("x", "-1", "1.5", "9" * 40):
        response = await client.get("/api/v1/me/events", headers={**ana.auth, "Last-Event-ID": bad})
        assert response.status == 422, bad
        assert (await response.json())["type"].endswith("validation-error")


async def test_my_events_are_the_notices_and_resume_exactly(
    client: TestClient[Any, Any], streams: list[Stream]
) -> None:
    ana, bo, cy = [await new_player(client, f"{n}-sse") for n in ("ana", "bo", "cy")]
    stream = await open_stream(client, "/api/v1/me/events", ana)
    streams.append(stream)
    body = {"seats": 4, "winnable": False, "time_limit_s": 60}
    race_id = (await call(client, "POST", "/api/v1/races", ana, body, 201))["id"]
    await call(client, "POST", f"/api/v1/races/{race_id}/join", bo)
    await call(client, "POST", f"/api/v1/races/{race_id}/join", cy)
    await call(client, "POST", f"/api/v1/races/{race_id}/leave", bo)
    got = [await stream.next() for _ in range(3)]
    assert [(e.id, e.event) for e in got] == [
        ("1", "race_joined"),
        ("2", "race_joined"),
        ("3", "race_left"),
    ]
    # The data is the WebSocket's `notice`, exactly.
    _, _, over_ws = await follow(client, ana, 0)
    assert [e.data for e in got] == over_ws
    await stream.quiet(0.3)
    stream.response.close()
    await call(client, "POST", f"/api/v1/races/{race_id}/join", bo)  # missed while away
    for last, expected in (("2", ["3", "4"]), ("4", []), ("0", ["1", "2", "3", "4"])):
        again = await open_stream(client, "/api/v1/me/events", ana, last)
        streams.append(again)
        assert [(await again.next()).id for _ in expected] == expected, last
        await again.quiet(0.2)
    # A later notice reaches a resumed stream once, in order.
    await call(client, "POST", f"/api/v1/races/{race_id}/leave", cy)
    fifth = await again.next()
    assert (fifth.id, fifth.event, fifth.data["player"]["id"]) == ("5", "race_left", cy.id)


async def test_my_stream_ends_with_its_own_session(
    client: TestClient[Any, Any], streams: list[Stream]
) -> None:
    ana = await new_player(client, "ana-sse-end")
    password = "correct horse battery"
    await call(client, "PUT", "/api/v1/me/password", ana, {"password": password}, 204)
    signed = await call(
        client, "POST", "/api/v1/sessions", None, {"name": ana.name, "password": password}, 201
    )
    other = Player(ana.id, ana.name, signed["token"])
    mine = await open_stream(client, "/api/v1/me/events", ana)
    theirs = await open_stream(client, "/api/v1/me/events", other)
    streams += [mine, theirs]
    await call(client, "DELETE", "/api/v1/me/sessions/current", other, None, 204)
    for stream in (mine, theirs):
        told = await stream.next()
        assert told.event == "session_revoked"
        assert told.data["session_id"] == signed["session"]["id"]
    await theirs.ended()
    await mine.quiet(0.2)  # this session goes on


async def test_comment_lines_keep_the_stream_alive(
    client: TestClient[Any, Any], streams: list[Stream], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert events.KEEPALIVE_S <= 15
    monkeypatch.setattr(events, "KEEPALIVE_S", 0.2)
    ana = await new_player(client, "ana-sse-ping")
    stream = await open_stream(client, "/api/v1/me/events", ana)
    streams.append(stream)
    await stream.quiet(0.7)
    assert len(stream.comments) >= 2, stream.comments
    game = await call(client, "POST", "/api/v1/games", ana, {"code": CODE}, 201)
    watched = await open_stream(client, f"/api/v1/games/{game['id']}/events")
    streams.append(watched)
    assert (await watched.next()).event == "watching"
    await watched.quiet(0.5)
    assert watched.comments


async def test_a_games_stream_is_its_websocket_events_and_resumes_exactly(
    client: TestClient[Any, Any], streams: list[Stream]
) -> None:
    ana = await new_player(client, "ana-sse-game")
    game = await call(client, "POST", "/api/v1/games", ana, {"code": CODE}, 201)
    path = f"/api/v1/games/{game['id']}/events"
    stream = await open_stream(client, path)
    streams.append(stream)
    socket = await Socket.open(client, None)
    await socket.send({"type": "watch", "game_id": game["id"]})
    first = await stream.next()
    assert (first.id, first.event) == ("0", "watching")
    assert first.data == await socket.receive()
    for move in MOVES:
        await call(client, "POST", f"/api/v1/games/{game['id']}/moves", ana, action_body(move))
    for version in (1, 2, 3):
        event = await stream.next()
        assert (event.id, event.event) == (str(version), "event")
        assert event.data == await socket.receive()
        assert event.data["version"] == version
    await stream.quiet(0.2)
    # A reconnection with Last-Event-ID: the messages a `watch` with `since` gets.
    for last in ("0", "1", "3"):
        again = await open_stream(client, path, None, last)
        streams.append(again)
        await socket.send({"type": "watch", "game_id": game["id"], "since": int(last)})
        # (the socket watches already: it answers `watching` alone, having sent every event)
        over_ws = []
        while True:
            message = await socket.receive()
            over_ws.append(message)
            if message["type"] == "watching":
                break
        got = [await again.next() for _ in range(3 - int(last) + 1)]
        assert [(e.id, e.event) for e in got] == [
            *((str(v), "event") for v in range(int(last) + 1, 4)),
            ("3", "watching"),
        ]
        assert all(e.data.get("missed") is True for e in got[:-1])
        assert got[-1].data == over_ws[-1]
        await again.quiet(0.2)
    # Ahead of the game: one resync with the whole game.
    ahead = await open_stream(client, path, None, "99")
    streams.append(ahead)
    resync = await ahead.next()
    assert (resync.id, resync.event) == ("3", "resync")
    assert resync.data["game"]["version"] == 3
    # The resumed stream goes on with the next change, once.
    await call(client, "POST", f"/api/v1/games/{game['id']}/moves", ana, {"action": "undo"})
    for resumed in (again, ahead):
        event = await resumed.next()
        assert (event.id, event.event, event.data["move"]) == ("4", "event", "undo")


async def test_a_games_stream_has_the_visibility_of_watching(
    client: TestClient[Any, Any],
) -> None:
    ana = await new_player(client, "ana-sse-hidden")
    daily = await call(client, "POST", "/api/v1/games", ana, {"daily": True}, 201)
    path = f"/api/v1/games/{daily['id']}/events"
    response = await client.get(path)
    assert response.status == 403, await response.text()
    socket = await Socket.open(client, None)
    await socket.send({"type": "watch", "game_id": daily["id"]})
    assert (await socket.receive())["problem"]["status"] == 403
    own = await open_stream(client, path, ana)
    assert (await own.next()).event == "watching"
    # Its token's session ends: the stream of the hidden game ends too (within 2 s).
    await call(client, "DELETE", "/api/v1/me/sessions/current", ana, None, 204)
    await own.ended(events.SESSION_CHECK_S + 1)
    own.response.close()
    response = await client.get("/api/v1/games/00000000-0000-4000-8000-000000000000/events")
    assert response.status == 404
    response = await client.get("/api/v1/games/nope/events")
    assert response.status == 404


async def test_streams_are_not_held_in_flight(
    database_url: str, aiohttp_client: ClientFactory, streams: list[Stream]
) -> None:
    settings = Settings(database_url=database_url, rate_limit=1000, migrate=False)
    client = await aiohttp_client(create_app(settings))
    ana = await new_player(client, "ana-sse-flight")
    game = await call(client, "POST", "/api/v1/games", ana, {"code": CODE}, 201)
    for _ in range(IN_FLIGHT_PER_ADDRESS + 2):
        streams.append(await open_stream(client, f"/api/v1/games/{game['id']}/events"))
    assert (await call(client, "GET", f"/api/v1/games/{game['id']}"))["version"] == 0
    await call(client, "POST", f"/api/v1/games/{game['id']}/moves", ana, action_body(MOVES[0]))
    assert (await streams[0].next()).event == "watching"
    assert (await streams[0].next()).data["version"] == 1


async def test_my_stream_and_follow_me_need_the_read_scope(
    client: TestClient[Any, Any], streams: list[Stream]
) -> None:
    """A token without the scope `read` (an app's that asked for `play` only) gets a `403`
    `missing-scope` from `GET /api/v1/me/events` before any stream, and from `follow_me`."""
    ana = await new_player(client, "ana-sse-scope")
    player_only = Player(ana.id, ana.name, await scoped_token(client, ana.id, "play"))
    found = await problem(await client.get("/api/v1/me/events", headers=player_only.auth), 403)
    assert (found["type"].endswith("/missing-scope"), found["scope"]) == (True, "read"), found
    socket = await Socket.open(client, player_only)
    await socket.send({"type": "follow_me", "id": "f"})
    refused = await socket.receive()
    assert (refused["type"], refused["id"]) == ("error", "f"), refused
    over_ws = refused["problem"]
    assert (over_ws["status"], over_ws["scope"]) == (403, "read"), over_ws
    assert over_ws["type"].endswith("/missing-scope"), over_ws
    await socket.send({"type": "ping", "id": "p"})
    assert (await socket.receive())["type"] == "pong"  # the socket goes on
    # With the scope `read` alone, both answer.
    reader = Player(ana.id, ana.name, await scoped_token(client, ana.id, "read"))
    streams.append(await open_stream(client, "/api/v1/me/events", reader))
    _, following, _ = await follow(client, reader)
    assert following["type"] == "following_me"


async def refused_stream(client: TestClient[Any, Any], path: str, player: Player | None) -> str:
    """The detail of the `429` that refuses a stream over a cap, before any stream."""
    headers = player.auth if player is not None else {}
    response = await client.get(path, headers=headers)
    found = await problem(response, 429)
    assert found["type"].endswith("/too-many-requests"), found
    assert int(response.headers["Retry-After"]) >= 1
    detail: str = found["detail"]
    return detail


async def reopened(client: TestClient[Any, Any], path: str, player: Player | None) -> Stream:
    """A stream opened once the server has seen a closed one go (refused until then)."""
    headers = player.auth if player is not None else {}
    for _ in range(50):
        response = await client.get(path, headers=headers)
        if response.status == 200:
            return Stream(response)
        await problem(response, 429)
        await asyncio.sleep(0.1)
    raise AssertionError("a closed stream never freed its place")


async def test_streams_count_against_the_caps_of_open_connections(
    database_url: str,
    aiohttp_client: ClientFactory,
    streams: list[Stream],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SOCKETS_PER_PLAYER connections of a player, WebSockets and streams together: one more
    stream is a `429` with `Retry-After` (and one more WebSocket is closed with `1008`); a stream
    that closes frees its place. The address's cap (SOCKETS_PER_ADDRESS) counts them too."""
    monkeypatch.setattr(events, "SESSION_CHECK_S", 0.2)  # a closed stream is seen at once
    settings = Settings(database_url=database_url, rate_limit=1000, migrate=False)
    client = await aiohttp_client(create_app(settings))
    ana = await new_player(client, "ana-sse-caps")
    game = await call(client, "POST", "/api/v1/games", ana, {"code": CODE}, 201)
    game_path = f"/api/v1/games/{game['id']}/events"
    sockets = [await Socket.open(client, ana) for _ in range(SOCKETS_PER_PLAYER // 2)]
    for n in range(SOCKETS_PER_PLAYER - len(sockets)):
        path = "/api/v1/me/events" if n % 2 else game_path
        streams.append(await open_stream(client, path, ana))
    player_cap = f"too many connections of this player (at most {SOCKETS_PER_PLAYER})"
    for path in ("/api/v1/me/events", game_path):
        assert player_cap in await refused_stream(client, path, ana)
    over = await Socket.open(client, ana)
    msg = await over.ws.receive(5)
    assert (msg.type, msg.data, msg.extra) == (WSMsgType.CLOSE, 1008, player_cap), msg
    # One of the player's streams closed by its client frees its place: one more opens then,
    # and no other.
    streams.pop(0).response.close()
    streams.append(await reopened(client, "/api/v1/me/events", ana))
    assert player_cap in await refused_stream(client, game_path, ana)
    # Anonymous streams from the same address, up to its cap (the player's count there too).
    for _ in range(SOCKETS_PER_ADDRESS - SOCKETS_PER_PLAYER):
        streams.append(await open_stream(client, game_path))
    address_cap = f"too many connections from this address (at most {SOCKETS_PER_ADDRESS})"
    assert address_cap in await refused_stream(client, game_path, None)
    streams.pop().response.close()
    streams.append(await reopened(client, game_path, None))
    assert address_cap in await refused_stream(client, game_path, None)
    for socket in sockets:
        await socket.ws.close()
