"""The server as a real process: start on the embedded default, crash safety, graceful stop."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from alembic.script import ScriptDirectory

from server.engine import DealCode, Game, parse_action
from server.settings import SettingsError, from_args
from tests.process import ROOT, ServerProcess, start_game


def test_defaults_are_the_embedded_database_on_port_8080() -> None:
    settings = from_args([], environ={})
    assert (settings.host, settings.port) == ("127.0.0.1", 8080)
    assert settings.database_url == "sqlite:///solitaire.db"
    assert settings.async_database_url == "sqlite+aiosqlite:///solitaire.db"
    assert from_args([], environ={"DATABASE_URL": "postgresql://u:p@h:5/d"}).async_database_url == (
        "postgresql+asyncpg://u:p@h:5/d"
    )
    assert from_args(["--database-url", "sqlite:////abs/x.db"], environ={}).async_database_url == (
        "sqlite+aiosqlite:////abs/x.db"
    )
    assert from_args([], environ={"RATE_LIMIT": "0"}).rate_limit == 0


def test_settings_of_issue_14_are_read_and_checked() -> None:
    settings = from_args(
        [],
        environ={
            "RATE_LIMIT_STORAGE": "redis://127.0.0.1:6379/3",
            "BROKER_URL": "redis://127.0.0.1:6379/0",
            "LOG_FORMAT": "JSON",
        },
    )
    assert (settings.rate_limit_storage, settings.broker_url, settings.log_format) == (
        "redis://127.0.0.1:6379/3",
        "redis://127.0.0.1:6379/0",
        "json",
    )
    defaults = from_args([], environ={})
    assert (defaults.rate_limit_storage, defaults.broker_url, defaults.log_format) == (
        "memory://",
        None,
        "text",
    )
    assert from_args(["--signup-limit", "600"], environ={}).signup_limit == 600
    assert from_args([], environ={"SIGNUP_LIMIT": "7"}).signup_limit == 7
    assert defaults.signup_limit == 20
    for name, value in (
        ("SIGNUP_LIMIT", "0"),
        ("RATE_LIMIT_STORAGE", "memcached://x"),
        ("BROKER_URL", "amqp://x"),
        ("LOG_FORMAT", "xml"),
    ):
        with pytest.raises(SettingsError, match=name):
            from_args([], environ={name: value})


async def test_python_m_server_creates_and_migrates_solitaire_db(tmp_path: Path) -> None:
    server = ServerProcess(None, tmp_path)
    try:
        await server.ready()
        assert (tmp_path / "solitaire.db").exists()
        async with aiohttp.ClientSession() as session:
            async with session.get(server.base + "/healthz") as response:
                assert response.status == 200
            async with session.post(server.base + "/api/v1/players", json={"name": "a"}) as r:
                assert r.status == 201
    finally:
        server.close()


async def test_servers_started_together_on_a_new_sqlite_file_all_come_up(tmp_path: Path) -> None:
    """Four servers started at the same moment on one new SQLite file migrate one at a time
    (`store.db.migration_lock`) and all serve: none dies of "database is locked" or of another's
    half-made schema, and the database ends at the newest revision, its tables made once."""
    database = tmp_path / "shared.db"
    servers = [ServerProcess(f"sqlite:///{database}") for _ in range(4)]
    try:
        await asyncio.gather(*(server.ready() for server in servers))
        async with aiohttp.ClientSession() as session:
            for n, server in enumerate(servers):
                async with session.post(
                    server.base + "/api/v1/players", json={"name": f"together-{n}"}
                ) as response:
                    assert response.status == 201, await response.text()
        head = ScriptDirectory(str(ROOT / "migrations")).get_current_head()
        with sqlite3.connect(database) as connection:
            versions = connection.execute("SELECT version_num FROM alembic_version").fetchall()
            players = connection.execute("SELECT count(*) FROM players").fetchone()
        connection.close()
        assert versions == [(head,)]
        assert players == (4,)
    finally:
        for server in servers:
            server.close()


async def play_until_stopped(
    base: str, acknowledged: list[str], game_id: str, auth: dict[str, str], code: str
) -> None:
    """Plays random legal moves (and undos) until the server goes away."""
    game = Game.deal(DealCode.parse(code))
    rng = random.Random(5)
    async with aiohttp.ClientSession() as session:
        while True:
            if game.history and rng.random() < 0.2:
                body: dict[str, Any] = {"action": "undo"}
                text = "undo"
            else:
                moves = game.legal_moves()
                if not moves:
                    return
                move = rng.choice(moves)
                text = str(move)
                card, to = text.split("-")
                body = {"card": card, "to": to}
            try:
                async with session.post(
                    f"{base}/api/v1/games/{game_id}/moves", json=body, headers=auth
                ) as response:
                    if response.status != 200:
                        raise AssertionError(await response.text())
                    await response.read()
            except (aiohttp.ClientError, ConnectionError):
                return
            game.play(parse_action(text))
            acknowledged.append(text)


async def check_log(base: str, game_id: str, acknowledged: list[str]) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{base}/api/v1/games/{game_id}/moves") as response:
            log = [m["move"] for m in (await response.json())["moves"]]
        async with session.get(f"{base}/api/v1/games/{game_id}/replay") as response:
            replay = await response.json()
        async with session.post(base + "/api/v1/replays/verify", json=replay) as response:
            verdict = await response.json()
    # Every acknowledged action is there, in order; at most the one in flight is extra.
    assert log[: len(acknowledged)] == acknowledged
    assert len(log) - len(acknowledged) <= 1
    assert verdict["valid"] is True, verdict


async def stop_mid_stream(
    database_url: str, after: int, stop: Callable[[ServerProcess], Awaitable[None]]
) -> tuple[str, list[str]]:
    """Starts a server, plays until `after` actions are acknowledged, stops it with `stop`,
    and returns the game and every acknowledged action."""
    server = ServerProcess(database_url)
    acknowledged: list[str] = []
    try:
        await server.ready()
        game_id, auth, code = await start_game(server.base)
        player = asyncio.create_task(
            play_until_stopped(server.base, acknowledged, game_id, auth, code)
        )
        while len(acknowledged) < after:
            await asyncio.sleep(0.01)
        await stop(server)
        await asyncio.wait_for(player, 10)
    finally:
        server.close()
    assert len(acknowledged) >= after
    return game_id, acknowledged


async def restart_and_check(database_url: str, game_id: str, acknowledged: list[str]) -> None:
    again = ServerProcess(database_url)
    try:
        await again.ready()
        await check_log(again.base, game_id, acknowledged)
    finally:
        again.close()


async def test_sigkill_during_a_stream_of_moves_loses_nothing_acknowledged(
    database_url: str,
) -> None:
    async def kill(server: ServerProcess) -> None:
        server.kill()

    game_id, acknowledged = await stop_mid_stream(database_url, 15, kill)
    await restart_and_check(database_url, game_id, acknowledged)


async def test_sigterm_finishes_in_flight_requests_and_exits_cleanly(database_url: str) -> None:
    async def terminate(server: ServerProcess) -> None:
        status = await asyncio.to_thread(server.terminate)
        assert status == 0, server.output()

    game_id, acknowledged = await stop_mid_stream(database_url, 10, terminate)
    await restart_and_check(database_url, game_id, acknowledged)
