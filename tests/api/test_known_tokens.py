"""A move of a token this process already knows is not looked up first (`server.services.sessions`,
"Known tokens"): its commit tests that the session still holds. These check that every answer
to such a move still follows SPEC 2.2: from the moment a session ends (revoked, its account
erased, expired), every move of its token is `401` and changes nothing, whatever the move (legal,
illegal, malformed, a keyed retry of a move already made). Both databases."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from server.app import create_app
from server.keys import SESSIONS
from server.settings import Settings
from server.store import sessions as session_rows
from tests.api.boards_helpers import Clock
from tests.api.helpers import problem, token_reads
from tests.conftest import ClientFactory
from tests.names import unique_name

CODE = "RU1-C-AAAAAFN"
"""A deal whose first move is AC-f (bench/wrk_move.lua plays it too)."""
PASSWORD = "correct horse battery"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def sign_up(client: TestClient[Any, Any]) -> dict[str, Any]:
    response = await client.post(
        "/api/v1/players", json={"name": unique_name("known"), "password": PASSWORD}
    )
    assert response.status == 201, await response.text()
    made: dict[str, Any] = await response.json()
    return made


async def second_device(client: TestClient[Any, Any], name: str) -> dict[str, Any]:
    response = await client.post("/api/v1/sessions", json={"name": name, "password": PASSWORD})
    assert response.status == 201, await response.text()
    phone: dict[str, Any] = await response.json()
    return phone


async def new_game(client: TestClient[Any, Any], token: str) -> str:
    response = await client.post("/api/v1/games", json={"code": CODE}, headers=bearer(token))
    assert response.status == 201, await response.text()
    game_id: str = (await response.json())["id"]
    return game_id


async def move(
    client: TestClient[Any, Any], token: str, game_id: str, body: Any, key: str | None = None
) -> Any:
    headers = bearer(token)
    if key is not None:
        headers["Idempotency-Key"] = key
    return await client.post(f"/api/v1/games/{game_id}/moves", json=body, headers=headers)


async def version(client: TestClient[Any, Any], token: str, game_id: str) -> int:
    response = await client.get(f"/api/v1/games/{game_id}", headers=bearer(token))
    assert response.status == 200, await response.text()
    found: int = (await response.json())["version"]
    return found


async def refused_every_way(
    client: TestClient[Any, Any], token: str, game_id: str, applied_key: str
) -> None:
    """Every kind of move of `token` is a 401 problem: legal, illegal, malformed, a keyed
    retry of a move that was applied (its stored answer is not given), a fresh keyed move, a
    move on another player's game, on no game."""
    stranger = await sign_up(client)
    theirs = await new_game(client, stranger["token"])
    for path in (theirs, "00000000-0000-4000-8000-000000000000"):
        await problem(await move(client, token, path, {"card": "AC", "to": "f"}), 401)
    for body, key in (
        ({"action": "undo"}, None),  # legal: the game has a move to undo
        ({"card": "KS", "to": "f"}, None),  # illegal
        ({"card": 7}, None),  # malformed
        ({"card": "AC", "to": "f"}, applied_key),  # a retry of the applied move
        ({"action": "undo"}, "fresh-key"),
    ):
        body_doc = await problem(await move(client, token, game_id, body, key), 401)
        assert body_doc["type"].endswith("/unauthorized"), body_doc
    response = await client.post(
        f"/api/v1/games/{game_id}/moves",
        data=b"{not json",
        headers=bearer(token) | {"Content-Type": "application/json"},
    )
    await problem(response, 401)


async def test_a_revoked_token_that_moved_here_is_refused_every_way(
    client: TestClient[Any, Any],
) -> None:
    made = await sign_up(client)
    phone = await second_device(client, made["name"])
    game_id = await new_game(client, phone["token"])
    # The phone's token moves: this process now knows it.
    response = await move(client, phone["token"], game_id, {"card": "AC", "to": "f"}, "k1")
    assert response.status == 200, await response.text()
    response = await client.delete(
        f"/api/v1/me/sessions/{phone['session']['id']}", headers=bearer(made["token"])
    )
    assert response.status == 204
    await refused_every_way(client, phone["token"], game_id, "k1")
    # Nothing was changed: the game is at the version of its one move.
    assert await version(client, made["token"], game_id) == 1
    # The other device's token still plays.
    response = await move(client, made["token"], game_id, {"action": "undo"})
    assert response.status == 200, await response.text()


async def test_an_erased_account_s_known_token_moves_no_more(
    client: TestClient[Any, Any],
) -> None:
    made = await sign_up(client)
    game_id = await new_game(client, made["token"])
    response = await move(client, made["token"], game_id, {"card": "AC", "to": "f"}, "k1")
    assert response.status == 200, await response.text()
    response = await client.delete(
        "/api/v1/me", headers=bearer(made["token"]), json={"password": PASSWORD}
    )
    assert response.status == 204, await response.text()
    await refused_every_way(client, made["token"], game_id, "k1")


async def test_a_known_token_is_refused_once_its_session_expires(
    timed: TestClient[Any, Any], clock: Clock
) -> None:
    made = await sign_up(timed)
    sessions = timed.app[SESSIONS]
    async with sessions.writers.begin() as db:
        token, _ = await sessions.add(
            db, made["id"], "app", ("play", "read"), expires_ms=clock.now + 30_000
        )
    game_id = await new_game(timed, made["token"])
    response = await move(timed, token, game_id, {"card": "AC", "to": "f"}, "k1")
    assert response.status == 200, await response.text()
    clock.now += 29_000
    response = await move(timed, token, game_id, {"action": "undo"})
    assert response.status == 200, await response.text()
    clock.now += 1_000  # the session's last moment has passed
    await refused_every_way(timed, token, game_id, "k1")
    assert await version(timed, made["token"], game_id) == 2


async def test_a_known_token_without_the_play_scope_is_403_until_revoked(
    client: TestClient[Any, Any],
) -> None:
    made = await sign_up(client)
    sessions = client.app[SESSIONS]
    async with sessions.writers.begin() as db:
        token, record = await sessions.add(db, made["id"], "reader", ("read",))
    game_id = await new_game(client, made["token"])
    await problem(await move(client, token, game_id, {"card": "AC", "to": "f"}), 403)
    await problem(await move(client, token, game_id, {"card": "AC", "to": "f"}), 403)
    response = await client.delete(
        f"/api/v1/me/sessions/{record.id}", headers=bearer(made["token"])
    )
    assert response.status == 204
    await problem(await move(client, token, game_id, {"card": "AC", "to": "f"}), 401)
    assert await version(client, made["token"], game_id) == 0


async def test_a_known_token_s_moves_are_not_looked_up_first(
    client: TestClient[Any, Any],
) -> None:
    """The point of it all: once the process knows a token, its moves read no session (the
    commit tests it), and its other requests still do."""
    made = await sign_up(client)
    game_id = await new_game(client, made["token"])
    async with token_reads(client) as lookups:
        for body in ({"card": "AC", "to": "f"}, {"action": "undo"}) * 3:
            response = await move(client, made["token"], game_id, body)
            assert response.status == 200, await response.text()
        assert lookups == []  # new_game verified the token: no move read it
        assert await version(client, made["token"], game_id) == 6
        assert len(lookups) == 1  # a read of the game reads the token


async def test_a_revoked_known_token_over_its_rate_budget_is_401_not_429(
    aiohttp_client: ClientFactory, database_url: str
) -> None:
    """A known token's move is charged to its player's budget before the token is read; a
    spent budget is answered only once the token is read: a revoked token gets its 401."""
    settings = Settings(database_url=database_url, rate_limit=0.625, migrate=False)
    client = await aiohttp_client(create_app(settings))  # 5 requests every 8 s a player
    made = await sign_up(client)
    phone = await second_device(client, made["name"])
    game_id = await new_game(client, phone["token"])
    statuses = []
    for _ in range(6):  # the phone's player's budget is spent
        response = await move(client, phone["token"], game_id, {"card": "KS", "to": "f"})
        statuses.append(response.status)
    assert statuses[-1] == 429, statuses
    # The session ends as another process would end it: this process is not told.
    sessions = client.app[SESSIONS]
    async with sessions.writers.begin() as db:
        assert await session_rows.delete_session(db, made["id"], phone["session"]["id"])
    body = await problem(await move(client, phone["token"], game_id, {"action": "undo"}), 401)
    assert body["type"].endswith("/unauthorized")
