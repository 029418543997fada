"""Conditional and idempotent actions under concurrency (SPEC 2.3)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp.test_utils import TestClient

from tests.api.helpers import move_log, problem, state
from tests.conftest import Api

CODE = "RU1-C-AAAAAFN"  # AC, the last card of column 6, goes to its foundation first.


async def new_game(api: Api) -> tuple[dict[str, str], str]:
    _, auth = await api.player()
    game = await api.game(auth, code=CODE)
    return auth, game["id"]


async def post(
    client: TestClient[Any, Any],
    game_id: str,
    body: dict[str, Any],
    headers: dict[str, str],
) -> tuple[int, str, str]:
    response = await client.post(f"/api/v1/games/{game_id}/moves", json=body, headers=headers)
    return response.status, response.content_type, await response.text()


async def test_concurrent_conditional_moves_apply_once(
    client: TestClient[Any, Any], api: Api
) -> None:
    auth, game_id = await new_game(api)
    body = {"card": "AC", "to": "f", "expected_version": 0}
    results = await asyncio.gather(*(post(client, game_id, body, auth) for _ in range(30)))
    statuses = sorted(status for status, _, _ in results)
    assert statuses == [200] + [409] * 29, statuses
    for status, content_type, text in results:
        if status == 200:
            assert json.loads(text)["move"] == "AC-f"
            assert json.loads(text)["game"]["version"] == 1
        else:
            assert content_type == "application/problem+json", text
            document = json.loads(text)
            assert document["status"] == 409 and document["type"] and document["title"]
            assert document["detail"]
    game = await state(client, game_id)
    assert (game["version"], game["moves"], game["score"]) == (1, 1, 10)
    assert game["foundations"] == [[], [], [], ["AC"]]
    log = await move_log(client, game_id)
    assert [(entry["seq"], entry["move"]) for entry in log] == [(1, "AC-f")]


async def test_concurrent_retries_with_one_idempotency_key(
    client: TestClient[Any, Any], api: Api
) -> None:
    auth, game_id = await new_game(api)
    headers = {**auth, "Idempotency-Key": "move-1-of-the-game"}
    body = {"card": "AC", "to": "f"}
    results = await asyncio.gather(*(post(client, game_id, body, headers) for _ in range(20)))
    assert [status for status, _, _ in results] == [200] * 20, [r[0] for r in results]
    texts = {text for _, _, text in results}
    assert len(texts) == 1, texts
    first = json.loads(texts.pop())
    assert first["move"] == "AC-f"
    assert first["game"]["version"] == 1

    game = await state(client, game_id)
    assert (game["version"], game["moves"], game["score"]) == (1, 1, 10)
    assert len(await move_log(client, game_id)) == 1

    # A later retry gets the same answer, even though the game has moved on since.
    await asyncio.sleep(0.05)
    await api.act(auth, game_id, {"card": "3D", "to": "t3"})
    status, _, text = await post(client, game_id, body, headers)
    assert status == 200
    assert json.loads(text) == first
    assert (await state(client, game_id))["version"] == 2
    assert len(await move_log(client, game_id)) == 2

    # The same key with another request is refused and changes nothing.
    before = await state(client, game_id)
    for other in ({"card": "QD", "to": "t4"}, {"card": "AC", "to": "f", "expected_version": 0}):
        response = await client.post(f"/api/v1/games/{game_id}/moves", json=other, headers=headers)
        await problem(response, 422)
    assert await state(client, game_id) == before

    # Another key is another request.
    other_key = {**auth, "Idempotency-Key": "move-3-of-the-game"}
    status, _, text = await post(client, game_id, {"card": "QD", "to": "t4"}, other_key)
    assert status == 200, text
    assert json.loads(text)["game"]["version"] == 3


async def test_idempotency_keys_belong_to_a_player(client: TestClient[Any, Any], api: Api) -> None:
    auth_a, game_a = await new_game(api)
    auth_b, game_b = await new_game(api)
    key = {"Idempotency-Key": "same-key"}
    first = await post(client, game_a, {"card": "AC", "to": "f"}, {**auth_a, **key})
    second = await post(client, game_b, {"card": "AC", "to": "f"}, {**auth_b, **key})
    assert first[0] == second[0] == 200
    assert json.loads(first[2])["game"]["id"] == game_a
    assert json.loads(second[2])["game"]["id"] == game_b
    assert (await state(client, game_b))["version"] == 1


async def test_stale_expected_version(client: TestClient[Any, Any], api: Api) -> None:
    auth, game_id = await new_game(api)
    moved = await api.act(auth, game_id, {"card": "AC", "to": "f", "expected_version": 0})
    assert moved["game"]["version"] == 1
    before = await state(client, game_id)
    for body in (
        {"card": "3D", "to": "t3", "expected_version": 0},
        {"card": "3D", "to": "t3", "expected_version": 2},
        {"action": "undo", "expected_version": 0},
        {"action": "double_tap", "card": "3D", "expected_version": 5},
    ):
        response = await client.post(f"/api/v1/games/{game_id}/moves", json=body, headers=auth)
        await problem(response, 409)
    assert await state(client, game_id) == before
    assert len(await move_log(client, game_id)) == 1
    # With the current version the move goes through.
    result = await api.act(auth, game_id, {"card": "3D", "to": "t3", "expected_version": 1})
    assert result["game"]["version"] == 2


async def test_concurrent_different_moves_keep_the_log_consistent(
    client: TestClient[Any, Any], api: Api
) -> None:
    """Unconditional moves racing on one game: each is applied whole or refused whole."""
    auth, game_id = await new_game(api)
    bodies = [{"card": "AC", "to": "f"}, {"card": "3D", "to": "t3"}, {"card": "QD", "to": "t4"}]
    results = await asyncio.gather(*(post(client, game_id, bodies[i % 3], auth) for i in range(15)))
    accepted = [json.loads(text)["move"] for status, _, text in results if status == 200]
    for status, content_type, _ in results:
        assert status in (200, 409, 422), status
        if status != 200:
            assert content_type == "application/problem+json"
    game = await state(client, game_id)
    log = await move_log(client, game_id)
    assert [entry["seq"] for entry in log] == list(range(1, len(log) + 1))
    assert sorted(entry["move"] for entry in log) == sorted(accepted)
    assert game["version"] == len(log) == game["moves"]
