"""`GET /api/v1/games/{id}/legal` over HTTP (SPEC 2.3): on games of both rules played at random
it answers exactly the moves the engine accepts (and the server then accepts each of them, and
refuses what is not listed), with the game's version and whether an undo is accepted; nothing
once the game is over, nor for a race game at its deadline; the game's visibility; and no
parameters."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from aiohttp.test_utils import TestClient

from server.app import create_app
from server.engine import CARDS, DealCode, Move
from server.keys import RACES
from server.settings import Settings
from tests.api.boards_helpers import NOW, Clock
from tests.api.helpers import action_body, local_game, problem, vectors
from tests.api.test_races import COUNTDOWN_MS, Db, players, race_with_line, seat
from tests.api.test_races import act as race_act
from tests.conftest import Api, ClientFactory
from tests.engine.test_legal import PLACE_ORDER, accepted


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


async def test_a_race_game_lists_its_moves_in_the_countdown_and_none_past_its_deadline(
    settings: Settings, aiohttp_client: ClientFactory, database_url: str
) -> None:
    """A race game's moves are those of its position from the countdown on (accepted from
    `starts_at`), hidden from others while the race is on, and none at its deadline, even
    before the server has ended the race (its tick held back here)."""
    clock = Clock(NOW)
    client = await aiohttp_client(create_app(settings, clock=clock))
    db = Db(database_url)
    try:
        races = client.app[RACES]
        assert races.ticker is not None
        races.ticker.cancel()
        await asyncio.gather(races.ticker, return_exceptions=True)
        ana, ben, eve = await players(client, "ana", "ben", "eve")
        race, code, line = await race_with_line(client, db, ana, 2, [ben], seats=2, time_limit_s=60)
        games = (await seat(client, race["id"], "join", ben))["games"]
        game_id = games[ana.id]
        starts = NOW + COUNTDOWN_MS

        counting = await legal(client, game_id, **ana.auth)
        assert (counting["moves"], counting["undo"]) == accepted(local_game(code))
        await problem(await client.get(f"/api/v1/games/{game_id}/legal"), 403)
        await problem(await client.get(f"/api/v1/games/{game_id}/legal", headers=eve.auth), 403)

        clock.now = starts
        assert await legal(client, game_id, **ana.auth) == counting
        await race_act(client, ana, game_id, line[0])
        clock.now = starts + 60_000 - 1
        moved = await legal(client, game_id, **ana.auth)
        assert (moved["moves"], moved["undo"]) == accepted(local_game(code, line[:1]))
        assert moved["undo"] is True
        clock.now = starts + 60_000
        assert await legal(client, game_id, **ana.auth) == {
            "version": moved["version"],
            "moves": [],
            "undo": False,
        }
        game = await (await client.get(f"/api/v1/games/{game_id}", headers=ana.auth)).json()
        assert game["status"] == "active"  # not ended yet: the deadline alone stops the moves
    finally:
        await db.close()
