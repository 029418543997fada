"""Every legal move of a position in one list, in a stable order (SPEC 2.3 `/legal`).

`legal(game)` orders `Game.legal_moves()` (the engine's fast generator, property-tested equal to
every (card, place) that `Game.refusal()` accepts) by card, then by place, and says whether an
undo would be accepted. It reads only what a player can see, so that two positions that differ
only in their face-down cards give the same answer:
- a candidate card is face-up in a column or the top card of its foundation (a face-down card is
  never one: `legal_moves` skips it);
- a destination is the last card of a column (always face-up), an empty column or a foundation;
- the group limit counts the cards on top of the moved card, all of them face-up.
The number of face-down cards of a column matters nowhere but through the column's length, which
every player sees anyway.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.engine.cards import FOUNDATION
from server.engine.game import Game, Status
from server.engine.moves import Move


@dataclass(frozen=True, slots=True)
class Legal:
    """The legal moves of a position, in the order of `order_key`, and whether an undo would be
    accepted."""

    moves: tuple[Move, ...]
    undo: bool


def order_key(move: Move) -> tuple[int, int]:
    """The stable order of SPEC 2.3: by card (spades, hearts, diamonds, clubs, each ace to
    king, which is the card's int order), then by place: `f`, then `t1` ... `t7`."""
    return int(move.card), 0 if move.to == FOUNDATION else move.to + 1


def legal(game: Game) -> Legal:
    """Every legal move of `game`, take-backs included, and whether an undo would be accepted;
    nothing once the game is over."""
    if game.status is not Status.ACTIVE:
        return Legal((), False)
    return Legal(tuple(sorted(game.legal_moves(), key=order_key)), bool(game.history))
