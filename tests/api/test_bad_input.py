"""Malformed requests, limits, rate limiting and CORS (SPEC 2.7)."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp.test_utils import TestClient

from server.api.cors import EXPOSED_HEADERS
from server.app import create_app
from server.settings import Settings
from tests.api.helpers import problem, state
from tests.api.helpers import raw as raw_request
from tests.conftest import Api, ClientFactory

JSON = {"Content-Type": "application/json"}


@dataclass
class Case:
    """One malformed request: `path` may hold `{game}`; `auth` adds the player's token."""

    name: str
    method: str
    path: str
    status: int | None
    """The status it must answer; None: any 4xx."""
    data: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    auth: bool = True


def raw(value: Any) -> bytes:
    return json.dumps(value).encode()


# After the opening move AC-f (version 1), 3D-t3 is legal: every body below is built around
# it, so that a server that ignored the flaw would visibly change the game.
LEGAL = {"card": "3D", "to": "t3"}
MOVES = "/api/v1/games/{game}/moves"

CASES = [
    Case("malformed JSON", "POST", MOVES, 400, b'{"card": "3D", "to": "t3"'),
    Case("malformed JSON, single quotes", "POST", MOVES, 400, b"{'card': '3D', 'to': 't3'}"),
    Case("trailing garbage", "POST", MOVES, 400, b'{"card": "3D", "to": "t3"} x'),
    Case("JSON string", "POST", MOVES, 422, raw("3D-t3")),
    Case("JSON number", "POST", MOVES, 422, b"42"),
    Case("JSON null", "POST", MOVES, 422, b"null"),
    Case("JSON array", "POST", MOVES, 422, raw([LEGAL])),
    Case("empty body", "POST", MOVES, 422, b""),
    Case("empty object", "POST", MOVES, 422, b"{}"),
    Case("unknown field", "POST", MOVES, 422, raw({**LEGAL, "force": True})),
    Case("card is a number", "POST", MOVES, 422, raw({"card": 3, "to": "t3"})),
    Case("card is a list", "POST", MOVES, 422, raw({"card": ["3D"], "to": "t3"})),
    Case("to is a number", "POST", MOVES, 422, raw({"card": "3D", "to": 3})),
    Case("action is a number", "POST", MOVES, 422, raw({"action": 1, "card": "3D"})),
    Case("card ZZ", "POST", MOVES, 422, raw({"card": "ZZ", "to": "t3"})),
    Case("card 1D", "POST", MOVES, 422, raw({"card": "1D", "to": "t3"})),
    Case("to t8", "POST", MOVES, 422, raw({"card": "3D", "to": "t8"})),
    Case("to t0", "POST", MOVES, 422, raw({"card": "3D", "to": "t0"})),
    Case("to f1", "POST", MOVES, 422, raw({"card": "3D", "to": "f1"})),
    Case("move without to", "POST", MOVES, 422, raw({"card": "3D"})),
    Case("action fly", "POST", MOVES, 422, raw({"action": "fly", "card": "3D"})),
    Case("undo with a card", "POST", MOVES, 422, raw({"action": "undo", "card": "AC"})),
    Case("tap without card", "POST", MOVES, 422, raw({"action": "tap"})),
    Case("tap with a place", "POST", MOVES, 422, raw({"action": "tap", "card": "3D", "to": "t3"})),
    Case("double_tap without card", "POST", MOVES, 422, raw({"action": "double_tap"})),
    Case("negative expected_version", "POST", MOVES, 422, raw({**LEGAL, "expected_version": -1})),
    Case("text expected_version", "POST", MOVES, 422, raw({**LEGAL, "expected_version": "one"})),
    Case(
        "numeric-text expected_version", "POST", MOVES, 422, raw({**LEGAL, "expected_version": "1"})
    ),
    Case("boolean expected_version", "POST", MOVES, 422, raw({**LEGAL, "expected_version": True})),
    Case("huge expected_version", "POST", MOVES, 422, raw({**LEGAL, "expected_version": 10**30})),
    Case("body over 256 KiB", "POST", MOVES, 413, raw({**LEGAL, "pad": "x" * (300 * 1024)})),
    Case("non-UTF-8 bytes", "POST", MOVES, 400, b'{"card": "3D", "to": "t3", "x": "\xff\xfe"}'),
    Case("NUL in a card", "POST", MOVES, 422, raw({"card": "3D\u0000", "to": "t3"})),
    Case("deeply nested array", "POST", MOVES, None, b"[" * 100_000 + b"]" * 100_000),
    Case(
        "deeply nested value",
        "POST",
        MOVES,
        None,
        b'{"card": ' + b"[" * 50_000 + b"]" * 50_000 + b', "to": "t3"}',
    ),
    Case("invalid UUID", "POST", "/api/v1/games/not-a-uuid/moves", 404, raw(LEGAL)),
    Case("invalid UUID on GET", "GET", "/api/v1/games/123", 404),
    Case("invalid UUID on targets", "GET", "/api/v1/games/xyz/targets?card=3D", 404),
    Case("unknown game", "POST", f"/api/v1/games/{uuid.uuid4()}/moves", 404, raw(LEGAL)),
    Case("unknown game GET", "GET", f"/api/v1/games/{uuid.uuid4()}", 404),
    Case("unknown game moves", "GET", f"/api/v1/games/{uuid.uuid4()}/moves", 404),
    Case("unknown game replay", "GET", f"/api/v1/games/{uuid.uuid4()}/replay", 404),
    Case("unknown game abandon", "POST", f"/api/v1/games/{uuid.uuid4()}/abandon", 404),
    Case("unknown route", "GET", "/api/v1/nothing-here", 404),
    Case("unknown route under a game", "GET", "/api/v1/games/{game}/nothing", 404),
    Case("wrong method on a game", "DELETE", "/api/v1/games/{game}", 405),
    Case("wrong method on moves", "PUT", MOVES, 405, raw(LEGAL)),
    Case("GET on abandon", "GET", "/api/v1/games/{game}/abandon", 405),
    Case("targets without card", "GET", "/api/v1/games/{game}/targets", 422),
    Case("targets with card ZZ", "GET", "/api/v1/games/{game}/targets?card=ZZ", 422),
    Case(
        "Idempotency-Key over 255 characters",
        "POST",
        MOVES,
        422,
        raw(LEGAL),
        {"Idempotency-Key": "k" * 256},
    ),
    Case("empty Idempotency-Key", "POST", MOVES, 422, raw(LEGAL), {"Idempotency-Key": ""}),
    Case("player name empty", "POST", "/api/v1/players", 422, raw({"name": ""}), auth=False),
    Case("player name blank", "POST", "/api/v1/players", 422, raw({"name": "   "}), auth=False),
    Case("player name 65", "POST", "/api/v1/players", 422, raw({"name": "a" * 65}), auth=False),
    Case("player name 1000", "POST", "/api/v1/players", 422, raw({"name": "é" * 1000}), auth=False),
    Case("player name NUL", "POST", "/api/v1/players", 422, raw({"name": "a\u0000b"}), auth=False),
    Case("player name number", "POST", "/api/v1/players", 422, raw({"name": 7}), auth=False),
    Case("player without name", "POST", "/api/v1/players", 422, raw({}), auth=False),
    Case("player unknown field", "POST", "/api/v1/players", 422, raw({"name": "a", "admin": True})),
    Case("player malformed", "POST", "/api/v1/players", 400, b'{"name": "a"', auth=False),
    Case("game bad code", "POST", "/api/v1/games", 422, raw({"code": "RU1-C-AAAA"})),
    Case("game code RU2", "POST", "/api/v1/games", 422, raw({"code": "RU2-C-AAAAAAA"})),
    Case("game bad rule", "POST", "/api/v1/games", 422, raw({"rule": "yukon"})),
    Case("game code is a number", "POST", "/api/v1/games", 422, raw({"code": 7})),
    Case("game unknown field", "POST", "/api/v1/games", 422, raw({"rule": "classic", "x": 1})),
    Case("game body is an array", "POST", "/api/v1/games", 422, raw(["classic"])),
]


async def test_malformed_requests_are_refused_with_problems(
    client: TestClient[Any, Any], api: Api
) -> None:
    player_id, auth = await api.player("ana")
    failures = []
    for case in CASES:
        # A fresh game at version 1 for each case, so that each is judged on its own.
        game = await api.game(auth, code="RU1-C-AAAAAFN")
        game_id = game["id"]
        await api.act(auth, game_id, {"card": "AC", "to": "f"})
        before = await state(client, game_id)
        headers = {**(auth if case.auth else {}), **JSON, **case.headers}
        path = case.path.format(game=game_id)
        response = await client.request(case.method, path, data=case.data, headers=headers)
        try:
            assert response.status != 500, "500"
            if case.status is None:
                assert 400 <= response.status < 500
            await problem(response, case.status or response.status)
            if case.status == 405:
                assert "Allow" in response.headers
        except AssertionError as exc:
            failures.append(f"{case.name}: {case.method} {path} -> {response.status}: {exc}")
        after = await state(client, game_id)
        if after != before:
            failures.append(f"{case.name}: the game changed: version {after['version']}")
    assert not failures, "\n".join(failures)

    # The server still answers, for the same player.
    moved = await api.act(auth, game_id, {"card": "3D", "to": "t3"})
    assert moved["game"]["player"]["id"] == player_id


async def test_valid_edge_inputs_are_accepted(client: TestClient[Any, Any], api: Api) -> None:
    """The boundaries of the limits above are accepted."""
    response = await client.post("/api/v1/players", json={"name": "a" * 32})
    assert response.status == 201, await response.text()
    response = await client.post("/api/v1/players", json={"name": "  Ioana Ștefănescu  "})
    assert response.status == 201, await response.text()
    assert (await response.json())["name"] == "Ioana Ștefănescu"
    response = await client.post("/api/v1/players", json={"name": "מיכל"})
    assert response.status == 201
    assert (await response.json())["name"] == "מיכל"
    _, auth = await api.player()
    game = await api.game(auth, code="RU1-C-AAAAAFN")
    response = await client.post(
        f"/api/v1/games/{game['id']}/moves",
        json={"card": "ac", "to": "F"},
        headers={**auth, "Idempotency-Key": "k" * 255},
    )
    assert response.status == 200, await response.text()
    response = await client.post(
        f"/api/v1/games/{game['id']}/moves",
        json={"card": "3d", "to": "T3", "expected_version": 1},
        headers=auth,
    )
    assert response.status == 200, await response.text()
    assert (await response.json())["move"] == "3D-t3"


async def test_rate_limit(aiohttp_client: ClientFactory, database_url: str) -> None:
    client = await aiohttp_client(
        create_app(Settings(database_url=database_url, rate_limit=5, migrate=False))
    )
    path = f"/api/v1/games/{uuid.uuid4()}"
    response = await client.get(path)
    assert response.status == 404, await response.text()

    async def get() -> tuple[int, dict[str, str], str]:
        async with client.get(path) as response:
            return response.status, dict(response.headers), await response.text()

    # A flood: 30 at once (a refusal is answered after a delay, so one after another would
    # spread over several windows).
    responses = await asyncio.gather(*(get() for _ in range(30)))
    statuses = [status for status, _, _ in responses]
    assert 429 in statuses, statuses
    assert set(statuses) <= {404, 429}, statuses
    assert statuses.count(429) >= 20, statuses
    for status, headers, text in responses:
        if status != 429:
            continue
        assert headers["Content-Type"].startswith("application/problem+json")
        assert int(headers["Retry-After"]) >= 1
        document = json.loads(text)
        assert document["status"] == 429
        assert document["type"] and document["title"] and document["detail"]


async def test_default_rate_limit_lets_a_player_act_20_times_a_second(
    aiohttp_client: ClientFactory, database_url: str
) -> None:
    client = await aiohttp_client(create_app(Settings(database_url=database_url, migrate=False)))
    api = Api(client)
    _, auth = await api.player()
    game = await api.game(auth, code="RU1-C-AAAAAFN")
    moves = ["AC-f", "undo"] * 10
    for text in moves:
        body = {"action": "undo"} if text == "undo" else {"card": "AC", "to": "f"}
        result = await api.act(auth, game["id"], body)
        assert result["move"] == text
    for _ in range(5):
        response = await client.get(f"/api/v1/games/{game['id']}")
        assert response.status == 200


async def test_cors(client: TestClient[Any, Any], api: Api) -> None:
    origin = {"Origin": "https://cards.example"}
    for path in ("/api/v1/games", f"/api/v1/games/{uuid.uuid4()}/moves"):
        response = await client.options(
            path,
            headers={
                **origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, idempotency-key, content-type",
            },
        )
        assert response.status == 200, await response.text()
        assert response.headers["Access-Control-Allow-Origin"] in ("*", origin["Origin"])
        allowed = {
            h.strip().lower() for h in response.headers["Access-Control-Allow-Headers"].split(",")
        }
        assert {"authorization", "idempotency-key", "content-type"} <= allowed
        methods = {
            m.strip().upper() for m in response.headers["Access-Control-Allow-Methods"].split(",")
        }
        assert "POST" in methods  # the method asked

    _, auth = await api.player()
    response = await client.post(
        "/api/v1/games", json={"code": "RU1-C-AAAAAFN"}, headers={**auth, **origin}
    )
    assert response.status == 201
    assert response.headers["Access-Control-Allow-Origin"] in ("*", origin["Origin"])
    exposed = {
        h.strip().lower() for h in response.headers["Access-Control-Expose-Headers"].split(",")
    }
    assert "location" in exposed
    game = await response.json()

    response = await client.get(f"/api/v1/games/{game['id']}", headers=origin)
    assert response.status == 200
    assert response.headers["Access-Control-Allow-Origin"] in ("*", origin["Origin"])
    # Errors are readable cross-origin too.
    response = await client.get(f"/api/v1/games/{uuid.uuid4()}", headers=origin)
    await problem(response, 404)
    assert response.headers["Access-Control-Allow-Origin"] in ("*", origin["Origin"])
    response = await client.post(
        f"/api/v1/games/{game['id']}/moves", json={"card": "AC", "to": "f"}, headers=origin
    )
    await problem(response, 401)
    assert response.headers["Access-Control-Allow-Origin"] in ("*", origin["Origin"])


async def test_a_cross_origin_answer_exposes_every_header_a_client_acts_on(
    client: TestClient[Any, Any], api: Api
) -> None:
    """The whole `Access-Control-Expose-Headers` set of `server/api/cors.py`, no more and no
    fewer, on a success, a creation, a refusal and a 401 alike."""
    origin = {"Origin": "https://cards.example"}
    _, auth = await api.player()
    answers = [
        await client.post(
            "/api/v1/games", json={"code": "RU1-C-AAAAAFN"}, headers={**auth, **origin}
        ),
        await client.get("/api/v1/daily", headers=origin),
        await client.get(f"/api/v1/games/{uuid.uuid4()}", headers=origin),
        await client.get("/api/v1/me", headers={**origin, "Authorization": "Bearer made-up"}),
    ]
    assert [response.status for response in answers] == [201, 200, 404, 401]
    wanted = {name.lower() for name in EXPOSED_HEADERS}
    assert len(wanted) == len(EXPOSED_HEADERS)
    for response in answers:
        field = response.headers["Access-Control-Expose-Headers"]
        exposed = [name.strip().lower() for name in field.split(",")]
        assert sorted(exposed) == sorted(wanted), (response.url, field)


async def test_tokens_and_keys_outside_printable_ascii_are_refused_not_500(
    client: TestClient[Any, Any], api: Api
) -> None:
    _, auth = await api.player()
    game_id = (await api.game(auth, code="RU1-C-AAAAAFN"))["id"]
    before = await state(client, game_id)
    body = b'{"card": "AC", "to": "f"}'

    def request(*headers: bytes) -> bytes:
        return (
            f"POST /api/v1/games/{game_id}/moves HTTP/1.1\r\nHost: test\r\n".encode()
            + b"".join(h + b"\r\n" for h in headers)
            + b"Content-Type: application/json\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )

    token = b"Authorization: " + auth["Authorization"].encode()
    for bad_token in (b"Authorization: Bearer a\xff", b"Authorization: Bearer \xc3\xa9t\xc3\xa9"):
        status, _, document = await raw_request(client, request(bad_token))
        assert (status, document["type"]) == (401, "/problems/unauthorized"), document
    # (A control character never gets this far: aiohttp's parser refuses the request.)
    for bad_key in (b"Idempotency-Key: k\xff", b"Idempotency-Key: cl\xc3\xa9"):
        status, _, document = await raw_request(client, request(token, bad_key))
        assert status == 422, document
        assert document["errors"][0]["field"] == "Idempotency-Key", document
    assert await state(client, game_id) == before


async def test_lone_surrogates_over_the_websocket_get_answers(
    client: TestClient[Any, Any], api: Api
) -> None:
    _, auth = await api.player()
    game_id = (await api.game(auth, code="RU1-C-AAAAAFN"))["id"]
    ws = await client.ws_connect("/api/v1/live", protocols=("solitaire.v1",))
    try:
        # JSON escapes of lone surrogates: valid JSON, text that is no UTF-8.
        await ws.send_str('{"type": "ping", "id": "x\\ud800"}')
        pong = await ws.receive_json(timeout=5)
        assert pong == {"type": "pong", "id": "x\ud800"}, pong
        await ws.send_str('{"type": "auth", "id": 1, "token": "t\\udcff"}')
        error = await ws.receive_json(timeout=5)
        assert (error["type"], error["problem"]["status"]) == ("error", 401), error
        await ws.send_json({"type": "auth", "id": 2, "token": auth["Authorization"][7:]})
        assert (await ws.receive_json(timeout=5))["type"] == "authenticated"
        await ws.send_str(
            json.dumps({"type": "act", "id": 3, "game_id": game_id, "action": {"action": "undo"}})[
                :-1
            ]
            + ', "idempotency_key": "k\\ud800"}'
        )
        error = await ws.receive_json(timeout=5)
        assert (error["type"], error["problem"]["status"]) == ("error", 422), error
        # The connection and its sender are still alive.
        await ws.send_json({"type": "ping", "id": "still"})
        assert await ws.receive_json(timeout=5) == {"type": "pong", "id": "still"}
    finally:
        await ws.close()
