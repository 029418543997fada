"""Actions and their move text (SPEC 1.9): `7H-t5`, `AS-f`, `undo`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from server.engine.cards import CARDS, FOUNDATION, Card, card_text, parse_place, place_text
from server.engine.errors import NotationError


@dataclass(frozen=True, slots=True)
class Move:
    """Move `card` (with every card on top of it) to `to`: a column 0..6 or `FOUNDATION`."""

    card: Card
    to: int

    @classmethod
    def parse(cls, text: str) -> Move:
        action = parse_action(text)
        if not isinstance(action, Move):
            raise NotationError("move", text, "expected <card>-<place>, such as 7H-t5")
        return action

    @property
    def to_foundation(self) -> bool:
        return self.to == FOUNDATION

    def __str__(self) -> str:
        return f"{card_text(self.card)}-{place_text(self.to)}"

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"


@dataclass(frozen=True, slots=True)
class Undo:
    """Take back the last move."""

    def __str__(self) -> str:
        return "undo"

    def __repr__(self) -> str:
        return "UNDO"


UNDO: Final = Undo()
Action = Move | Undo


def parse_action(text: str) -> Action:
    """Parse move text: `<card>-<place>` or `undo` (case-insensitive; `10H` accepted)."""
    if not isinstance(text, str):
        raise NotationError("move", text, "a move is text such as '7H-t5', 'AS-f' or 'undo'")
    if not text.isascii():
        raise NotationError("move", text, "move text is ASCII, such as '7H-t5'")
    if text.lower() == "undo":
        return UNDO
    card_part, sep, place_part = text.partition("-")
    if not sep:
        raise NotationError("move", text, "expected <card>-<place> (such as 7H-t5) or undo")
    try:
        return Move(Card.parse(card_part), parse_place(place_part))
    except NotationError as exc:
        raise NotationError("move", text, exc.reason) from None


def move(card: int, to: int) -> Move:
    """A `Move` from a plain card int."""
    return Move(CARDS[card], to)
