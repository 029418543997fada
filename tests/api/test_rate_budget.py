"""One rate budget per client (SPEC 2.7, issue 14): every request and every WebSocket message is
charged to its address and to its player (else to its address as anonymous), sign-ups have
their own per-address limit, open sockets are capped per player and per address, and requests
with bytes that are no token, key or id of ours are charged like any other and answered with a
problem, never a 500. Budgets are in `server/api/limits.py`; these tests use a budget of a
few requests in a window of seconds, so that a short burst spends one."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import WSMsgType
from aiohttp.test_utils import TestClient

from server.api.limits import (
    ADDRESS_FACTOR,
    SIGNIN_LIMIT,
    SOCKETS_PER_ADDRESS,
    SOCKETS_PER_PLAYER,
)
from server.app import create_app
from server.settings import DEFAULT_SIGNUP_LIMIT, Settings
from tests.api.helpers import Player, problem, raw
from tests.conftest import ClientFactory

LIVE = "/api/v1/live"
SUBPROTOCOL = "solitaire.v1"
TIMEOUT = 5.0
RATE = 0.625
"""The tests' rate limit: a budget of 5 requests every 8 seconds (a whole number every window of
whole seconds), so that what a burst spends stays spent however slowly the test runs."""
BUDGET = 5


async def rate_limited(
    aiohttp_client: ClientFactory, database_url: str, rate: float = RATE, **extra: Any
) -> TestClient[Any, Any]:
    settings = Settings(database_url=database_url, rate_limit=rate, migrate=False, **extra)
    return await aiohttp_client(create_app(settings))


@pytest.fixture
async def limited(aiohttp_client: ClientFactory, database_url: str) -> TestClient[Any, Any]:
    """A client of an app with the rate limit RATE (BUDGET every 8 seconds), behind a trusted
    proxy (so that a test can speak from several addresses with `X-Forwarded-For`)."""
    return await rate_limited(aiohttp_client, database_url, trust_forwarded=True)


def from_address(address: str, headers: dict[str, str] | None = None) -> dict[str, str]:
    return {**(headers or {}), "X-Forwarded-For": address}


async def sign_up(client: TestClient[Any, Any], name: str, address: str) -> Player:
    response = await client.post(
        "/api/v1/players", json={"name": name}, headers=from_address(address)
    )
    assert response.status == 201, await response.text()
    body = await response.json()
    return Player(body["id"], name, body["token"])


async def too_many(response: Any) -> None:
    """A 429 problem with a Retry-After of whole seconds, at least 1."""
    document = await problem(response, 429)
    assert document["type"] == "/problems/too-many-requests", document
    assert int(response.headers["Retry-After"]) >= 1


# ---------------------------------------------------------------------------- HTTP


async def test_sign_ups_do_not_multiply_an_address_budget(limited: TestClient[Any, Any]) -> None:
    """The issue's finding: 20 tokens had 20 buckets, so one address sent 20 times the limit.
    Now everything from one address shares its budget (ADDRESS_FACTOR times a player's)."""
    players = [await sign_up(limited, f"p{n}", f"198.51.100.{n}") for n in range(20)]
    for n, player in enumerate(players):  # each token used once, from its own address
        response = await limited.get(
            f"/api/v1/players/{player.id}/settings",
            headers=from_address(f"192.0.2.{n}", player.auth),
        )
        assert response.status == 200, await response.text()
    address = "203.0.113.7"
    statuses = []
    refused = None
    # Round robin: no player's own budget (BUDGET) is spent before the address's is. (Up to
    # the first refusal: a refusal is answered after a delay, and the window goes on meanwhile.)
    for n in range(2 * BUDGET * ADDRESS_FACTOR):
        player = players[n % len(players)]
        response = await limited.get(
            f"/api/v1/players/{player.id}/settings", headers=from_address(address, player.auth)
        )
        statuses.append(response.status)
        if response.status == 429:
            refused = response
            await too_many(response)
            break
        await response.read()
    assert refused is not None and set(statuses) == {200, 429}, statuses
    # At most the address's budget, though 20 players' budgets would allow 100.
    assert statuses.count(200) <= BUDGET * ADDRESS_FACTOR, statuses
    assert statuses[: BUDGET * ADDRESS_FACTOR] == [200] * (BUDGET * ADDRESS_FACTOR), statuses
    # The address's budget is spent for all of its players: one that has not sent anything yet
    # is refused from there, and answered from anywhere else.
    fresh = await sign_up(limited, "fresh", "198.51.100.99")
    path = f"/api/v1/players/{fresh.id}/settings"
    await too_many(await limited.get(path, headers=from_address(address, fresh.auth)))
    response = await limited.get(path, headers=from_address("192.0.2.200", fresh.auth))
    assert response.status == 200, await response.text()


@pytest.mark.slow
async def test_a_player_is_limited_from_any_address(limited: TestClient[Any, Any]) -> None:
    """A player's budget follows the player, not the address: BUDGET requests in all."""
    player = await sign_up(limited, "roamer", "198.51.100.1")
    path = f"/api/v1/players/{player.id}/settings"
    statuses = []
    for n in range(2 * BUDGET):
        response = await limited.get(path, headers=from_address(f"192.0.2.{n}", player.auth))
        statuses.append(response.status)
        if response.status == 429:
            await too_many(response)
    assert statuses == [200] * BUDGET + [429] * BUDGET, statuses


@pytest.mark.slow
async def test_made_up_tokens_are_charged_as_their_address(limited: TestClient[Any, Any]) -> None:
    """A token that is no player's buys no budget: each request is the address's, anonymous."""
    game = f"/api/v1/games/{uuid.uuid4()}"
    statuses = []
    for n in range(2 * BUDGET):
        headers = from_address("203.0.113.8", {"Authorization": f"Bearer made-up-{n}"})
        response = await limited.get(game, headers=headers)
        statuses.append(response.status)
        if response.status == 429:
            await too_many(response)
        else:
            await problem(response, 401)
    assert statuses == [401] * BUDGET + [429] * BUDGET, statuses


async def test_sign_ups_have_their_own_lower_limit(
    aiohttp_client: ClientFactory, database_url: str
) -> None:
    """DEFAULT_SIGNUP_LIMIT sign-ups a minute from one address, with the default rate limit (far
    above it); another address may still sign up, and a refused sign-up creates no player."""
    client = await rate_limited(aiohttp_client, database_url, 50.0, trust_forwarded=True)
    for n in range(DEFAULT_SIGNUP_LIMIT):
        await sign_up(client, f"s{n}", "203.0.113.9")
    response = await client.post(
        "/api/v1/players", json={"name": "one-too-many"}, headers=from_address("203.0.113.9")
    )
    await too_many(response)
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    other = await sign_up(client, "elsewhere", "203.0.113.10")
    # Reading is not signing up: the address may still read.
    response = await client.get(f"/api/v1/players/{other.id}", headers=from_address("203.0.113.9"))
    assert response.status == 200, await response.text()


async def test_sign_ins_have_their_own_limit_per_address(
    aiohttp_client: ClientFactory, database_url: str
) -> None:
    """SIGNIN_LIMIT sign-ins a minute from one address, right or wrong (each costs a hash):
    one more is refused before its password is checked; another address may still sign in."""
    client = await rate_limited(aiohttp_client, database_url, 50.0, trust_forwarded=True)
    password = "correct horse battery"
    response = await client.post("/api/v1/players", json={"name": "signer", "password": password})
    assert response.status == 201
    for n in range(SIGNIN_LIMIT):
        # Spread over names, so that no name reaches its own limit of failures.
        response = await client.post(
            "/api/v1/sessions",
            json={"name": f"nobody{n}", "password": password},
            headers=from_address("203.0.113.9"),
        )
        assert response.status == 401, await response.text()
    response = await client.post(
        "/api/v1/sessions",
        json={"name": "signer", "password": password},
        headers=from_address("203.0.113.9"),
    )
    await too_many(response)
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    response = await client.post(
        "/api/v1/sessions",
        json={"name": "signer", "password": password},
        headers=from_address("203.0.113.10"),
    )
    assert response.status == 201, await response.text()


async def test_rate_limit_zero_turns_every_budget_off(client: TestClient[Any, Any]) -> None:
    """The tests' own settings (RATE_LIMIT=0): no budget, no sign-up limit, no socket cap."""
    players = [
        await sign_up(client, f"free{n}", "127.0.0.1") for n in range(DEFAULT_SIGNUP_LIMIT + 5)
    ]
    for _ in range(3):
        for player in players:
            response = await client.get(
                f"/api/v1/players/{player.id}/settings", headers=player.auth
            )
            assert response.status == 200
    sockets = [
        await client.ws_connect(LIVE, protocols=(SUBPROTOCOL,), headers=players[0].auth)
        for _ in range(SOCKETS_PER_PLAYER + 2)
    ]
    try:
        for ws in sockets:
            await ws.send_json({"type": "ping", "id": 1})
            assert await ws.receive_json(timeout=TIMEOUT) == {"type": "pong", "id": 1}
    finally:
        for ws in sockets:
            await ws.close()


# ---------------------------------------------------------------------------- odd bytes


def get(path: bytes, *headers: bytes) -> bytes:
    return (
        b"GET "
        + path
        + b" HTTP/1.1\r\nHost: test\r\n"
        + b"".join(h + b"\r\n" for h in headers)
        + b"Connection: close\r\n\r\n"
    )


async def test_odd_bytes_are_problems_charged_to_the_budget(
    aiohttp_client: ClientFactory, database_url: str
) -> None:
    """Tokens, keys and path ids outside printable ASCII (bytes no HTTP client library sends)
    are 401/422/404 problems, and each is charged: a flood of them is refused with 429."""
    client = await rate_limited(aiohttp_client, database_url, trust_forwarded=True)
    game = str(uuid.uuid4()).encode()
    bad: list[tuple[bytes, int]] = [
        (get(b"/api/v1/games/" + game, b"Authorization: Bearer a\xff"), 401),
        (get(b"/api/v1/games/" + game, b"Authorization: Bearer \xc3\xa9t\xc3\xa9"), 401),
        (get(b"/api/v1/games/%FF"), 404),
        (get(b"/api/v1/games/%ff%fe/moves"), 404),
        (get(b"/api/v1/games/%C3%A9"), 404),  # (raw, aiohttp's parser refuses them)
        (get(b"/api/v1/players/%E4%B8%AD%E6%96%87%ED%A0%80"), 404),
        (get(b"/api/v1/games/" + game, b"X-Forwarded-For: 1.2.3.4, \xff\xfe"), 404),
        (
            b"POST /api/v1/games/" + game + b"/moves HTTP/1.1\r\nHost: test\r\n"
            b"Idempotency-Key: k\xff\r\nContent-Type: application/json\r\n"
            b"Content-Length: 2\r\nConnection: close\r\n\r\n{}",
            401,  # no token: refused before the key is read
        ),
    ]
    statuses = []
    for request, status in bad:
        answer, headers, body = await raw(client, request)
        statuses.append(answer)
        assert answer in (status, 429), (request, answer, body)
        assert headers["content-type"].startswith("application/problem+json"), headers
        assert body["status"] == answer and body["title"] and body["detail"], body
        if answer == 429:
            assert int(headers["retry-after"]) >= 1
    # Every one of them (from this one address) was charged: at most BUDGET were answered.
    assert statuses[:BUDGET] == [status for _, status in bad[:BUDGET]], statuses
    assert statuses[BUDGET:] == [429] * (len(bad) - BUDGET), statuses


async def test_an_odd_key_of_a_real_player_is_a_422_and_charged(
    aiohttp_client: ClientFactory, database_url: str
) -> None:
    client = await rate_limited(aiohttp_client, database_url)
    player = await sign_up(client, "keyed", "127.0.0.1")
    response = await client.post(
        "/api/v1/games", json={"code": "RU1-C-AAAAAFN"}, headers=player.auth
    )
    game = (await response.json())["id"].encode()
    token = player.auth["Authorization"].encode()
    statuses = []
    for key in (b"k\xff", b"cl\xc3\xa9", b"\xf0\x9f\x83\x8f", b"k\xff", b"k\xff", b"k\xff"):
        request = (
            b"POST /api/v1/games/" + game + b"/moves HTTP/1.1\r\nHost: test\r\n"
            b"Authorization: " + token + b"\r\nIdempotency-Key: " + key + b"\r\n"
            b"Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
        )
        status, _, body = await raw(client, request)
        statuses.append(status)
        if status == 422:
            assert body["errors"][0]["field"] == "Idempotency-Key", body
    # The player's budget (BUDGET): the sign-up was anonymous, the new game and 4 keys are theirs.
    assert statuses == [422] * (BUDGET - 1) + [429] * 2, statuses


# ---------------------------------------------------------------------------- WebSocket


class Sockets:
    """The WebSockets a test opens, all closed at its end."""

    def __init__(self, client: TestClient[Any, Any]) -> None:
        self.client = client
        self.opened: list[Any] = []

    async def open(self, headers: dict[str, str] | None = None) -> Any:
        ws = await self.client.ws_connect(LIVE, protocols=(SUBPROTOCOL,), headers=headers or {})
        self.opened.append(ws)
        return ws

    async def close(self) -> None:
        for ws in self.opened:
            await ws.close()


@pytest.fixture
async def sockets(limited: TestClient[Any, Any]) -> AsyncIterator[Sockets]:
    opened = Sockets(limited)
    try:
        yield opened
    finally:
        await opened.close()


async def pongs_until_closed(ws: Any, warned: bool = False) -> tuple[list[Any], int, str]:
    """The pongs a socket gets until it is closed: (their ids, the close code, its reason).
    The first message over the budget is answered with a 429 `error` (issue 20), the last
    message before the close: the close comes at the next one over the budget (`warned`: the
    warning was read already)."""
    pongs: list[Any] = []
    while True:
        msg = await ws.receive(TIMEOUT)
        if msg.type != WSMsgType.TEXT:
            assert msg.type == WSMsgType.CLOSE, (msg.type, msg.data)
            assert warned or int(msg.data) != 1008, "closed for its pace without a warning"
            return pongs, int(msg.data), str(msg.extra)
        message = json.loads(msg.data)
        assert not warned, ("a message after the warning", message)
        if message["type"] == "error":
            problem = message["problem"]
            assert (problem["status"], problem["retry_after"] >= 1) == (429, True), message
            warned = True
            continue
        assert message["type"] == "pong", message
        pongs.append(message["id"])


async def test_websockets_of_one_player_share_the_players_budget(
    limited: TestClient[Any, Any], sockets: Sockets
) -> None:
    """The issue's finding: each connection had its own budget (10 connections answered 450
    pings). Now every message of every connection is charged to the player: together they get
    at most BUDGET answers before each is closed with 1008 at its first message over it."""
    player = await sign_up(limited, "many", "198.51.100.1")
    address = "203.0.113.20"
    opened = [await sockets.open(from_address(address, player.auth)) for _ in range(4)]
    # The 4 upgrade requests were the player's too: BUDGET - 4 messages are left.
    await asyncio.gather(
        *(ws.send_str(json.dumps({"type": "ping", "id": n})) for ws in opened for n in range(10))
    )
    results = await asyncio.gather(*(pongs_until_closed(ws) for ws in opened))
    assert {(code, reason) for _, code, reason in results} == {(1008, "rate limit exceeded")}
    assert sum(len(pongs) for pongs, _, _ in results) <= BUDGET - 4, results
    # And the HTTP API is refused to the player too (from another address: the player's budget).
    response = await limited.get(
        f"/api/v1/players/{player.id}/settings",
        headers=from_address("192.0.2.50", player.auth),
    )
    await too_many(response)


async def test_messages_after_auth_are_charged_to_the_player(
    limited: TestClient[Any, Any], sockets: Sockets
) -> None:
    """A socket that authenticates with an `auth` message is charged to its player from then
    on: the player's HTTP requests spend the budget its messages share."""
    player = await sign_up(limited, "late", "198.51.100.2")
    ws = await sockets.open(from_address("203.0.113.21"))
    await ws.send_json({"type": "auth", "id": "a", "token": player.token})
    assert (await ws.receive_json(timeout=TIMEOUT))["type"] == "authenticated"
    path = f"/api/v1/players/{player.id}/settings"
    while (
        response := await limited.get(path, headers=from_address("192.0.2.51", player.auth))
    ).status == 200:
        await response.read()
    await too_many(response)
    await ws.send_json({"type": "ping", "id": "over"})
    warning = await ws.receive_json(timeout=TIMEOUT)
    assert (warning["type"], warning["id"], warning["problem"]["status"]) == ("error", "over", 429)
    await ws.send_json({"type": "ping", "id": "again"})
    pongs, code, reason = await pongs_until_closed(ws, warned=True)
    assert (pongs, code, reason) == ([], 1008, "rate limit exceeded")


async def test_anonymous_sockets_of_one_address_share_its_budget(
    limited: TestClient[Any, Any], sockets: Sockets
) -> None:
    opened = [await sockets.open(from_address("203.0.113.22")) for _ in range(2)]
    # Two upgrades were anonymous requests of the address: BUDGET - 2 messages are left.
    for n in range(BUDGET):
        for ws in opened:
            await ws.send_json({"type": "ping", "id": n})
    results = await asyncio.gather(*(pongs_until_closed(ws) for ws in opened))
    # Each socket is answered until its first message over the budget, then closed.
    assert sum(len(pongs) for pongs, _, _ in results) == BUDGET - 2, results
    assert {code for _, code, _ in results} == {1008}


async def opened_after_a_close(sockets: Sockets, headers: dict[str, str]) -> Any:
    """A socket opened where one was just closed: the server counts the closed one out when
    its handler ends, a moment after the close handshake; until then a new one may be refused."""
    for _ in range(100):
        ws = await sockets.open(headers)
        await ws.send_json({"type": "ping", "id": "in"})
        msg = await ws.receive(TIMEOUT)
        if msg.type == WSMsgType.TEXT:
            assert json.loads(msg.data) == {"type": "pong", "id": "in"}
            return ws
        assert (msg.type, msg.data) == (WSMsgType.CLOSE, 1008), msg
        await asyncio.sleep(0.05)
    raise AssertionError("a closed socket never freed its place")


@pytest.fixture
async def roomy(aiohttp_client: ClientFactory, database_url: str) -> AsyncIterator[Sockets]:
    """Sockets of an app whose rate budget lets every upgrade of the cap tests through (only
    the caps refuse them), behind a trusted proxy."""
    client = await rate_limited(
        aiohttp_client, database_url, 10 * SOCKETS_PER_ADDRESS, trust_forwarded=True
    )
    opened = Sockets(client)
    try:
        yield opened
    finally:
        await opened.close()


async def test_a_players_sockets_are_capped(roomy: Sockets) -> None:
    """SOCKETS_PER_PLAYER open sockets per player; one more is closed at once with 1008 and a
    reason, whether it brings its token or authenticates later; a closed one frees its place."""
    sockets = roomy
    player = await sign_up(sockets.client, "capped", "198.51.100.3")
    # Each from its own address, so that no rate budget is what refuses them.
    opened = [
        await sockets.open(from_address(f"192.0.2.{n}", player.auth))
        for n in range(SOCKETS_PER_PLAYER)
    ]
    over = await sockets.open(from_address("192.0.2.100", player.auth))
    msg = await over.receive(TIMEOUT)
    assert (msg.type, msg.data) == (WSMsgType.CLOSE, 1008), msg
    assert msg.extra == f"too many connections of this player (at most {SOCKETS_PER_PLAYER})"

    late = await sockets.open(from_address("192.0.2.101"))
    await late.send_json({"type": "auth", "id": 1, "token": player.token})
    msg = await late.receive(TIMEOUT)
    assert (msg.type, msg.data) == (WSMsgType.CLOSE, 1008), msg
    assert msg.extra == f"too many connections of this player (at most {SOCKETS_PER_PLAYER})"

    await opened[0].close()
    await opened_after_a_close(sockets, from_address("192.0.2.102", player.auth))
    for ws in opened[1:]:
        await ws.send_json({"type": "ping", "id": "still"})
        assert await ws.receive_json(timeout=TIMEOUT) == {"type": "pong", "id": "still"}


async def test_an_addresss_sockets_are_capped(roomy: Sockets) -> None:
    """SOCKETS_PER_ADDRESS open sockets per address, anonymous or not; another address is not
    affected."""
    here = from_address("203.0.113.30")
    first = [await roomy.open(here) for _ in range(SOCKETS_PER_ADDRESS)]
    over = await roomy.open(here)
    msg = await over.receive(TIMEOUT)
    assert (msg.type, msg.data) == (WSMsgType.CLOSE, 1008), msg
    assert msg.extra == f"too many connections from this address (at most {SOCKETS_PER_ADDRESS})"
    elsewhere = await roomy.open(from_address("203.0.113.31"))
    await elsewhere.send_json({"type": "ping", "id": 1})
    assert await elsewhere.receive_json(timeout=TIMEOUT) == {"type": "pong", "id": 1}
    await first[-1].close()
    await opened_after_a_close(roomy, here)


async def test_odd_text_over_the_websocket_gets_errors_and_the_sender_lives(
    roomy: Sockets,
) -> None:
    """Tokens, keys and ids with lone surrogates or other odd characters are each answered with
    an `error`; a ping afterwards is still answered (the connection's sender is alive)."""
    sockets = roomy
    player = await sign_up(sockets.client, "odd", "198.51.100.4")
    game = str(uuid.uuid4())
    act = '{"type": "act", "id": 1, "game_id": "' + game + '", "action": {"action": "undo"}, '
    act += '"idempotency_key": '
    cases = [
        ('{"type": "auth", "id": 1, "token": "t\\udcff"}', 401),
        ('{"type": "auth", "id": 1, "token": "\\u0000\\u001b[31m"}', 401),
        ('{"type": "auth", "id": 1, "token": "\\ud83c\\udccf"}', 401),
        ('{"type": "watch", "id": 1, "game_id": "\\ud800"}', 404),
        ('{"type": "watch", "id": 1, "game_id": "g\\u00e9\\u4e2d"}', 404),
        ('{"type": "unwatch", "id": 1, "game_id": "\\udfff"}', 404),
        ('{"type": "watch_race", "id": 1, "race_id": "\\ud800x"}', 404),
        (act + '"k\\ud800"}', 422),
        (act + '"\\u00e9"}', 422),
        ('{"type": "\\ud800", "id": 1}', 422),
    ]
    # Each case on a socket of its own (`act` authenticated, so that it gets as far as its key).
    for text, status in cases:
        ws = await sockets.open()
        if status == 422 and "act" in text:
            await ws.send_json({"type": "auth", "id": 0, "token": player.token})
            assert (await ws.receive_json(timeout=TIMEOUT))["type"] == "authenticated"
        await ws.send_str(text)
        answer = await ws.receive_json(timeout=TIMEOUT)
        assert answer["type"] == "error" and answer["id"] == 1, (text, answer)
        assert answer["problem"]["status"] == status, (text, answer)
        await ws.send_str('{"type": "ping", "id": "x\\ud800"}')
        assert await ws.receive_json(timeout=TIMEOUT) == {"type": "pong", "id": "x\ud800"}
        await ws.send_json({"type": "ping", "id": "alive"})
        assert await ws.receive_json(timeout=TIMEOUT) == {"type": "pong", "id": "alive"}
        await ws.close()
