"""Cards, suits, ranks and places, with their text forms (SPEC 1.9).

A card is an `int` from 0 to 51 in the order of the unshuffled deck: spades, hearts, diamonds,
clubs, each from ace to king. So `card // 13` is its suit (which is also its foundation slot) and
`card % 13` its rank (0 = ace, 12 = king). `Card` is an `int` subclass that adds parsing and
printing; the engine works on plain ints internally for speed and hands out `Card`s.
"""

from __future__ import annotations

from typing import Final

from server.engine.errors import NotationError

SUITS: Final = "SHDC"
RANKS: Final = "A23456789TJQK"
SUIT_NAMES: Final = ("spades", "hearts", "diamonds", "clubs")
KING: Final = 12
N_COLUMNS: Final = 7
FOUNDATION: Final = 7
"""The place index of "the foundation" (`f`); columns are places 0..6 (`t1`..`t7`)."""


class Card(int):
    """A playing card: `Card.parse("TH")`, `str(card) == "TH"`, `repr(card)` pastes back."""

    __slots__ = ()

    @property
    def suit(self) -> int:
        return self // 13

    @property
    def rank(self) -> int:
        return self % 13

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse `TH`, `10H`, `th` or `10h`; anything else raises `NotationError`."""
        if not isinstance(text, str):
            raise NotationError("card", text, "a card is text such as 'TH' or '7S'")
        card = _BY_TEXT.get(text.upper()) if text.isascii() else None
        if card is None:
            raise NotationError(
                "card", text, "expected a rank (A 2-9 T J Q K, or 10) and a suit (S H D C)"
            )
        return card

    def __str__(self) -> str:
        return _TEXT[self]

    def __repr__(self) -> str:
        return f"Card.parse({_TEXT[self]!r})"


_TEXT: Final = [r + s for s in SUITS for r in RANKS]
CARDS: Final = tuple(Card(i) for i in range(52))
_BY_TEXT: Final[dict[str, Card]] = {t: CARDS[i] for i, t in enumerate(_TEXT)}
_BY_TEXT.update({"10" + t[1]: CARDS[i] for i, t in enumerate(_TEXT) if t[0] == "T"})


def card_text(card: int) -> str:
    """The two-letter text of a card given as a plain int."""
    return _TEXT[card]


def parse_place(text: str) -> int:
    """Parse a place: `t1`..`t7` give 0..6, `f` gives `FOUNDATION`. Case-insensitive."""
    if isinstance(text, str) and text.isascii():
        low = text.lower()
        if low == "f":
            return FOUNDATION
        if len(low) == 2 and low[0] == "t" and "1" <= low[1] <= "7":
            return int(low[1]) - 1
    raise NotationError("place", text, "expected t1 to t7 or f")


def place_text(place: int) -> str:
    """The text of a place index: 0..6 give `t1`..`t7`, `FOUNDATION` gives `f`."""
    return "f" if place == FOUNDATION else f"t{place + 1}"
