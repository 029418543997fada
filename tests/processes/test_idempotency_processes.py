"""Idempotent actions across real server processes (SPEC 2.3, 2.7): retries of one
`Idempotency-Key` racing each other in two processes apply once and all get the first answer;
after a SIGKILL every acknowledged keyed action is in the log, and its retry is answered from
the store instead of being applied again.

Both run on both databases (two processes sharing one SQLite file serialize their writes too).
"""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from typing import Any

import aiohttp

from server.engine import DealCode, Game, parse_action
from tests.api.helpers import action_body
from tests.process import ServerProcess, start_game


async def post(
    session: aiohttp.ClientSession, url: str, body: dict[str, Any], headers: dict[str, str]
) -> tuple[int, dict[str, Any], bool]:
    async with session.post(url, json=body, headers=headers) as response:
        document = await response.json(content_type=None)
        return response.status, document, response.headers.get("Idempotent-Replayed") == "true"


async def moves_of(session: aiohttp.ClientSession, base: str, game_id: str) -> list[str]:
    async with session.get(f"{base}/api/v1/games/{game_id}/moves") as response:
        assert response.status == 200
        return [entry["move"] for entry in (await response.json())["moves"]]


async def test_retries_of_one_key_racing_in_two_processes_apply_once(database_url: str) -> None:
    one, two = ServerProcess(database_url), ServerProcess(database_url)
    try:
        await asyncio.gather(one.ready(), two.ready())
        async with aiohttp.ClientSession() as session:
            game_id, auth, _ = await start_game(one.base)
            path = f"/api/v1/games/{game_id}/moves"
            # Both processes hold the game in their caches, each at another version.
            status, _, _ = await post(session, one.base + path, action_body("3D-t3"), auth)
            assert status == 200
            status, _, _ = await post(session, two.base + path, action_body("QD-t4"), auth)
            assert status == 200
            # Alternate a move (a retry is then refused by the position, so the stored answer
            # is looked up) and an undo (a retry is legal again, so only the key stops it).
            rounds = ["AC-f", "undo", "AC-f", "undo", "AC-f", "undo"]
            for n, text in enumerate(rounds):
                headers = {**auth, "Idempotency-Key": f"round-{n}-{uuid.uuid4()}"}
                results = await asyncio.gather(
                    *(
                        post(session, server.base + path, action_body(text), headers)
                        for _ in range(8)
                        for server in (one, two)
                    )
                )
                assert [status for status, _, _ in results] == [200] * 16, results
                first = results[0][1]
                assert first["move"] == text
                assert first["game"]["version"] == 3 + n
                assert all(document == first for _, document, _ in results), results
                assert sorted(replayed for _, _, replayed in results) == [False] + [True] * 15
            log = await moves_of(session, one.base, game_id)
            assert log == ["3D-t3", "QD-t4", *rounds]
            async with session.get(two.base + f"/api/v1/games/{game_id}") as r:
                game = await r.json()
            assert (game["version"], game["moves"]) == (2 + len(rounds), 2 + len(rounds) // 2)
    finally:
        one.close()
        two.close()


async def test_keyed_actions_survive_sigkill_and_their_retries_are_not_applied_again(
    database_url: str,
) -> None:
    server = ServerProcess(database_url)
    sent: list[tuple[str, str]] = []  # (key, action text), in order
    answers: dict[str, dict[str, Any]] = {}  # key -> the acknowledged answer
    try:
        await server.ready()
        game_id, auth, code = await start_game(server.base)
        async with aiohttp.ClientSession() as session:
            path = f"/api/v1/games/{game_id}/moves"

            async def play() -> None:
                game = Game.deal(DealCode.parse(code))
                rng = random.Random(3)
                while True:
                    if game.history and rng.random() < 0.2:
                        text = "undo"
                    else:
                        moves = game.legal_moves()
                        if not moves:
                            return
                        text = str(rng.choice(moves))
                    key = str(uuid.uuid4())
                    sent.append((key, text))
                    headers = {**auth, "Idempotency-Key": key}
                    try:
                        status, document, _ = await post(
                            session, server.base + path, action_body(text), headers
                        )
                    except (aiohttp.ClientError, ConnectionError):
                        return
                    assert status == 200, document
                    game.play(parse_action(text))
                    answers[key] = document

            player = asyncio.create_task(play())
            while len(answers) < 15:
                await asyncio.sleep(0.01)
            server.kill()
            await asyncio.wait_for(player, 10)
    finally:
        server.close()

    acknowledged = [text for key, text in sent if key in answers]
    again = ServerProcess(database_url)
    try:
        await again.ready()
        async with aiohttp.ClientSession() as session:
            log = await moves_of(session, again.base, game_id)
            assert log[: len(acknowledged)] == acknowledged
            assert len(log) - len(acknowledged) <= 1  # the request in flight, if it committed
            # Each acknowledged action, retried, gets its first answer and is not applied again.
            path = f"{again.base}/api/v1/games/{game_id}/moves"
            for key, text in sent:
                if key not in answers:
                    continue
                headers = {**auth, "Idempotency-Key": key}
                status, document, replayed = await post(session, path, action_body(text), headers)
                assert (status, replayed) == (200, True), document
                assert json.dumps(document, sort_keys=True) == json.dumps(
                    answers[key], sort_keys=True
                )
            assert await moves_of(session, again.base, game_id) == log
            # The request in flight, retried, is applied exactly once: now, or before the kill.
            key, text = sent[-1]
            if key not in answers:
                headers = {**auth, "Idempotency-Key": key}
                status, document, _ = await post(session, path, action_body(text), headers)
                assert status == 200, document
                assert document["move"] == text
                assert await moves_of(session, again.base, game_id) == [*acknowledged, text]
    finally:
        again.close()
