"""Costly work off the event loop, bounded and fair, and bounded reads (issue 14, items 1 and 4).

The solver runs for real in worker processes. A search that runs long enough to hold a lane is
that of a relaxed deal whose search branches widely (`SLOW_DEAL`) under a raised node budget;
the tests wait for the server's own state (a job pending in a lane) rather than for a time.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

import server.services.deals
import server.services.games
from server.keys import SOLVER
from server.services.values import MAX_ACTIONS
from server.services.workers import PER_ADDRESS
from tests.api.helpers import problem
from tests.conftest import Api
from tests.names import unique_name

SLOW_DEAL = "RU1-R-AAAABOC"
"""About 6,500 nodes a second: 200,000 nodes keep a worker busy for half a minute."""
QUICK_DEAL = "RU1-C-AAAAAFN"
GAMES = json.loads((Path(__file__).parent.parent / "data" / "games.json").read_text())["games"]


@pytest.fixture
def slow_search(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(server.services.deals, "DEAL_NODES", 200_000)
    yield


async def until(condition: Any) -> None:
    """Waits until `condition()` holds (the server's state, not a time)."""
    for _ in range(600):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the condition never held")


def verdict(client: TestClient[Any, Any], code: str, **headers: str) -> Any:
    return client.get(f"/api/v1/deals/{code}/winnable", headers=headers)


async def test_a_flood_of_verdicts_cannot_starve_a_players_hint(
    client: TestClient[Any, Any], api: Api, slow_search: None
) -> None:
    work = client.app[SOLVER].work
    work.public.capacity = 1  # one anonymous search fills the public lane
    slow = asyncio.ensure_future(verdict(client, SLOW_DEAL))
    await until(lambda: work.public.pending == 1)
    # The public lane is full: another anonymous client is told to come back...
    _, other = await api.player(unique_name("other"))
    response = await verdict(client, "RU1-R-AAAABOD", **other)
    body = await problem(response, 503)
    assert int(response.headers["Retry-After"]) >= 1, body
    # ...while a player's hint is answered from its own lane, the search still running.
    _, auth = await api.player(unique_name("hinted"))
    game = await api.game(auth, code=QUICK_DEAL)
    response = await client.get(f"/api/v1/games/{game['id']}/hint", headers=auth)
    assert response.status == 200, await response.text()
    assert (await response.json())["status"] == "winnable"
    assert work.public.pending == 1 and not slow.done()
    slow.cancel()


async def test_one_costly_request_at_a_time_per_client(
    client: TestClient[Any, Any], api: Api, slow_search: None
) -> None:
    work = client.app[SOLVER].work
    slow = asyncio.ensure_future(verdict(client, SLOW_DEAL))
    await until(lambda: work.public.pending == 1)
    # The same address, anonymous: its previous costly request is still running.
    response = await verdict(client, QUICK_DEAL)
    await problem(response, 429)
    assert response.headers["Retry-After"] == "1"
    response = await client.post("/api/v1/replays/verify", json={"code": QUICK_DEAL, "actions": []})
    await problem(response, 429)
    # A player is another client: its request goes ahead, into the lane behind the search.
    _, auth = await api.player(unique_name("player"))
    queued = asyncio.ensure_future(verdict(client, QUICK_DEAL, **auth))
    await until(lambda: work.public.pending == 2)
    assert not slow.done() and not queued.done()
    slow.cancel()
    queued.cancel()


async def test_players_signed_up_by_one_address_share_its_costly_requests(
    client: TestClient[Any, Any], api: Api, slow_search: None
) -> None:
    """However many players an address signs up, it has at most PER_ADDRESS costly requests in
    flight: sign-ups cannot fill a lane."""
    work = client.app[SOLVER].work
    asked = []
    for n in range(PER_ADDRESS):
        _, auth = await api.player(unique_name(f"sybil{n}"))
        asked.append(asyncio.ensure_future(verdict(client, f"RU1-R-AAAABO{'CDEF'[n]}", **auth)))
        await until(lambda n=n: work.public.pending == n + 1)
    _, auth = await api.player(unique_name("one-more"))
    response = await verdict(client, QUICK_DEAL, **auth)
    body = await problem(response, 429)
    assert str(PER_ADDRESS) in body["detail"], body
    assert response.headers["RateLimit"] == '"costly-address";r=0;t=1'
    assert f'"costly-address";q={PER_ADDRESS}' in response.headers["RateLimit-Policy"]
    assert work.public.pending == PER_ADDRESS
    for task in asked:
        task.cancel()


async def test_a_verdict_that_outlives_its_wait_is_stored_with_its_budget(
    client: TestClient[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server.services.deals, "DEAL_NODES", 15_000)
    monkeypatch.setattr(server.services.deals, "CALL_SECONDS", 0.2)
    work = client.app[SOLVER].work
    response = await verdict(client, SLOW_DEAL)
    await problem(response, 503)
    assert response.headers["Retry-After"]
    # Asked again while it runs: the same search is joined, not started again.
    while True:
        response = await verdict(client, SLOW_DEAL)
        if response.status == 200:
            break
        await problem(response, 503)
        assert work.public.jobs == 1
        await asyncio.sleep(0.2)
    found = await response.json()
    assert (found["status"], found["nodes"]) == ("unknown", 15_000)
    # From now on it is answered from the store: no search at all.
    response = await verdict(client, SLOW_DEAL)
    assert await response.json() == found
    assert work.public.jobs == 1


async def test_replays_longer_than_the_action_limit_are_refused(
    client: TestClient[Any, Any],
) -> None:
    actions = [{"move": "u"}] * (MAX_ACTIONS + 1)
    body = {"code": QUICK_DEAL, "actions": actions}
    response = await client.post("/api/v1/replays/verify", json=body)
    found = await problem(response, 422)
    assert [error["field"] for error in found["errors"]] == ["actions"], found
    assert client.app[SOLVER].work.public.jobs == 0


async def test_a_replay_is_verified_in_a_worker(client: TestClient[Any, Any]) -> None:
    won = GAMES[0]
    body = {"code": won["code"], "actions": won["actions"]}
    response = await client.post("/api/v1/replays/verify", json=body)
    assert response.status == 200, await response.text()
    found = await response.json()
    assert (found["valid"], found["status"], found["score"]) == (True, "won", won["score"])
    assert client.app[SOLVER].work.public.jobs == 1


async def test_a_game_ends_abandoned_at_the_action_limit(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server.services.games, "MAX_ACTIONS", 6)
    won = GAMES[0]
    _, auth = await api.player(unique_name("long"))
    game = await api.game(auth, code=won["code"])
    for text in won["actions"][:5]:
        card, to = text.split("-")
        result = await api.act(auth, game["id"], {"card": card, "to": to})
        assert result["game"]["status"] == "active"
    card, to = won["actions"][5].split("-")
    result = await api.act(auth, game["id"], {"card": card, "to": to})
    assert (result["move"], result["game"]["status"], result["game"]["version"]) == (
        won["actions"][5],
        "abandoned",
        6,
    )
    card, to = won["actions"][6].split("-")
    refused = await api.act(auth, game["id"], {"card": card, "to": to}, status=422)
    assert refused["rule"] == "game_over", refused


async def test_the_move_log_is_paged(client: TestClient[Any, Any], api: Api) -> None:
    won = GAMES[0]
    _, auth = await api.player(unique_name("paged"))
    game = await api.game(auth, code=won["code"])
    for text in won["actions"][:5]:
        card, to = text.split("-")
        await api.act(auth, game["id"], {"card": card, "to": to})
    base = f"/api/v1/games/{game['id']}/moves"
    whole = await api.get(base)
    assert [m["move"] for m in whole["moves"]] == won["actions"][:5]
    assert (whole["next"], whole["version"]) == (None, 5)
    pages, after = [], 0
    while after is not None:
        page = await api.get(f"{base}?limit=2&after={after}")
        assert len(page["moves"]) <= 2
        pages.append(page["moves"])
        after = page["next"]
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [m for p in pages for m in p] == whole["moves"]
    for query in ("limit=0", "limit=1001", "after=-1", "after=x", "limit=2&extra=1"):
        await problem(await client.get(f"{base}?{query}"), 422)
