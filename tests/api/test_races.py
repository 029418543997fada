"""Races (SPEC 2.6.1; issue 13), in one process, on both databases, with a clock the test moves.

A whole race: created (a certified deal), joined until full (the countdown), an early action
refused, the racers' games hidden from everyone else (every route, the listings, the export, the
WebSocket, the live list), no hints; then moves, the standings after each one (over HTTP and to a
spectator watching the race over the WebSocket), two racers winning, one quitting in the
countdown, one timed out by the server on its own at the deadline; places, the code revealed and
matching the commitment, replays that verify, and ratings moved the right way (standings,
statistics, the race board). The end of the countdown is pushed to spectators; an open race left
30 minutes is cancelled; exact ties share a place; a race whose games have all ended ends at
once; nothing lands at the deadline even before the server has ended the race. Bad input and
refused seat changes are clear 4xx problems that change nothing; public races are listed newest
first, paged.

The race's deal is a secret: it is read straight from the `races` table (`Db`), and every
response or message to anyone but the racer (the race documents included) is checked for it, in
every form, and for any card at all (standings carry progress only).

Each app here reads the test's clock (`Clock`); its race service still ticks once a second of
real time, so after a jump of the clock past a deadline the server ends the race by itself
within a second or two.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp import ClientResponse, WSMsgType
from aiohttp.test_utils import TestClient
from openskill.models import PlackettLuce
from sqlalchemy import func, select

from server.engine import CARDS, DealCode, Rule, card_text, commitment
from server.engine import seeds as hmac_seeds
from server.engine.cards import FOUNDATION
from server.engine.solver import SolveStatus, solve_deal
from server.keys import RACES, SEEDS
from server.store.db import make_engine
from server.store.models import MoveRow, Race, RacePlayer, Rating
from tests.api.boards_helpers import NOW, Clock, get_page
from tests.api.helpers import (
    Player,
    action_body,
    line_of,
    local_game,
    new_player,
    parse_iso,
    problem,
)

LIVE = "/api/v1/live"
SUBPROTOCOL = "solitaire.v1"
WS_TIMEOUT = 10.0
COUNTDOWN_MS = 5_000
SETTLE_S = 2.5
"""How long the server may take to end a due race by itself (SPEC: 2 s; the tick is 1 s)."""

RACE_KEYS = {
    "id",
    "rule",
    "status",
    "seats",
    "public",
    "winnable",
    "time_limit_s",
    "creator",
    "players",
    "created_at",
    "starts_at",
    "ended_at",
    "now",
    "deal_commitment",
    "code",
    "server_seed_hash",
    "server_seed",
    "client_seeds",
    "candidate",
    "games",
    "standings",
}
STANDING_KEYS = {
    "player",
    "status",
    "foundation_cards",
    "ranked_score",
    "moves",
    "elapsed_ms",
    "finished_at",
    "place",
}
MODEL = PlackettLuce()


# ---------------------------------------------------------------- fixtures


class Db:
    """The test database read (and counted) directly, beside the app."""

    def __init__(self, url: str) -> None:
        self.engine = make_engine(url, pool_size=1)

    async def close(self) -> None:
        await self.engine.dispose()

    async def scalar(self, query: Any) -> Any:
        async with self.engine.connect() as connection:
            return (await connection.execute(query)).scalar_one()

    async def race_code(self, race_id: str) -> str | None:
        """The race's code: None until its countdown begins (fixed from the racers' seeds)."""
        code: str | None = await self.scalar(select(Race.code).where(Race.id == race_id))
        return code

    async def sealed_seed(self, race_id: str) -> str:
        sealed: str = await self.scalar(select(Race.server_seed).where(Race.id == race_id))
        return sealed

    async def race_version(self, race_id: str) -> int:
        version: int = await self.scalar(select(Race.version).where(Race.id == race_id))
        return version

    async def race_status(self, race_id: str) -> str:
        status: str = await self.scalar(select(Race.status).where(Race.id == race_id))
        return status

    async def races(self) -> int:
        count: int = await self.scalar(select(func.count()).select_from(Race))
        return count

    async def seats(self) -> int:
        count: int = await self.scalar(select(func.count()).select_from(RacePlayer))
        return count

    async def moves(self, game_id: str) -> int:
        count: int = await self.scalar(
            select(func.count()).select_from(MoveRow).where(MoveRow.game_id == game_id)
        )
        return count

    async def ratings(self) -> dict[tuple[str, str], tuple[float, float, float, int]]:
        async with self.engine.connect() as connection:
            query = select(
                Rating.player_id, Rating.rule, Rating.mu, Rating.sigma, Rating.ordinal, Rating.races
            )
            rows = (await connection.execute(query)).all()
        return {(row[0], row[1]): (row[2], row[3], row[4], row[5]) for row in rows}


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


async def players(client: TestClient[Any, Any], *names: str) -> list[Player]:
    return [await new_player(client, name) for name in names]


# ---------------------------------------------------------------- secrets and leaks


CARD_STRINGS = {json.dumps(card_text(card)): card_text(card) for card in CARDS}


def code_forms(code: str) -> list[str]:
    """Every form in which a code could leak: the code, its seed with and without dashes, each
    7-letter group of the seed; upper and lower case."""
    seed = code.split("-", 2)[2]
    forms = {code, seed, seed.replace("-", ""), *seed.split("-")}
    return sorted(forms | {form.lower() for form in forms}, key=lambda form: (-len(form), form))


class Guard:
    """The race's secret deal: what no response to anyone but a racer about their own game may
    show while the race runs: the code, in any form, and any card at all."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.forms = code_forms(code)
        self.checked = 0

    def check(self, what: str, text: str, *, code: bool = True) -> None:
        self.checked += 1
        if code:
            shown = [form for form in self.forms if form in text]
            assert not shown, f"{what}: shows the secret code as {shown[0]!r}: {text[:600]}"
        cards = sorted(card for quoted, card in CARD_STRINGS.items() if quoted in text)
        assert not cards, f"{what}: shows cards {cards}: {text[:600]}"


# ---------------------------------------------------------------- the WebSocket


class Socket:
    """One WebSocket connection: JSON out, JSON in; every message in is checked by `guard`
    (a finished race's document may show the code, never a card)."""

    def __init__(self, ws: Any, guard: Guard | None) -> None:
        self.ws = ws
        self.guard = guard

    @classmethod
    async def open(
        cls, client: TestClient[Any, Any], player: Player | None, guard: Guard | None = None
    ) -> Socket:
        headers = player.auth if player is not None else {}
        ws = await client.ws_connect(LIVE, headers=headers, protocols=(SUBPROTOCOL,))
        return cls(ws, guard)

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send_str(json.dumps(message))

    async def receive(self, timeout: float = WS_TIMEOUT) -> dict[str, Any]:
        msg = await self.ws.receive(timeout)
        assert msg.type == WSMsgType.TEXT, (msg.type, msg.data)
        body: dict[str, Any] = json.loads(msg.data)
        if self.guard is not None:
            race = body.get("race") or {}
            finished = race.get("status") == "finished"
            self.guard.check(f"WebSocket {body.get('type')}", msg.data, code=not finished)
        return body

    async def until(
        self, wanted: Callable[[dict[str, Any]], bool], timeout: float = WS_TIMEOUT
    ) -> dict[str, Any]:
        """The first message (from now) that is `wanted`; the others are checked and passed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            left = deadline - loop.time()
            assert left > 0, "the wanted message did not come"
            body = await self.receive(left)
            if wanted(body):
                return body

    async def quiet(self, seconds: float) -> None:
        """No message comes within `seconds`."""
        try:
            msg = await self.ws.receive(seconds)
        except TimeoutError:
            return
        raise AssertionError(f"unexpected message: {msg.data}")

    async def close(self) -> None:
        await self.ws.close()


def race_message(race_id: str, wanted: Callable[[dict[str, Any]], bool]) -> Any:
    """A predicate: a `race` message of `race_id` whose document is `wanted`."""

    def check(body: dict[str, Any]) -> bool:
        if body["type"] != "race":
            return False
        assert body["race_id"] == race_id and body["race"]["id"] == race_id, body
        assert isinstance(body["version"], int), body
        return wanted(body["race"])

    return check


# ---------------------------------------------------------------- races over HTTP


def at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def moment(text: str | None) -> int | None:
    """Epoch milliseconds of a server timestamp (None stays None)."""
    if text is None:
        return None
    return round(parse_iso(text).timestamp() * 1000)


async def create(
    client: TestClient[Any, Any], player: Player, **body: Any
) -> tuple[dict[str, Any], ClientResponse]:
    response = await client.post("/api/v1/races", json=body, headers=player.auth)
    assert response.status == 201, await response.text()
    race: dict[str, Any] = await response.json()
    check_document(race)
    return race, response


async def seat(
    client: TestClient[Any, Any], race_id: str, op: str, player: Player
) -> dict[str, Any]:
    """join, leave or start, which must be accepted."""
    response = await client.post(f"/api/v1/races/{race_id}/{op}", headers=player.auth)
    assert response.status == 200, (op, await response.text())
    race: dict[str, Any] = await response.json()
    check_document(race)
    return race


async def read(
    client: TestClient[Any, Any], race_id: str, headers: dict[str, str] | None = None
) -> tuple[dict[str, Any], str]:
    response = await client.get(f"/api/v1/races/{race_id}", headers=headers or {})
    text = await response.text()
    assert response.status == 200, text
    race: dict[str, Any] = json.loads(text)
    check_document(race)
    return race, text


def check_document(race: dict[str, Any]) -> None:
    """The race document's shape (SPEC 2.6.1)."""
    assert set(race) == RACE_KEYS, sorted(race)
    assert race["status"] in ("open", "starting", "running", "finished", "cancelled"), race
    # The deal is fixed when the countdown begins (from the racers' seeds, SPEC 1.8.2).
    started = race["starts_at"] is not None
    assert (race["deal_commitment"] is not None) == started, race
    assert race["deal_commitment"] is None or len(race["deal_commitment"]) == 64, race
    assert (race["code"] is None) == (race["status"] != "finished"), race
    assert len(race["server_seed_hash"]) == 64, race
    finished = race["status"] == "finished"
    assert (race["server_seed"] is not None) == finished, race
    assert (race["client_seeds"] is not None) == finished, race
    if not finished:
        assert race["candidate"] is None, race
    if race["status"] in ("open", "cancelled") and not race["games"]:
        assert race["standings"] == [] and race["starts_at"] is None, race
    for entry in race["standings"]:
        # A finished race's entry has the racer's `rating` change when the race rated them
        # (it rates only the racers who moved: tests/api/test_race_ratings.py).
        rating = {"rating"} if race["status"] == "finished" else set()
        assert STANDING_KEYS <= set(entry) <= STANDING_KEYS | rating, entry
    assert race["players"] == [{"id": p["id"], "name": p["name"]} for p in race["players"]]


def unchanged(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Two readings of a race are the same race (the server's clock aside)."""
    assert {**before, "now": None} == {**after, "now": None}


def standing(race: dict[str, Any], player: Player) -> dict[str, Any]:
    found = [s for s in race["standings"] if s["player"]["id"] == player.id]
    assert len(found) == 1, race["standings"]
    return found[0]


def places(race: dict[str, Any]) -> dict[str, int]:
    return {s["player"]["name"]: s["place"] for s in race["standings"]}


def progress(code: str, actions: list[str]) -> dict[str, int]:
    """A racer's progress after `actions`, from the engine: what the standings show."""
    game = local_game(code, actions)
    cards = sum(1 for card in CARDS if game.where[card] == FOUNDATION)
    return {"foundation_cards": cards, "ranked_score": game.ranked_score, "moves": game.moves}


def shown_progress(entry: dict[str, Any]) -> dict[str, int]:
    return {key: entry[key] for key in ("foundation_cards", "ranked_score", "moves")}


async def client_seed(client: TestClient[Any, Any], player: Player) -> str:
    response = await client.get("/api/v1/me/seeds", headers=player.auth)
    assert response.status == 200, await response.text()
    seed: str = (await response.json())["client_seed"]
    return seed


async def coming_code(
    client: TestClient[Any, Any], db: Db, race: dict[str, Any], racers: list[Player]
) -> str:
    """The code that a plain race will have when `racers` start it (SPEC 1.8.2): the HMAC of
    its server seed (opened from the database with the app's key, as the server does) over
    their client seeds."""
    server_seed = client.app[SEEDS].box.open(
        await db.sealed_seed(race["id"]), race["server_seed_hash"]
    )
    seeds = [await client_seed(client, p) for p in racers]
    message = hmac_seeds.race_message(seeds)
    return str(hmac_seeds.seeded_code(server_seed, message, Rule(race["rule"])))


async def race_with_line(
    client: TestClient[Any, Any],
    db: Db,
    creator: Player,
    length: int,
    others: list[Player],
    **body: Any,
) -> tuple[dict[str, Any], str, list[str]]:
    """A new open race (`winnable: false`, fast) whose deal, once `creator` and `others` sit
    in it, has `length` legal moves in a row: (the race, its coming secret code, the moves). A
    deal without them (rare) is given up: its creator leaves, which cancels it, and another
    race is created (with another server seed)."""
    for _ in range(20):
        race, _ = await create(client, creator, winnable=False, **body)
        code = await coming_code(client, db, race, [creator, *others])
        line = line_of(code, length)
        if line is not None:
            return race, code, line
        await seat(client, race["id"], "leave", creator)
    raise AssertionError("no deal with a line of moves")


async def act(
    client: TestClient[Any, Any], player: Player, game_id: str, text: str
) -> dict[str, Any]:
    response = await client.post(
        f"/api/v1/games/{game_id}/moves", json=action_body(text), headers=player.auth
    )
    assert response.status == 200, (text, await response.text())
    body: dict[str, Any] = await response.json()
    assert body["move"] == text, body
    return body


async def refused(response: ClientResponse, status: int, rule: str | None = None) -> str:
    """A problem with `status` (and a `rule`); returns its raw text."""
    body = await problem(response, status)
    if rule is not None:
        assert body.get("rule") == rule, body
        assert body["type"].endswith("/problems/race-conflict"), body
    return json.dumps(body)


async def get_text(
    client: TestClient[Any, Any], path: str, headers: dict[str, str] | None = None
) -> tuple[int, str]:
    response = await client.get(path, headers=headers or {})
    return response.status, await response.text()


# ---------------------------------------------------------------- secrecy of a racer's game


async def hidden_from_others(
    client: TestClient[Any, Any],
    guard: Guard,
    owner: Player,
    game_id: str,
    others: list[Player],
) -> None:
    """While the race runs, `game_id` (the owner's race game) is 403 for everyone else on every
    route and over the WebSocket, absent from the owner's listing and export as others see them
    and from the live list; to its owner it shows no code."""
    base = f"/api/v1/games/{game_id}"
    viewers = [("anyone", {})] + [(p.name, p.auth) for p in others]
    for who, headers in viewers:
        for path in (base, f"{base}/moves", f"{base}/replay", f"{base}/targets?card=AS"):
            response = await client.get(path, headers=headers)
            guard.check(f"GET {path} by {who}", await refused(response, 403))
        path = f"/api/v1/players/{owner.id}/games"
        status, text = await get_text(client, path, headers)
        assert status == 200, text
        assert game_id not in text, (who, text)
        guard.check(f"GET {path} by {who}", text)
        status, text = await get_text(client, f"{path}/export", headers)
        assert status == 200, text
        assert game_id not in text, (who, text)
        guard.check(f"GET {path}/export by {who}", text)
    for other in others:
        for method, path, body in (
            ("POST", f"{base}/moves", {"card": "AS", "to": "f"}),
            ("POST", f"{base}/abandon", None),
            ("GET", f"{base}/hint", None),
        ):
            response = await client.request(method, path, json=body, headers=other.auth)
            guard.check(f"{method} {path} by {other.name}", await refused(response, 403))
        socket = await Socket.open(client, other, guard)
        await socket.send({"type": "watch", "id": "w", "game_id": game_id})
        message = await socket.receive()
        assert message["type"] == "error" and message["problem"]["status"] == 403, message
        await socket.close()
    socket = await Socket.open(client, None, guard)
    await socket.send({"type": "watch", "id": "w", "game_id": game_id})
    message = await socket.receive()
    assert message["type"] == "error" and message["problem"]["status"] == 403, message
    await socket.close()

    status, text = await get_text(client, "/api/v1/live/games?limit=100")
    assert status == 200, text
    assert game_id not in text, text
    for code_form in guard.forms:
        assert code_form not in text, text
    # Its racer sees it, without its code.
    mine = await client.get(base, headers=owner.auth)
    assert mine.status == 200, await mine.text()
    game = await mine.json()
    assert game["code"] is None, game
    status, text = await get_text(client, f"/api/v1/players/{owner.id}/games", owner.auth)
    entries = [g for g in json.loads(text)["games"] if g["id"] == game_id]
    assert len(entries) == 1 and entries[0]["code"] is None, text
    for code_form in guard.forms:
        assert code_form not in text, text


# ---------------------------------------------------------------- a whole race


@pytest.mark.slow
async def test_a_whole_race(client: TestClient[Any, Any], clock: Clock, db: Db) -> None:
    ana, ben, cat, eve, dan = await players(client, "ana", "ben", "cat", "eve", "dan")
    racers = [ana, ben, cat, eve]
    # dan plays an ordinary game, so that the live list is not empty.
    response = await client.post("/api/v1/games", json={}, headers=dan.auth)
    assert response.status == 201
    dan_game = (await response.json())["id"]

    # Created with every default: classic, 4 seats, winnable, 600 s, public.
    race, response = await create(client, ana)
    race_id = race["id"]
    assert response.headers["Location"] == f"/api/v1/races/{race_id}"
    assert race["rule"] == "classic" and race["seats"] == 4, race
    assert (race["winnable"], race["public"], race["time_limit_s"]) == (True, True, 600), race
    assert race["status"] == "open", race
    assert race["creator"] == {"id": ana.id, "name": "ana"}, race
    assert race["players"] == [{"id": ana.id, "name": "ana"}], race
    assert (race["games"], race["standings"]) == ({}, []), race
    assert (race["starts_at"], race["ended_at"], race["code"]) == (None, None, None), race
    assert moment(race["created_at"]) == moment(race["now"]) == NOW, race
    # No deal yet: it is fixed from the racers' seeds when the countdown begins.
    assert await db.race_code(race_id) is None and race["deal_commitment"] is None, race
    created = json.dumps(race)

    spectator = await Socket.open(client, None)
    await spectator.send({"type": "watch_race", "id": "s", "race_id": race_id})
    watching = await spectator.until(lambda m: m["type"] == "watching_race")
    assert (watching["id"], watching["race_id"]) == ("s", race_id), watching
    unchanged(watching["race"], race)

    # Seats are taken one by one; the fourth fills the race: the countdown begins.
    for count, player in ((2, ben), (3, cat)):
        clock.now += 100
        joined = await seat(client, race_id, "join", player)
        assert joined["status"] == "open" and len(joined["players"]) == count, joined
        assert joined["players"][-1] == {"id": player.id, "name": player.name}, joined
        await spectator.until(race_message(race_id, lambda r, c=count: len(r["players"]) == c))
    clock.now = NOW + 1_000
    full = await seat(client, race_id, "join", eve)
    starts = NOW + 1_000 + COUNTDOWN_MS
    deadline = starts + 600_000
    assert full["status"] == "starting", full

    code = await db.race_code(race_id)
    assert code is not None
    deal = DealCode.parse(code)
    assert deal.version == 2 and deal.rule.value == "classic", code
    assert commitment(code) == full["deal_commitment"]
    # Certified winnable: the solver finds a winning line (which two racers will play).
    verdict = solve_deal(deal, max_nodes=300_000)
    assert verdict.status is SolveStatus.WINNABLE and verdict.line, verdict
    line = [str(move) for move in verdict.line]
    guard = Guard(code)
    guard.check("POST /api/v1/races", created)
    spectator.guard = guard
    assert moment(full["starts_at"]) == starts and full["ended_at"] is None, full
    assert [p["id"] for p in full["players"]] == [p.id for p in racers], full
    games: dict[str, str] = full["games"]
    assert set(games) == {p.id for p in racers} and len(set(games.values())) == 4, games
    assert len(full["standings"]) == 4, full
    for entry in full["standings"]:
        assert entry["status"] == "active" and entry["finished_at"] is None, entry
        assert shown_progress(entry) == progress(code, []), entry
        assert entry["elapsed_ms"] == 0 and entry["place"] == 1, entry  # all tied so far
    guard.check("POST join (the race is full)", json.dumps(full))
    message = await spectator.until(race_message(race_id, lambda r: r["status"] == "starting"))
    assert message["race"]["games"] == games

    # Each racer's game: the race's secret deal, its clock at starts_at.
    fresh = local_game(code).tableau_view()
    for player in racers:
        response = await client.get(f"/api/v1/games/{games[player.id]}", headers=player.auth)
        assert response.status == 200, await response.text()
        game = await response.json()
        assert game["player"]["id"] == player.id and game["race_id"] == race_id, game
        assert (game["code"], game["deal_commitment"]) == (None, full["deal_commitment"]), game
        assert (game["status"], game["timed_out"], game["chosen"]) == ("active", False, False)
        assert (game["moves"], game["elapsed_ms"], game["version"]) == (0, 0, 0), game
        assert game["tableau"] == fresh, game

    # Too early: refused over HTTP and over the WebSocket; nothing changes.
    response = await client.post(
        f"/api/v1/games/{games[ana.id]}/moves", json=action_body(line[0]), headers=ana.auth
    )
    await refused(response, 409, "race_not_started")
    racer_socket = await Socket.open(client, ben)
    action = {"type": "act", "id": "a", "game_id": games[ben.id], "action": action_body(line[0])}
    await racer_socket.send(action)
    message = await racer_socket.receive()
    assert message["type"] == "error" and message["problem"]["status"] == 409, message
    assert message["problem"]["rule"] == "race_not_started", message
    assert await db.moves(games[ana.id]) == await db.moves(games[ben.id]) == 0
    unchanged((await read(client, race_id))[0], full)

    # No hints in a race.
    response = await client.get(f"/api/v1/games/{games[ana.id]}/hint", headers=ana.auth)
    await refused(response, 409, "race_no_hints")

    # cat quits during the countdown (allowed): the game ends, its code stays hidden.
    clock.now = NOW + 2_000
    quit_at = clock.now
    response = await client.post(f"/api/v1/games/{games[cat.id]}/abandon", headers=cat.auth)
    assert response.status == 200, await response.text()
    game = await response.json()
    assert (game["status"], game["code"], game["timed_out"]) == ("abandoned", None, False), game
    response = await client.get(f"/api/v1/games/{games[cat.id]}/replay", headers=cat.auth)
    replay = await response.json()
    assert (replay["code"], replay["deal"]) == (None, None), replay
    await spectator.until(
        race_message(race_id, lambda r: standing(r, cat)["status"] == "abandoned")
    )

    # Everyone else (the other racers too) is refused every racer's game.
    for player in (ana, cat):
        others = [dan] + [p for p in racers if p != player]
        await hidden_from_others(client, guard, player, games[player.id], others)
    live, _ = await get_page(client, "/api/v1/live/games?limit=100")
    assert dan_game in [g["id"] for g in live["games"]], live

    # The start: starts_at passes; moves are accepted. ana plays the winning line; after each
    # action, the standings (read by anyone, and pushed to the spectator) show her progress.
    clock.now = starts
    race, text = await read(client, race_id, dan.auth)
    guard.check("GET race by dan", text)
    assert race["status"] == "running", race
    assert moment(race["now"]) == starts
    assert {s["elapsed_ms"] for s in race["standings"]} == {0}, race
    listed, _ = await get_page(client, "/api/v1/races?status=running")
    assert [r["id"] for r in listed["races"]] == [race_id], listed
    clock.now = starts + 10_000
    for count, text in enumerate(line, 1):
        result = await act(client, ana, games[ana.id], text)
        assert result["game"]["code"] is None, result["game"]
        expected = progress(code, line[:count])
        race, raw = await read(client, race_id)
        guard.check(f"GET race after move {count}", raw)
        assert shown_progress(standing(race, ana)) == expected, (count, race)
        message = await spectator.until(
            race_message(race_id, lambda r, c=count: standing(r, ana)["moves"] >= c)
        )
        assert shown_progress(standing(message["race"], ana)) == expected, (count, message)
    assert result["game"]["status"] == "won", result
    race, _ = await read(client, race_id)
    assert race["status"] == "running", race  # three racers are still on
    entry = standing(race, ana)
    assert (entry["status"], entry["elapsed_ms"], entry["place"]) == ("won", 10_000, 1), entry
    assert moment(entry["finished_at"]) == starts + 10_000, entry
    # Won, and still hidden from everyone else until the race ends.
    await hidden_from_others(client, guard, ana, games[ana.id], [dan, ben])

    # ben wins later; eve moves twice, the second time 1 ms before the deadline.
    clock.now = starts + 20_000
    for text in line:
        await act(client, ben, games[ben.id], text)
    clock.now = starts + 30_000
    await act(client, eve, games[eve.id], line[0])
    clock.now = deadline - 1
    await act(client, eve, games[eve.id], line[1])
    race, raw = await read(client, race_id, dan.auth)
    guard.check("GET race before the deadline", raw)
    assert race["status"] == "running", race
    assert places(race) == {"ana": 1, "ben": 2, "eve": 3, "cat": 4}, race
    assert standing(race, eve)["elapsed_ms"] == deadline - 1 - starts, race
    assert standing(race, cat)["elapsed_ms"] == 0, race  # quit before the start

    # The deadline: no request at all; the server ends the race by itself.
    clock.now = deadline
    waited = time.monotonic()
    message = await spectator.until(
        race_message(race_id, lambda r: r["status"] == "finished"), timeout=SETTLE_S
    )
    assert time.monotonic() - waited <= SETTLE_S
    pushed = message["race"]
    race, _ = await read(client, race_id, dan.auth)
    unchanged(pushed, race)
    assert moment(race["ended_at"]) == deadline, race
    assert race["code"] == code and commitment(race["code"]) == race["deal_commitment"], race
    assert places(race) == {"ana": 1, "ben": 2, "eve": 3, "cat": 4}, race
    assert [s["player"]["name"] for s in race["standings"]] == ["ana", "ben", "eve", "cat"]
    expected_end = {
        "ana": ("won", 10_000, starts + 10_000),
        "ben": ("won", 20_000, starts + 20_000),
        "eve": ("abandoned", 600_000, deadline),
        "cat": ("abandoned", 0, quit_at),
    }
    for entry in race["standings"]:
        name = entry["player"]["name"]
        assert (entry["status"], entry["elapsed_ms"], moment(entry["finished_at"])) == (
            expected_end[name]
        ), entry
    assert shown_progress(standing(race, eve)) == progress(code, line[:2]), race

    # Every game is now shown to anyone, with the revealed code, and its replay verifies.
    timed_out = {ana.id: False, ben.id: False, cat.id: False, eve.id: True}
    for player in racers:
        game_id = games[player.id]
        response = await client.get(f"/api/v1/games/{game_id}")
        assert response.status == 200, await response.text()
        game = await response.json()
        assert (game["code"], game["timed_out"]) == (code, timed_out[player.id]), game
        assert game["deal_commitment"] == commitment(code), game
        response = await client.get(f"/api/v1/games/{game_id}/replay")
        replay = await response.json()
        assert replay["code"] == code and replay["deal"] is not None, replay
        response = await client.post("/api/v1/replays/verify", json=replay)
        verdict_body = await response.json()
        assert response.status == 200 and verdict_body["valid"] is True, verdict_body
        assert verdict_body["status"] == game["status"], (verdict_body, game)
    response = await client.get(f"/api/v1/games/{games[eve.id]}")
    game = await response.json()
    assert (game["status"], game["elapsed_ms"]) == ("abandoned", 600_000), game
    assert moment(game["finished_at"]) == deadline, game
    status, text = await get_text(client, f"/api/v1/players/{ana.id}/games")
    assert status == 200 and games[ana.id] in text, text
    watcher = await Socket.open(client, dan)
    await watcher.send({"type": "watch", "id": "w", "game_id": games[ana.id]})
    message = await watcher.receive()
    assert message["type"] == "watching" and message["game"]["code"] == code, message
    await watcher.close()

    # Nothing lands after the deadline.
    response = await client.post(
        f"/api/v1/games/{games[eve.id]}/moves", json=action_body(line[2]), headers=eve.auth
    )
    await refused(response, 409, "race_over")

    # Ratings: from OpenSkill (Plackett-Luce) with places 1, 2, 3 from fresh ratings, among
    # the racers who moved: cat quit in the countdown, so the race leaves cat out (no rating
    # change, and none given to anyone).
    movers = [ana, ben, eve]
    fresh_ratings = [MODEL.rating() for _ in movers]
    rated = MODEL.rate([[r] for r in fresh_ratings], ranks=[1.0, 2.0, 3.0])
    expected_after = {
        name: (team[0].mu, team[0].sigma)
        for name, team in zip(("ana", "ben", "eve"), rated, strict=True)
    }
    stored = await db.ratings()
    assert "rating" not in standing(race, cat), race
    for entry in race["standings"]:
        name, player_id = entry["player"]["name"], entry["player"]["id"]
        if player_id == cat.id:
            continue
        before, after = entry["rating"]["before"], entry["rating"]["after"]
        assert before["mu"] == pytest.approx(25.0) and before["ordinal"] == pytest.approx(0.0)
        assert (after["mu"], after["sigma"]) == pytest.approx(expected_after[name]), entry
        assert after["ordinal"] == pytest.approx(after["mu"] - 3 * after["sigma"]), entry
        mu, sigma, ordinal, count = stored[(player_id, "classic")]
        assert (mu, sigma, ordinal, count) == pytest.approx(
            (after["mu"], after["sigma"], after["ordinal"], 1)
        )
    assert standing(race, ana)["rating"]["after"]["ordinal"] > 0  # the winner's went up
    assert standing(race, eve)["rating"]["after"]["ordinal"] < 0  # the last one's went down
    assert len(stored) == 3, stored  # one rating per rated racer, for the race's rule only

    response = await client.get(f"/api/v1/players/{cat.id}/stats")
    assert (await response.json())["rules"]["classic"]["race"]["races"] == 0
    for player in movers:
        response = await client.get(f"/api/v1/players/{player.id}/stats")
        stats = (await response.json())["rules"]
        after = standing(race, player)["rating"]["after"]
        rating = stats["classic"]["race"]
        assert rating["races"] == 1, stats
        assert (rating["mu"], rating["sigma"], rating["ordinal"]) == pytest.approx(
            (after["mu"], after["sigma"], after["ordinal"])
        )
        assert stats["relaxed"]["race"]["races"] == 0, stats
        assert stats["classic"]["played"] == 0, stats  # race games are not solo games
    board, _ = await get_page(client, "/api/v1/leaderboards/races?rule=classic")
    assert [e["player"]["name"] for e in board["entries"]] == ["ana", "ben", "eve"], board
    assert [e["rank"] for e in board["entries"]] == [1, 2, 3], board
    for entry in board["entries"]:
        mu, sigma, ordinal, count = stored[(entry["player"]["id"], "classic")]
        assert entry["races"] == count == 1, entry
        assert (entry["mu"], entry["sigma"], entry["ordinal"]) == pytest.approx(
            (mu, sigma, ordinal)
        )
    pages = []
    address: str | None = "/api/v1/leaderboards/races?rule=classic&limit=2"
    while address is not None:
        page, address = await get_page(client, address)
        pages.append([e["rank"] for e in page["entries"]])
    assert pages == [[1, 2], [3]], pages
    board, _ = await get_page(client, "/api/v1/leaderboards/races?rule=relaxed")
    assert board["entries"] == [], board
    # Race games are ranked in their race and on the race board, not on the other boards.
    for by in ("score", "time", "moves"):
        body, _ = await get_page(client, f"/api/v1/leaderboards?rule=classic&by={by}")
        assert not {e["game_id"] for e in body["entries"]} & set(games.values()), body

    listed, _ = await get_page(client, "/api/v1/races?status=finished")
    assert [r["id"] for r in listed["races"]] == [race_id], listed
    await spectator.close()
    await racer_socket.close()


async def test_the_end_of_the_countdown_is_pushed_to_spectators(
    client: TestClient[Any, Any], clock: Clock
) -> None:
    """starting -> running is a change (SPEC 2.6.1, WebSocket): when starts_at passes, the
    server marks the race running by itself and pushes it, with no request."""
    ana, ben = await players(client, "ana", "ben")
    race, _ = await create(client, ana, seats=2, winnable=False)
    race_id = race["id"]
    spectator = await Socket.open(client, None)
    await spectator.send({"type": "watch_race", "id": "s", "race_id": race_id})
    await spectator.until(lambda m: m["type"] == "watching_race")
    await seat(client, race_id, "join", ben)
    await spectator.until(race_message(race_id, lambda r: r["status"] == "starting"))
    clock.now = NOW + COUNTDOWN_MS
    message = await spectator.until(
        race_message(race_id, lambda r: r["status"] == "running"), timeout=SETTLE_S
    )
    assert [s["moves"] for s in message["race"]["standings"]] == [0, 0], message
    await spectator.close()


async def test_an_open_race_left_30_minutes_is_cancelled(
    client: TestClient[Any, Any], clock: Clock, db: Db
) -> None:
    """An open race that has not started 30 minutes after its creation is cancelled by the
    server by itself: no games, no ratings."""
    ana, ben = await players(client, "ana", "ben")
    race, _ = await create(client, ana, seats=3, winnable=False)
    race_id = race["id"]
    await seat(client, race_id, "join", ben)
    clock.now = NOW + 30 * 60_000 + 1
    loop = asyncio.get_running_loop()
    until = loop.time() + SETTLE_S
    while (await db.race_status(race_id)) != "cancelled":
        assert loop.time() < until, "the stale open race was not cancelled"
        await asyncio.sleep(0.05)
    race, _ = await read(client, race_id)
    assert (race["status"], race["games"], race["standings"]) == ("cancelled", {}, []), race
    assert race["ended_at"] is not None and race["code"] is None, race
    response = await client.post(f"/api/v1/races/{race_id}/start", headers=ana.auth)
    await refused(response, 409)
    assert await db.ratings() == {}


async def test_exact_ties_share_a_place_and_a_race_ends_when_its_games_have(
    client: TestClient[Any, Any], clock: Clock, db: Db
) -> None:
    """ana and ben play the same moves at the same moment: the same foundation cards, ranked
    score and last action, so they share first place; cat never moves (third: 1, 1, 3). When the
    last of them abandons, the race ends at once, before its deadline, with nobody timed out."""
    ana, ben, cat = await players(client, "ana", "ben", "cat")
    race, code, line = await race_with_line(
        client, db, ana, 2, [ben, cat], seats=3, time_limit_s=60, public=False
    )
    race_id = race["id"]
    assert (race["winnable"], race["public"], race["time_limit_s"]) == (False, False, 60)
    await seat(client, race_id, "join", ben)
    full = await seat(client, race_id, "join", cat)
    starts = NOW + COUNTDOWN_MS
    assert moment(full["starts_at"]) == starts, full
    games = full["games"]

    clock.now = starts + 1_000
    for player in (ana, ben):
        for text in line:
            await act(client, player, games[player.id], text)
    race, _ = await read(client, race_id)
    assert places(race) == {"ana": 1, "ben": 1, "cat": 3}, race
    assert standing(race, ana)["elapsed_ms"] == 1_000, race

    clock.now = starts + 2_000
    for player in (ana, cat, ben):
        response = await client.post(
            f"/api/v1/games/{games[player.id]}/abandon", headers=player.auth
        )
        assert response.status == 200, await response.text()
        race, _ = await read(client, race_id)
        assert race["status"] == ("finished" if player == ben else "running"), race
    assert moment(race["ended_at"]) == starts + 2_000, race
    assert race["code"] == code, race
    assert places(race) == {"ana": 1, "ben": 1, "cat": 3}, race
    for entry in race["standings"]:
        assert entry["status"] == "abandoned" and entry["elapsed_ms"] == 2_000, entry
        assert moment(entry["finished_at"]) == starts + 2_000, entry
    for player in (ana, ben, cat):
        response = await client.get(f"/api/v1/games/{games[player.id]}")
        game = await response.json()
        assert (game["code"], game["timed_out"]) == (code, False), game

    # cat never moved: left out of the ratings; ana and ben are rated as tied.
    rated = MODEL.rate([[MODEL.rating()] for _ in range(2)], ranks=[1.0, 1.0])
    after = {s["player"]["name"]: s["rating"]["after"] for s in race["standings"] if "rating" in s}
    assert set(after) == {"ana", "ben"}, race
    assert (after["ana"]["mu"], after["ana"]["sigma"]) == pytest.approx(
        (rated[0][0].mu, rated[0][0].sigma)
    )
    assert after["ana"] == pytest.approx(after["ben"]), after  # tied ranks, tied ratings
    stored = await db.ratings()
    assert {key: value[3] for key, value in stored.items()} == {
        (p.id, "classic"): 1 for p in (ana, ben)
    }, stored


async def test_nothing_lands_at_the_deadline_even_before_the_race_is_ended(
    client: TestClient[Any, Any], clock: Clock, db: Db
) -> None:
    """The race service's tick is held back, so that the race is still unsettled at its
    deadline: an action 1 ms before it lands; at it, every action (an abandonment too) is
    refused with `race_over` and changes nothing. Ticking again, the server ends the race."""
    races = client.app[RACES]
    ticker = races.ticker
    assert ticker is not None
    ticker.cancel()
    await asyncio.gather(ticker, return_exceptions=True)

    ana, ben = await players(client, "ana", "ben")
    race, code, line = await race_with_line(client, db, ana, 3, [ben], seats=2, time_limit_s=60)
    race_id = race["id"]
    full = await seat(client, race_id, "join", ben)
    games = full["games"]
    starts = NOW + COUNTDOWN_MS
    deadline = starts + 60_000

    clock.now = starts
    await act(client, ana, games[ana.id], line[0])
    clock.now = deadline - 1
    await act(client, ana, games[ana.id], line[1])
    clock.now = deadline
    before, _ = await read(client, race_id)
    version = await db.race_version(race_id)
    for player, path, body in (
        (ana, f"/api/v1/games/{games[ana.id]}/moves", action_body(line[2])),
        (ben, f"/api/v1/games/{games[ben.id]}/moves", action_body(line[0])),
        (ben, f"/api/v1/games/{games[ben.id]}/abandon", None),
    ):
        response = await client.post(path, json=body, headers=player.auth)
        await refused(response, 409, "race_over")
    socket = await Socket.open(client, ana)
    message = {"type": "act", "id": 1, "game_id": games[ana.id], "action": action_body(line[2])}
    await socket.send(message)
    answer = await socket.receive()
    assert answer["type"] == "error" and answer["problem"]["rule"] == "race_over", answer
    await socket.close()
    after, _ = await read(client, race_id)
    unchanged(before, after)
    assert after["status"] == "running" and after["code"] is None, after
    assert await db.race_version(race_id) == version
    assert (await db.moves(games[ana.id]), await db.moves(games[ben.id])) == (2, 0)

    races.start_ticking()
    loop = asyncio.get_running_loop()
    until = loop.time() + SETTLE_S
    while loop.time() < until:
        race, _ = await read(client, race_id)
        if race["status"] == "finished":
            break
        await asyncio.sleep(0.1)
    assert race["status"] == "finished", race
    assert moment(race["ended_at"]) == deadline, race
    assert places(race) == {"ana": 1, "ben": 2}, race
    for player in (ana, ben):
        response = await client.get(f"/api/v1/games/{games[player.id]}")
        game = await response.json()
        assert (game["status"], game["timed_out"], game["code"]) == ("abandoned", True, code)
        assert (game["elapsed_ms"], moment(game["finished_at"])) == (60_000, deadline), game
    assert standing(race, ana)["moves"] == 2, race


# ---------------------------------------------------------------- bad input, refusals


async def test_bad_race_bodies_are_refused_and_create_nothing(
    client: TestClient[Any, Any], db: Db
) -> None:
    (ana,) = await players(client, "ana")
    cases: list[tuple[str, bytes, int, str | None]] = [
        ("seats 1", b'{"seats": 1}', 422, "seats"),
        ("seats 9", b'{"seats": 9}', 422, "seats"),
        ("seats 0", b'{"seats": 0}', 422, "seats"),
        ("time limit 59", b'{"time_limit_s": 59}', 422, "time_limit_s"),
        ("time limit 3601", b'{"time_limit_s": 3601}', 422, "time_limit_s"),
        ("time limit -1", b'{"time_limit_s": -1}', 422, "time_limit_s"),
        ("seats as text", b'{"seats": "4"}', 422, "seats"),
        ("seats as a float", b'{"seats": 4.5}', 422, "seats"),
        ("seats as a boolean", b'{"seats": true}', 422, "seats"),
        ("seats null", b'{"seats": null}', 422, "seats"),
        ("time limit as text", b'{"time_limit_s": "600"}', 422, "time_limit_s"),
        ("time limit as a list", b'{"time_limit_s": [600]}', 422, "time_limit_s"),
        ("winnable as text", b'{"winnable": "yes"}', 422, "winnable"),
        ("winnable as a number", b'{"winnable": 1}', 422, "winnable"),
        ("public as text", b'{"public": "no"}', 422, "public"),
        ("an unknown rule", b'{"rule": "spider"}', 422, "rule"),
        ("rule as a number", b'{"rule": 1}', 422, "rule"),
        ("an unknown field", b'{"seats": 2, "colour": "red"}', 422, "colour"),
        ("a JSON array", b"[]", 422, None),
        ("a JSON string", b'"race"', 422, None),
        ("JSON null", b"null", 422, None),
        ("malformed JSON", b'{"seats": 2', 400, None),
    ]
    headers = {**ana.auth, "Content-Type": "application/json"}
    for name, data, status, field in cases:
        response = await client.post("/api/v1/races", data=data, headers=headers)
        body = await problem(response, status)
        if field is not None:
            fields = [e.get("field", "") for e in body.get("errors", [])]
            assert any(field in f for f in fields), (name, body)
    for headers in ({}, {"Authorization": "Bearer nope"}):
        response = await client.post("/api/v1/races", json={"seats": 2}, headers=headers)
        await problem(response, 401)
    assert (await db.races(), await db.seats()) == (0, 0)
    listed, _ = await get_page(client, "/api/v1/races")
    assert listed["races"] == [], listed


async def test_refused_seat_changes_are_clear_and_change_nothing(
    client: TestClient[Any, Any], clock: Clock, db: Db
) -> None:
    ana, ben, cat, dan = await players(client, "ana", "ben", "cat", "dan")

    async def refusal(race_id: str, op: str, player: Player | None, status: int, rule: str | None):
        before, _ = await read(client, race_id)
        version = await db.race_version(race_id)
        seats = await db.seats()
        headers = player.auth if player is not None else {}
        response = await client.post(f"/api/v1/races/{race_id}/{op}", headers=headers)
        await refused(response, status, rule)
        after, _ = await read(client, race_id)
        unchanged(before, after)
        assert await db.race_version(race_id) == version, (op, rule)
        assert await db.seats() == seats, (op, rule)

    # An open race of three seats with two players.
    race, _ = await create(client, ana, seats=3, winnable=False)
    open_id = race["id"]
    await refusal(open_id, "start", ana, 409, "too_few_players")  # alone
    await refusal(open_id, "join", ana, 409, "already_seated")
    await refusal(open_id, "leave", ben, 409, "not_seated")
    await refusal(open_id, "join", None, 401, None)
    await seat(client, open_id, "join", ben)
    await refusal(open_id, "join", ben, 409, "already_seated")
    await refusal(open_id, "start", ben, 403, None)  # not the creator
    await refusal(open_id, "start", dan, 403, None)

    # A full race (it started when its last seat was taken).
    race, _ = await create(client, ana, seats=2, winnable=False)
    full_id = race["id"]
    full = await seat(client, full_id, "join", ben)
    assert full["status"] == "starting", full
    await refusal(full_id, "join", cat, 409, "race_full")
    await refusal(full_id, "leave", ben, 409, "race_started")
    await refusal(full_id, "start", ana, 409, "race_started")

    # A race its creator started with free seats.
    race, _ = await create(client, ana, seats=4, winnable=False)
    started_id = race["id"]
    await seat(client, started_id, "join", ben)
    started = await seat(client, started_id, "start", ana)
    assert started["status"] == "starting" and len(started["games"]) == 2, started
    assert moment(started["starts_at"]) == NOW + COUNTDOWN_MS, started
    await refusal(started_id, "join", cat, 409, "race_started")
    await refusal(started_id, "leave", ana, 409, "race_started")
    await refusal(started_id, "leave", cat, 409, None)
    # Past starts_at: once the server has marked it running (its tick), still refused.
    clock.now = NOW + COUNTDOWN_MS + 1
    loop = asyncio.get_running_loop()
    until = loop.time() + SETTLE_S
    while await db.race_status(started_id) != "running":
        assert loop.time() < until, "the server did not mark the race running"
        await asyncio.sleep(0.05)
    await refusal(started_id, "join", cat, 409, "race_started")
    await refusal(started_id, "leave", ben, 409, "race_started")

    # Unknown races: 404 everywhere, the WebSocket included.
    for race_id in (str(uuid.uuid4()), "nope"):
        response = await client.get(f"/api/v1/races/{race_id}")
        await problem(response, 404)
        for op in ("join", "leave", "start"):
            response = await client.post(f"/api/v1/races/{race_id}/{op}", headers=ana.auth)
            await problem(response, 404)
    socket = await Socket.open(client, None)
    for race_id in (str(uuid.uuid4()), "nope", 7):
        await socket.send({"type": "watch_race", "id": "x", "race_id": race_id})
        message = await socket.receive()
        assert message["type"] == "error" and message["problem"]["status"] == 404, message
    await socket.close()
    assert await db.races() == 3


async def test_the_creator_leaving_hands_the_race_on_and_the_last_cancels_it(
    client: TestClient[Any, Any], clock: Clock, db: Db
) -> None:
    ana, ben, cat = await players(client, "ana", "ben", "cat")
    race, _ = await create(client, ana, seats=4, winnable=False)
    race_id = race["id"]
    spectator = await Socket.open(client, None)
    await spectator.send({"type": "watch_race", "id": "s", "race_id": race_id})
    await spectator.until(lambda m: m["type"] == "watching_race")
    await seat(client, race_id, "join", ben)
    await seat(client, race_id, "join", cat)
    await spectator.until(race_message(race_id, lambda r: len(r["players"]) == 3))

    left = await seat(client, race_id, "leave", ana)
    assert left["creator"] == {"id": ben.id, "name": "ben"}, left
    assert [p["name"] for p in left["players"]] == ["ben", "cat"], left
    assert left["status"] == "open", left
    message = await spectator.until(race_message(race_id, lambda r: r["creator"]["id"] == ben.id))
    assert len(message["race"]["players"]) == 2
    response = await client.post(f"/api/v1/races/{race_id}/start", headers=ana.auth)
    await refused(response, 403)
    # ana may come back: she takes the last seat, and ben stays the creator.
    back = await seat(client, race_id, "join", ana)
    assert [p["name"] for p in back["players"]] == ["ben", "cat", "ana"], back
    assert back["creator"]["id"] == ben.id, back
    left = await seat(client, race_id, "leave", ben)
    assert left["creator"]["id"] == cat.id, left
    await seat(client, race_id, "leave", ana)

    # The spectator stops watching: no more messages.
    await spectator.send({"type": "unwatch_race", "id": "u", "race_id": race_id})
    await spectator.until(lambda m: m["type"] == "unwatched_race" and m["race_id"] == race_id)

    clock.now = NOW + 60_000
    cancelled = await seat(client, race_id, "leave", cat)
    assert cancelled["status"] == "cancelled", cancelled
    assert moment(cancelled["ended_at"]) == NOW + 60_000, cancelled
    assert (cancelled["players"], cancelled["games"], cancelled["standings"]) == ([], {}, [])
    assert cancelled["code"] is None, cancelled
    await spectator.quiet(0.5)
    await spectator.close()
    response = await client.post(f"/api/v1/races/{race_id}/join", headers=ben.auth)
    await refused(response, 409)
    race, _ = await read(client, race_id)
    assert race["status"] == "cancelled" and race["players"] == [], race
    assert await db.ratings() == {}
    for status in ("open", "running", "finished"):
        listed, _ = await get_page(client, f"/api/v1/races?status={status}")
        assert race_id not in [r["id"] for r in listed["races"]], (status, listed)


async def test_public_races_are_listed_newest_first_and_paged(
    client: TestClient[Any, Any], clock: Clock, db: Db
) -> None:
    ana, ben = await players(client, "ana", "ben")

    async def new(**body: Any) -> str:
        clock.now += 1_000
        race, _ = await create(client, ana, winnable=False, **body)
        race_id: str = race["id"]
        return race_id

    finished = await new(seats=2)
    await seat(client, finished, "join", ben)
    running = await new(seats=2)
    await seat(client, running, "join", ben)
    opened = [await new() for _ in range(3)]
    private = await new(public=False)
    relaxed = await new(rule="relaxed")
    clock.now += 1_000
    games = (await read(client, finished))[0]["games"]
    for player in (ana, ben):  # quitting in the countdown: the race ends at once
        response = await client.post(
            f"/api/v1/games/{games[player.id]}/abandon", headers=player.auth
        )
        assert response.status == 200

    async def listed(query: str) -> list[str]:
        body, _ = await get_page(client, f"/api/v1/races?{query}")
        for race in body["races"]:
            check_document(race)
            assert race["public"] is True, race
        return [race["id"] for race in body["races"]]

    assert await listed("status=open") == [relaxed, *reversed(opened)]
    assert await listed("status=open&rule=classic") == list(reversed(opened))
    assert await listed("status=open&rule=relaxed") == [relaxed]
    assert await listed("status=running") == [running]  # starting races are running ones
    assert await listed("status=finished") == [finished]
    assert await listed("") == [relaxed, *reversed(opened), running, finished]
    # A private race is listed nowhere, but anyone reads it by id.
    race, _ = await read(client, private)
    assert race["public"] is False and race["status"] == "open", race

    # Pages of two, by `next` and by the Link header; every race once, in order.
    seen: list[str] = []
    address: str | None = "/api/v1/races?limit=2"
    while address is not None:
        body, link = await get_page(client, address)
        assert len(body["races"]) <= 2
        seen += [race["id"] for race in body["races"]]
        address = link
    assert seen == [relaxed, *reversed(opened), running, finished]
    body, _ = await get_page(client, "/api/v1/races?status=open&limit=1")
    assert [r["id"] for r in body["races"]] == [relaxed] and body["next"] is not None
    body, _ = await get_page(client, f"/api/v1/races?status=open&limit=3&after={body['next']}")
    assert [r["id"] for r in body["races"]] == list(reversed(opened)), body

    for query in (
        "status=cancelled",
        "status=starting",
        "status=nope",
        "rule=spider",
        "limit=0",
        "limit=101",
        "limit=two",
        "after=nope",
        "after=" + "A" * 600,
        "colour=red",
    ):
        response = await client.get(f"/api/v1/races?{query}")
        await problem(response, 422)
    for query in ("rule=spider", "limit=0", "after=nope"):
        response = await client.get(f"/api/v1/leaderboards/races?{query}")
        await problem(response, 422)
