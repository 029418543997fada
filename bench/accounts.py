"""Accounts: sign-ins a second with the chosen Argon2id parameters, and the players' moves while
a flood of wrong passwords arrives from another address.

One server process (`python -m server`) with its DEFAULT rate limit, on a fresh database (a
PostgreSQL database `solitaire_bench_accounts` on $BENCH_PG_URL's server, created and dropped;
a fresh SQLite file when PostgreSQL cannot be reached).

- **Argon2.** `argon2_hash_ms`, `argon2_verify_ms`: the hasher of `server.services.passwords`
  in this process (median of 20; the issue's bound is 50 ms).
- **Sign-ins.** BENCH_SIGNIN_CLIENTS (8) clients sign in with the right password as fast as
  the answers come for BENCH_SECONDS, each sign-in from a fresh address (one address may sign in
  30 times a minute): `signin_per_s`,
  `signin_p50_ms`, `signin_p99_ms`. The server hashes one password at a time
  (one thread at a lowered priority), so the rate is about one core's worth of Argon2.
- **Indistinguishable failures.** 40 sign-ins with names nobody has, and 40 with a real name and
  a wrong password, alternating (spread over names so that no name reaches its limit):
  `wrong_name_ms`, `wrong_password_ms` (medians) and `wrong_timing_ratio` (target: near 1).
- **Players under a flood.** BENCH_PLAYERS (16) players, each from its own address, play random
  legal moves (bench/load.py's `next_action`) over HTTP with an `Idempotency-Key` per action at
  BENCH_PACE (5) actions a second each. BENCH_ROUNDS (3) rounds of a quiet phase and a flood
  phase of BENCH_SECONDS (15) each, alternating in one run; in a flood phase another client from
  127.0.0.2 keeps BENCH_FLOOD_CONCURRENCY (32) sign-ins in flight, each with a wrong password
  (fresh random names, and a few real ones that soon reach their limit): past 30 a minute the
  address's sign-ins are refused before any hashing. Printed:
  `quiet_p50_ms`, `quiet_p99_ms`, `flood_p50_ms`, `flood_p99_ms`, `flood_p99_ratio` (target: at
  most 2), `flood_signins_per_s` and the flood's answers by status (`flood_status_401`,
  `flood_status_429`, ...), `players_refused` (players' actions answered other than 200),
  `server_errors` (5xx in the flood: the target is 0).

With no arguments the run takes about two minutes. Environment: BENCH_PLAYERS, BENCH_PACE,
BENCH_SECONDS, BENCH_ROUNDS, BENCH_SIGNIN_CLIENTS, BENCH_FLOOD_CONCURRENCY, BENCH_PG_URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import statistics
import tempfile
import time
import uuid
from collections import Counter
from typing import Any

import aiohttp
import asyncpg
from load import Server, fresh_pg, next_action, pct, stop
from load import start as load_start

from server.engine import DealCode, Game, Rule  # load puts ROOT on the path
from server.services.passwords import HASHER

PLAYERS = int(os.environ.get("BENCH_PLAYERS", "16"))
PACE = float(os.environ.get("BENCH_PACE", "5"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "15"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SIGNIN_CLIENTS = int(os.environ.get("BENCH_SIGNIN_CLIENTS", "8"))
FLOOD_CONCURRENCY = int(os.environ.get("BENCH_FLOOD_CONCURRENCY", "32"))
PG_URL = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
DATABASE = "solitaire_bench_accounts"
PORT = 18391
BASE = f"http://127.0.0.1:{PORT}"
PASSWORD = "correct horse battery staple"


def session_from(address: str) -> aiohttp.ClientSession:
    """A client whose connections come from `address` (a household of its own)."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(address, 0)))


async def database_url(tmp: str) -> tuple[str, bool]:
    try:
        admin = await asyncpg.connect(PG_URL, timeout=5)
        await admin.close()
    except (OSError, asyncpg.PostgresError, TimeoutError):
        print(f"# PostgreSQL at {PG_URL} cannot be reached: SQLite", flush=True)
        return f"sqlite:///{tmp}/accounts.db", False
    return await fresh_pg(DATABASE), True


def argon2_figures() -> dict[str, float]:
    hashes, checks = [], []
    stored = HASHER.hash(PASSWORD)
    for _ in range(20):
        started = time.perf_counter()
        HASHER.hash(PASSWORD)
        hashes.append(time.perf_counter() - started)
        started = time.perf_counter()
        HASHER.verify(stored, PASSWORD)
        checks.append(time.perf_counter() - started)
    return {
        "argon2_hash_ms": statistics.median(hashes) * 1000,
        "argon2_verify_ms": statistics.median(checks) * 1000,
    }


async def sign_up(session: aiohttp.ClientSession, password: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": f"b-{uuid.uuid4().hex[:12]}"}
    if password is not None:
        body["password"] = password
    for _ in range(20):
        async with session.post(BASE + "/api/v1/players", json=body) as response:
            if response.status == 429:
                await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
                continue
            assert response.status == 201, await response.text()
            made: dict[str, Any] = await response.json()
            return made
    raise RuntimeError("sign-up kept being refused")


async def sign_in(session: aiohttp.ClientSession, name: str, password: str) -> tuple[int, float]:
    started = time.perf_counter()
    async with session.post(
        BASE + "/api/v1/sessions", json={"name": name, "password": password}
    ) as response:
        await response.read()
        return response.status, time.perf_counter() - started


async def sign_in_rate() -> dict[str, float]:
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    deadline = time.monotonic() + SECONDS

    async with session_from("127.0.3.2") as session:
        names = [(await sign_up(session, PASSWORD))["name"] for _ in range(SIGNIN_CLIENTS)]
    tried = 0

    async def client(index: int) -> None:
        nonlocal tried
        while time.monotonic() < deadline:
            # Each sign-in from an address of its own: one address may sign in SIGNIN_LIMIT
            # times a minute, and this measures the server, not that budget.
            tried += 1
            address = f"127.2.{tried // 250 % 250}.{tried % 250 + 1}"
            async with session_from(address) as session:
                status, took = await sign_in(session, names[index], PASSWORD)
            statuses[status] += 1
            if status == 201:
                latencies.append(took)

    started = time.monotonic()
    await asyncio.gather(*(client(i) for i in range(SIGNIN_CLIENTS)))
    elapsed = time.monotonic() - started
    latencies.sort()
    figures = {
        "signin_per_s": len(latencies) / elapsed,
        "signin_p50_ms": pct(latencies, 0.50),
        "signin_p99_ms": pct(latencies, 0.99),
    }
    for status, count in sorted(statuses.items()):
        if status != 201:
            figures[f"signin_status_{status}"] = count
    return figures


async def wrong_timings() -> dict[str, float]:
    names: list[float] = []
    passwords: list[float] = []
    async with session_from("127.0.3.1") as session:
        real = [await sign_up(session, PASSWORD) for _ in range(8)]
    for index in range(40):
        async with session_from(f"127.3.0.{index + 1}") as session:
            _, took = await sign_in(session, f"nobody-{uuid.uuid4().hex[:10]}", PASSWORD)
            names.append(took)
            status, took = await sign_in(session, real[index % 8]["name"], "not the password")
            assert status == 401, status
            passwords.append(took)
    name_ms = statistics.median(names) * 1000
    password_ms = statistics.median(passwords) * 1000
    return {
        "wrong_name_ms": name_ms,
        "wrong_password_ms": password_ms,
        "wrong_timing_ratio": name_ms / password_ms,
    }


class Players:
    """The players: their actions' latencies by phase."""

    def __init__(self) -> None:
        self.phase = "warm"
        self.latencies: dict[str, list[float]] = {"quiet": [], "flood": []}
        self.refused: Counter[int] = Counter()
        self.running = True

    async def play(self, index: int) -> None:
        rng = random.Random(index)
        async with session_from(f"127.0.1.{index + 1}") as session:
            made = await sign_up(session, None)
            auth = {"Authorization": f"Bearer {made['token']}"}
            game_id, game = await self.new_game(session, auth, rng)
            while self.running:
                started = time.perf_counter()
                body = next_action(game, rng)
                if body is None:
                    game_id, game = await self.new_game(session, auth, rng)
                    continue
                headers = {**auth, "Idempotency-Key": str(uuid.uuid4())}
                async with session.post(
                    f"{BASE}/api/v1/games/{game_id}/moves", json=body, headers=headers
                ) as response:
                    await response.read()
                    status = response.status
                took = time.perf_counter() - started
                phase = self.phase
                if phase in self.latencies:
                    self.latencies[phase].append(took)
                    if status != 200:
                        self.refused[status] += 1
                if status != 200:
                    game_id, game = await self.new_game(session, auth, rng)
                await asyncio.sleep(max(0.0, 1 / PACE - took))

    async def new_game(
        self, session: aiohttp.ClientSession, auth: dict[str, str], rng: random.Random
    ) -> tuple[str, Game]:
        code = DealCode(Rule.CLASSIC, rng.randrange(26**7), 1)
        while True:
            async with session.post(
                BASE + "/api/v1/games", json={"code": str(code)}, headers=auth
            ) as response:
                if response.status == 201:
                    return (await response.json())["id"], Game.deal(code)
            await asyncio.sleep(1)


async def flood(seconds: float, statuses: Counter[int]) -> int:
    """Wrong passwords from 127.0.0.2 for `seconds`; the sign-ins answered."""
    deadline = time.monotonic() + seconds
    answered = 0
    async with session_from("127.0.0.2") as session:
        real = [(await sign_up(session, PASSWORD))["name"] for _ in range(4)]

        async def one() -> None:
            nonlocal answered
            while time.monotonic() < deadline:
                name = random.choice(real) if random.random() < 0.1 else uuid.uuid4().hex[:12]
                try:
                    status, _ = await sign_in(session, name, "a wrong password!")
                except aiohttp.ClientError:
                    status = 0
                statuses[status] += 1
                answered += 1
                if status == 429:
                    with contextlib.suppress(Exception):
                        await asyncio.sleep(0.05)

        await asyncio.gather(*(one() for _ in range(FLOOD_CONCURRENCY)))
    return answered


async def under_flood() -> dict[str, float]:
    players = Players()
    tasks = [asyncio.create_task(players.play(i)) for i in range(PLAYERS)]
    await asyncio.sleep(3)  # signed up, first games dealt
    statuses: Counter[int] = Counter()
    rates = []
    ratios = []
    for _ in range(ROUNDS):
        quiet_from = len(players.latencies["quiet"])
        players.phase = "quiet"
        await asyncio.sleep(SECONDS)
        flood_from = len(players.latencies["flood"])
        players.phase = "flood"
        started = time.monotonic()
        answered = await flood(SECONDS, statuses)
        rates.append(answered / (time.monotonic() - started))
        quiet = sorted(players.latencies["quiet"][quiet_from:])
        flooded = sorted(players.latencies["flood"][flood_from:])
        ratios.append(pct(flooded, 0.99) / pct(quiet, 0.99))
    players.running = False
    await asyncio.gather(*tasks, return_exceptions=True)
    quiet = sorted(players.latencies["quiet"])
    flooded = sorted(players.latencies["flood"])
    figures = {
        "quiet_actions": len(quiet),
        "flood_actions": len(flooded),
        "quiet_p50_ms": pct(quiet, 0.50),
        "quiet_p99_ms": pct(quiet, 0.99),
        "flood_p50_ms": pct(flooded, 0.50),
        "flood_p99_ms": pct(flooded, 0.99),
        "flood_p99_ratio": pct(flooded, 0.99) / pct(quiet, 0.99),
        "flood_p99_ratio_rounds": statistics.median(ratios),
        "flood_signins_per_s": statistics.median(rates),
        "players_refused": sum(players.refused.values()),
        "server_errors": sum(n for s, n in statuses.items() if s >= 500 and s != 503),
    }
    for status, count in sorted(statuses.items()):
        figures[f"flood_status_{status}"] = count
    return figures


async def main() -> None:
    began = time.monotonic()
    figures = argon2_figures()
    with tempfile.TemporaryDirectory() as tmp:
        url, postgres = await database_url(tmp)
        server: Server = await load_start(
            ["-m", "server", "--database-url", url], PORT, defaults=True
        )
        try:
            figures.update(await sign_in_rate())
            figures.update(await wrong_timings())
            figures.update(await under_flood())
        finally:
            stop(server)
            if postgres:
                admin = await asyncpg.connect(PG_URL)
                try:
                    await admin.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
                finally:
                    await admin.close()
    figures["postgresql"] = int(postgres)
    figures["bench_seconds"] = time.monotonic() - began
    for name, value in figures.items():
        print(f"{name}={value:.3f}" if isinstance(value, float) else f"{name}={value}")


if __name__ == "__main__":
    asyncio.run(main())
