"""The HMAC deals of SPEC 1.8.2 (server/engine/seeds.py) against tests/data/seeds.json (a copy
of the shared vectors): server seeds and their hashes, client seeds, nonces, candidates and
racers' seeds, the messages they make, the numbers, codes and commitments; the client seeds to
refuse."""

from __future__ import annotations

from typing import Any

import pytest

from server.engine import DealCode, Rule
from server.engine.seeds import (
    client_seed_problem,
    game_message,
    race_message,
    seed_hash,
    seed_number,
    seeded_code,
)
from tests.conftest import load_data

VECTORS = load_data("seeds.json")
RULES = {"C": Rule.CLASSIC, "R": Rule.RELAXED}


def check(vector: dict[str, Any], message: str) -> None:
    seed = bytes.fromhex(vector["server_seed"])
    assert len(seed) == 32
    assert seed_hash(seed) == vector["server_seed_hash"]
    assert message == vector["message"]
    assert seed_number(seed, message) == int(vector["n"])
    code = seeded_code(seed, message, RULES[vector["rule"]])
    assert str(code) == vector["code"]
    assert code.commitment == vector["deal_commitment"]
    assert DealCode.parse(vector["code"]) == code


@pytest.mark.parametrize("vector", VECTORS["games"], ids=lambda v: v["message"][:40])
def test_the_game_vectors_reproduce(vector: dict[str, Any]) -> None:
    check(vector, game_message(vector["client_seed"], vector["nonce"], vector["candidate"]))
    assert client_seed_problem(vector["client_seed"]) is None


@pytest.mark.parametrize("vector", VECTORS["races"], ids=lambda v: v["message"][:40])
def test_the_race_vectors_reproduce(vector: dict[str, Any]) -> None:
    check(vector, race_message(vector["client_seeds"], vector["candidate"]))
    # The order the racers sat in does not matter: the seeds are sorted.
    check(vector, race_message(reversed(vector["client_seeds"]), vector["candidate"]))


@pytest.mark.parametrize("seed", VECTORS["refused_client_seeds"])
def test_the_refused_client_seeds_are_refused(seed: str) -> None:
    assert client_seed_problem(seed) is not None


def test_the_bounds_of_a_client_seed() -> None:
    assert client_seed_problem("x" * 64) is None and client_seed_problem("x" * 65) is not None
    assert client_seed_problem(" ~") is None and client_seed_problem("\x7f") is not None
    assert client_seed_problem(7) is not None


def test_the_vectors_cover_every_form() -> None:
    """Plain and winnable games, several nonces and candidates, both rules, races of several
    racers, plain and winnable."""
    games, races = VECTORS["games"], VECTORS["races"]
    assert {v["candidate"] is None for v in games} == {True, False}
    assert len({v["nonce"] for v in games}) > 2 and {v["rule"] for v in games} == {"C", "R"}
    assert {v["candidate"] is None for v in races} == {True, False}
    assert max(len(v["client_seeds"]) for v in races) > 2
