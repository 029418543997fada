"""Costly reads bounded (issue 21, item 5; `server/api/heavy.py`): replays, move-log pages,
exports and replay verification are charged to the rate budgets by their size, an export is
paced by the budget rather than cut, and a finished game's replay is kept rendered without
going stale.

The games are played over HTTP through an app without budgets (`client`); the budgets are read
through a second app on the same database whose client budget is 59 requests a minute
(`RATE`): nothing leaves its window during a test, so each answer's `RateLimit` `r` says
exactly what it cost.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

import server.services.leaderboards
from server.api.heavy import ACTIONS_PER_CHARGE, REPLAYS, cost_of
from server.app import create_app
from server.settings import Settings
from tests.api.helpers import problem
from tests.conftest import Api, ClientFactory, load_data

RATE = 59 / 60
"""59 requests a minute: the anonymous budget is `"anonymous";q=59;w=60`."""
QUOTA = 59
GAMES = load_data("games.json")["games"]
WON = next(g for g in GAMES if g["status"] == "won")
DOCUMENT = Path(__file__).resolve().parents[2] / "openapi.yaml"


def body_of(move: str) -> dict[str, str]:
    if move == "undo":
        return {"action": "undo"}
    card, to = move.split("-", 1)
    return {"card": card, "to": to}


def long_line(length: int) -> list[str]:
    """The won game of tests/data/games.json, its second move played and undone after its
    first until it is about `length` actions long: a won game of that many actions."""
    first, *rest = WON["actions"]
    pairs = max(0, (length - len(WON["actions"])) // 2)
    return [first, *[rest[0], "undo"] * pairs, *rest]


async def played(api: Api, auth: dict[str, str], actions: list[str]) -> dict[str, Any]:
    game = await api.game(auth, code=WON["code"])
    for move in actions:
        await api.act(auth, game["id"], body_of(move))
    return game


async def limited_app(
    aiohttp_client: ClientFactory, database_url: str, rate: float = RATE
) -> TestClient[Any, Any]:
    settings = Settings(
        database_url=database_url, rate_limit=rate, migrate=False, trust_forwarded=True
    )
    return await aiohttp_client(create_app(settings))


def left(response: Any) -> tuple[str, int]:
    """The budget `RateLimit` names and its `r`."""
    name, params = response.headers["RateLimit"].split(";", 1)
    r = dict(part.split("=") for part in params.split(";"))["r"]
    return name.strip('"'), int(r)


def at(address: str, **headers: str) -> dict[str, str]:
    return {"X-Forwarded-For": address, **headers}


def test_the_figures_are_documented() -> None:
    text = DOCUMENT.read_text(encoding="utf-8")
    assert f"`1 + N // {ACTIONS_PER_CHARGE}`" in text
    assert f"costs **{cost_of(5_000)}**" in text and cost_of(5_000) == 21
    assert f"page **{cost_of(1_000)}**" in text


async def test_a_long_replay_spends_more_of_the_budget_than_a_short_one(
    client: TestClient[Any, Any], api: Api, aiohttp_client: ClientFactory, database_url: str
) -> None:
    _, auth = await api.player()
    short = await played(api, auth, WON["actions"][:3])
    long = await played(api, auth, long_line(501))
    limited = await limited_app(aiohttp_client, database_url)
    where = at("198.51.100.7")

    remaining = QUOTA

    async def spent(method: str, path: str, **kw: Any) -> int:
        """What one request cost, by the `r` of its answer and of the one before."""
        nonlocal remaining
        response = await limited.request(method, path, headers=where, **kw)
        assert response.status == 200, await response.text()
        name, r = left(response)
        assert name == "anonymous", response.headers["RateLimit"]
        cost, remaining = remaining - r, r
        return cost

    long_id = long["id"]
    assert await spent("GET", f"/api/v1/games/{short['id']}/replay") == 1
    assert await spent("GET", f"/api/v1/games/{long_id}") == 1
    document = await (await client.get(f"/api/v1/games/{long_id}")).json()
    assert document["status"] == "won" and document["version"] == 501
    assert await spent("GET", f"/api/v1/games/{long_id}/replay") == cost_of(501) == 3
    # A second download (the replay kept rendered) costs as much: the charge is the size's.
    assert await spent("GET", f"/api/v1/games/{long_id}/replay") == 3
    assert await spent("GET", f"/api/v1/games/{long_id}/moves") == 3
    assert await spent("GET", f"/api/v1/games/{long_id}/moves?limit=100") == 1
    assert await spent("GET", f"/api/v1/games/{long_id}/moves?after=300") == 1
    replay = await (await client.get(f"/api/v1/games/{long_id}/replay")).json()
    assert len(replay["actions"]) == 501
    assert await spent("POST", "/api/v1/replays/verify", json=replay) == 3
    short_replay = await (await client.get(f"/api/v1/games/{short['id']}/replay")).json()
    assert await spent("POST", "/api/v1/replays/verify", json=short_replay) == 1


async def test_a_costly_read_over_the_budget_is_refused_and_a_cheap_one_still_answered(
    client: TestClient[Any, Any], api: Api, aiohttp_client: ClientFactory, database_url: str
) -> None:
    _, auth = await api.player()
    long = await played(api, auth, long_line(501))
    limited = await limited_app(aiohttp_client, database_url)
    where = at("198.51.100.8")
    game = f"/api/v1/games/{long['id']}"
    r = QUOTA
    while r > 2:  # cheap reads until 2 are left: less than the long replay's 3
        response = await limited.get(game, headers=where)
        assert response.status == 200
        _, r = left(response)
    assert r == 2
    response = await limited.get(f"{game}/replay", headers=where)
    await problem(response, 429)
    assert int(response.headers["Retry-After"]) >= 1
    assert left(response) == ("anonymous", 0)
    # The refused replay spent the one request every request costs, and nothing more...
    response = await limited.get(game, headers=where)
    assert response.status == 200 and left(response) == ("anonymous", 0)
    # ...and another address is not touched.
    response = await limited.get(f"{game}/replay", headers=at("198.51.100.9"))
    assert response.status == 200 and left(response) == ("anonymous", QUOTA - 3)


async def test_exports_stream_every_game_whole_in_batches_charged_by_their_actions(
    client: TestClient[Any, Any],
    api: Api,
    aiohttp_client: ClientFactory,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Batches of at most 40 actions: the long game is a batch alone, the short ones share.
    monkeypatch.setattr(server.services.leaderboards, "EXPORT_ACTIONS", 40)
    player_id, auth = await api.player()
    long = await played(api, auth, long_line(301))
    shorts = []
    for n in (3, 5, 30, 12):
        game = await played(api, auth, WON["actions"][:n])
        await client.post(f"/api/v1/games/{game['id']}/abandon", headers=auth)
        shorts.append(game["id"])
    ids = [long["id"], *shorts]
    replays = [await (await client.get(f"/api/v1/games/{i}/replay")).json() for i in ids]
    actions = sum(len(r["actions"]) for r in replays)
    assert actions == 301 + 3 + 5 + 30 + 12
    limited = await limited_app(aiohttp_client, database_url)

    response = await limited.get(f"/api/v1/players/{player_id}/games/export", headers=at("a"))
    assert response.status == 200, await response.text()
    assert response.headers["Content-Type"].startswith("application/x-ndjson")
    lines = (await response.read()).decode().splitlines()
    assert [json.loads(line) for line in lines] == replays  # oldest first, each log whole
    # Charged as it streamed: 1 + 351 // 250 in all, the cost of the first batch in its headers.
    assert left(response) == ("anonymous", QUOTA - cost_of(301))
    response = await limited.get("/api/v1/games/" + long["id"], headers=at("a"))
    assert left(response) == ("anonymous", QUOTA - cost_of(actions) - 1)

    response = await limited.get("/api/v1/me/export", headers=at("b", **auth))
    assert response.status == 200, await response.text()
    export = json.loads(await response.read())
    assert export["games"] == replays
    name, r = left(response)
    assert name == "player" and r == QUOTA - cost_of(301)


async def test_an_export_over_the_budget_waits_for_it_rather_than_failing_half_way(
    client: TestClient[Any, Any],
    api: Api,
    aiohttp_client: ClientFactory,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A budget of 2 requests a second: each game of 251 actions costs 1 request more than the
    first, so the second and third batches wait for the window to free up; the export still
    holds every game."""
    monkeypatch.setattr(server.services.leaderboards, "EXPORT_ACTIONS", 100)
    player_id, auth = await api.player()
    ids = [(await played(api, auth, long_line(251)))["id"] for _ in range(3)]
    limited = await limited_app(aiohttp_client, database_url, rate=2)
    response = await limited.get(f"/api/v1/players/{player_id}/games/export", headers=at("c"))
    assert response.status == 200, await response.text()
    lines = (await response.read()).decode().splitlines()
    assert [json.loads(line)["game_id"] for line in lines] == ids
    assert all(len(json.loads(line)["actions"]) == 251 for line in lines)


async def test_a_finished_games_replay_is_kept_rendered_and_follows_its_players_erasure(
    client: TestClient[Any, Any], api: Api
) -> None:
    player_id, auth = await api.player()
    game = await played(api, auth, WON["actions"])
    path = f"/api/v1/games/{game['id']}/replay"
    first = await (await client.get(path)).read()
    assert json.loads(first)["player"]["id"] == player_id
    assert any(key[0] == game["id"] for key in REPLAYS.items)
    assert await (await client.get(path)).read() == first
    response = await client.delete("/api/v1/me", headers=auth)
    assert response.status == 204, await response.text()
    erased = json.loads(await (await client.get(path)).read())
    assert erased["player"] == {"id": None, "name": None}
    assert erased["actions"] == json.loads(first)["actions"]
    # A game in play is never kept: its log and clock move.
    _, other = await api.player()
    active = await played(api, other, WON["actions"][:2])
    await client.get(f"/api/v1/games/{active['id']}/replay")
    assert not any(key[0] == active["id"] for key in REPLAYS.items)
