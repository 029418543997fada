"""Races mix every racer (SPEC 1.8.2, 2.6.1 "Details"; issue 22, item 3), on both databases.

A race's server seed is committed by its hash from the race's creation; the deal is fixed when
the race fills or its creator starts it, from the racers' current client seeds, and its seed is
revealed with its code at the end: the revealed seed matches the hash shown all along, the code
is the HMAC of the seed over the client seeds (`server.engine.seeds`), its commitment is the one
shown during the race, and a racer who changes their client seed before the start changes the
deal. A winnable race deals its first certified candidate (the earlier ones are not certified by
the solver). Nothing shows the code or the server seed before the end: the race documents, the
listings, the racers' own games, listings, exports and replays, the WebSocket. A solver that
cannot certify in time answers the start (or the filling join) `503` with `Retry-After`, and
the race stays open, unchanged. The solver runs out of any transaction: a racer leaves while the
filling join's deal is being certified, and the join then sees the new seats; a racer's client
seed changed meanwhile has the deal fixed again. Races made before seeds keep their code.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from sqlalchemy import insert, select

import server.services.races.lobby
from server.engine import DealCode, Rule, commitment
from server.engine.seeds import race_message, seeded_code
from server.engine.solver import SolveStatus, solve_deal
from server.keys import RACES, SOLVER
from server.services.deals import DEAL_NODES
from server.services.workers import Client
from server.store.db import make_engine
from server.store.models import Race, RacePlayer
from tests.api.boards_helpers import NOW, get_page
from tests.api.helpers import Player, new_player, problem

COUNTDOWN_MS = 5_000


# ---------------------------------------------------------------- fixtures


class Db:
    """The test database read (and written, for a race made before seeds) directly."""

    def __init__(self, url: str) -> None:
        self.engine = make_engine(url, pool_size=1)

    async def close(self) -> None:
        await self.engine.dispose()

    async def race_row(self, race_id: str) -> Any:
        async with self.engine.connect() as connection:
            query = select(Race).where(Race.id == race_id)
            return (await connection.execute(query)).one()

    async def execute(self, *statements: Any) -> None:
        async with self.engine.begin() as connection:
            for statement in statements:
                await connection.execute(statement)


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Db]:
    found = Db(database_url)
    yield found
    await found.close()


@pytest.fixture
def client(timed: TestClient[Any, Any]) -> TestClient[Any, Any]:
    """The app of `timed` (tests/api/conftest.py): every service, the race service and its
    tick included, reads the test's `clock`."""
    return timed


class Seen:
    """Every text served before a race ends, checked at its end for its code and seed."""

    def __init__(self) -> None:
        self.texts: list[tuple[str, str]] = []

    def add(self, what: str, text: str) -> None:
        self.texts.append((what, text))

    async def get(
        self, client: TestClient[Any, Any], path: str, player: Player | None = None
    ) -> Any:
        response = await client.get(path, headers=player.auth if player else {})
        text = await response.text()
        assert response.status == 200, (path, text)
        self.add(f"GET {path}", text)
        return text if path.endswith("/export") else json.loads(text)  # an export: NDJSON

    def check(self, code: str, server_seed: str) -> None:
        """None showed the code (in any form) or the server seed (hex, either case)."""
        group = code.split("-", 2)[2]
        forms = {code, group, group.replace("-", ""), *group.split("-"), server_seed}
        forms |= {f.lower() for f in forms} | {f.upper() for f in forms}
        for what, text in self.texts:
            shown = [f for f in forms if f in text]
            assert not shown, f"{what} shows {shown[0]!r} before the end: {text[:400]}"


async def players(client: TestClient[Any, Any], *names: str) -> list[Player]:
    return [await new_player(client, name) for name in names]


async def create(client: TestClient[Any, Any], player: Player, **body: Any) -> dict[str, Any]:
    response = await client.post("/api/v1/races", json=body, headers=player.auth)
    assert response.status == 201, await response.text()
    race: dict[str, Any] = await response.json()
    return race


async def seat(
    client: TestClient[Any, Any], race_id: str, op: str, player: Player
) -> dict[str, Any]:
    response = await client.post(f"/api/v1/races/{race_id}/{op}", headers=player.auth)
    assert response.status == 200, (op, await response.text())
    race: dict[str, Any] = await response.json()
    return race


async def read(client: TestClient[Any, Any], race_id: str) -> dict[str, Any]:
    response = await client.get(f"/api/v1/races/{race_id}")
    assert response.status == 200, await response.text()
    race: dict[str, Any] = await response.json()
    return race


async def client_seed(client: TestClient[Any, Any], player: Player) -> str:
    response = await client.get("/api/v1/me/seeds", headers=player.auth)
    assert response.status == 200, await response.text()
    seed: str = (await response.json())["client_seed"]
    return seed


async def set_client_seed(client: TestClient[Any, Any], player: Player, seed: str) -> None:
    response = await client.put("/api/v1/me/seeds", json={"client_seed": seed}, headers=player.auth)
    assert response.status == 200, await response.text()
    assert await client_seed(client, player) == seed


async def end_by_abandoning(
    client: TestClient[Any, Any], race: dict[str, Any], racers: list[Player]
) -> dict[str, Any]:
    """Every racer quits in the countdown: the race ends at once."""
    for player in racers:
        game_id = race["games"][player.id]
        response = await client.post(f"/api/v1/games/{game_id}/abandon", headers=player.auth)
        assert response.status == 200, await response.text()
    ended = await read(client, race["id"])
    assert ended["status"] == "finished", ended
    return ended


def check_revealed(ended: dict[str, Any], seeds: list[str], shown_commitment: str) -> DealCode:
    """The finished race's seed, client seeds and candidate make its code (SPEC 1.8.2)."""
    server_seed = bytes.fromhex(ended["server_seed"])
    assert len(server_seed) == 32
    assert hashlib.sha256(server_seed).hexdigest() == ended["server_seed_hash"], ended
    assert ended["client_seeds"] == sorted(seeds), ended
    message = race_message(ended["client_seeds"], ended["candidate"])
    code = seeded_code(server_seed, message, Rule(ended["rule"]))
    assert ended["code"] == str(code), ended
    assert commitment(ended["code"]) == ended["deal_commitment"] == shown_commitment, ended
    return code


# ---------------------------------------------------------------- a plain race


async def test_a_race_is_dealt_from_its_seed_over_every_racers_client_seed(
    client: TestClient[Any, Any], db: Db
) -> None:
    ana, ben, cat, dan = await players(client, "ana", "ben", "cat", "dan")
    seen = Seen()
    race = await create(client, ana, seats=3, winnable=False)
    race_id = race["id"]
    seen.add("POST /races", json.dumps(race))
    shown_hash = race["server_seed_hash"]
    assert len(shown_hash) == 64 and int(shown_hash, 16) >= 0, race
    assert (race["deal_commitment"], race["code"]) == (None, None), race
    for key in ("server_seed", "client_seeds", "candidate"):
        assert race[key] is None, race
    row = await db.race_row(race_id)
    assert row.code is None and row.server_seed_hash == shown_hash, row
    assert row.server_seed is not None and shown_hash not in row.server_seed  # sealed

    old_ben = await client_seed(client, ben)
    await seat(client, race_id, "join", ben)
    # ben changes his client seed before the start: the deal takes the new one.
    await set_client_seed(client, ben, "ben's lucky seed")
    opened = await seen.get(client, f"/api/v1/races/{race_id}")
    assert opened["server_seed_hash"] == shown_hash and opened["deal_commitment"] is None
    await seen.get(client, "/api/v1/races?status=open")

    full = await seat(client, race_id, "join", cat)
    seen.add("POST join (full)", json.dumps(full))
    assert full["status"] == "starting", full
    shown_commitment = full["deal_commitment"]
    assert len(shown_commitment) == 64, full
    assert full["server_seed_hash"] == shown_hash, full
    for key in ("code", "server_seed", "client_seeds", "candidate"):
        assert full[key] is None, full  # shown at the end
    racers = [ana, ben, cat]
    for player in racers:
        game_id = full["games"][player.id]
        game = await seen.get(client, f"/api/v1/games/{game_id}", player)
        assert game["deal_commitment"] == shown_commitment and game["code"] is None, game
        await seen.get(client, f"/api/v1/players/{player.id}/games", player)
        await seen.get(client, f"/api/v1/players/{player.id}/games/export", player)
    await seen.get(client, "/api/v1/races?status=running")
    await seen.get(client, f"/api/v1/races/{race_id}", dan)
    await seen.get(client, "/api/v1/live/games?limit=100")

    # A racer's own replay during the race: the race's seed, not yet revealed.
    game_id = full["games"][ana.id]
    response = await client.post(f"/api/v1/games/{game_id}/abandon", headers=ana.auth)
    assert response.status == 200
    replay = await seen.get(client, f"/api/v1/games/{game_id}/replay", ana)
    seeds = [await client_seed(client, p) for p in racers]
    assert replay["seed"] == {
        "server_seed_hash": shown_hash,
        "client_seeds": sorted(seeds),
        "candidate": None,
        "server_seed": None,
    }, replay
    await seen.get(client, f"/api/v1/races/{race_id}")
    socket = await client.ws_connect("/api/v1/live", protocols=("solitaire.v1",))
    await socket.send_str(json.dumps({"type": "watch_race", "id": "w", "race_id": race_id}))
    message = await socket.receive(10)
    seen.add("watching_race", message.data)
    await socket.close()

    ended = await end_by_abandoning(client, full, [ben, cat])
    assert ended["server_seed_hash"] == shown_hash and ended["candidate"] is None, ended
    code = check_revealed(ended, seeds, shown_commitment)
    assert "ben's lucky seed" in ended["client_seeds"] and old_ben not in ended["client_seeds"]
    # With ben's old seed the deal would have been another one.
    server_seed = bytes.fromhex(ended["server_seed"])
    before = [await client_seed(client, ana), old_ben, await client_seed(client, cat)]
    assert seeded_code(server_seed, race_message(before), Rule.CLASSIC) != code
    seen.check(str(code), ended["server_seed"])

    # Every racer's game deals that code; its replay now carries the revealed seed.
    for player in racers:
        game_id = ended["games"][player.id]
        response = await client.get(f"/api/v1/games/{game_id}/replay")
        replay = await response.json()
        assert replay["code"] == str(code), replay
        assert replay["seed"] == {
            "server_seed_hash": shown_hash,
            "client_seeds": sorted(seeds),
            "candidate": None,
            "server_seed": ended["server_seed"],
        }, replay
    listed, _ = await get_page(client, "/api/v1/races?status=finished")
    assert [r["server_seed"] for r in listed["races"]] == [ended["server_seed"]], listed


async def test_a_race_started_by_its_creator_takes_the_seated_racers_seeds(
    client: TestClient[Any, Any],
) -> None:
    ana, ben, cat = await players(client, "ana", "ben", "cat")
    race = await create(client, ana, seats=4, winnable=False)
    await seat(client, race["id"], "join", ben)
    await set_client_seed(client, ana, "ana " * 16)  # 64 characters, spaces included
    started = await seat(client, race["id"], "start", ana)
    assert started["status"] == "starting" and started["deal_commitment"] is not None, started
    # cat's seed does not count: cat never sat in it.
    await set_client_seed(client, ben, "changed after the start")
    seeds = ["ana " * 16, await client_seed(client, cat)]
    ended = await end_by_abandoning(client, started, [ana, ben])
    assert ended["client_seeds"] != sorted(seeds)
    assert len(ended["client_seeds"]) == 2 and "ana " * 16 in ended["client_seeds"], ended
    assert "changed after the start" not in ended["client_seeds"], ended
    check_revealed(ended, ended["client_seeds"], started["deal_commitment"])


# ---------------------------------------------------------------- a winnable race


async def test_a_winnable_race_deals_its_first_certified_candidate(
    client: TestClient[Any, Any],
) -> None:
    ana, ben = await players(client, "ana", "ben")
    race = await create(client, ana, seats=2)  # winnable by default
    assert race["winnable"] is True and race["deal_commitment"] is None, race
    full = await seat(client, race["id"], "join", ben)
    ended = await end_by_abandoning(client, full, [ana, ben])
    j = ended["candidate"]
    assert isinstance(j, int) and j >= 0, ended
    seeds = [await client_seed(client, p) for p in (ana, ben)]
    code = check_revealed(ended, seeds, full["deal_commitment"])
    server_seed = bytes.fromhex(ended["server_seed"])
    for earlier in range(j):  # the solver certified none of the candidates before it
        candidate = seeded_code(server_seed, race_message(seeds, earlier), Rule.CLASSIC)
        verdict = solve_deal(candidate, take_backs=True, max_nodes=DEAL_NODES)
        assert verdict.status is not SolveStatus.WINNABLE, (earlier, verdict)
    verdict = solve_deal(code, take_backs=True, max_nodes=DEAL_NODES)
    assert verdict.status is SolveStatus.WINNABLE, verdict


async def test_a_start_the_solver_cannot_certify_in_time_is_503_and_the_race_stays_open(
    client: TestClient[Any, Any], db: Db, monkeypatch: pytest.MonkeyPatch
) -> None:
    ana, ben, cat = await players(client, "ana", "ben", "cat")
    monkeypatch.setattr(server.services.races.lobby, "CERTIFY_SECONDS", 0.0001)
    # The join that would fill the race.
    race = await create(client, ana, seats=2)
    before = await read(client, race["id"])
    response = await client.post(f"/api/v1/races/{race['id']}/join", headers=ben.auth)
    body = await problem(response, 503)
    assert int(response.headers["Retry-After"]) >= 1, body
    after = await read(client, race["id"])
    assert {**after, "now": None} == {**before, "now": None}  # not joined, still open
    assert (await db.race_row(race["id"])).code is None
    # The creator's start.
    race = await create(client, ana, seats=3)
    await seat(client, race["id"], "join", ben)
    before = await read(client, race["id"])
    response = await client.post(f"/api/v1/races/{race['id']}/start", headers=ana.auth)
    body = await problem(response, 503)
    assert int(response.headers["Retry-After"]) >= 1, body
    after = await read(client, race["id"])
    assert {**after, "now": None} == {**before, "now": None}
    assert after["status"] == "open" and after["games"] == {}, after
    # With the solver's time back, the client's retry starts it.
    monkeypatch.setattr(server.services.races.lobby, "CERTIFY_SECONDS", 20.0)
    started = await seat(client, race["id"], "start", ana)
    assert started["status"] == "starting" and len(started["games"]) == 2, started
    del cat


# ---------------------------------------------------------------- out of any transaction


class Gate:
    """The app's real certification (`SolverService.first_certified`), held at its door until
    the test opens it: so the test acts while a start is being certified."""

    def __init__(self, client: TestClient[Any, Any]) -> None:
        self.real = client.app[SOLVER].first_certified
        self.entered = asyncio.Event()
        self.open = asyncio.Event()
        self.calls: list[list[DealCode]] = []

    async def __call__(self, codes: list[DealCode], asker: Client, seconds: float) -> int:
        self.calls.append(codes)
        self.entered.set()
        await self.open.wait()
        return await self.real(codes, asker, seconds)


async def test_the_solver_holds_no_lock_and_a_changed_race_is_fixed_again(
    client: TestClient[Any, Any],
) -> None:
    ana, ben, cat, dan = await players(client, "ana", "ben", "cat", "dan")
    gate = Gate(client)
    client.app[RACES].certify = gate

    # cat's join would fill the race; while its deal is certified, ben leaves (no lock is held:
    # the leave is answered at once). The join then finds a seat free: a plain join.
    race = await create(client, ana, seats=3)
    await seat(client, race["id"], "join", ben)
    join = asyncio.ensure_future(client.post(f"/api/v1/races/{race['id']}/join", headers=cat.auth))
    await asyncio.wait_for(gate.entered.wait(), 10)
    left = await asyncio.wait_for(seat(client, race["id"], "leave", ben), 5)
    assert [p["name"] for p in left["players"]] == ["ana"], left
    gate.open.set()
    response = await join
    assert response.status == 200, await response.text()
    joined = await response.json()
    assert joined["status"] == "open" and joined["deal_commitment"] is None, joined
    assert [p["name"] for p in joined["players"]] == ["ana", "cat"], joined

    # dan's join fills another race; while it is certified, ana changes her client seed: the
    # deal is fixed again, from the seed she has when the countdown begins.
    gate.entered.clear()
    gate.open.clear()
    gate.calls.clear()
    race = await create(client, ana, seats=2)
    join = asyncio.ensure_future(client.post(f"/api/v1/races/{race['id']}/join", headers=dan.auth))
    await asyncio.wait_for(gate.entered.wait(), 10)
    await asyncio.wait_for(set_client_seed(client, ana, "changed meanwhile"), 5)
    gate.open.set()
    response = await join
    assert response.status == 200, await response.text()
    full = await response.json()
    assert full["status"] == "starting", full
    assert len(gate.calls) == 2 and gate.calls[0] != gate.calls[1], gate.calls
    ended = await end_by_abandoning(client, full, [ana, dan])
    seeds = ["changed meanwhile", await client_seed(client, dan)]
    check_revealed(ended, seeds, full["deal_commitment"])


# ---------------------------------------------------------------- races made before seeds


async def test_a_race_made_before_seeds_keeps_its_code(
    client: TestClient[Any, Any], db: Db
) -> None:
    ana, ben = await players(client, "ana", "ben")
    race_id = str(uuid.uuid4())
    code = "RU2-C-BERLRID-EACHOVY-RCYGGPY-KCNLGTT"
    await db.execute(
        insert(Race).values(
            id=race_id,
            rule="classic",
            status="open",
            seats=2,
            public=True,
            winnable=True,
            time_limit_s=600,
            creator_id=ana.id,
            code=code,
            created_ms=NOW,
            starts_ms=None,
            ended_ms=None,
            version=0,
        ),
        insert(RacePlayer).values(race_id=race_id, player_id=ana.id, seat=0, joined_ms=NOW),
    )
    opened = await read(client, race_id)
    assert opened["deal_commitment"] == commitment(code), opened  # as before seeds
    assert opened["server_seed_hash"] is None, opened
    full = await seat(client, race_id, "join", ben)
    assert full["status"] == "starting" and full["deal_commitment"] == commitment(code), full
    ended = await end_by_abandoning(client, full, [ana, ben])
    assert ended["code"] == code, ended
    for key in ("server_seed_hash", "server_seed", "client_seeds", "candidate"):
        assert ended[key] is None, ended
    response = await client.get(f"/api/v1/games/{ended['games'][ana.id]}/replay")
    replay = await response.json()
    assert replay["code"] == code and replay["seed"] is None, replay
