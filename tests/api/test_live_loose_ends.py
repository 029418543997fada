"""The WebSocket's loose ends (issue 20, SPEC 2.6.2), over real sockets on a real server and
database: a `result` says whether it answers a retried idempotency key; `watching_race`
carries the race's version, on the scale of the `race` pushes; re-watching a watched game
never sends a version twice, whatever its `since`, and still fills a gap a crossing left;
`abandon` and `hint` are the HTTP use-cases with the HTTP refusals; and a message over the
rate budget is answered with a `429` error before any close, the socket closed only when the
client keeps going."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import WSMsgType, web
from aiohttp.test_utils import TestClient

from server.app import create_app
from server.keys import BROKER, SESSIONS, SOLVER
from server.services.workers import Client
from server.settings import Settings
from tests.api.helpers import (
    Player,
    action_body,
    cross_versions_2_and_3,
    new_player,
    problem,
    vectors,
)
from tests.conftest import Api, ClientFactory
from tests.names import unique_name

PATH = "/api/v1/live"
SUBPROTOCOL = "solitaire.v1"
CODE = "RU1-C-AAAAAFN"  # AC, the last card of column 6, goes to its foundation first.
TIMEOUT = 5.0


class Socket:
    """One WebSocket of a test: JSON in, JSON out."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send_str(json.dumps(message))

    async def receive(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        msg = await self.ws.receive(timeout)
        assert msg.type == WSMsgType.TEXT, (msg.type, msg.data, msg.extra)
        body: dict[str, Any] = json.loads(msg.data)
        return body

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Sends `message`; its answer must be the very next message, repeating its id."""
        await self.send(message)
        answer = await self.receive()
        assert answer.get("id") == message.get("id"), (message, answer)
        return answer

    async def refused(self, message: dict[str, Any], status: int) -> dict[str, Any]:
        answer = await self.request(message)
        assert answer["type"] == "error", answer
        found: dict[str, Any] = answer["problem"]
        assert found["status"] == status, answer
        return found

    async def nothing_more(self) -> None:
        """Nothing is queued for this socket: a ping's pong is the next message."""
        assert await self.receive_after_ping() == []

    async def receive_after_ping(self) -> list[dict[str, Any]]:
        """The messages that come before the answer to a ping sent now."""
        await self.send({"type": "ping", "id": "flush"})
        before = []
        while (message := await self.receive()) != {"type": "pong", "id": "flush"}:
            before.append(message)
        return before

    async def closed(self) -> tuple[list[dict[str, Any]], int, str]:
        """The messages until the server closes the socket, its close code and reason."""
        messages = []
        while True:
            msg = await self.ws.receive(TIMEOUT)
            if msg.type == WSMsgType.CLOSE:
                return messages, int(msg.data), str(msg.extra)
            assert msg.type == WSMsgType.TEXT, (msg.type, msg.data)
            messages.append(json.loads(msg.data))


Connect = Callable[..., Awaitable[Socket]]


def opener(client: TestClient[Any, Any], opened: list[Socket]) -> Connect:
    async def connect(player: Player | None = None, token: str | None = None) -> Socket:
        token = player.token if player is not None else token
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        ws = await client.ws_connect(PATH, headers=headers, protocols=(SUBPROTOCOL,))
        socket = Socket(ws)
        opened.append(socket)
        return socket

    return connect


@pytest.fixture
async def connect(client: TestClient[Any, Any]) -> AsyncIterator[Connect]:
    opened: list[Socket] = []
    yield opener(client, opened)
    for socket in opened:
        await socket.ws.close()


def act(game_id: str, text: str, mid: Any, key: str | None = None) -> dict[str, Any]:
    message = {"type": "act", "id": mid, "game_id": game_id, "action": action_body(text)}
    if key is not None:
        message["idempotency_key"] = key
    return message


async def game_now(client: TestClient[Any, Any], game_id: str, player: Player) -> Any:
    response = await client.get(f"/api/v1/games/{game_id}", headers=player.auth)
    assert response.status == 200, await response.text()
    return await response.json()


def same_game(one: dict[str, Any], other: dict[str, Any]) -> None:
    """The same game document, but for the clock (`elapsed_ms` runs between two reads)."""
    assert {**one, "elapsed_ms": 0} == {**other, "elapsed_ms": 0}


async def scoped_token(client: TestClient[Any, Any], player_id: str, *scopes: str) -> str:
    """A session of the player with only these scopes (as an app's token would have)."""
    sessions = client.app[SESSIONS]
    async with sessions.writers.begin() as db:
        token, _ = await sessions.add(db, player_id, "bot", scopes)
    return token


# ---------------------------------------------------------------- replayed


async def test_a_result_says_whether_it_answers_a_retried_key(
    client: TestClient[Any, Any], connect: Connect
) -> None:
    ana = await new_player(client, unique_name("ana"))
    game_id = (await Api(client).game(ana.auth, code=CODE))["id"]
    socket = await connect(ana)

    first = await socket.request(act(game_id, "AC-f", "m1", key="key-1"))
    assert (first["type"], first["version"], first["replayed"]) == ("result", 1, False), first
    # The same key again: the first answer again, said to be replayed, and nothing applied.
    again = await socket.request(act(game_id, "AC-f", "m1-again", key="key-1"))
    assert again["replayed"] is True, again
    assert {**again, "id": "m1", "replayed": False} == first
    assert (await game_now(client, game_id, ana))["version"] == 1
    # A key first used over HTTP is replayed over the socket, and the other way round.
    response = await client.post(
        f"/api/v1/games/{game_id}/moves",
        json={"action": "undo"},
        headers={**ana.auth, "Idempotency-Key": "key-2"},
    )
    assert response.status == 200, await response.text()
    assert "Idempotent-Replayed" not in response.headers
    over_http = await response.json()
    undo = await socket.request(act(game_id, "undo", "u", key="key-2"))
    assert (undo["version"], undo["move"], undo["replayed"]) == (2, "undo", True), undo
    same_game(undo["game"], over_http["game"])
    response = await client.post(
        f"/api/v1/games/{game_id}/moves",
        json=action_body("AC-f"),
        headers={**ana.auth, "Idempotency-Key": "key-1"},
    )
    assert response.status == 200, await response.text()
    assert response.headers["Idempotent-Replayed"] == "true"
    # An action without a key, or with a new one, is applied now: not replayed.
    fresh = await socket.request(act(game_id, "AC-f", "m3"))
    assert (fresh["version"], fresh["replayed"]) == (3, False), fresh
    newer = await socket.request(act(game_id, "undo", "m4", key="key-3"))
    assert (newer["version"], newer["replayed"]) == (4, False), newer
    # The same key with another action is refused, as over HTTP.
    found = await socket.refused(act(game_id, "AC-f", "m5", key="key-3"), 422)
    over_http = await http_refusal(
        client,
        "POST",
        f"/api/v1/games/{game_id}/moves",
        json=action_body("AC-f"),
        headers={**ana.auth, "Idempotency-Key": "key-3"},
    )
    same_refusal(found, over_http)
    assert (await game_now(client, game_id, ana))["version"] == 4


# ---------------------------------------------------------------- watching_race's version


async def test_watching_race_carries_the_version_the_race_pushes_count_from(
    client: TestClient[Any, Any], connect: Connect
) -> None:
    ana, bo, cy = [await new_player(client, unique_name(n)) for n in ("ana", "bo", "cy")]
    response = await client.post(
        "/api/v1/races", json={"seats": 3, "winnable": False}, headers=ana.auth
    )
    assert response.status == 201, await response.text()
    race_id = (await response.json())["id"]
    spectator = await connect()
    snapshot = await spectator.request({"type": "watch_race", "id": "w", "race_id": race_id})
    assert snapshot["type"] == "watching_race", snapshot
    assert isinstance(snapshot["version"], int) and snapshot["version"] >= 0, snapshot

    response = await client.post(f"/api/v1/races/{race_id}/join", headers=bo.auth)
    assert response.status == 200, await response.text()
    joined = await spectator.receive()
    assert joined["type"] == "race" and joined["version"] > snapshot["version"], joined
    assert [p["id"] for p in joined["race"]["players"]] == [ana.id, bo.id]

    # Watching again, or from another socket: the snapshot's version is the last push's, and
    # the push it already had is not sent again.
    again = await spectator.request({"type": "watch_race", "id": "w2", "race_id": race_id})
    assert (again["version"], again["race"]["players"]) == (
        joined["version"],
        joined["race"]["players"],
    )
    await spectator.nothing_more()
    late = await connect()
    seen_late = await late.request({"type": "watch_race", "id": "l", "race_id": race_id})
    assert seen_late["version"] == joined["version"], seen_late

    # The race fills: the pushes that follow are newer than either snapshot.
    response = await client.post(f"/api/v1/races/{race_id}/join", headers=cy.auth)
    assert response.status == 200, await response.text()
    for socket in (spectator, late):
        starting = await socket.receive()
        assert starting["type"] == "race" and starting["version"] > joined["version"], starting
        assert starting["race"]["status"] == "starting", starting


# ---------------------------------------------------------------- re-watching


async def test_rewatching_a_watched_game_never_sends_a_version_twice(
    client: TestClient[Any, Any], connect: Connect
) -> None:
    """The issue's finding: watching again with `since` 0 sent event 1 again."""
    ana = await new_player(client, unique_name("ana"))
    api = Api(client)
    game_id = (await api.game(ana.auth, code=CODE))["id"]
    watcher = await connect()
    watching = await watcher.request({"type": "watch", "id": "w", "game_id": game_id})
    assert (watching["type"], watching["version"]) == ("watching", 0)
    for text in ("AC-f", "undo", "AC-f"):
        await api.act(ana.auth, game_id, action_body(text))
    events = [await watcher.receive() for _ in range(3)]
    assert [(e["type"], e["version"]) for e in events] == [("event", v) for v in (1, 2, 3)]

    # Again, with every kind of `since`: the answer, and not one event.
    for mid, since in (("zero", 0), ("one", 1), ("none", None), ("last", 3)):
        message = {"type": "watch", "id": mid, "game_id": game_id}
        if since is not None:
            message["since"] = since
        answer = await watcher.request(message)
        assert (answer["type"], answer["version"]) == ("watching", 3), (since, answer)
        await watcher.nothing_more()
    # Ahead of the game: the game now (a resync), still no event.
    ahead = await watcher.request({"type": "watch", "id": "a", "game_id": game_id, "since": 9})
    assert (ahead["type"], ahead["version"]) == ("resync", 3), ahead
    await watcher.nothing_more()

    # The next change comes once, live.
    await api.act(ana.auth, game_id, action_body("undo"))
    assert [(m["type"], m["version"]) for m in await watcher.receive_after_ping()] == [("event", 4)]
    # A change that comes as the game is watched again comes once, live or held.
    await api.act(ana.auth, game_id, action_body("AC-f"))
    await watcher.send({"type": "watch", "id": "z", "game_id": game_id, "since": 0})
    rest = await watcher.receive_after_ping()
    assert [(m["type"], m["version"]) for m in rest if m["type"] == "event"] == [("event", 5)]
    assert [m["version"] for m in rest if m["type"] == "watching"] == [5], rest
    assert len(rest) == 2, rest

    # After `unwatch` the connection starts afresh: `since` 0 gets every version as missed.
    await watcher.request({"type": "unwatch", "id": "u", "game_id": game_id})
    await watcher.send({"type": "watch", "id": "f", "game_id": game_id, "since": 0})
    missed = [await watcher.receive() for _ in range(5)]
    assert [(m["version"], m["missed"]) for m in missed] == [(v, True) for v in range(1, 6)]
    assert (await watcher.receive())["type"] == "watching"
    await watcher.nothing_more()


async def test_rewatching_fills_a_gap_a_crossing_left_and_nothing_else(
    client: TestClient[Any, Any], connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes' changes of one game may cross on Redis: version 3 arrives before 2,
    which is then dropped (each version in order). Here the app's own broker is made to
    deliver version 2 after version 3; the client sees the gap and watches again with the
    last version before it: it gets version 2 as missed, and not 3 again."""
    ana = await new_player(client, unique_name("ana"))
    api = Api(client)
    game_id = (await api.game(ana.auth, code=CODE))["id"]
    broker = client.app[BROKER]
    deliver = broker.deliver
    cross_versions_2_and_3(monkeypatch, broker, game_id)
    watchers = [await connect(), await connect()]
    for watcher in watchers:
        await watcher.request({"type": "watch", "id": "w", "game_id": game_id})
    for text in ("AC-f", "undo", "AC-f"):
        await api.act(ana.auth, game_id, action_body(text))
    for watcher in watchers:
        # Read as they come (PostgreSQL's notifications may follow a ping's answer), then
        # nothing more: 2 came late, and was dropped.
        got = [await watcher.receive(), await watcher.receive()]
        assert [m["version"] for m in got] == [1, 3], got
        assert await watcher.receive_after_ping() == []
    monkeypatch.setattr(broker, "deliver", deliver)

    # Watching again from the last version before the gap, or from the start: version 2 as
    # missed, not 1 or 3 again; then the gap is filled, and watching again sends nothing.
    for watcher, since in zip(watchers, (1, 0), strict=True):
        await watcher.send({"type": "watch", "id": "g", "game_id": game_id, "since": since})
        missed = await watcher.receive()
        assert (missed["version"], missed["move"], missed["missed"]) == (2, "undo", True)
        answer = await watcher.receive()
        assert (answer["type"], answer["version"]) == ("watching", 3), answer
        await watcher.nothing_more()
        again = {"type": "watch", "id": "again", "game_id": game_id, "since": 0}
        assert (await watcher.request(again))["type"] == "watching"
        await watcher.nothing_more()


# ---------------------------------------------------------------- abandon and hint


async def http_refusal(client: TestClient[Any, Any], method: str, path: str, **kw: Any) -> Any:
    response = await client.request(method, path, **kw)
    assert response.status >= 400, await response.text()
    return {"status": response.status, **(await response.json())}


def same_refusal(over_socket: dict[str, Any], over_http: dict[str, Any]) -> None:
    keys = ("type", "status", "rule", "scope")
    assert {k: over_socket.get(k) for k in keys} == {k: over_http.get(k) for k in keys}, (
        over_socket,
        over_http,
    )


async def test_abandon_over_the_socket_is_the_http_abandonment(
    client: TestClient[Any, Any], connect: Connect
) -> None:
    api = Api(client)
    ana, bo = [await new_player(client, unique_name(n)) for n in ("ana", "bo")]
    game_id = (await api.game(ana.auth, code=CODE))["id"]
    watcher = await connect()
    await watcher.request({"type": "watch", "id": "w", "game_id": game_id})
    player = await connect(ana)
    other = await connect(bo)
    nobody = await connect()
    message = {"type": "abandon", "id": "q", "game_id": game_id}
    path = f"/api/v1/games/{game_id}/abandon"

    # Refusals before: no player, someone else's game, a token without `play`, unknown game.
    found = await nobody.refused(message, 401)
    same_refusal(found, await http_refusal(client, "POST", path))
    found = await other.refused(message, 403)
    same_refusal(found, await http_refusal(client, "POST", path, headers=bo.auth))
    reader = await scoped_token(client, ana.id, "read")
    found = await (await connect(token=reader)).refused(message, 403)
    assert (found["type"], found["scope"]) == ("/problems/missing-scope", "play"), found
    headers = {"Authorization": f"Bearer {reader}"}
    same_refusal(found, await http_refusal(client, "POST", path, headers=headers))
    unknown = "00000000-0000-4000-8000-000000000000"
    await player.refused({**message, "game_id": unknown}, 404)
    await player.refused({**message, "game_id": "not-a-uuid"}, 404)

    # The abandonment: the game after it, as HTTP reads it; its watchers get the event.
    quit_ = await player.request(message)
    assert (quit_["type"], quit_["game_id"], quit_["version"]) == ("abandoned", game_id, 1)
    assert quit_["game"]["status"] == "abandoned"
    same_game(quit_["game"], await game_now(client, game_id, ana))
    event = await watcher.receive()
    assert (event["type"], event["version"], event["move"]) == ("event", 1, None), event
    assert event["game"]["status"] == "abandoned"

    # Once over: refused as HTTP refuses it (illegal move, rule game_over); nothing changes.
    found = await player.refused({**message, "id": "q2"}, 422)
    assert found["rule"] == "game_over", found
    same_refusal(found, await http_refusal(client, "POST", path, headers=ana.auth))
    assert (await game_now(client, game_id, ana))["version"] == 1
    await watcher.nothing_more()


async def racing_pair(client: TestClient[Any, Any]) -> tuple[Player, dict[str, str]]:
    """A racer and the games of a 2-seat race in its countdown."""
    ana, bo = [await new_player(client, unique_name(n)) for n in ("ana", "bo")]
    response = await client.post(
        "/api/v1/races", json={"seats": 2, "winnable": False}, headers=ana.auth
    )
    assert response.status == 201, await response.text()
    race_id = (await response.json())["id"]
    response = await client.post(f"/api/v1/races/{race_id}/join", headers=bo.auth)
    assert response.status == 200, await response.text()
    games: dict[str, str] = (await response.json())["games"]
    return ana, games


async def test_a_hint_over_the_socket_is_the_http_hint(
    client: TestClient[Any, Any], connect: Connect
) -> None:
    api = Api(client)
    won = vectors()[0]
    ana = await new_player(client, unique_name("ana"))
    game_id = (await api.game(ana.auth, code=won["code"]))["id"]
    for text in won["actions"][:2]:
        await api.act(ana.auth, game_id, action_body(text))
    watcher = await connect()
    await watcher.request({"type": "watch", "id": "w", "game_id": game_id})
    player = await connect(ana)

    hinted = await player.request({"type": "hint", "id": "h", "game_id": game_id})
    assert (hinted["type"], hinted["game_id"]) == ("hinted", game_id), hinted
    assert hinted["hint"]["status"] == "winnable", hinted
    response = await client.get(f"/api/v1/games/{game_id}/hint", headers=ana.auth)
    assert response.status == 200, await response.text()
    assert hinted["hint"] == await response.json()
    # The first hint marks the game assisted: one change, one event, whoever asked.
    event = await watcher.receive()
    assert (event["version"], event["move"], event["game"]["assisted"]) == (3, None, True)
    await watcher.nothing_more()
    # The hint's move is one the server accepts.
    moved = await player.request(act(game_id, hinted["hint"]["move"], "m"))
    assert (moved["type"], moved["version"]) == ("result", 4), moved

    # Refused as over HTTP: a token without `play`, someone else's game, no player.
    message = {"type": "hint", "id": "h2", "game_id": game_id}
    path = f"/api/v1/games/{game_id}/hint"
    reader = await scoped_token(client, ana.id, "read")
    found = await (await connect(token=reader)).refused(message, 403)
    assert found["scope"] == "play", found
    same_refusal(
        found,
        await http_refusal(client, "GET", path, headers={"Authorization": f"Bearer {reader}"}),
    )
    bo = await new_player(client, unique_name("bo"))
    found = await (await connect(bo)).refused(message, 403)
    same_refusal(found, await http_refusal(client, "GET", path, headers=bo.auth))
    await (await connect()).refused(message, 401)

    # One costly request at a time: while the player's is running, a hint is a 429 that says
    # when to come back, over the socket as over HTTP (Retry-After).
    with client.app[SOLVER].work.one_at_a_time(Client(f"player:{ana.id}", "192.0.2.1")):
        found = await player.refused(message, 429)
        assert found["retry_after"] >= 1, found
        response = await client.get(path, headers=ana.auth)
        over_http = await problem(response, 429)
        assert int(response.headers["Retry-After"]) == found["retry_after"]
        same_refusal(found, {"status": 429, **over_http})
    assert (await player.request(message))["type"] == "hinted"


async def test_a_racer_gets_no_hint_over_the_socket_either(
    client: TestClient[Any, Any], connect: Connect
) -> None:
    ana, games = await racing_pair(client)
    game_id = games[ana.id]
    player = await connect(ana)
    found = await player.refused({"type": "hint", "id": "h", "game_id": game_id}, 409)
    assert found["rule"] == "race_no_hints", found
    path = f"/api/v1/games/{game_id}/hint"
    same_refusal(found, await http_refusal(client, "GET", path, headers=ana.auth))
    # A racer may quit during the countdown, over the socket as over HTTP.
    quit_ = await player.request({"type": "abandon", "id": "q", "game_id": game_id})
    assert quit_["game"]["status"] == "abandoned", quit_


# ---------------------------------------------------------------- pacing


@pytest.fixture
async def paced(aiohttp_client: ClientFactory, database_url: str) -> TestClient[Any, Any]:
    """A client of an app that allows 5 messages a second (a window of one second)."""
    app: web.Application = create_app(
        Settings(database_url=database_url, rate_limit=5, migrate=False)
    )
    return await aiohttp_client(app)


async def test_a_message_over_the_budget_gets_an_error_before_any_close(
    paced: TestClient[Any, Any],
) -> None:
    opened: list[Socket] = []
    try:
        ana = await new_player(paced, unique_name("ana"))
        socket = await opener(paced, opened)(ana)
        # One message at a time, each answered: pongs, then a warning, and the socket open.
        pongs = 0
        while (answer := await socket.request({"type": "ping", "id": pongs}))["type"] == "pong":
            pongs += 1
        assert 1 <= pongs <= 5, pongs
        assert (answer["type"], answer["id"]) == ("error", pongs), answer
        found = answer["problem"]
        assert (found["status"], found["type"]) == (429, "/problems/too-many-requests"), found
        assert found["retry_after"] >= 1, found
        # A client that waits as told goes on, on the same socket.
        await asyncio.sleep(found["retry_after"])
        assert await socket.request({"type": "ping", "id": "after"}) == {
            "type": "pong",
            "id": "after",
        }

        # One that keeps going is closed: the first message over the budget is still warned,
        # the next one within the retry window closes the socket (1008).
        await asyncio.sleep(found["retry_after"])
        for n in range(20):
            await socket.send({"type": "ping", "id": f"burst-{n}"})
        messages, code, reason = await socket.closed()
        *answered, warning = messages
        assert all(m["type"] == "pong" for m in answered), messages
        assert 1 <= len(answered) <= 5, messages
        assert (warning["type"], warning["id"]) == ("error", f"burst-{len(answered)}"), warning
        assert warning["problem"]["status"] == 429, warning
        assert (code, reason) == (1008, "rate limit exceeded")
    finally:
        for opened_socket in opened:
            await opened_socket.ws.close()
