"""What the client-facing additions of issue 20 cost and save, over real HTTP on one server
process (SQLite, a fresh file per server):

1. **The rate budgets and their headers** (`RateLimit-Policy`, `RateLimit` on every answer):
   BENCH_PLAYERS (16: the in-flight cap of one address) players acting with idempotency keys
   for BENCH_SECONDS, on a server with the budgets on (`--rate-limit 100000`: every request
   charged and its headers computed, none refused) and on one with them off
   (`--rate-limit 0`), alternating which goes first each round. `ratelimit_on_to_off`
   (moves/s) and `ratelimit_on_to_off_cpu` (server CPU per move) are the stable figures.
2. **One position's moves**: on positions of random playouts, one `GET /legal` against what a
   client had to do before it, one `GET /targets?card=` per face-up card of the tableau and
   per foundation's top card (a take-back): `legal_ms`, `targets_position_ms`,
   `targets_calls_per_position`, `legal_saving` (how many times faster).
3. **Conditional reads**: BENCH_READERS (16) clients reading one game for BENCH_SECONDS, plain
   (`200` with the body) and with `If-None-Match` (`304`): `get_200_per_s`, `get_304_per_s`,
   `get_304_to_200`, and the bytes each answer carries.

Environment: BENCH_PLAYERS, BENCH_READERS, BENCH_SECONDS (4), BENCH_ROUNDS (2), BENCH_POSITIONS
(40). With no arguments the run takes about a minute and a half. Figures last, as `name=value`.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

# Every client here is one address: at most 16 of its requests are answered at once
# (server.api.limits.IN_FLIGHT_PER_ADDRESS), so 16 players, not load.py's 64.
os.environ.setdefault("BENCH_PLAYERS", "16")
from load import SECONDS, Server, cpu_seconds, drive_server, start, stop

from server.engine import DealCode, Game, Rule  # load puts ROOT on the path

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
READERS = int(os.environ.get("BENCH_READERS", "16"))
POSITIONS = int(os.environ.get("BENCH_POSITIONS", "40"))
PORT = 18950


async def server(tmp: str, name: str, rate_limit: str) -> tuple[Server, str]:
    url = f"sqlite:///{Path(tmp) / name}.db"
    args = ["-m", "server", "--database-url", url, "--rate-limit", rate_limit]
    args += ["--signup-limit", "100000"]  # every player of the drive signs up from one address
    return await start(args, PORT), f"http://127.0.0.1:{PORT}"


async def budgets_round(tmp: str, n: int, order: tuple[str, str]) -> dict[str, tuple[float, float]]:
    """moves/s and server CPU µs per move of each variant ("on", "off"), in `order`."""
    figures: dict[str, tuple[float, float]] = {}
    for variant in order:
        process, base = await server(
            tmp, f"budget-{n}-{variant}", "100000" if variant == "on" else "0"
        )
        try:
            cpu0 = cpu_seconds(process)
            drive = await drive_server(base, SECONDS, keyed=True)
            cpu = cpu_seconds(process) - cpu0
        finally:
            stop(process)
        figures[variant] = (drive.rate, cpu / max(1, drive.count) * 1e6)
        if drive.errors:
            print(f"  {variant}: {drive.errors} non-200 answers", file=sys.stderr)
    return figures


async def sign_up(session: aiohttp.ClientSession, base: str) -> dict[str, str]:
    async with session.post(
        f"{base}/api/v1/players", json={"name": f"b{random.getrandbits(40):x}"}
    ) as r:
        return {"Authorization": f"Bearer {(await r.json())['token']}"}


async def new_game(
    session: aiohttp.ClientSession, base: str, auth: dict[str, str], rng: random.Random
) -> tuple[str, Game]:
    code = DealCode.random(Rule.CLASSIC, rng)
    async with session.post(f"{base}/api/v1/games", json={"code": str(code)}, headers=auth) as r:
        return (await r.json())["id"], Game.deal(code)


async def positions(base: str) -> dict[str, float]:
    """One /legal against the /targets calls of every face-up card, on POSITIONS positions."""
    rng = random.Random(11)
    legal: list[float] = []
    targets: list[float] = []
    calls: list[int] = []
    async with aiohttp.ClientSession() as session:
        auth = await sign_up(session, base)
        game_id, game = await new_game(session, base, auth, rng)
        while len(legal) < POSITIONS:
            async with session.get(f"{base}/api/v1/games/{game_id}", headers=auth) as r:
                document: dict[str, Any] = await r.json()
            t0 = time.perf_counter()
            async with session.get(f"{base}/api/v1/games/{game_id}/legal", headers=auth) as r:
                listed = (await r.json())["moves"]
            legal.append(time.perf_counter() - t0)
            cards = [card for column in document["tableau"] for card in column if card]
            cards += [pile[-1] for pile in document["foundations"] if pile]
            t0 = time.perf_counter()
            found: list[str] = []
            for card in cards:
                url = f"{base}/api/v1/games/{game_id}/targets"
                async with session.get(url, params={"card": card}, headers=auth) as r:
                    found += [f"{card}-{place}" for place in (await r.json())["targets"]]
            targets.append(time.perf_counter() - t0)
            calls.append(len(cards))
            if sorted(found) != sorted(listed):
                raise RuntimeError(f"/legal {listed} differs from /targets {found}")
            moves = game.legal_moves()
            if not moves or game.moves > 150:
                game_id, game = await new_game(session, base, auth, rng)
                continue
            move = rng.choice(moves)
            game.apply(move.card, move.to)
            card, place = str(move).split("-")
            url = f"{base}/api/v1/games/{game_id}/moves"
            async with session.post(url, json={"card": card, "to": place}, headers=auth) as r:
                await r.read()
    return {
        "legal_ms": statistics.median(legal) * 1000,
        "targets_position_ms": statistics.median(targets) * 1000,
        "targets_calls_per_position": statistics.mean(calls),
    }


async def reads(base: str, conditional: bool) -> tuple[float, float]:
    """Reads of one game a second by READERS clients, and the mean bytes of an answer's body."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=READERS)) as session:
        auth = await sign_up(session, base)
        game_id, _ = await new_game(session, base, auth, random.Random(3))
        url = f"{base}/api/v1/games/{game_id}"
        async with session.get(url, headers=auth) as r:
            tag = r.headers["ETag"]
        headers = {**auth, "If-None-Match": tag} if conditional else auth
        expected = 304 if conditional else 200
        count = 0
        size = 0
        deadline = time.perf_counter() + SECONDS

        async def run() -> None:
            nonlocal count, size
            while time.perf_counter() < deadline:
                async with session.get(url, headers=headers) as r:
                    size += len(await r.read())
                    if r.status != expected:
                        raise RuntimeError(f"expected {expected}, got {r.status}")
                    count += 1

        t0 = time.perf_counter()
        await asyncio.gather(*(run() for _ in range(READERS)))
        return count / (time.perf_counter() - t0), size / max(1, count)


async def main() -> None:
    began = time.perf_counter()
    rate: dict[str, list[float]] = {"on": [], "off": []}
    cpu: dict[str, list[float]] = {"on": [], "off": []}
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(ROUNDS):
            order = ("on", "off") if n % 2 == 0 else ("off", "on")
            for variant, (moves, us) in (await budgets_round(tmp, n, order)).items():
                rate[variant].append(moves)
                cpu[variant].append(us)
            print(
                f"round {n + 1}: on {rate['on'][-1]:.0f}/s, off {rate['off'][-1]:.0f}/s",
                file=sys.stderr,
            )
        process, base = await server(tmp, "reads", "0")
        try:
            figures = await positions(base)
            plain: list[float] = []
            cond: list[float] = []
            sizes: dict[str, float] = {}
            for n in range(ROUNDS):
                for conditional in (False, True) if n % 2 == 0 else (True, False):
                    per_s, size = await reads(base, conditional)
                    (cond if conditional else plain).append(per_s)
                    sizes["304" if conditional else "200"] = size
        finally:
            stop(process)
    on, off = statistics.median(rate["on"]), statistics.median(rate["off"])
    cpu_on, cpu_off = statistics.median(cpu["on"]), statistics.median(cpu["off"])
    get200, get304 = statistics.median(plain), statistics.median(cond)
    result = {
        "ratelimit_on_moves_per_s": on,
        "ratelimit_off_moves_per_s": off,
        "ratelimit_on_to_off": on / off,
        "ratelimit_on_cpu_us_per_move": cpu_on,
        "ratelimit_off_cpu_us_per_move": cpu_off,
        "ratelimit_on_to_off_cpu": cpu_on / cpu_off,
        **figures,
        "legal_saving": figures["targets_position_ms"] / figures["legal_ms"],
        "get_200_per_s": get200,
        "get_304_per_s": get304,
        "get_304_to_200": get304 / get200,
        "get_200_body_bytes": sizes["200"],
        "get_304_body_bytes": sizes["304"],
        "bench_seconds": time.perf_counter() - began,
    }
    for name, value in result.items():
        print(f"{name}={value:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
