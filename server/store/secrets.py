"""The `server_secrets` table: secrets the server draws once and every process reads."""

from __future__ import annotations

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from server.store.models import (
    ServerSecret,
)


async def server_secret(session: AsyncSession, name: str) -> str | None:
    return await session.scalar(select(ServerSecret.value).where(ServerSecret.name == name))


async def insert_server_secret(session: AsyncSession, name: str, value: str, now: int) -> None:
    await session.execute(insert(ServerSecret).values(name=name, value=value, created_ms=now))
