"""Revocation across real server processes (SPEC 2.2): a session ended on one process is `401`
on the other from the moment the `204` is sent (its moves too, which the other process does not
look up first once it knows the token: their commits test the session), and the other's sockets
of that session close with `4401` within 2 s. Both databases (two processes on one SQLite file
too)."""

from __future__ import annotations

import asyncio
import time

import aiohttp
from aiohttp import WSMsgType

from tests.names import unique_name
from tests.process import ServerProcess

PASSWORD = "correct horse battery"


async def test_a_session_ended_on_one_process_is_dead_on_the_other(database_url: str) -> None:
    a, b = ServerProcess(database_url), ServerProcess(database_url)
    try:
        await asyncio.gather(a.ready(), b.ready())
        async with aiohttp.ClientSession() as session:
            name = unique_name("revoked")
            async with session.post(
                a.base + "/api/v1/players", json={"name": name, "password": PASSWORD}
            ) as response:
                assert response.status == 201, await response.text()
                made = await response.json()
            async with session.post(
                b.base + "/api/v1/sessions", json={"name": name, "password": PASSWORD}
            ) as response:
                assert response.status == 201, await response.text()
                phone = await response.json()
            auth = {"Authorization": f"Bearer {phone['token']}"}
            # The phone's token is known to process b (it has been used there, for a move too:
            # b's moves of it are not looked up first, their commits test the session).
            async with session.get(b.base + "/api/v1/me", headers=auth) as response:
                assert response.status == 200
            async with session.post(
                b.base + "/api/v1/games", json={"code": "RU1-C-AAAAAFN"}, headers=auth
            ) as response:
                assert response.status == 201, await response.text()
                game = await response.json()
            moves = b.base + f"/api/v1/games/{game['id']}/moves"
            async with session.post(
                moves, json={"card": "AC", "to": "f"}, headers=auth | {"Idempotency-Key": "k"}
            ) as response:
                assert response.status == 200, await response.text()
            async with session.ws_connect(
                b.base + "/api/v1/live", protocols=("solitaire.v1",), headers=auth
            ) as ws:
                async with session.delete(
                    a.base + f"/api/v1/me/sessions/{phone['session']['id']}",
                    headers={"Authorization": f"Bearer {made['token']}"},
                ) as response:
                    assert response.status == 204
                ended = time.monotonic()
                async with session.get(b.base + "/api/v1/me", headers=auth) as response:
                    assert response.status == 401
                async with session.post(
                    b.base + "/api/v1/games", json={}, headers=auth
                ) as response:
                    assert response.status == 401
                # A legal move, an illegal one, a keyed retry of the move made: all 401.
                for body, key in (
                    ({"action": "undo"}, None),
                    ({"card": "KS", "to": "f"}, None),
                    ({"card": "AC", "to": "f"}, "k"),
                ):
                    headers = auth | ({"Idempotency-Key": key} if key else {})
                    async with session.post(moves, json=body, headers=headers) as response:
                        assert response.status == 401, (body, await response.text())
                async with session.get(
                    a.base + f"/api/v1/games/{game['id']}",
                    headers={"Authorization": f"Bearer {made['token']}"},
                ) as response:
                    assert (await response.json())["version"] == 1  # nothing changed
                msg = await ws.receive(timeout=3)
                closed = time.monotonic() - ended
                assert msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.CLOSING), msg
                assert ws.close_code == 4401
                assert closed < 2.0, closed
    finally:
        for server in (a, b):
            server.close()
