"""The snapshot text form of a game: round trips, and malformed text refused."""

from __future__ import annotations

import pytest

from server.engine import (
    UNDO,
    DealCode,
    Game,
    NotationError,
    Status,
    parse_action,
    replay,
    snapshot,
)
from tests.engine.helpers import load_data, make, state

GAMES = load_data("games.json")["games"]
CODE = "RU1-C-AAAAABB"


def played(n: int) -> Game:
    """A game of `CODE` after its first `n` legal moves (always the first listed)."""
    game = Game.deal(DealCode.parse(CODE))
    for _ in range(n):
        move = game.legal_moves()[0]
        game.play(move)
    return game


def test_fresh_deal_round_trips() -> None:
    game = Game.deal(DealCode.parse(CODE))
    text = snapshot.dumps(game)
    assert text.startswith(f"S1|{CODE}|active|0|0|0.0.0.0|0:")
    assert text.endswith("|")  # no history yet
    again = snapshot.loads(text)
    assert again == game
    assert again.tableau_view(reveal=True) == game.tableau_view(reveal=True)


def test_history_round_trips_and_undoes() -> None:
    game = played(12)
    assert game.undo_available == 12
    again = snapshot.loads(snapshot.dumps(game))
    assert again == game
    assert again.undo_available == 12
    for _ in range(12):
        game.play(UNDO)
        again.play(UNDO)
        assert again == game
    assert state(again) == state(Game.deal(DealCode.parse(CODE)))
    assert again.moves == 12


@pytest.mark.parametrize("index", range(len(GAMES)))
def test_vector_games_round_trip_at_every_step(index: int) -> None:
    record = GAMES[index]
    game = Game.deal(DealCode.parse(record["code"]))
    for text in record["actions"]:
        game.play(parse_action(text))
        assert snapshot.loads(snapshot.dumps(game)) == game
    assert game.status is Status.WON
    won = snapshot.loads(snapshot.dumps(game))
    assert won.status is Status.WON
    assert won.outcome() == game.outcome()
    assert replay(record["code"], record["actions"]).game == won


def test_abandoned_round_trips() -> None:
    game = played(3)
    game.abandon()
    again = snapshot.loads(snapshot.dumps(game))
    assert again == game
    assert again.status is Status.ABANDONED
    assert again.legal_moves() == []


def test_relaxed_round_trips() -> None:
    game = make(["", "", "", "", "", "", "KC"], (13, 0, 0, 0), rule="R", filler=6, score=130)
    game.apply(12, 0)  # take back KS
    again = snapshot.loads(snapshot.dumps(game))
    assert again == game
    assert again.rule is game.rule
    again.play(UNDO)
    assert again.foundations == [13, 0, 0, 0]


def _edit(field: int, value: str) -> str:
    parts = snapshot.dumps(played(6)).split("|")
    parts[field] = value
    return "|".join(parts)


def _column(index: int, down: str) -> str:
    parts = snapshot.dumps(played(6)).split("|")
    columns = parts[6].split("/")
    columns[index] = down + ":" + columns[index].partition(":")[2]
    parts[6] = "/".join(columns)
    return "|".join(parts)


def test_the_edit_helpers_make_loadable_text() -> None:
    good = snapshot.dumps(played(6))
    assert snapshot.loads(_edit(3, good.split("|")[3])) == played(6)
    down = good.split("|")[6].split("/")[6].partition(":")[0]
    assert snapshot.loads(_column(6, down)) == played(6)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "S1",
        "S1|" + CODE,
        snapshot.dumps(Game.deal(DealCode.parse(CODE))).replace("S1|", "S2|", 1),
        snapshot.dumps(Game.deal(DealCode.parse(CODE))) + "|",
        _edit(1, "RU9-C-AAAAABB"),
        _edit(2, "lost"),
        _edit(3, "many"),
        _edit(5, "0.0.0"),
        _edit(5, "1.0.0.0"),  # the ace of spades twice
        _edit(6, "0:5S"),  # cards missing, one column
        _edit(7, "1.2.3"),  # a history record of 3 numbers
    ],
)
def test_malformed_snapshots_are_refused(text: str) -> None:
    with pytest.raises(NotationError):
        snapshot.loads(text)


INCONSISTENT = {
    "down_beyond_column": _column(6, "99"),
    "down_negative": _column(6, "-1"),
    "last_card_face_down": _column(1, "6"),
    "score_negative": _edit(3, "-5"),
    "moves_negative": _edit(4, "-1"),
    "history_record_garbage": _edit(7, "9.9.9.9.9.9.9"),
}


@pytest.mark.parametrize("what", list(INCONSISTENT))
def test_inconsistent_snapshots_are_refused(what: str) -> None:
    """loads() promises NotationError for malformed text, such as a state no play can reach."""
    with pytest.raises(NotationError):
        snapshot.loads(INCONSISTENT[what])
