"""Live play and watching across real server processes (SPEC 2.1, 2.6, 2.8; README
"Deployment"): watchers on one process hear of actions made on another, SIGTERM closes the
sockets with 1001 and loses no answered action, and `--workers 2` serves and stops as one.

Every test runs on both databases; none skips. Several processes on one database need
PostgreSQL, so on SQLite the multi-process tests check instead that the server refuses to start
several workers, with a clear message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import WSMsgType

from server.engine import DealCode, Game, parse_action
from tests.names import unique_name
from tests.process import ROOT, ServerProcess, free_port, spawned_children

CODE = "RU1-C-AAAAAFN"
LIVE = "/api/v1/live"
SUBPROTOCOL = "solitaire.v1"
DELIVERY_S = 1.0


def is_postgresql(url: str) -> bool:
    return url.startswith("postgresql")


def body_of(text: str) -> dict[str, Any]:
    if text == "undo":
        return {"action": "undo"}
    card, to = text.split("-")
    return {"card": card, "to": to}


def vector_actions() -> list[str]:
    games = json.loads((ROOT / "tests" / "data" / "games.json").read_text())["games"]
    for game in games:
        if game["code"] == CODE and game.get("note") == "undo":
            actions: list[str] = game["actions"]
            return actions
    raise AssertionError("no classic undo game in games.json")


async def ready_all(*servers: ServerProcess) -> None:
    await asyncio.gather(*(server.ready() for server in servers))


async def new_game(session: aiohttp.ClientSession, base: str) -> tuple[str, dict[str, str], str]:
    """A new player and a new game of CODE: (token, auth header, game id)."""
    name = {"name": unique_name("live")}
    async with session.post(base + "/api/v1/players", json=name) as response:
        assert response.status == 201, await response.text()
        token = (await response.json())["token"]
    auth = {"Authorization": f"Bearer {token}"}
    async with session.post(base + "/api/v1/games", json={"code": CODE}, headers=auth) as response:
        assert response.status == 201, await response.text()
        game_id = (await response.json())["id"]
    return token, auth, game_id


async def receive(ws: aiohttp.ClientWebSocketResponse, timeout: float = 5) -> dict[str, Any]:
    msg = await ws.receive(timeout)
    assert msg.type == WSMsgType.TEXT, (msg.type, msg.data, msg.extra)
    body: dict[str, Any] = json.loads(msg.data)
    return body


async def watch(ws: aiohttp.ClientWebSocketResponse, game_id: str) -> int:
    await ws.send_json({"type": "watch", "id": "w", "game_id": game_id})
    watching = await receive(ws)
    assert watching["type"] == "watching", watching
    assert watching["id"] == "w"
    version: int = watching["version"]
    return version


async def move_log(session: aiohttp.ClientSession, base: str, game_id: str) -> list[str]:
    async with session.get(f"{base}/api/v1/games/{game_id}/moves") as response:
        assert response.status == 200, await response.text()
        return [m["move"] for m in (await response.json())["moves"]]


async def verify_replay(session: aiohttp.ClientSession, base: str, game_id: str) -> None:
    async with session.get(f"{base}/api/v1/games/{game_id}/replay") as response:
        assert response.status == 200, await response.text()
        replay = await response.json()
    async with session.post(base + "/api/v1/replays/verify", json=replay) as response:
        assert response.status == 200, await response.text()
        verdict = await response.json()
    assert verdict["valid"] is True, verdict
    assert (verdict["score"], verdict["moves"]) == (
        replay["result"]["score"],
        replay["result"]["moves"],
    ), (verdict, replay["result"])


def refuses_several_workers_on_sqlite(tmp_path: Path, args: list[str], env: dict[str, str]) -> None:
    """`python -m server` with several workers on SQLite exits non-zero at once, saying why,
    without creating the database or serving."""
    port = free_port()
    base_env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "WORKERS")}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "server", "--port", str(port), *args],
        cwd=tmp_path,
        env={**base_env, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0, (done.stdout, done.stderr)
    assert time.monotonic() - started < 15
    message = done.stdout + done.stderr
    assert "PostgreSQL" in message and "workers" in message, message
    assert "Traceback" not in message, message
    assert not (tmp_path / "live.db").exists()


# ---------------------------------------------------------------- two processes, one database


async def test_watchers_on_another_process_hear_of_every_action(
    database_url: str, tmp_path: Path
) -> None:
    if not is_postgresql(database_url):
        refuses_several_workers_on_sqlite(
            tmp_path, ["--workers", "2", "--database-url", "sqlite:///live.db"], {}
        )
        return
    a, b = ServerProcess(database_url), ServerProcess(database_url)
    try:
        await ready_all(a, b)
        actions = vector_actions()[:24]  # 12 over HTTP, then 12 over the socket (an undo among)
        assert "undo" in actions[12:]
        async with aiohttp.ClientSession() as session:
            token, auth, game_id = await new_game(session, a.base)
            async with (
                session.ws_connect(b.base + LIVE, protocols=(SUBPROTOCOL,)) as watcher,
                session.ws_connect(
                    a.base + LIVE, headers={"Authorization": f"Bearer {token}"}
                ) as player,
            ):
                assert watcher.protocol == SUBPROTOCOL
                assert await watch(watcher, game_id) == 0
                for index, text in enumerate(actions):
                    version = index + 1
                    started = time.monotonic()
                    if index < 12:
                        async with session.post(
                            f"{a.base}/api/v1/games/{game_id}/moves",
                            json=body_of(text),
                            headers=auth,
                        ) as response:
                            assert response.status == 200, await response.text()
                    else:
                        await player.send_json(
                            {
                                "type": "act",
                                "id": index,
                                "game_id": game_id,
                                "action": body_of(text),
                            }
                        )
                        result = await receive(player)
                        assert (result["type"], result["id"]) == ("result", index), result
                        assert (result["version"], result["move"]) == (version, text)
                    event = await receive(watcher, DELIVERY_S)
                    delay = time.monotonic() - started
                    assert event["type"] == "event", event
                    assert (event["game_id"], event["version"], event["move"]) == (
                        game_id,
                        version,
                        text,
                    )
                    assert event["game"]["version"] == version
                    assert delay < DELIVERY_S, (index, text, delay)

                # An abandon on A reaches B too.
                async with session.post(
                    f"{a.base}/api/v1/games/{game_id}/abandon", headers=auth
                ) as response:
                    assert response.status == 200, await response.text()
                event = await receive(watcher, DELIVERY_S)
                assert (event["version"], event["move"]) == (len(actions) + 1, None)
                assert event["game"]["status"] == "abandoned"
            assert await move_log(session, b.base, game_id) == actions
    finally:
        a.close()
        b.close()
    assert a.process.returncode is not None and b.process.returncode is not None


# ---------------------------------------------------------------- graceful shutdown


async def play_over_socket(
    ws: aiohttp.ClientWebSocketResponse, game_id: str, answered: list[str], closes: dict[str, Any]
) -> None:
    """Random legal moves and undos, one at a time, each sent after the previous answer, until
    the server closes the socket."""
    game = Game.deal(DealCode.parse(CODE))
    rng = random.Random(7)
    while True:
        if game.history and rng.random() < 0.25:
            text = "undo"
        else:
            moves = game.legal_moves()
            assert moves, "the random game got stuck"
            text = str(rng.choice(moves))
        mid = len(answered)
        try:
            await ws.send_json(
                {"type": "act", "id": mid, "game_id": game_id, "action": body_of(text)}
            )
        except (ConnectionError, RuntimeError):
            closes["player_send_failed"] = True
        msg = await ws.receive(15)
        if msg.type != WSMsgType.TEXT:
            closes["player"] = (msg.type, msg.data)
            closes["player_code"] = ws.close_code
            return
        result = json.loads(msg.data)
        assert (result["type"], result["id"], result["move"]) == ("result", mid, text), result
        assert result["version"] == len(answered) + 1
        game.play(parse_action(text))
        answered.append(text)


async def collect_events(
    ws: aiohttp.ClientWebSocketResponse, events: list[dict[str, Any]], closes: dict[str, Any]
) -> None:
    while True:
        msg = await ws.receive(15)
        if msg.type != WSMsgType.TEXT:
            closes["watcher"] = (msg.type, msg.data)
            closes["watcher_code"] = ws.close_code
            return
        events.append(json.loads(msg.data))


async def test_sigterm_closes_sockets_with_1001_and_loses_no_answered_action(
    database_url: str,
) -> None:
    server = ServerProcess(database_url)
    answered: list[str] = []
    events: list[dict[str, Any]] = []
    closes: dict[str, Any] = {}
    try:
        await server.ready()
        async with aiohttp.ClientSession() as session:
            token, _, game_id = await new_game(session, server.base)
            watcher = await session.ws_connect(server.base + LIVE)
            player = await session.ws_connect(
                server.base + LIVE, headers={"Authorization": f"Bearer {token}"}
            )
            try:
                assert await watch(watcher, game_id) == 0
                tasks = [
                    asyncio.create_task(play_over_socket(player, game_id, answered, closes)),
                    asyncio.create_task(collect_events(watcher, events, closes)),
                ]
                deadline = time.monotonic() + 20
                while len(answered) < 20 and time.monotonic() < deadline:
                    await asyncio.sleep(0.005)
                assert len(answered) >= 20, "the server did not answer"
                status = await asyncio.to_thread(server.terminate, 20)
                await asyncio.wait_for(asyncio.gather(*tasks), 10)
            finally:
                await player.close()
                await watcher.close()
        assert status == 0, server.output()
    finally:
        server.close()

    assert closes["player"] == (WSMsgType.CLOSE, 1001), closes
    assert closes["watcher"] == (WSMsgType.CLOSE, 1001), closes
    # The watcher heard of the actions in order, and of nothing that was not written.
    assert [e["version"] for e in events] == list(range(1, len(events) + 1))
    assert all(e["type"] == "event" for e in events), events
    watched = [e["move"] for e in events]

    again = ServerProcess(database_url)
    try:
        await again.ready()
        async with aiohttp.ClientSession() as session:
            log = await move_log(session, again.base, game_id)
            await verify_replay(session, again.base, game_id)
    finally:
        again.close()
    # Every answered action is in the log, in order; the action in flight at SIGTERM is
    # answered before the close (README: 1001 "after the action in flight is answered").
    assert log[: len(answered)] == answered
    assert log == answered, (len(log), len(answered), log[len(answered) :])
    assert watched == log[: len(watched)]


# ---------------------------------------------------------------- --workers 2


def gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


async def test_workers_serve_on_one_port_and_stop_on_sigterm(
    database_url: str, tmp_path: Path
) -> None:
    if not is_postgresql(database_url):
        # The same refusal through the environment (WORKERS, DATABASE_URL).
        refuses_several_workers_on_sqlite(
            tmp_path, [], {"WORKERS": "2", "DATABASE_URL": "sqlite:///live.db"}
        )
        return
    server = ServerProcess(database_url, ROOT, "--workers", "2")
    try:
        await server.ready()
        deadline = time.monotonic() + 10
        while len(workers := spawned_children(server.process.pid)) < 2:
            assert time.monotonic() < deadline, workers
            await asyncio.sleep(0.1)
        assert len(workers) == 2

        # Fresh connections each time: the kernel spreads them over the workers, and a watcher
        # hears of every move, whichever worker took it.
        session = aiohttp.ClientSession()
        _, auth, game_id = await new_game(session, server.base)
        watcher = await session.ws_connect(server.base + LIVE)
        try:
            assert await watch(watcher, game_id) == 0
            actions = vector_actions()[:12]
            for index, text in enumerate(actions):
                connector = aiohttp.TCPConnector(force_close=True)
                async with aiohttp.ClientSession(connector=connector) as fresh:
                    async with fresh.get(server.base + "/readyz") as response:
                        assert response.status == 200
                    async with fresh.post(
                        f"{server.base}/api/v1/games/{game_id}/moves",
                        json=body_of(text),
                        headers=auth,
                    ) as response:
                        assert response.status == 200, await response.text()
                event = await receive(watcher, DELIVERY_S)
                assert (event["version"], event["move"]) == (index + 1, text)

            started = time.monotonic()
            server.process.send_signal(signal.SIGTERM)
            msg = await watcher.receive(15)
            assert (msg.type, msg.data) == (WSMsgType.CLOSE, 1001), msg
            status = await asyncio.to_thread(server.process.wait, 15)
            assert time.monotonic() - started < 15
        finally:
            await watcher.close()
            await session.close()
        assert status == 0, server.output()
        deadline = time.monotonic() + 5
        while not all(gone(pid) for pid in workers):
            assert time.monotonic() < deadline, [pid for pid in workers if not gone(pid)]
            await asyncio.sleep(0.05)
        # Nothing serves on the port any more.
        async with aiohttp.ClientSession() as session:
            try:
                async with session.get(server.base + "/healthz") as response:
                    raise AssertionError(f"still served: {response.status}")
            except aiohttp.ClientConnectionError:
                pass
    finally:
        leftovers = spawned_children(server.process.pid) if server.process.poll() is None else []
        server.close()
        for pid in leftovers:  # only if the test failed half-way: the workers it started
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
