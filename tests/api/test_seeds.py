"""Seed pairs (SPEC 1.8.2; issue 22): deals neither side can choose, over HTTP on both databases.

A player's random and winnable-only games are dealt from the HMAC of a server seed (committed by
its hash before the player chose the client seed that goes with it) over their client seed and a
nonce; a rotation reveals the ended pair's seed, with which every code it dealt is recomputed
here with the engine's formula. A rotation is refused while one of those games is in play; the
sealed seeds in the database do not give the seed away; a day's daily deal is one game in play at
a time (`daily_in_play`), which closes the daily board to the practice-line cheat.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
from typing import Any

import pytest
from sqlalchemy import select, text

from server.app import create_app
from server.engine import Rule
from server.engine.seeds import game_message, seed_hash, seeded_code
from server.engine.solver import SolveStatus, solve_deal
from server.services.deals import DEAL_NODES
from server.services.seeds import load_seed_box
from server.settings import Settings, SettingsError
from server.store.db import make_engine, sessionmakers
from server.store.models import GameRow, SeedPair, ServerSecret
from tests.api.boards_helpers import DAY, Clock
from tests.api.helpers import problem
from tests.conftest import Api, ClientFactory, load_data

VECTORS = load_data("seeds.json")


async def seeds_of(api: Api, auth: dict[str, str]) -> dict[str, Any]:
    response = await api.client.get("/api/v1/me/seeds", headers=auth)
    assert response.status == 200, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def rotate(
    api: Api, auth: dict[str, str], client_seed: Any, status: int = 200
) -> dict[str, Any]:
    response = await api.client.put(
        "/api/v1/me/seeds", json={"client_seed": client_seed}, headers=auth
    )
    assert response.status == status, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def finished(api: Api, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    """A server-dealt game, abandoned at once: its code is then shown."""
    game = await api.game(auth, **body)
    response = await api.client.post(f"/api/v1/games/{game['id']}/abandon", headers=auth)
    assert response.status == 200, await response.text()
    ended: dict[str, Any] = await response.json()
    assert ended["code"] is not None
    return ended


def is_hex(value: Any, length: int) -> bool:
    return isinstance(value, str) and len(value) == length and set(value) <= set("0123456789abcdef")


# ---------------------------------------------------------------- the pair


async def test_a_new_player_has_a_pair_and_the_next_pairs_commitment(api: Api) -> None:
    _, auth = await api.player()
    seeds = await seeds_of(api, auth)
    assert set(seeds) == {"server_seed_hash", "client_seed", "nonce", "next_server_seed_hash"}
    assert is_hex(seeds["server_seed_hash"], 64) and is_hex(seeds["next_server_seed_hash"], 64)
    assert seeds["server_seed_hash"] != seeds["next_server_seed_hash"]
    assert seeds["nonce"] == 0
    assert is_hex(seeds["client_seed"], 16), "a random client seed is proposed at sign-up"
    _, other = await api.player()
    theirs = await seeds_of(api, other)
    assert theirs["server_seed_hash"] != seeds["server_seed_hash"]
    assert theirs["client_seed"] != seeds["client_seed"]
    assert await seeds_of(api, auth) == seeds, "reading changes nothing"
    response = await api.client.get("/api/v1/me/seeds")
    assert response.status == 401


async def test_random_games_come_from_the_pair_and_the_rotation_reveals_it(api: Api) -> None:
    _, auth = await api.player()
    before = await seeds_of(api, auth)
    games = [await finished(api, auth, rule=rule) for rule in ("classic", "relaxed", "classic")]
    for nonce, game in enumerate(games):
        assert game["seed"] == {
            "server_seed_hash": before["server_seed_hash"],
            "client_seed": before["client_seed"],
            "nonce": nonce,
            "candidate": None,
        }
    replay = await api.get(f"/api/v1/games/{games[0]['id']}/replay")
    assert replay["seed"] == {**games[0]["seed"], "server_seed": None}, "not revealed yet"
    assert (await seeds_of(api, auth))["nonce"] == 3

    rotated = await rotate(api, auth, "my own seed")
    previous = rotated["previous"]
    assert previous["server_seed_hash"] == before["server_seed_hash"]
    assert previous["client_seed"] == before["client_seed"] and previous["nonces"] == 3
    seed = bytes.fromhex(previous["server_seed"])
    assert seed_hash(seed) == before["server_seed_hash"] == hashlib.sha256(seed).hexdigest()
    for nonce, game in enumerate(games):
        code = seeded_code(seed, game_message(before["client_seed"], nonce), Rule(game["rule"]))
        assert game["code"] == str(code)
        assert game["deal_commitment"] == code.commitment
    # The next pair, whose hash was shown before the client seed was chosen, is current.
    assert rotated["server_seed_hash"] == before["next_server_seed_hash"]
    assert (rotated["client_seed"], rotated["nonce"]) == ("my own seed", 0)
    now = await seeds_of(api, auth)
    assert {k: rotated[k] for k in now} == now
    assert now["next_server_seed_hash"] not in (before["server_seed_hash"], now["server_seed_hash"])
    replay = await api.get(f"/api/v1/games/{games[0]['id']}/replay")
    assert replay["seed"] == {**games[0]["seed"], "server_seed": previous["server_seed"]}

    # The new pair deals from the chosen client seed, nonce 0 again.
    game = await finished(api, auth)
    assert game["seed"] == {
        "server_seed_hash": before["next_server_seed_hash"],
        "client_seed": "my own seed",
        "nonce": 0,
        "candidate": None,
    }
    again = await rotate(api, auth, "x")
    seed = bytes.fromhex(again["previous"]["server_seed"])
    assert game["code"] == str(seeded_code(seed, "my own seed:0", Rule.CLASSIC))

    history = await api.client.get("/api/v1/me/seeds/history", headers=auth)
    body = await history.json()
    assert [p["server_seed_hash"] for p in body["seeds"]] == [
        before["next_server_seed_hash"],
        before["server_seed_hash"],
    ]
    assert [p["index"] for p in body["seeds"]] == [1, 0] and body["next"] is None
    assert body["seeds"][1] == {**previous}
    paged = await api.client.get("/api/v1/me/seeds/history?limit=1", headers=auth)
    first = await paged.json()
    assert [p["index"] for p in first["seeds"]] == [1] and first["next"] == 1
    rest = await api.client.get("/api/v1/me/seeds/history?limit=1&before=1", headers=auth)
    assert [p["index"] for p in (await rest.json())["seeds"]] == [0]


async def test_a_winnable_only_game_deals_the_first_certified_candidate(api: Api) -> None:
    _, auth = await api.player()
    await rotate(api, auth, "candidates")  # a fixed client seed
    seeds = await seeds_of(api, auth)
    game = await finished(api, auth, winnable=True, rule="relaxed")
    chosen = game["seed"]
    assert (chosen["client_seed"], chosen["nonce"]) == ("candidates", 0)
    j = chosen["candidate"]
    assert isinstance(j, int) and j >= 0
    revealed = bytes.fromhex((await rotate(api, auth, "next"))["previous"]["server_seed"])
    assert seed_hash(revealed) == seeds["server_seed_hash"]
    code = seeded_code(revealed, game_message("candidates", 0, j), Rule.RELAXED)
    assert game["code"] == str(code)
    for earlier in range(j):
        candidate = seeded_code(revealed, game_message("candidates", 0, earlier), Rule.RELAXED)
        verdict = solve_deal(candidate, take_backs=True, max_nodes=DEAL_NODES)
        assert verdict.status is not SolveStatus.WINNABLE, earlier
    verdict = solve_deal(code, take_backs=True, max_nodes=DEAL_NODES)
    assert verdict.status is SolveStatus.WINNABLE


async def test_games_dealt_at_once_never_share_a_nonce(api: Api) -> None:
    _, auth = await api.player()
    games = await asyncio.gather(*(api.game(auth) for _ in range(8)))
    assert sorted(g["seed"]["nonce"] for g in games) == list(range(8))
    assert len({g["deal_commitment"] for g in games}) == 8
    assert (await seeds_of(api, auth))["nonce"] == 8


async def test_chosen_and_daily_games_have_no_seed(api: Api) -> None:
    _, auth = await api.player()
    chosen = await api.game(auth, code="RU1-C-AAAAABB")
    daily = await api.game(auth, daily=True)
    assert chosen["seed"] is None and daily["seed"] is None
    assert (await seeds_of(api, auth))["nonce"] == 0
    replay = await api.get(f"/api/v1/games/{chosen['id']}/replay")
    assert replay["seed"] is None


# ---------------------------------------------------------------- refusals


async def test_a_rotation_is_refused_while_a_game_of_the_pair_is_in_play(api: Api) -> None:
    _, auth = await api.player()
    before = await seeds_of(api, auth)
    game = await api.game(auth)
    refused = await api.client.put("/api/v1/me/seeds", json={"client_seed": "z"}, headers=auth)
    body = await problem(refused, 409)
    assert body["rule"] == "seed_in_use" and body["type"] == "/problems/conflict"
    assert body["rule_url"].endswith("#rule-seed_in_use")
    assert before["server_seed_hash"] not in await refused.text()
    assert await seeds_of(api, auth) == {**before, "nonce": 1}, "nothing changed"
    # A chosen game in play does not hold the rotation up; ending the dealt one frees it.
    await api.game(auth, code="RU1-C-AAAAABB")
    await api.client.post(f"/api/v1/games/{game['id']}/abandon", headers=auth)
    assert (await rotate(api, auth, "z"))["previous"]["nonces"] == 1


async def test_a_bad_client_seed_is_refused_and_changes_nothing(api: Api) -> None:
    _, auth = await api.player()
    before = await seeds_of(api, auth)
    for bad in [*VECTORS["refused_client_seeds"], 7, None, ["x"], {"a": 1}, "x" * 2000, "é"]:
        response = await api.client.put("/api/v1/me/seeds", json={"client_seed": bad}, headers=auth)
        body = await problem(response, 422)
        assert body["type"] == "/problems/validation-error", body
        assert any(e["field"] == "client_seed" for e in body["errors"]), body
    for raw in (b"{", b'{"client_seed": "a", "more": 1}', b"\xff\xfe", b"[]"):
        response = await api.client.put(
            "/api/v1/me/seeds",
            data=raw,
            headers={**auth, "Content-Type": "application/json"},
        )
        assert 400 <= response.status < 500, (raw, response.status)
    ro = await api.client.put(
        "/api/v1/me/seeds",
        json={"client_seed": "tab\there"},
        headers={**auth, "Accept-Language": "ro"},
    )
    assert "Sămânță de client nevalidă" in (await problem(ro, 422))["detail"]
    assert await seeds_of(api, auth) == before
    # Every printable ASCII character, 64 of them, is a client seed.
    edge = "".join(chr(c) for c in range(32, 96))
    assert (await rotate(api, auth, edge))["client_seed"] == edge


# ---------------------------------------------------------------- secrecy at rest


@pytest.mark.parametrize("with_key", [False, True])
async def test_the_database_does_not_give_the_seeds_away(
    settings: Settings, aiohttp_client: ClientFactory, database_url: str, with_key: bool
) -> None:
    """The server seeds are sealed in the database: a dump of it shows neither the current nor
    the next server seed, which the player learns only at the rotation; with SEED_KEY the key
    is not in the database either."""
    key = "ab" * 32
    if with_key:
        settings = dataclasses.replace(settings, seed_key=key)
    api = Api(await aiohttp_client(create_app(settings)))
    _, auth = await api.player()
    await finished(api, auth)
    engine = make_engine(database_url, pool_size=1)
    try:
        async with engine.connect() as connection:
            rows = (await connection.execute(select(SeedPair))).all()
            games = (await connection.execute(select(GameRow))).all()
            secrets = (await connection.execute(select(ServerSecret))).all()
            tables = (
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                if database_url.startswith("postgresql")
                else "SELECT name FROM sqlite_master WHERE type = 'table'"
            )
            names = [n for (n,) in (await connection.execute(text(tables))).all()]
            dump = repr(rows) + repr(games) + repr(secrets)
            for name in names:
                dump += repr((await connection.execute(text(f'SELECT * FROM "{name}"'))).all())
    finally:
        await engine.dispose()
    assert len(rows) == 2
    first = await rotate(api, auth, "one")
    second = await rotate(api, auth, "two")
    for seed in (first["previous"]["server_seed"], second["previous"]["server_seed"]):
        assert seed not in dump and seed.upper() not in dump
        assert bytes.fromhex(seed).hex() not in dump
    stored = {name for name, *_ in secrets}
    assert ("seed_key" in stored) is not with_key
    assert key not in dump


async def test_the_same_key_opens_the_seeds_in_another_process(
    settings: Settings, aiohttp_client: ClientFactory
) -> None:
    """Two apps on one database (two server processes) share the sealed seeds: a pair made by
    one is rotated by the other."""
    one = Api(await aiohttp_client(create_app(settings)))
    two = Api(await aiohttp_client(create_app(settings)))
    _, auth = await one.player()
    seeds = await seeds_of(one, auth)
    game = await finished(two, auth)
    revealed = bytes.fromhex((await rotate(two, auth, "q"))["previous"]["server_seed"])
    assert seed_hash(revealed) == seeds["server_seed_hash"]
    assert game["code"] == str(seeded_code(revealed, f"{seeds['client_seed']}:0", Rule.CLASSIC))


# ---------------------------------------------------------------- the daily deal


async def test_one_game_of_the_daily_deal_in_play_at_a_time(
    settings: Settings, aiohttp_client: ClientFactory
) -> None:
    """The practice-line cheat (issue 22): the ranked daily game left untouched while a second
    game of the same deal is explored. The second is refused while the first is in play; once
    the first has ended, the deal may be practised (unranked)."""
    clock = Clock()
    api = Api(await aiohttp_client(create_app(settings, clock=clock)))
    _, auth = await api.player()
    clock.now += DAY  # a player made before the day
    ranked = await api.game(auth, daily=True)
    refused = await api.client.post("/api/v1/games", json={"daily": True}, headers=auth)
    body = await problem(refused, 409)
    assert (body["type"], body["rule"]) == ("/problems/conflict", "daily_in_play")
    assert ranked["deal_commitment"] not in await refused.text()
    other_rule = await api.game(auth, daily=True, rule="relaxed")  # another deal: fine
    assert other_rule["daily"] == ranked["daily"]
    await api.client.post(f"/api/v1/games/{ranked['id']}/abandon", headers=auth)
    practice = await api.game(auth, daily=True)
    assert practice["deal_commitment"] == ranked["deal_commitment"]
    refused = await api.client.post("/api/v1/games", json={"daily": True}, headers=auth)
    assert (await problem(refused, 409))["rule"] == "daily_in_play"
    # Only the first game is ranked: the practice one never reaches the day's board.
    board = await api.get(f"/api/v1/leaderboards?daily={ranked['daily']}&rule=classic")
    assert [e["game_id"] for e in board["entries"]] == [ranked["id"]]
    assert ranked["code"] is None and practice["code"] is None, "secret for the day"


async def test_daily_deals_asked_at_once_leave_one_in_play(
    settings: Settings, aiohttp_client: ClientFactory
) -> None:
    """Two daily deals asked at the same moment (PostgreSQL's writers do not take turns): one
    game is dealt, the other is `409 daily_in_play`, never a ranked and a practice game of the
    same deal in play together."""
    clock = Clock()
    api = Api(await aiohttp_client(create_app(settings, clock=clock)))
    _, auth = await api.player()
    clock.now += DAY
    await api.game(auth, daily=True, rule="relaxed")  # the day's deal drawn beforehand
    for _ in range(3):
        answers = await asyncio.gather(
            *(
                api.client.post("/api/v1/games", json={"daily": True}, headers=auth)
                for _ in range(4)
            )
        )
        statuses = sorted(r.status for r in answers)
        assert statuses == [201, 409, 409, 409], statuses
        made = next(r for r in answers if r.status == 201)
        game = await made.json()
        await api.client.post(f"/api/v1/games/{game['id']}/abandon", headers=auth)


async def test_an_erased_account_keeps_no_seed(api: Api, database_url: str) -> None:
    """SPEC 2.2.2: the seeds are erased with the account, and its games keep none (a client
    seed is the player's own text)."""
    _, auth = await api.player()
    await rotate(api, auth, "my name is Ana")
    game = await finished(api, auth)
    assert game["seed"]["client_seed"] == "my name is Ana"
    response = await api.client.delete("/api/v1/me", json={}, headers=auth)
    assert response.status == 204, await response.text()
    replay = await api.get(f"/api/v1/games/{game['id']}/replay")
    assert replay["seed"] is None and "my name is Ana" not in repr(replay)
    engine = make_engine(database_url, pool_size=1)
    try:
        async with engine.connect() as connection:
            pairs = (await connection.execute(select(SeedPair))).all()
            games = (await connection.execute(select(GameRow))).all()
    finally:
        await engine.dispose()
    assert pairs == [] and "my name is Ana" not in repr(games)


async def test_a_seed_key_that_does_not_open_the_seeds_stops_the_start(
    settings: Settings, aiohttp_client: ClientFactory
) -> None:
    """SEED_KEY set on a database whose seeds were sealed with the stored key: the app does not
    start (rather than failing every seeded game later), and says why."""
    api = Api(await aiohttp_client(create_app(settings)))
    await api.player()  # seeds sealed with the key kept in the database
    engine = make_engine(settings.database_url, pool_size=1)
    try:
        _, writers = sessionmakers(engine)
        with pytest.raises(SettingsError, match="SEED_KEY does not open"):
            await load_seed_box(writers, "cd" * 32)
        assert await load_seed_box(writers, None)  # the stored key opens them
    finally:
        await engine.dispose()
