"""Authentication, ownership, and the secrecy of face-down cards (SPEC 2.2, 2.3, 2.4)."""

from __future__ import annotations

import secrets
from typing import Any

from aiohttp.test_utils import TestClient

from server.engine import DealCode, Game, card_text, parse_action
from tests.api.helpers import (
    action_body,
    hidden_cards,
    illegal,
    leaked,
    local_game,
    move_log,
    problem,
    state,
    vectors,
)
from tests.conftest import Api

BAD_AUTHORIZATIONS: list[dict[str, str]] = [
    {},
    {"Authorization": "Bearer " + secrets.token_urlsafe(32)},
    {"Authorization": "Bearer"},
    {"Authorization": "Bearer "},
    {"Authorization": "Basic YW5hOnNlY3JldA=="},
    {"Authorization": secrets.token_urlsafe(32)},
    {"Authorization": "Bearer " + "x" * 400},
]


async def test_missing_or_bad_token_is_401(client: TestClient[Any, Any], api: Api) -> None:
    _, auth = await api.player()
    game = await api.game(auth, code="RU1-C-AAAAAFN")
    game_id = game["id"]
    calls: list[tuple[str, dict[str, Any] | None]] = [
        ("/api/v1/games", {"code": "RU1-C-AAAAAFN"}),
        (f"/api/v1/games/{game_id}/moves", {"card": "AC", "to": "f"}),
        (f"/api/v1/games/{game_id}/abandon", None),
    ]
    failures = []
    for path, body in calls:
        for headers in BAD_AUTHORIZATIONS:
            response = await client.post(path, json=body, headers=headers)
            case = f"POST {path} with {headers or 'no Authorization'}"
            try:
                await problem(response, 401)
                challenge = response.headers.get("WWW-Authenticate", "")
                assert challenge.lower().startswith("bearer"), "no WWW-Authenticate: Bearer"
            except AssertionError as exc:
                failures.append(f"{case}: {exc}")
    assert not failures, "\n".join(failures)
    # Nothing happened: no game was created, no move made.
    after = await state(client, game_id)
    assert (after["version"], after["status"]) == (0, "active")
    assert await move_log(client, game_id) == []


async def test_another_players_game_is_403(client: TestClient[Any, Any], api: Api) -> None:
    _, owner = await api.player("owner")
    _, intruder = await api.player("intruder")
    game = await api.game(owner, code="RU1-C-AAAAAFN")
    game_id = game["id"]
    before = await state(client, game_id)
    for body in (
        {"card": "AC", "to": "f"},
        {"action": "tap", "card": "AC"},
        {"action": "undo"},
        {"card": "AC", "to": "f", "expected_version": 0},
    ):
        response = await client.post(f"/api/v1/games/{game_id}/moves", json=body, headers=intruder)
        await problem(response, 403)
    response = await client.post(
        f"/api/v1/games/{game_id}/moves",
        json={"card": "AC", "to": "f"},
        headers={**intruder, "Idempotency-Key": "k-1"},
    )
    await problem(response, 403)
    response = await client.post(f"/api/v1/games/{game_id}/abandon", headers=intruder)
    await problem(response, 403)
    assert await state(client, game_id) == before

    # The owner can still act, and the key the intruder used is not the owner's.
    moved = await client.post(
        f"/api/v1/games/{game_id}/moves",
        json={"card": "AC", "to": "f"},
        headers={**owner, "Idempotency-Key": "k-1"},
    )
    assert moved.status == 200, await moved.text()
    assert (await moved.json())["move"] == "AC-f"


async def test_reading_needs_no_token(client: TestClient[Any, Any], api: Api) -> None:
    _, auth = await api.player()
    game = await api.game(auth, code="RU1-C-AAAAAFN")
    await api.act(auth, game["id"], {"card": "AC", "to": "f"})
    for path in (
        f"/api/v1/games/{game['id']}",
        f"/api/v1/games/{game['id']}/moves",
        f"/api/v1/games/{game['id']}/replay",
        f"/api/v1/games/{game['id']}/targets?card=3D",
    ):
        response = await client.get(path)
        assert response.status == 200, (path, await response.text())
    assert (await state(client, game["id"]))["version"] == 1


async def hidden_refusals(
    client: TestClient[Any, Any], auth: dict[str, str], game_id: str, card: str
) -> list[str]:
    """The raw problem documents of every action on a face-down card."""
    texts = []
    bodies: list[dict[str, Any]] = [{"card": card, "to": f"t{n}"} for n in range(1, 8)]
    bodies += [
        {"card": card, "to": "f"},
        {"action": "tap", "card": card},
        {"action": "double_tap", "card": card},
    ]
    for body in bodies:
        response = await client.post(f"/api/v1/games/{game_id}/moves", json=body, headers=auth)
        await illegal(response, "face_down")
        texts.append(await response.text())
    return texts


async def test_face_down_cards_never_appear_while_the_game_is_active(
    client: TestClient[Any, Any], api: Api
) -> None:
    _, auth = await api.player()
    vector = vectors()[0]
    code, actions = vector["code"], vector["actions"]
    game = await api.game(auth, code=code)
    game_id = game["id"]
    engine = Game.deal(DealCode.parse(code))
    assert len(hidden_cards(engine)) == 21
    checkpoints = {0, 1, 2, 10, 30, 60, len(actions) - 1}

    async def check_reads(hidden: set[str], where: str) -> None:
        for path in ("", "/moves", "/replay"):
            response = await client.get(f"/api/v1/games/{game_id}{path}")
            assert response.status == 200
            text = await response.text()
            assert not leaked(text, hidden), (where, path, leaked(text, hidden))
        replay = await (await client.get(f"/api/v1/games/{game_id}/replay")).json()
        assert replay["deal"] is None, where

    for index, text in enumerate(actions):
        hidden = hidden_cards(engine)
        if index in checkpoints:
            await check_reads(hidden, f"before action {index}")
            for card in sorted(hidden)[:2]:
                for problem_text in await hidden_refusals(client, auth, game_id, card):
                    assert not leaked(problem_text, hidden), (index, problem_text)
            # A refused move of a visible card names no face-down card either.
            column = next(c for c in range(7) if engine.columns[c])
            visible = card_text(engine.columns[column][engine.down[column]])
            response = await client.post(
                f"/api/v1/games/{game_id}/moves",
                json={"card": visible, "to": f"t{column + 1}"},
                headers=auth,
            )
            await illegal(response, "same_column")
            assert not leaked(await response.text(), hidden)
        response = await client.post(
            f"/api/v1/games/{game_id}/moves", json=action_body(text), headers=auth
        )
        assert response.status == 200, await response.text()
        engine.play(parse_action(text))
        raw = await response.text()
        body = await response.json()
        if engine.status.value == "active":
            hidden = hidden_cards(engine)
            assert not leaked(raw, hidden), (index, text, leaked(raw, hidden))
            nulls = sum(card is None for column in body["game"]["tableau"] for card in column)
            assert nulls == len(hidden)

    # Won: the replay now carries the whole deal, equal to the engine's.
    assert body["game"]["status"] == "won"
    replay = await (await client.get(f"/api/v1/games/{game_id}/replay")).json()
    deal = [
        [card_text(card) for card in column] for column in Game.deal(DealCode.parse(code)).columns
    ]
    assert replay["deal"] == deal
    assert sorted(card for column in replay["deal"] for card in column) == sorted(
        card_text(card) for card in range(52)
    )


async def test_an_undone_flip_hides_the_card_again(client: TestClient[Any, Any], api: Api) -> None:
    _, auth = await api.player()
    game = await api.game(auth, code="RU1-C-AAAAAFN")
    game_id = game["id"]
    await api.act(auth, game_id, {"card": "AC", "to": "f"})
    flipped = await api.act(auth, game_id, {"card": "3D", "to": "t3"})
    # 3D uncovered the last face-down card of its column: QD turns face-up (+5).
    assert '"QD"' in await (await client.get(f"/api/v1/games/{game_id}")).text()
    assert flipped["game"]["score"] == 15
    response = await client.post(
        f"/api/v1/games/{game_id}/moves", json={"action": "undo"}, headers=auth
    )
    assert response.status == 200
    hidden = hidden_cards(local_game("RU1-C-AAAAAFN", ["AC-f"]))
    assert "QD" in hidden
    assert not leaked(await response.text(), hidden)
    for path in ("", "/moves", "/replay"):
        text = await (await client.get(f"/api/v1/games/{game_id}{path}")).text()
        assert not leaked(text, hidden), (path, leaked(text, hidden))
    assert (await state(client, game_id))["score"] == 10


async def test_refusals_do_not_tell_where_a_face_down_card_lies(
    client: TestClient[Any, Any], api: Api
) -> None:
    _, auth = await api.player()
    game = await api.game(auth, code="RU1-C-AAAAAAA")
    game_id = game["id"]
    # JD lies face-down in column 2, TS in column 3: every action on them is refused the same
    # way whatever the place named, its own column included.
    for card in ("JD", "TS", "7H"):
        texts = await hidden_refusals(client, auth, game_id, card)
        moves = texts[:8]
        assert len(set(moves)) == 1, (card, set(moves))
    jd = await hidden_refusals(client, auth, game_id, "JD")
    ts = await hidden_refusals(client, auth, game_id, "TS")
    assert [text.replace("JD", "TS") for text in jd] == ts
    response = await client.get(f"/api/v1/games/{game_id}/targets", params={"card": "JD"})
    assert (await response.json())["targets"] == []
    assert (await state(client, game_id))["version"] == 0


async def test_replay_deal_of_an_abandoned_game(client: TestClient[Any, Any], api: Api) -> None:
    _, auth = await api.player()
    game = await api.game(auth, code="RU1-C-AAAAAAA")
    game_id = game["id"]
    replay = await (await client.get(f"/api/v1/games/{game_id}/replay")).json()
    assert replay["deal"] is None
    response = await client.post(f"/api/v1/games/{game_id}/abandon", headers=auth)
    assert response.status == 200
    replay = await (await client.get(f"/api/v1/games/{game_id}/replay")).json()
    engine = Game.deal(DealCode.parse("RU1-C-AAAAAAA"))
    assert replay["deal"] == [[card_text(card) for card in column] for column in engine.columns]
