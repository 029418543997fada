"""Races across real server processes (SPEC 2.6.1; issue 13): the standings reach a spectator
watching from another process, and a due race is ended exactly once however many processes
tick.

Both tests run on both databases; neither skips. Watching across processes needs PostgreSQL's
broker (on SQLite each process only hears its own changes, and the server runs several workers
on PostgreSQL only), so on SQLite the spectator watches from the process that serves the
racers. Two processes on one SQLite file do share the races, so the end-once test
runs two processes on both databases.

The processes use the wall clock: the watching test waits for the real 5 s countdown; the
end-once test does not wait for a real time limit (60 s at least) but moves its races' start
back in the database (`races.starts_ms`, and the games' `started_ms` and `deadline_ms` to match),
which is what the passing of that time would have done.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime
from typing import Any

import aiohttp
import asyncpg
import pytest
from aiohttp import WSMsgType
from openskill.models import PlackettLuce
from sqlalchemy import func, select, update

from server.engine import CARDS, Rule, card_text, commitment
from server.engine.seeds import race_message, seeded_code
from server.services.seeds import SEED_KEY, SeedBox
from server.store.db import make_engine
from server.store.models import GameRow, Race, RacePlayer, Rating, ServerSecret
from tests.api.helpers import action_body, line_of
from tests.process import ServerProcess

LIVE = "/api/v1/live"
SUBPROTOCOL = "solitaire.v1"
DELIVERY_S = 2.0
"""How long a standings change may take to reach a spectator on another process."""
SETTLE_S = 3.0
"""How long the server may take to end a due race by itself (SPEC: 2 s; the tick is 1 s; real
processes on a busy machine get a little more)."""
COUNTDOWN_S = 5.0
HOLD_S = 2.0
"""Long enough for both processes to tick (once a second) while the rating rows are held."""
LIMIT_MS = 60_000
CARD_STRINGS = [json.dumps(card_text(card)) for card in CARDS]


def is_postgresql(url: str) -> bool:
    return url.startswith("postgresql")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def moment(text: str) -> int:
    """Epoch milliseconds of a server timestamp."""
    return round(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def secret_forms(code: str) -> list[str]:
    """The code in every form it could leak in (as tests/api/test_fair_play.py checks)."""
    seed = code.split("-", 2)[2]
    forms = {code, seed, seed.replace("-", ""), *seed.split("-")}
    return sorted(forms | {form.lower() for form in forms})


def assert_secret(what: str, text: str, code: str) -> None:
    """A race document while the race runs: no code in any form, no card at all."""
    shown = [form for form in secret_forms(code) if form in text]
    assert not shown, f"{what} shows the code as {shown[0]!r}: {text[:500]}"
    cards = [card for card in CARD_STRINGS if card in text]
    assert not cards, f"{what} shows cards {cards}: {text[:500]}"


class Db:
    """The test database, beside the servers."""

    def __init__(self, url: str) -> None:
        self.engine = make_engine(url, pool_size=1)

    async def close(self) -> None:
        await self.engine.dispose()

    async def race_code(self, race_id: str) -> str | None:
        """The race's code: None until its countdown begins (fixed from the racers' seeds)."""
        async with self.engine.connect() as connection:
            found = await connection.execute(select(Race.code).where(Race.id == race_id))
            code: str | None = found.scalar_one()
        return code

    async def coming_code(self, race: dict[str, Any], client_seeds: list[str]) -> str:
        """The code a plain race will have when racers with `client_seeds` start it (SPEC
        1.8.2): its server seed opened with the servers' key (kept in `server_secrets`)."""
        async with self.engine.connect() as connection:
            query = select(Race.server_seed).where(Race.id == race["id"])
            sealed = (await connection.execute(query)).scalar_one()
            query = select(ServerSecret.value).where(ServerSecret.name == SEED_KEY)
            key = (await connection.execute(query)).scalar_one()
        box = SeedBox(SeedBox.key_of(key))
        server_seed = box.open(sealed, race["server_seed_hash"])
        message = race_message(client_seeds)
        return str(seeded_code(server_seed, message, Rule(race["rule"])))

    async def move_start(self, race_ids: list[str], starts_ms: int) -> None:
        """Sets the races' start to `starts_ms`, in one transaction, as if their countdown had
        begun earlier: the race rows and their games' clocks and deadlines."""
        async with self.engine.begin() as connection:
            await connection.execute(
                update(Race).where(Race.id.in_(race_ids)).values(starts_ms=starts_ms)
            )
            await connection.execute(
                update(GameRow)
                .where(GameRow.race_id.in_(race_ids))
                .values(started_ms=starts_ms, deadline_ms=starts_ms + LIMIT_MS)
            )

    async def ratings(self) -> dict[str, tuple[float, float, int]]:
        async with self.engine.connect() as connection:
            rows = await connection.execute(
                select(Rating.player_id, Rating.mu, Rating.sigma, Rating.races).where(
                    Rating.rule == "classic"
                )
            )
            return {row[0]: (row[1], row[2], row[3]) for row in rows.all()}

    async def unplaced(self, race_ids: list[str]) -> int:
        async with self.engine.connect() as connection:
            found = await connection.execute(
                select(func.count())
                .select_from(RacePlayer)
                .where(RacePlayer.race_id.in_(race_ids), RacePlayer.place.is_(None))
            )
            count: int = found.scalar_one()
        return count


class Client:
    """HTTP calls to the servers, as one player or anyone."""

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self.session = session

    async def call(
        self,
        method: str,
        url: str,
        auth: dict[str, str] | None = None,
        body: Any = None,
        status: int = 200,
    ) -> Any:
        async with self.session.request(method, url, json=body, headers=auth or {}) as response:
            text = await response.text()
            assert response.status == status, (method, url, response.status, text)
            return json.loads(text)

    async def player(self, base: str, name: str) -> tuple[str, dict[str, str]]:
        body = await self.call("POST", f"{base}/api/v1/players", body={"name": name}, status=201)
        return body["id"], {"Authorization": f"Bearer {body['token']}"}


async def race_with_line(
    client: Client,
    db: Db,
    base: str,
    auth: dict[str, str],
    length: int,
    seats: int,
    others: list[dict[str, str]],
) -> tuple[dict[str, Any], str, list[str]]:
    """A new race (not certified, 60 s) whose deal, once its creator (`auth`) and `others`
    (their tokens) sit in it, has `length` legal moves in a row; a deal without them (rare) is
    given up (its creator leaves) and another race is created."""
    seeds = [
        (await client.call("GET", f"{base}/api/v1/me/seeds", racer))["client_seed"]
        for racer in (auth, *others)
    ]
    for _ in range(20):
        body = {"seats": seats, "winnable": False, "time_limit_s": LIMIT_MS // 1000}
        race = await client.call("POST", f"{base}/api/v1/races", auth, body, status=201)
        code = await db.coming_code(race, seeds)
        line = line_of(code, length)
        if line is not None:
            return race, code, line
        await client.call("POST", f"{base}/api/v1/races/{race['id']}/leave", auth)
    raise AssertionError("no deal with a line of moves")


async def next_race(
    ws: aiohttp.ClientWebSocketResponse, race_id: str, code: str, wanted: Any, timeout: float
) -> dict[str, Any]:
    """The first `race` message (within `timeout`) whose document is `wanted`; every message
    before the race has finished is checked for the code and for cards."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        left = deadline - loop.time()
        if left <= 0:
            raise TimeoutError("the wanted race message did not come")
        msg = await ws.receive(left)
        assert msg.type == WSMsgType.TEXT, (msg.type, msg.data)
        body: dict[str, Any] = json.loads(msg.data)
        assert body["type"] == "race" and body["race_id"] == race_id, body
        if body["race"]["status"] != "finished":
            assert_secret("a race message", msg.data, code)
        if wanted(body["race"]):
            return body["race"]


def entry_of(race: dict[str, Any], player_id: str) -> dict[str, Any]:
    (found,) = [s for s in race["standings"] if s["player"]["id"] == player_id]
    return found


# ---------------------------------------------------------------- watching from another process


async def test_a_spectator_on_another_process_sees_the_race_live(database_url: str) -> None:
    a = ServerProcess(database_url)
    b = ServerProcess(database_url) if is_postgresql(database_url) else a
    db = Db(database_url)
    try:
        await asyncio.gather(*(server.ready() for server in {a, b}))
        async with aiohttp.ClientSession() as session:
            client = Client(session)
            ana, ana_auth = await client.player(a.base, "ana")
            ben, ben_auth = await client.player(a.base, "ben")
            race, code, line = await race_with_line(client, db, a.base, ana_auth, 1, 2, [ben_auth])
            race_id = race["id"]
            async with session.ws_connect(b.base + LIVE, protocols=(SUBPROTOCOL,)) as ws:
                await ws.send_json({"type": "watch_race", "id": "s", "race_id": race_id})
                msg = await ws.receive(5)
                watching = json.loads(msg.data)
                assert watching["type"] == "watching_race", watching
                assert watching["race"]["status"] == "open", watching
                assert_secret("watching_race", msg.data, code)

                # ben's join on A fills the race: the countdown, heard on B.
                joined = await client.call(
                    "POST", f"{a.base}/api/v1/races/{race_id}/join", ben_auth
                )
                assert joined["status"] == "starting", joined
                games = joined["games"]
                starting = await next_race(
                    ws, race_id, code, lambda r: r["status"] == "starting", DELIVERY_S
                )
                assert starting["games"] == games and starting["starts_at"] == joined["starts_at"]

                # The real countdown: when it is over, the server marks the race running by
                # itself, which is a change pushed to the spectator (checked at the end, so that
                # the rest of the race is checked whatever happens here).
                try:
                    running: dict[str, Any] | None = await next_race(
                        ws,
                        race_id,
                        code,
                        lambda r: r["status"] == "running",
                        COUNTDOWN_S + SETTLE_S,
                    )
                except TimeoutError:
                    running = None
                if running is not None:
                    assert [s["moves"] for s in running["standings"]] == [0, 0], running

                # Each action on A reaches the spectator on B, as progress only.
                for player, auth in ((ana, ana_auth), (ben, ben_auth)):
                    sent = time.monotonic()
                    await client.call(
                        "POST",
                        f"{a.base}/api/v1/games/{games[player]}/moves",
                        auth,
                        action_body(line[0]),
                    )
                    seen = await next_race(
                        ws,
                        race_id,
                        code,
                        lambda r, p=player: entry_of(r, p)["moves"] == 1,
                        DELIVERY_S,
                    )
                    assert time.monotonic() - sent < DELIVERY_S
                    assert entry_of(seen, player)["status"] == "active", seen
                    await asyncio.sleep(0.01)  # ben's last action is later than ana's

                # Both quit on A: the race ends at once; B's spectator gets the result.
                for player, auth in ((ben, ben_auth), (ana, ana_auth)):
                    await client.call(
                        "POST", f"{a.base}/api/v1/games/{games[player]}/abandon", auth
                    )
                finished = await next_race(
                    ws, race_id, code, lambda r: r["status"] == "finished", DELIVERY_S
                )
            assert finished["code"] == code
            assert commitment(finished["code"]) == finished["deal_commitment"]
            # The same progress; the earlier last action first.
            assert [s["player"]["id"] for s in finished["standings"]] == [ana, ben], finished
            assert [s["place"] for s in finished["standings"]] == [1, 2], finished
            on_b = await client.call("GET", f"{b.base}/api/v1/races/{race_id}")
            assert {**on_b, "now": None} == {**finished, "now": None}
            assert running is not None, (
                "the end of the countdown (starting -> running) was not pushed to the spectator"
            )
    finally:
        await db.close()
        a.close()
        b.close()


# ---------------------------------------------------------------- ended once


async def finished_races(
    client: Client, base: str, race_ids: list[str], timeout: float
) -> dict[str, dict[str, Any]]:
    """The races, once every one of them has finished (within `timeout`)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + timeout
    finished: dict[str, dict[str, Any]] = {}
    while True:
        for race_id in race_ids:
            if race_id not in finished:
                race = await client.call("GET", f"{base}/api/v1/races/{race_id}")
                if race["status"] == "finished":
                    finished[race_id] = race
        if len(finished) == len(race_ids):
            return finished
        assert loop.time() < until, f"{len(race_ids) - len(finished)} races were not ended"
        await asyncio.sleep(0.1)


async def hold_ratings(url: str, player_ids: list[str]) -> Any:
    """A PostgreSQL transaction that holds the players' rating rows (`FOR UPDATE`), as a slow
    writer would; rolled back by `release`."""
    connection = await asyncpg.connect(url)
    await connection.execute("BEGIN")
    await connection.execute(
        "SELECT 1 FROM ratings WHERE player_id = ANY($1::text[]) FOR UPDATE", player_ids
    )
    return connection


async def release(connection: Any) -> None:
    await connection.execute("ROLLBACK")
    await connection.close()


async def test_due_races_are_ended_and_rated_exactly_once_by_two_processes(
    database_url: str,
) -> None:
    """Races of the same three racers fall due at the same moment while two processes tick:
    each is ended once (places set, every game timed out at its deadline) and rated once: each
    racer's rating counts every race once and equals the ratings updated race after race.
    Every racer moves (only racers who moved are rated), ana first, then ben, then cat (so the
    places are 1, 2, 3 by the earlier last action); three races in all, so that the group's cap
    of 3 rated races in 24 h (SPEC 2.6.1) does not stop one.

    A first race is ended alone, so that the racers have ratings; then, on PostgreSQL, a
    transaction of the test holds those rating rows while the other races fall due, as a slow
    writer would, so that both processes are settling races at the same time (each skips the
    race the other has locked): a rating read without a lock would then be overwritten (a
    race's rating lost). On SQLite, writers take turns anyway."""
    count = 2
    a, b = ServerProcess(database_url), ServerProcess(database_url)
    db = Db(database_url)
    outputs = ""
    try:
        await asyncio.gather(a.ready(), b.ready())
        async with aiohttp.ClientSession() as session:
            client = Client(session)
            ana, ana_auth = await client.player(a.base, "ana")
            ben, ben_auth = await client.player(b.base, "ben")
            cat, cat_auth = await client.player(a.base, "cat")
            races: list[tuple[str, str, dict[str, str], list[str]]] = []
            for _ in range(count + 1):
                race, code, line = await race_with_line(
                    client, db, a.base, ana_auth, 1, 3, [ben_auth, cat_auth]
                )
                race_id = race["id"]
                await client.call("POST", f"{b.base}/api/v1/races/{race_id}/join", ben_auth)
                full = await client.call("POST", f"{a.base}/api/v1/races/{race_id}/join", cat_auth)
                assert full["status"] == "starting", full
                races.append((race_id, code, full["games"], line))
            race_ids = [race_id for race_id, *_ in races]

            # The countdowns are made over (see the module docstring); every racer moves in each
            # race, one after the other.
            await db.move_start(race_ids, now_ms() - 1_000)
            for _, _, games, line in races:
                for racer, auth in ((ana, ana_auth), (ben, ben_auth), (cat, cat_auth)):
                    await client.call(
                        "POST",
                        f"{a.base}/api/v1/games/{games[racer]}/moves",
                        auth,
                        action_body(line[0]),
                    )
            # The first race's time limit is made over: ended alone.
            deadlines: dict[str, int] = {}
            starts = now_ms() - LIMIT_MS - 1
            await db.move_start(race_ids[:1], starts)
            deadlines[race_ids[0]] = starts + LIMIT_MS
            finished = await finished_races(client, b.base, race_ids[:1], SETTLE_S)

            # Then every other time limit, at once.
            held = None
            if is_postgresql(database_url):
                held = await hold_ratings(database_url, [ana, ben, cat])
            try:
                starts = now_ms() - LIMIT_MS - 1
                await db.move_start(race_ids[1:], starts)
                deadlines |= {race_id: starts + LIMIT_MS for race_id in race_ids[1:]}
                if held is not None:
                    await asyncio.sleep(HOLD_S)  # both processes tick and start settling
            finally:
                if held is not None:
                    await release(held)
            finished |= await finished_races(client, b.base, race_ids[1:], SETTLE_S)

            for race_id, code, games, _ in races:
                race = finished[race_id]
                deadline = deadlines[race_id]
                assert race["code"] == code, race
                assert race["standings"][0]["player"]["id"] == ana, race
                assert [s["player"]["id"] for s in race["standings"]] == [ana, ben, cat], race
                assert [s["place"] for s in race["standings"]] == [1, 2, 3], race
                for player_id, game_id in games.items():
                    game = await client.call("GET", f"{a.base}/api/v1/games/{game_id}")
                    assert (game["status"], game["timed_out"]) == ("abandoned", True), game
                    assert game["elapsed_ms"] == LIMIT_MS, game
                    assert game["code"] == code, (player_id, game)
                    # The deadline as moved: `starts` + the time limit, to the ms.
                    assert moment(game["finished_at"]) == deadline, (deadline, game)
                    assert entry_of(race, player_id)["finished_at"] == game["finished_at"]
                assert moment(race["ended_at"]) == deadline, (deadline, race)
            assert await db.unplaced(race_ids) == 0

            # Each race rated once: `races` counts every race once, and the ratings are those
            # of the same result applied once per race, one race after the other.
            model = PlackettLuce()
            teams = [[model.rating()] for _ in range(3)]
            for _ in races:
                teams = model.rate(teams, ranks=[1.0, 2.0, 3.0])
            expected = {
                ana: (teams[0][0].mu, teams[0][0].sigma, len(races)),
                ben: (teams[1][0].mu, teams[1][0].sigma, len(races)),
                cat: (teams[2][0].mu, teams[2][0].sigma, len(races)),
            }
            stored = await db.ratings()
            assert set(stored) == set(expected), stored
            for player_id, values in expected.items():
                assert stored[player_id] == pytest.approx(values), (player_id, stored)
            stats = await client.call("GET", f"{b.base}/api/v1/players/{ana}/stats")
            assert stats["rules"]["classic"]["race"]["races"] == len(races), stats
    finally:
        await db.close()
        for server in (a, b):
            if server.process.poll() is None:
                server.terminate()
            outputs += server.output()
            server.close()
    assert "settling race" not in outputs and "race tick failed" not in outputs, outputs[-3000:]
