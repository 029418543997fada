"""The offline verifier against a real server (issue 22, item 5): a player signs up, plays
server-dealt games to their end, rotates their seed pair, downloads the replays, the NDJSON
export, the account export and the seed history, and checks them with `python -m server.verify`,
run as a separate process that knows nothing of the server: every check passes, "dealt from your
seed" included. Before the rotation the seed checks are pending, not failed; a replay tampered
after download fails. On both databases.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import Api

ROOT = Path(__file__).resolve().parent.parent.parent


def verify(*args: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "server.verify", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={"PYTHONIOENCODING": "utf-8", "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout + done.stderr


async def read(api: Api, path: str, auth: dict[str, str]) -> str:
    response = await api.client.get(path, headers=auth)
    assert response.status == 200, await response.text()
    return await response.text()


async def play_some(api: Api, auth: dict[str, str], game_id: str, count: int) -> None:
    """`count` legal moves (the last of each list), then the game given up."""
    for _ in range(count):
        legal = json.loads(await read(api, f"/api/v1/games/{game_id}/legal", auth))
        if not legal["moves"]:
            break
        card, to = legal["moves"][-1].split("-")
        await api.act(auth, game_id, {"card": card, "to": to})
    response = await api.client.post(f"/api/v1/games/{game_id}/abandon", headers=auth)
    assert response.status == 200, await response.text()


def checks(out: str, mark: str) -> list[str]:
    return [
        line.strip()[2:].split(":", 1)[0]
        for line in out.splitlines()
        if line.strip().startswith(mark + " ")
    ]


async def test_a_players_games_verify_offline_after_the_rotation(api: Api, tmp_path: Path) -> None:
    player_id, auth = await api.player()
    random_game = await api.game(auth, rule="classic")
    await play_some(api, auth, random_game["id"], 12)
    winnable = await api.game(auth, rule="relaxed", winnable=True)
    await play_some(api, auth, winnable["id"], 4)
    chosen = await api.game(auth, code="RU1-C-AAAAAFN")
    await play_some(api, auth, chosen["id"], 3)

    # Before the rotation: the codes are revealed, the seed is not: pending, nothing failed.
    before = tmp_path / "before.json"
    before.write_text(await read(api, f"/api/v1/games/{random_game['id']}/replay", auth))
    assert json.loads(before.read_text())["seed"]["server_seed"] is None
    status, out = verify(str(before))
    assert status == 0, out
    assert checks(out, "…") == ["server seed", "dealt from your seed"], out
    assert checks(out, "✓") == ["commitment", "deal", "actions", "result"], out

    response = await api.client.put(
        "/api/v1/me/seeds", json={"client_seed": "verified offline"}, headers=auth
    )
    assert response.status == 200, await response.text()
    rotation = await response.json()
    revealed = rotation["previous"]["server_seed"]

    # Each replay alone: every check passes, the seed's too.
    for game, kind in ((random_game, "plain"), (winnable, "winnable")):
        path = tmp_path / f"{kind}.json"
        path.write_text(await read(api, f"/api/v1/games/{game['id']}/replay", auth))
        replay = json.loads(path.read_text())
        assert replay["seed"]["server_seed"] == revealed
        assert (replay["seed"]["candidate"] is None) == (kind == "plain")
        status, out = verify(str(path))
        assert status == 0, out
        # A winnable-only game's candidate is also the first the solver certifies: the
        # earlier ones are searched again, offline.
        certified = ["first certified"] if kind == "winnable" else []
        assert checks(out, "✓") == [
            "server seed",
            "dealt from your seed",
            *certified,
            "commitment",
            "deal",
            "actions",
            "result",
        ], out
        assert replay["code"] in out

    # The NDJSON export with the history, and the account export: all three games, nothing
    # pending or failed (the chosen game has no seed to check).
    export = tmp_path / "games.ndjson"
    export.write_text(await read(api, f"/api/v1/players/{player_id}/games/export", auth))
    history = tmp_path / "history.json"
    history.write_text(await read(api, "/api/v1/me/seeds/history", auth))
    assert json.loads(history.read_text())["seeds"][0]["server_seed"] == revealed
    status, out = verify(str(export), "--seeds", str(history))
    assert status == 0, out
    assert "3 games: 17 checks passed, 0 failed, 0 pending" in out, out
    account = tmp_path / "me.json"
    account.write_text(await read(api, "/api/v1/me/export", auth))
    status, out = verify(str(account))
    assert status == 0 and "3 games: 17 checks passed, 0 failed, 0 pending" in out, out

    # The same replay with one card of its deal swapped, or another client seed: refused.
    replay = json.loads((tmp_path / "plain.json").read_text())
    deal = replay["deal"]
    deal[6][0], deal[5][1] = deal[5][1], deal[6][0]
    (tmp_path / "swapped.json").write_text(json.dumps(replay))
    status, out = verify(str(tmp_path / "swapped.json"))
    assert status == 1 and checks(out, "✗") == ["deal"], out
    replay = json.loads((tmp_path / "plain.json").read_text())
    replay["seed"]["client_seed"] = "verified offline"
    (tmp_path / "other-seed.json").write_text(json.dumps(replay))
    status, out = verify(str(tmp_path / "other-seed.json"))
    assert status == 1 and checks(out, "✗") == ["dealt from your seed"], out


async def test_a_race_game_verifies_offline_once_the_race_has_finished(
    api: Api, tmp_path: Path
) -> None:
    _, ana = await api.player()
    _, ben = await api.player()
    response = await api.client.post(
        "/api/v1/races", json={"seats": 2, "winnable": False}, headers=ana
    )
    assert response.status == 201, await response.text()
    race = await response.json()
    response = await api.client.post(f"/api/v1/races/{race['id']}/join", headers=ben)
    assert response.status == 200, await response.text()
    full = await response.json()
    assert full["status"] == "starting", full
    # The racers quit in the countdown: the race ends at once, its seed revealed.
    for auth in (ana, ben):
        me = json.loads(await read(api, "/api/v1/me", auth))
        game_id = full["games"][me["id"]]
        response = await api.client.post(f"/api/v1/games/{game_id}/abandon", headers=auth)
        assert response.status == 200, await response.text()
    path = tmp_path / "race.json"
    game_id = full["games"][json.loads(await read(api, "/api/v1/me", ana))["id"]]
    path.write_text(await read(api, f"/api/v1/games/{game_id}/replay", ana))
    replay = json.loads(path.read_text())
    assert replay["seed"]["server_seed"] is not None and len(replay["seed"]["client_seeds"]) == 2
    status, out = verify(str(path))
    assert status == 0, out
    assert checks(out, "✓") == [
        "server seed",
        "dealt from the racers' seeds",
        "commitment",
        "deal",
        "actions",
        "result",
    ], out
