"""Targeted tests of every rule, every refusal rule id and the play helpers (SPEC 1.2-1.7)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from server.engine import (
    GROUP_LIMIT,
    UNDO,
    UNDO_LIMIT,
    WIN_SCORE,
    DealCode,
    Game,
    IllegalMove,
    Move,
    Outcome,
    Rule,
    Status,
    parse_action,
    replay,
)
from server.engine.cards import card_text
from server.engine.messages import LANGUAGES, RULES, TITLES
from tests.engine.helpers import (
    T1,
    T2,
    T3,
    T4,
    T5,
    T6,
    T7,
    F,
    c,
    code_for,
    load_data,
    make,
    refused,
    state,
)

GAMES = load_data("games.json")["games"]


def test_constants() -> None:
    assert GROUP_LIMIT == 20
    assert UNDO_LIMIT == 100
    assert WIN_SCORE == 52 * 10 + 21 * 5 == 625


# ----------------------------------------------------------------------------- tableau rule


def tableau_game(rule: str) -> Game:
    return make(["8H", "7D", "9H", "7H", "AH", "KS", "KC"], rule=rule, filler=T7)


def test_classic_same_suit_one_rank_higher() -> None:
    game = tableau_game("C")
    assert game.refusal(c("7H"), T1) is None
    game.apply(c("7H"), T1)
    assert game.tableau_view()[T1] == ["8H", "7H"]
    assert game.columns[T4] == []
    assert game.moves == 1
    assert game.score == 0


def test_classic_wrong_family_is_refused() -> None:
    game = tableau_game("C")
    exc = refused(game, c("7D"), T1)  # 7D on 8H
    assert exc.rule == "same_suit"
    assert exc.params["target"] == "8H"
    assert exc.params["card"] == "7D"
    text = exc.explain("en")
    assert "family" in text
    assert "7D" in text and "8H" in text


def test_classic_wrong_rank_is_refused() -> None:
    game = tableau_game("C")
    assert refused(game, c("7H"), T3).rule == "same_suit"  # 7H on 9H
    assert refused(game, c("8H"), T4).rule == "same_suit"  # 8H on 7H: lower, not higher
    assert refused(game, c("9H"), T1).rule == "same_suit"  # 9H on 8H


def test_classic_king_never_goes_on_the_next_suits_ace() -> None:
    # KS is card 12 and AH card 13: a king must not fit on the ace that follows it in the deck.
    game = tableau_game("C")
    assert refused(game, c("KS"), T5).rule == "same_suit"


@pytest.mark.parametrize(("card", "to"), [("7D", T1), ("7H", T1)])
def test_relaxed_allows_any_suit(card: str, to: int) -> None:
    game = tableau_game("R")
    assert game.refusal(c(card), to) is None
    game.apply(c(card), to)
    assert game.columns[to][-2:] == [c("8H"), c(card)]


def test_relaxed_still_needs_exactly_one_rank_higher() -> None:
    game = tableau_game("R")
    exc = refused(game, c("7H"), T3)  # 7H on 9H
    assert exc.rule == "rank"
    assert exc.params["target"] == "9H"
    assert refused(game, c("KS"), T5).rule == "rank"  # K on A
    assert refused(game, c("9H"), T1).rule == "rank"
    assert "family" not in exc.explain("en")


def test_relaxed_any_suit_of_the_higher_rank() -> None:
    game = make(["8S", "8H", "8D", "8C", "7H", "", "KC"], rule="R", filler=T7)
    assert game.targets(c("7H")) == [T1, T2, T3, T4]
    classic = make(["8S", "8H", "8D", "8C", "7H", "", "KC"], rule="C", filler=T7)
    assert classic.targets(c("7H")) == [T2]
    assert [classic.refusal(c("7H"), to) for to in (T1, T3, T4)] == ["same_suit"] * 3


# ----------------------------------------------------------------------------- group moves


def test_yukon_group_move_with_arbitrary_cards_on_top() -> None:
    # The SPEC example: 3C, 7D, AS, 4S, TH moves as one when 3C fits.
    game = make(["kd 4C", "9H 3C 7D AS 4S TH", "", "", "", "", "KC"], filler=T7)
    assert game.refusal(c("3C"), T1) is None
    assert Move(c("3C"), T1) in game.legal_moves()
    game.apply(c("3C"), T1)
    assert game.tableau_view() == [
        [None, "4C", "3C", "7D", "AS", "4S", "TH"],
        ["9H"],
        [],
        [],
        [],
        [],
        game.tableau_view()[T7],
    ]
    assert all(game.where[c(t)] == T1 for t in ("3C", "7D", "AS", "4S", "TH"))
    assert game.moves == 1
    # Only the base card must fit: 7D (in the middle of the group) goes nowhere near a 8D.
    game.undo()
    assert game.tableau_view(reveal=True)[T2] == ["9H", "3C", "7D", "AS", "4S", "TH"]


def test_group_from_the_middle_of_a_column() -> None:
    game = make(["8D", "2C 3C 7D AS", "", "", "", "", "KC"], filler=T7)
    game.apply(c("7D"), T1)
    assert game.tableau_view()[T1] == ["8D", "7D", "AS"]
    assert game.tableau_view()[T2] == ["2C", "3C"]


def test_automatic_flip_scores_five() -> None:
    game = make(["kd 4C", "9h 3C 7D AS 4S TH", "", "", "", "", "KC"], filler=T7)
    assert game.down[T2] == 1
    assert not game.is_face_up(c("9H"))
    game.apply(c("3C"), T1)
    assert game.down[T2] == 0
    assert game.is_face_up(c("9H"))
    assert game.tableau_view()[T2] == ["9H"]
    assert game.score == 5
    assert game.moves == 1
    # Undo turns it face-down again and takes the 5 points back.
    game.undo()
    assert game.down[T2] == 1
    assert game.score == 0
    assert game.tableau_view()[T2] == [None, "3C", "7D", "AS", "4S", "TH"]


def test_flip_after_foundation_move() -> None:
    game = make(["2s AS", "", "", "", "", "", "KC"], filler=T7)
    game.apply(c("AS"), F)
    assert game.score == 15
    assert game.tableau_view()[T1] == ["2S"]
    game.apply(c("2S"), F)
    assert game.score == 25
    assert game.columns[T1] == []
    assert game.down[T1] == 0


def test_group_limit() -> None:
    # t1: 5H, 7D and 19 more face-up cards (21 in all); 5H fits on 6H, 7D fits on 8D.
    filler = [f"{r}S" for r in "A23456789TJQK"] + [f"{r}C" for r in "A23456"]
    group = ["5H", "7D", *filler]
    assert len(group) == 21
    game = make([" ".join(group), "6H", "8D", "KC", "", "", ""], filler=T4)
    assert game.down[T1] == 0
    exc = refused(game, c("5H"), T2)
    assert exc.rule == "group_too_large"
    assert "20" in exc.explain("en")
    assert Move(c("5H"), T2) not in game.legal_moves()
    # A group of 20 is allowed.
    assert game.refusal(c("7D"), T3) is None
    assert Move(c("7D"), T3) in game.legal_moves()
    assert game.targets(c("7D")) == [T3]
    game.apply(c("7D"), T3)
    assert len(game.columns[T3]) == 21
    assert game.columns[T1] == [c("5H")]
    # Now 5H is alone.
    game.apply(c("5H"), T2)
    assert game.columns[T2] == [c("6H"), c("5H")]


def test_group_limit_built_with_the_constructor() -> None:
    """The same position spelled out with Game(code, columns, down, foundations, ...)."""
    big = [c("KH"), c("KD"), *range(0, 13), *range(39, 45)]  # KH, KD, AS..KS, AC..6C
    assert len(big) == 21
    rest = [x for x in range(52) if x not in big]
    game = Game(
        DealCode(Rule.CLASSIC, 0),
        [big, [], rest, [], [], [], []],
        [0, 0, len(rest) - 1, 0, 0, 0, 0],
        [0, 0, 0, 0],
        score=0,
        moves=0,
        history=[],
    )
    assert sorted(game.cards()) == list(range(52))
    assert game.refusal(c("KH"), T2) == "group_too_large"  # 21 cards to an empty column
    assert game.refusal(c("KD"), T2) is None  # 20 cards
    assert game.targets(c("KH")) == []
    assert game.targets(c("KD")) == [T2, T4, T5, T6, T7]
    with pytest.raises(IllegalMove) as info:
        game.resolve_double_tap(c("KH"))
    assert info.value.rule in ("no_place", "group_too_large")
    assert game.resolve_double_tap(c("KD")) == Move(c("KD"), T2)


# ----------------------------------------------------------------------------- empty column


def test_empty_column_takes_only_a_king() -> None:
    game = make(["", "qh 5H", "KS", "QD", "KD 4C 9S", "", "KC"], filler=T7)
    exc = refused(game, c("5H"), T1)  # would uncover QH: still refused
    assert exc.rule == "empty_column_king"
    assert "king" in exc.explain("en").lower()
    assert refused(game, c("QD"), T1).rule == "empty_column_king"
    assert refused(game, c("4C"), T6).rule == "empty_column_king"
    assert game.refusal(c("KS"), T1) is None
    assert game.refusal(c("KD"), T6) is None
    game.apply(c("KD"), T6)  # a king with the cards on top of it
    assert game.tableau_view()[T6] == ["KD", "4C", "9S"]
    assert game.columns[T5] == []
    game.apply(c("KS"), T1)  # a king alone
    assert game.tableau_view()[T1] == ["KS"]


# ----------------------------------------------------------------------------- foundations


def test_foundation_move_scores_ten() -> None:
    game = make(["AS", "AH 2C", "2S", "", "", "", "KC"], filler=T7)
    game.apply(c("AS"), F)
    assert game.score == 10
    assert game.foundations == [1, 0, 0, 0]
    assert game.foundations_view() == [["AS"], [], [], []]
    assert game.foundation_top(0) == c("AS")
    assert game.foundation_top(1) is None
    game.apply(c("2S"), F)
    assert game.score == 20
    assert game.foundations_view()[0] == ["AS", "2S"]
    assert game.moves == 2


def test_foundation_refusals() -> None:
    game = make(["AH 5C", "3H", "AS", "", "", "", "KC"], foundations=(0, 0, 0, 0), filler=T7)
    assert refused(game, c("AH"), F).rule == "not_last_card"
    exc = refused(game, c("3H"), F)
    assert exc.rule == "foundation_order"
    assert exc.params["needed"] == "AH"
    assert "3H" in exc.explain("en")
    game2 = make(["", "3H", "", "", "", "", "KC"], foundations=(0, 1, 0, 0), filler=T7)
    assert refused(game2, c("3H"), F).params["needed"] == "2H"


def test_foundation_finds_the_suit_slot_itself() -> None:
    game = make(["AC", "AD", "AH", "AS", "", "", "KC"], filler=T7)
    for text, slot in (("AC", 3), ("AD", 2), ("AH", 1), ("AS", 0)):
        game.apply(c(text), F)
        assert game.foundations[slot] == 1
    assert game.foundations_view() == [["AS"], ["AH"], ["AD"], ["AC"]]


def test_take_back_costs_nothing_and_replacing_scores_again() -> None:
    game = make(["6H", "", "", "", "", "", "KC"], foundations=(0, 5, 0, 0), filler=T7, score=50)
    assert game.refusal(c("5H"), T1) is None
    assert game.targets(c("5H")) == [T1]
    game.apply(c("5H"), T1)  # take-back
    assert game.score == 50
    assert game.moves == 1
    assert game.foundations == [0, 4, 0, 0]
    assert game.tableau_view()[T1] == ["6H", "5H"]
    game.apply(c("5H"), F)
    assert game.score == 60
    assert game.moves == 2
    game.apply(c("5H"), T1)
    game.apply(c("5H"), F)
    assert game.score == 70
    # Undo of a take-back.
    game.apply(c("5H"), T1)
    game.undo()
    assert game.foundations == [0, 5, 0, 0]
    assert game.columns[T1] == [c("6H")]
    assert game.score == 70


def test_take_back_of_a_king_to_an_empty_column() -> None:
    game = make(["", "", "", "", "", "", "KC"], foundations=(13, 0, 0, 0), filler=T7)
    assert game.targets(c("KS")) == [T1, T2, T3, T4, T5, T6]
    game.apply(c("KS"), T3)
    assert game.tableau_view()[T3] == ["KS"]
    assert game.foundations[0] == 12


def test_take_back_follows_the_tableau_rule() -> None:
    game = make(["6D", "", "6H", "", "", "", "KC"], foundations=(0, 5, 0, 0), filler=T7)
    assert refused(game, c("5H"), T1).rule == "same_suit"
    assert refused(game, c("5H"), T2).rule == "empty_column_king"
    assert game.targets(c("5H")) == [T3]
    relaxed = make(["6D", "", "6H", "", "", "", "KC"], (0, 5, 0, 0), rule="R", filler=T7)
    assert relaxed.targets(c("5H")) == [T1, T3]


def test_foundation_top_and_on_foundation() -> None:
    game = make(["4H", "3S", "", "", "", "", "KC"], foundations=(0, 3, 0, 0), filler=T7)
    assert refused(game, c("2H"), T2).rule == "foundation_top"
    assert refused(game, c("2H"), F).rule == "foundation_top"
    assert refused(game, c("AH"), T1).rule == "foundation_top"
    assert refused(game, c("3H"), F).rule == "on_foundation"
    assert game.refusal(c("3H"), T1) is None
    assert game.targets(c("2H")) == []
    assert game.is_face_up(c("2H"))


def test_clean_win_scores_625() -> None:
    clean = [g for g in GAMES if "note" not in g]
    assert clean
    for record in clean:
        game = replay(record["code"], record["actions"]).game
        assert (game.status, game.score) == (Status.WON, 625)


def test_take_back_in_a_vector_game_scores_ten_again() -> None:
    take_back = [g for g in GAMES if g.get("note") == "take-back"]
    assert take_back
    for record in take_back:
        assert record["score"] == 635
        assert replay(record["code"], record["actions"]).game.score == 635


# ----------------------------------------------------------------------------- ranked score


def _vector(note: str | None, rule: str = "C") -> dict[str, object]:
    return next(g for g in GAMES if g.get("note") == note and g["code"][4] == rule)


def take_back_game(n: int = 15) -> Game:
    """The classic take-back vector game after its first `n` moves: move 15 is AS-f (its first
    time home), and AS-t5 is legal after it."""
    record = _vector("take-back")
    actions = record["actions"]
    assert isinstance(actions, list) and actions[14:16] == ["AS-f", "AS-t5"]
    return replay(str(record["code"]), actions[:n]).game


def test_ranked_score_counts_first_placements_and_flips() -> None:
    game = make(["2s AS", "", "", "", "", "", "KC"], filler=T7)
    before = game.ranked_score
    game.apply(c("AS"), F)  # home, and 2S turned face-up
    assert game.ranked_score == before + 15
    assert game.score == 15
    assert game.reached == 1 << c("AS")
    game.apply(c("2S"), F)
    assert game.ranked_score == before + 25
    game.undo()
    game.undo()
    assert (game.ranked_score, game.reached, game.score) == (before, 0, 0)


@pytest.mark.parametrize("cycles", [1, 10, 60])
def test_take_back_cycles_score_again_but_not_in_the_ranked_score(cycles: int) -> None:
    game = take_back_game()
    ranked, score = game.ranked_score, game.score
    assert game.reached >> c("AS") & 1
    assert ranked <= score
    for i in range(cycles):
        game.play(parse_action("AS-t5"))
        assert (game.ranked_score, game.score) == (ranked, score + 10 * i)
        assert game.reached >> c("AS") & 1, "a card taken back stays reached"
        game.play(parse_action("AS-f"))
        assert (game.ranked_score, game.score) == (ranked, score + 10 * (i + 1))
    assert game.moves == 15 + 2 * cycles
    # Undo restores the ranked score exactly: unchanged through the cycles, 10 less once the
    # first AS-f is undone (when it is still among the last 100 moves).
    while game.undo_available:
        kind, card, *_, flipped, _ = game.history[-1]
        before = game.ranked_score
        game.undo()
        if card == c("AS") and kind in (2, 3):  # a take-back or a re-placement
            assert game.ranked_score == before
        if (kind, card) == (1, c("AS")):
            assert game.ranked_score == before - 10
            assert not game.reached >> c("AS") & 1
        assert game.ranked_score == before - 10 * (kind == 1) - 5 * flipped
    if 15 + 2 * cycles <= UNDO_LIMIT:
        assert state(game) == state(Game.deal(game.code))
        assert (game.ranked_score, game.reached) == (0, 0)
    else:
        assert (game.ranked_score, game.score) == (ranked, score + 10 * (cycles - 50))


def test_undo_restores_the_ranked_score_of_each_step() -> None:
    record = _vector("take-back")
    actions = record["actions"]
    assert isinstance(actions, list)
    game = Game.deal(DealCode.parse(str(record["code"])))
    seen: list[tuple[int, int, int]] = [(game.score, game.ranked_score, game.reached)]
    for text in actions[:60]:
        game.play(parse_action(text))
        seen.append((game.score, game.ranked_score, game.reached))
    while game.undo_available:
        game.undo()
        seen.pop()
        assert (game.score, game.ranked_score, game.reached) == seen[-1]
    assert (game.score, game.ranked_score, game.reached) == (0, 0, 0)


def test_every_won_vector_game_ends_with_ranked_score_625() -> None:
    for record in GAMES:
        game = replay(record["code"], record["actions"]).game
        assert game.status is Status.WON
        assert game.ranked_score == WIN_SCORE == 625
        assert game.reached == (1 << 52) - 1
        assert game.score == record["score"]  # 635 after a take-back: only the score grows


def test_winning_brings_the_ranked_score_to_625() -> None:
    game = one_to_win()
    assert game.ranked_score == 615  # 51 cards home, 21 turned face-up
    game.apply(c("KC"), F)
    assert (game.ranked_score, game.score) == (625, 625)
    assert game.public_view()["ranked_score"] == 625


def test_reached_defaults_to_the_foundations_and_is_part_of_the_state() -> None:
    game = make(["6H", "", "", "", "", "", "KC"], foundations=(0, 5, 0, 0), filler=T7, score=50)
    assert game.reached == sum(1 << c(t) for t in ("AH", "2H", "3H", "4H", "5H"))
    other = Game(
        game.code,
        [list(col) for col in game.columns],
        list(game.down),
        list(game.foundations),
        score=50,
        reached=game.reached | 1 << c("KC"),
    )
    assert other.ranked_score == game.ranked_score + 10
    assert other != game
    twin = game.copy()
    assert twin == game
    twin.apply(c("5H"), T1)
    twin.apply(c("5H"), F)
    assert twin.ranked_score == game.ranked_score
    twin.undo()
    twin.undo()
    assert state(twin) == state(game)
    assert (twin.reached, twin.ranked_score) == (game.reached, game.ranked_score)
    assert twin.moves == 2 and twin != game  # the move counter is part of the key
    game.copy().apply(c("5H"), T1)
    assert game.foundations == [0, 5, 0, 0]


# ---------------------------------------------------------------------------------- views


def test_views_match_the_card_texts_at_every_step() -> None:
    for record in GAMES:
        game = Game.deal(DealCode.parse(record["code"]))
        for text in record["actions"]:
            game.play(parse_action(text))
            for reveal in (False, True):
                view = game.tableau_view(reveal)
                assert view == [
                    [card_text(x) if reveal or i >= d else None for i, x in enumerate(col)]
                    for col, d in zip(game.columns, game.down, strict=True)
                ]
            assert game.foundations_view() == [
                [card_text(s * 13 + r) for r in range(n)] for s, n in enumerate(game.foundations)
            ]


def test_views_are_fresh_lists() -> None:
    game = take_back_game()
    view, piles = game.tableau_view(), game.foundations_view()
    for column in view:
        column.append("XX")
    for pile in piles:
        pile.append("XX")
    assert all("XX" not in column for column in game.tableau_view())
    assert all("XX" not in pile for pile in game.foundations_view())
    assert Game.deal(game.code).tableau_view()[6][:6] == [None] * 6


# ---------------------------------------------------------------------- face-down, same column


def test_face_down_cards_cannot_move() -> None:
    # QH lies face-down in t3; KH (where it would fit) tops t1.
    game = make(["KH", "", "qh 2C", "", "", "", "KC"], foundations=(0, 11, 0, 0), filler=T7)
    assert not game.is_face_up(c("QH"))
    for to in (*range(7), F):
        exc = refused(game, c("QH"), to)
        assert exc.rule == "face_down"
    assert game.targets(c("QH")) == []
    assert all(m.card != c("QH") for m in game.legal_moves())
    with pytest.raises(IllegalMove) as info:
        game.resolve_tap(c("QH"))
    assert info.value.rule == "face_down"
    with pytest.raises(IllegalMove) as info:
        game.resolve_double_tap(c("QH"))
    assert info.value.rule == "face_down"


def test_face_down_explanation_never_names_its_column() -> None:
    game = make(["KH", "", "qh 2C", "", "", "", "KC"], foundations=(0, 11, 0, 0), filler=T7)
    for lang in LANGUAGES:
        texts = set()
        for to in (*range(7), F):
            exc = refused(game, c("QH"), to)
            text = exc.explain(lang)
            assert text
            assert "t3" not in text.lower()
            assert "3" not in text  # QH has no digit: any 3 would name column 3
            texts.add(text)
        for action in (game.resolve_tap, game.resolve_double_tap):
            with pytest.raises(IllegalMove) as info:
                action(c("QH"))
            text = info.value.explain(lang)
            assert "3" not in text
            texts.add(text)
        # The same text wherever the player tried to put it: the refusal reveals nothing.
        assert len(texts) == 1, texts


def test_face_down_explanation_is_the_same_wherever_the_card_lies() -> None:
    a = make(["KH", "", "qh 2C", "", "", "", "KC"], foundations=(0, 11, 0, 0), filler=T7)
    b = make(["KH", "", "", "", "qh 2C", "", "KC"], foundations=(0, 11, 0, 0), filler=T7)
    for lang in LANGUAGES:
        for to in (*range(7), F):
            assert refused(a, c("QH"), to).explain(lang) == refused(b, c("QH"), to).explain(lang)


def test_same_column() -> None:
    # 5H would fit on the 6H that ends its own column.
    game = make(["5H 9C 6H", "", "", "", "", "", "KC"], filler=T7)
    assert refused(game, c("5H"), T1).rule == "same_column"
    assert refused(game, c("9C"), T1).rule == "same_column"
    assert refused(game, c("6H"), T1).rule == "same_column"
    assert Move(c("5H"), T1) not in game.legal_moves()
    assert game.targets(c("5H")) == []


# ----------------------------------------------------------------------------- undo


def test_nothing_to_undo_on_a_new_deal() -> None:
    game = Game.deal(DealCode.parse("RU1-C-AAAAABB"))
    before = game.key()
    with pytest.raises(IllegalMove) as info:
        game.undo()
    assert info.value.rule == "nothing_to_undo"
    assert game.key() == before
    with pytest.raises(IllegalMove) as info:
        game.play(UNDO)
    assert info.value.rule == "nothing_to_undo"
    assert game.undo_available == 0


def shuttle_game() -> Game:
    """KS alone in t3 with t1 and t2 empty: it can move for ever."""
    return make(["", "", "KS", "", "", "", "KC"], filler=T7)


def test_undo_limit_is_100_moves() -> None:
    game = shuttle_game()
    places = [T1, T2, T3]
    states = [state(game)]
    for i in range(101):
        where = game.where[c("KS")]
        to = next(p for p in places[i % 3 :] + places if p != where)
        game.apply(c("KS"), to)
        states.append(state(game))
    assert game.moves == 101
    assert game.undo_available == 100
    for i in range(100):
        game.undo()
        assert state(game) == states[100 - i]
        assert game.moves == 101
    assert state(game) == states[1]  # the first move can no longer be undone
    with pytest.raises(IllegalMove) as info:
        game.undo()
    assert info.value.rule == "nothing_to_undo"
    assert state(game) == states[1]
    assert game.moves == 101


def test_undo_does_not_change_the_move_counter() -> None:
    game = shuttle_game()
    game.apply(c("KS"), T1)
    game.apply(c("KS"), T2)
    assert game.moves == 2
    game.play(UNDO)
    assert game.moves == 2
    game.play(UNDO)
    assert game.moves == 2
    game.apply(c("KS"), T2)
    assert game.moves == 3


def test_undo_in_vector_game() -> None:
    record = next(g for g in GAMES if g.get("note") == "undo")
    assert "undo" in record["actions"]
    game = replay(record["code"], record["actions"]).game
    assert game.moves == record["moves"] == len(record["actions"]) - 2
    assert game.score == 625


# ----------------------------------------------------------------------------- end of game


def one_to_win() -> Game:
    return make(["KC", "", "", "", "", "", ""], foundations=(13, 13, 13, 12), score=615, moves=99)


def test_win_and_game_over() -> None:
    game = one_to_win()
    assert Move(c("KC"), F) in game.legal_moves()
    assert game.resolve_tap(c("KC")) == Move(c("KC"), F)
    game.apply(c("KC"), F)
    assert game.status is Status.WON
    assert game.won
    assert game.score == 625
    assert game.moves == 100
    assert game.outcome() == Outcome(Status.WON, 625, 100)
    assert game.legal_moves() == []
    assert game.undo_available == 0
    before = game.key()
    for card, to in ((c("KC"), T1), (c("KC"), F), (c("QC"), T1)):
        assert refused(game, card, to).rule == "game_over"
        assert game.targets(card) == []
    with pytest.raises(IllegalMove) as info:
        game.undo()
    assert info.value.rule == "game_over"
    with pytest.raises(IllegalMove) as info:
        game.abandon()
    assert info.value.rule == "game_over"
    for helper in (game.resolve_tap, game.resolve_double_tap):
        with pytest.raises(IllegalMove) as info:
            helper(c("KC"))
        assert info.value.rule == "game_over"
    assert game.key() == before


def test_abandon_then_game_over() -> None:
    game = Game.deal(DealCode.parse("RU1-C-AAAAABB"))
    move = game.legal_moves()[0]
    game.apply(move.card, move.to)
    game.abandon()
    assert game.status is Status.ABANDONED
    assert game.outcome() == Outcome(Status.ABANDONED, game.score, 1)
    assert game.legal_moves() == []
    assert game.undo_available == 0
    with pytest.raises(IllegalMove) as info:
        game.undo()
    assert info.value.rule == "game_over"
    with pytest.raises(IllegalMove) as info:
        game.play(move)
    assert info.value.rule == "game_over"
    with pytest.raises(IllegalMove) as info:
        game.abandon()
    assert info.value.rule == "game_over"


def test_no_automation() -> None:
    """The server never moves a card on its own: nothing happens besides the move itself."""
    game = make(["2S AS", "", "", "", "", "", "KC"], filler=T7)
    game.apply(c("AS"), F)
    assert game.tableau_view()[T1] == ["2S"]  # 2S could go up too, but stays
    assert game.moves == 1
    win = make(["KC QC", "", "", "", "", "", ""], foundations=(13, 13, 13, 11))
    win.apply(c("QC"), F)
    assert win.status is Status.ACTIVE
    assert win.columns[T1] == [c("KC")]


# ----------------------------------------------------------------------------- tap


def test_tap_sends_the_last_card_to_its_foundation() -> None:
    game = make(["AS", "AH 5C", "3H", "", "", "", "KC"], filler=T7)
    assert game.resolve_tap(c("AS")) == Move(c("AS"), F)
    game.play(game.resolve_tap(c("AS")))
    assert game.foundations == [1, 0, 0, 0]


@pytest.mark.parametrize(
    ("card", "rule"),
    [("AH", "not_last_card"), ("3H", "foundation_order"), ("KC", "foundation_order")],
)
def test_tap_refusals(card: str, rule: str) -> None:
    game = make(["AS", "AH 5C", "3H", "", "", "", "KC"], filler=T7)
    with pytest.raises(IllegalMove) as info:
        game.resolve_tap(c(card))
    assert info.value.rule == rule


def test_tap_on_a_foundation_card_is_refused() -> None:
    game = make(["4H", "", "", "", "", "", "KC"], foundations=(0, 3, 0, 0), filler=T7)
    with pytest.raises(IllegalMove) as info:
        game.resolve_tap(c("3H"))
    assert info.value.rule == "on_foundation"
    with pytest.raises(IllegalMove) as info:
        game.resolve_tap(c("2H"))
    assert info.value.rule == "foundation_top"


# ----------------------------------------------------------------------------- double tap


def test_double_tap_prefers_the_foundation() -> None:
    game = make(["4H", "5H", "", "", "", "", "KC"], foundations=(0, 3, 0, 0), filler=T7)
    assert game.refusal(c("4H"), T2) is None
    assert game.resolve_double_tap(c("4H")) == Move(c("4H"), F)


def test_double_tap_longest_column_counts_face_down_cards() -> None:
    # 5H fits on 6S (t2: 4 face-up cards) and 6D (t5: 4 face-down + 1 face-up = 5 cards).
    game = make(["5H", "2S 3S 4S 6S", "", "", "2d 3d 4d 7d 6D", "", "KC"], rule="R", filler=T7)
    assert game.targets(c("5H")) == [T2, T5]
    assert len(game.columns[T5]) > len(game.columns[T2])
    assert game.resolve_double_tap(c("5H")) == Move(c("5H"), T5)


def test_double_tap_longest_column_to_the_right() -> None:
    game = make(["5H", "6S", "", "", "2D 3D 6D", "", "KC"], rule="R", filler=T7)
    assert game.resolve_double_tap(c("5H")) == Move(c("5H"), T5)


def test_double_tap_ties_go_to_the_leftmost() -> None:
    game = make(["5H", "", "2S 6S", "", "2D 6D", "", "KC"], rule="R", filler=T7)
    assert game.targets(c("5H")) == [T3, T5]
    assert game.resolve_double_tap(c("5H")) == Move(c("5H"), T3)


def test_double_tap_with_the_filler_column_longest() -> None:
    game = make(["5H", "2S 6S", "", "", "", "", "6C"], rule="R", filler=T7)
    assert game.resolve_double_tap(c("5H")) == Move(c("5H"), T7)


def test_double_tap_moves_a_group() -> None:
    game = make(["5H 9C", "6H", "", "", "", "", "KC"], foundations=(0, 4, 0, 0), filler=T7)
    move = game.resolve_double_tap(c("5H"))
    assert move == Move(c("5H"), T2)
    game.play(move)
    assert game.tableau_view()[T2] == ["6H", "5H", "9C"]


def test_double_tap_king_to_the_leftmost_empty_column() -> None:
    game = make(["AC", "KH 3C", "", "5D", "", "", "KC"], filler=T7)
    # The king lies at the bottom of its column and still goes to an empty column.
    assert game.resolve_double_tap(c("KH")) == Move(c("KH"), T3)
    alone = make(["KH", "", "", "", "", "", "KC"], filler=T7)
    assert alone.resolve_double_tap(c("KH")) == Move(c("KH"), T2)


def test_double_tap_king_prefers_its_foundation() -> None:
    game = make(["KH", "", "", "", "", "", "KC"], foundations=(0, 12, 0, 0), filler=T7)
    assert game.resolve_double_tap(c("KH")) == Move(c("KH"), F)


def test_double_tap_column_before_empty_column() -> None:
    # A relaxed queen with a king on top of a column and an empty column: the column wins.
    game = make(["QH", "", "KS", "", "", "", "KC"], rule="R", filler=T7)
    assert game.targets(c("QH")) == [T3, T7]
    assert game.resolve_double_tap(c("QH")) == Move(c("QH"), T7)


def test_double_tap_on_a_foundation_top_is_a_take_back() -> None:
    game = make(
        ["6S", "", "2D 6D", "", "", "", "KC"], foundations=(0, 5, 0, 0), rule="R", filler=T7
    )
    assert game.resolve_double_tap(c("5H")) == Move(c("5H"), T3)
    with pytest.raises(IllegalMove) as info:
        game.resolve_double_tap(c("4H"))
    assert info.value.rule == "foundation_top"
    king = make(["", "", "", "", "", "", "KC"], foundations=(13, 0, 0, 0), filler=T7)
    assert king.resolve_double_tap(c("KS")) == Move(c("KS"), T1)


def test_double_tap_with_no_place() -> None:
    game = make(["5H", "8S", "", "", "", "", "KC"], foundations=(0, 3, 0, 0), filler=T7)
    with pytest.raises(IllegalMove) as info:
        game.resolve_double_tap(c("5H"))
    assert info.value.rule == "no_place"
    assert "5H" in info.value.explain("en")
    with pytest.raises(IllegalMove) as info:
        game.resolve_double_tap(c("3H"))  # foundation top with nowhere to go
    assert info.value.rule == "no_place"


# ----------------------------------------------------------------------------- targets


def test_targets_lists_columns_left_to_right_then_the_foundation() -> None:
    game = make(
        ["6S", "", "6D", "5H", "KS", "6C", "QC"], foundations=(0, 4, 0, 0), rule="R", filler=T7
    )
    assert game.targets(c("5H")) == [T1, T3, T6, F]
    moves = [m.to for m in game.legal_moves() if m.card == c("5H")]
    assert sorted(moves) == [T1, T3, T6, F]
    king = make(["", "AC", "", "", "KH", "", "QC"], foundations=(0, 12, 0, 0), rule="C", filler=T7)
    assert king.targets(c("KH")) == [T1, T3, T4, T6, F]


def test_targets_of_a_face_down_card_is_empty() -> None:
    game = make(["6H", "5h KC", "", "", "", "", "QC"], filler=T7)
    assert game.targets(c("5H")) == []


# ----------------------------------------------------------------------------- explanations

Scenario = Callable[[], IllegalMove]


def _raises(fn: Callable[[], object]) -> IllegalMove:
    try:
        fn()
    except IllegalMove as exc:
        return exc
    raise AssertionError("not refused")


def _after_win() -> IllegalMove:
    game = one_to_win()
    game.apply(c("KC"), F)
    return refused(game, c("KC"), T1)


SCENARIOS: dict[str, Scenario] = {
    "same_suit": lambda: refused(tableau_game("C"), c("7D"), T1),
    "rank": lambda: refused(tableau_game("R"), c("7H"), T3),
    "empty_column_king": lambda: refused(
        make(["", "qh 5H", "", "", "", "", "KC"], filler=T7), c("5H"), T1
    ),
    "group_too_large": lambda: refused(
        make(
            [
                "5H 7D " + " ".join(f"{r}S" for r in "A23456789TJQK") + " AC 2C 3C 4C 5C 6C",
                "6H",
                "KC",
                "",
                "",
                "",
                "",
            ],
            filler=T3,
        ),
        c("5H"),
        T2,
    ),
    "face_down": lambda: refused(
        make(["KH", "", "qh 2C", "", "", "", "KC"], filler=T7), c("QH"), T1
    ),
    "not_last_card": lambda: refused(make(["AH 5C", "", "", "", "", "", "KC"], filler=T7), 13, F),
    "foundation_order": lambda: refused(make(["3H", "", "", "", "", "", "KC"], filler=T7), 15, F),
    "foundation_top": lambda: refused(
        make(["4H", "", "", "", "", "", "KC"], (0, 3, 0, 0), filler=T7), c("2H"), T1
    ),
    "on_foundation": lambda: refused(
        make(["4H", "", "", "", "", "", "KC"], (0, 3, 0, 0), filler=T7), c("3H"), F
    ),
    "same_column": lambda: refused(
        make(["5H 9C 6H", "", "", "", "", "", "KC"], filler=T7), c("5H"), T1
    ),
    "no_place": lambda: _raises(
        lambda: make(["5H", "8S", "", "", "", "", "KC"], filler=T7).resolve_double_tap(c("5H"))
    ),
    "nothing_to_undo": lambda: _raises(Game.deal(DealCode.parse("RU1-C-AAAAAAA")).undo),
    "game_over": _after_win,
}


def test_every_rule_has_a_scenario() -> None:
    assert set(SCENARIOS) == set(RULES) == set(TITLES)


@pytest.mark.parametrize("rule", list(SCENARIOS))
def test_scenario_raises_its_rule(rule: str) -> None:
    exc = SCENARIOS[rule]()
    assert exc.rule == rule
    assert isinstance(exc, ValueError)
    assert rule in str(exc)


@pytest.mark.parametrize("rule", list(SCENARIOS))
def test_explanations_differ_by_language(rule: str) -> None:
    exc = SCENARIOS[rule]()
    texts = {lang: exc.explain(lang) for lang in ("en", "ro", "he")}
    for lang, text in texts.items():
        assert text.strip(), lang
        assert "{" not in text and "}" not in text, text
        assert text != rule
    assert len(set(texts.values())) == 3, texts
    assert exc.explain() == texts["en"]
    assert exc.explain("xx") == texts["en"]
    for value in exc.params.values():
        assert isinstance(value, str)


def test_classic_refusal_speaks_of_family() -> None:
    assert "family" in SCENARIOS["same_suit"]().explain("en").lower()
    assert TITLES["same_suit"]["en"] == "Same suit"


def test_explanations_name_the_cards() -> None:
    assert "7D" in SCENARIOS["same_suit"]().explain("en")
    for lang in LANGUAGES:
        text = SCENARIOS["same_suit"]().explain(lang)
        assert "7D" in text and "8H" in text
        assert "7H" in SCENARIOS["rank"]().explain(lang)
        assert "QH" in SCENARIOS["face_down"]().explain(lang)


def test_parse_and_play_refusal() -> None:
    game = tableau_game("C")
    with pytest.raises(IllegalMove) as info:
        game.play(parse_action("7D-t1"))
    assert info.value.rule == "same_suit"
    assert "7D-t1" in str(info.value)


@pytest.mark.parametrize("vector", load_data("deals_ru2.json")["deals"], ids=lambda v: v["code"])
def test_a_game_deals_an_ru2_code_by_its_own_shuffle(vector: dict[str, Any]) -> None:
    game = Game.deal(DealCode.parse(vector["code"]))
    shown = [
        [text if i >= d else text.lower() for i, text in enumerate(col)]
        for col, d in zip(game.tableau_view(reveal=True), game.down, strict=True)
    ]
    assert shown == vector["tableau"]
    assert (game.ranked_score, game.score, sum(game.down)) == (0, 0, 21)


def test_rule_of_a_game_from_its_code() -> None:
    assert make(["KC", "", "", "", "", "", "QC"], filler=T7).rule is Rule.CLASSIC
    assert code_for("R").rule is Rule.RELAXED
    assert T4 == 3 and T6 == 5
