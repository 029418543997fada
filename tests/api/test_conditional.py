"""Conditional reads (issue 20, `server/api/conditional.py`): every JSON read under `/api/` has
a strong `ETag` (a digest of its body) and answers `304` without a body to an `If-None-Match`
naming it; the tag changes whenever the body does: after a move, when a daily game's code is
revealed at its day's end without a move, and between two viewers who see different bodies."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from aiohttp.test_utils import TestClient

from server.app import create_app
from server.settings import Settings
from tests.api.boards_helpers import DAY, Clock
from tests.conftest import Api, ClientFactory
from tests.names import unique_name

DOCUMENT = Path(__file__).resolve().parents[2] / "openapi.yaml"
DEAL = "RU1-C-AAAAAFN"
FIRST = {"card": "AC", "to": "f"}  # a legal first move of DEAL


async def read(
    client: TestClient[Any, Any], path: str, tag: str | None = None, **headers: str
) -> tuple[int, str, bytes, Any]:
    """(status, ETag, body, headers) of a GET of `path`, with `If-None-Match: tag` if given."""
    if tag is not None:
        headers["If-None-Match"] = tag
    response = await client.get(path, headers=headers)
    body = await response.read()
    return response.status, response.headers.get("ETag", ""), body, response.headers


async def revalidates(client: TestClient[Any, Any], path: str, **headers: str) -> str:
    """Checks the conditional reads of `path` as it is now; its tag."""
    status, tag, body, sent = await read(client, path, **headers)
    assert status == 200, body
    bare = tag.removeprefix("W/")
    assert bare.startswith('"') and bare.endswith('"') and len(bare) == 24, tag  # 128 bits
    # A strong tag when the body has no clock in it, else weak and never kept by a cache.
    clock = re.search(rb'"(?:elapsed_ms|now)": ?', body) is not None
    assert tag.startswith("W/") == clock, (tag, body)
    cache = "no-store" if clock else "no-cache"
    assert sent["Cache-Control"] == cache
    for asked in (tag, bare, f"W/{bare}", f'"other", {tag}', "*"):
        status, again, empty, sent = await read(client, path, asked, **headers)
        assert (status, again, empty) == (304, tag, b""), (asked, status, empty)
        assert "Content-Type" not in sent and sent["Cache-Control"] == cache
    status, again, body, _ = await read(client, path, '"something-else"', **headers)
    assert (status, again) == (200, tag) and body
    return tag


async def test_304_on_an_unchanged_game_and_200_after_a_move(api: Api) -> None:
    client = api.client
    _, auth = await api.player()
    game = await api.game(auth, code=DEAL)
    paths = [f"/api/v1/games/{game['id']}{tail}" for tail in ("", "/moves", "/replay")]
    tags = {path: await revalidates(client, path) for path in paths}
    await api.act(auth, game["id"], FIRST)
    for path in paths:
        status, tag, body, _ = await read(client, path, tags[path])
        assert status == 200 and tag != tags[path] and body, (path, status)
        assert await revalidates(client, path) == tag
    status, _, body, _ = await read(client, paths[0])
    assert json.loads(body)["version"] == 1


async def test_races_boards_and_other_reads_are_conditional(api: Api) -> None:
    client = api.client
    _, auth = await api.player()
    response = await client.post("/api/v1/races", json={}, headers=auth)
    assert response.status == 201, await response.text()
    race = await response.json()
    path = f"/api/v1/races/{race['id']}"
    tag = await revalidates(client, path)
    _, other = await api.player()
    response = await client.post(f"{path}/join", headers=other)
    assert response.status == 200, await response.text()
    status, changed, _, _ = await read(client, path, tag)
    assert status == 200 and changed != tag
    player_id, _ = await api.player()
    for read_path in (
        "/api/v1/races",
        "/api/v1/leaderboards?rule=classic",
        "/api/v1/leaderboards/races",
        "/api/v1/daily",
        f"/api/v1/players/{player_id}",
        f"/api/v1/players/{player_id}/stats",
        f"/api/v1/players/{player_id}/games",
    ):
        await revalidates(client, read_path)


async def test_what_is_not_a_whole_json_read_has_no_tag(api: Api) -> None:
    client = api.client
    _, auth = await api.player()
    game = await api.game(auth, code=DEAL)
    missing = await client.get("/api/v1/games/00000000-0000-4000-8000-000000000000")
    assert missing.status == 404 and "ETag" not in missing.headers
    moved = await client.post(f"/api/v1/games/{game['id']}/moves", json=FIRST, headers=auth)
    assert moved.status == 200 and "ETag" not in moved.headers
    # A write is never answered 304, whatever it names.
    again = await client.post(
        f"/api/v1/games/{game['id']}/moves",
        json={"action": "undo"},
        headers={**auth, "If-None-Match": "*"},
    )
    assert again.status == 200 and "ETag" not in again.headers
    head = await client.head(f"/api/v1/games/{game['id']}")
    get = await client.get(f"/api/v1/games/{game['id']}")
    assert head.status == 200 and head.headers["ETag"] == get.headers["ETag"]


async def test_a_daily_codes_reveal_changes_the_tag_without_a_move(
    settings: Settings, aiohttp_client: ClientFactory
) -> None:
    """The version stays, the body does not: the code appears when the game's UTC day ends.
    And a viewer who sees more (the player, with its token) has its own tag."""
    clock = Clock()
    client = await aiohttp_client(create_app(settings, clock=clock))
    api = Api(client)
    clock.now -= DAY  # a player made the day before, whose daily game is not practice
    player_id, auth = await api.player(unique_name("daily"))
    clock.now += DAY
    game = await api.game(auth, daily=True)
    path = f"/api/v1/games/{game['id']}"
    hidden = await revalidates(client, path, **auth)
    assert (await client.get(path)).status == 403  # nobody else sees it today
    games = f"/api/v1/players/{player_id}/games"
    theirs = await revalidates(client, games, **auth)
    anyone = await revalidates(client, games)
    assert theirs != anyone  # the player's list holds the daily game, anyone's does not
    status, _, _, _ = await read(client, games, anyone, **auth)
    assert status == 200

    clock.now += DAY  # the day has ended: the same version, the code revealed
    status, revealed, body, _ = await read(client, path, hidden, **auth)
    assert status == 200 and revealed != hidden, body
    assert json.loads(body)["code"] is not None and json.loads(body)["version"] == 0
    assert await revalidates(client, path) == revealed  # anyone sees the same body now


async def test_the_clock_alone_changes_no_tag(
    settings: Settings, aiohttp_client: ClientFactory
) -> None:
    """An active game's elapsed_ms and a race's now grow with the clock: the tag stays (weak),
    so that a client polling an unchanged game or race gets 304; a move changes it."""
    clock = Clock()
    client = await aiohttp_client(create_app(settings, clock=clock))
    api = Api(client)
    _, auth = await api.player()
    game = await api.game(auth, code=DEAL)
    await api.act(auth, game["id"], FIRST)
    path = f"/api/v1/games/{game['id']}"
    response = await client.get(path)
    before, tag = (await response.json())["elapsed_ms"], response.headers["ETag"]
    response = await client.post("/api/v1/races", json={}, headers=auth)
    race_path = f"/api/v1/races/{(await response.json())['id']}"
    race_tag = await revalidates(client, race_path)
    clock.now += 5_000
    response = await client.get(path)
    assert (await response.json())["elapsed_ms"] == before + 5_000
    assert response.headers["ETag"] == tag and tag.startswith("W/")
    assert (await read(client, path, tag))[0] == 304
    assert (await read(client, race_path, race_tag))[0] == 304
    await api.act(auth, game["id"], {"action": "undo"})
    assert (await read(client, path, tag))[0] == 200


def test_the_document_has_conditional_reads_on_every_json_read() -> None:
    """Every GET under /api/ whose 200 is a JSON document (the exports aside: no-store)
    documents If-None-Match, its ETag and the 304, as the middleware answers them."""
    document = yaml.safe_load(DOCUMENT.read_text(encoding="utf-8"))
    reads = 0
    for path, item in document["paths"].items():
        operation = item.get("get")
        if not path.startswith("/api/") or operation is None:
            continue
        ok = operation["responses"].get("200", {})
        if "application/json" not in ok.get("content", {}) or "export" in path:
            continue
        reads += 1
        names = {p.get("$ref", "").rsplit("/", 1)[-1] for p in operation.get("parameters", [])}
        assert "IfNoneMatch" in names, path
        assert "ETag" in ok["headers"], path
        assert operation["responses"]["304"] == {"$ref": "#/components/responses/NotModified"}
    assert reads >= 15
