"""A player's own events over the WebSocket (SPEC 2.6.2; issue 20): `follow_me` → `following_me`,
then a `notice` for every event that concerns the player, in one process on both databases,
with a clock the test moves.

Every kind is caused by someone or something else than the follower's own socket: seats taken
and given up by others (`race_joined`, `race_left`), the countdown (`race_starting` with the
player's own game), the end of a race by the server's tick (`game_ended` timed out,
`race_finished` with the place and the rating change), the end of a day whose daily deal the
player played (`daily_revealed`, once however often it is checked), and another session ended
(`session_revoked`). `since` resumes exactly (nothing lost, nothing twice); no notice shows a
card or a code before its reveal.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from openskill.models import PlackettLuce
from sqlalchemy import select

from server.keys import NOTICES
from server.services import games as games_module
from server.services.notices import KEEP, KINDS
from server.store.models import Race, Rating
from tests.api.boards_helpers import Clock
from tests.api.helpers import Player, action_body, new_player, parse_iso
from tests.api.test_races import CARD_STRINGS, Db, Socket, client, code_forms, db

__all__ = ["client", "db"]  # the fixtures (`clock` is tests/api/conftest.py's)

SETTLE_S = 4.0
MODEL = PlackettLuce()


async def follow(client: TestClient[Any, Any], player: Player, since: int | None = None) -> Any:
    """A socket following `player`; (socket, the `following_me` answer, notices sent before)."""
    socket = await Socket.open(client, player)
    message: dict[str, Any] = {"type": "follow_me", "id": "f"}
    if since is not None:
        message["since"] = since
    await socket.send(message)
    missed = []
    while True:
        body = await socket.receive()
        if body["type"] == "following_me":
            return socket, body, missed
        assert body["type"] == "notice", body
        missed.append(body)


async def notice(socket: Socket, timeout: float = 10.0) -> dict[str, Any]:
    body = await socket.receive(timeout)
    assert body["type"] == "notice", body
    assert set(body) >= {"type", "id", "kind", "at"}
    assert body["kind"] in KINDS
    return body


async def call(
    client: TestClient[Any, Any],
    method: str,
    path: str,
    player: Player | None = None,
    body: Any = None,
    status: int = 200,
) -> Any:
    headers = player.auth if player is not None else {}
    response = await client.request(method, path, json=body, headers=headers)
    assert response.status == status, await response.text()
    return await response.json() if response.status != 204 else None


def clean(text: str, code: str) -> None:
    """No form of the secret code, and no card, in `text`."""
    shown = [form for form in code_forms(code) if form in text]
    assert not shown, f"shows the code as {shown[0]!r}: {text}"
    cards = [card for quoted, card in CARD_STRINGS.items() if quoted in text]
    assert not cards, f"shows cards {cards}: {text}"


async def test_follow_me_needs_a_player(client: TestClient[Any, Any]) -> None:
    socket = await Socket.open(client, None)
    await socket.send({"type": "follow_me", "id": 1})
    body = await socket.receive()
    assert body["type"] == "error" and body["id"] == 1
    assert body["problem"]["status"] == 401
    await socket.send({"type": "ping", "id": 2})
    assert (await socket.receive())["type"] == "pong"  # the socket goes on


async def test_a_bad_since_is_a_422(client: TestClient[Any, Any]) -> None:
    ana = await new_player(client, "ana-since")
    socket = await Socket.open(client, ana)
    for since in (-1, "3", 1.5):
        await socket.send({"type": "follow_me", "since": since, "id": 9})
        body = await socket.receive()
        assert body["type"] == "error" and body["problem"]["status"] == 422, body


async def test_every_race_notice_reaches_its_player_and_since_resumes_exactly(
    client: TestClient[Any, Any], clock: Clock, db: Db
) -> None:
    ana, bo, cy = [await new_player(client, f"{name}-notice") for name in ("ana", "bo", "cy")]
    ana_socket, following, missed = await follow(client, ana)
    assert following == {"type": "following_me", "id": "f", "last": 0} and missed == []
    body = {"seats": 3, "winnable": False, "time_limit_s": 60}
    race = await call(client, "POST", "/api/v1/races", ana, body, 201)
    race_id = race["id"]
    bo_socket, _, _ = await follow(client, bo)
    await call(client, "POST", f"/api/v1/races/{race_id}/join", bo)
    joined = await notice(ana_socket)
    assert joined["kind"] == "race_joined" and joined["id"] == 1
    assert joined["race_id"] == race_id and joined["player"] == {"id": bo.id, "name": bo.name}
    await call(client, "POST", f"/api/v1/races/{race_id}/leave", bo)
    left = await notice(ana_socket)
    assert left["kind"] == "race_left" and left["id"] == 2 and left["player"]["id"] == bo.id
    await call(client, "POST", f"/api/v1/races/{race_id}/join", bo)
    assert (await notice(ana_socket))["id"] == 3
    await call(client, "POST", f"/api/v1/races/{race_id}/join", cy)  # full: the countdown
    started = await call(client, "GET", f"/api/v1/races/{race_id}")
    assert started["status"] == "starting"
    # The deal is fixed as the countdown begins, from the racers' seeds (SPEC 1.8.2).
    code = await db.scalar(select(Race.code).where(Race.id == race_id))
    by_ana = [await notice(ana_socket) for _ in range(2)]
    assert [n["kind"] for n in by_ana] == ["race_joined", "race_starting"]
    assert by_ana[0]["player"]["id"] == cy.id
    starting = by_ana[1]
    assert starting["game_id"] == started["games"][ana.id]
    assert parse_iso(starting["starts_at"]) == parse_iso(started["starts_at"])
    by_bo = [await notice(bo_socket) for _ in range(2)]
    assert [n["kind"] for n in by_bo] == ["race_joined", "race_starting"]
    assert by_bo[1]["game_id"] == started["games"][bo.id]
    # Nobody is told of their own seat: bo's first notice is cy's join.
    assert by_bo[0]["player"]["id"] == cy.id and by_bo[0]["id"] == 1
    # Ana quits in the countdown; bo and cy are timed out at the deadline by the server.
    clock.now += 5_000
    await call(client, "POST", f"/api/v1/games/{started['games'][ana.id]}/abandon", ana)
    clock.now += 61_000
    ended = await notice(bo_socket, SETTLE_S * 3)
    assert ended["kind"] == "game_ended", ended
    assert ended == {
        **ended,
        "game_id": started["games"][bo.id],
        "race_id": race_id,
        "reason": "timed_out",
    }
    finished_bo = await notice(bo_socket)
    finished_ana = await notice(ana_socket, SETTLE_S)
    assert finished_ana["kind"] == finished_bo["kind"] == "race_finished"
    race = await call(client, "GET", f"/api/v1/races/{race_id}")
    assert race["status"] == "finished"
    places = {s["player"]["id"]: s["place"] for s in race["standings"]}
    assert finished_bo["place"] == places[bo.id] and finished_ana["place"] == places[ana.id]
    # The notice tells the rating the race left (or none, when the race changed nobody's).
    async with db.engine.connect() as connection:
        query = select(Rating.mu, Rating.sigma, Rating.ordinal, Rating.races)
        rating = (await connection.execute(query.where(Rating.player_id == bo.id))).one_or_none()
    if rating is None:
        assert finished_bo["rating"] is None and finished_bo["ordinal_change"] is None
    else:
        assert finished_bo["rating"] == {
            "mu": rating.mu,
            "sigma": rating.sigma,
            "ordinal": rating.ordinal,
            "races": rating.races,
        }
        first = MODEL.rating().ordinal()  # bo's first race: from the default rating
        assert abs(finished_bo["ordinal_change"] - (rating.ordinal - first)) < 1e-9
    # Ana abandoned herself: no game_ended for her; everything before the end hid the code.
    texts = [json.dumps(n) for n in [joined, left, *by_ana, *by_bo, ended]]
    for text in texts:
        clean(text, code)
    await ana_socket.quiet(0.3)

    # Resuming: `since` gives exactly what came after it, then `following_me` with the last.
    # Ana's: bo joined, left, joined; cy joined; the countdown; the end.
    for since in (0, 2, 4, 6, 99):
        _, following, missed = await follow(client, ana, since)
        assert [n["id"] for n in missed] == list(range(since + 1, 7)), since
        assert following["last"] == 6
    _, following, missed = await follow(client, ana, 4)
    assert [n["kind"] for n in missed] == ["race_starting", "race_finished"]
    assert missed[-1] == finished_ana

    # Following again on the same socket never repeats a notice.
    await ana_socket.send({"type": "follow_me", "since": 0, "id": "again"})
    assert (await ana_socket.receive()) == {"type": "following_me", "id": "again", "last": 6}
    await ana_socket.quiet(0.3)


async def test_a_session_ended_elsewhere_is_told(client: TestClient[Any, Any]) -> None:
    ana = await new_player(client, "ana-sessions")
    password = "correct horse battery"
    await call(client, "PUT", "/api/v1/me/password", ana, {"password": password}, 204)
    signed = await call(
        client, "POST", "/api/v1/sessions", None, {"name": ana.name, "password": password}, 201
    )
    other = Player(ana.id, ana.name, signed["token"])
    socket, _, _ = await follow(client, ana)
    await call(client, "DELETE", "/api/v1/me/sessions/current", other, None, 204)
    told = await notice(socket)
    assert told["kind"] == "session_revoked"
    assert told["session_id"] == signed["session"]["id"]


async def test_the_daily_reveal_reaches_who_played_that_day_once(
    client: TestClient[Any, Any], clock: Clock
) -> None:
    ana, bo = await new_player(client, "ana-daily"), await new_player(client, "bo-daily")
    game = await call(client, "POST", "/api/v1/games", ana, {"daily": True}, 201)
    assert game["code"] is None  # hidden until the day ends
    daily = await call(client, "GET", "/api/v1/daily?rule=classic")
    ana_socket, _, _ = await follow(client, ana)
    bo_socket, _, _ = await follow(client, bo)
    notices = client.app[NOTICES]
    await notices.reveal_daily()  # the day has not ended: nothing (yesterday had no players)
    await ana_socket.quiet(0.3)
    clock.now += 24 * 3600 * 1000
    revealed = await asyncio.gather(*(notices.reveal_daily() for _ in range(3)))
    assert revealed.count(True) <= 1  # (the app's own check may have come first)
    told = await notice(ana_socket)
    assert told["kind"] == "daily_revealed"
    assert told["date"] == daily["date"] and told["rule"] == "classic"
    ended = await call(client, "GET", f"/api/v1/games/{game['id']}")
    assert told["code"] == ended["code"] is not None
    await ana_socket.quiet(0.3)
    await bo_socket.quiet(0.1)  # bo did not play that day


async def test_old_notices_are_pruned_but_the_last_hundred_stay(
    client: TestClient[Any, Any], clock: Clock
) -> None:
    ana = await new_player(client, "ana-prune")
    notices = client.app[NOTICES]

    async def post(count: int) -> None:
        async with notices.writers.begin() as session:
            for _ in range(count):
                await notices.post(session, ana.id, "session_revoked", {"session_id": "x"})

    await post(KEEP + 20)
    # Within 24 h every one is kept.
    assert [n.id for n in await notices.since(ana.id, 0, 1000)] == list(range(1, KEEP + 21))
    clock.now += 25 * 3600 * 1000
    await post(1)
    kept = [n.id for n in await notices.since(ana.id, 0, 1000)]
    assert kept == list(range(KEEP + 21 - KEEP + 1, KEEP + 22))
    assert len(kept) == KEEP


async def test_the_action_limit_ending_a_game_is_told(
    client: TestClient[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit (5,000 actions) made small: the action that reaches it ends the game, and the
    player hears why; the actions before it tell nothing."""
    monkeypatch.setattr(games_module, "MAX_ACTIONS", 3)
    ana = await new_player(client, "ana-limit")
    socket, _, _ = await follow(client, ana)
    game = await call(client, "POST", "/api/v1/games", ana, {"code": "RU1-C-AAAAAFN"}, 201)
    for text in ("3D-t3", "QD-t4"):
        await call(client, "POST", f"/api/v1/games/{game['id']}/moves", ana, action_body(text))
    await socket.quiet(0.3)
    last = await call(client, "POST", f"/api/v1/games/{game['id']}/moves", ana, action_body("AC-f"))
    assert last["game"]["status"] == "abandoned"
    told = await notice(socket)
    assert told["kind"] == "game_ended"
    assert (told["game_id"], told["race_id"], told["reason"]) == (game["id"], None, "action_limit")


async def test_signing_in_as_another_player_stops_the_first_ones_notices(
    client: TestClient[Any, Any],
) -> None:
    ana, bo, cy = [await new_player(client, f"{name}-reauth") for name in ("ana", "bo", "cy")]
    socket, _, _ = await follow(client, ana)
    await socket.send({"type": "auth", "id": "as-bo", "token": bo.token})
    assert (await socket.receive())["type"] == "authenticated"
    body = {"seats": 3, "winnable": False, "time_limit_s": 60}
    race = await call(client, "POST", "/api/v1/races", ana, body, 201)
    await call(client, "POST", f"/api/v1/races/{race['id']}/join", cy)
    await socket.quiet(0.3)  # ana's race_joined goes to ana's followers only
    _, following, missed = await follow(client, ana, 0)
    assert [n["kind"] for n in missed] == ["race_joined"] and following["last"] == 1


async def test_the_export_holds_the_notices_kept(client: TestClient[Any, Any]) -> None:
    ana, bo = await new_player(client, "ana-export"), await new_player(client, "bo-export")
    body = {"seats": 3, "winnable": False, "time_limit_s": 60}
    race = await call(client, "POST", "/api/v1/races", ana, body, 201)
    await call(client, "POST", f"/api/v1/races/{race['id']}/join", bo)
    await call(client, "POST", f"/api/v1/races/{race['id']}/leave", bo)
    exported = await call(client, "GET", "/api/v1/me/export", ana)
    _, _, missed = await follow(client, ana, 0)
    assert exported["notices"] == missed
    assert [n["kind"] for n in missed] == ["race_joined", "race_left"]
