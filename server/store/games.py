"""The `games`, `moves` and `idempotency_keys` tables: games, their move logs, the listings of
a player's games and of live games, and the answers kept for idempotency keys.

Each takes an open session and never commits: the caller owns the transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import (
    Select,
    delete,
    false,
    insert,
    or_,
    select,
    text,
    tuple_,
)
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from server.engine import Rule, Status
from server.store.models import (
    GameRow,
    IdempotencyRecord,
    MoveRow,
    Player,
)
from server.store.records import GAME_FIELDS, GameRecord, LoggedMove, day_start_ms, game_record


async def insert_game(session: AsyncSession, row: GameRecord) -> None:
    """Stores a new game (made by `server.services.games.new_game_row`)."""
    await session.execute(
        insert(GameRow).values({name: getattr(row, name) for name in GAME_FIELDS})
    )


async def insert_ranked_daily(session: AsyncSession, row: GameRecord) -> bool:
    """Stores a ranked daily game unless the player's ranked attempt of that day and rule
    exists (the unique index `ix_games_player_daily` decides): whether it was stored."""
    values = {name: getattr(row, name) for name in GAME_FIELDS}
    dialect = session.get_bind().dialect.name
    make = postgresql_insert if dialect == "postgresql" else sqlite_insert
    query = (
        make(GameRow)
        .values(values)
        .on_conflict_do_nothing(
            index_elements=[GameRow.player_id, GameRow.daily, GameRow.rule],
            # The index's own predicate, word for word (migration 0002).
            index_where=text("daily IS NOT NULL AND practice = false"),
        )
        .returning(GameRow.id)
    )
    return (await session.execute(query)).first() is not None


async def daily_in_play(session: AsyncSession, player_id: str, day: str, rule: str) -> bool:
    """Whether the player has a game of the daily deal of `day` and `rule` still active (one
    dealt on that day: the daily deal is dealt on its own day only)."""
    start = day_start_ms(day)
    query = (
        select(GameRow.id)
        .where(
            GameRow.player_id == player_id,
            GameRow.created_ms >= start,
            GameRow.created_ms < start + 86_400_000,
            GameRow.daily == day,
            GameRow.rule == rule,
            GameRow.status == "active",
        )
        .limit(1)
    )
    return (await session.execute(query)).first() is not None


GAME_COLUMNS = [getattr(GameRow, name) for name in GAME_FIELDS]


async def load_game(session: AsyncSession, game_id: str) -> tuple[GameRecord, str] | None:
    """The game and its player's name."""
    query = (
        select(*GAME_COLUMNS, Player.name)
        .join(Player, Player.id == GameRow.player_id)
        .where(GameRow.id == game_id)
    )
    row = (await session.execute(query)).first()
    if row is None:
        return None
    return game_record(row[:-1]), row[-1]


LOG_COLUMNS = (MoveRow.game_id, MoveRow.seq, MoveRow.move, MoveRow.score, MoveRow.at_ms)


async def move_log(
    session: AsyncSession,
    game_id: str,
    up_to: int,
    *,
    after: int = 0,
    limit: int | None = None,
    last: int | None = None,
) -> list[LoggedMove]:
    """The move log after sequence number `after` up to `up_to` (the game's version as it was
    read, since under READ COMMITTED a later statement may see actions committed after that
    read): its first `limit` entries, or its `last` ones, in order."""
    query = select(*LOG_COLUMNS).where(
        MoveRow.game_id == game_id, MoveRow.seq > after, MoveRow.seq <= up_to
    )
    if last is not None:
        query = query.order_by(MoveRow.seq.desc()).limit(last)
        return [LoggedMove(*row) for row in reversed((await session.execute(query)).all())]
    result = await session.execute(query.order_by(MoveRow.seq).limit(limit))
    return [LoggedMove(*row) for row in result]


async def idempotency_answer(
    session: AsyncSession, player_id: str, key: str, since_ms: int
) -> tuple[str, str] | None:
    """The (fingerprint, answer) stored with a player's idempotency key at `since_ms` or later,
    if any: an older record has expired (`server.services.idempotency`), even before the expiry
    job has deleted it."""
    row = (
        await session.execute(
            select(IdempotencyRecord.fingerprint, IdempotencyRecord.answer).where(
                IdempotencyRecord.player_id == player_id,
                IdempotencyRecord.key == key,
                IdempotencyRecord.created_ms >= since_ms,
            )
        )
    ).first()
    return (row[0], row[1]) if row else None


async def forget_idempotency(
    session: AsyncSession, player_id: str, key: str, before_ms: int
) -> bool:
    """Deletes a player's record of `key` if it was stored before `before_ms` (it has expired:
    the key is fresh again); whether one was."""
    deleted = await session.execute(
        delete(IdempotencyRecord).where(
            IdempotencyRecord.player_id == player_id,
            IdempotencyRecord.key == key,
            IdempotencyRecord.created_ms < before_ms,
        )
    )
    return bool(rowcount(deleted))


async def expire_idempotency(session: AsyncSession, before_ms: int, limit: int) -> int:
    """Deletes at most `limit` records stored before `before_ms` (the oldest first, found by
    `ix_idempotency_keys_created`); how many."""
    oldest = (
        select(IdempotencyRecord.player_id, IdempotencyRecord.key)
        .where(IdempotencyRecord.created_ms < before_ms)
        .order_by(IdempotencyRecord.created_ms)
        .limit(limit)
    )
    deleted = await session.execute(
        delete(IdempotencyRecord).where(
            tuple_(IdempotencyRecord.player_id, IdempotencyRecord.key).in_(oldest)
        )
    )
    return rowcount(deleted)


def rowcount(result: Any) -> int:
    """The rows a DELETE took (SQLAlchemy's `CursorResult.rowcount`)."""
    count: int = result.rowcount
    return max(0, count)


S = TypeVar("S", bound=Select[Any])


@dataclass(frozen=True, slots=True)
class FinishedGame:
    rule: Rule
    status: Status
    score: int
    ranked_score: int
    elapsed_ms: int | None
    moves: int
    assisted: bool
    finished_ms: int
    daily: str | None
    practice: bool


async def finished_games(session: AsyncSession, player_id: str) -> list[FinishedGame]:
    """A player's finished games in the order they finished (for statistics)."""
    query = (
        select(
            GameRow.rule,
            GameRow.status,
            GameRow.score,
            GameRow.ranked_score,
            GameRow.elapsed_ms,
            GameRow.moves,
            GameRow.assisted,
            GameRow.finished_ms,
            GameRow.daily,
            GameRow.practice,
        )
        .where(
            GameRow.player_id == player_id,
            GameRow.finished_ms.is_not(None),
            GameRow.race_id.is_(None),  # race games count in their races, not here
        )
        .order_by(GameRow.finished_ms, GameRow.id)
    )
    return [
        FinishedGame(**{**row._mapping, "rule": Rule(row.rule), "status": Status(row.status)})
        for row in (await session.execute(query)).all()
    ]


@dataclass(frozen=True, slots=True)
class GameFilter:
    player_id: str
    rule: Rule | None = None
    status: Sequence[Status] | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    hide_daily_from: str | None = None
    """Leave out daily games of this UTC date and later (a daily game is hidden from others
    until its day ends), and race games whose race has not ended."""


def _filtered(query: S, f: GameFilter) -> S:
    query = query.where(GameRow.player_id == f.player_id)
    if f.hide_daily_from is not None:
        query = query.where(
            or_(GameRow.daily.is_(None), GameRow.daily < f.hide_daily_from),
            GameRow.race_hidden == false(),
        )
    if f.rule is not None:
        query = query.where(GameRow.rule == f.rule)
    if f.status is not None:
        query = query.where(GameRow.status.in_(list(f.status)))
    if f.since_ms is not None:
        query = query.where(GameRow.created_ms >= f.since_ms)
    if f.until_ms is not None:
        query = query.where(GameRow.created_ms < f.until_ms)
    return query


async def player_games(
    session: AsyncSession,
    f: GameFilter,
    *,
    after: tuple[int, str] | None,
    limit: int,
    newest_first: bool = True,
) -> list[GameRecord]:
    """A page of a player's games by creation time (newest first unless told otherwise)."""
    query = _filtered(select(*GAME_COLUMNS), f)
    position = tuple_(GameRow.created_ms, GameRow.id)
    if after is not None:
        query = query.where(
            position < tuple_(*after) if newest_first else position > tuple_(*after)
        )
    if newest_first:
        query = query.order_by(GameRow.created_ms.desc(), GameRow.id.desc())
    else:
        query = query.order_by(GameRow.created_ms, GameRow.id)
    return [game_record(row) for row in await session.execute(query.limit(limit))]


async def move_logs(session: AsyncSession, game_ids: list[str]) -> dict[str, list[LoggedMove]]:
    """The move logs of several games at once."""
    logs: dict[str, list[LoggedMove]] = {game_id: [] for game_id in game_ids}
    if not game_ids:
        return logs
    query = (
        select(*LOG_COLUMNS)
        .where(MoveRow.game_id.in_(game_ids))
        .order_by(MoveRow.game_id, MoveRow.seq)
    )
    for row in await session.execute(query):
        move = LoggedMove(*row)
        logs[move.game_id].append(move)
    return logs


async def live_games(
    session: AsyncSession, today: str, *, limit: int, after: tuple[int, str] | None
) -> list[tuple[GameRecord, str]]:
    """Active games anyone may watch, most recently active first (the ix_games_live index)."""
    key = (-GameRow.active_ms, GameRow.id)
    query = (
        select(*GAME_COLUMNS, Player.name)
        .join(Player, Player.id == GameRow.player_id)
        .where(
            GameRow.status == Status.ACTIVE,
            GameRow.race_hidden == false(),
            or_(GameRow.daily.is_(None), GameRow.daily < today),
        )
    )
    if after is not None:
        query = query.where(tuple_(*key) > tuple_(-after[0], after[1]))
    query = query.order_by(*key).limit(limit)
    return [(game_record(row[:-1]), row[-1]) for row in (await session.execute(query)).all()]
