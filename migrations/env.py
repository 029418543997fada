"""Alembic environment: runs the migrations on an async engine (SQLite or PostgreSQL)."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import pool, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from server.settings import async_url
from server.store.models import Base

config = context.config
target_metadata = Base.metadata


def run_with(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # Server processes that start together migrate one at a time.
            connection.execute(text("SELECT pg_advisory_xact_lock(5318008)"))
        context.run_migrations()


async def run_async() -> None:
    engine = create_async_engine(
        async_url(config.get_main_option("sqlalchemy.url") or ""), poolclass=pool.NullPool
    )
    async with engine.connect() as connection:
        await connection.run_sync(run_with)
    await engine.dispose()


def run_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_offline()
else:
    connection = config.attributes.get("connection")
    if connection is not None:
        run_with(connection)
    else:
        asyncio.run(run_async())
