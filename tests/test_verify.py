"""The offline verifier, `python -m server.verify` (issue 22, item 5; SPEC 1.8.2, 2.4), run as a
player runs it: a subprocess over files.

Honest documents are built from the vectors (`tests/data/seeds.json`: a server seed, a client
seed, a nonce and a candidate give a code) and the engine (legal moves played on that deal), and
from the won games of `tests/data/games.json` (chosen RU1 deals: no seed). Each kind of tampering
(the server seed, the HMAC's message, the commitment, a card of the deal, an action, the result)
fails with exit status 1 and names its check; what cannot be checked yet is pending, not failed;
unreadable input is exit status 2 with a message and no traceback.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from server.engine import DealCode, Game, card_text, parse_action
from server.engine.legal import legal
from tests.conftest import load_data

ROOT = Path(__file__).resolve().parent.parent
SEEDS = load_data("seeds.json")
GAMES = load_data("games.json")["games"]
OTHER_SEED = "ff" * 32

NAMES = ("server seed", "dealt from your seed", "commitment", "deal", "actions", "result")


def deal_of(code: DealCode) -> list[list[str]]:
    return [[card_text(c) for c in column] for column in code.columns()]


def replay_doc(
    code_text: str,
    actions: list[str],
    *,
    seed: dict[str, Any] | None = None,
    status: str | None = None,
    game_id: str = "g-1",
) -> dict[str, Any]:
    """A replay document as `GET /api/v1/games/{id}/replay` renders it, played on the engine."""
    code = DealCode.parse(code_text)
    game = Game.deal(code)
    for move in actions:
        game.play(parse_action(move))
    return {
        "format": "russian-solitaire-replay",
        "version": 1,
        "game_id": game_id,
        "code": str(code),
        "deal_commitment": code.commitment,
        "rule": code.rule.value,
        "player": {"id": "p-1", "name": "ana"},
        "deal": deal_of(code),
        "seed": seed,
        "actions": [{"move": m, "t_ms": 100 * i} for i, m in enumerate(actions)],
        "result": {
            "status": status or ("won" if game.won else "abandoned"),
            "score": game.score,
            "ranked_score": game.ranked_score,
            "moves": game.moves,
            "elapsed_ms": 100 * len(actions),
        },
        "created_at": "2030-05-15T10:00:00.000Z",
        "finished_at": "2030-05-15T10:05:00.000Z",
    }


def some_moves(code_text: str, count: int) -> list[str]:
    """`count` legal moves on the deal (the last of each position's list: they vary)."""
    game = Game.deal(DealCode.parse(code_text))
    out: list[str] = []
    for _ in range(count):
        moves = legal(game).moves
        if not moves:
            break
        game.play(moves[-1])
        out.append(str(moves[-1]))
    return out


def game_seed(vector: dict[str, Any], revealed: bool = True) -> dict[str, Any]:
    return {
        "server_seed_hash": vector["server_seed_hash"],
        "client_seed": vector["client_seed"],
        "nonce": vector["nonce"],
        "candidate": vector["candidate"],
        "server_seed": vector["server_seed"] if revealed else None,
    }


def race_seed(vector: dict[str, Any]) -> dict[str, Any]:
    return {
        "server_seed_hash": vector["server_seed_hash"],
        "client_seeds": vector["client_seeds"],
        "candidate": vector["candidate"],
        "server_seed": vector["server_seed"],
    }


def seeded_doc(index: int = 0, moves: int = 14, revealed: bool = True) -> dict[str, Any]:
    vector = SEEDS["games"][index]
    code = vector["code"]
    return replay_doc(code, some_moves(code, moves), seed=game_seed(vector, revealed))


def verify(
    tmp_path: Path, *docs: Any, args: tuple[str, ...] = (), ndjson: bool = False
) -> tuple[int, str, str]:
    """Runs `python -m server.verify` on the documents written to a file (NDJSON when asked or
    when there are several)."""
    path = tmp_path / ("export.ndjson" if ndjson or len(docs) > 1 else "replay.json")
    if ndjson or len(docs) > 1:
        path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    else:
        path.write_text(json.dumps(docs[0]), encoding="utf-8")
    return run(str(path), *args)


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "server.verify", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={"PYTHONIOENCODING": "utf-8", "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    return done.returncode, done.stdout, done.stderr


def lines(out: str, mark: str) -> list[str]:
    return [line.strip()[2:] for line in out.splitlines() if line.strip().startswith(mark + " ")]


def failed_checks(out: str) -> set[str]:
    return {line.split(":", 1)[0] for line in lines(out, "✗")}


# ---------------------------------------------------------------- purity


def test_the_verifier_imports_no_server_no_database_no_web_layer() -> None:
    code = (
        "import sys, server.verify\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('aiohttp', 'sqlalchemy', 'pydantic', 'alembic', 'asyncpg', 'redis', 'multidict') "
        "or m.startswith(('server.api', 'server.services', 'server.store', 'server.live', "
        "'server.app', 'server.settings', 'server.tools')))\n"
        "print(bad)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


# ---------------------------------------------------------------- honest documents


def test_an_honest_seeded_replay_passes_every_check(tmp_path: Path) -> None:
    status, out, err = verify(tmp_path, seeded_doc())
    assert status == 0, out + err
    passed = lines(out, "✓")
    assert [line.split(":", 1)[0] for line in passed] == list(NAMES), out
    assert "x:0" in out and SEEDS["games"][0]["code"] in out
    assert "1 game: 6 checks passed, 0 failed, 0 pending" in out


def test_every_vector_deals_its_code_from_its_seed(tmp_path: Path) -> None:
    docs = [
        replay_doc(v["code"], [], seed=game_seed(v), game_id=f"g-{i}")
        for i, v in enumerate(SEEDS["games"])
    ]
    docs += [
        replay_doc(v["code"], [], seed=race_seed(v), game_id=f"r-{i}")
        for i, v in enumerate(SEEDS["races"])
    ]
    # The vectors' candidates are inputs of the formula, not certified deals: not searched.
    status, out, err = verify(tmp_path, *docs, args=("--no-search",))
    assert status == 0, out + err
    total = len(SEEDS["games"]) + len(SEEDS["races"])
    assert f"{total} games: {6 * total} checks passed, 0 failed, 0 pending" in out
    assert len(lines(out, "✓")) == 6 * total
    assert out.count("✓ dealt from the racers' seeds") == len(SEEDS["races"])


def test_a_won_chosen_game_has_no_seed_and_passes(tmp_path: Path) -> None:
    game = GAMES[0]
    status, out, err = verify(tmp_path, replay_doc(game["code"], game["actions"]))
    assert status == 0, out + err
    assert "· server seed: no player seed" in out
    assert f"✓ result: won, score {game['score']}" in out
    assert "dealt from" not in out


def test_an_ndjson_export_and_stdin(tmp_path: Path) -> None:
    docs = [
        seeded_doc(0),
        seeded_doc(10, moves=5),
        replay_doc(GAMES[1]["code"], GAMES[1]["actions"]),
    ]
    status, out, _ = verify(tmp_path, *docs)
    assert status == 0 and "3 games: 17 checks passed, 0 failed, 0 pending" in out, out
    text = "".join(json.dumps(d) + "\n" for d in docs)
    status, out, _ = run("-", stdin=text)
    assert status == 0 and "3 games: 17 checks passed" in out, out


def test_an_account_export_lends_its_revealed_seeds(tmp_path: Path) -> None:
    vector = SEEDS["games"][0]
    hidden = seeded_doc(revealed=False)
    export = {
        "format": "russian-solitaire-export",
        "version": 1,
        "profile": {"id": "p-1", "name": "ana"},
        "seeds": {
            "server_seed_hash": "ab" * 32,
            "client_seed": "next",
            "nonce": 0,
            "next_server_seed_hash": "cd" * 32,
            "history": [
                {
                    "index": 0,
                    "server_seed": vector["server_seed"],
                    "server_seed_hash": vector["server_seed_hash"],
                    "client_seed": "x",
                    "nonces": 1,
                }
            ],
        },
        "games": [hidden],
    }
    status, out, err = verify(tmp_path, export)
    assert status == 0, out + err
    assert "(from the seeds given)" in out and "6 checks passed" in out


# ---------------------------------------------------------------- pending


def test_a_seed_not_revealed_is_pending_until_the_history_gives_it(tmp_path: Path) -> None:
    doc = seeded_doc(revealed=False)
    status, out, _ = verify(tmp_path, doc)
    assert status == 0, out
    assert [line.split(":", 1)[0] for line in lines(out, "…")] == [
        "server seed",
        "dealt from your seed",
    ]
    assert "PUT /api/v1/me/seeds" in out and "4 checks passed, 0 failed, 2 pending" in out
    vector = SEEDS["games"][0]
    history = tmp_path / "history.json"
    entry = {
        "server_seed": vector["server_seed"],
        "server_seed_hash": vector["server_seed_hash"],
        "client_seed": "x",
        "nonces": 3,
        "created_at": "2030-05-15T09:00:00.000Z",
        "ended_at": "2030-05-15T11:00:00.000Z",
    }
    history.write_text(json.dumps({"seeds": [entry]}))
    status, out, _ = verify(tmp_path, doc, args=("--seeds", str(history)))
    assert status == 0 and "6 checks passed, 0 failed, 0 pending" in out, out
    # a history whose seed is not the one committed to
    history.write_text(json.dumps({"seeds": [{**entry, "server_seed": OTHER_SEED}]}))
    status, out, _ = verify(tmp_path, doc, args=("--seeds", str(history)))
    assert status == 1 and failed_checks(out) == {"server seed", "dealt from your seed"}, out


def test_a_game_in_play_is_pending_not_failed(tmp_path: Path) -> None:
    doc = seeded_doc(revealed=False)
    doc.update(code=None, deal=None)
    doc["result"]["status"] = "active"
    status, out, _ = verify(tmp_path, doc)
    assert status == 0, out
    assert len(lines(out, "…")) == 6 and "the code is hidden until the game ends" in out


# ---------------------------------------------------------------- tampering


def tampered_seed(doc: dict[str, Any]) -> None:
    doc["seed"]["server_seed"] = OTHER_SEED


def tampered_nonce(doc: dict[str, Any]) -> None:
    doc["seed"]["nonce"] += 1


def tampered_client_seed(doc: dict[str, Any]) -> None:
    doc["seed"]["client_seed"] = "y"


def tampered_candidate(doc: dict[str, Any]) -> None:
    doc["seed"]["candidate"] = 1


def tampered_commitment(doc: dict[str, Any]) -> None:
    doc["deal_commitment"] = "0" * 64


def tampered_deal(doc: dict[str, Any]) -> None:
    deal = doc["deal"]
    deal[6][0], deal[5][0] = deal[5][0], deal[6][0]  # two face-down cards swapped


def tampered_score(doc: dict[str, Any]) -> None:
    doc["result"]["score"] += 10


def tampered_moves(doc: dict[str, Any]) -> None:
    doc["result"]["moves"] -= 1


def tampered_status(doc: dict[str, Any]) -> None:
    doc["result"]["status"] = "won"


@pytest.mark.parametrize(
    ("tamper", "check"),
    [
        (tampered_seed, "server seed"),
        (tampered_nonce, "dealt from your seed"),
        (tampered_client_seed, "dealt from your seed"),
        (tampered_candidate, "dealt from your seed"),
        (tampered_commitment, "commitment"),
        (tampered_deal, "deal"),
        (tampered_score, "result"),
        (tampered_moves, "result"),
        (tampered_status, "result"),
    ],
)
def test_each_tampering_of_a_seeded_replay_fails_and_names_its_check(
    tmp_path: Path, tamper: Any, check: str
) -> None:
    doc = seeded_doc()
    tamper(doc)
    status, out, err = verify(tmp_path, doc)
    assert status == 1, out + err
    assert check in failed_checks(out), out
    if check != "server seed":  # a wrong seed also deals another code
        assert failed_checks(out) == {check}, out


def test_another_code_with_its_own_commitment_and_deal_is_not_the_seed_s(tmp_path: Path) -> None:
    """The server swapping the whole deal (code, commitment, deal and a replay of it) is caught
    by the HMAC alone."""
    honest = seeded_doc()
    other = SEEDS["games"][1]["code"]
    doc = replay_doc(other, some_moves(other, 6), seed=honest["seed"])
    status, out, _ = verify(tmp_path, doc)
    assert status == 1 and failed_checks(out) == {"dealt from your seed"}, out


def test_a_race_s_seeds_changed_fails(tmp_path: Path) -> None:
    vector = SEEDS["races"][0]
    seed = race_seed(vector)
    seed["client_seeds"] = [*seed["client_seeds"][:-1], "mallory"]
    status, out, _ = verify(tmp_path, replay_doc(vector["code"], [], seed=seed))
    assert status == 1 and failed_checks(out) == {"dealt from the racers' seeds"}, out


def test_an_illegal_action_fails_and_names_it(tmp_path: Path) -> None:
    game = GAMES[0]
    doc = replay_doc(game["code"], game["actions"])
    doc["actions"][3]["move"] = "KD-t1"  # a king onto a column that is not empty
    status, out, _ = verify(tmp_path, doc)
    assert status == 1, out
    assert failed_checks(out) == {"actions"}, out
    assert "action 4 ('KD-t1') is refused" in out and "· result:" in out


def test_an_action_that_is_not_move_text_fails(tmp_path: Path) -> None:
    doc = seeded_doc()
    doc["actions"].insert(2, {"move": "fly away", "t_ms": 1})
    status, out, _ = verify(tmp_path, doc)
    assert status == 1 and failed_checks(out) == {"actions"}, out
    assert "notation" in out


def test_an_action_dropped_changes_the_result(tmp_path: Path) -> None:
    game = GAMES[0]
    doc = replay_doc(game["code"], game["actions"])
    del doc["actions"][-1]
    status, out, _ = verify(tmp_path, doc)
    assert status == 1 and failed_checks(out) == {"result"}, out


def test_one_bad_game_of_an_export_fails_the_run_and_the_others_pass(tmp_path: Path) -> None:
    bad = seeded_doc(2)
    tampered_deal(bad)
    status, out, _ = verify(tmp_path, seeded_doc(0), bad, seeded_doc(4))
    assert status == 1, out
    assert "3 games: 19 checks passed, 1 failed, 0 pending" in out


# ---------------------------------------------------------------- unreadable input


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot be read"),
        ("", "is empty"),
        ("{not json", "is not JSON"),
        ('{"hello": 1}', "is not a replay document"),
        ('{"format": "russian-solitaire-replay", "actions": []}\n{oops\n', "line 2 is not JSON"),
        (b"\xff\xfe\x00", "is not UTF-8"),
    ],
)
def test_unreadable_input_is_exit_status_2_with_a_message(
    tmp_path: Path, content: str | bytes | None, message: str
) -> None:
    path = tmp_path / "input.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    status, out, err = run(str(path))
    assert status == 2, out + err
    assert message in err and "Traceback" not in err, err


def test_seeds_that_are_not_seeds_are_exit_status_2(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.json"
    seeds.write_text('"nothing"')
    status, _, err = verify(tmp_path, seeded_doc(), args=("--seeds", str(seeds)))
    assert status == 2 and "seed pairs" in err and "Traceback" not in err


def test_the_help_says_what_it_checks() -> None:
    status, out, _ = run("--help")
    assert status == 0 and "--seeds" in out and "Exit status" in out


def test_a_malformed_document_fails_its_checks_rather_than_crashing(tmp_path: Path) -> None:
    doc = copy.deepcopy(seeded_doc())
    doc["code"] = "RU9-X-NOPE"
    doc["seed"]["nonce"] = "zero"
    doc["deal"] = "cards"
    status, out, err = verify(tmp_path, doc)
    assert status == 1 and "Traceback" not in err, out + err
    assert "commitment" in failed_checks(out)


def test_a_winnable_candidate_must_be_the_first_certified(tmp_path: Path) -> None:
    """The server could otherwise pick among candidates: the verifier searches the earlier ones
    again with the server's budget (the solver is deterministic) and fails a document whose
    candidate is not the first certified one."""
    from server.engine import Rule
    from server.engine.seeds import game_message, seed_hash, seeded_code
    from server.engine.solver import SolveStatus, solve_deal
    from server.services.deals import DEAL_NODES
    from server.verify import CERTIFY_NODES

    assert CERTIFY_NODES == DEAL_NODES
    seed = bytes(range(32))

    def code_of(j: int) -> DealCode:
        return seeded_code(seed, game_message("v", 0, j), Rule.RELAXED)

    def certified(j: int) -> bool:
        verdict = solve_deal(code_of(j), take_backs=True, max_nodes=DEAL_NODES)
        return verdict.status is SolveStatus.WINNABLE

    winnable = [j for j in range(12) if certified(j)]  # relaxed deals: most are
    assert len(winnable) >= 2
    for candidate, expected in ((winnable[0], 0), (winnable[1], 1)):
        code = str(code_of(candidate))
        doc = replay_doc(
            code,
            some_moves(code, 6),
            seed={
                "server_seed_hash": seed_hash(seed),
                "client_seed": "v",
                "nonce": 0,
                "candidate": candidate,
                "server_seed": seed.hex(),
            },
        )
        status, out, _ = verify(tmp_path, doc)
        assert status == expected, out
        assert "first certified" in out, out
