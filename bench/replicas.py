"""Reads on a read replica while players play: leaderboard and replay reads per second, and the
players' move p99, with 0 and with 1 replica (SPEC 2.8 "Read replicas").

Everything runs on a primary and a hot standby of the bench's own (tests/replicas/cluster.py:
`initdb` in a temporary folder as the `postgres` user, then `pg_basebackup -R` of it, each on a
free port; never the machine's 5432 cluster). One database, migrated by the first server; then
SEEDED won games of one deal are played through the API (the boards' rows and the replays).

BENCH_ROUNDS (6) rounds, alternating 0 and 1 replica (0, 1, 1, 0, 0, 1): each starts one server
process (`python -m server`, RATE_LIMIT=0; with DATABASE_REPLICA_URLS naming the standby in the
1-replica rounds), then for BENCH_SECONDS (12) BENCH_PLAYERS (16) players play keyed moves (a
fresh `Idempotency-Key` per action, as the web client does; random legal moves of random deals,
bench/load.py's players) while BENCH_READERS (8) anonymous readers read, half the deal's
leaderboard (`GET /api/v1/leaderboards?code=...`), half the replay of a random seeded game
(`GET /api/v1/games/{id}/replay`), as fast as they are answered. Here one machine runs the
primary, the standby, the server and the clients on the same cores: the replica takes the reads'
database work off the primary, not off the machine.

Printed last as `name=value` lines, medians over each kind's rounds:
`replicas_{0,1}_board_reads_per_s`, `_replay_reads_per_s`, `_moves_per_s`, `_move_p99_ms`,
`_move_p50_ms`, `_primary_cpu_s_per_s` and `_standby_cpu_s_per_s` (CPU seconds a second of the
primary's and the standby's processes, from /proc); `replicas_1_read_from_replica` (the share
of the 1-replica rounds' reads answered `X-Read-From: replica`), `move_p99_1_to_0` (the p99
with a replica over without), `errors` (non-200 answers, every round), `bench_seconds`. About
a minute and a half on a 2-core machine; no arguments.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import asyncpg

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # this checkout's server and suite
    sys.path.insert(0, str(ROOT))

from load import next_action, pct, start, stop  # noqa: E402

from server.engine import DealCode, Game, Rule  # noqa: E402
from tests.faults.cluster import PgCluster, free_port, pg_bindir  # noqa: E402
from tests.replicas.cluster import Standby  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "6"))
ORDER = (0, 1, 1, 0)
"""Replicas in each round, in turn (ABBA: a drift of the shared machine falls on both)."""
SECONDS = float(os.environ.get("BENCH_SECONDS", "12"))
PLAYERS = int(os.environ.get("BENCH_PLAYERS", "16"))
READERS = int(os.environ.get("BENCH_READERS", "8"))
SEEDED = 24
TICKS = os.sysconf("SC_CLK_TCK")
DATABASE = "solitaire_bench_replicas"
WON = next(
    g
    for g in json.loads((ROOT / "tests" / "data" / "games.json").read_text())["games"]
    if g["status"] == "won" and g["code"].startswith("RU1-C")
)


def cluster_cpu(data: Path) -> dict[int, float]:
    """CPU seconds (user + system) so far of each process of the cluster in `data`: its
    postmaster's children (the backends, the WAL sender or receiver, the startup process)."""
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    found: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == postmaster:
            found[int(stat.parent.name)] = (int(fields[11]) + int(fields[12])) / TICKS
    return found


def cpu_since(before: dict[int, float], data: Path) -> float:
    """CPU seconds the cluster's processes spent since `before` (new ones: all of theirs)."""
    return sum(now - before.get(pid, 0.0) for pid, now in cluster_cpu(data).items())


def body_of(text: str) -> dict[str, str]:
    card, to = text.split("-")
    return {"card": card, "to": to}


async def sign_up(session: aiohttp.ClientSession, base: str) -> dict[str, str]:
    name = {"name": f"bench-{uuid.uuid4().hex[:12]}"}
    async with session.post(f"{base}/api/v1/players", json=name) as response:
        assert response.status == 201, await response.text()
        return {"Authorization": f"Bearer {(await response.json())['token']}"}


async def seed(base: str) -> list[str]:
    """SEEDED won games of the deal WON, played through the API: their ids."""
    async with aiohttp.ClientSession() as session:

        async def one() -> str:
            auth = await sign_up(session, base)
            async with session.post(
                f"{base}/api/v1/games", json={"code": WON["code"]}, headers=auth
            ) as response:
                game_id: str = (await response.json())["id"]
            for text in WON["actions"]:
                async with session.post(
                    f"{base}/api/v1/games/{game_id}/moves", json=body_of(text), headers=auth
                ) as response:
                    assert response.status == 200, await response.text()
            return game_id

        return list(await asyncio.gather(*(one() for _ in range(SEEDED))))


@dataclass
class Round:
    replicas: int
    seconds: float = 0.0
    moves: list[float] = field(default_factory=list)
    reads: Counter[str] = field(default_factory=Counter)
    read_from: Counter[str] = field(default_factory=Counter)
    errors: int = 0
    primary_cpu_s: float = 0.0
    standby_cpu_s: float = 0.0


async def play_round(base: str, replicas: int, games: list[str]) -> Round:
    result = Round(replicas)
    rng = random.Random(23 + replicas)
    connector = aiohttp.TCPConnector(limit=PLAYERS + READERS)
    async with aiohttp.ClientSession(connector=connector) as session:
        auths = await asyncio.gather(*(sign_up(session, base) for _ in range(PLAYERS)))
        deadline = time.perf_counter() + SECONDS

        async def player(auth: dict[str, str], rng: random.Random) -> None:
            game: Game | None = None
            game_id = ""
            while time.perf_counter() < deadline:
                body = next_action(game, rng) if game is not None else None
                if body is None:
                    code = DealCode.random(Rule.CLASSIC, rng)
                    async with session.post(
                        f"{base}/api/v1/games", json={"code": str(code)}, headers=auth
                    ) as response:
                        game_id = (await response.json())["id"]
                    game = Game.deal(code)
                    continue
                headers = {**auth, "Idempotency-Key": str(uuid.uuid4())}
                t0 = time.perf_counter()
                async with session.post(
                    f"{base}/api/v1/games/{game_id}/moves", json=body, headers=headers
                ) as response:
                    await response.read()
                result.moves.append(time.perf_counter() - t0)
                result.errors += response.status != 200

        async def reader(kind: str, rng: random.Random) -> None:
            while time.perf_counter() < deadline:
                if kind == "board":
                    url = f"{base}/api/v1/leaderboards?code={WON['code']}&by=score&period=all"
                else:
                    url = f"{base}/api/v1/games/{rng.choice(games)}/replay"
                async with session.get(url) as response:
                    await response.read()
                result.errors += response.status != 200
                result.reads[kind] += 1
                result.read_from[response.headers.get("X-Read-From", "none")] += 1

        began = time.perf_counter()
        await asyncio.gather(
            *(player(auth, random.Random(rng.random())) for auth in auths),
            *(
                reader("board" if n % 2 == 0 else "replay", random.Random(rng.random()))
                for n in range(READERS)
            ),
        )
        result.seconds = time.perf_counter() - began
    result.moves.sort()
    return result


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


async def main() -> None:
    began = time.perf_counter()
    bindir = pg_bindir()
    if bindir is None:
        raise SystemExit("PostgreSQL's initdb and pg_ctl are needed (pg_config --bindir)")
    primary = PgCluster(bindir)
    standby: Standby | None = None
    rounds: list[Round] = []
    try:
        primary.start()
        admin = await asyncpg.connect(primary.url())
        await admin.execute(f'CREATE DATABASE "{DATABASE}"')
        await admin.close()
        args = ["-m", "server", "--database-url", primary.url(DATABASE)]
        port = free_port()
        server = await start(args, port)  # migrates the database
        try:
            games = await seed(f"http://127.0.0.1:{port}")
        finally:
            stop(server)
        standby = Standby(primary)
        standby.start()
        await standby.has_database(DATABASE)
        for n in range(ROUNDS):
            replicas = ORDER[n % len(ORDER)]
            if replicas:
                os.environ["DATABASE_REPLICA_URLS"] = standby.url(DATABASE)
            port = free_port()
            server = await start(args, port)
            os.environ.pop("DATABASE_REPLICA_URLS", None)
            try:
                cpu = cluster_cpu(primary.data), cluster_cpu(standby.data)
                done = await play_round(f"http://127.0.0.1:{port}", replicas, games)
                done.primary_cpu_s = cpu_since(cpu[0], primary.data)
                done.standby_cpu_s = cpu_since(cpu[1], standby.data)
            finally:
                stop(server)
            rounds.append(done)
            print(
                f"# round {n + 1}: {replicas} replica(s): "
                f"{done.reads['board'] / done.seconds:.0f} board reads/s, "
                f"{done.reads['replay'] / done.seconds:.0f} replay reads/s, "
                f"{len(done.moves) / done.seconds:.0f} moves/s, "
                f"move p99 {pct(done.moves, 0.99):.0f} ms, primary CPU "
                f"{done.primary_cpu_s / done.seconds:.2f} s/s, standby CPU "
                f"{done.standby_cpu_s / done.seconds:.2f} s/s, read from {dict(done.read_from)}",
                flush=True,
            )
    finally:
        if standby is not None:
            standby.close()
        primary.close()
    figures: dict[str, float] = {}
    for replicas in (0, 1):
        mine = [r for r in rounds if r.replicas == replicas]
        prefix = f"replicas_{replicas}"
        for kind in ("board", "replay"):
            figures[f"{prefix}_{kind}_reads_per_s"] = median(
                [r.reads[kind] / r.seconds for r in mine]
            )
        figures[f"{prefix}_moves_per_s"] = median([len(r.moves) / r.seconds for r in mine])
        figures[f"{prefix}_move_p99_ms"] = median([pct(r.moves, 0.99) for r in mine])
        figures[f"{prefix}_move_p50_ms"] = median([pct(r.moves, 0.5) for r in mine])
        for side in ("primary", "standby"):
            figures[f"{prefix}_{side}_cpu_s_per_s"] = median(
                [getattr(r, f"{side}_cpu_s") / r.seconds for r in mine]
            )
    with_replica = [r for r in rounds if r.replicas == 1]
    served = sum(r.read_from["replica"] for r in with_replica)
    total = sum(sum(r.read_from.values()) for r in with_replica)
    figures["replicas_1_read_from_replica"] = served / total if total else float("nan")
    figures["move_p99_1_to_0"] = (
        figures["replicas_1_move_p99_ms"] / figures["replicas_0_move_p99_ms"]
    )
    figures["errors"] = sum(r.errors for r in rounds)
    figures["bench_seconds"] = time.perf_counter() - began
    print(f"players={PLAYERS}")
    print(f"readers={READERS}")
    print(f"rounds={ROUNDS}")
    for name, value in figures.items():
        print(f"{name}={value:.2f}" if isinstance(value, float) else f"{name}={value}")


if __name__ == "__main__":
    asyncio.run(main())
