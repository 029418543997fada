"""The snapshot text form of a game: round trips, S1 snapshots still read, malformed text
refused."""

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
from tests.engine.helpers import T1, T2, T3, F, c, load_data, make, state

GAMES = load_data("games.json")["games"]
CODE = "RU1-C-AAAAABB"
FIELDS = {
    name: i
    for i, name in enumerate(
        (
            "format",
            "code",
            "status",
            "score",
            "ranked",
            "moves",
            "foundations",
            "reached",
            "columns",
            "history",
        )
    )
}


def played(n: int) -> Game:
    """A game of `CODE` after its first `n` legal moves (always the first listed).

    Move 7 is AH-f; from move 9 on, AH goes back to t4 and home again, over and over.
    """
    game = Game.deal(DealCode.parse(CODE))
    for _ in range(n):
        move = game.legal_moves()[0]
        game.play(move)
    return game


def test_fresh_deal_round_trips() -> None:
    game = Game.deal(DealCode.parse(CODE))
    text = snapshot.dumps(game)
    assert text.startswith(f"S2|{CODE}|active|0|0|0|0.0.0.0|0|0:")
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


def test_take_back_cycles_round_trip_with_their_ranked_score() -> None:
    """Each re-placement of AH scores 10 again; the ranked score stays, and survives a round
    trip and the undos after it."""
    for n in range(7, 40):
        game = played(n)
        assert game.score == 25 + 10 * max(0, (n - 8) // 2)
        assert game.ranked_score == 25
        text = snapshot.dumps(game)
        again = snapshot.loads(text)
        assert again == game
        assert again.ranked_score == 25
        assert again.reached == 1 << c("AH")
        assert snapshot.dumps(again) == text
        while again.undo_available:
            again.undo()
            game.undo()
            assert again == game
        assert (again.score, again.ranked_score, again.reached) == (0, 0, 0)


@pytest.mark.parametrize("index", range(len(GAMES)))
def test_vector_games_round_trip_at_every_step(index: int) -> None:
    record = GAMES[index]
    game = Game.deal(DealCode.parse(record["code"]))
    for text in record["actions"]:
        game.play(parse_action(text))
        line = snapshot.dumps(game)
        again = snapshot.loads(line)
        assert again == game
        assert again.ranked_score == game.ranked_score
        assert again.reached == game.reached
        assert list(again.history) == list(game.history)
        assert snapshot.dumps(again) == line
        assert line.split("|")[FIELDS["ranked"]] == str(game.ranked_score)
    assert game.status is Status.WON
    won = snapshot.loads(snapshot.dumps(game))
    assert won.status is Status.WON
    assert won.outcome() == game.outcome()
    assert won.ranked_score == 625
    assert won.reached == (1 << 52) - 1
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


def _edit(n: int = 6, **fields: str) -> str:
    """The S2 text of `played(n)` with some fields replaced."""
    parts = snapshot.dumps(played(n)).split("|")
    for field, value in fields.items():
        parts[FIELDS[field]] = value
    return "|".join(parts)


def test_reached_is_lower_case_hex() -> None:
    won = snapshot.dumps(snapshot.loads(S1_WON))
    assert won.split("|")[FIELDS["reached"]] == "fffffffffffff"
    assert snapshot.loads(won).reached == (1 << 52) - 1
    with pytest.raises(NotationError):
        snapshot.loads(won.replace("fffffffffffff", "FFFFFFFFFFFFF"))


def _field(field: str, n: int = 6) -> str:
    return snapshot.dumps(played(n)).split("|")[FIELDS[field]]


def _column(index: int, down: str) -> str:
    parts = snapshot.dumps(played(6)).split("|")
    columns = parts[FIELDS["columns"]].split("/")
    columns[index] = down + ":" + columns[index].partition(":")[2]
    parts[FIELDS["columns"]] = "/".join(columns)
    return "|".join(parts)


def _record(n: int, index: int, value: str, **fields: str) -> str:
    """The S2 text of `played(n)` with one history record replaced (and maybe fields)."""
    records = _field("history", n).split(",")
    records[index] = value
    return _edit(n, history=",".join(records), **fields)


def test_the_edit_helpers_make_loadable_text() -> None:
    good = snapshot.dumps(played(6))
    for field in FIELDS:
        assert snapshot.loads(_edit(**{field: _field(field)})) == played(6)
    down = good.split("|")[FIELDS["columns"]].split("/")[6].partition(":")[0]
    assert snapshot.loads(_column(6, down)) == played(6)
    assert _field("reached", 9) == "2000"  # AH, card 13
    assert _field("ranked", 9) == "25"
    assert _field("history", 10).split(",")[-4:] == [
        "1.13.4.7.1.0.15",  # AH-f, the first time
        "0.30.3.4.7.0.25",  # 5D-t5
        "2.13.7.3.1.0.25",  # AH-t4
        "3.13.3.7.1.0.25",  # AH-f again
    ]
    assert snapshot.loads(_record(10, -1, "3.13.3.7.1.0.25")) == played(10)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "S1",
        "S2",
        "S2|" + CODE,
        "S1|" + CODE,
        snapshot.dumps(Game.deal(DealCode.parse(CODE))).replace("S2|", "S3|", 1),
        snapshot.dumps(Game.deal(DealCode.parse(CODE))).replace("S2|", "S1|", 1),
        snapshot.dumps(Game.deal(DealCode.parse(CODE))) + "|",
        _edit(code="RU9-C-AAAAABB"),
        _edit(status="lost"),
        _edit(score="many"),
        _edit(ranked="many"),
        _edit(ranked=""),
        _edit(moves="1.5"),
        _edit(foundations="0.0.0"),
        _edit(foundations="1.0.0.0"),  # the ace of spades twice
        _edit(reached=""),
        _edit(reached="xyz"),
        _edit(reached="0x0"),
        _edit(reached="00"),
        _edit(reached="-1"),
        _edit(reached=" 0"),
        _edit(9, reached="2OOO"),
        _edit(columns="0:5S"),  # cards missing, one column
        _edit(history="1.2.3"),  # a history record of 3 numbers
        _edit(history="0.45.1.3.2.1.30.0"),  # of 8 numbers
        _edit(history="0.45.1.3.2.1.x"),
        _record(6, 0, "4.39.2.3.2.0.0"),  # an unknown kind
        _record(6, 0, "0.39.2.3.2.2.0"),  # flipped is 0 or 1
        _record(6, 0, "0.52.2.3.2.0.0"),  # no card 52
        _record(6, 0, "0.-1.2.3.2.0.0"),
    ],
)
def test_malformed_snapshots_are_refused(text: str) -> None:
    with pytest.raises(NotationError):
        snapshot.loads(text)


INCONSISTENT = {
    "down_beyond_column": _column(6, "99"),
    "down_negative": _column(6, "-1"),
    "last_card_face_down": _column(1, "6"),
    "score_negative": _edit(score="-5"),
    "moves_negative": _edit(moves="-1"),
    "history_record_garbage": _edit(history="9.9.9.9.9.9.9"),
    "moves_fewer_than_the_history": _edit(moves="5"),
    "score_not_what_the_history_adds_up_to": _edit(score="20"),
    "take_back_from_a_column": _record(10, -2, "2.13.3.3.1.0.25"),
    "to_foundation_record_to_a_column": _record(10, -1, "3.13.3.3.1.0.25"),
    "take_back_that_flipped": _record(10, -2, "2.13.7.3.1.1.25"),
    # played(6): 3 cards turned face-up, none home: ranked 15.
    "ranked_off_by_one": _edit(ranked="16"),
    "ranked_negative": _edit(ranked="-5"),
    "ranked_too_low": _edit(ranked="10"),
    "ranked_too_high": _edit(ranked="20"),
    "ranked_above_625": _edit(ranked="630"),
    "ranked_with_a_card_not_reached": _edit(ranked="25", reached="1"),
    # played(9): AH has been home and is back in a column: ranked 25, reached 2000.
    "ranked_below_the_reached_cards": _edit(9, ranked="5"),
    "ranked_without_the_reached_card": _edit(9, ranked="15"),
    "taken_back_card_not_reached": _edit(9, ranked="15", reached="0"),
    # played(7): AH is on its foundation.
    "reached_without_a_foundation_card": _edit(7, reached="0"),
    "reached_beyond_the_deck": _edit(reached=f"{1 << 52:x}"),
    # played(10): AH-f (first), 5D-t5, AH-t4, AH-f (again); the last marked as the first.
    "replacement_marked_first": _record(10, -1, "1.13.3.7.1.0.25"),
    "won_with_history": _edit(status="won"),
    "won_without_every_card_home": _edit(status="won", history=""),
    "abandoned_with_history": _edit(status="abandoned"),
}


@pytest.mark.parametrize("what", list(INCONSISTENT))
def test_inconsistent_snapshots_are_refused(what: str) -> None:
    """loads() promises NotationError for malformed text, such as a state no play can reach."""
    with pytest.raises(NotationError):
        snapshot.loads(INCONSISTENT[what])


# ----------------------------------------------------------------------------- S1 snapshots

# Written by the S1 dumps() (the engine before the ranked score), as databases hold them.
S1_FRESH = (
    "S1|RU1-C-AAAAABB|active|0|0|0.0.0.0|0:5S/1:6S4H7STDJC8D/2:9C7C8H6H7HACQD/"
    "3:7D2S4STS4D6CKD2C/4:KC5HKH3S3C6DAH9S2D/5:9D3HADTC5CASQC3D2H5D/"
    "6:QH4C9HQSJDTH8CKSJH8SJS|"
)
S1_ABANDONED = (
    "S1|RU1-C-AAAAABB|abandoned|10|5|0.0.0.0|0:5S4S/1:6S4H7STDJC8D/2:9C7C8H6H7H/1:7D2S/"
    "4:KC5HKH3S3C6DAH/5:9D3HADTC5CASQC3D2H5D4D6CKD2CACQD/6:QH4C9HQSJDTH8CKSJH8SJSTS9S2D|"
)
# The classic take-back vector game (RU1-C-AAAAAFN), won with 635 points.
S1_WON = "S1|RU1-C-AAAAAFN|won|635|89|13.13.13.13|0:/0:/0:/0:/0:/0:/0:|"
# Its first 17 moves: AC-f, ..., AS-f, AS-t5, AS-f (a take-back cycle inside the history).
S1_MID = (
    "S1|RU1-C-AAAAAFN|active|65|17|1.0.0.1|0:KS4H6H5HQHJH/0:KH9CQCKDQDJDTD9S8S7SAH8HKC/"
    "2:2C7HQS3CTS7D4D3D2D/3:JS2H5C6C/3:4C8D5D2S/1:JC5S4S3S7C6STH3H/5:6D9HADTC9D8C|"
    "1.39.5.7.1.0.0,0.28.5.2.4.1.10,0.37.5.3.1.1.15,0.36.5.3.1.1.20,0.7.5.2.1.1.25,"
    "0.23.2.1.4.0.30,0.27.0.2.1.0.30,0.12.1.0.9.1.30,0.2.4.1.5.1.35,0.0.6.4.5.1.40,"
    "0.3.1.5.6.0.45,0.35.0.3.3.0.45,0.25.3.1.9.0.45,0.6.4.1.4.0.45,1.0.4.7.1.0.45,"
    "2.0.7.4.1.0.55,1.0.4.7.1.0.55"
)
# The first 101 moves of the relaxed take-back game (AH-f, AH-t1, AH-f, ...): the history holds
# the take-back of AH and its re-placement, but no longer its first placement.
S1_LONG = (
    "S1|RU1-R-AAAAAHW|active|165|101|3.2.0.3|0:KSQDJS/0:KHQCJHTD9D8S7D/0:KCQSJCTH/2:4SKD5C/"
    "4:9HADTS7S5D4H3H2D/0:/0:5S4C3D6D6CQHJDTC9C8C7H6H9S8H8D7C6S5H4D|2.13.7.0.1.0.10,"
    "1.13.0.7.1.0.10,0.10.1.6.5.1.20,0.46.2.5.5.1.25,0.27.0.1.1.0.30,0.12.5.0.10.1.30,"
    "0.40.5.3.1.1.35,0.28.6.5.9.1.40,0.18.0.4.7.0.45,1.14.0.7.1.0.45,0.34.0.4.1.0.55,"
    "0.0.3.1.5.0.55,0.37.1.0.4.0.55,1.0.1.7.1.0.55,0.22.0.2.3.0.65,0.49.2.0.4.1.65,"
    "0.32.6.2.1.1.70,0.23.3.6.1.1.75,0.42.5.3.10.1.80,1.1.5.7.1.1.85,0.7.2.3.2.0.100,"
    "0.49.0.5.4.0.100,0.10.3.0.7.0.100,0.51.0.2.6.0.100,0.10.0.3.1.0.100,0.7.2.4.2.0.100,"
    "0.5.2.4.3.0.100,0.11.5.2.5.1.100,0.15.1.5.2.0.105,0.49.2.0.4.0.105,0.22.0.3.3.0.105,"
    "0.49.0.2.1.0.105,0.10.3.0.4.0.105,0.22.0.2.3.0.105,0.49.2.3.4.0.105,0.10.0.2.1.0.105,"
    "0.49.3.0.4.0.105,0.22.0.2.3.0.105,0.49.0.3.1.0.105,0.10.2.0.4.0.105,0.22.0.6.3.0.105,"
    "0.10.0.2.1.0.105,0.49.3.0.1.0.105,0.10.2.3.1.0.105,0.49.0.2.1.0.105,0.10.3.0.1.0.105,"
    "0.36.4.3.17.0.105,0.16.5.4.3.0.105,0.25.3.1.16.0.105,0.35.1.0.10.0.105,"
    "0.35.0.2.10.0.105,0.46.1.2.1.0.105,0.19.1.2.3.0.105,0.35.2.0.14.0.105,0.35.0.3.14.0.105,"
    "0.28.3.1.19.0.105,0.35.1.0.14.0.105,0.35.0.2.14.0.105,0.48.2.0.11.0.105,"
    "0.48.0.1.11.0.105,0.28.1.3.16.0.105,0.35.2.0.3.0.105,0.20.0.3.2.0.105,0.35.0.2.1.0.105,"
    "0.28.3.1.18.0.105,0.48.1.0.13.0.105,0.34.0.2.12.0.105,0.48.0.1.1.0.105,0.28.1.3.6.0.105,"
    "0.35.2.0.13.0.105,0.47.0.3.7.0.105,0.35.0.2.6.0.105,0.29.1.2.1.0.105,0.50.6.1.5.1.105,"
    "0.45.6.3.1.1.110,1.39.6.7.1.1.115,1.40.1.7.1.0.130,1.41.1.7.1.0.140,1.2.6.7.1.1.150,"
    "0.22.1.0.1.0.165,0.35.2.1.7.0.165,0.22.0.2.1.0.165,0.35.1.0.7.0.165,0.34.0.2.6.0.165,"
    "0.35.0.1.1.0.165,0.22.2.0.7.0.165,0.5.0.3.3.0.165,0.22.0.2.4.0.165,0.35.1.0.1.0.165,"
    "0.22.2.1.4.0.165,0.35.0.2.1.0.165,0.22.1.0.4.0.165,0.34.0.2.3.0.165,0.22.0.1.1.0.165,"
    "0.35.2.0.4.0.165,0.22.1.2.1.0.165,0.35.0.1.4.0.165,0.22.2.0.1.0.165,0.42.3.6.18.0.165,"
    "0.22.0.2.1.0.165"
)


def as_s1(text: str) -> str:
    """An S2 snapshot as the S1 dumps() wrote the same state: no ranked score, no reached, and
    every to-foundation record of kind 1."""
    parts = text.split("|")
    assert parts[0] == "S2"
    if parts[-1]:
        parts[-1] = ",".join("1" + r[1:] if r[0] == "3" else r for r in parts[-1].split(","))
    del parts[FIELDS["reached"]], parts[FIELDS["ranked"]]
    return "|".join(["S1", *parts[1:]])


def _vector(note: str | None, rule: str) -> dict[str, object]:
    return next(g for g in GAMES if g.get("note") == note and g["code"][4] == rule)


def _replayed(record: dict[str, object], n: int | None = None) -> Game:
    actions, code = record["actions"], record["code"]
    assert isinstance(actions, list) and isinstance(code, str)
    return replay(code, actions[:n]).game


def test_the_s1_literals_are_what_s1_dumps_wrote() -> None:
    """as_s1 (used below) agrees with the S1 dumps() that wrote the literals."""
    assert as_s1(snapshot.dumps(Game.deal(DealCode.parse(CODE)))) == S1_FRESH
    abandoned = played(5)
    abandoned.abandon()
    assert as_s1(snapshot.dumps(abandoned)) == S1_ABANDONED
    assert as_s1(snapshot.dumps(_replayed(_vector("take-back", "C")))) == S1_WON
    assert as_s1(snapshot.dumps(_replayed(_vector("take-back", "C"), 17))) == S1_MID
    assert as_s1(snapshot.dumps(_replayed(_vector("take-back", "R"), 101))) == S1_LONG


def test_s1_snapshots_still_load() -> None:
    fresh = snapshot.loads(S1_FRESH)
    assert fresh == Game.deal(DealCode.parse(CODE))
    assert (fresh.ranked_score, fresh.reached) == (0, 0)

    abandoned = snapshot.loads(S1_ABANDONED)
    expected = played(5)
    expected.abandon()
    assert abandoned == expected
    assert abandoned.ranked_score == 10 == abandoned.score

    won = snapshot.loads(S1_WON)
    assert won == _replayed(_vector("take-back", "C"))
    assert (won.status, won.score, won.ranked_score) == (Status.WON, 635, 625)
    for text in (S1_FRESH, S1_ABANDONED, S1_WON, S1_MID, S1_LONG):
        game = snapshot.loads(text)
        assert snapshot.dumps(game).startswith("S2|")
        assert snapshot.loads(snapshot.dumps(game)) == game


def test_s1_take_back_cycles_inside_the_history_are_exact() -> None:
    mid = snapshot.loads(S1_MID)
    assert mid == _replayed(_vector("take-back", "C"), 17)
    assert (mid.score, mid.ranked_score) == (65, 55)  # AS placed twice, counted once
    assert mid.reached == 1 << c("AS") | 1 << c("AC")
    assert [r[0] for r in mid.history][-3:] == [1, 2, 3]
    for expected in (55, 55, 45):  # undo AS-f again, AS-t5, then AS-f the first time
        mid.undo()
        assert mid.ranked_score == expected

    long = snapshot.loads(S1_LONG)
    assert long == _replayed(_vector("take-back", "R"), 101)
    assert (long.score, long.ranked_score) == (165, 155)
    assert [r[0] for r in long.history][:2] == [2, 3]  # AH-t1, AH-f again


@pytest.mark.parametrize("index", range(len(GAMES)))
def test_vector_games_as_s1_load_to_the_same_position(index: int) -> None:
    """At every step of the vector games an S1 snapshot gives the same position, score, ranked
    score and reached set. The history differs only where the approximation says: a
    re-placement whose take-back is older than the history reads as a first placement."""
    record = GAMES[index]
    game = Game.deal(DealCode.parse(record["code"]))
    for text in record["actions"]:
        game.play(parse_action(text))
        old = snapshot.loads(as_s1(snapshot.dumps(game)))
        assert state(old) == state(game)
        assert (old.ranked_score, old.reached, old.moves) == (
            game.ranked_score,
            game.reached,
            game.moves,
        )
        history = list(game.history)
        assert [r[1:] for r in old.history] == [r[1:] for r in history]
        for i, (mine, true) in enumerate(zip(old.history, history, strict=True)):
            if mine[0] != true[0]:
                assert (mine[0], true[0]) == (1, 3)
                assert all(r[1] != mine[1] for r in history[:i] if r[0])


def test_s1_misses_a_take_back_older_than_the_history() -> None:
    """The documented approximation: KS taken back, then 101 other moves; an S1 snapshot no
    longer shows that KS has been home, so it counts again when it is placed again."""
    game = make(["", "", "", "", "", "jc QC", "KC"], (13, 13, 13, 0), filler=5)
    assert game.ranked_score == 10 * 39 + 5 * (21 - 11)
    game.apply(c("KS"), T1)
    for i in range(101):
        game.apply(c("KC"), T3 if i % 2 else T2)
    assert game.ranked_score == 440
    old = snapshot.loads(as_s1(snapshot.dumps(game)))
    assert state(old) == state(game)
    assert old.ranked_score == 430
    old.apply(c("KS"), F)
    game.apply(c("KS"), F)
    assert old.ranked_score == game.ranked_score == 440
    assert (game.history[-1][0], old.history[-1][0]) == (3, 1)
    assert snapshot.loads(snapshot.dumps(game)) == game
