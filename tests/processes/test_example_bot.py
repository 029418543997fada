"""The example bot (examples/bot.py) plays against a real server process until it wins a
winnable deal: signed up, over the WebSocket with idempotency keys (its first move sent twice
with one key is applied once), `legal` before every move, `follow_me`, the server's hints, and
paced by the RateLimit headers of a server with a low rate limit so that it never meets a 429.
The game is then checked over HTTP on its own: won, its code revealed, its replay valid."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import aiohttp
import pytest

from tests.process import ROOT, ServerProcess

pytestmark = pytest.mark.slow

RATE = 8
"""Requests a second per player. The bot paces itself when fewer than a turn's 3 requests are
left: at 8 a second that is whenever two turns (6 requests) come within one second, which a bot
on a local server does at once and all along, however fast the machine; a rate the bot could
stay under by being slow (20 a second needs 7 turns a second) left `paced > 0` to chance."""


async def run_bot(base: str) -> tuple[int, dict[str, Any], str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "examples" / "bot.py"),
        "--server",
        base,
        "--check-retries",
        "--seed",
        "20",
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), 240)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    lines = out.decode().strip().splitlines()
    summary = json.loads(lines[-1]) if lines else {}
    assert process.returncode is not None
    return process.returncode, summary, err.decode()


async def test_the_example_bot_wins_a_winnable_deal(database_url: str) -> None:
    server = ServerProcess(database_url, ROOT, "--rate-limit", str(RATE))
    try:
        await server.ready()
        code, summary, log = await run_bot(server.base)
        assert code == 0, (summary, log[-3000:], server.output()[-3000:])
        assert summary["status"] == "won", summary
        assert summary["actions"] == summary["moves"] == summary["hints"], summary
        assert summary["own_choices"] == 0 and summary["http_hints"] == 0, summary
        assert summary["replayed"] == 1, summary  # the retried key: one move, answered twice
        assert summary["followed"] is True, summary
        assert f'"player";q={RATE};w=1' in summary["rate_limit_policy"], summary
        assert summary["paced"] > 0, summary  # it met the budget, and waited
        assert summary["conflicts"] == 0, summary  # nobody else moved in its game
        assert summary["refused_429"] == 0, (summary, log[-3000:])

        async with aiohttp.ClientSession() as session:
            base = f"{server.base}/api/v1/games/{summary['game_id']}"
            async with session.get(base) as response:
                game = await response.json()
            assert (game["status"], game["assisted"], game["moves"]) == (
                "won",
                True,
                summary["moves"],
            )
            assert game["code"] is not None and game["code"] == summary["code"]
            async with session.get(base + "/legal") as response:
                assert await response.json() == {
                    "version": game["version"],
                    "moves": [],
                    "undo": False,
                }
            async with session.get(base + "/replay") as response:
                replay = await response.json()
            async with session.post(
                f"{server.base}/api/v1/replays/verify", json=replay
            ) as response:
                verdict = await response.json()
            assert verdict["valid"] is True and verdict["status"] == "won", verdict
    finally:
        server.close()
