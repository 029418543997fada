"""`GET /api/v1/games/{id}/legal` over HTTP (SPEC 2.3): on games of both rules played at random
it answers exactly the moves the engine accepts (and the server then accepts each of them, and
refuses what is not listed), with the game's version and whether an undo is accepted; nothing
once the game is over; the game's visibility; and no parameters."""

from __future__ import annotations

import random
from typing import Any

from aiohttp.test_utils import TestClient

from server.engine import CARDS, DealCode, Game, IllegalMove, Move
from server.engine.cards import FOUNDATION
from tests.api.helpers import action_body, local_game, problem, vectors
from tests.conftest import Api

PLACE_ORDER = [FOUNDATION, 0, 1, 2, 3, 4, 5, 6]


def accepted(game: Game) -> tuple[list[str], bool]:
    """What the engine accepts: every card to every place, each tried on a copy, in the order
    of SPEC 2.3 (card S, H, D, C and ace to king; then f, t1 ... t7), and an undo."""
    moves = []
    for card in range(52):
        for to in PLACE_ORDER:
            try:
                game.copy().apply(card, to)
            except IllegalMove:
                continue
            moves.append(str(Move(CARDS[card], to)))
    try:
        game.copy().undo()
    except IllegalMove:
        return moves, False
    return moves, True


async def legal(client: TestClient[Any, Any], game_id: str, **headers: str) -> dict[str, Any]:
    response = await client.get(f"/api/v1/games/{game_id}/legal", headers=headers)
    assert response.status == 200, await response.text()
    assert response.content_type == "application/json"
    body: dict[str, Any] = await response.json()
    assert set(body) == {"version", "moves", "undo"}, body
    return body


async def test_legal_is_what_the_engine_accepts_on_random_play(
    client: TestClient[Any, Any], api: Api
) -> None:
    _, auth = await api.player()
    rng = random.Random(20)
    for rule in ("C", "R", "C", "R"):
        code = str(DealCode(DealCode.parse(f"RU1-{rule}-AAAAAAA").rule, rng.randrange(26**7)))
        game = await api.game(auth, code=code)
        game_id, actions = game["id"], []
        for step in range(40):
            body = await legal(client, game_id)
            local = local_game(code, actions)
            assert (body["moves"], body["undo"]) == accepted(local), (code, actions)
            assert body["version"] == step
            if step % 7 == 3:  # one move that is not listed is refused (nothing changes)
                unlisted = next(
                    str(Move(CARDS[c], to))
                    for c in range(52)
                    for to in PLACE_ORDER
                    if str(Move(CARDS[c], to)) not in body["moves"]
                )
                response = await client.post(
                    f"/api/v1/games/{game_id}/moves", json=action_body(unlisted), headers=auth
                )
                assert response.status == 422, (unlisted, await response.text())
            options = body["moves"] + (["undo"] if body["undo"] else [])
            if not options:
                break
            choice = rng.choice(options)
            answer = await api.act(auth, game_id, action_body(choice))
            assert answer["move"] == choice
            actions.append(choice)
            assert str(local_game(code, actions).moves) == str(answer["game"]["moves"])


async def test_a_server_dealt_game_lists_only_what_its_player_can_see(
    client: TestClient[Any, Any], api: Api
) -> None:
    """A random game's deal is a secret: every listed move names a face-up card or a foundation
    top, and each is accepted."""
    _, auth = await api.player()
    game = await api.game(auth)
    assert game["code"] is None
    body = await legal(client, game["id"])
    visible = {card for column in game["tableau"] for card in column if card is not None}
    assert body["moves"], body
    assert {text.split("-")[0] for text in body["moves"]} <= visible
    assert body["undo"] is False
    first = body["moves"][0]
    assert (await api.act(auth, game["id"], action_body(first)))["move"] == first
    after = await legal(client, game["id"])
    assert after["undo"] is True and after["version"] == 1


async def test_nothing_once_the_game_is_over(client: TestClient[Any, Any], api: Api) -> None:
    _, auth = await api.player()
    game = await api.game(auth, code="RU1-C-AAAAAFN")
    await api.act(auth, game["id"], {"card": "AC", "to": "f"})
    response = await client.post(f"/api/v1/games/{game['id']}/abandon", headers=auth)
    assert response.status == 200, await response.text()
    assert await legal(client, game["id"]) == {"version": 2, "moves": [], "undo": False}


async def test_a_won_game_has_no_moves(client: TestClient[Any, Any], api: Api) -> None:
    won = next(v for v in vectors() if v["status"] == "won")
    _, auth = await api.player()
    game = await api.game(auth, code=won["code"])
    for text in won["actions"]:
        await api.act(auth, game["id"], action_body(text))
    body = await legal(client, game["id"])
    assert (body["moves"], body["undo"]) == ([], False)


async def test_the_same_visibility_as_the_game(client: TestClient[Any, Any], api: Api) -> None:
    _, auth = await api.player()
    daily = await api.game(auth, daily=True)
    path = f"/api/v1/games/{daily['id']}/legal"
    await problem(await client.get(path), 403)  # today's daily deal: only its player
    _, other = await api.player()
    await problem(await client.get(path, headers=other), 403)
    assert (await client.get(path, headers=auth)).status == 200
    await problem(await client.get(path, headers={"Authorization": "Bearer nonsense"}), 401)
    unknown = "/api/v1/games/00000000-0000-4000-8000-000000000000/legal"
    await problem(await client.get(unknown), 404)
    await problem(await client.get("/api/v1/games/xyz/legal"), 404)


async def test_no_parameters(client: TestClient[Any, Any], api: Api) -> None:
    _, auth = await api.player()
    game = await api.game(auth, code="RU1-R-AAAAAFN")
    found = await problem(await client.get(f"/api/v1/games/{game['id']}/legal?card=AS"), 422)
    assert "card" in str(found)
