"""The Redis broker across real server processes (issue 14 item 8): with
`BROKER_URL=redis://...`, two `python -m server` processes on one database — PostgreSQL, and one
SQLite file too, which shares its events only this way — pass game events and race standings to
each other, and a process subscribes only to what its own sockets watch (asserted on Redis's own
accounts, `CLIENT LIST` and `PUBSUB NUMSUB`, not on timing). A Redis that goes away and comes
back costs the watchers only what was published while it was gone.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from redis.asyncio import Redis

from tests.process import ServerProcess, free_port
from tests.processes.test_live_processes import body_of, new_game, receive, vector_actions, watch
from tests.processes.test_race_processes import Client, Db, entry_of, next_race, race_with_line
from tests.redis_support import (
    eventually,
    game_channel,
    numsub,
    publishing,
    race_channel,
    redis,
    subscriptions,
)

__all__ = ["redis"]  # the fixture

LIVE = "/api/v1/live"
SUBPROTOCOL = "solitaire.v1"
DELIVERY_S = 2.0
COUNTDOWN_S = 5.0
SETTLE_S = 3.0


@pytest.fixture
def servers(
    database_url: str, redis: tuple[str, Any], monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two server processes on one database, with Redis as their broker."""
    monkeypatch.setenv("BROKER_URL", redis[0])
    a, b = ServerProcess(database_url), ServerProcess(database_url)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


async def subscribed(admin: Any, server: ServerProcess, count: int) -> None:
    async def check() -> bool:
        return await subscriptions(admin, server.process.pid) == count

    await eventually(check, f"process {server.process.pid} subscribes to {count} channels")


async def act(
    session: aiohttp.ClientSession, base: str, auth: dict[str, str], game_id: str, text: str
) -> None:
    url = f"{base}/api/v1/games/{game_id}/moves"
    async with session.post(url, json=body_of(text), headers=auth) as response:
        assert response.status == 200, await response.text()


async def test_a_watcher_hears_moves_made_on_another_process_and_no_one_else_subscribes(
    servers: tuple[ServerProcess, ServerProcess], redis: tuple[str, Any]
) -> None:
    a, b = servers
    _, admin = redis
    await asyncio.gather(a.ready(), b.ready())
    actions = vector_actions()[:16]  # 8 over HTTP, then 8 over B's socket (an undo among)
    assert "undo" in actions
    async with aiohttp.ClientSession() as session:
        token, auth, game_id = await new_game(session, b.base)
        _, other_auth, other_game = await new_game(session, a.base)
        # Neither process watches anything: neither subscribes to anything.
        await subscribed(admin, a, 0)
        await subscribed(admin, b, 0)
        async with (
            session.ws_connect(a.base + LIVE, protocols=(SUBPROTOCOL,)) as watcher,
            session.ws_connect(
                b.base + LIVE, headers={"Authorization": f"Bearer {token}"}
            ) as player,
        ):
            assert await watch(watcher, game_id) == 0
            # A subscribes to the one game it watches; B, which acts, watches nothing.
            await subscribed(admin, a, 1)
            assert await subscriptions(admin, b.process.pid) == 0
            assert await numsub(admin, game_channel(game_id), game_channel(other_game)) == [1, 0]
            for index, text in enumerate(actions):
                version = index + 1
                if index < 8:
                    await act(session, b.base, auth, game_id, text)
                else:
                    message = {"type": "act", "id": index, "game_id": game_id}
                    await player.send_json(message | {"action": body_of(text)})
                    result = await receive(player)
                    assert (result["type"], result["version"]) == ("result", version), result
                # A game nobody watches, played on A: nobody subscribes to it.
                if index < 3:
                    await act(session, a.base, other_auth, other_game, ["3D-t3", "undo"][index % 2])
                event = await receive(watcher, DELIVERY_S)
                assert event["type"] == "event", event
                assert (event["game_id"], event["version"], event["move"]) == (
                    game_id,
                    version,
                    text,
                )
                assert event["game"]["version"] == version
            assert await numsub(admin, game_channel(other_game)) == [0]
            assert await subscriptions(admin, b.process.pid) == 0

            # A's last watcher of the game leaves: A unsubscribes.
            await watcher.send_json({"type": "unwatch", "id": "u", "game_id": game_id})
            assert (await receive(watcher))["type"] == "unwatched"
            await subscribed(admin, a, 0)
            assert await numsub(admin, game_channel(game_id)) == [0]


async def test_race_standings_reach_a_spectator_on_another_process(
    servers: tuple[ServerProcess, ServerProcess], redis: tuple[str, Any], database_url: str
) -> None:
    a, b = servers
    _, admin = redis
    db = Db(database_url)
    try:
        await asyncio.gather(a.ready(), b.ready())
        async with aiohttp.ClientSession() as session:
            client = Client(session)
            ana, ana_auth = await client.player(a.base, "ana")
            ben, ben_auth = await client.player(a.base, "ben")
            race, code, line = await race_with_line(client, db, a.base, ana_auth, 1, 2, [ben_auth])
            race_id = race["id"]
            async with session.ws_connect(b.base + LIVE, protocols=(SUBPROTOCOL,)) as ws:
                await ws.send_json({"type": "watch_race", "id": "s", "race_id": race_id})
                watching = json.loads((await ws.receive(5)).data)
                assert watching["type"] == "watching_race", watching
                await subscribed(admin, b, 1)  # the race; it has no games yet
                assert await numsub(admin, race_channel(race_id)) == [1]

                joined = await client.call(
                    "POST", f"{a.base}/api/v1/races/{race_id}/join", ben_auth
                )
                assert joined["status"] == "starting", joined
                games = joined["games"]
                await next_race(ws, race_id, code, lambda r: r["status"] == "starting", DELIVERY_S)
                # B follows the race's games to keep the standings; A, which plays them,
                # subscribes to nothing.
                await subscribed(admin, b, 3)
                channels = [game_channel(games[ana]), game_channel(games[ben])]
                assert await numsub(admin, *channels) == [1, 1]
                assert await subscriptions(admin, a.process.pid) == 0

                await next_race(
                    ws, race_id, code, lambda r: r["status"] == "running", COUNTDOWN_S + SETTLE_S
                )
                for player, auth in ((ana, ana_auth), (ben, ben_auth)):
                    await act(session, a.base, auth, games[player], line[0])
                    seen = await next_race(
                        ws,
                        race_id,
                        code,
                        lambda r, p=player: entry_of(r, p)["moves"] == 1,
                        DELIVERY_S,
                    )
                    assert entry_of(seen, player)["status"] == "active", seen
                for player, auth in ((ben, ben_auth), (ana, ana_auth)):
                    await client.call(
                        "POST", f"{a.base}/api/v1/games/{games[player]}/abandon", auth
                    )
                finished = await next_race(
                    ws, race_id, code, lambda r: r["status"] == "finished", DELIVERY_S
                )
                assert finished["code"] == code
                assert [s["place"] for s in finished["standings"]] == [1, 2], finished
            await subscribed(admin, b, 0)  # the spectator left: B follows nothing any more
    finally:
        await db.close()


# ---------------------------------------------------------------- Redis goes away


class RedisServer:
    """A `redis-server` of this test's own on a free port, to stop and start again."""

    def __init__(self, directory: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed (.ci/run installs it)")
        self.binary = binary
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--save", "", "--appendonly", "no"],
            cwd=self.directory,
            stdout=subprocess.DEVNULL,
        )
        client: Any = Redis.from_url(self.url)
        try:

            async def answers() -> bool:
                try:
                    return bool(await client.ping())
                except OSError:
                    return False
                except Exception:
                    return False

            await eventually(answers, "redis-server answers")
        finally:
            await client.aclose()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


async def test_watchers_hear_moves_again_once_redis_is_back(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = RedisServer(tmp_path)
    await server.start()
    monkeypatch.setenv("BROKER_URL", server.url)
    a, b = ServerProcess(database_url), ServerProcess(database_url)
    admin: Any = Redis.from_url(server.url)
    try:
        await asyncio.gather(a.ready(), b.ready())
        async with aiohttp.ClientSession() as session:
            _, auth, game_id = await new_game(session, b.base)
            async with session.ws_connect(a.base + LIVE, protocols=(SUBPROTOCOL,)) as watcher:
                assert await watch(watcher, game_id) == 0
                await subscribed(admin, a, 1)
                await act(session, b.base, auth, game_id, "3D-t3")
                assert (await receive(watcher, DELIVERY_S))["version"] == 1

                server.stop()
                # Play goes on without Redis: the action is answered.
                await act(session, b.base, auth, game_id, "undo")
                await server.start()
                await admin.aclose()
                admin = Redis.from_url(server.url)
                await subscribed(admin, a, 1)  # A subscribed again by itself
                pid = b.process.pid
                # And B publishes again by itself: its publisher, like A's subscriber, tries
                # every half second, so either can be back first (an event B sent before its
                # publisher was back would be lost too, as the class docstring says).
                await eventually(lambda: publishing(admin, pid), f"process {pid} publishes again")

                await act(session, b.base, auth, game_id, "AC-f")
                # The undo was lost to A while Redis was away (or was sent once it came back,
                # when B's retry outlasted the outage): A's watcher hears version 3 for sure,
                # and sees the gap in the versions when the undo was lost.
                heard = [await receive(watcher, DELIVERY_S)]
                while heard[-1]["version"] < 3:
                    heard.append(await receive(watcher, DELIVERY_S))
                assert [(e["version"], e["move"]) for e in heard] in (
                    [(3, "AC-f")],
                    [(2, "undo"), (3, "AC-f")],
                ), heard
                # A client that saw a gap watches again with `since`: the missed change comes.
                await watcher.send_json(
                    {"type": "watch", "id": "r", "game_id": game_id, "since": 1}
                )
                missed = await receive(watcher)
                assert (missed["version"], missed["move"], missed.get("missed")) == (
                    2,
                    "undo",
                    True,
                ), missed
        a.terminate()
        log = a.output()
        assert log.count("event subscriber:") >= 1, log
        assert "Traceback" not in log, log
    finally:
        await admin.aclose()
        a.close()
        b.close()
        server.stop()
