"""Queries of the leaderboards, player statistics, game listings and export.

Every query reads one of the indexes of migration 0002 in order (see there), with keyset
conditions written as one row-value comparison, so a page costs the same at any depth.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    false,
    func,
    literal_column,
    select,
    true,
    tuple_,
)
from sqlalchemy.ext.asyncio import AsyncSession

from server.engine import Rule, Status
from server.store.models import GameRow, Player


@dataclass(frozen=True, slots=True)
class BoardQuery:
    rule: Rule
    by: str  # score | time | moves
    assisted: bool
    code: str | None = None
    daily: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    after: tuple[int, int, str] | None = None  # (sort key, finished_ms, id) of the last row
    limit: int = 20


@dataclass(frozen=True, slots=True)
class BoardRow:
    game_id: str
    player_id: str
    player_name: str
    code: str
    score: int
    ranked_score: int
    status: Status
    elapsed_ms: int | None
    moves: int
    finished_ms: int
    secret_deal: bool
    daily: str | None

    def sort_key(self, by: str) -> int:
        if by == "score":
            return -(self.ranked_score * 2 + (self.status is Status.WON))
        if by == "time":
            return self.elapsed_ms or 0
        return self.moves


SCORE_KEY: ColumnElement[int] = literal_column(
    "(-(games.ranked_score * 2 + CASE WHEN games.status = 'won' THEN 1 ELSE 0 END))"
)
"""The key of `by=score` (ascending): the ranked score, a won game first at equal ranked
score. The same expression as the index of migration 0004, so the planner reads the index."""


def _sort_column(by: str) -> ColumnElement[Any]:
    if by == "score":
        return SCORE_KEY
    if by == "time":
        return GameRow.elapsed_ms  # type: ignore[return-value]
    return GameRow.moves  # type: ignore[return-value]


BOARD_COLUMNS: list[Any] = [
    GameRow.id,
    GameRow.player_id,
    Player.name,
    GameRow.code,
    GameRow.score,
    GameRow.ranked_score,
    GameRow.status,
    GameRow.elapsed_ms,
    GameRow.moves,
    GameRow.finished_ms,
    GameRow.secret_deal,
    GameRow.daily,
]
"""The columns of a `BoardRow`, in its order."""
_BOARD_STATUS = [f.name for f in fields(BoardRow)].index("status")


def board_query(q: BoardQuery) -> Select[Any]:
    """The query of one page of a leaderboard (also EXPLAINed by bench/leaderboard.py)."""
    key = _sort_column(q.by)
    query = _board_where(q, select(*BOARD_COLUMNS).join(Player, Player.id == GameRow.player_id))
    if q.after is not None:
        query = query.where(tuple_(key, GameRow.finished_ms, GameRow.id) > tuple_(*q.after))
    return query.order_by(key, GameRow.finished_ms, GameRow.id).limit(q.limit)


def board_rank_query(q: BoardQuery) -> Select[Any]:
    """The number of entries of the board up to and including the position `q.after`: the rank
    of the last entry of the page before it (also EXPLAINed by bench/leaderboard.py).

    Counted in three ranges of the board's index, each a plain range the planner estimates
    well: keys before the position's, then its key with earlier finishes, then its key and
    finish up to its id. (A row comparison is estimated by its first column alone: with many
    games tied on a key, such as every plain win, the planner took a deep count for a whole
    table scan.)"""
    assert q.after is not None
    key, finished, game_id = q.after
    column = _sort_column(q.by)

    def count(*conditions: ColumnElement[bool]) -> Any:
        query = _board_where(q, select(func.count()).select_from(GameRow))
        return query.where(*conditions).scalar_subquery()

    return select(
        count(column < key)
        + count(column == key, GameRow.finished_ms < finished)
        + count(column == key, GameRow.finished_ms == finished, GameRow.id <= game_id)
    )


def _board_where(q: BoardQuery, query: Select[Any]) -> Select[Any]:
    """The conditions of a board: which games it ranks."""
    # The literal predicates below repeat those of the partial indexes, so the planner uses them.
    if q.by == "score":
        query = query.where(GameRow.finished_ms.is_not(None))
    else:
        query = query.where(GameRow.status == "won")
    if q.code is not None:
        query = query.where(
            GameRow.code == q.code,
            GameRow.assisted == q.assisted,
            GameRow.practice == false(),
        )
        if q.daily is not None:
            query = query.where(GameRow.daily == q.daily)
    else:
        # The global boards: secret server-dealt deals only (not chosen, daily or race ones:
        # race games are practice).
        query = query.where(
            GameRow.rule == q.rule,
            GameRow.assisted == q.assisted,
            GameRow.secret_deal == true(),
            GameRow.daily.is_(None),
            GameRow.practice == false(),
        )
    if q.since_ms is not None:
        query = query.where(GameRow.finished_ms >= q.since_ms)
    if q.until_ms is not None:
        query = query.where(GameRow.finished_ms < q.until_ms)
    return query


async def board(session: AsyncSession, q: BoardQuery) -> list[BoardRow]:
    """One page of a leaderboard, best first; ties go to the earlier finish, then the id."""
    rows = [list(row) for row in (await session.execute(board_query(q))).all()]
    for row in rows:
        row[_BOARD_STATUS] = Status(row[_BOARD_STATUS])
    return [BoardRow(*row) for row in rows]


async def board_rank(session: AsyncSession, q: BoardQuery) -> int:
    """See `board_rank_query`."""
    return int(await session.scalar(board_rank_query(q)) or 0)
