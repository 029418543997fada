"""Accounts (SPEC 2.2, 2.2.2): guests and passwords, sessions per device, signing out and
revocation, scopes, the data export and the account's erasure, and the daily board's rule for
new accounts (SPEC 2.5)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import WSMsgType
from aiohttp.test_utils import TestClient

from server.app import create_app
from server.keys import SESSIONS
from server.settings import Settings
from tests.api.boards_helpers import HOUR, NOW, TODAY, Clock, board
from tests.api.helpers import action_body, problem, vectors
from tests.conftest import Api, ClientFactory
from tests.names import unique_name

PASSWORD = "correct horse battery"
CODE = "RU1-C-AAAAAFN"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def sign_up(
    client: TestClient[Any, Any], name: str | None = None, password: str | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name or unique_name("ana")}
    if password is not None:
        body["password"] = password
    response = await client.post("/api/v1/players", json=body)
    assert response.status == 201, await response.text()
    made: dict[str, Any] = await response.json()
    return made


async def sign_in(
    client: TestClient[Any, Any], name: str, password: str, status: int = 201, **extra: Any
) -> dict[str, Any]:
    response = await client.post(
        "/api/v1/sessions", json={"name": name, "password": password, **extra}
    )
    assert response.status == status, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def me(client: TestClient[Any, Any], token: str, status: int = 200) -> dict[str, Any]:
    response = await client.get("/api/v1/me", headers=bearer(token))
    assert response.status == status, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def scoped_token(client: TestClient[Any, Any], player_id: str, *scopes: str) -> str:
    """A session of the player with only these scopes (as an app's token would have)."""
    sessions = client.app[SESSIONS]
    async with sessions.writers.begin() as db:
        token, _ = await sessions.add(db, player_id, "bot", scopes)
    return token


async def won_game(api: Api, auth: dict[str, str]) -> dict[str, Any]:
    vector = vectors()[0]
    game = await api.game(auth, code=vector["code"])
    for text in vector["actions"]:
        result = await api.act(auth, game["id"], action_body(text))
    assert result["game"]["status"] == "won"
    return game


# ---------------------------------------------------------------- guests, passwords, devices


async def test_a_guest_adds_a_password_and_signs_in_on_a_second_device(
    client: TestClient[Any, Any], api: Api
) -> None:
    made = await sign_up(client)
    first = made["token"]
    assert made["session"]["current"] is True
    assert made["session"]["scopes"] == ["play", "race", "account", "read"]
    assert made["session"]["app"] is None
    game = await won_game(api, bearer(first))
    assert (await me(client, first))["has_password"] is False

    response = await client.put(
        "/api/v1/me/password", json={"password": PASSWORD}, headers=bearer(first)
    )
    assert response.status == 204, await response.text()
    assert (await me(client, first))["has_password"] is True

    other = await sign_in(client, made["name"], PASSWORD, label="phone")
    assert other["player"] == {"id": made["id"], "name": made["name"]}
    assert other["session"]["label"] == "phone"
    assert other["token"] != first
    second = other["token"]
    seen = await me(client, second)
    assert (seen["id"], seen["name"], seen["session"]["id"]) == (
        made["id"],
        made["name"],
        other["session"]["id"],
    )
    # The second device has the player's games and statistics.
    games = await (
        await client.get(f"/api/v1/players/{made['id']}/games", headers=bearer(second))
    ).json()
    assert [g["id"] for g in games["games"]] == [game["id"]]
    stats = await (await client.get(f"/api/v1/players/{made['id']}/stats")).json()
    assert stats["rules"]["classic"]["won"] == 1
    listed = await (await client.get("/api/v1/me/sessions", headers=bearer(second))).json()
    assert [(s["id"], s["current"]) for s in listed["sessions"]] == [
        (made["session"]["id"], False),
        (other["session"]["id"], True),
    ]
    assert all("token" not in json.dumps(s) for s in listed["sessions"])


async def test_sign_up_with_a_password_and_what_a_password_may_be(
    client: TestClient[Any, Any],
) -> None:
    made = await sign_up(client, password=PASSWORD)
    assert (await me(client, made["token"]))["has_password"] is True
    await sign_in(client, made["name"], PASSWORD)
    name = unique_name("bob")
    for password in ("short", "x" * 257, name):
        response = await client.post("/api/v1/players", json={"name": name, "password": password})
        body = await problem(response, 422)
        assert [e["field"] for e in body["errors"]] == ["password"], body
    # Any Unicode, compared once NFC: the composed and decomposed forms are one password.
    composed = "pa\u00dfw\u00f6rd-\u05e9\u05dc\u05d5\u05dd"
    made = await sign_up(client, password=composed)
    await sign_in(client, made["name"], composed.replace("\u00f6", "o\u0308"))


async def test_wrong_name_and_wrong_password_answer_alike(client: TestClient[Any, Any]) -> None:
    made = await sign_up(client, password=PASSWORD)
    guest = await sign_up(client)
    answers = []
    for name, password in (
        (unique_name("nobody"), PASSWORD),
        (made["name"], PASSWORD + "!"),
        (guest["name"], PASSWORD),  # a guest has no password to sign in with
    ):
        response = await client.post("/api/v1/sessions", json={"name": name, "password": password})
        body = await problem(response, 401)
        answers.append((body, response.headers.get("WWW-Authenticate")))
    assert answers[0] == answers[1] == answers[2]
    assert answers[0][0]["type"].endswith("/invalid-credentials")


async def test_failed_sign_ins_are_limited_per_name_from_any_address(
    database_url: str, aiohttp_client: ClientFactory
) -> None:
    client = await aiohttp_client(
        create_app(
            Settings(database_url=database_url, rate_limit=0, migrate=False, trust_forwarded=True)
        )
    )
    made = await sign_up(client, password=PASSWORD)
    other = await sign_up(client, password=PASSWORD)
    for attempt in range(10):
        response = await client.post(
            "/api/v1/sessions",
            json={"name": made["name"], "password": f"wrong password {attempt}"},
            headers={"X-Forwarded-For": f"203.0.113.{attempt + 1}"},
        )
        await problem(response, 401)
    # The eleventh try, from yet another address and with the right password: refused.
    response = await client.post(
        "/api/v1/sessions",
        json={"name": made["name"], "password": PASSWORD},
        headers={"X-Forwarded-For": "198.51.100.7"},
    )
    body = await problem(response, 429)
    assert body["type"].endswith("/too-many-sign-ins")
    assert 0 < int(response.headers["Retry-After"]) <= 15 * 60
    # Another name is not held up.
    await sign_in(client, other["name"], PASSWORD)


# ---------------------------------------------------------------- sessions and revocation


async def test_a_revoked_session_is_refused_at_once(client: TestClient[Any, Any]) -> None:
    made = await sign_up(client, password=PASSWORD)
    phone = await sign_in(client, made["name"], PASSWORD, label="phone")
    response = await client.delete(
        f"/api/v1/me/sessions/{phone['session']['id']}", headers=bearer(made["token"])
    )
    assert response.status == 204
    body = await problem(
        await client.post("/api/v1/games", json={}, headers=bearer(phone["token"])), 401
    )
    assert body["type"].endswith("/unauthorized")
    await me(client, phone["token"], 401)
    await me(client, made["token"])
    # Unknown and foreign sessions are 404.
    stranger = await sign_up(client)
    for session_id in (phone["session"]["id"], stranger["session"]["id"], "nope"):
        response = await client.delete(
            f"/api/v1/me/sessions/{session_id}", headers=bearer(made["token"])
        )
        await problem(response, 404)
    await me(client, stranger["token"])
    # Signing out: the token's own session.
    response = await client.delete("/api/v1/me/sessions/current", headers=bearer(made["token"]))
    assert response.status == 204
    await me(client, made["token"], 401)


async def test_a_password_change_ends_every_other_session(client: TestClient[Any, Any]) -> None:
    made = await sign_up(client, password=PASSWORD)
    laptop = await sign_in(client, made["name"], PASSWORD)
    phone = await sign_in(client, made["name"], PASSWORD)
    headers = bearer(laptop["token"])
    # The current password is needed, and must be right.
    response = await client.put(
        "/api/v1/me/password", json={"password": "a new password"}, headers=headers
    )
    body = await problem(response, 422)
    assert [e["field"] for e in body["errors"]] == ["current_password"]
    response = await client.put(
        "/api/v1/me/password",
        json={"password": "a new password", "current_password": "not it at all"},
        headers=headers,
    )
    assert (await problem(response, 403))["type"].endswith("/wrong-password")
    await me(client, phone["token"])  # nothing changed
    response = await client.put(
        "/api/v1/me/password",
        json={"password": "a new password", "current_password": PASSWORD},
        headers=headers,
    )
    assert response.status == 204
    await me(client, laptop["token"])
    await me(client, made["token"], 401)
    await me(client, phone["token"], 401)
    await sign_in(client, made["name"], PASSWORD, status=401)
    await sign_in(client, made["name"], "a new password")


async def test_a_socket_of_a_revoked_session_closes_with_4401(
    client: TestClient[Any, Any],
) -> None:
    made = await sign_up(client, password=PASSWORD)
    phone = await sign_in(client, made["name"], PASSWORD)
    kept = await client.ws_connect("/api/v1/live", protocols=("solitaire.v1",))
    ws = await client.ws_connect(
        "/api/v1/live", protocols=("solitaire.v1",), headers=bearer(phone["token"])
    )
    await kept.send_str(json.dumps({"type": "auth", "token": made["token"]}))
    assert (await kept.receive_json(timeout=5))["type"] == "authenticated"
    response = await client.delete(
        f"/api/v1/me/sessions/{phone['session']['id']}", headers=bearer(made["token"])
    )
    assert response.status == 204
    msg = await ws.receive(timeout=2)
    assert msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.CLOSING), msg
    assert ws.close_code == 4401
    # The other session's socket stays open.
    await kept.send_str(json.dumps({"type": "ping", "id": 1}))
    assert (await kept.receive_json(timeout=5))["type"] == "pong"
    await kept.close()


async def test_a_socket_closes_when_its_session_ends_elsewhere(
    client: TestClient[Any, Any],
) -> None:
    """A session ended in the database without this process being told (as by another
    process): the guard finds it within 2 s."""
    made = await sign_up(client)
    ws = await client.ws_connect(
        "/api/v1/live", protocols=("solitaire.v1",), headers=bearer(made["token"])
    )
    sessions = client.app[SESSIONS]
    from server.store import sessions as session_rows

    async with sessions.writers.begin() as db:
        await session_rows.delete_session(db, made["id"], made["session"]["id"])
    msg = await ws.receive(timeout=2.5)
    assert msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.CLOSING), msg
    assert ws.close_code == 4401


# ---------------------------------------------------------------- scopes

ROUTES: list[tuple[str, str, str, Any]] = [
    # (scope, method, path, body); "{player}" and "{game}" are filled in
    ("play", "POST", "/api/v1/games", {}),
    ("play", "POST", "/api/v1/games/{game}/moves", {"action": "undo"}),
    ("play", "GET", "/api/v1/games/{game}/hint", None),
    ("play", "POST", "/api/v1/games/{game}/abandon", None),
    ("race", "POST", "/api/v1/races", {"winnable": False}),
    ("account", "GET", "/api/v1/players/{player}/settings", None),
    ("account", "PATCH", "/api/v1/players/{player}/settings", {"double_click": False}),
    ("account", "GET", "/api/v1/me/sessions", None),
    ("account", "PUT", "/api/v1/me/password", {"password": "another password"}),
    ("account", "GET", "/api/v1/me/export", None),
    ("account", "GET", "/api/v1/me/seeds", None),
    ("account", "PUT", "/api/v1/me/seeds", {"client_seed": "scoped"}),
    ("account", "GET", "/api/v1/me/seeds/history", None),
    ("account", "DELETE", "/api/v1/me", None),
]


@pytest.mark.parametrize("scope", ["play", "race", "account", "read"])
async def test_each_scope_refuses_the_routes_it_does_not_cover(
    client: TestClient[Any, Any], api: Api, scope: str
) -> None:
    made = await sign_up(client)
    game = await api.game(bearer(made["token"]), code=CODE)
    token = await scoped_token(client, made["id"], scope)
    for needed, method, path, body in ROUTES:
        if needed == scope:
            continue
        url = path.format(player=made["id"], game=game["id"])
        response = await client.request(method, url, json=body, headers=bearer(token))
        found = await problem(response, 403)
        assert (found["type"].endswith("/missing-scope"), found["scope"]) == (True, needed), (
            method,
            url,
        )
    # What needs no scope answers any token: whose it is, signing out.
    assert (await me(client, token))["session"]["scopes"] == [scope]
    response = await client.delete("/api/v1/me/sessions/current", headers=bearer(token))
    assert response.status == 204


async def test_reading_ones_own_hidden_game_needs_the_read_scope(
    client: TestClient[Any, Any], api: Api
) -> None:
    made = await sign_up(client)
    daily = await api.game(bearer(made["token"]), daily=True)
    player_only = await scoped_token(client, made["id"], "play")
    reader = await scoped_token(client, made["id"], "read")
    path = f"/api/v1/games/{daily['id']}"
    found = await problem(await client.get(path, headers=bearer(player_only)), 403)
    assert found["scope"] == "read"
    assert (await client.get(path, headers=bearer(reader))).status == 200
    # A listing without `read` shows what anyone sees: not the daily game in play.
    listing = f"/api/v1/players/{made['id']}/games"
    seen = await (await client.get(listing, headers=bearer(player_only))).json()
    assert seen["games"] == []
    seen = await (await client.get(listing, headers=bearer(reader))).json()
    assert [g["id"] for g in seen["games"]] == [daily["id"]]
    # Playing it needs `play` only.
    ws = await client.ws_connect(
        "/api/v1/live", protocols=("solitaire.v1",), headers=bearer(reader)
    )
    await ws.send_str(
        json.dumps({"type": "act", "id": 1, "game_id": daily["id"], "action": {"action": "undo"}})
    )
    answer = await ws.receive_json(timeout=5)
    assert (answer["type"], answer["problem"]["scope"]) == ("error", "play")
    await ws.close()


# ---------------------------------------------------------------- the export


async def test_the_export_holds_every_game_and_no_hidden_card(
    client: TestClient[Any, Any], api: Api
) -> None:
    made = await sign_up(client, password=PASSWORD)
    auth = bearer(made["token"])
    won = await won_game(api, auth)
    active = await api.game(auth, code=CODE)
    secret = await api.game(auth)  # a random deal: its code is secret while it is in play
    response = await client.get("/api/v1/me/export", headers=auth)
    assert response.status == 200
    assert "attachment" in response.headers["Content-Disposition"]
    text = await response.text()
    export = json.loads(text)
    assert export["profile"]["id"] == made["id"]
    assert export["profile"]["has_password"] is True
    assert set(export["settings"]) >= {"double_click", "auto_placement"}
    assert [s["id"] for s in export["sessions"]] == [made["session"]["id"]]
    assert "token" not in json.dumps(export["sessions"])
    assert sorted(g["game_id"] for g in export["games"]) == sorted(
        [won["id"], active["id"], secret["id"]]
    )
    assert export["stats"]["rules"]["classic"]["won"] == 1
    by_id = {g["game_id"]: g for g in export["games"]}
    assert (by_id[secret["id"]]["code"], by_id[secret["id"]]["deal"]) == (None, None)
    # A game in play is a replay like any other: its actions, never a position.
    assert by_id[active["id"]]["actions"] == []
    assert "tableau" not in text
    assert made["token"] not in text


# ---------------------------------------------------------------- erasure


async def test_deletion_frees_the_name_drops_the_boards_and_kills_every_token(
    client: TestClient[Any, Any], api: Api
) -> None:
    made = await sign_up(client, password=PASSWORD)
    phone = await sign_in(client, made["name"], PASSWORD)
    auth = bearer(made["token"])
    won = await won_game(api, auth)
    random = await api.game(auth)
    response = await client.post(f"/api/v1/games/{random['id']}/abandon", headers=auth)
    assert response.status == 200
    board = f"/api/v1/leaderboards?code={vectors()[0]['code']}"
    before = await (await client.get(board)).json()
    assert won["id"] in json.dumps(before)
    everyone = await (await client.get("/api/v1/leaderboards")).json()
    assert random["id"] in json.dumps(everyone)

    response = await client.delete(
        "/api/v1/me", json={"password": "not the password"}, headers=auth
    )
    await problem(response, 403)
    response = await client.delete("/api/v1/me", json={"password": PASSWORD}, headers=auth)
    assert response.status == 204, await response.text()

    for token in (made["token"], phone["token"]):
        await me(client, token, 401)
    await sign_in(client, made["name"], PASSWORD, status=401)
    await problem(await client.get(f"/api/v1/players/{made['id']}"), 404)
    await problem(await client.get(f"/api/v1/players/{made['id']}/stats"), 404)
    for path in (board, "/api/v1/leaderboards"):
        text = await (await client.get(path)).text()
        assert made["id"] not in text and won["id"] not in text and random["id"] not in text
    # The games stay, as a deleted player's.
    game = await (await client.get(f"/api/v1/games/{won['id']}")).json()
    assert game["player"] == {"id": None, "name": None}
    assert made["name"] not in json.dumps(game)
    # The name is free again.
    again = await sign_up(client, name=made["name"])
    assert again["id"] != made["id"]


async def test_a_guest_deletes_their_account_without_a_body(client: TestClient[Any, Any]) -> None:
    made = await sign_up(client)
    response = await client.delete("/api/v1/me", headers=bearer(made["token"]))
    assert response.status == 204
    await me(client, made["token"], 401)


async def test_a_deleted_racer_stays_in_the_race_as_deleted_player(
    client: TestClient[Any, Any],
) -> None:
    ana, bob = await sign_up(client), await sign_up(client)
    response = await client.post(
        "/api/v1/races", json={"winnable": False, "seats": 2}, headers=bearer(ana["token"])
    )
    race = await response.json()
    response = await client.post(f"/api/v1/races/{race['id']}/join", headers=bearer(bob["token"]))
    assert response.status == 200
    response = await client.delete("/api/v1/me", headers=bearer(bob["token"]))
    assert response.status == 204
    seen = await (await client.get(f"/api/v1/races/{race['id']}")).json()
    text = json.dumps(seen)
    assert bob["id"] not in text and bob["name"] not in text
    assert {"id": None, "name": None} in seen["players"]
    assert [s["player"] for s in seen["standings"]].count({"id": None, "name": None}) == 1
    assert list(seen["games"]) == [ana["id"]]


async def test_erasure_ends_the_sockets_of_every_session(client: TestClient[Any, Any]) -> None:
    made = await sign_up(client)
    ws = await client.ws_connect(
        "/api/v1/live", protocols=("solitaire.v1",), headers=bearer(made["token"])
    )
    response = await client.delete("/api/v1/me", headers=bearer(made["token"]))
    assert response.status == 204
    msg = await ws.receive(timeout=2)
    assert msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.CLOSING)
    assert ws.close_code == 4401


# ---------------------------------------------------------------- the daily board (SPEC 2.5)


async def test_a_day_old_account_ranks_on_the_daily_board_and_a_new_one_does_not(
    timed: TestClient[Any, Any], tapi: Api, clock: Clock
) -> None:
    clock.now = NOW - HOUR - 12 * HOUR  # 23:00 the day before
    _old, old_auth = await tapi.player()
    clock.now = NOW
    _new, new_auth = await tapi.player()
    games = {}
    for who, auth in (("old", old_auth), ("new", new_auth)):
        game = await tapi.game(auth, daily=True)
        clock.now += 60_000
        response = await timed.post(f"/api/v1/games/{game['id']}/abandon", headers=auth)
        assert response.status == 200
        games[who] = game["id"]
    ranked = await board(timed, daily=TODAY)
    assert [entry["game_id"] for entry in ranked["entries"]] == [games["old"]]
    # The new account's game is practice, not refused: it is theirs to see.
    response = await timed.get(f"/api/v1/games/{games['new']}", headers=new_auth)
    assert response.status == 200
