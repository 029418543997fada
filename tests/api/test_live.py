"""Live play and watching over the WebSocket endpoint /api/v1/live (SPEC 2.6, README "Live play
and watching"): whole games played over the socket against the same games over HTTP, watchers
(in order, undo and abandon included, face-down cards never shown), reconnecting with `since`,
errors that keep the connection usable, and the close codes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import WSMsgType
from aiohttp.test_utils import TestClient

from server.api import render
from server.api.schemas import EventOut
from server.app import create_app
from server.engine import CARDS, DealCode, Game, card_text, parse_action
from server.services.values import Applied
from server.settings import Settings
from tests.api.helpers import (
    action_body,
    hidden_cards,
    leaked,
    move_log,
    state,
    vectors,
)
from tests.conftest import Api

PATH = "/api/v1/live"
SUBPROTOCOL = "solitaire.v1"
CODE = "RU1-C-AAAAAFN"  # AC, the last card of column 6, goes to its foundation first.
TIMEOUT = 5.0
ATTEMPTS = 40
# The parts of a game document that depend on the game itself, not on how it was played.
PLAY_KEYS = ("status", "score", "moves", "undo_available", "version", "tableau", "foundations")


class Live:
    """One WebSocket connection of a test: JSON in, JSON out, every raw text kept."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.raw: list[str] = []

    async def send(self, message: Any) -> None:
        await self.ws.send_str(json.dumps(message))

    async def receive(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        msg = await self.ws.receive(timeout)
        assert msg.type == WSMsgType.TEXT, (msg.type, msg.data, msg.extra)
        self.raw.append(msg.data)
        body = json.loads(msg.data)
        assert isinstance(body, dict), msg.data
        return body

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Sends a message and returns the answer, which must repeat its id."""
        await self.send(message)
        answer = await self.receive()
        assert answer.get("id") == message.get("id"), (message, answer)
        return answer

    async def ping(self, mid: Any = "still-there") -> None:
        """The connection is still usable: a ping gets its pong."""
        assert await self.request({"type": "ping", "id": mid}) == {"type": "pong", "id": mid}

    async def error(self, message: Any, status: int, mid: Any = None) -> dict[str, Any]:
        """Sends `message` (an object, or raw text) and expects an `error` with `status`."""
        if isinstance(message, str):
            await self.ws.send_str(message)
        else:
            await self.send(message)
        answer = await self.receive()
        assert answer["type"] == "error", answer
        assert answer["id"] == mid, answer
        problem: dict[str, Any] = answer["problem"]
        assert problem["status"] == status, answer
        for key in ("type", "title", "detail"):
            assert isinstance(problem[key], str) and problem[key], answer
        assert "Traceback" not in self.raw[-1]
        return problem

    async def closed(self, timeout: float = TIMEOUT) -> int | None:
        """Reads until the server closes the connection; returns the close code."""
        while True:
            msg = await self.ws.receive(timeout)
            if msg.type == WSMsgType.CLOSE:
                return int(msg.data)
            if msg.type in (WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                return self.ws.close_code
            assert msg.type == WSMsgType.TEXT, (msg.type, msg.data)
            self.raw.append(msg.data)


Connect = Callable[..., Awaitable[Live]]


def opener(client: TestClient[Any, Any], opened: list[Live]) -> Connect:
    async def connect(
        token: str | None = None,
        lang: str | None = None,
        protocols: tuple[str, ...] = (SUBPROTOCOL,),
    ) -> Live:
        headers = {}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if lang is not None:
            headers["Accept-Language"] = lang
        ws = await client.ws_connect(PATH, headers=headers, protocols=protocols)
        live = Live(ws)
        opened.append(live)
        return live

    return connect


@pytest.fixture
async def connect(client: TestClient[Any, Any]) -> AsyncIterator[Connect]:
    opened: list[Live] = []
    yield opener(client, opened)
    for live in opened:
        await live.ws.close()


def token_of(auth: dict[str, str]) -> str:
    return auth["Authorization"].removeprefix("Bearer ")


def act(game_id: str, text: str, mid: Any) -> dict[str, Any]:
    return {"type": "act", "id": mid, "game_id": game_id, "action": action_body(text)}


def vector(rule: str, note: str | None) -> dict[str, Any]:
    for found in vectors():
        if found["code"][4] == rule and found.get("note") == note:
            return found
    raise AssertionError((rule, note))


def check_result(result: dict[str, Any], mid: Any, game_id: str, text: str, version: int) -> None:
    assert set(result) == {"type", "id", "game_id", "version", "move", "game", "replayed"}, result
    assert result["type"] == "result", result
    assert result["replayed"] is False, result  # applied now, not the answer to a retried key
    assert result["id"] == mid
    assert result["game_id"] == game_id
    assert result["move"] == text
    assert result["version"] == version == result["game"]["version"]
    assert result["game"]["id"] == game_id


# ---------------------------------------------------------------- the connection itself


async def test_the_subprotocol_is_selected_when_offered(connect: Connect) -> None:
    offered = await connect()
    assert offered.ws.protocol == SUBPROTOCOL
    await offered.ping()
    among = await connect(protocols=("chat.v9", SUBPROTOCOL))
    assert among.ws.protocol == SUBPROTOCOL
    # Not offered: nothing is selected, and the endpoint still answers.
    plain = await connect(protocols=())
    assert plain.ws.protocol is None
    await plain.ping(7)


async def test_authentication_by_message_and_by_header(
    client: TestClient[Any, Any], api: Api, connect: Connect
) -> None:
    player_id, auth = await api.player("ana")
    by_message = await connect()
    answer = await by_message.request({"type": "auth", "id": 1, "token": token_of(auth)})
    assert answer == {
        "type": "authenticated",
        "id": 1,
        "player": {"id": player_id, "name": "ana"},
    }
    game = await api.game(auth, code=CODE)
    result = await by_message.request(act(game["id"], "AC-f", "m"))
    check_result(result, "m", game["id"], "AC-f", 1)

    by_header = await connect(token=token_of(auth))
    result = await by_header.request(act(game["id"], "undo", "h"))
    check_result(result, "h", game["id"], "undo", 2)

    problem = await by_message.error({"type": "auth", "id": "b", "token": "nope"}, 401, "b")
    assert problem["type"].endswith("/problems/unauthorized"), problem
    await by_message.ping()
    # A bad bearer token at connect time is refused before the upgrade.
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await client.ws_connect(PATH, headers={"Authorization": "Bearer nope"})
    assert refused.value.status == 401


# ---------------------------------------------------------------- whole games


@pytest.mark.parametrize(
    ("rule", "note", "header_auth"),
    [("C", "undo", False), ("R", None, True)],
    ids=["classic-undo-auth-message", "relaxed-auth-header"],
)
async def test_a_whole_game_over_the_socket_equals_the_same_game_over_http(
    client: TestClient[Any, Any],
    api: Api,
    connect: Connect,
    rule: str,
    note: str | None,
    header_auth: bool,
) -> None:
    found = vector(rule, note)
    code, actions = found["code"], found["actions"]
    player_id, auth = await api.player()
    over_ws = (await api.game(auth, code=code))["id"]
    over_http = (await api.game(auth, code=code))["id"]
    if header_auth:
        live = await connect(token=token_of(auth))
    else:
        live = await connect()
        answer = await live.request({"type": "auth", "id": "auth", "token": token_of(auth)})
        assert answer["type"] == "authenticated" and answer["player"]["id"] == player_id

    for index, text in enumerate(actions):
        mid: Any = index if index % 2 else f"a{index}"
        result = await live.request(act(over_ws, text, mid))
        check_result(result, mid, over_ws, text, index + 1)
        http = await api.act(auth, over_http, action_body(text))
        assert http["move"] == text
        for key in PLAY_KEYS:
            assert result["game"][key] == http["game"][key], (index, text, key)

    assert result["game"]["status"] == found["status"] == "won"
    ws_game, http_game = await state(client, over_ws), await state(client, over_http)
    for key in ("status", "score", "moves", "version"):
        assert ws_game[key] == http_game[key], key
    assert (ws_game["status"], ws_game["score"], ws_game["moves"], ws_game["version"]) == (
        found["status"],
        found["score"],
        found["moves"],
        len(actions),
    )
    ws_log, http_log = await move_log(client, over_ws), await move_log(client, over_http)
    strip = [[(m["seq"], m["move"], m["score"]) for m in log] for log in (ws_log, http_log)]
    assert strip[0] == strip[1]
    assert [m for _, m, _ in strip[0]] == actions


# ---------------------------------------------------------------- watching


async def test_a_watcher_sees_every_action_in_order_and_never_a_face_down_card(
    client: TestClient[Any, Any], api: Api, connect: Connect
) -> None:
    found = vector("C", "undo")
    code = found["code"]
    actions = found["actions"][:16]  # the first undo is the 12th action
    assert "undo" in actions
    _, auth = await api.player()
    game_id = (await api.game(auth, code=code))["id"]
    player = await connect(token=token_of(auth))
    watcher = await connect()  # no token: anyone may watch

    engine = Game.deal(DealCode.parse(code))
    hidden_at = [hidden_cards(engine)]  # the face-down cards after each version
    assert len(hidden_at[0]) == 21

    watching = await watcher.request({"type": "watch", "id": "w", "game_id": game_id})
    assert watching["type"] == "watching"
    assert (watching["game_id"], watching["version"]) == (game_id, 0)
    assert watching["game"] == {**await state(client, game_id), "elapsed_ms": 0}
    assert not leaked(watcher.raw[-1], hidden_at[0])

    for index, text in enumerate(actions):
        if index % 2:  # half over the socket, half over HTTP: watchers see both alike
            result = await player.request(act(game_id, text, index))
            check_result(result, index, game_id, text, index + 1)
        else:
            await api.act(auth, game_id, action_body(text))
        engine.play(parse_action(text))
        hidden_at.append(hidden_cards(engine))
        event = await watcher.receive()
        assert set(event) == {"type", "game_id", "version", "move", "game"}, event
        assert event["type"] == "event"
        assert (event["game_id"], event["version"], event["move"]) == (game_id, index + 1, text)
        game = event["game"]
        assert (game["version"], game["score"], game["moves"]) == (
            index + 1,
            engine.score,
            engine.moves,
        )
        assert game["undo_available"] == engine.undo_available
        assert game["tableau"] == engine.tableau_view()
        nulls = sum(card is None for column in game["tableau"] for card in column)
        assert nulls == len(hidden_at[-1])
        assert not leaked(watcher.raw[-1], hidden_at[-1]), (index, text)

    response = await client.post(f"/api/v1/games/{game_id}/abandon", headers=auth)
    assert response.status == 200, await response.text()
    abandoned = await watcher.receive()
    assert abandoned["type"] == "event"
    assert (abandoned["version"], abandoned["move"]) == (len(actions) + 1, None)
    assert abandoned["game"]["status"] == "abandoned"
    assert abandoned["game"]["version"] == len(actions) + 1
    assert not leaked(watcher.raw[-1], hidden_at[-1])
    hidden_at.append(hidden_at[-1])

    # Every message the watcher got, checked against the cards hidden at its version.
    await watcher.ping()
    for raw in watcher.raw:
        message = json.loads(raw)
        if "version" in message:
            assert not leaked(raw, hidden_at[message["version"]]), raw
    # The player's own results never show a face-down card either.
    for raw in player.raw:
        message = json.loads(raw)
        assert not leaked(raw, hidden_at[message["version"]]), raw


async def test_unwatch_stops_the_events(api: Api, connect: Connect) -> None:
    _, auth = await api.player()
    game_id = (await api.game(auth, code=CODE))["id"]
    watcher = await connect()
    assert (await watcher.request({"type": "watch", "id": 1, "game_id": game_id}))["version"] == 0
    await api.act(auth, game_id, action_body("AC-f"))
    assert (await watcher.receive())["version"] == 1
    answer = await watcher.request({"type": "unwatch", "id": 2, "game_id": game_id})
    assert answer == {"type": "unwatched", "id": 2, "game_id": game_id}
    await api.act(auth, game_id, action_body("undo"))
    await watcher.ping()  # the pong comes next: no event in between
    with pytest.raises(TimeoutError):  # nor later
        await watcher.ws.receive(0.3)


async def missed_then_watching(
    watcher: Live, game_id: str, since: int, expected: list[tuple[int, str, int]]
) -> dict[str, Any]:
    """Watches with `since`: the missed events `expected` (version, move, score), then
    `watching`, which is returned."""
    await watcher.send(
        {"type": "watch", "id": f"since-{since}", "game_id": game_id, "since": since}
    )
    for version, move, score in expected:
        event = await watcher.receive()
        assert event == {
            "type": "event",
            "game_id": game_id,
            "version": version,
            "move": move,
            "score": score,
            "missed": True,
        }, (since, version)
    watching = await watcher.receive()
    assert watching["type"] == "watching", watching
    assert watching["id"] == f"since-{since}"
    return watching


async def test_reconnecting_with_since_gets_exactly_the_missed_actions(
    client: TestClient[Any, Any], api: Api, connect: Connect
) -> None:
    actions = vector("C", "undo")["actions"]
    _, auth = await api.player()
    game_id = (await api.game(auth, code=CODE))["id"]
    played: list[tuple[int, str, int]] = []  # (version, move, score)

    async def play(texts: list[str]) -> None:
        for text in texts:
            body = await api.act(auth, game_id, action_body(text))
            played.append((body["game"]["version"], text, body["game"]["score"]))

    watcher = await connect()
    assert (await watcher.request({"type": "watch", "id": 0, "game_id": game_id}))["version"] == 0
    await play(actions[:5])
    for version, move, _ in played:
        event = await watcher.receive()
        assert (event["version"], event["move"]) == (version, move)
        assert "missed" not in event
    await watcher.ws.close()  # gone at version 5

    await play(actions[5:12])  # 7 more, the 7th an undo
    assert played[-1][1] == "undo"
    again = await connect()
    watching = await missed_then_watching(again, game_id, 5, played[5:])
    assert watching["version"] == 12
    assert {**watching["game"], "elapsed_ms": 0} == {
        **await state(client, game_id),
        "elapsed_ms": 0,
    }
    # Watching again from there: live events follow, not marked as missed.
    await play(actions[12:13])
    live = await again.receive()
    assert (live["type"], live["version"], live["move"]) == ("event", 13, actions[12])
    assert "missed" not in live

    # Up to date: nothing missed, just `watching`.
    current = await connect()
    assert (await missed_then_watching(current, game_id, 13, []))["version"] == 13
    # From the start: all 13.
    start = await connect()
    assert (await missed_then_watching(start, game_id, 0, played))["version"] == 13


async def test_since_far_behind_or_ahead_gets_a_resync(
    client: TestClient[Any, Any], api: Api, connect: Connect
) -> None:
    _, auth = await api.player()
    game_id = (await api.game(auth, code=CODE))["id"]
    played: list[tuple[int, str, int]] = []
    for n in range(100):
        text = "AC-f" if n % 2 == 0 else "undo"
        body = await api.act(auth, game_id, action_body(text))
        played.append((n + 1, text, body["game"]["score"]))

    # Exactly 100 missing: still sent one by one.
    watcher = await connect()
    assert (await missed_then_watching(watcher, game_id, 0, played))["version"] == 100

    for n in (100, 101):
        text = "AC-f" if n % 2 == 0 else "undo"
        body = await api.act(auth, game_id, action_body(text))
        played.append((n + 1, text, body["game"]["score"]))
    assert played[-1][0] == 102
    game = await state(client, game_id)

    for since in (0, 1, 103, 10_000):  # 102 and 101 missing; ahead of the game
        late = await connect()
        resync = await late.request(
            {"type": "watch", "id": "r", "game_id": game_id, "since": since}
        )
        assert resync["type"] == "resync", (since, resync)
        assert (resync["game_id"], resync["version"]) == (game_id, 102)
        assert {**resync["game"], "elapsed_ms": 0} == {**game, "elapsed_ms": 0}
        await late.ping()  # nothing else came before the pong

    behind = await connect()
    assert (await missed_then_watching(behind, game_id, 2, played[2:]))["version"] == 102


async def test_watching_with_since_during_play_gets_each_version_once_in_order(
    client: TestClient[Any, Any], api: Api, connect: Connect
) -> None:
    """While the player keeps acting, a watcher that (re)connects with `since` gets the missed
    events, then `watching` at the last of them, then the live events: every version once."""
    _, auth = await api.player()
    game_id = (await api.game(auth, code=CODE))["id"]
    live = await connect(token=token_of(auth))
    playing = True

    async def keep_playing() -> None:
        # Batches of actions sent without waiting: one commit right after the other.
        n = 0
        while playing:
            for k in range(n, n + 10):
                await live.send(act(game_id, "AC-f" if k % 2 == 0 else "undo", k))
            for k in range(n, n + 10):
                assert (await live.receive())["id"] == k
            n += 10

    player = asyncio.create_task(keep_playing())
    try:
        for attempt in range(ATTEMPTS):
            since = max(0, (await state(client, game_id))["version"] - 2)
            watcher = await connect()
            await watcher.send({"type": "watch", "id": attempt, "game_id": game_id, "since": since})
            stream = []  # (type, version, missed) in the order received
            while not stream or stream[-1][0] != "watching":
                message = await watcher.receive()
                stream.append((message["type"], message["version"], message.get("missed")))
            for _ in range(3):
                message = await watcher.receive()
                stream.append((message["type"], message["version"], message.get("missed")))
            await watcher.ws.close()
            position = next(i for i, m in enumerate(stream) if m[0] == "watching")
            watching = stream[position][1]
            expected = (
                [("event", v, True) for v in range(since + 1, watching + 1)]
                + [("watching", watching, None)]
                + [("event", v, None) for v in range(watching + 1, watching + 4)]
            )
            assert stream == expected, (attempt, since, stream)
            await asyncio.sleep(0)
    finally:
        playing = False
        await player


async def test_reconnecting_across_an_abandon_gets_the_abandon_as_missed(
    client: TestClient[Any, Any], api: Api, connect: Connect
) -> None:
    """Abandon counts as an accepted action for `version` and watchers see it live (README,
    "Decisions"), so a watcher that reconnects with `since` must get it among the missed
    events: otherwise it never hears of the versions between its events and `watching`."""
    _, auth = await api.player()
    game_id = (await api.game(auth, code=CODE))["id"]
    first = await api.act(auth, game_id, action_body("AC-f"))
    second = await api.act(auth, game_id, action_body("3D-t3"))
    response = await client.post(f"/api/v1/games/{game_id}/abandon", headers=auth)
    assert response.status == 200, await response.text()
    assert (await state(client, game_id))["version"] == 3

    watcher = await connect()
    await watcher.send({"type": "watch", "id": "s", "game_id": game_id, "since": 0})
    received = []
    while True:
        message = await watcher.receive()
        if message["type"] != "event":
            break
        received.append((message["version"], message["move"], message["score"]))
    assert message["type"] == "watching"
    assert message["version"] == 3
    assert message["game"]["status"] == "abandoned"
    assert received == [
        (1, "AC-f", first["game"]["score"]),
        (2, "3D-t3", second["game"]["score"]),
        (3, None, second["game"]["score"]),
    ]


# ---------------------------------------------------------------- errors and close codes


def illegal_same_suit(code: str) -> dict[str, str]:
    """A move of a visible card onto a column whose last card is of the wrong family."""
    game = Game.deal(DealCode.parse(code))
    for card in CARDS:
        if not game.is_face_up(card):
            continue
        for to in range(7):
            if game.refusal(card, to) == "same_suit":
                return {"card": card_text(card), "to": f"t{to + 1}"}
    raise AssertionError("no same_suit refusal in this deal")


async def test_errors_are_problems_and_the_connection_stays_usable(
    client: TestClient[Any, Any], api: Api, connect: Connect
) -> None:
    _, auth = await api.player("ana")
    _, other_auth = await api.player("bo")
    game_id = (await api.game(auth, code=CODE))["id"]
    anonymous = await connect(lang="ro")
    romanian = await connect(token=token_of(auth), lang="ro")
    english = await connect(token=token_of(auth), lang="en")
    other = await connect(token=token_of(other_auth))
    legal = {"card": "AC", "to": "f"}

    problem = await anonymous.error("{not json", 400)
    assert problem["type"].endswith("/problems/malformed-json"), problem
    await anonymous.ping()
    problem = await anonymous.error("[1, 2]", 422)
    assert problem["type"].endswith("/problems/validation-error"), problem
    await anonymous.ping()
    await anonymous.error('"ping"', 422)
    await anonymous.ping()
    problem = await anonymous.error({"type": "dance", "id": "u"}, 422, "u")
    assert problem["type"].endswith("/problems/validation-error"), problem
    await anonymous.ping()
    await anonymous.error({"id": 3}, 422, 3)  # no type at all
    await anonymous.ping()

    # Acting without auth, and on another player's game.
    message = {"type": "act", "id": "x", "game_id": game_id, "action": legal}
    problem = await anonymous.error(message, 401, "x")
    assert problem["type"].endswith("/problems/unauthorized"), problem
    await anonymous.ping()
    problem = await other.error(message, 403, "x")
    assert problem["type"].endswith("/problems/forbidden"), problem
    await other.ping()

    # An illegal move: the rule, and the detail in the language of the upgrade request.
    bad = illegal_same_suit(CODE)
    answers = {}
    for lang, live in (("ro", romanian), ("en", english)):
        message = {"type": "act", "id": f"i-{lang}", "game_id": game_id, "action": bad}
        answers[lang] = await live.error(message, 422, f"i-{lang}")
        assert answers[lang]["type"].endswith("/problems/illegal-move")
        assert answers[lang]["rule"] == "same_suit"
        await live.ping()
        # The same problem document as over HTTP with the same Accept-Language.
        response = await client.post(
            f"/api/v1/games/{game_id}/moves",
            json=bad,
            headers={**auth, "Accept-Language": lang},
        )
        assert response.status == 422
        assert await response.json() == answers[lang]
    assert answers["ro"]["detail"] != answers["en"]["detail"]
    assert answers["en"]["title"] == "Illegal move"
    assert answers["ro"]["title"] == "Mutare nepermisă"  # the problem's title, translated too

    # Unknown games and bad game ids.
    unknown = "00000000-0000-4000-8000-000000000000"
    for game in ("nope", unknown, 42, None):
        for message in (
            {"type": "watch", "id": "g", "game_id": game},
            {"type": "act", "id": "g", "game_id": game, "action": legal},
        ):
            problem = await romanian.error(message, 404, "g")
            assert problem["type"].endswith("/problems/not-found"), problem
            await romanian.ping()

    # Bad `since`.
    for since in (-1, "3", True, 1.5, [1]):
        message = {"type": "watch", "id": "s", "game_id": game_id, "since": since}
        problem = await anonymous.error(message, 422, "s")
        assert problem["type"].endswith("/problems/validation-error"), problem
        await anonymous.ping()

    # Bad actions: an unknown field, a missing place, no action object.
    for action in ({**legal, "extra": 1}, {"card": "AC"}, {"action": "fly"}, "AC-f", None):
        message = {"type": "act", "id": 9, "game_id": game_id, "action": action}
        problem = await english.error(message, 422, 9)
        assert problem["type"].endswith("/problems/validation-error"), problem
        await english.ping()

    # None of those changed the game; the legal action still works on every connection.
    assert (await state(client, game_id))["version"] == 0
    result = await english.request({"type": "act", "id": "ok", "game_id": game_id, "action": legal})
    check_result(result, "ok", game_id, "AC-f", 1)


async def test_a_binary_frame_closes_with_1003(connect: Connect) -> None:
    live = await connect()
    await live.ping()
    await live.ws.send_bytes(b'{"type": "ping"}')
    assert await live.closed() == 1003


def ping_of_size(size: int) -> str:
    """A ping of exactly `size` bytes (the padding field is ignored)."""
    prefix = '{"type": "ping", "id": 1, "pad": "'
    text = prefix + "x" * (size - len(prefix) - 2) + '"}'
    assert len(text.encode()) == size
    return text


async def test_a_message_over_16_kib_closes_with_1009(connect: Connect) -> None:
    live = await connect()
    await live.ws.send_str(ping_of_size(16 * 1024 - 1))
    assert await live.receive() == {"type": "pong", "id": 1}
    await live.ws.send_str(ping_of_size(16 * 1024 + 1))
    assert await live.closed() == 1009


async def test_a_message_of_exactly_16_kib_is_accepted(connect: Connect) -> None:
    """README: "Text frames only, at most 16 KiB each"."""
    live = await connect()
    await live.ws.send_str(ping_of_size(16 * 1024))
    assert await live.receive() == {"type": "pong", "id": 1}


async def test_flooding_closes_with_1008(
    aiohttp_client: Callable[..., Awaitable[TestClient[Any, Any]]], database_url: str
) -> None:
    client = await aiohttp_client(
        create_app(Settings(database_url=database_url, rate_limit=5, migrate=False))
    )
    opened: list[Live] = []
    try:
        connect = opener(client, opened)
        # The calm socket is a player's: anonymous sockets of one address share one budget.
        _, auth = await Api(client).player()
        calm = await connect(token_of(auth))
        await calm.ping()
        flood = await connect()
        for n in range(40):
            await flood.send({"type": "ping", "id": n})
        texts = []
        code = None
        while code is None:
            msg = await flood.ws.receive(TIMEOUT)
            if msg.type == WSMsgType.TEXT:
                texts.append(json.loads(msg.data))
            else:
                assert msg.type == WSMsgType.CLOSE, (msg.type, msg.data)
                code = msg.data
        assert code == 1008
        # The burst allowed is the rate limit: a few pongs, in order, then one warning (the
        # first message over the budget), then the close at the next one.
        *pongs, warning = texts
        assert 1 <= len(pongs) <= 6, pongs
        assert pongs == [{"type": "pong", "id": n} for n in range(len(pongs))]
        assert (warning["type"], warning["id"]) == ("error", len(pongs)), warning
        assert warning["problem"]["status"] == 429, warning
        # Another client's connection is not affected.
        await calm.ping()
    finally:
        for live in opened:
            await live.ws.close()


async def test_a_hint_reaches_the_watchers_as_a_change_of_its_own(
    client: TestClient[Any, Any], api: Api, connect: Connect
) -> None:
    """The first hint marks the game assisted: a version of its own, an event with a null move;
    a later hint changes nothing. A watcher that reconnects with `since` gets it as missed."""
    won = vectors()[0]
    _, auth = await api.player()
    game_id = (await api.game(auth, code=won["code"]))["id"]
    for text in won["actions"][:2]:
        await api.act(auth, game_id, action_body(text))
    watcher = await connect()
    watching = await watcher.request({"type": "watch", "id": "w", "game_id": game_id})
    assert (watching["version"], watching["game"]["assisted"]) == (2, False)

    response = await client.get(f"/api/v1/games/{game_id}/hint", headers=auth)
    assert response.status == 200, await response.text()
    assert (await response.json())["status"] == "winnable"
    event = await watcher.receive()
    assert {k: event[k] for k in ("type", "game_id", "version", "move")} == {
        "type": "event",
        "game_id": game_id,
        "version": 3,
        "move": None,
    }
    assert event["game"]["assisted"] is True
    game = await state(client, game_id)
    assert (game["version"], game["assisted"], game["moves"]) == (3, True, 2)
    assert event["game"] == game | {"elapsed_ms": event["game"]["elapsed_ms"]}

    # A second hint is no change: no version, no event.
    response = await client.get(f"/api/v1/games/{game_id}/hint", headers=auth)
    assert response.status == 200
    assert (await state(client, game_id))["version"] == 3
    # The next move is version 4; its event comes right after, nothing in between.
    await api.act(auth, game_id, action_body(won["actions"][2]))
    event = await watcher.receive()
    assert (event["version"], event["move"]) == (4, won["actions"][2])
    assert [entry["seq"] for entry in await move_log(client, game_id)] == [1, 2, 4]

    late = await connect()
    await late.send({"type": "watch", "id": "s", "game_id": game_id, "since": 1})
    missed = [await late.receive() for _ in range(3)]
    assert [(m["version"], m["move"], m["missed"]) for m in missed] == [
        (2, won["actions"][1], True),
        (3, None, True),
        (4, won["actions"][2], True),
    ]
    assert missed[1]["score"] == missed[0]["score"]
    assert (await late.receive())["type"] == "watching"


async def test_a_change_is_rendered_once_for_all_the_watchers_of_a_process(
    client: TestClient[Any, Any], api: Api, connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The broker hands the change over as a value; `render.py` renders its `event` once per
    version, and every watcher here gets that same text."""
    rendered: list[int] = []
    event_message = render.event_message

    def counted(applied: Applied) -> EventOut:
        rendered.append(applied.view.row.version)
        return event_message(applied)

    monkeypatch.setattr(render, "event_message", counted)
    _, auth = await api.player()
    game_id = (await api.game(auth, code=CODE))["id"]
    watchers = [await connect() for _ in range(3)]
    for n, watcher in enumerate(watchers):
        await watcher.request({"type": "watch", "id": n, "game_id": game_id})
    for text in ("AC-f", "undo", "AC-f"):
        await api.act(auth, game_id, action_body(text))
    for watcher in watchers:
        for version in (1, 2, 3):
            assert (await watcher.receive())["version"] == version
    assert rendered == [1, 2, 3]
    assert watchers[0].raw[-3:] == watchers[1].raw[-3:] == watchers[2].raw[-3:]
