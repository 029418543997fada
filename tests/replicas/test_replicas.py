"""Reads on a real hot standby (SPEC 2.8 "Read replicas"): the lag-tolerant routes read on it,
seen from the standby itself (its `pg_stat_activity`, and what a paused standby does not know
yet) and in the server's per-target metrics; a game in play is read on the primary; a standby
past the lag limit, or cut off from the primary, is skipped and used again once it catches up;
with the primary stopped the boards still answer and a move is `503`."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from aiohttp.test_utils import TestClient

from server.app import create_app
from server.keys import REPLICAS
from tests.api.helpers import play, vectors
from tests.conftest import Api, ClientFactory
from tests.replicas.conftest import Databases

WON = next(v for v in vectors() if v["status"] == "won" and v["code"].startswith("RU1-C"))
BOARD = f"/api/v1/leaderboards?code={WON['code']}&by=score&period=all"


async def eventually(
    check: Callable[[], Awaitable[bool]], timeout: float = 15, what: str = "it"
) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        await asyncio.sleep(0.1)


async def won_game(api: Api) -> tuple[str, dict[str, str], str]:
    """A new player and a game of theirs played to the win: (player id, auth, game id)."""
    player_id, auth = await api.player()
    game = await api.game(auth, code=WON["code"])
    await play(api, auth, game["id"], WON["actions"])
    return player_id, auth, game["id"]


async def board(client: TestClient[Any, Any]) -> tuple[str | None, list[str]]:
    """Where the board was read, and its games."""
    response = await client.get(BOARD)
    assert response.status == 200, await response.text()
    body = await response.json()
    return response.headers.get("X-Read-From"), [e["game_id"] for e in body["entries"]]


async def skipped_while_writing(
    client: TestClient[Any, Any], auth: dict[str, str], game_id: str, api: Api, what: str
) -> None:
    """Moves on the primary (it goes on writing) until the board is read on the primary: the
    replica is skipped."""
    actions = iter(WON["actions"])

    async def skipped() -> bool:
        card, to = next(actions).split("-")
        await api.act(auth, game_id, {"card": card, "to": to})
        return (await board(client))[0] == "primary"

    await eventually(skipped, timeout=20, what=what)


async def used_again(client: TestClient[Any, Any], what: str) -> None:
    async def on_replica() -> bool:
        return (await board(client))[0] == "replica"

    await eventually(on_replica, what=what)


async def reads(client: TestClient[Any, Any]) -> dict[str, float]:
    """The server's `solitaire_db_reads_total` by target."""
    text = await (await client.get("/metrics")).text()
    found = re.findall(r'^solitaire_db_reads_total\{target="(\w+)"\} (\S+)$', text, re.M)
    return {target: float(value) for target, value in found}


async def standby_sessions(databases: Databases) -> int:
    """The server's sessions on the standby, in this database (`pg_stat_activity`)."""
    connection = await asyncpg.connect(databases.pair.standby.url())
    try:
        found = await connection.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'solitaire-replica'"
            " AND datname = $1",
            databases.name,
        )
    finally:
        await connection.close()
    return int(found)


def read_on_tables(statements: dict[str, int]) -> dict[str, int]:
    """The standby's statements that read the server's tables (not the lag check, not BEGIN)."""
    return {
        " ".join(q.split()): n
        for q, n in statements.items()
        if " from " in " ".join(q.split()).lower() and "pg_" not in q
    }


LAG_TOLERANT = [
    BOARD,
    "/api/v1/players/{player}/stats",
    "/api/v1/players/{player}/games",
    "/api/v1/players/{player}/games/export",
    "/api/v1/games/{game}/replay",
    "/api/v1/live/games",
    "/api/v1/races",
    "/api/v1/leaderboards/races?rule=classic",
]


async def test_boards_stats_listings_replays_and_exports_read_on_the_replica(
    databases: Databases, aiohttp_client: ClientFactory
) -> None:
    # A generous lag limit: the paused standby below stays in use, and shows what it knows.
    client = await aiohttp_client(create_app(databases.settings(replica_max_lag_s=120)))
    api = Api(client)
    player_id, _, game_id = await won_game(api)

    async def on_board() -> bool:
        return game_id in (await board(client))[1]

    await eventually(on_board, what="the won game reaching the standby's board")
    before = await reads(client)
    ran = read_on_tables(await databases.pair.standby.statements(databases.name))
    for path in LAG_TOLERANT:
        url = path.format(player=player_id, game=game_id)
        response = await client.get(url)
        assert response.status == 200, (url, await response.text())
        await response.read()
        assert response.headers.get("X-Read-From") == "replica", url
    after = await reads(client)
    assert after.get("replica", 0) - before.get("replica", 0) >= len(LAG_TOLERANT)
    assert after.get("primary", 0) == before.get("primary", 0)
    # Seen from the standby: the server has sessions there, and they ran the boards', the
    # statistics', the listings' and the replays' statements (pg_stat_statements, counted on
    # the standby itself).
    assert await standby_sessions(databases) >= 1
    now = read_on_tables(await databases.pair.standby.statements(databases.name))
    more = {q: n - ran.get(q, 0) for q, n in now.items() if n > ran.get(q, 0)}
    assert sum(more.values()) >= len(LAG_TOLERANT), more
    text = " ".join(more).lower()
    for table in ("games", "moves", "player_stats", "races", "ratings"):
        assert f"from {table}" in text or f"join {table}" in text, (table, text[:2000])

    # A paused standby knows nothing of a game won since: the board read on it does not show
    # it, while the game itself (read on the primary) is won. Resumed, the board shows it.
    await databases.pair.standby.pause()
    try:
        _, auth, later = await won_game(api)
        response = await client.get(f"/api/v1/games/{later}", headers=auth)
        assert (await response.json())["status"] == "won"
        assert "X-Read-From" not in response.headers
        where, games = await board(client)
        assert where == "replica" and later not in games and game_id in games
    finally:
        await databases.pair.standby.resume()

    async def later_on_board() -> bool:
        return later in (await board(client))[1]

    await eventually(later_on_board, what="the later game reaching the resumed standby")


async def test_a_game_in_play_reads_on_the_primary_even_with_the_replica_paused(
    databases: Databases, client: TestClient[Any, Any], api: Api
) -> None:
    _, auth = await api.player()
    game = await api.game(auth, code=WON["code"])
    game_id = game["id"]
    await databases.pair.standby.pause()
    try:
        for n, text in enumerate(WON["actions"][:12], start=1):
            card, to = text.split("-")
            moved = await api.act(auth, game_id, {"card": card, "to": to})
            assert moved["game"]["version"] == n
            response = await client.get(f"/api/v1/games/{game_id}", headers=auth)
            assert (await response.json())["version"] == n
            assert "X-Read-From" not in response.headers
            log = await (await client.get(f"/api/v1/games/{game_id}/moves", headers=auth)).json()
            assert len(log["moves"]) == n
            legal = await client.get(f"/api/v1/games/{game_id}/legal", headers=auth)
            assert legal.status == 200 and "X-Read-From" not in legal.headers
        # The replay of a game in play is read where it is played.
        replay = await client.get(f"/api/v1/games/{game_id}/replay", headers=auth)
        assert replay.status == 200, await replay.text()
        assert replay.headers.get("X-Read-From") == "primary"
        assert len((await replay.json())["actions"]) == 12
        # A game and a player made while the standby is paused are not on it yet: their
        # lag-tolerant reads are asked again on the primary rather than answered 404.
        fresh = await api.game(auth, code=WON["code"])
        abandoned = await client.post(f"/api/v1/games/{fresh['id']}/abandon", headers=auth)
        assert abandoned.status == 200
        replay = await client.get(f"/api/v1/games/{fresh['id']}/replay")
        assert replay.status == 200, await replay.text()
        assert replay.headers.get("X-Read-From") == "primary"
        newcomer, _ = await api.player()
        stats = await client.get(f"/api/v1/players/{newcomer}/stats")
        assert stats.status == 200, await stats.text()
        assert stats.headers.get("X-Read-From") == "primary"
    finally:
        await databases.pair.standby.resume()


async def test_a_replica_past_the_lag_limit_is_skipped_until_it_catches_up(
    databases: Databases, client: TestClient[Any, Any], api: Api
) -> None:
    replicas = client.app[REPLICAS]
    assert (await board(client))[0] == "replica"
    _, auth = await api.player()
    game_id = (await api.game(auth, code=WON["code"]))["id"]
    await databases.pair.standby.pause()
    try:
        await skipped_while_writing(client, auth, game_id, api, "the paused replica being skipped")
        lag = replicas.replicas[0].lag_s
        assert lag is None or lag > 1.0
        metrics = await (await client.get("/metrics")).text()
        gauge = re.search(r'^solitaire_replica_lag_seconds\{replica="0"\} (\S+)$', metrics, re.M)
        assert gauge is not None and float(gauge[1]) > 1.0
    finally:
        await databases.pair.standby.resume()

    await used_again(client, "the resumed replica being used again")


async def test_a_replica_cut_off_from_the_primary_is_skipped_until_it_streams_again(
    databases: Databases, client: TestClient[Any, Any], api: Api
) -> None:
    """A standby whose WAL receiver stopped has replayed all it received: by its own figures
    it is caught up. The primary's marks of its WAL position tell that it is behind."""
    replicas = client.app[REPLICAS]
    assert (await board(client))[0] == "replica"
    _, auth = await api.player()
    game_id = (await api.game(auth, code=WON["code"]))["id"]
    conninfo = await databases.pair.standby.cut_off()
    try:
        await skipped_while_writing(client, auth, game_id, api, "the cut-off replica being skipped")
        lag = replicas.replicas[0].lag_s
        assert lag is not None and lag > 1.0
        standby = await asyncpg.connect(databases.standby_url)
        try:  # the standby itself sees nothing wrong: it has replayed all it received
            caught_up = await standby.fetchval(
                "SELECT pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()"
            )
        finally:
            await standby.close()
        assert caught_up is True
    finally:
        await databases.pair.standby.reconnect(conninfo)

    await used_again(client, "the reconnected replica being used again")


async def test_with_the_primary_stopped_boards_answer_and_moves_are_503(
    databases: Databases, client: TestClient[Any, Any], api: Api
) -> None:
    _, auth, game_id = await won_game(api)
    _, auth = await api.player()
    playing = (await api.game(auth, code=WON["code"]))["id"]

    async def on_board() -> bool:
        return game_id in (await board(client))[1]

    await eventually(on_board, what="the won game reaching the standby")
    databases.pair.primary.stop_immediate()
    try:
        for _ in range(3):
            response = await client.get("/api/v1/leaderboards")
            assert response.status == 200, await response.text()
            assert response.headers.get("X-Read-From") == "replica"
        where, games = await board(client)
        assert where == "replica" and game_id in games
        card, to = WON["actions"][0].split("-")
        moved = await client.post(
            f"/api/v1/games/{playing}/moves",
            json={"card": card, "to": to},
            headers={**auth, "Idempotency-Key": "k-1"},
        )
        assert moved.status == 503, await moved.text()
        assert moved.headers.get("Retry-After")
    finally:
        databases.pair.primary.start()


async def test_a_replica_that_goes_away_is_skipped_and_its_read_made_on_the_primary(
    databases: Databases, client: TestClient[Any, Any], api: Api
) -> None:
    _, _, game_id = await won_game(api)

    async def on_board() -> bool:
        return game_id in (await board(client))[1]

    await eventually(on_board, what="the won game reaching the standby")
    standby = databases.pair.standby
    standby.stop()  # at once: the pooled connections to it die under the next read
    try:
        where, games = await board(client)
        assert where == "primary" and game_id in games
        assert not client.app[REPLICAS].replicas[0].healthy
        for _ in range(3):
            assert (await board(client))[0] == "primary"
    finally:
        standby.start()

    async def used_again() -> bool:
        return (await board(client))[0] == "replica"

    await eventually(used_again, what="the restarted replica being used again")
