"""Clients generated from `openapi.yaml` play a whole game against the server (issue 15).

Nothing generated is kept in the repository or edited: each run generates the clients afresh
from the document, so a change of the document that breaks a generator, or that no longer
matches the server, fails here.

- Python: `openapi-python-client generate` (the test extras pin it) writes a package, which is
  imported and plays the first game of tests/data/games.json with its typed models.
- TypeScript: `openapi-typescript` writes the types, tests/processes/clients/play.mts uses them with
  `openapi-fetch`, `tsc --strict` compiles it and node runs it (the npm tools of api-tools/:
  `npm ci --prefix api-tools`; without them the test skips, or fails when CI is set).

Both run on each database against the app served by pytest-aiohttp's test server.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from tests.conftest import DATA, load_data
from tests.names import unique_name

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "openapi.yaml"
API_TOOLS = ROOT / "api-tools"
BIN = API_TOOLS / "node_modules" / ".bin"
PACKAGE = "russian_solitaire_server_client"


def run(args: list[str], cwd: Path) -> None:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(args)}:\n{done.stdout}\n{done.stderr}"


def base_url(client: TestClient[Any, Any]) -> str:
    return str(client.make_url("")).rstrip("/")


# ------------------------------------------------------------------------------------- Python


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """`generated("api.games.play_action")`: a module of the client generated from the document."""
    output = tmp_path_factory.mktemp("python-client") / "client"
    run(
        [
            sys.executable,
            "-m",
            "openapi_python_client",
            "generate",
            "--path",
            str(DOCUMENT),
            "--output-path",
            str(output),
        ],
        cwd=output.parent,
    )
    sys.path.insert(0, str(output))
    try:

        def module(name: str) -> ModuleType:
            return importlib.import_module(f"{PACKAGE}.{name}")

        yield module
    finally:
        sys.path.remove(str(output))
        for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
            del sys.modules[name]


async def test_python_client_generated_from_the_document_plays_a_whole_game(
    client: TestClient[Any, Any], generated: Any
) -> None:
    played = load_data("games.json")["games"][0]
    models = generated("models")
    create_player = generated("api.players.create_player")
    create_game = generated("api.games.create_game")
    get_targets = generated("api.games.get_targets")
    play_action = generated("api.games.play_action")
    get_move_log = generated("api.games.get_move_log")
    get_replay = generated("api.replays.get_replay")
    verify_replay = generated("api.replays.verify_replay")
    base = base_url(client)

    async with generated("client").Client(base_url=base) as anonymous:
        signed_up = await create_player.asyncio_detailed(
            client=anonymous, body=models.NewPlayer(name=unique_name("py"))
        )
        assert signed_up.status_code == 201
        assert isinstance(signed_up.parsed, models.PlayerWithToken)
        token = signed_up.parsed.token

        async with generated("client").AuthenticatedClient(base_url=base, token=token) as player:
            created = await create_game.asyncio_detailed(
                client=player, body=models.NewGame(code=played["code"])
            )
            assert created.status_code == 201
            game = created.parsed
            assert isinstance(game, models.Game)
            assert (game.status.value, game.code, game.chosen) == ("active", played["code"], True)
            assert created.headers["Location"] == f"/api/v1/games/{game.id}"

            # Placement help: the first card's legal places.
            card, place = played["actions"][0].split("-")
            targets = await get_targets.asyncio(id=game.id, client=player, card=card)
            assert isinstance(targets, models.Targets)
            assert place in targets.targets

            # A move the rules refuse, read as a typed problem with its rule.
            refused = await play_action.asyncio_detailed(
                id=game.id,
                client=player,
                body=models.MoveAction(action="move", card="AC", to="t1"),
                idempotency_key=f"{game.id}-refused",
                accept_language="ro",
            )
            assert refused.status_code == 422
            problem = refused.parsed
            assert isinstance(problem, models.Problem)
            assert (problem.type_, problem.status) == ("/problems/illegal-move", 422)
            assert problem.rule == "same_suit"
            assert refused.headers["Content-Language"] == "ro"

            # The whole game, each action with its own key; the first one sent twice.
            last = None
            for index, text in enumerate(played["actions"]):
                card, place = text.split("-")
                arguments = {
                    "id": game.id,
                    "client": player,
                    "body": models.MoveAction(action="move", card=card, to=place),
                    "idempotency_key": f"{game.id}-{index}",
                }
                answer = await play_action.asyncio_detailed(**arguments)
                assert answer.status_code == 200, answer.content
                last = answer.parsed
                assert isinstance(last, models.MoveResult)
                assert (last.move, last.game.version) == (text, index + 1)
                if index == 0:
                    again = await play_action.asyncio_detailed(**arguments)
                    assert again.headers["Idempotent-Replayed"] == "true"
                    assert again.parsed.to_dict() == last.to_dict()
            assert isinstance(last, models.MoveResult)
            finished = last.game
            assert finished.status.value == played["status"]
            assert (finished.score, finished.moves) == (played["score"], played["moves"])

            # Each action was applied once: the retry and the refusal left no entry.
            log = await get_move_log.asyncio(id=game.id, client=anonymous)
            assert isinstance(log, models.MoveLog)
            assert [entry.move for entry in log.moves] == played["actions"]

        # The replay, verified by the server.
        replay = await get_replay.asyncio(id=game.id, client=anonymous)
        assert isinstance(replay, models.Replay)
        assert replay.code == played["code"]
        assert isinstance(replay.deal, list) and len(replay.deal) == 7
        assert [action.move for action in replay.actions] == played["actions"]
        document = models.ReplayIn.from_dict(replay.to_dict())
        verdict = await verify_replay.asyncio(client=anonymous, body=document)
        assert isinstance(verdict, models.Verification)
        assert verdict.valid is True, verdict
        assert verdict.status.value == played["status"]
        assert (verdict.score, verdict.moves, verdict.rule) == (
            played["score"],
            played["moves"],
            None,
        )

        # A replay that claims another score does not hold, and says why.
        claimed = replay.to_dict()
        claimed["result"]["score"] += 10
        forged = await verify_replay.asyncio(
            client=anonymous, body=models.ReplayIn.from_dict(claimed)
        )
        assert isinstance(forged, models.Verification)
        assert (forged.valid, forged.rule) == (False, "result_mismatch")


# --------------------------------------------------------------------------------- TypeScript


def npm_tools() -> None:
    """Skips (fails under CI) when node or the npm tools of api-tools/ are missing."""
    missing = [
        name
        for name, found in [
            ("node", shutil.which("node") is not None),
            ("api-tools/node_modules (npm ci --prefix api-tools)", (BIN / "tsc").exists()),
        ]
        if not found
    ]
    if missing:
        message = f"the TypeScript client needs {', '.join(missing)}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def typescript_program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/processes/clients/play.mts compiled by `tsc --strict` against types generated from the
    document; returns the compiled program."""
    npm_tools()
    work = tmp_path_factory.mktemp("typescript-client")
    shutil.copy(ROOT / "tests" / "processes" / "clients" / "play.mts", work / "play.mts")
    (work / "node_modules").symlink_to(API_TOOLS / "node_modules", target_is_directory=True)
    # api.ts, not api.d.ts, so that tsc checks the generated types too (skipLibCheck skips the
    # declaration files of node_modules, which are not ours to check).
    run(
        [
            str(BIN / "openapi-typescript"),
            str(DOCUMENT),
            "--output",
            str(work / "api.ts"),
            "--default-non-nullable=false",
        ],
        cwd=work,
    )
    run(
        [
            str(BIN / "tsc"),
            "--strict",
            "--module",
            "nodenext",
            "--target",
            "es2022",
            "--types",
            "node",
            "--skipLibCheck",
            "play.mts",
        ],
        cwd=work,
    )
    program = work / "play.mjs"
    assert program.exists()
    return program


async def test_typescript_client_typed_by_the_document_plays_a_whole_game(
    client: TestClient[Any, Any], typescript_program: Path
) -> None:
    played = load_data("games.json")["games"][0]
    name = unique_name("ts")
    process = await asyncio.create_subprocess_exec(
        "node",
        str(typescript_program),
        base_url(client),
        str(DATA / "games.json"),
        name,
        cwd=typescript_program.parent,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode == 0, f"{out.decode()}\n{err.decode()}"
    summary = json.loads(out.decode().strip().splitlines()[-1])
    assert summary["refused_rule"] == "same_suit"
    assert (summary["valid"], summary["forged_rule"]) == (True, "result_mismatch")

    # What the program did, read back from the server.
    game_id = str(uuid.UUID(summary["game"]))
    response = await client.get(f"/api/v1/games/{game_id}")
    assert response.status == 200
    game = await response.json()
    assert (game["player"]["id"], game["player"]["name"]) == (summary["player"], name)
    assert (game["status"], game["score"], game["moves"]) == (
        played["status"],
        played["score"],
        played["moves"],
    )
    response = await client.get(f"/api/v1/games/{game_id}/moves")
    log = await response.json()
    assert [entry["move"] for entry in log["moves"]] == played["actions"]
