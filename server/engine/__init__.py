"""The rules of Russian Solitaire: pure Python, standard library only, no I/O (SPEC 1)."""

from server.engine.cards import CARDS, FOUNDATION, Card, card_text, parse_place, place_text
from server.engine.codes import (
    RU2_SEED_LIMIT,
    DealCode,
    Rule,
    commitment,
    deal_columns,
    shuffled_deck,
    shuffled_deck_ru2,
)
from server.engine.errors import EngineError, IllegalMove, NotationError
from server.engine.game import GROUP_LIMIT, UNDO_LIMIT, WIN_SCORE, Game, Outcome, Status
from server.engine.moves import UNDO, Action, Move, Undo, parse_action
from server.engine.replay import ReplayResult, replay

__all__ = [
    "CARDS",
    "FOUNDATION",
    "GROUP_LIMIT",
    "RU2_SEED_LIMIT",
    "UNDO",
    "UNDO_LIMIT",
    "WIN_SCORE",
    "Action",
    "Card",
    "DealCode",
    "EngineError",
    "Game",
    "IllegalMove",
    "Move",
    "NotationError",
    "Outcome",
    "ReplayResult",
    "Rule",
    "Status",
    "Undo",
    "card_text",
    "commitment",
    "deal_columns",
    "parse_action",
    "parse_place",
    "place_text",
    "replay",
    "shuffled_deck",
    "shuffled_deck_ru2",
]
