"""Migration 0006: an existing database whose players share names migrates; from then on no two
players share a name's key."""

from __future__ import annotations

import asyncio
import importlib.util
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import column, insert, select, table
from sqlalchemy.exc import IntegrityError

from server.app import create_app
from server.services.names import name_key
from server.settings import Settings
from server.store.db import downgrade, make_engine, migrate
from server.store.models import Player
from tests.api.helpers import problem
from tests.conftest import ClientFactory

MIGRATION = Path(__file__).parents[2] / "migrations" / "versions" / "0006_player_name_keys.py"


def pid(number: int) -> str:
    return str(uuid.UUID(int=number))


# Oldest first: names that 0005 accepted, some of them the same name now.
OLD_PLAYERS = [
    (pid(1), "Ana"),
    (pid(2), "ana"),
    (pid(3), "Bob"),
    (pid(4), "ANA"),
    (pid(5), "Zoe\u0301"),
    (pid(6), "Zo\u00e9"),
    (pid(7), "\u3164"),  # a blank-looking name from before
    (pid(8), "\u2800"),
    (pid(9), "x" * 64),
]


def migration_module() -> Any:
    spec = importlib.util.spec_from_file_location("migration_0006", MIGRATION)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_migration_computes_the_servers_key() -> None:
    keys = migration_module().name_key
    for name in (*(n for _, n in OLD_PLAYERS), "Stra\u00dfe", "\uff21na", "Ana\ufe0f", " a  b "):
        assert keys(name) == name_key(name), name


PLAYERS_0005 = table(
    "players",
    *(
        column(name)
        for name in (
            "id",
            "name",
            "token_hash",
            "created_ms",
            "double_click",
            "placement_help",
            "interactive_rules",
            "auto_placement",
        )
    ),
)


async def old_database(url: str) -> None:
    """The database at 0005 with OLD_PLAYERS in it."""
    await asyncio.to_thread(downgrade, url, "0005")
    engine = make_engine(url)
    try:
        async with engine.begin() as connection:
            for index, (player_id, name) in enumerate(OLD_PLAYERS):
                await connection.execute(
                    insert(PLAYERS_0005).values(  # the players table as of 0005
                        id=player_id,
                        name=name,
                        token_hash=f"hash-{player_id}",
                        created_ms=1_000 + index,
                        double_click=True,
                        placement_help=True,
                        interactive_rules=True,
                        auto_placement=False,
                    )
                )
    finally:
        await engine.dispose()


async def stored(url: str) -> dict[str, tuple[str, str]]:
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(select(Player.id, Player.name, Player.name_key))
            return {row[0]: (row[1], row[2]) for row in rows}
    finally:
        await engine.dispose()


@pytest.fixture
async def migrated(database_url: str) -> str:
    """A database that held OLD_PLAYERS at 0005, migrated to the latest revision."""
    await old_database(database_url)
    await asyncio.to_thread(migrate, database_url)
    return database_url


async def test_a_database_with_duplicate_names_migrates(migrated: str) -> None:
    rows = await stored(migrated)
    # Everyone keeps their name; the oldest of each same name keeps its plain key.
    assert {pid: name for pid, (name, _) in rows.items()} == dict(OLD_PLAYERS)
    keys = {pid: key for pid, (_, key) in rows.items()}
    assert keys == {
        pid(1): "ana",
        pid(2): "ana\x1f2",
        pid(3): "bob",
        pid(4): "ana\x1f3",
        pid(5): name_key("Zo\u00e9"),
        pid(6): name_key("Zo\u00e9") + "\x1f2",
        pid(7): "",
        pid(8): "\x1f2",
        pid(9): "x" * 64,
    }
    # The unique index holds from now on.
    engine = make_engine(migrated)
    try:
        with pytest.raises(IntegrityError):
            async with engine.begin() as connection:
                await connection.execute(
                    insert(Player).values(
                        id=pid(10),
                        name="BOB",
                        name_key="bob",
                        created_ms=2_000,
                        double_click=True,
                        placement_help=True,
                        interactive_rules=True,
                        auto_placement=False,
                    )
                )
    finally:
        await engine.dispose()


async def test_after_the_migration_old_names_are_taken(
    migrated: str, aiohttp_client: ClientFactory
) -> None:
    client = await aiohttp_client(
        create_app(Settings(database_url=migrated, rate_limit=0, migrate=False))
    )
    for name in ("ana", "ZOÉ", "bob"):
        response = await client.post("/api/v1/players", json={"name": name})
        body = await problem(response, 409)
        assert body["type"].endswith("/problems/name-taken"), body
    # The suffixed keys of the later duplicates stand in no new name's way.
    response = await client.post("/api/v1/players", json={"name": "ana 2"})
    assert response.status == 201, await response.text()
    # The old players still read as they were.
    response = await client.get(f"/api/v1/players/{pid(4)}")
    assert (await response.json())["name"] == "ANA"


async def test_downgrade_drops_the_keys_and_upgrade_fills_them_again(migrated: str) -> None:
    await asyncio.to_thread(downgrade, migrated, "0005")
    await asyncio.to_thread(migrate, migrated)
    rows = await stored(migrated)
    assert rows[pid(1)] == ("Ana", "ana") and rows[pid(4)] == ("ANA", "ana\x1f3")
