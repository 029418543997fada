"""The alembic migrations are the schema: they run up and down on both databases, and the
models that the queries use agree with what they create."""

from __future__ import annotations

import asyncio

from sqlalchemy import inspect
from sqlalchemy.engine import Connection

from server.store.db import downgrade, make_engine, migrate
from server.store.models import Base


def schema_of(connection: Connection) -> dict[str, set[str]]:
    inspector = inspect(connection)
    return {
        table: {column["name"] for column in inspector.get_columns(table)}
        for table in inspector.get_table_names()
        if table != "alembic_version"
    }


async def read_schema(url: str) -> dict[str, set[str]]:
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(schema_of)
    finally:
        await engine.dispose()


async def test_migrations_create_the_tables_of_the_models(database_url: str) -> None:
    schema = await read_schema(database_url)
    expected = {
        table.name: {column.name for column in table.columns}
        for table in Base.metadata.sorted_tables
    }
    assert schema == expected


async def test_downgrade_to_base_and_upgrade_again(database_url: str) -> None:
    await asyncio.to_thread(downgrade, database_url, "base")
    assert await read_schema(database_url) == {}
    await asyncio.to_thread(migrate, database_url)
    assert set(await read_schema(database_url)) == {t.name for t in Base.metadata.sorted_tables}


async def test_the_move_log_refuses_a_second_entry_with_the_same_sequence_number(
    database_url: str,
) -> None:
    """(game_id, seq) is unique: the last guard against two writers of one game."""
    from sqlalchemy import insert
    from sqlalchemy.exc import IntegrityError

    from server.store.models import GameRow, MoveRow, Player

    engine = make_engine(database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                insert(Player).values(
                    id="p",
                    name="p",
                    name_key="p",
                    created_ms=0,
                    double_click=True,
                    placement_help=True,
                    interactive_rules=True,
                    auto_placement=False,
                )
            )
            await connection.execute(
                insert(GameRow).values(
                    id="g",
                    player_id="p",
                    code="RU1-C-AAAAAAA",
                    rule="classic",
                    chosen=True,
                    status="active",
                    score=0,
                    moves=0,
                    version=0,
                    snapshot="",
                    created_ms=0,
                    assisted=False,
                )
            )
            await connection.execute(
                insert(MoveRow).values(game_id="g", seq=1, move="AS-f", score=10, at_ms=1)
            )
        try:
            async with engine.begin() as connection:
                await connection.execute(
                    insert(MoveRow).values(game_id="g", seq=1, move="2S-f", score=20, at_ms=2)
                )
        except IntegrityError:
            pass
        else:
            raise AssertionError("a duplicate (game_id, seq) was accepted")
    finally:
        await engine.dispose()
