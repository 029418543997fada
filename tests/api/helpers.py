"""Helpers shared by the API tests: problem documents, playing move texts over HTTP, and the
cards a position hides (computed locally with the engine)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient

from server.engine import DealCode, Game, card_text, parse_action
from server.keys import SESSIONS
from tests.conftest import Api, load_data

PROBLEM_TYPE = "application/problem+json"
GAME_KEYS = {
    "id",
    "code",
    "deal_commitment",
    "rule",
    "chosen",
    "daily",
    "ranked_score",
    "race_id",
    "timed_out",
    "seed",
    "status",
    "player",
    "score",
    "moves",
    "elapsed_ms",
    "undo_available",
    "version",
    "assisted",
    "tableau",
    "foundations",
    "created_at",
    "finished_at",
}


def vectors() -> list[dict[str, Any]]:
    """The whole games of tests/data/games.json."""
    games: list[dict[str, Any]] = load_data("games.json")["games"]
    return games


def deals() -> list[dict[str, Any]]:
    """The deals of tests/data/deals.json."""
    found: list[dict[str, Any]] = load_data("deals.json")["deals"]
    return found


def action_body(text: str) -> dict[str, Any]:
    """The request body of a move text: `7H-t5` or `undo`."""
    if text == "undo":
        return {"action": "undo"}
    card, to = text.split("-")
    return {"card": card, "to": to}


def local_game(code: str, actions: list[str] | tuple[str, ...] = ()) -> Game:
    """The engine's game after `actions` on the deal of `code`."""
    game = Game.deal(DealCode.parse(code))
    for text in actions:
        game.play(parse_action(text))
    return game


def hidden_cards(game: Game) -> set[str]:
    """The two-letter texts of the face-down cards of a position."""
    return {
        card_text(card)
        for column, down in zip(game.columns, game.down, strict=True)
        for card in column[:down]
    }


def leaked(text: str, hidden: set[str]) -> list[str]:
    """The hidden cards that appear in a raw JSON text as JSON strings (`"7H"`)."""
    return sorted(card for card in hidden if json.dumps(card) in text)


def parse_iso(text: str) -> datetime:
    """A server timestamp: ISO 8601 with a time zone."""
    assert isinstance(text, str), text
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    assert moment.tzinfo is not None, text
    return moment


async def problem(response: ClientResponse, status: int) -> dict[str, Any]:
    """Checks that `response` is an RFC 9457 problem document with `status`; returns it."""
    text = await response.text()
    assert response.status == status, text
    assert response.content_type == PROBLEM_TYPE, (response.content_type, text)
    body: dict[str, Any] = json.loads(text)
    assert isinstance(body, dict), text
    for key in ("type", "title", "status", "detail"):
        assert key in body, (key, body)
    assert body["status"] == status, body
    assert isinstance(body["type"], str) and body["type"], body
    assert isinstance(body["title"], str) and body["title"], body
    assert isinstance(body["detail"], str) and body["detail"], body
    assert "Traceback" not in text
    return body


async def illegal(response: ClientResponse, rule: str) -> dict[str, Any]:
    """Checks an illegal-move refusal (422) naming `rule`; returns the problem document."""
    body = await problem(response, 422)
    assert body["type"].endswith("/problems/illegal-move"), body
    titles = {"en": "Illegal move", "ro": "Mutare nepermisă", "he": "מהלך לא חוקי"}
    assert body["title"] == titles[response.headers["Content-Language"]], body
    assert body["rule_url"] == f"/rules#rule-{rule}", body
    assert body["rule"] == rule, body
    return body


async def play(api: Api, auth: dict[str, str], game_id: str, actions: list[str]) -> Any:
    """Plays move texts in order (each must be accepted); returns the last response body."""
    result: Any = None
    for text in actions:
        result = await api.act(auth, game_id, action_body(text))
        assert result["move"] == text, (text, result["move"])
    return result


async def state(client: TestClient[Any, Any], game_id: str) -> dict[str, Any]:
    """The game as GET answers it, without `elapsed_ms` (which runs with the clock)."""
    response = await client.get(f"/api/v1/games/{game_id}")
    assert response.status == 200, await response.text()
    body: dict[str, Any] = await response.json()
    body.pop("elapsed_ms")
    return body


async def move_log(client: TestClient[Any, Any], game_id: str) -> list[dict[str, Any]]:
    response = await client.get(f"/api/v1/games/{game_id}/moves")
    assert response.status == 200, await response.text()
    moves: list[dict[str, Any]] = (await response.json())["moves"]
    return moves


@dataclass(frozen=True)
class Player:
    """A signed-up player of a test: id, name and bearer token."""

    id: str
    name: str
    token: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


async def new_player(client: TestClient[Any, Any], name: str) -> Player:
    response = await client.post("/api/v1/players", json={"name": name})
    assert response.status == 201, await response.text()
    body = await response.json()
    return Player(body["id"], name, body["token"])


def line_of(code: str, length: int) -> list[str] | None:
    """`length` legal moves from the deal of `code` (found with the engine), or None."""

    def search(game: Game, depth: int) -> list[str] | None:
        if depth == 0:
            return []
        for move in game.legal_moves():
            after = game.copy()
            after.play(move)
            rest = search(after, depth - 1)
            if rest is not None:
                return [str(move), *rest]
        return None

    return search(local_game(code), length)


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], Any]:
    """An HTTP answer read off a raw connection: its status, its headers (names in lower case)
    and its JSON body."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    body = json.loads(await reader.readexactly(int(headers["content-length"])))
    return int(lines[0].split()[1]), headers, body


async def raw(client: TestClient[Any, Any], request: bytes) -> tuple[int, dict[str, str], Any]:
    """Sends `request` as raw bytes (what no HTTP library would send) and reads the answer:
    status, headers and JSON body."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(request)
        await writer.drain()
        return await read_answer(reader)
    finally:
        writer.close()
        await writer.wait_closed()


def cross_versions_2_and_3(monkeypatch: Any, broker: Any, game_id: str) -> None:
    """Makes `broker` deliver version 2 of `game_id` after version 3, as two processes'
    changes of one game may cross on either broker (undone by `monkeypatch`)."""
    deliver = broker.deliver
    late: list[tuple[str, int, Any]] = []

    def crossing(key: str, version: int, change: Any) -> None:
        if key == game_id and version == 2:
            late.append((key, version, change))  # held back: it comes after version 3
            return
        deliver(key, version, change)
        if key == game_id and version == 3:
            deliver(*late.pop())

    monkeypatch.setattr(broker, "deliver", crossing)


@contextlib.asynccontextmanager
async def token_reads(client: TestClient[Any, Any]) -> AsyncIterator[list[str]]:
    """The token hashes whose sessions are read (`TokenReader.holder`) while it lasts."""
    tokens = client.app[SESSIONS].tokens
    assert tokens is not None
    lookups: list[str] = []
    read = tokens.holder

    async def counted(token_hash: str, now_ms: int) -> Any:
        lookups.append(token_hash)
        return await read(token_hash, now_ms)

    tokens.holder = counted  # type: ignore[method-assign]
    try:
        yield lookups
    finally:
        tokens.holder = read  # type: ignore[method-assign]
