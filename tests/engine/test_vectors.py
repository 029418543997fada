"""The golden vectors of SPEC 1.8: every deal card for card, every game to its end."""

from __future__ import annotations

import hashlib

import pytest

from server.engine import (
    UNDO,
    WIN_SCORE,
    DealCode,
    Game,
    IllegalMove,
    Move,
    NotationError,
    Outcome,
    Rule,
    Status,
    card_text,
    commitment,
    deal_columns,
    parse_action,
    replay,
    shuffled_deck,
    shuffled_deck_ru2,
)
from server.engine.codes import FACE_DOWN, ru2_shuffle, ru2_words
from tests.engine.helpers import c, load_data, text_of

DEALS = load_data("deals.json")["deals"]
GAMES = load_data("games.json")["games"]
RU2_DEALS = load_data("deals_ru2.json")["deals"]


def test_golden_files_hold_vectors() -> None:
    assert len(DEALS) == 12
    assert len(GAMES) == 6
    assert {d["code"][4] for d in DEALS} == {"C", "R"}
    assert {g["code"][4] for g in GAMES} == {"C", "R"}


@pytest.mark.parametrize("vector", DEALS, ids=[d["code"] for d in DEALS])
def test_deal_code_and_seed(vector: dict) -> None:
    code = DealCode.parse(vector["code"])
    assert code.seed == vector["seed"]
    assert code.rule is (Rule.CLASSIC if vector["code"][4] == "C" else Rule.RELAXED)
    assert str(code) == vector["code"]
    assert DealCode.parse(vector["code"].lower()) == code


@pytest.mark.parametrize("vector", DEALS, ids=[d["code"] for d in DEALS])
def test_deck_order(vector: dict) -> None:
    deck = shuffled_deck(vector["seed"])
    assert [card_text(card) for card in deck] == vector["deck"]
    assert [text_of(card) for card in deck] == vector["deck"]
    assert sorted(deck) == list(range(52))


@pytest.mark.parametrize("vector", DEALS, ids=[d["code"] for d in DEALS])
def test_tableau_card_for_card(vector: dict) -> None:
    tableau = vector["tableau"]
    # The vector itself: the deck dealt column by column, 21 face-down and 31 face-up.
    assert [t.upper() for col in tableau for t in col] == vector["deck"]
    assert sum(t.islower() for col in tableau for t in col) == 21
    assert sum(t.isupper() for col in tableau for t in col) == 31

    game = Game.deal(DealCode.parse(vector["code"]))
    revealed = game.tableau_view(reveal=True)
    assert revealed == [[t.upper() for t in col] for col in tableau]
    hidden = game.tableau_view()
    assert hidden == [[None if t.islower() else t for t in col] for col in tableau]
    assert sum(card is None for col in hidden for card in col) == 21
    assert sum(card is not None for col in hidden for card in col) == 31
    assert [len(col) for col in hidden] == [1, 6, 7, 8, 9, 10, 11]
    assert game.down == [0, 1, 2, 3, 4, 5, 6]
    assert deal_columns(vector["seed"]) == game.columns
    assert game.foundations == [0, 0, 0, 0]
    assert game.foundations_view() == [[], [], [], []]
    assert (game.score, game.moves, game.status) == (0, 0, Status.ACTIVE)
    assert game.outcome() is None
    view = game.public_view()
    assert view["tableau"] == hidden
    assert view["code"] == vector["code"]


@pytest.mark.parametrize("vector", DEALS, ids=[d["code"] for d in DEALS])
def test_same_seed_same_cards_under_either_rule(vector: dict) -> None:
    code = DealCode.parse(vector["code"])
    classic = Game.deal(code.with_rule(Rule.CLASSIC))
    relaxed = Game.deal(code.with_rule(Rule.RELAXED))
    assert classic.tableau_view(reveal=True) == relaxed.tableau_view(reveal=True)
    assert classic.rule is Rule.CLASSIC
    assert relaxed.rule is Rule.RELAXED


def test_deals_with_both_rules_in_the_vectors_match() -> None:
    by_seed: dict[int, list[dict]] = {}
    for vector in DEALS:
        by_seed.setdefault(vector["seed"], []).append(vector)
    pairs = [group for group in by_seed.values() if len(group) > 1]
    assert pairs, "the vectors deal one seed under both rules"
    for group in pairs:
        assert all(v["tableau"] == group[0]["tableau"] for v in group)


@pytest.mark.parametrize("vector", DEALS, ids=[d["code"] for d in DEALS])
def test_ru1_code_deals_its_deck_and_columns(vector: dict) -> None:
    code = DealCode.parse(vector["code"])
    assert code.version == 1
    assert [text_of(card) for card in code.deck()] == vector["deck"]
    assert code.deck() == shuffled_deck(vector["seed"])
    assert code.columns() == deal_columns(vector["seed"])
    assert [[text_of(card) for card in col] for col in code.columns()] == [
        [t.upper() for t in col] for col in vector["tableau"]
    ]
    assert code.commitment == hashlib.sha256(vector["code"].encode("ascii")).hexdigest()


# ---------------------------------------------------------------------------------- RU2


def test_ru2_golden_file_holds_vectors() -> None:
    assert len(RU2_DEALS) == 15
    assert {d["code"][4] for d in RU2_DEALS} == {"C", "R"}
    seeds = {int(d["seed"]) for d in RU2_DEALS}
    assert {0, 1, 2**128 - 1} <= seeds
    assert all(0 <= seed < 2**128 for seed in seeds)


@pytest.mark.parametrize("vector", RU2_DEALS, ids=[d["code"] for d in RU2_DEALS])
def test_ru2_code_and_seed(vector: dict) -> None:
    text = vector["code"]
    code = DealCode.parse(text)
    assert code.version == 2
    assert code.seed == int(vector["seed"])
    assert code.rule is (Rule.CLASSIC if text[4] == "C" else Rule.RELAXED)
    assert code == DealCode(code.rule, int(vector["seed"]), 2)
    assert str(code) == text
    assert repr(code) == f"DealCode.parse({text!r})"
    assert eval(repr(code), {"DealCode": DealCode}) == code
    assert DealCode.parse(text.lower()) == code
    assert DealCode.parse(text.title()) == code


@pytest.mark.parametrize("vector", RU2_DEALS, ids=[d["code"] for d in RU2_DEALS])
def test_ru2_deck_order(vector: dict) -> None:
    code = DealCode.parse(vector["code"])
    deck = code.deck()
    assert [card_text(card) for card in deck] == vector["deck"]
    assert [text_of(card) for card in deck] == vector["deck"]
    assert deck == [c(t) for t in vector["deck"]]
    assert shuffled_deck_ru2(int(vector["seed"])) == deck
    assert sorted(deck) == list(range(52))


@pytest.mark.parametrize("vector", RU2_DEALS, ids=[d["code"] for d in RU2_DEALS])
def test_ru2_tableau_card_for_card(vector: dict) -> None:
    tableau = vector["tableau"]
    # The vector itself: the deck dealt column by column, the lowest 0..6 cards face-down.
    assert [t.upper() for col in tableau for t in col] == vector["deck"]
    assert [len(col) for col in tableau] == [1, 6, 7, 8, 9, 10, 11]
    for col, down in zip(tableau, FACE_DOWN, strict=True):
        assert [t.islower() for t in col] == [True] * down + [False] * (len(col) - down)
    assert sum(t.islower() for col in tableau for t in col) == 21

    code = DealCode.parse(vector["code"])
    columns = code.columns()
    assert [[text_of(card) for card in col] for col in columns] == [
        [t.upper() for t in col] for col in tableau
    ]
    # Dealt as a game (built with its constructor: the columns and face-down counts of a deal).
    game = Game(code, columns, list(FACE_DOWN), [0, 0, 0, 0])
    assert game.tableau_view(reveal=True) == [[t.upper() for t in col] for col in tableau]
    assert game.tableau_view() == [[None if t.islower() else t for t in col] for col in tableau]


@pytest.mark.parametrize("vector", RU2_DEALS, ids=[d["code"] for d in RU2_DEALS])
def test_ru2_commitment(vector: dict) -> None:
    code = DealCode.parse(vector["code"])
    assert code.commitment == vector["commitment"]
    assert code.commitment == hashlib.sha256(vector["code"].encode("ascii")).hexdigest()
    # Printed upper case with dashes whatever the input's case.
    assert DealCode.parse(vector["code"].lower()).commitment == vector["commitment"]
    assert len(code.commitment) == 64 and code.commitment == code.commitment.lower()


@pytest.mark.parametrize("vector", RU2_DEALS, ids=[d["code"] for d in RU2_DEALS])
def test_ru2_same_seed_same_cards_under_either_rule(vector: dict) -> None:
    code = DealCode.parse(vector["code"])
    classic, relaxed = code.with_rule(Rule.CLASSIC), code.with_rule(Rule.RELAXED)
    assert classic.version == relaxed.version == 2
    assert classic.seed == relaxed.seed == code.seed
    assert classic.columns() == relaxed.columns() == code.columns()
    assert classic.commitment != relaxed.commitment


def test_ru2_vectors_with_both_rules_match() -> None:
    by_seed: dict[str, list[dict]] = {}
    for vector in RU2_DEALS:
        by_seed.setdefault(vector["seed"], []).append(vector)
    pairs = [group for group in by_seed.values() if len(group) > 1]
    assert pairs, "the vectors deal one seed under both rules"
    for group in pairs:
        assert all(v["tableau"] == group[0]["tableau"] for v in group)
        assert len({v["commitment"] for v in group}) == len(group)


def test_ru2_and_ru1_of_one_seed_differ() -> None:
    for seed in (0, 1, 27):
        ru1, ru2 = DealCode(Rule.CLASSIC, seed), DealCode(Rule.CLASSIC, seed, 2)
        assert ru1 != ru2
        assert ru1.deck() != ru2.deck()
        assert ru1.commitment != ru2.commitment


def test_ru2_word_stream_is_sha256_blocks() -> None:
    seed = 2**128 - 1
    words = ru2_words(seed)
    for k in range(3):
        block = hashlib.sha256(b"RU2" + b"\xff" * 16 + k.to_bytes(4, "big")).digest()
        expected = [int.from_bytes(block[i : i + 8], "big") for i in range(0, 32, 8)]
        assert [next(words) for _ in range(4)] == expected


def test_ru2_shuffle_rejects_biased_words() -> None:
    """For bound 52, 2**64 mod 52 == 16: words from 2**64 - 16 up are drawn again."""
    assert 2**64 % 52 == 16
    expected = ru2_shuffle([7, *([0] * 50)])
    assert expected != ru2_shuffle([0] * 51)  # (2**64 - 16) % 52 == 0: taking it would differ
    # 2**64 - 16 and above are skipped for i = 51; 2**64 - 17 is accepted as is.
    assert ru2_shuffle([2**64 - 1, 2**64 - 16, 7, *([0] * 50)]) == expected
    accepted = ru2_shuffle([2**64 - 17, *([0] * 50)])
    assert accepted == ru2_shuffle([(2**64 - 17) % 52, *([0] * 50)])
    # With bound 2 (i = 1), 2**64 mod 2 == 0: no word is ever skipped.
    assert ru2_shuffle([0] * 50 + [2**64 - 1]) == ru2_shuffle([0] * 50 + [1])


@pytest.mark.parametrize("record", GAMES, ids=[f"{g['code']}#{i}" for i, g in enumerate(GAMES)])
def test_replay_to_the_end(record: dict) -> None:
    result = replay(record["code"], record["actions"])
    assert result.valid, (result.failed_index, result.rule, result.error)
    assert result.failed_index is None and result.rule is None and result.error is None
    assert result.applied == len(record["actions"])
    game = result.game
    assert game.status.value == record["status"]
    assert game.score == record["score"]
    assert game.moves == record["moves"]
    assert game.outcome() == Outcome(Status(record["status"]), record["score"], record["moves"])

    # The same game from a DealCode and action objects.
    again = replay(DealCode.parse(record["code"]), [parse_action(a) for a in record["actions"]])
    assert again.valid
    assert again.game == game


@pytest.mark.parametrize("record", GAMES, ids=[f"{g['code']}#{i}" for i, g in enumerate(GAMES)])
def test_play_step_by_step(record: dict) -> None:
    game = Game.deal(DealCode.parse(record["code"]))
    moves = 0
    for text in record["actions"]:
        assert game.status is Status.ACTIVE
        action = parse_action(text)
        assert str(action) == text
        if isinstance(action, Move):
            assert action in game.legal_moves()
            assert game.refusal(action.card, action.to) is None
        else:
            assert action is UNDO
            assert game.undo_available > 0
        assert game.play(action) == action
        if isinstance(action, Move):
            moves += 1
        assert game.moves == moves
        assert sorted(game.cards()) == list(range(52))
    assert game.status.value == record["status"]
    assert game.score == record["score"]
    assert game.moves == record["moves"] == moves
    if record["status"] == "won":
        assert game.won
        assert game.foundations == [13, 13, 13, 13]
        assert game.columns == [[]] * 7
        assert game.legal_moves() == []


def test_clean_wins_score_625() -> None:
    clean = [g for g in GAMES if "note" not in g]
    assert len(clean) >= 2
    assert WIN_SCORE == 625
    for record in clean:
        assert "undo" not in record["actions"]
        assert record["status"] == "won"
        assert replay(record["code"], record["actions"]).game.score == 625 == record["score"]


def test_undo_does_not_count_as_a_move_in_the_vectors() -> None:
    for record in GAMES:
        n_moves = sum(a != "undo" for a in record["actions"])
        assert record["moves"] == n_moves


def test_replay_stops_at_the_first_refused_action() -> None:
    record = GAMES[0]
    actions = [*record["actions"], "AS-f", "KH-f"]
    result = replay(record["code"], actions)
    assert not result.valid
    assert result.failed_index == len(record["actions"])
    assert result.applied == len(record["actions"])
    assert result.rule == "game_over"
    assert result.error
    assert result.game.status is Status.WON


def test_replay_reports_notation_errors() -> None:
    record = GAMES[0]
    result = replay(record["code"], [record["actions"][0], "ZZ-t1", record["actions"][1]])
    assert not result.valid
    assert (result.failed_index, result.applied, result.rule) == (1, 1, "notation")
    assert "ZZ-t1" in (result.error or "")
    assert result.game.moves == 1


def test_replay_reports_illegal_moves_with_their_rule() -> None:
    record = GAMES[0]
    result = replay(record["code"], ["undo"])
    assert (result.failed_index, result.applied, result.rule) == (0, 0, "nothing_to_undo")
    assert result.game == Game.deal(DealCode.parse(record["code"]))


def test_illegal_move_in_vector_game_raises() -> None:
    game = Game.deal(DealCode.parse(GAMES[0]["code"]))
    with pytest.raises(IllegalMove):
        game.play(parse_action("KH-f"))


@pytest.mark.parametrize("vector", RU2_DEALS[:3] + DEALS[:2], ids=lambda v: v["code"])
def test_commitment_of_a_code_or_its_text(vector: dict) -> None:
    code = DealCode.parse(vector["code"])
    expected = hashlib.sha256(vector["code"].encode("ascii")).hexdigest()
    assert commitment(code) == commitment(vector["code"]) == expected
    assert commitment(vector["code"].lower()) == expected
    with pytest.raises(NotationError):
        commitment(vector["code"] + "-")


@pytest.mark.parametrize("vector", RU2_DEALS, ids=[d["code"] for d in RU2_DEALS])
def test_a_game_deals_the_cards_of_its_ru2_code(vector: dict) -> None:
    game = Game.deal(DealCode.parse(vector["code"]))
    shown = [[None if t.islower() else t for t in column] for column in vector["tableau"]]
    assert game.tableau_view() == shown
    assert game.tableau_view(reveal=True) == [[t.upper() for t in c] for c in vector["tableau"]]
