"""Signed cursors (issue 14): every cursor the API gives out is signed by the server, a cursor
that fails the check or belongs to another list is refused (422), and the rank shown after a
cursor is counted by the server, never read from the cursor."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from sqlalchemy import func, insert, select
from yarl import URL

from server.app import create_app
from server.settings import Settings
from server.store.models import Rating, ServerSecret
from tests.api.boards_helpers import NOW, Db
from tests.api.helpers import problem
from tests.conftest import Api, ClientFactory

BOARDS = "/api/v1/leaderboards"
LIVE = "/api/v1/live/games"
RACES = "/api/v1/races"
RACE_BOARD = "/api/v1/leaderboards/races"


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Db]:
    found = Db(database_url)
    yield found
    await found.close()


def unpack(cursor: str) -> Any:
    return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))


def pack(data: Any) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def forgeries(cursor: str) -> list[str]:
    """Cursors made from a real one: one byte changed, a value changed under the real
    signature, the signature dropped or made up, and one in the old unsigned form."""
    raw = bytearray(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    data = unpack(cursor)
    out = []
    for index in (len(raw) // 3, len(raw) - 5):  # in the values, in the signature
        changed = raw.copy()
        changed[index] = changed[index] ^ 0x01
        out.append(base64.urlsafe_b64encode(bytes(changed)).decode().rstrip("="))
    first = data["v"][0]
    moved = [first + 1 if isinstance(first, int | float) else first + "0", *data["v"][1:]]
    out.append(pack({**data, "v": moved}))
    out.append(pack({"v": data["v"], "b": data["b"]}))
    out.append(pack({**data, "s": "A" * 43}))
    out.append(pack({"v": [*data["v"], 1], "b": data["b"]}))  # the unsigned cursor with a rank
    out.append(pack({**data, "x": 1}))
    return out


async def next_of(client: TestClient[Any, Any], path: str, **params: Any) -> str:
    response = await client.get(str(URL(path).with_query(params)))
    assert response.status == 200, await response.text()
    cursor = (await response.json())["next"]
    assert isinstance(cursor, str) and cursor
    return cursor


async def refused(client: TestClient[Any, Any], path: str, **params: Any) -> None:
    response = await client.get(str(URL(path).with_query(params)))
    body = await problem(response, 422)
    assert body["type"].endswith("/problems/validation-error"), body
    assert [e["field"] for e in body["errors"]] == ["after"], body


async def page(client: TestClient[Any, Any], path: str, **params: Any) -> dict[str, Any]:
    response = await client.get(str(URL(path).with_query(params)))
    assert response.status == 200, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def add_ratings(db: Db, players: list[str], rule: str = "classic") -> None:
    async with db.engine.begin() as connection:
        for index, player in enumerate(players):
            mu = 30.0 - index
            await connection.execute(
                insert(Rating).values(
                    player_id=player, rule=rule, mu=mu, sigma=2.0, ordinal=mu - 6, races=1 + index
                )
            )


async def lists(client: TestClient[Any, Any], api: Api, db: Db) -> dict[str, tuple[str, str]]:
    """Every paged list with two pages at least: name -> (path, cursor of its first page)."""
    ids = []
    for name in ("Ana", "Bob", "Cyd"):
        player_id, auth = await api.player(name)
        ids.append(player_id)
        await api.game(auth)  # a game in play: the live list
        for score in (100, 200):
            await db.add(player_id, status="abandoned", score=score, finished_ms=NOW - score)
        response = await client.post(RACES, json={"winnable": False}, headers=auth)
        assert response.status == 201, await response.text()
    await add_ratings(db, ids)
    paths = {
        "board": BOARDS,
        "games": f"/api/v1/players/{ids[0]}/games",
        "live": LIVE,
        "races": RACES,
        "race board": RACE_BOARD,
    }
    return {name: (path, await next_of(client, path, limit=1)) for name, path in paths.items()}


async def test_a_forged_cursor_is_refused_on_every_list(
    client: TestClient[Any, Any], api: Api, db: Db
) -> None:
    found = await lists(client, api, db)
    for path, cursor in found.values():
        await page(client, path, limit=1, after=cursor)  # the real one is accepted
        for forged in forgeries(cursor):
            await refused(client, path, limit=1, after=forged)


async def test_a_cursor_of_one_list_is_refused_on_another(
    client: TestClient[Any, Any], api: Api, db: Db
) -> None:
    found = await lists(client, api, db)
    for name, (_, cursor) in found.items():
        for other, (path, _) in found.items():
            if other != name:
                await refused(client, path, limit=1, after=cursor)
    board_cursor = found["board"][1]
    for params in ({"by": "time"}, {"rule": "relaxed"}, {"period": "week"}, {"assisted": "true"}):
        await refused(client, BOARDS, limit=1, after=board_cursor, **params)
    games_path, games_cursor = found["games"]
    ana = games_path.split("/")[-2]
    entries = (await page(client, BOARDS, limit=100))["entries"]
    other = next(e["player"]["id"] for e in entries if e["player"]["id"] != ana)
    await refused(client, f"/api/v1/players/{other}/games", limit=1, after=games_cursor)
    await refused(client, games_path, limit=1, after=games_cursor, status="won")
    await refused(client, RACE_BOARD, limit=1, after=found["race board"][1], rule="relaxed")


def ranks(body: dict[str, Any], key: str = "game_id") -> dict[str, int]:
    return {
        entry[key] if key == "game_id" else entry["player"]["id"]: entry["rank"]
        for entry in body["entries"]
    }


async def walk(client: TestClient[Any, Any], path: str, limit: int) -> list[dict[str, Any]]:
    pages = [await page(client, path, limit=limit)]
    while pages[-1]["next"]:
        pages.append(await page(client, path, limit=limit, after=pages[-1]["next"]))
    return pages


async def test_the_rank_after_a_cursor_is_the_rank_on_a_full_page(
    client: TestClient[Any, Any], api: Api, db: Db
) -> None:
    ids = []
    for name in ("Ana", "Bob", "Cyd", "Dan", "Eve"):
        player_id, _ = await api.player(name)
        ids.append(player_id)
        for score in (100, 300, 300):  # ties too: broken by the finish, then the id
            await db.add(player_id, status="abandoned", score=score, finished_ms=NOW - score)
    await add_ratings(db, ids)
    for path, key in ((BOARDS, "game_id"), (RACE_BOARD, "player")):
        full = ranks(await page(client, path, limit=100), key)
        assert sorted(full.values()) == list(range(1, len(full) + 1))
        for limit in (1, 2, 4):
            walked: dict[str, int] = {}
            for body in await walk(client, path, limit):
                walked.update(ranks(body, key))
            assert walked == full, (path, limit)

    # The rank is the server's count, not something a cursor remembers: a game that goes
    # ahead of the cursor's entry after the cursor was given out moves the next page down.
    first = await page(client, BOARDS, limit=2)
    best, _ = await api.player("Fay")
    await db.add(best, status="won", finished_ms=NOW - 1)
    after = await page(client, BOARDS, limit=2, after=first["next"])
    now_full = ranks(await page(client, BOARDS, limit=100))
    assert ranks(after) == {game: now_full[game] for game in ranks(after)}
    assert min(ranks(after).values()) == 4


async def test_a_cursor_of_one_process_is_good_on_another(
    settings: Settings, aiohttp_client: ClientFactory, database_url: str, db: Db
) -> None:
    """Every process on one database signs with the same key: the one stored in it."""
    one = await aiohttp_client(create_app(settings))
    two = await aiohttp_client(create_app(settings))
    player_id, _ = await Api(one).player("Ana")
    for score in (100, 200, 300):
        await db.add(player_id, status="abandoned", score=score, finished_ms=NOW - score)
    cursor = await next_of(one, BOARDS, limit=1)
    body = await page(two, BOARDS, limit=1, after=cursor)
    assert [e["rank"] for e in body["entries"]] == [2]
    async with db.engine.connect() as connection:
        count = await connection.scalar(
            select(func.count())
            .select_from(ServerSecret)
            .where(ServerSecret.name == "cursor_secret")
        )
    assert count == 1
