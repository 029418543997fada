"""Replaying a list of actions on a deal (SPEC 2.4)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from server.engine.codes import DealCode
from server.engine.errors import IllegalMove, NotationError
from server.engine.game import Game, Status
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


@dataclass(frozen=True, slots=True)
class Verification:
    """A replay checked against a claimed result: `valid`, the replayed result, and where and
    why it failed (`rule`, `reason`)."""

    valid: bool
    status: Status
    score: int
    ranked_score: int
    moves: int
    failed_index: int | None
    rule: str | None
    reason: str | None


def verify_replay(
    code: DealCode, actions: list[str], claimed: dict[str, object] | None
) -> Verification:
    """Replay `actions` on the deal of `code` and compare with the claimed result (SPEC 2.4):
    a claimed field must equal the replayed one in value and JSON type; a claim of `abandoned`
    matches a game the actions leave active (its player gave it up)."""
    result = replay(code, actions)
    game = result.game
    status, score, moves = game.status, game.score, game.moves
    ranked = game.ranked_score
    if not result.valid:
        return Verification(
            False, status, score, ranked, moves, result.failed_index, result.rule, result.error
        )
    if claimed:
        claimed_status = claimed.get("status")
        if claimed_status == Status.ABANDONED.value and game.status is Status.ACTIVE:
            status = Status.ABANDONED
        for name, actual in (
            ("status", status.value),
            ("score", score),
            ("ranked_score", ranked),
            ("moves", moves),
        ):
            if name in claimed and (
                type(claimed[name]) is not type(actual) or claimed[name] != actual
            ):
                return Verification(
                    False,
                    status,
                    score,
                    ranked,
                    moves,
                    None,
                    "result_mismatch",
                    f"The actions lead to {name} {actual!r}, not {claimed[name]!r}.",
                )
    return Verification(True, status, score, ranked, moves, None, None, None)
