"""`legal()` (SPEC 2.3 `/legal`): on random positions of both rules it lists exactly the moves
the engine accepts, in the stable order, says whether an undo is accepted, and never depends on
a face-down card."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from server.engine import CARDS, RU2_SEED_LIMIT, DealCode, Game, IllegalMove, Move, Rule
from server.engine.cards import FOUNDATION
from server.engine.legal import Legal, legal
from tests.engine.helpers import make

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PLACE_ORDER = [FOUNDATION, 0, 1, 2, 3, 4, 5, 6]  # f, t1 ... t7


def accepted(game: Game) -> tuple[list[str], bool]:
    """Every move the engine accepts (each tried on a copy: all 52 cards, all 8 places), in the
    order of SPEC 2.3 as this test reads it, and whether it accepts an undo."""
    moves = []
    for card in range(52):  # spades, hearts, diamonds, clubs; ace to king
        for to in PLACE_ORDER:
            try:
                game.copy().apply(card, to)
            except IllegalMove:
                continue
            moves.append(str(Move(CARDS[card], to)))
    try:
        game.copy().undo()
        undo = True
    except IllegalMove:
        undo = False
    return moves, undo


def as_text(found: Legal) -> tuple[list[str], bool]:
    return [str(m) for m in found.moves], found.undo


def positions(code: DealCode, rng: random.Random, length: int) -> list[Game]:
    """Positions along a random line of play from `code` (moves, take-backs and undos)."""
    game = Game.deal(code)
    seen = [game.copy()]
    for _ in range(length):
        options: list[Move | None] = [*game.legal_moves(), None]
        choice = rng.choice(options)
        if choice is None:
            if not game.history:
                continue
            game.undo()
        else:
            game.apply(choice.card, choice.to)
        seen.append(game.copy())
        if game.won:
            break
    return seen


def twin_with_other_face_down(game: Game, rng: random.Random) -> Game:
    """The same position with its face-down cards shuffled among their places: what a player
    sees (and the history's length) is the same; which card lies where face-down is not."""
    hidden = [card for col, d in zip(game.columns, game.down, strict=True) for card in col[:d]]
    rng.shuffle(hidden)
    it = iter(hidden)
    columns = [
        [next(it) for _ in col[:d]] + col[d:]
        for col, d in zip(game.columns, game.down, strict=True)
    ]
    return Game(
        game.code,
        columns,
        list(game.down),
        list(game.foundations),
        score=game.score,
        moves=game.moves,
        status=game.status,
        history=list(game.history),
        reached=game.reached,
    )


codes = st.builds(
    DealCode,
    st.sampled_from(list(Rule)),
    st.integers(0, RU2_SEED_LIMIT - 1),
    st.just(2),
)


@SETTINGS
@given(code=codes, seed=st.integers(0, 2**32), length=st.integers(0, 400))
def test_legal_is_what_the_engine_accepts(code: DealCode, seed: int, length: int) -> None:
    note(f"deal {code}")
    rng = random.Random(seed)
    line = positions(code, rng, length)
    for game in [*line[:: max(1, len(line) // 8)], line[-1]]:
        assert as_text(legal(game)) == accepted(game), game


@SETTINGS
@given(code=codes, seed=st.integers(0, 2**32), length=st.integers(0, 300))
def test_legal_never_depends_on_a_face_down_card(code: DealCode, seed: int, length: int) -> None:
    note(f"deal {code}")
    rng = random.Random(seed)
    game = positions(code, rng, length)[-1]
    for _ in range(5):
        twin = twin_with_other_face_down(game, rng)
        assert twin.tableau_view() == game.tableau_view()
        assert twin.foundations_view() == game.foundations_view()
        assert legal(twin) == legal(game)
        # The twin can differ where it does not matter: its own moves are still the engine's.
        assert as_text(legal(twin)) == accepted(twin)


def test_a_fresh_deal_has_face_down_cards_to_shuffle() -> None:
    """The face-down test is not empty: a fresh deal's 21 face-down cards do move around."""
    game = Game.deal(DealCode(Rule.CLASSIC, 12345, 2))
    rng = random.Random(1)
    twins = [twin_with_other_face_down(game, rng) for _ in range(3)]
    assert any(t.columns != game.columns for t in twins)
    assert all(legal(t) == legal(game) for t in twins)


def test_order_is_by_card_then_foundation_then_columns() -> None:
    # AS is home: it may be taken back onto 2S (t2), and 2S may go home or onto 3S (t3); KH may
    # go to either empty column, t6 then t7; nothing else fits (2H is face-down in t1).
    game = make(["4D", "2S", "3S", "KH", "3H", "", ""], (1, 0, 0, 0), filler=0)
    texts, undo = as_text(legal(game))
    assert texts == ["AS-t2", "2S-f", "2S-t3", "KH-t6", "KH-t7"], texts
    assert undo is False
    assert (texts, undo) == accepted(game)


def test_a_take_back_is_listed_and_an_undo_after_a_move() -> None:
    # AS is home and 2S lies on t1: AS may be taken back onto 2S (the tableau rule: one rank
    # lower, same suit), 2S may go home, KD (alone on t2) to any empty column.
    game = make(["2S", "KD", "", "", "", "", ""], (1, 0, 0, 0), filler=1)
    texts, undo = as_text(legal(game))
    assert texts == ["AS-t1", "2S-f", "KD-t3", "KD-t4", "KD-t5", "KD-t6", "KD-t7"], texts
    assert undo is False
    game.apply(CARDS[1], FOUNDATION)  # 2S home: now 2S is the top of spades
    texts, undo = as_text(legal(game))
    assert "2S-t1" not in texts  # t1 is empty now: only a king goes there
    assert "AS-t1" not in texts  # AS is under 2S on its foundation
    assert undo is True
    assert (texts, undo) == accepted(game)


def test_a_group_over_the_limit_is_not_listed() -> None:
    # KH carries 21 cards on top of it (a group of 22): too large for any empty column.
    above = [f"{r}{s}" for s in "DC" for r in "23456789TJ"] + ["AH"]
    game = make(["KH " + " ".join(above), "", "", "", "", "", ""], filler=0)
    assert game.columns[0][-22] == CARDS[25]
    texts, undo = as_text(legal(game))
    assert not any(t.startswith("KH-") for t in texts), texts
    assert game.refusal(CARDS[25], 2) == "group_too_large"
    assert (texts, undo) == accepted(game)


def test_nothing_once_the_game_is_over() -> None:
    game = Game.deal(DealCode(Rule.RELAXED, 7, 2))
    first = game.legal_moves()[0]
    game.apply(first.card, first.to)
    assert legal(game).undo is True
    game.abandon()
    assert legal(game) == Legal((), False)
    assert accepted(game) == ([], False)
