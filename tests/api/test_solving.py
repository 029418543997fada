"""The solver as a service: hints, deal verdicts, certified-winnable deals, the CLI."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from server.engine import DealCode, Game, Rule, parse_action, replay
from server.engine.solver import SolveStatus, solve_deal
from tests.conftest import Api, load_data

WON = load_data("games.json")["games"][0]  # a classic deal that is won in the vectors


def body_of(text: str) -> dict[str, Any]:
    if text == "undo":
        return {"action": "undo"}
    card, to = text.split("-")
    return {"card": card, "to": to}


async def test_a_hint_is_the_next_move_of_a_winning_line_and_marks_the_game_assisted(
    client: TestClient[Any, Any], api: Api
) -> None:
    _, auth = await api.player()
    game = await api.game(auth, code=WON["code"])
    # Play a few moves of the vector game first: hints work from any position.
    for text in WON["actions"][:5]:
        await api.act(auth, game["id"], body_of(text))
    response = await client.get(f"/api/v1/games/{game['id']}/hint", headers=auth)
    assert response.status == 200
    hint = await response.json()
    assert hint["status"] == "winnable"
    assert hint["line_length"] >= 1
    local = replay(WON["code"], WON["actions"][:5]).game
    assert parse_action(hint["move"]) in local.legal_moves()
    # The hinted move is accepted by the server.
    assert (await api.act(auth, game["id"], body_of(hint["move"])))["move"] == hint["move"]
    # Once finished, the game ranks only on the assisted boards.
    await client.post(f"/api/v1/games/{game['id']}/abandon", headers=auth)
    board = f"/api/v1/leaderboards?code={WON['code']}"
    clean = await api.get(board)
    assisted = await api.get(board + "&assisted=true")
    assert game["id"] not in [e["game_id"] for e in clean["entries"]]
    assert game["id"] in [e["game_id"] for e in assisted["entries"]]


async def test_hints_need_the_players_token(client: TestClient[Any, Any], api: Api) -> None:
    _, auth = await api.player("ana")
    _, other = await api.player("bob")
    game = await api.game(auth, code=WON["code"])
    assert (await client.get(f"/api/v1/games/{game['id']}/hint")).status == 401
    unknown = await client.get(f"/api/v1/games/{game['id']}/hint?depth=3", headers=auth)
    assert unknown.status == 422
    assert (await unknown.json())["errors"] == [{"field": "depth", "message": "unknown parameter"}]
    assert (await client.get(f"/api/v1/games/{game['id']}/hint", headers=other)).status == 403
    # A refused hint marks nothing: the game stays clean.
    await client.post(f"/api/v1/games/{game['id']}/abandon", headers=auth)
    clean = await api.get(f"/api/v1/leaderboards?code={WON['code']}")
    assert game["id"] in [e["game_id"] for e in clean["entries"]]
    over = await client.get(f"/api/v1/games/{game['id']}/hint", headers=auth)
    assert (await over.json())["status"] == "game_over"


async def test_deal_verdicts_agree_with_the_solver_and_are_cached(
    client: TestClient[Any, Any], api: Api
) -> None:
    for code in (WON["code"], "RU1-C-AAAAAAA", "RU1-R-AAAAABB"):
        expected = solve_deal(DealCode.parse(code), max_nodes=300_000)
        first = await api.get(f"/api/v1/deals/{code.lower()}/winnable")
        assert first == {
            "code": code,
            "take_backs": True,
            "status": expected.status.value,
            "nodes": expected.nodes,
        }
        assert await api.get(f"/api/v1/deals/{code}/winnable") == first
    strict = await api.get(f"/api/v1/deals/{WON['code']}/winnable?take_backs=false")
    assert strict["take_backs"] is False
    assert strict["status"] == solve_deal(DealCode.parse(WON["code"]), take_backs=False).status
    for bad in (
        "/api/v1/deals/RU1-X-AAAAAAA/winnable",
        f"/api/v1/deals/{WON['code']}/winnable?take_backs=maybe",
    ):
        response = await client.get(bad)
        assert response.status == 422
        assert response.content_type == "application/problem+json"


async def test_a_winnable_deal_is_certified_by_the_solver(
    client: TestClient[Any, Any], api: Api
) -> None:
    _, auth = await api.player()
    for rule in ("classic", "relaxed"):
        game = await api.game(auth, winnable=True, rule=rule)
        assert (game["rule"], game["code"], game["chosen"]) == (rule, None, False)
        # The code is a secret until the game ends.
        response = await client.post(f"/api/v1/games/{game['id']}/abandon", headers=auth)
        game = await response.json()
        assert game["code"].startswith("RU2-")
        verdict = solve_deal(DealCode.parse(game["code"]), max_nodes=300_000)
        assert verdict.status is SolveStatus.WINNABLE
        # Its winning line really wins.
        local = Game.deal(DealCode.parse(game["code"]))
        for move in verdict.line or ():
            local.play(move)
        assert local.won
    for body in ({"winnable": True, "code": WON["code"]}, {"winnable": "yes"}):
        response = await client.post("/api/v1/games", json=body, headers=auth)
        assert response.status == 422


def test_the_certify_command_stores_verdicts(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'pool.db'}"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "server.tools.certify",
            "--start",
            "100",
            "--count",
            "12",
            "--workers",
            "1",
            "--database-url",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    figures = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    assert figures["deals"] == "12"
    assert int(figures["winnable"]) + int(figures["unwinnable"]) + int(figures["unknown"]) == 12
    assert figures["stored"] == "12"
    with sqlite3.connect(tmp_path / "pool.db") as db:
        stored = dict(db.execute("SELECT code, status FROM deal_verdicts WHERE take_backs"))
    assert len(stored) == 12
    for seed in range(100, 112):
        code = DealCode(Rule.CLASSIC, seed)
        assert stored[str(code)] == solve_deal(code, max_nodes=300_000).status.value
