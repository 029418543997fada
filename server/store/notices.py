"""Queries of notices, a player's own events (`server.services.notices`).

Each takes an open session and never commits. A notice's number is the player's last plus one,
read with the player's row locked (`FOR NO KEY UPDATE` on PostgreSQL, which does not stand in
the way of rows that only refer to the player; on SQLite the writers' `BEGIN IMMEDIATE` already
serializes), so two transactions that tell one player something never take the same number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, delete, func, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from server.store.models import DailyDeal, GameRow, NoticeMark, NoticeRow, Player


@dataclass(frozen=True, slots=True)
class NoticeRecord:
    id: int
    kind: str
    at_ms: int
    data: dict[str, Any]


async def last_ids(session: AsyncSession, player_ids: list[str]) -> dict[str, int]:
    """The number of each player's last notice (players with none are left out)."""
    query = (
        select(NoticeRow.player_id, func.max(NoticeRow.id))
        .where(NoticeRow.player_id.in_(player_ids))
        .group_by(NoticeRow.player_id)
    )
    return {player_id: last for player_id, last in (await session.execute(query)).all()}


async def insert_notices(session: AsyncSession, rows: list[dict[str, Any]]) -> None:
    """Rows of `notices` (`data` a dict, stored as JSON text)."""
    await session.execute(
        insert(NoticeRow), [{**row, "data": json.dumps(row["data"])} for row in rows]
    )


async def prune(session: AsyncSession, player_id: str, below_id: int, before_ms: int) -> None:
    """Deletes the player's notices numbered below `below_id` and older than `before_ms`."""
    await session.execute(
        delete(NoticeRow).where(
            NoticeRow.player_id == player_id,
            NoticeRow.id < below_id,
            NoticeRow.at_ms < before_ms,
        )
    )


async def forget(session: AsyncSession, player_id: str) -> None:
    """Deletes every notice of the player (their account erased)."""
    await session.execute(delete(NoticeRow).where(NoticeRow.player_id == player_id))


async def notices_after(
    session: AsyncSession, player_id: str, after_id: int, limit: int
) -> list[NoticeRecord]:
    query = (
        select(NoticeRow.id, NoticeRow.kind, NoticeRow.at_ms, NoticeRow.data)
        .where(NoticeRow.player_id == player_id, NoticeRow.id > after_id)
        .order_by(NoticeRow.id)
        .limit(limit)
    )
    return [
        NoticeRecord(row.id, row.kind, row.at_ms, json.loads(row.data))
        for row in (await session.execute(query)).all()
    ]


async def last_id(session: AsyncSession, player_id: str) -> int:
    query = select(func.max(NoticeRow.id)).where(NoticeRow.player_id == player_id)
    found: int | None = (await session.execute(query)).scalar_one()
    return found or 0


async def mark(session: AsyncSession, key: str, now_ms: int) -> bool:
    """Inserts the mark `key`; False when it was there already (another process's)."""
    dialect = session.get_bind().dialect.name
    values = {"key": key, "at_ms": now_ms}
    if dialect == "postgresql":
        statement: Any = postgresql.insert(NoticeMark).values(values).on_conflict_do_nothing()
    else:
        statement = sqlite.insert(NoticeMark).values(values).on_conflict_do_nothing()
    result: Any = await session.execute(statement)
    return bool(result.rowcount)


async def has_mark(session: AsyncSession, key: str) -> bool:
    query = select(NoticeMark.key).where(NoticeMark.key == key)
    return (await session.execute(query)).first() is not None


async def daily_players(session: AsyncSession, day: str) -> list[tuple[str, str, str]]:
    """(player id, rule, the day's code) for each player and rule with a game of the daily deal
    of `day` (a player who played both rules twice), players erased since left out."""
    query = (
        select(GameRow.player_id, GameRow.rule, DailyDeal.code)
        .join(DailyDeal, and_(DailyDeal.day == GameRow.daily, DailyDeal.rule == GameRow.rule))
        .join(Player, Player.id == GameRow.player_id)
        .where(GameRow.daily == day, Player.deleted_ms.is_(None))
        .distinct()
        .order_by(GameRow.player_id, GameRow.rule)
    )
    return [(row[0], row[1], row[2]) for row in (await session.execute(query)).all()]
