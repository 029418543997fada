"""Load test of the move endpoint over real HTTP, beside a bare baseline in the same run.

Two drivers. The Python driver plays real games (below). When `wrk` is installed (Debian
package `wrk`), a second measurement drives the server with wrk (one C thread, 64 connections,
a few thousand games alternating a move and its undo: every request an accepted action), beside
the bare baseline endpoint in its raw-asyncpg and SQLAlchemy modes, alternating rounds. The wrk
figures are the server's own: the Python driver's figures include its own CPU on this 2-core
machine.

Starts the server (one process) on PostgreSQL (a fresh database `solitaire_bench` on
$BENCH_PG_URL, default postgresql://postgres@127.0.0.1:5432/test's server) and then on SQLite,
and drives it with N concurrent players, each playing random legal moves of its own game (its
legal moves come from a local copy of the engine following the deal code it asked for, so no
request is spent on them; now and then it undoes). Rounds alternate with the bare baseline
(bench/baseline_server.py: one SELECT ... FOR UPDATE + INSERT + UPDATE transaction per request)
because the machine is shared and only ratios are stable. Prints `name=value` figures.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
from yarl import URL

from server.engine import DealCode, Game, Rule

PLAYERS = int(os.environ.get("BENCH_PLAYERS", "64"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "10"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
PG_URL = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
ROOT = Path(__file__).resolve().parent.parent


async def fresh_pg(name: str) -> str:
    admin = await asyncpg.connect(PG_URL)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return str(URL(PG_URL).with_path("/" + name))


async def start(args: list[str], port: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ, RATE_LIMIT="0")
    process = subprocess.Popen(
        [sys.executable, *args, "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    async with aiohttp.ClientSession() as session:
        for _ in range(300):
            try:
                async with session.get(f"http://127.0.0.1:{port}/readyz") as response:
                    if response.status == 200:
                        return process
            except aiohttp.ClientError:
                pass
            if process.poll() is not None:
                raise RuntimeError(process.stderr.read().decode() if process.stderr else "died")
            await asyncio.sleep(0.1)
    raise RuntimeError("server did not start")


def cpu_seconds(process: subprocess.Popen[bytes]) -> float:
    """User + system CPU time of a child process so far (Linux /proc)."""
    fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()


class Player:
    def __init__(self, session: aiohttp.ClientSession, base: str, rng: random.Random) -> None:
        self.session, self.base, self.rng = session, base, rng
        self.auth: dict[str, str] = {}
        self.game_id = ""
        self.game: Game | None = None

    async def sign_up(self) -> None:
        async with self.session.post(f"{self.base}/api/v1/players", json={"name": "bench"}) as r:
            self.auth = {"Authorization": f"Bearer {(await r.json())['token']}"}

    async def new_game(self) -> None:
        code = DealCode.random(Rule.CLASSIC, self.rng)
        async with self.session.post(
            f"{self.base}/api/v1/games", json={"code": str(code)}, headers=self.auth
        ) as response:
            self.game_id = (await response.json())["id"]
        self.game = Game.deal(code)

    def next_action(self) -> dict[str, Any] | None:
        game = self.game
        assert game is not None
        if game.history and self.rng.random() < 0.05:
            game.undo()
            return {"action": "undo"}
        moves = game.legal_moves()
        if not moves or game.moves > 400:
            return None
        move = self.rng.choice(moves)
        game.apply(move.card, move.to)
        card, place = str(move).split("-")
        return {"card": card, "to": place}


async def drive_server(base: str, seconds: float) -> tuple[int, list[float], int]:
    rng = random.Random(7)
    connector = aiohttp.TCPConnector(limit=PLAYERS)
    async with aiohttp.ClientSession(connector=connector) as session:
        players = [Player(session, base, random.Random(rng.random())) for _ in range(PLAYERS)]
        await asyncio.gather(*(p.sign_up() for p in players))
        await asyncio.gather(*(p.new_game() for p in players))
        latencies: list[float] = []
        errors = 0
        deadline = time.perf_counter() + seconds

        async def run(player: Player) -> None:
            nonlocal errors
            while time.perf_counter() < deadline:
                body = player.next_action()
                if body is None:
                    await player.new_game()
                    continue
                t0 = time.perf_counter()
                async with session.post(
                    f"{base}/api/v1/games/{player.game_id}/moves", json=body, headers=player.auth
                ) as response:
                    await response.read()
                    if response.status != 200:
                        errors += 1
                latencies.append(time.perf_counter() - t0)

        start = time.perf_counter()
        await asyncio.gather(*(run(p) for p in players))
        elapsed = time.perf_counter() - start
    return len(latencies), sorted(latencies), errors if elapsed else 0


async def drive_baseline(base: str, seconds: float) -> tuple[int, list[float], int]:
    connector = aiohttp.TCPConnector(limit=PLAYERS)
    async with aiohttp.ClientSession(connector=connector) as session:
        latencies: list[float] = []
        errors = 0
        deadline = time.perf_counter() + seconds

        async def run(n: int) -> None:
            nonlocal errors
            while time.perf_counter() < deadline:
                t0 = time.perf_counter()
                async with session.post(f"{base}/move", json={"game_id": n + 1}) as response:
                    await response.read()
                    errors += response.status != 200
                latencies.append(time.perf_counter() - t0)

        await asyncio.gather(*(run(n) for n in range(PLAYERS)))
    return len(latencies), sorted(latencies), errors


def pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] * 1000 if values else float("nan")


async def measure(label: str, server_args: list[str], baseline_args: list[str]) -> dict[str, float]:
    ours: list[tuple[float, float, float, int, float]] = []
    bare: list[tuple[float, float]] = []
    for round_ in range(ROUNDS):
        process = await start(server_args, 18181)
        try:
            cpu0 = cpu_seconds(process)
            count, latencies, errors = await drive_server("http://127.0.0.1:18181", SECONDS)
            cpu = cpu_seconds(process) - cpu0
        finally:
            stop(process)
        ours.append(
            (count / SECONDS, pct(latencies, 0.5), pct(latencies, 0.99), errors, cpu / count)
        )
        print(f"# {label} round {round_ + 1}: server {count / SECONDS:.0f} moves/s", flush=True)
        process = await start(baseline_args, 18182)
        try:
            cpu0 = cpu_seconds(process)
            count, latencies, _ = await drive_baseline("http://127.0.0.1:18182", SECONDS)
            cpu = cpu_seconds(process) - cpu0
        finally:
            stop(process)
        bare.append((count / SECONDS, cpu / count))
        print(f"# {label} round {round_ + 1}: baseline {count / SECONDS:.0f} req/s", flush=True)
    rate = statistics.median(r[0] for r in ours)
    bare_rate = statistics.median(b[0] for b in bare)
    return {
        f"{label}_moves_per_s": rate,
        f"{label}_p50_ms": statistics.median(r[1] for r in ours),
        f"{label}_p99_ms": statistics.median(r[2] for r in ours),
        f"{label}_errors": sum(r[3] for r in ours),
        f"{label}_server_cpu_us_per_move": statistics.median(r[4] for r in ours) * 1e6,
        f"{label}_baseline_req_per_s": bare_rate,
        f"{label}_baseline_cpu_us_per_req": statistics.median(b[1] for b in bare) * 1e6,
        f"{label}_ratio_to_baseline": rate / bare_rate,
    }


WRK_GAMES = 3000
WRK_SECONDS = 10


async def wrk(url: str, script: str, env: dict[str, str]) -> tuple[float, float, int]:
    """(requests/s, p99 ms, non-2xx responses) of one wrk run."""
    process = await asyncio.create_subprocess_exec(
        "wrk",
        "-t1",
        "-c64",
        f"-d{WRK_SECONDS}s",
        "--latency",
        "-s",
        script,
        url,
        env=dict(os.environ, **env),
        stdout=asyncio.subprocess.PIPE,
    )
    out = (await process.communicate())[0].decode()
    rate = float(out.split("Requests/sec:")[1].split()[0])
    found = re.search(r" 99%\s+([\d.]+)(us|ms|s)\b", out)
    assert found is not None, out
    p99 = float(found.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[found.group(2)]
    bad = int(out.split("Non-2xx or 3xx responses:")[1].split()[0]) if "Non-2xx" in out else 0
    return rate, p99, bad


async def wrk_games(base: str, path: Path) -> None:
    """A player and WRK_GAMES games of one deal, written as the Lua file wrk_move.lua reads."""
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{base}/api/v1/players", json={"name": "wrk"}) as response:
            token = (await response.json())["token"]
        auth = {"Authorization": f"Bearer {token}"}
        limit = asyncio.Semaphore(32)

        async def one() -> str:
            async with (
                limit,
                session.post(
                    f"{base}/api/v1/games", json={"code": "RU1-C-AAAAAFN"}, headers=auth
                ) as response,
            ):
                game_id: str = (await response.json())["id"]
                return game_id

        ids = await asyncio.gather(*(one() for _ in range(WRK_GAMES)))
    games = ",".join(f'"{game_id}"' for game_id in ids)
    path.write_text(f'token = "{token}"\ngames = {{{games}}}\n')


async def measure_wrk() -> dict[str, float]:
    ours: list[tuple[float, float, int]] = []
    raw: list[float] = []
    orm: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        games = Path(tmp) / "games.lua"
        for _ in range(ROUNDS):
            url = await fresh_pg("solitaire_bench_wrk")
            process = await start(["-m", "server", "--database-url", url], 18183)
            try:
                await wrk_games("http://127.0.0.1:18183", games)
                ours.append(
                    await wrk(
                        "http://127.0.0.1:18183", "bench/wrk_move.lua", {"GAMES_LUA": str(games)}
                    )
                )
            finally:
                stop(process)
            print(f"# wrk: server {ours[-1][0]:.0f} moves/s", flush=True)
            for mode, into in (("pg_raw", raw), ("pg_orm", orm)):
                base_url = await fresh_pg("solitaire_bench_wrk_baseline")
                process = await start(
                    ["bench/baseline_server.py", "--mode", mode, "--database-url", base_url], 18184
                )
                try:
                    into.append(
                        (await wrk("http://127.0.0.1:18184", "bench/wrk_baseline.lua", {}))[0]
                    )
                finally:
                    stop(process)
                print(f"# wrk: baseline {mode} {into[-1]:.0f} req/s", flush=True)
    rate = statistics.median(r[0] for r in ours)
    return {
        "wrk_pg_moves_per_s": rate,
        "wrk_pg_p99_ms": statistics.median(r[1] for r in ours),
        "wrk_pg_non_2xx": sum(r[2] for r in ours),
        "wrk_pg_raw_baseline_req_per_s": statistics.median(raw),
        "wrk_pg_orm_baseline_req_per_s": statistics.median(orm),
        "wrk_ratio_to_pg_raw": rate / statistics.median(raw),
        "wrk_ratio_to_pg_orm": rate / statistics.median(orm),
    }


async def main() -> None:
    figures: dict[str, float] = {}
    pg = await fresh_pg("solitaire_bench")
    pg_base = await fresh_pg("solitaire_bench_baseline")
    figures |= await measure(
        "pg",
        ["-m", "server", "--database-url", pg],
        ["bench/baseline_server.py", "--mode", "pg_orm", "--database-url", pg_base],
    )
    with tempfile.TemporaryDirectory() as tmp:
        figures |= await measure(
            "sqlite",
            ["-m", "server", "--database-url", f"sqlite:///{tmp}/bench.db"],
            [
                "bench/baseline_server.py",
                "--mode",
                "sqlite_orm",
                "--database-url",
                f"sqlite:///{tmp}/baseline.db",
            ],
        )
    if shutil.which("wrk"):
        figures |= await measure_wrk()
    else:
        print("# wrk is not installed: only the Python driver's figures")
    print(f"players={PLAYERS}")
    for name, value in figures.items():
        print(f"{name}={value:.2f}" if isinstance(value, float) else f"{name}={value}")


if __name__ == "__main__":
    asyncio.run(main())
