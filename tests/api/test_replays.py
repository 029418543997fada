"""Replays: download and verification (SPEC 2.4)."""

from __future__ import annotations

import copy
import uuid
from typing import Any

from aiohttp.test_utils import TestClient

from server.engine import CARDS, DealCode, Game, card_text, parse_action
from server.engine.cards import FOUNDATION, place_text
from tests.api.helpers import local_game, play, problem, vectors
from tests.conftest import Api
from tests.names import unique_name


async def won_replay(
    api: Api, vector: dict[str, Any], name: str | None = None
) -> tuple[str, dict[str, Any]]:
    player_id, auth = await api.player(name or unique_name("Replayer"))
    game = await api.game(auth, code=vector["code"].lower())
    await play(api, auth, game["id"], vector["actions"])
    replay: dict[str, Any] = await api.get(f"/api/v1/games/{game['id']}/replay")
    return player_id, replay


async def verify(client: TestClient[Any, Any], document: Any) -> dict[str, Any]:
    response = await client.post("/api/v1/replays/verify", json=document)
    assert response.status == 200, await response.text()
    body: dict[str, Any] = await response.json()
    assert isinstance(body["valid"], bool)
    return body


def refused_move(code: str, actions: list[str]) -> tuple[str, str]:
    """A move text the rules refuse after `actions`, with the rule that refuses it."""
    game = local_game(code, actions)
    for card in CARDS:
        if not game.is_face_up(card):
            continue
        for to in (FOUNDATION, *range(7)):
            rule = game.refusal(card, to)
            if rule is not None:
                return f"{card_text(card)}-{place_text(to)}", rule
    raise AssertionError("no refused move found")


async def test_download_a_won_replay(client: TestClient[Any, Any], api: Api) -> None:
    vector = vectors()[2]  # the game with undos
    player_id, replay = await won_replay(api, vector, "Replayer")
    assert replay["format"] == "russian-solitaire-replay"
    assert replay["version"] == 1
    assert replay["code"] == vector["code"]
    assert replay["rule"] == "classic"
    assert replay["player"] == {"id": player_id, "name": "Replayer"}
    actions = replay["actions"]
    assert [action["move"] for action in actions] == vector["actions"]
    times = [action["t_ms"] for action in actions]
    assert all(isinstance(t, int) and t >= 0 for t in times)
    assert times[0] == 0
    assert times == sorted(times)
    result = replay["result"]
    assert (result["status"], result["score"], result["moves"]) == (
        vector["status"],
        vector["score"],
        vector["moves"],
    )
    elapsed = result.get("elapsed_ms", result.get("time"))
    assert isinstance(elapsed, int) and elapsed >= times[-1]
    deal = Game.deal(DealCode.parse(vector["code"]))
    assert replay["deal"] == [[card_text(card) for card in column] for column in deal.columns]

    # The document is self-contained: the engine alone replays it to the same result.
    engine = Game.deal(DealCode.parse(replay["code"]))
    for action in actions:
        engine.play(parse_action(action["move"]))
    assert (engine.status.value, engine.score, engine.moves) == (
        result["status"],
        result["score"],
        result["moves"],
    )

    # The replay is public: it needs no token, and an unknown game is 404.
    await problem(await client.get(f"/api/v1/games/{uuid.uuid4()}/replay"), 404)


async def test_verify_a_won_replay(client: TestClient[Any, Any], api: Api) -> None:
    for vector in (vectors()[0], vectors()[4]):
        _, replay = await won_replay(api, vector)
        body = await verify(client, replay)
        assert body["valid"] is True, body
        assert (body["status"], body["score"], body["moves"]) == (
            vector["status"],
            vector["score"],
            vector["moves"],
        )
        assert body.get("failed_index") is None


async def test_verify_tampered_replays(client: TestClient[Any, Any], api: Api) -> None:
    vector = vectors()[0]
    _, replay = await won_replay(api, vector)
    code, moves = vector["code"], vector["actions"]

    # An action changed into an illegal move.
    for index in (0, 10, len(moves) - 1):
        text, rule = refused_move(code, moves[:index])
        tampered = copy.deepcopy(replay)
        tampered["actions"][index]["move"] = text
        body = await verify(client, tampered)
        assert body["valid"] is False, (index, text, body)
        assert body["failed_index"] == index, body
        assert body["rule"] == rule, body
        assert body.get("reason"), body
        # The result it actually leads to: the actions before the failing one.
        engine = local_game(code, moves[:index])
        assert (body["status"], body["score"], body["moves"]) == (
            "active",
            engine.score,
            engine.moves,
        )

    # A claimed score (or moves, or status) that the actions do not lead to.
    for field, value in (("score", 630), ("moves", 86), ("status", "active")):
        tampered = copy.deepcopy(replay)
        tampered["result"][field] = value
        body = await verify(client, tampered)
        assert body["valid"] is False, (field, body)
        assert (body["status"], body["score"], body["moves"]) == ("won", 625, 87), body

    # A deal that is not the deal of the code: two cards swapped.
    tampered = copy.deepcopy(replay)
    deal = tampered["deal"]
    deal[0][0], deal[6][-1] = deal[6][-1], deal[0][0]
    body = await verify(client, tampered)
    assert body["valid"] is False, body

    # Another code: the same actions do not play on another deal.
    tampered = copy.deepcopy(replay)
    tampered["code"] = "RU1-C-AAAAAFO"
    tampered["deal"] = None
    body = await verify(client, tampered)
    assert body["valid"] is False, body

    # A cut replay claiming the win.
    tampered = copy.deepcopy(replay)
    tampered["actions"] = tampered["actions"][:-1]
    body = await verify(client, tampered)
    assert body["valid"] is False, body
    assert body["status"] == "active"

    # The untouched document is still valid.
    assert (await verify(client, replay))["valid"] is True


async def test_verify_a_partial_replay_without_a_result(client: TestClient[Any, Any]) -> None:
    vector = vectors()[3]
    document = {"code": vector["code"], "actions": [{"move": m} for m in vector["actions"][:20]]}
    body = await verify(client, document)
    engine = local_game(vector["code"], vector["actions"][:20])
    assert body["valid"] is True, body
    assert (body["status"], body["score"], body["moves"]) == ("active", engine.score, engine.moves)


async def test_verify_a_malformed_document(client: TestClient[Any, Any]) -> None:
    actions = [{"move": "AC-f", "t_ms": 0}]
    documents: list[Any] = [
        {"actions": actions},
        {"code": "RU1-X-AAAAAFN", "actions": actions},
        {"code": "RU2-C-AAAAAFN", "actions": actions},
        {"code": "RU1-C-AAAA", "actions": actions},
        {"code": 12, "actions": actions},
        {"code": "RU1-C-AAAAAFN"},
        {"code": "RU1-C-AAAAAFN", "actions": "AC-f"},
        {"code": "RU1-C-AAAAAFN", "actions": {"move": "AC-f"}},
        {"code": "RU1-C-AAAAAFN", "actions": [{"move": 5}]},
        {"code": "RU1-C-AAAAAFN", "actions": [{"t_ms": 5}]},
        ["RU1-C-AAAAAFN"],
        "replay",
    ]
    failures = []
    for document in documents:
        response = await client.post("/api/v1/replays/verify", json=document)
        try:
            await problem(response, 422)
        except AssertionError as exc:
            failures.append(f"{document!r}: {exc}")
    response = await client.post(
        "/api/v1/replays/verify",
        data=b'{"code": "RU1-C-AAAAAFN", "actions": [',
        headers={"Content-Type": "application/json"},
    )
    await problem(response, 400)
    assert not failures, "\n".join(failures)


async def test_verify_an_unparsable_action(client: TestClient[Any, Any]) -> None:
    """A move text that is not notation is refused either as a bad document or as invalid."""
    document = {"code": "RU1-C-AAAAAFN", "actions": [{"move": "AC-f"}, {"move": "ZZ-t9"}]}
    response = await client.post("/api/v1/replays/verify", json=document)
    if response.status == 200:
        body = await response.json()
        assert body["valid"] is False and body["failed_index"] == 1, body
    else:
        await problem(response, 422)


async def test_replay_of_an_active_game(client: TestClient[Any, Any], api: Api) -> None:
    _, auth = await api.player()
    game = await api.game(auth, code="RU1-C-AAAAAFN")
    empty = await api.get(f"/api/v1/games/{game['id']}/replay")
    assert empty["actions"] == []
    assert empty["result"]["status"] == "active"
    await play(api, auth, game["id"], ["AC-f", "3D-t3", "undo"])
    replay = await api.get(f"/api/v1/games/{game['id']}/replay")
    assert [a["move"] for a in replay["actions"]] == ["AC-f", "3D-t3", "undo"]
    assert replay["actions"][0]["t_ms"] == 0
    assert replay["deal"] is None
    assert (replay["result"]["status"], replay["result"]["score"]) == ("active", 10)
    assert replay["result"]["moves"] == 2
    body = await verify(client, replay)
    assert body["valid"] is True, body
    assert (body["status"], body["score"], body["moves"]) == ("active", 10, 2)
