"""Typed errors of the engine.

`NotationError` is a syntax error (the text is not a card, place, move or code); `IllegalMove`
is a rules error (well-formed, but the rules forbid it). Both are `ValueError`s and quote their
input, like python-chess's `InvalidMoveError` / `IllegalMoveError`.
"""

from __future__ import annotations


class EngineError(ValueError):
    """Base class of every error the engine raises."""


class NotationError(EngineError):
    """Text that does not parse: a card, a place, a move or a deal code."""

    def __init__(self, kind: str, text: object, reason: str) -> None:
        self.kind = kind
        self.text = text
        self.reason = reason
        super().__init__(f"invalid {kind} {text!r}: {reason}")


class IllegalMove(EngineError):
    """A well-formed action that the rules refuse.

    `rule` is the stable rule id (`same_suit`, `face_down`, ...); `params` are the values that
    the human explanation names (never the position of a face-down card).
    """

    def __init__(self, rule: str, action: str, params: dict[str, str] | None = None) -> None:
        self.rule = rule
        self.action = action
        self.params = params or {}
        super().__init__(f"illegal action {action!r}: {rule}")

    def explain(self, lang: str = "en") -> str:
        """The human explanation of the refusal in `lang` (en, ro, he; English otherwise)."""
        from server.engine.messages import explain

        return explain(self.rule, lang, self.params)
