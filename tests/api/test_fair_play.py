"""Fair play (SPEC 1.5, 1.8.1, 2.3 "Fair play", 2.4, 2.5; issue 12).

Server-dealt games (a random deal, a winnable-only deal, the daily deal) are dealt from secret RU2
codes. While a code is secret, no response about the game carries it or a face-down card: the game,
its move log, replay, targets and legal moves, the answer to a move, a refusal, the player's listing
and export, the WebSocket (`watching`, events, missed events, `resync`, results and errors), the
leaderboards and the daily deal. Only the commitment to the code is shown. The code is revealed when
the game ends (random, winnable-only) or when its UTC day ends (daily, also for a game that ended
earlier), and then matches the commitment, the replay's deal and the cards the game showed. Chosen
games (RU1 or RU2 codes) show their code from the start. Boards rank by the ranked score, which
take-back cycles do not raise. Malformed RU2 codes and dates get a clear 422.

The API never shows a secret code, so the code of a game under test is read straight from the
`games` table of the test database (`Rows`); the cards a position hides are computed from it with
the engine and the moves played.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import WSMsgType
from aiohttp.test_utils import TestClient
from sqlalchemy import func, select

from server.engine import CARDS, DealCode, Game, card_text, commitment
from server.engine.cards import FOUNDATION, place_text
from server.store.db import make_engine
from server.store.models import DailyDeal, GameRow
from tests.api.boards_helpers import DAY, HOUR, TODAY, Clock, ms
from tests.api.helpers import (
    Player,
    action_body,
    hidden_cards,
    leaked,
    local_game,
    new_player,
    play,
    problem,
    vectors,
)
from tests.conftest import Api, load_data

LIVE = "/api/v1/live"
SUBPROTOCOL = "solitaire.v1"
WS_TIMEOUT = 10.0
TOMORROW = "2030-05-16"
FARM_CODE = "RU1-C-AAAAAFN"
FARM_CYCLES = 60


# ---------------------------------------------------------------- fixtures


class Rows:
    """The test database read directly, beside the app: what the API keeps secret."""

    def __init__(self, url: str) -> None:
        self.engine = make_engine(url, pool_size=1)

    async def close(self) -> None:
        await self.engine.dispose()

    async def code(self, game_id: str) -> str:
        async with self.engine.connect() as connection:
            found = await connection.execute(select(GameRow.code).where(GameRow.id == game_id))
            code: str = found.scalar_one()
        return code

    async def games(self) -> int:
        async with self.engine.connect() as connection:
            found = await connection.execute(select(func.count()).select_from(GameRow))
            count: int = found.scalar_one()
        return count

    async def daily_deals(self) -> set[tuple[str, str, str]]:
        async with self.engine.connect() as connection:
            found = await connection.execute(select(DailyDeal.day, DailyDeal.rule, DailyDeal.code))
            return {(day, rule, code) for day, rule, code in found.all()}


@pytest.fixture
async def rows(database_url: str) -> AsyncIterator[Rows]:
    found = Rows(database_url)
    yield found
    await found.close()


async def fetch(
    client: TestClient[Any, Any],
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    body: Any = None,
    status: int = 200,
) -> str:
    """The raw text of a response, which must have `status`."""
    response = await client.request(method, path, headers=headers or {}, json=body)
    text = await response.text()
    assert response.status == status, (method, path, response.status, text)
    return text


async def get_json(
    client: TestClient[Any, Any],
    path: str,
    headers: dict[str, str] | None = None,
    status: int = 200,
) -> Any:
    return json.loads(await fetch(client, "GET", path, headers=headers, status=status))


# ---------------------------------------------------------------- secrets and leaks


def code_forms(code: str) -> list[str]:
    """Every form in which a code could leak: the code, its seed with and without dashes, each
    7-letter group of the seed; upper and lower case."""
    seed = code.split("-", 2)[2]
    forms = {code, seed, seed.replace("-", ""), *seed.split("-")}
    return sorted(forms | {form.lower() for form in forms}, key=lambda form: (-len(form), form))


def line_of(code: str, length: int) -> list[str] | None:
    """`length` legal moves from the deal of `code`, uncovering face-down cards where it can
    (found with the engine), or None if the deal has no such line."""

    def search(game: Game, depth: int) -> list[str] | None:
        if depth == 0:
            return []
        options = []
        for move in game.legal_moves():
            after = game.copy()
            after.play(move)
            options.append((sum(after.down) - sum(game.down), str(move), after))
        options.sort(key=lambda option: option[0])  # flips first
        for _, text, after in options:
            rest = search(after, depth - 1)
            if rest is not None:
                return [text, *rest]
        return None

    return search(local_game(code), length)


def starting_tableau(code: str) -> list[list[str | None]]:
    """The tableau a fresh game of `code` shows: the cards the code deals (SPEC 1.8, 1.8.1),
    face-up, and null for the face-down ones (column c has c of them at the bottom)."""
    return [
        [card_text(card) if index >= c else None for index, card in enumerate(column)]
        for c, column in enumerate(DealCode.parse(code).columns())
    ]


def deal_of(code: str) -> list[list[str]]:
    """The whole deal of `code` as a replay carries it, from the engine."""
    return [[card_text(card) for card in column] for column in DealCode.parse(code).columns()]


class Guard:
    """One server-dealt game while its code is secret: every response about it is checked for
    the code (in every form) and for the cards its current position hides."""

    def __init__(self, game_id: str, code: str) -> None:
        self.game_id = game_id
        self.code = code
        self.forms = code_forms(code)
        self.actions: list[str] = []
        self.failures: list[str] = []
        self.checked = 0

    @property
    def game(self) -> Game:
        return local_game(self.code, self.actions)

    @property
    def hidden(self) -> set[str]:
        return hidden_cards(self.game)

    def check(self, what: str, text: str, *, cards: bool = True, asked: str | None = None) -> None:
        """`text` (a raw response) shows neither the code nor (with `cards`) a face-down card
        other than `asked`, the card the request itself named."""
        self.checked += 1
        shown = [form for form in self.forms if form in text]
        if shown:
            self.failures.append(f"{what}: shows the secret code as {shown[0]!r}: {text[:400]}")
        if cards:
            found = leaked(text, self.hidden - {asked} if asked else self.hidden)
            if found:
                self.failures.append(f"{what}: shows face-down cards {found}: {text[:400]}")

    def assert_clean(self) -> None:
        assert self.checked > 0
        assert not self.failures, "\n".join(self.failures)


def refusals(game: Game) -> list[tuple[str, str, str]]:
    """Two moves the rules refuse in `game`, as (card, place, rule): a face-up card onto a column
    where it does not fit, and a face-down card to its foundation."""
    found = []
    for card in CARDS:
        if game.is_face_up(card) and game.where[card] != FOUNDATION:
            for to in range(7):
                rule = game.refusal(card, to)
                if rule in ("same_suit", "rank"):
                    found.append((card_text(card), place_text(to), rule))
                    break
        if found:
            break
    down = next(card for card in CARDS if not game.is_face_up(card))
    found.append((card_text(down), "f", "face_down"))
    return found


# ---------------------------------------------------------------- the WebSocket


class Socket:
    """One WebSocket connection of a test: JSON out, (JSON, raw text) in."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    @classmethod
    async def open(cls, client: TestClient[Any, Any], player: Player | None) -> Socket:
        headers = player.auth if player is not None else {}
        ws = await client.ws_connect(LIVE, headers=headers, protocols=(SUBPROTOCOL,))
        return cls(ws)

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send_str(json.dumps(message))

    async def receive(self) -> tuple[dict[str, Any], str]:
        msg = await self.ws.receive(WS_TIMEOUT)
        assert msg.type == WSMsgType.TEXT, (msg.type, msg.data)
        body = json.loads(msg.data)
        assert isinstance(body, dict), msg.data
        return body, msg.data

    async def close(self) -> None:
        await self.ws.close()


# ---------------------------------------------------------------- every response about a game


async def sweep(
    client: TestClient[Any, Any],
    guard: Guard,
    owner: Player,
    *,
    rule: str,
    daily: str | None,
    others: tuple[Player, ...] = (),
) -> None:
    """Every HTTP read about the game (and the boards, listings and the daily deal), by its
    player and by anyone; each must hide the code and the face-down cards."""
    game_id = guard.game_id
    base = f"/api/v1/games/{game_id}"
    # A daily game is shown to its player only until its day ends.
    anyone = 403 if daily is not None else 200
    for who, headers, status in (("its player", owner.auth, 200), ("anyone", {}, anyone)):
        for path in (base, f"{base}/moves", f"{base}/replay", f"{base}/legal"):
            text = await fetch(client, "GET", path, headers=headers, status=status)
            guard.check(f"GET {path} (by {who})", text)
        text = await fetch(client, "GET", f"{base}/targets?card=AS", headers=headers, status=status)
        guard.check(f"GET {base}/targets?card=AS (by {who})", text, asked="AS")

    game = await get_json(client, base, owner.auth)
    assert game["code"] is None, game
    assert game["deal_commitment"] == commitment(guard.code)
    assert (game["chosen"], game["daily"], game["status"]) == (False, daily, "active")
    assert game["tableau"] == guard.game.tableau_view()
    replay = await get_json(client, f"{base}/replay", owner.auth)
    assert (replay["code"], replay["deal"]) == (None, None), replay
    assert replay["deal_commitment"] == commitment(guard.code)
    assert [a["move"] for a in replay["actions"]] == guard.actions

    hidden = guard.hidden
    for card in CARDS:
        text_card = card_text(card)
        path = f"{base}/targets?card={text_card}"
        text = await fetch(client, "GET", path, headers=owner.auth)
        guard.check(f"GET {path}", text, asked=text_card)
        if text_card in hidden:
            assert json.loads(text)["targets"] == [], (path, text)

    for who, headers in (("its player", owner.auth), ("anyone", {})):
        path = f"/api/v1/players/{owner.id}/games"
        text = await fetch(client, "GET", path, headers=headers)
        guard.check(f"GET {path} (by {who})", text, cards=False)
        entries = [entry for entry in json.loads(text)["games"] if entry["id"] == game_id]
        shown = who == "its player" or daily is None
        assert len(entries) == (1 if shown else 0), (who, text)
        for entry in entries:
            assert entry["code"] is None, entry
            assert entry["deal_commitment"] == commitment(guard.code)
            guard.check(f"GET {path} (by {who}): the game's entry", json.dumps(entry))
        path = f"/api/v1/players/{owner.id}/games/export"
        text = await fetch(client, "GET", path, headers=headers)
        guard.check(f"GET {path} (by {who})", text, cards=False)
        assert game_id not in text, "the export holds finished games only"
    for other in others:
        for path in (
            f"/api/v1/players/{other.id}/games",
            f"/api/v1/players/{other.id}/games/export",
        ):
            for who, headers in (("that player", other.auth), ("anyone", {})):
                text = await fetch(client, "GET", path, headers=headers)
                guard.check(f"GET {path} (by {who})", text, cards=False)
    text = await fetch(client, "GET", f"/api/v1/players/{owner.id}/stats")
    guard.check("GET stats", text)

    boards = [
        f"/api/v1/leaderboards?rule={rule}&by={by}&period={period}"
        for by in ("score", "time", "moves")
        for period in ("all", "day")
    ]
    boards.append(f"/api/v1/leaderboards?rule={rule}&assisted=true")
    if daily is not None:
        boards += [
            f"/api/v1/leaderboards?daily={daily}&rule={rule}",
            f"/api/v1/leaderboards?daily={daily}&rule={rule}&by=time",
        ]
    for path in boards:
        text = await fetch(client, "GET", path)
        guard.check(f"GET {path}", text)
        body = json.loads(text)
        assert game_id not in [entry["game_id"] for entry in body["entries"]], (path, body)
        if daily is not None and "daily=" in path:
            assert body["code"] is None, body
            assert all(entry["code"] is None for entry in body["entries"]), body

    if daily is not None:
        for path in (f"/api/v1/daily?rule={rule}", f"/api/v1/daily?rule={rule}&date={daily}"):
            text = await fetch(client, "GET", path)
            guard.check(f"GET {path}", text)
            body = json.loads(text)
            assert (body["date"], body["rule"], body["code"]) == (daily, rule, None), body
            assert body["deal_commitment"] == commitment(guard.code), body


async def exercise(
    client: TestClient[Any, Any],
    guard: Guard,
    owner: Player,
    line: list[str],
    *,
    rule: str,
    daily: str | None,
    others: tuple[Player, ...] = (),
) -> None:
    """Plays `line` (two moves: one over HTTP, one over the WebSocket) with refusals between,
    watched over the WebSocket, checking every response and message; then reconnects with
    `since` (missed events) and past the version (`resync`)."""
    game_id = guard.game_id
    moves_path = f"/api/v1/games/{game_id}/moves"
    await sweep(client, guard, owner, rule=rule, daily=daily, others=others)

    watcher = await Socket.open(client, owner)
    stranger = await Socket.open(client, None)
    sockets = [watcher, stranger]
    try:
        await watcher.send({"type": "watch", "id": "w", "game_id": game_id})
        message, raw = await watcher.receive()
        guard.check("WebSocket watching (its player)", raw)
        assert message["type"] == "watching", message
        assert message["game"]["code"] is None
        assert message["game"]["deal_commitment"] == commitment(guard.code)
        await stranger.send({"type": "watch", "id": "s", "game_id": game_id})
        message, raw = await stranger.receive()
        guard.check("WebSocket watch (anyone)", raw)
        watchers = [watcher]
        if daily is None:
            assert message["type"] == "watching", message
            watchers.append(stranger)
        else:
            assert message["type"] == "error" and message["problem"]["status"] == 403, message

        # The first move over HTTP: its answer and the event each watcher gets.
        guard.actions.append(line[0])
        text = await fetch(
            client, "POST", moves_path, headers=owner.auth, body=action_body(line[0])
        )
        guard.check(f"POST {moves_path} {line[0]} (the answer)", text)
        answer = json.loads(text)
        assert answer["move"] == line[0] and answer["game"]["code"] is None, answer
        for sock in watchers:
            message, raw = await sock.receive()
            guard.check(f"WebSocket event after {line[0]}", raw)
            assert (message["type"], message["version"]) == ("event", 1), message

        # Refusals over HTTP, one of them naming a face-down card.
        for card, to, rule_id in refusals(guard.game):
            text = await fetch(
                client,
                "POST",
                moves_path,
                headers=owner.auth,
                body={"card": card, "to": to},
                status=422,
            )
            guard.check(f"POST {moves_path} {card}-{to} (refused)", text, asked=card)
            assert json.loads(text)["rule"] == rule_id, text
            text = await fetch(
                client,
                "GET",
                f"/api/v1/games/{game_id}/targets?card={card}",
                headers=owner.auth,
            )
            guard.check(f"GET targets of {card}", text, asked=card)

        # The second move over the WebSocket: the result and the event, in either order.
        guard.actions.append(line[1])
        await watcher.send(
            {"type": "act", "id": "a", "game_id": game_id, "action": action_body(line[1])}
        )
        kinds = set()
        for _ in range(2):
            message, raw = await watcher.receive()
            guard.check(f"WebSocket {message.get('type')} of {line[1]}", raw)
            kinds.add(message["type"])
            assert message["game"]["code"] is None, message
        assert kinds == {"result", "event"}
        for sock in watchers[1:]:
            message, raw = await sock.receive()
            guard.check(f"WebSocket event after {line[1]} (anyone)", raw)
            assert (message["type"], message["version"]) == ("event", 2), message
        card, to, _ = refusals(guard.game)[-1]
        await watcher.send(
            {"type": "act", "id": "r", "game_id": game_id, "action": {"card": card, "to": to}}
        )
        message, raw = await watcher.receive()
        guard.check(f"WebSocket error of {card}-{to}", raw, asked=card)
        assert message["type"] == "error" and message["problem"]["status"] == 422, message

        await sweep(client, guard, owner, rule=rule, daily=daily, others=others)

        # Reconnecting: the missed events since version 0, then `watching`; then a `resync`.
        late = await Socket.open(client, owner)
        sockets.append(late)
        await late.send({"type": "watch", "id": "l", "game_id": game_id, "since": 0})
        missed = []
        while True:
            message, raw = await late.receive()
            guard.check(f"WebSocket {message.get('type')} after since=0", raw)
            if message["type"] != "event":
                break
            missed.append(message["move"])
        assert message["type"] == "watching", message
        assert missed == line, missed
        await late.send({"type": "watch", "id": "x", "game_id": game_id, "since": 50})
        message, raw = await late.receive()
        guard.check("WebSocket resync", raw)
        assert message["type"] == "resync" and message["game"]["code"] is None, message
    finally:
        for sock in sockets:
            await sock.close()


async def deal(
    client: TestClient[Any, Any], rows: Rows, owner: Player, body: dict[str, Any]
) -> tuple[Guard, dict[str, Any], list[str]]:
    """A new server-dealt game with a line of two legal moves (a random deal without one is
    abandoned and dealt again): its guard, the game as dealt, the line."""
    for _ in range(20):
        text = await fetch(
            client, "POST", "/api/v1/games", headers=owner.auth, body=body, status=201
        )
        game = json.loads(text)
        code = await rows.code(game["id"])
        guard = Guard(game["id"], code)
        guard.check("POST /api/v1/games (the new game)", text)
        found = DealCode.parse(code)
        assert (found.version, found.rule.value) == (2, game["rule"]), code
        line = line_of(code, 2)
        if line is not None:
            return guard, game, line
        await fetch(client, "POST", f"/api/v1/games/{game['id']}/abandon", headers=owner.auth)
    raise AssertionError("no random deal with two legal moves in 20")


async def verify(client: TestClient[Any, Any], document: Any, status: int = 200) -> dict[str, Any]:
    text = await fetch(client, "POST", "/api/v1/replays/verify", body=document, status=status)
    body: dict[str, Any] = json.loads(text)
    return body


# ---------------------------------------------------------------- random and winnable-only games


@pytest.mark.parametrize("kind", ["random", "winnable"])
async def test_a_server_dealt_game_hides_its_code_until_it_ends(
    timed: TestClient[Any, Any], rows: Rows, kind: str
) -> None:
    client = timed
    ana = await new_player(client, "Ana")
    body = {"winnable": True} if kind == "winnable" else {}

    # An earlier game of Ana's, finished: in her export and on the boards, its code revealed.
    earlier, _, _ = await deal(client, rows, ana, body)
    await fetch(client, "POST", f"/api/v1/games/{earlier.game_id}/abandon", headers=ana.auth)

    guard, dealt, line = await deal(client, rows, ana, body)
    assert guard.code != earlier.code
    assert dealt["code"] is None and dealt["chosen"] is False and dealt["daily"] is None
    assert dealt["deal_commitment"] == commitment(guard.code)
    assert dealt["tableau"] == starting_tableau(guard.code)
    await exercise(client, guard, ana, line, rule="classic", daily=None)
    guard.assert_clean()

    # The export and the listing show the earlier game's code (and not this one's).
    export = await fetch(client, "GET", f"/api/v1/players/{ana.id}/games/export")
    shown = {json.loads(text)["game_id"]: json.loads(text)["code"] for text in export.splitlines()}
    assert shown[earlier.game_id] == earlier.code, shown

    # The game ends: its code is revealed, and it is the one committed to and dealt.
    game_id = guard.game_id
    ended = json.loads(
        await fetch(client, "POST", f"/api/v1/games/{game_id}/abandon", headers=ana.auth)
    )
    assert (ended["status"], ended["code"]) == ("abandoned", guard.code), ended
    code = ended["code"]
    assert commitment(code) == dealt["deal_commitment"] == ended["deal_commitment"]
    assert DealCode.parse(code).version == 2 and code == code.upper()
    for headers in (ana.auth, {}):
        game = await get_json(client, f"/api/v1/games/{game_id}", headers)
        assert (game["code"], game["deal_commitment"]) == (code, commitment(code)), game
        listing = await get_json(client, f"/api/v1/players/{ana.id}/games", headers)
        entry = next(g for g in listing["games"] if g["id"] == game_id)
        assert entry["code"] == code, entry
    replay = await get_json(client, f"/api/v1/games/{game_id}/replay")
    assert (replay["code"], replay["deal_commitment"]) == (code, commitment(code)), replay
    assert replay["deal"] == deal_of(code)
    # The face-up cards the game showed at the start are those the code deals.
    assert dealt["tableau"] == starting_tableau(code)
    assert [a["move"] for a in replay["actions"]] == line
    assert replay["result"]["ranked_score"] == local_game(code, line).ranked_score
    export = await fetch(client, "GET", f"/api/v1/players/{ana.id}/games/export")
    exported = {json.loads(text)["game_id"]: json.loads(text) for text in export.splitlines()}
    assert exported[game_id]["code"] == code and exported[game_id]["deal"] == deal_of(code)

    # Anyone can check it: valid as revealed; another commitment, or no code, is refused.
    verdict = await verify(client, replay)
    assert verdict["valid"] is True, verdict
    assert (verdict["status"], verdict["score"], verdict["moves"]) == (
        "abandoned",
        replay["result"]["score"],
        replay["result"]["moves"],
    )
    for wrong in ("0" * 64, commitment(earlier.code), commitment(code.replace("RU2-C", "RU2-R"))):
        verdict = await verify(client, {**replay, "deal_commitment": wrong})
        assert (verdict["valid"], verdict["rule"]) == (False, "commitment_mismatch"), verdict
    # The earlier game's code with this game's replay: not the deal committed to.
    verdict = await verify(client, {**replay, "code": earlier.code, "deal": None})
    assert (verdict["valid"], verdict["rule"]) == (False, "commitment_mismatch"), verdict
    await problem_text(client, {**replay, "code": None})
    without = {k: v for k, v in replay.items() if k != "code"}
    await problem_text(client, without)

    # The ended game is on the global board, with its code.
    board = await get_json(client, "/api/v1/leaderboards?rule=classic&by=score")
    entries = {entry["game_id"]: entry for entry in board["entries"]}
    assert entries[game_id]["code"] == code, board
    assert entries[game_id]["ranked_score"] == replay["result"]["ranked_score"]
    if kind == "winnable":
        verdict = await get_json(client, f"/api/v1/deals/{code}/winnable")
        assert verdict["status"] == "winnable", verdict


async def problem_text(client: TestClient[Any, Any], document: Any) -> None:
    """A replay that cannot be verified: 422 with a detail."""
    response = await client.post("/api/v1/replays/verify", json=document)
    body = await problem(response, 422)
    assert "code" in body["detail"], body


# ---------------------------------------------------------------- the daily deal


async def test_the_daily_deal_is_secret_until_its_day_ends(
    timed: TestClient[Any, Any], rows: Rows, clock: Clock
) -> None:
    client = timed
    clock.now -= DAY  # players made before the day began, so that their games rank
    ana = await new_player(client, "Ana")
    bob = await new_player(client, "Bob")
    clock.now += DAY
    today = await get_json(client, "/api/v1/daily?rule=classic")
    assert (today["date"], today["rule"], today["code"]) == (TODAY, "classic", None), today
    assert today["leaderboard"] == f"/api/v1/leaderboards?daily={TODAY}&rule=classic"

    # Bob plays the daily deal first and gives up within the day: his game has ended, but its
    # code stays secret until the day ends.
    clock.now += 60_000
    bob_guard, bob_dealt, bob_line = await deal(client, rows, bob, {"daily": True})
    await play(Api(client), bob.auth, bob_guard.game_id, bob_line[:1])
    clock.now += 60_000
    text = await fetch(
        client, "POST", f"/api/v1/games/{bob_guard.game_id}/abandon", headers=bob.auth
    )
    bob_guard.actions = bob_line[:1]
    bob_guard.check("POST abandon of a daily game", text)
    bob_ended = json.loads(text)
    assert (bob_ended["status"], bob_ended["code"], bob_ended["daily"]) == (
        "abandoned",
        None,
        TODAY,
    )
    for path in (f"/api/v1/games/{bob_guard.game_id}", f"/api/v1/games/{bob_guard.game_id}/replay"):
        text = await fetch(client, "GET", path, headers=bob.auth)
        bob_guard.check(f"GET {path} (ended within the day)", text)
        assert json.loads(text)["code"] is None
    bob_replay = await get_json(client, f"/api/v1/games/{bob_guard.game_id}/replay", bob.auth)
    assert bob_replay["deal"] is None
    await problem_text(client, bob_replay)
    await fetch(client, "GET", f"/api/v1/games/{bob_guard.game_id}", status=403)
    export = await fetch(client, "GET", f"/api/v1/players/{bob.id}/games/export", headers=bob.auth)
    assert [json.loads(line)["code"] for line in export.splitlines()] == [None]
    bob_guard.check("Bob's export", export)

    # Ana's daily game, active: every response about it hides its code and face-down cards.
    clock.now += 60_000
    guard, dealt, line = await deal(client, rows, ana, {"daily": True})
    assert guard.code == bob_guard.code, "one daily deal for every player"
    assert (TODAY, "classic", guard.code) in await rows.daily_deals()
    assert dealt["deal_commitment"] == today["deal_commitment"] == commitment(guard.code)
    assert (dealt["code"], dealt["chosen"], dealt["daily"]) == (None, False, TODAY)
    assert dealt["tableau"] == starting_tableau(guard.code)
    await exercise(client, guard, ana, line, rule="classic", daily=TODAY, others=(bob,))
    bob_guard.assert_clean()
    guard.assert_clean()

    # The daily board of the day: Bob's game (finished within the day), its code null.
    board = await get_json(client, f"/api/v1/leaderboards?daily={TODAY}&rule=classic")
    assert (board["daily"], board["code"], board["rule"]) == (TODAY, None, "classic"), board
    assert [e["game_id"] for e in board["entries"]] == [bob_guard.game_id], board
    assert board["entries"][0]["code"] is None
    assert board["entries"][0]["ranked_score"] == local_game(guard.code, bob_line[:1]).ranked_score
    linked = await get_json(client, today["leaderboard"])
    assert linked["entries"] == board["entries"]

    # A future date is refused, a malformed one too, a past day never drawn is not found.
    await problem(await client.get(f"/api/v1/daily?date={TOMORROW}"), 422)
    for bad in ("2030-5-15", "2030-02-30", "15.05.2030", "today", ""):
        await problem(await client.get("/api/v1/daily", params={"date": bad}), 422)
    await problem(await client.get("/api/v1/daily?date=2030-05-10"), 404)

    # The day ends (UTC): the code is revealed, the one committed to during the day.
    clock.now = ms(2030, 5, 16, 0, 0, 1)
    past = await get_json(client, f"/api/v1/daily?rule=classic&date={TODAY}")
    assert (past["date"], past["code"]) == (TODAY, guard.code), past
    assert commitment(past["code"]) == today["deal_commitment"] == past["deal_commitment"]
    new_day = await get_json(client, "/api/v1/daily?rule=classic")
    assert (new_day["date"], new_day["code"]) == (TOMORROW, None), new_day
    assert new_day["deal_commitment"] != today["deal_commitment"]

    code = guard.code
    # Ana's game (still active) and Bob's (ended during the day) both show it now, to anyone.
    for game_id, status in ((guard.game_id, "active"), (bob_guard.game_id, "abandoned")):
        for headers in (ana.auth, {}):
            game = await get_json(client, f"/api/v1/games/{game_id}", headers)
            assert (game["code"], game["status"], game["daily"]) == (code, status, TODAY), game
            assert game["deal_commitment"] == commitment(code)
            replay = await get_json(client, f"/api/v1/games/{game_id}/replay", headers)
            assert replay["code"] == code, replay
    bob_replay = await get_json(client, f"/api/v1/games/{bob_guard.game_id}/replay")
    assert bob_replay["deal"] == deal_of(code)
    assert bob_dealt["tableau"] == starting_tableau(code)
    verdict = await verify(client, bob_replay)
    assert verdict["valid"] is True, verdict
    verdict = await verify(client, {**bob_replay, "deal_commitment": new_day["deal_commitment"]})
    assert (verdict["valid"], verdict["rule"]) == (False, "commitment_mismatch"), verdict
    listing = await get_json(client, f"/api/v1/players/{bob.id}/games")
    assert [(g["id"], g["code"]) for g in listing["games"]] == [(bob_guard.game_id, code)]

    # The day's board shows the code now; Ana, finishing after the day, is not ranked on it.
    clock.now += HOUR
    await fetch(client, "POST", f"/api/v1/games/{guard.game_id}/abandon", headers=ana.auth)
    board = await get_json(client, f"/api/v1/leaderboards?daily={TODAY}&rule=classic")
    assert board["code"] == code, board
    assert [(e["game_id"], e["code"]) for e in board["entries"]] == [(bob_guard.game_id, code)]
    # Nor on the deal's own board: changed after its day, when the code was public, it became
    # practice (SPEC 2.5); Bob's, ended within the day, is ranked there.
    deal_board = await get_json(client, f"/api/v1/leaderboards?code={code}")
    assert [e["game_id"] for e in deal_board["entries"]] == [bob_guard.game_id], deal_board

    # Tomorrow's deal is tomorrow's secret; the day after, today's is still the same.
    clock.now += DAY
    assert (await get_json(client, f"/api/v1/daily?date={TODAY}"))["code"] == code
    later = await get_json(client, f"/api/v1/daily?date={TOMORROW}")
    assert commitment(later["code"]) == new_day["deal_commitment"]
    await problem(await client.get("/api/v1/daily?date=2030-05-14"), 404)


# ---------------------------------------------------------------- chosen games


async def test_chosen_games_show_their_code_from_the_start(
    client: TestClient[Any, Any], api: Api
) -> None:
    ana = await new_player(client, "Ana")
    ru1 = load_data("deals.json")["deals"][0]["code"]
    ru2_vectors = load_data("deals_ru2.json")["deals"]
    chosen = [(ru1, None), *[(v["code"], v) for v in ru2_vectors]]
    for index, (code, vector) in enumerate(chosen):
        given = code.lower() if index % 2 else code  # case-insensitive on input
        game = await api.game(ana.auth, code=given)
        assert game["code"] == code, game
        assert (game["chosen"], game["daily"], game["status"]) == (True, None, "active")
        assert game["deal_commitment"] == commitment(code)
        if vector is not None:
            assert game["deal_commitment"] == vector["commitment"]
            assert game["rule"] == ("classic" if code[4] == "C" else "relaxed")
            assert game["tableau"] == [
                [card if card == card.upper() else None for card in column]
                for column in vector["tableau"]
            ]
        assert game["tableau"] == starting_tableau(code)
        for path in (f"/api/v1/games/{game['id']}", f"/api/v1/games/{game['id']}/replay"):
            body = await api.get(path)
            assert (body["code"], body["deal_commitment"]) == (code, commitment(code)), body
        assert (await api.get(f"/api/v1/games/{game['id']}"))["chosen"] is True
    listing = await api.get(f"/api/v1/players/{ana.id}/games?limit=100")
    assert {g["code"] for g in listing["games"]} == {code for code, _ in chosen}
    assert all(g["chosen"] for g in listing["games"])


# ---------------------------------------------------------------- the ranked score


async def test_take_back_cycles_raise_the_score_not_the_ranked_score(
    client: TestClient[Any, Any], api: Api
) -> None:
    won_vector, take_back_vector = vectors()[0], vectors()[1]
    assert won_vector["code"] == take_back_vector["code"] == FARM_CODE
    prefix = take_back_vector["actions"][:15]
    assert prefix[-1] == "AS-f" and take_back_vector["actions"][15:17] == ["AS-t5", "AS-f"]
    ana = await new_player(client, "Ana")
    bob = await new_player(client, "Bob")
    cyd = await new_player(client, "Cyd")

    async def act(player: Player, game_id: str, text: str) -> dict[str, Any]:
        answer = await api.act(player.auth, game_id, action_body(text))
        game: dict[str, Any] = answer["game"]
        return game

    farmed = await api.game(ana.auth, code=FARM_CODE)
    farmed_id = farmed["id"]
    await play(api, ana.auth, farmed_id, prefix)
    expected = local_game(FARM_CODE, prefix)
    state = await api.get(f"/api/v1/games/{farmed_id}")
    assert (state["score"], state["ranked_score"]) == (expected.score, expected.ranked_score)
    base = state["ranked_score"]
    assert base == state["score"] == 55

    # An undo takes the ranked score back with the card, and placing it again restores it.
    state = await act(ana, farmed_id, "undo")
    assert (state["score"], state["ranked_score"]) == (base - 10, base - 10)
    state = await act(ana, farmed_id, "AS-f")
    assert (state["score"], state["ranked_score"]) == (base, base)

    score = base
    for _ in range(FARM_CYCLES):
        state = await act(ana, farmed_id, "AS-t5")  # a take-back: no points
        assert (state["score"], state["ranked_score"]) == (score, base), state
        state = await act(ana, farmed_id, "AS-f")  # placed again: +10 score, ranked unchanged
        score += 10
        assert (state["score"], state["ranked_score"]) == (score, base), state
    # Undoing a re-placement lowers the score, not the ranked score; so does redoing it.
    state = await act(ana, farmed_id, "undo")
    assert (state["score"], state["ranked_score"]) == (score - 10, base)
    state = await act(ana, farmed_id, "AS-f")
    assert (state["score"], state["ranked_score"]) == (score, base)
    assert score > 625
    log = await api.get(f"/api/v1/games/{farmed_id}/moves")
    assert [m["score"] for m in log["moves"]][-3:] == [score, score - 10, score]
    response = await client.post(f"/api/v1/games/{farmed_id}/abandon", headers=ana.auth)
    assert response.status == 200
    farmed = await response.json()
    assert (farmed["status"], farmed["score"], farmed["ranked_score"]) == (
        "abandoned",
        score,
        base,
    )
    replay = await api.get(f"/api/v1/games/{farmed_id}/replay")
    assert (replay["result"]["score"], replay["result"]["ranked_score"]) == (score, base)
    verdict = await verify(client, replay)
    assert verdict["valid"] is True and verdict["ranked_score"] == base, verdict

    # A won game of the deal, and one given up with a higher ranked score but a lower score.
    won = await api.game(bob.auth, code=FARM_CODE)
    await play(api, bob.auth, won["id"], won_vector["actions"])
    won = await api.get(f"/api/v1/games/{won['id']}")
    assert (won["status"], won["score"], won["ranked_score"]) == ("won", 625, 625)
    partial = await api.game(cyd.auth, code=FARM_CODE)
    await play(api, cyd.auth, partial["id"], won_vector["actions"][:30])
    response = await client.post(f"/api/v1/games/{partial['id']}/abandon", headers=cyd.auth)
    partial = await response.json()
    assert base < partial["ranked_score"] == partial["score"] < score

    board = await api.get(f"/api/v1/leaderboards?code={FARM_CODE}&by=score")
    assert [e["game_id"] for e in board["entries"]] == [won["id"], partial["id"], farmed_id]
    shown = [(e["status"], e["score"], e["ranked_score"], e["code"]) for e in board["entries"]]
    assert shown == [
        ("won", 625, 625, FARM_CODE),
        ("abandoned", partial["score"], partial["ranked_score"], FARM_CODE),
        ("abandoned", score, base, FARM_CODE),
    ]
    # Chosen games are never on the global boards.
    glob = await api.get("/api/v1/leaderboards?rule=classic&by=score")
    assert glob["entries"] == []


# ---------------------------------------------------------------- bad input


async def test_malformed_codes_and_dates_are_refused_and_change_nothing(
    timed: TestClient[Any, Any], rows: Rows
) -> None:
    client = timed
    ana = await new_player(client, "Ana")
    # Today's daily deal is drawn, so that a refused request could be seen changing it.
    today = await get_json(client, "/api/v1/daily")
    games, deals = await rows.games(), await rows.daily_deals()
    assert games == 0 and len(deals) == 1

    bad_codes = {
        "RU2-C-AAAA": ("7", "group"),
        "RU2-C-" + "A" * 28: ("dash",),
        "RU2C" + "A" * 28: ("dash", "RU2"),
        "RU2-C-AAAAAAA_AAAAAAA_AAAAAAA_AAAAAAA": ("dash",),
        "RU2-C-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAA1": ("letters",),
        "RU2-C-AAAAAAA-AAAAAAA-AAAAAAA": ("group",),
        "RU2-X-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA": ("rule",),
        "RU2-C-ZZZZZZZ-ZZZZZZZ-ZZZZZZZ-ZZZZZZZ": ("128",),
        "RU2-C-CDHEFOM-RSRXETM-SVHTOMC-UNGJKBW": ("128",),  # 2**128 itself
    }
    largest = "RU2-C-CDHEFOM-RSRXETM-SVHTOMC-UNGJKBV"  # 2**128 - 1: valid
    assert DealCode.parse(largest).seed == 2**128 - 1
    for code, words in bad_codes.items():
        response = await client.post("/api/v1/games", json={"code": code}, headers=ana.auth)
        body = await problem(response, 422)
        detail = body["detail"]
        assert code.lower() in detail.lower(), (code, body)
        missing = [word for word in words if word.lower() not in detail.lower()]
        assert not missing, (code, missing, body)
        for path in (f"/api/v1/deals/{code}/winnable", f"/api/v1/leaderboards?code={code}"):
            await problem(await client.get(path), 422)
        response = await client.post("/api/v1/replays/verify", json={"code": code, "actions": []})
        await problem(response, 422)

    bad_dates = [
        "2030-5-15",
        "2030-02-30",
        "2030-13-01",
        "15.05.2030",
        "today",
        "",
        "2030-05-15T00",
    ]
    for text in bad_dates:
        body = await problem(await client.get("/api/v1/daily", params={"date": text}), 422)
        assert "date" in body["detail"], body
        await problem(await client.get("/api/v1/leaderboards", params={"daily": text}), 422)
    body = await problem(await client.get(f"/api/v1/daily?date={TOMORROW}"), 422)
    assert "date" in body["detail"], body
    await problem(await client.get("/api/v1/daily?date=2030-05-14"), 404)
    await problem(await client.get("/api/v1/daily?date=2030-05-14&rule=relaxed"), 404)
    response = await client.get(
        "/api/v1/leaderboards", params={"daily": TODAY, "code": "RU1-C-AAAAAFN"}
    )
    body = await problem(response, 422)
    assert "daily" in body["detail"] and "code" in body["detail"], body
    for body_in in ({"daily": True, "code": largest}, {"daily": True, "winnable": True}):
        response = await client.post("/api/v1/games", json=body_in, headers=ana.auth)
        await problem(response, 422)

    # Nothing changed: no game, no daily deal drawn, today's deal the same.
    assert await rows.games() == 0
    assert await rows.daily_deals() == deals
    assert (await get_json(client, f"/api/v1/players/{ana.id}/games"))["games"] == []
    assert await get_json(client, "/api/v1/daily") == today
    # The largest seed is a valid chosen code.
    game = json.loads(
        await fetch(
            client, "POST", "/api/v1/games", headers=ana.auth, body={"code": largest}, status=201
        )
    )
    assert game["code"] == largest and game["chosen"] is True
