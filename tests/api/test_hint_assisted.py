"""Every hint answer computed from the face-down cards marks the game assisted (SPEC 2.5; issue
22): `unwinnable` and `unknown` (within the node budget, or when the search outlived the wait)
as much as `winnable`. Scripted as the cheat of issue 22, the silent dead-end oracle: a player
asks for hints only to learn whether the position is a dead end (an `unwinnable` or `unknown`
answer used to leave the game clean), then plays on, clean on the boards."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from server.engine import DealCode, Game
from server.engine.solver import SolveStatus, solve
from server.services import deals
from tests.conftest import Api, load_data

DEAD_END = "RU1-C-AAAAAAC"
"""A classic deal that the solver proves unwinnable within the hint's budget."""
WON = load_data("games.json")["games"][0]  # a classic deal that is won in the vectors


async def oracle(client: TestClient[Any, Any], api: Api, code: str) -> tuple[str, str]:
    """A game of `code` whose player asks for one hint and then gives up: (the game's id, the
    hint's status); the game as read afterwards is checked to be marked assisted."""
    _, auth = await api.player()
    game = await api.game(auth, code=code)
    assert game["assisted"] is False, game
    response = await client.get(f"/api/v1/games/{game['id']}/hint", headers=auth)
    assert response.status == 200, await response.text()
    hint = await response.json()
    assert (hint["move"], hint["line_length"]) == (None, None), hint
    after = await api.get(f"/api/v1/games/{game['id']}")
    assert after["assisted"] is True, (hint, after)
    assert after["version"] == game["version"] + 1, after  # a change of its own
    await client.post(f"/api/v1/games/{game['id']}/abandon", headers=auth)
    return game["id"], hint["status"]


async def on_boards(api: Api, code: str) -> tuple[list[str], list[str]]:
    """The game ids of the clean and the assisted per-deal boards of `code`."""
    board = f"/api/v1/leaderboards?code={code}"
    clean = await api.get(board)
    assisted = await api.get(board + "&assisted=true")
    return (
        [e["game_id"] for e in clean["entries"]],
        [e["game_id"] for e in assisted["entries"]],
    )


async def test_an_unwinnable_hint_marks_the_game_assisted(
    client: TestClient[Any, Any], api: Api
) -> None:
    assert solve(Game.deal(DealCode.parse(DEAD_END)), max_nodes=deals.HINT_NODES).status is (
        SolveStatus.UNWINNABLE
    )
    game_id, status = await oracle(client, api, DEAD_END)
    assert status == "unwinnable"
    clean, assisted = await on_boards(api, DEAD_END)
    assert game_id not in clean and game_id in assisted, (clean, assisted)


async def test_an_unknown_hint_marks_the_game_assisted(
    client: TestClient[Any, Any], api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A budget too small to decide the deal: the answer is `unknown`.
    monkeypatch.setattr(deals, "HINT_NODES", 1)
    game_id, status = await oracle(client, api, WON["code"])
    assert status == "unknown"
    clean, assisted = await on_boards(api, WON["code"])
    assert game_id not in clean and game_id in assisted, (clean, assisted)


async def test_a_hint_that_outlived_its_wait_marks_the_game_assisted(
    client: TestClient[Any, Any], api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The search outlives the request's wait: `unknown`, and the game is assisted all the same.
    monkeypatch.setattr(deals, "CALL_SECONDS", 0.0)
    game_id, status = await oracle(client, api, WON["code"])
    assert status == "unknown"
    clean, assisted = await on_boards(api, WON["code"])
    assert game_id not in clean and game_id in assisted, (clean, assisted)


async def test_game_over_marks_nothing(client: TestClient[Any, Any], api: Api) -> None:
    """A hint on a game that has ended is answered from the game alone: it stays clean."""
    _, auth = await api.player()
    game = await api.game(auth, code=DEAD_END)
    await client.post(f"/api/v1/games/{game['id']}/abandon", headers=auth)
    response = await client.get(f"/api/v1/games/{game['id']}/hint", headers=auth)
    assert (await response.json())["status"] == "game_over"
    assert (await api.get(f"/api/v1/games/{game['id']}"))["assisted"] is False
    clean, _ = await on_boards(api, DEAD_END)
    assert game["id"] in clean, clean
