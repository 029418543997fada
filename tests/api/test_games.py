"""Players and games over HTTP: creation, the game document, play, the move log, tap and
double tap, placement help, abandon, and every refusal rule (SPEC 1.7, 2.2, 2.3)."""

from __future__ import annotations

import re
import uuid
from typing import Any

from aiohttp.test_utils import TestClient

from server.engine import DealCode, Game, commitment, parse_action
from tests.api.helpers import (
    GAME_KEYS,
    action_body,
    deals,
    illegal,
    local_game,
    move_log,
    parse_iso,
    play,
    problem,
    state,
    vectors,
)
from tests.conftest import Api

CODE_RE = re.compile(r"^RU1-([CR])-[A-Z]{7}$")
SECRET_RE = re.compile(r"^RU2-([CR])(-[A-Z]{7}){4}$")
COMMITMENT_RE = re.compile(r"^[0-9a-f]{64}$")
COLUMN_SIZES = [1, 6, 7, 8, 9, 10, 11]


def expected_tableau(code: str) -> list[list[str | None]]:
    """The opening tableau of a deal of deals.json: face-down (lower-case) cards are null."""
    seed = DealCode.parse(code).seed
    for deal in deals():
        if deal["seed"] == seed:
            return [[c if c[-1].isupper() else None for c in col] for col in deal["tableau"]]
    raise AssertionError(f"{code} is not in deals.json")


def check_new_game(game: dict[str, Any], player_id: str, name: str) -> None:
    assert set(game) == GAME_KEYS
    uuid.UUID(game["id"])
    assert COMMITMENT_RE.match(game["deal_commitment"]), game
    if game["chosen"]:
        assert CODE_RE.match(game["code"]), game["code"]
        assert game["rule"] == {"C": "classic", "R": "relaxed"}[game["code"][4]]
        assert game["deal_commitment"] == commitment(game["code"])
    else:  # a server-dealt deal: its code is a secret while the game is active
        assert game["code"] is None
    assert game["status"] == "active"
    assert game["player"] == {"id": player_id, "name": name}
    assert (game["score"], game["moves"], game["elapsed_ms"]) == (0, 0, 0)
    assert (game["undo_available"], game["version"]) == (0, 0)
    tableau = game["tableau"]
    assert [len(column) for column in tableau] == COLUMN_SIZES
    for index, column in enumerate(tableau):
        assert column[:index] == [None] * index
        assert all(isinstance(card, str) and len(card) == 2 for card in column[index:])
    assert sum(card is None for column in tableau for card in column) == 21
    visible = [card for column in tableau for card in column if card is not None]
    assert len(set(visible)) == 31
    assert game["foundations"] == [[], [], [], []]
    parse_iso(game["created_at"])
    assert game["finished_at"] is None


# ---------------------------------------------------------------- players and new games


async def test_create_player(client: TestClient[Any, Any]) -> None:
    response = await client.post("/api/v1/players", json={"name": "Ana"})
    assert response.status == 201, await response.text()
    body = await response.json()
    assert set(body) == {"id", "name", "token", "session"}
    uuid.UUID(body["id"])
    assert body["name"] == "Ana"
    assert isinstance(body["token"], str) and len(body["token"]) >= 20
    assert response.headers["Location"].endswith(f"/api/v1/players/{body['id']}")

    other = await (await client.post("/api/v1/players", json={"name": "Bob"})).json()
    assert other["id"] != body["id"] and other["token"] != body["token"]


async def test_create_game_from_lower_case_code(client: TestClient[Any, Any], api: Api) -> None:
    player_id, auth = await api.player("Ana")
    response = await client.post("/api/v1/games", json={"code": "ru1-c-aaaaabb"}, headers=auth)
    assert response.status == 201, await response.text()
    game = await response.json()
    check_new_game(game, player_id, "Ana")
    assert game["code"] == "RU1-C-AAAAABB"
    assert game["rule"] == "classic"
    # The example of SPEC 2.3 is this deal.
    assert game["tableau"][:2] == [["5S"], [None, "4H", "7S", "TD", "JC", "8D"]]
    assert game["tableau"] == expected_tableau("RU1-C-AAAAABB")

    location = response.headers["Location"]
    assert location.endswith(f"/api/v1/games/{game['id']}")
    fetched = await api.get(location[location.index("/api/") :])
    assert fetched == game


async def test_create_game_from_relaxed_code(client: TestClient[Any, Any], api: Api) -> None:
    player_id, auth = await api.player("Ana")
    response = await client.post("/api/v1/games", json={"code": "Ru1-r-AaaaAbB"}, headers=auth)
    assert response.status == 201, await response.text()
    game = await response.json()
    check_new_game(game, player_id, "Ana")
    assert (game["code"], game["rule"]) == ("RU1-R-AAAAABB", "relaxed")
    # The same seed deals the same cards under either rule.
    assert game["tableau"] == expected_tableau("RU1-C-AAAAABB")
    assert response.headers["Location"].endswith(f"/api/v1/games/{game['id']}")


async def test_create_game_with_a_random_code(client: TestClient[Any, Any], api: Api) -> None:
    """A random deal is a secret RU2 code: only its commitment is shown until the game ends,
    then the code, which matches the commitment and deals the cards the game showed."""
    player_id, auth = await api.player("Ana")
    for body, letter, rule in (
        ({"rule": "relaxed"}, "R", "relaxed"),
        ({"rule": "classic"}, "C", "classic"),
        ({}, "C", "classic"),
    ):
        codes = set()
        for _ in range(3):
            response = await client.post("/api/v1/games", json=body, headers=auth)
            assert response.status == 201, await response.text()
            game = await response.json()
            check_new_game(game, player_id, "Ana")
            assert (game["code"], game["chosen"], game["rule"]) == (None, False, rule)
            assert response.headers["Location"].endswith(f"/api/v1/games/{game['id']}")
            response = await client.post(f"/api/v1/games/{game['id']}/abandon", headers=auth)
            ended = await response.json()
            match = SECRET_RE.match(ended["code"])
            assert match is not None and match.group(1) == letter, (body, ended["code"])
            assert commitment(ended["code"]) == game["deal_commitment"]
            # The deal is the deal of the code.
            assert game["tableau"] == Game.deal(DealCode.parse(ended["code"])).tableau_view()
            codes.add(ended["code"])
        assert len(codes) == 3, "random seeds repeat"

    # No body at all: a classic game.
    response = await client.post("/api/v1/games", headers=auth)
    assert response.status == 201, await response.text()
    game = await response.json()
    check_new_game(game, player_id, "Ana")
    assert (game["rule"], game["code"], game["chosen"]) == ("classic", None, False)


# ---------------------------------------------------------------- play and the move log


async def test_vector_games_and_their_move_logs(client: TestClient[Any, Any], api: Api) -> None:
    _, auth = await api.player()
    for vector in vectors():
        code, actions = vector["code"], vector["actions"]
        game = await api.game(auth, code=code)
        engine = Game.deal(DealCode.parse(code))
        scores = []
        last: dict[str, Any] = {}
        for index, text in enumerate(actions):
            result = await api.act(auth, game["id"], action_body(text))
            assert result["move"] == text
            last = result["game"]
            engine.play(parse_action(text))
            scores.append(engine.score)
            assert last["version"] == index + 1
            assert (last["score"], last["moves"]) == (engine.score, engine.moves)
            assert last["tableau"] == engine.tableau_view()
            assert last["foundations"] == engine.foundations_view()
        assert (last["status"], last["score"], last["moves"]) == (
            vector["status"],
            vector["score"],
            vector["moves"],
        )

        final = await api.get(f"/api/v1/games/{game['id']}")
        assert final["version"] == len(actions)
        assert (final["status"], final["score"], final["moves"]) == (
            vector["status"],
            vector["score"],
            vector["moves"],
        )
        assert final["foundations"] == engine.foundations_view()
        assert all(column == [] for column in final["tableau"])
        assert final["undo_available"] == 0
        assert parse_iso(final["finished_at"]) >= parse_iso(final["created_at"])
        assert final["elapsed_ms"] >= 0

        response = await client.get(f"/api/v1/games/{game['id']}/moves")
        assert response.status == 200
        log = (await response.json())["moves"]
        assert [entry["seq"] for entry in log] == list(range(1, len(actions) + 1))
        assert [entry["move"] for entry in log] == actions
        assert [entry["score"] for entry in log] == scores
        times = [parse_iso(entry["at"]) for entry in log]
        assert times == sorted(times)
        assert all(set(entry) >= {"seq", "move", "score", "at"} for entry in log)

        # A won game takes no more actions.
        for body in (
            {"action": "undo"},
            {"card": "KS", "to": "t1"},
            {"action": "tap", "card": "KS"},
        ):
            refused = await client.post(
                f"/api/v1/games/{game['id']}/moves", json=body, headers=auth
            )
            await illegal(refused, "game_over")
        again = await api.get(f"/api/v1/games/{game['id']}")
        assert again["version"] == len(actions)


async def test_move_counter_score_and_undo_over_http(api: Api) -> None:
    _, auth = await api.player()
    game = await api.game(auth, code="RU1-C-AAAAAFN")
    moved = await api.act(auth, game["id"], {"card": "AC", "to": "f"})
    assert (moved["game"]["score"], moved["game"]["moves"]) == (10, 1)
    assert moved["game"]["undo_available"] == 1
    assert moved["game"]["foundations"] == [[], [], [], ["AC"]]
    undone = await api.act(auth, game["id"], {"action": "undo"})
    assert undone["move"] == "undo"
    after = undone["game"]
    assert (after["score"], after["moves"], after["version"]) == (0, 1, 2)
    assert after["undo_available"] == 0
    assert after["tableau"] == game["tableau"]
    assert after["foundations"] == [[], [], [], []]
    # Card and place notation are case-insensitive on input and printed in upper case.
    again = await api.act(auth, game["id"], {"card": "ac", "to": "F"})
    assert again["move"] == "AC-f"


# ---------------------------------------------------------------- tap and double tap


async def start(
    api: Api, code: str, actions: list[str] | None = None
) -> tuple[dict[str, str], str]:
    _, auth = await api.player()
    game = await api.game(auth, code=code)
    await play(api, auth, game["id"], actions or [])
    return auth, game["id"]


async def test_tap(client: TestClient[Any, Any], api: Api) -> None:
    auth, game_id = await start(api, "RU1-C-AAAAAFN")
    result = await api.act(auth, game_id, {"action": "tap", "card": "AC"})
    assert result["move"] == "AC-f"
    assert result["game"]["foundations"] == [[], [], [], ["AC"]]
    assert (result["game"]["score"], result["game"]["version"]) == (10, 1)
    log = await move_log(api.client, game_id)
    assert [entry["move"] for entry in log] == ["AC-f"]

    auth, game_id = await start(api, "RU1-C-AAAAAAA")
    before = await state(client, game_id)
    for card, rule in (
        ("AS", "not_last_card"),  # under JS 7S 9D 8S in column 3
        ("8S", "foundation_order"),  # the last card of column 3, but spades are empty
        ("JD", "face_down"),
        ("7C", "not_last_card"),
    ):
        response = await client.post(
            f"/api/v1/games/{game_id}/moves", json={"action": "tap", "card": card}, headers=auth
        )
        await illegal(response, rule)
    assert await state(client, game_id) == before


# (code, actions played first, card double-tapped, the move it makes)
DOUBLE_TAPS = [
    # A tap first: the ace goes to its foundation.
    ("RU1-C-AAAAAFN", [], "AC", "AC-f"),
    # Relaxed: 7C (with 9C) fits on 8C (t1, 1 card) and 8S (t3, 7 cards): the longest.
    ("RU1-R-AAAAAAA", [], "7C", "7C-t3"),
    # Relaxed: 5C fits on 6C (t2, 6 cards) and 6S (t4, 8 cards).
    ("RU1-R-AAAAAAA", [], "5C", "5C-t4"),
    # Classic: a group goes onto its one place.
    ("RU1-C-AAAAAAA", [], "7C", "7C-t1"),
    # A king to the leftmost empty column once 8C left column 1.
    ("RU1-C-AAAAAAA", ["8C-t6"], "KS", "KS-t1"),
    # Relaxed, a tie: TH fits on JC (t1) and JS (t3), both 3 cards: the leftmost.
    ("RU1-R-AAAAAHW", vectors()[3]["actions"][:42], "TH", "TH-t1"),
    # A king already at the bottom of column 1 still goes to the empty column 2.
    ("RU1-C-AAAAAFN", vectors()[0]["actions"][:11], "KS", "KS-t2"),
]


async def test_double_tap_makes_the_move_of_spec_1_7(api: Api) -> None:
    for code, actions, card, expected in DOUBLE_TAPS:
        auth, game_id = await start(api, code, actions)
        engine = local_game(code, [*actions, expected])
        result = await api.act(auth, game_id, {"action": "double_tap", "card": card})
        assert result["move"] == expected, (code, card)
        assert result["game"]["tableau"] == engine.tableau_view()
        assert result["game"]["foundations"] == engine.foundations_view()
        assert result["game"]["version"] == len(actions) + 1
        log = await move_log(api.client, game_id)
        assert log[-1]["move"] == expected


async def test_double_tap_on_a_foundation_card_takes_it_back(
    client: TestClient[Any, Any], api: Api
) -> None:
    auth, game_id = await start(api, "RU1-R-AAAAAHW", ["AH-f"])
    # A plain tap on a foundation card is refused.
    response = await client.post(
        f"/api/v1/games/{game_id}/moves", json={"action": "tap", "card": "AH"}, headers=auth
    )
    body = await problem(response, 422)
    assert body["type"].endswith("/problems/illegal-move")
    assert (await state(client, game_id))["version"] == 1

    result = await api.act(auth, game_id, {"action": "double_tap", "card": "AH"})
    assert result["move"] == "AH-t1"
    game = result["game"]
    assert game["tableau"][0] == ["2D", "AH"]
    assert game["foundations"] == [[], [], [], []]
    # The take-back costs no points and counts as a move.
    assert (game["score"], game["moves"], game["version"]) == (10, 2, 2)
    again = await api.act(auth, game_id, {"action": "tap", "card": "AH"})
    assert again["move"] == "AH-f"
    assert again["game"]["score"] == 20


# ---------------------------------------------------------------- placement help


async def targets(client: TestClient[Any, Any], game_id: str, card: str) -> dict[str, Any]:
    response = await client.get(f"/api/v1/games/{game_id}/targets", params={"card": card})
    assert response.status == 200, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def test_targets(client: TestClient[Any, Any], api: Api) -> None:
    _, relaxed = await start(api, "RU1-R-AAAAAAA")
    assert await targets(client, relaxed, "7C") == {"card": "7C", "targets": ["t1", "t3"]}
    assert await targets(client, relaxed, "5c") == {"card": "5C", "targets": ["t2", "t4"]}
    assert await targets(client, relaxed, "8S") == {"card": "8S", "targets": ["t6"]}
    assert await targets(client, relaxed, "QS") == {"card": "QS", "targets": []}
    # A face-down card has no targets (and its place is not revealed).
    assert await targets(client, relaxed, "JD") == {"card": "JD", "targets": []}

    _, classic = await start(api, "RU1-C-AAAAAFN")
    assert await targets(client, classic, "AC") == {"card": "AC", "targets": ["f"]}
    assert await targets(client, classic, "JH") == {"card": "JH", "targets": ["t2"]}
    assert await targets(client, classic, "10h") == {"card": "TH", "targets": []}

    _, empty = await start(api, "RU1-C-AAAAAAA", ["8C-t6"])
    found = await targets(client, empty, "KS")
    assert found == {"card": "KS", "targets": ["t1"]}

    for card in ("ZZ", "1S", "AX", "", "AS-f", "11S", "A"):
        response = await client.get(f"/api/v1/games/{empty}/targets", params={"card": card})
        await problem(response, 422)


# ---------------------------------------------------------------- abandon


async def test_abandon(client: TestClient[Any, Any], api: Api) -> None:
    auth, game_id = await start(api, "RU1-C-AAAAAFN", ["AC-f"])
    response = await client.post(f"/api/v1/games/{game_id}/abandon", headers=auth)
    assert response.status == 200, await response.text()
    game = await response.json()
    assert game["status"] == "abandoned"
    assert game["finished_at"] is not None
    assert (game["score"], game["moves"]) == (10, 1)

    fetched = await state(client, game_id)
    assert fetched["status"] == "abandoned"
    for body in (
        {"card": "3D", "to": "t3"},
        {"action": "undo"},
        {"action": "tap", "card": "2D"},
        {"action": "double_tap", "card": "JH"},
    ):
        refused = await client.post(f"/api/v1/games/{game_id}/moves", json=body, headers=auth)
        await illegal(refused, "game_over")
    assert await state(client, game_id) == fetched

    again = await client.post(f"/api/v1/games/{game_id}/abandon", headers=auth)
    body = await problem(again, 422)
    assert body.get("rule") == "game_over"
    assert await state(client, game_id) == fetched
    assert [entry["move"] for entry in await move_log(client, game_id)] == ["AC-f"]


# ---------------------------------------------------------------- refusals

# rule id -> (code, actions played first, the refused request)
REFUSALS: dict[str, tuple[str, list[str], dict[str, Any]]] = {
    # 6S on 8C: not one rank higher (and not the same suit).
    "same_suit": ("RU1-C-AAAAAAA", [], {"card": "6S", "to": "t1"}),
    # 9D (with 8S) on 8C: one rank higher but another suit.
    "same_suit_family": ("RU1-C-AAAAAAA", [], {"card": "9D", "to": "t1"}),
    "rank": ("RU1-R-AAAAAAA", [], {"card": "6S", "to": "t1"}),
    "empty_column_king": ("RU1-C-AAAAAAA", ["8C-t6"], {"card": "QS", "to": "t1"}),
    "face_down": ("RU1-C-AAAAAAA", [], {"card": "JD", "to": "t5"}),
    "not_last_card": ("RU1-C-AAAAAAA", [], {"card": "AS", "to": "f"}),
    "foundation_order": ("RU1-C-AAAAAAA", [], {"card": "8S", "to": "f"}),
    "same_column": ("RU1-C-AAAAAAA", [], {"card": "9D", "to": "t3"}),
    "no_place": ("RU1-C-AAAAAAA", [], {"action": "double_tap", "card": "8S"}),
    "nothing_to_undo": ("RU1-C-AAAAAAA", [], {"action": "undo"}),
    "nothing_to_undo_after_undo": ("RU1-C-AAAAAAA", ["8C-t6", "undo"], {"action": "undo"}),
    "game_over": ("RU1-C-AAAAAAA", ["8C-t6"], {"card": "KS", "to": "t1"}),
}


async def test_refusals(client: TestClient[Any, Any], api: Api) -> None:
    failures = []
    for case, (code, actions, body) in REFUSALS.items():
        rule = case.removesuffix("_family").removesuffix("_after_undo")
        auth, game_id = await start(api, code, actions)
        if rule == "game_over":
            response = await client.post(f"/api/v1/games/{game_id}/abandon", headers=auth)
            assert response.status == 200
        before = await state(client, game_id)
        log_before = await move_log(client, game_id)
        response = await client.post(f"/api/v1/games/{game_id}/moves", json=body, headers=auth)
        try:
            refusal = await illegal(response, rule)
            assert refusal["detail"].strip()
        except AssertionError as exc:
            failures.append(f"{case}: {exc}")
        after = await state(client, game_id)
        assert after["version"] == before["version"], case
        assert after == before, case
        assert await move_log(client, game_id) == log_before, case
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------- languages


async def refusal_detail(
    client: TestClient[Any, Any], game_id: str, auth: dict[str, str], language: str | None
) -> str:
    headers = dict(auth)
    if language is not None:
        headers["Accept-Language"] = language
    response = await client.post(
        f"/api/v1/games/{game_id}/moves", json={"card": "6S", "to": "t1"}, headers=headers
    )
    body = await illegal(response, "same_suit")
    detail: str = body["detail"]
    return detail


HEBREW = re.compile("[\u0590-\u05ff]")


async def test_refusal_detail_follows_accept_language(
    client: TestClient[Any, Any], api: Api
) -> None:
    auth, game_id = await start(api, "RU1-C-AAAAAAA")
    english = await refusal_detail(client, game_id, auth, "en")
    romanian = await refusal_detail(client, game_id, auth, "ro")
    hebrew = await refusal_detail(client, game_id, auth, "he")
    assert len({english, romanian, hebrew}) == 3
    assert "same family" in english
    assert HEBREW.search(hebrew)
    assert not HEBREW.search(romanian) and not HEBREW.search(english)
    assert await refusal_detail(client, game_id, auth, None) == english
    assert await refusal_detail(client, game_id, auth, "he-IL,he;q=0.9") == hebrew
    assert await refusal_detail(client, game_id, auth, "ro-RO") == romanian
    assert await refusal_detail(client, game_id, auth, "fr-FR,ro;q=0.5") == romanian
    assert await refusal_detail(client, game_id, auth, "de") == english
    assert await refusal_detail(client, game_id, auth, "en-US,en;q=0.9,he;q=0.8") == english
    assert (await state(client, game_id))["version"] == 0
