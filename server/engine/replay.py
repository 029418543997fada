"""Replaying a list of actions on a deal (SPEC 2.4)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from server.engine.codes import DealCode
from server.engine.errors import IllegalMove, NotationError
from server.engine.game import Game
from server.engine.moves import Action, parse_action


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """The game after the actions that were applied; when one failed, its index and why."""

    game: Game
    applied: int
    failed_index: int | None = None
    rule: str | None = None
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.failed_index is None


def replay(code: DealCode | str, actions: Iterable[Action | str]) -> ReplayResult:
    """Deal `code` and play `actions` (objects or move text) in order.

    Stops at the first action that does not parse (rule `notation`) or that the rules refuse
    (its rule id).
    """
    if isinstance(code, str):
        code = DealCode.parse(code)
    game = Game.deal(code)
    applied = 0
    for index, item in enumerate(actions):
        try:
            action = parse_action(item) if isinstance(item, str) else item
            game.play(action)
        except NotationError as exc:
            return ReplayResult(game, applied, index, "notation", str(exc))
        except IllegalMove as exc:
            return ReplayResult(game, applied, index, exc.rule, exc.explain("en"))
        applied += 1
    return ReplayResult(game, applied)
