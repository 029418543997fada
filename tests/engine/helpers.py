"""Shared helpers of the engine tests: golden data and positions built card by card."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from server.engine import CARDS, DealCode, Game, IllegalMove, Rule
from server.engine.cards import FOUNDATION

DATA = Path(__file__).resolve().parent.parent / "data"

F = FOUNDATION
T1, T2, T3, T4, T5, T6, T7 = range(7)


def load_data(name: str) -> Any:
    """A golden file from tests/data/ (never from the shared spec folder)."""
    with (DATA / name).open(encoding="utf-8") as fh:
        return json.load(fh)


RANKS = "A23456789TJQK"
SUITS = "SHDC"


def c(text: str) -> int:
    """The card int of a two-letter card text such as 'TH' (computed here, not by the engine)."""
    rank, suit = text.upper()
    return SUITS.index(suit) * 13 + RANKS.index(rank)


def text_of(card: int) -> str:
    return RANKS[card % 13] + SUITS[card // 13]


def code_for(rule: str) -> DealCode:
    return DealCode(Rule.CLASSIC if rule == "C" else Rule.RELAXED, 0)


def make(
    columns: Sequence[str],
    foundations: Sequence[int] = (0, 0, 0, 0),
    *,
    rule: str = "C",
    filler: int | None = None,
    score: int = 0,
    moves: int = 0,
) -> Game:
    """A game built directly with the `Game(...)` constructor.

    `columns` are 7 strings of card texts, bottom first, separated by spaces; a card whose suit
    letter is lower-case is face-down (face-down cards must come first). `foundations` are the
    counts of spades, hearts, diamonds, clubs on their foundations. The cards that are neither
    in a column nor on a foundation go face-down, in deck order, at the bottom of the column
    `filler` (an index 0..6). The result always holds one whole deck.
    """
    assert len(columns) == 7
    cols: list[list[int]] = []
    down: list[int] = []
    for text in columns:
        tokens = text.split()
        flags = [tok[-1].islower() for tok in tokens]
        n_down = sum(flags)
        assert flags == [True] * n_down + [False] * (len(tokens) - n_down), text
        cols.append([c(tok) for tok in tokens])
        down.append(n_down)
    on_foundation = {s * 13 + r for s, n in enumerate(foundations) for r in range(n)}
    placed = [card for col in cols for card in col]
    assert len(placed) == len(set(placed)), "a card is listed twice"
    assert not on_foundation & set(placed), "a card is both in a column and on a foundation"
    rest = [card for card in range(52) if card not in on_foundation and card not in placed]
    if rest:
        assert filler is not None, f"{len(rest)} cards have no place: give filler="
        cols[filler][:0] = rest
        down[filler] += len(rest)
    for col, d in zip(cols, down, strict=True):
        assert (d < len(col)) if col else d == 0, "the last card of a column must be face-up"
    game = Game(code_for(rule), cols, down, list(foundations), score=score, moves=moves)
    assert sorted(game.cards()) == list(range(52))
    return game


def refused(game: Game, card: int, to: int) -> IllegalMove:
    """Apply a move that must be refused; check that nothing changed and return the error."""
    before = game.key()
    try:
        game.apply(card, to)
    except IllegalMove as exc:
        assert game.key() == before
        assert exc.rule == game.refusal(card, to)
        return exc
    raise AssertionError(f"{CARDS[card]}-{to} was accepted")


def state(game: Game) -> tuple[object, ...]:
    """Everything an undo restores: the key minus the move counter and the history."""
    return (
        game.code,
        tuple(tuple(col) for col in game.columns),
        tuple(game.down),
        tuple(game.foundations),
        game.score,
        game.status,
    )
