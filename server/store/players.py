"""The `players` table."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from server.store.models import (
    Player,
)


async def insert_player(session: AsyncSession, **values: Any) -> None:
    await session.execute(insert(Player).values(**values))


async def player_by_token_hash(session: AsyncSession, token_hash: str) -> tuple[str, str] | None:
    row = (
        await session.execute(select(Player.id, Player.name).where(Player.token_hash == token_hash))
    ).first()
    return (row[0], row[1]) if row else None


async def player_by_id(session: AsyncSession, player_id: str) -> Player | None:
    return await session.get(Player, player_id)


async def update_player(session: AsyncSession, player_id: str, **values: Any) -> None:
    await session.execute(update(Player).where(Player.id == player_id).values(**values))
