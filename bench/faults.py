"""Faults under players, measured: the fault suite's scenario (tests/faults/), longer.

Everything runs on dependencies of the bench's own: a PostgreSQL cluster made by `initdb` in a
temporary folder (as the `postgres` user when run as root, on a free port, never the machine's
5432 cluster) and a `redis-server` on a free port (tests/faults/cluster.py). In each run
BENCH_HTTP (6) players act over HTTP and BENCH_WS (6) over the WebSocket, every action keyed
(a uuid4 `Idempotency-Key`) and retried with the same key on no answer, a 5xx or a 429, every
0.1 s; 3% of the attempts give up on their answer at once and are retried so too
(tests/faults/harness.py says how they play and what is checked):

1. `pg`: one server process on PostgreSQL; BENCH_ROUNDS (2) rounds of the cluster's three
   faults in turn: `pg_ctl restart -m fast`, the postmaster SIGKILLed and started again (crash
   recovery), `pg_ctl stop -m immediate` with 3 s down; BENCH_PLAY_S (6) seconds of play after
   each recovery.
2. `redis`: one server process on PostgreSQL with Redis as its broker and rate budgets' storage;
   BENCH_ROUNDS times Redis SIGKILLed, 3 s down, started again.
3. `workers`: `--workers 2` on PostgreSQL; one worker SIGKILLed (the other serves on).
4. `sqlite`: one server process on a SQLite file; BENCH_ROUNDS times another process holds the
   file's write lock (`BEGIN EXCLUSIVE`) 8 s, past DATABASE_WAIT_S (5 s).

After each run the players stop and every game is checked: its move log against the actions
acknowledged (`games_lost_moves`: a game missing an acknowledged action; `games_doubled_moves`:
a game with more entries than actions sent), its final result against a replay of the log by
the engine (`games_wrong_result`), the server's log for tracebacks.

Printed last as `name=value` lines, each run's figures prefixed with its name (`pg_answers_500`,
`sqlite_answers_503_while_locked`, `recovery_s_<fault>` of the last round, ...) and the totals
unprefixed: `games`, `actions_acknowledged`, `actions_replayed` (acknowledged answers that were
a retry's stored answer), `answers_500` (any 5xx but 503), `answers_503`, `answers_429`,
`answers_none` (no answer: refused, reset, timed out), `answers_dropped` (answers the players
did not wait for), `games_lost_moves`,
`games_doubled_moves`, `games_wrong_result`, `recovery_max_s` (the dependency back → the first
200 to an action sent after, the worst fault), `waits_503_max_s` (the longest a 503 took),
`server_tracebacks`, `bench_seconds`. The first few tracebacks' last lines are printed before
the figures. About three minutes on a 2-core machine; no arguments.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # this checkout's server and suite
    sys.path.insert(0, str(ROOT))

from server.store.db import migrate  # noqa: E402
from tests.faults.cluster import OwnRedis, PgCluster, pg_bindir  # noqa: E402
from tests.faults.harness import (  # noqa: E402
    Report,
    Server,
    answered_while_locked,
    postgres_faults,
    redis_fault,
    redis_settings,
    scenario,
    sqlite_lock_fault,
    worker_fault,
)

HTTP = int(os.environ.get("BENCH_HTTP", "6"))
WS = int(os.environ.get("BENCH_WS", "6"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
PLAY_S = float(os.environ.get("BENCH_PLAY_S", "6"))
WARM_UP = 300
SUMMED = (
    "games",
    "actions_acknowledged",
    "actions_replayed",
    "answers_200",
    "answers_500",
    "answers_503",
    "answers_429",
    "answers_none",
    "answers_dropped",
    "answers_other",
    "games_lost_moves",
    "games_doubled_moves",
    "games_wrong_result",
    "unrecovered_faults",
    "server_tracebacks",
)


async def run(server: Server, faults: list[tuple[str, Callable[[], Awaitable[None]]]]) -> Report:
    try:
        return await scenario(server, faults, warm_up=WARM_UP, then_s=PLAY_S, http=HTTP, ws=WS)
    finally:
        server.close()


def database(cluster: PgCluster, name: str) -> str:
    """A fresh database of the bench's cluster at the latest migration."""
    import asyncpg  # the server's driver

    async def create() -> None:
        admin = await asyncpg.connect(cluster.url())
        try:
            await admin.execute(f'CREATE DATABASE "{name}"')
        finally:
            await admin.close()

    asyncio.run(create())
    url = cluster.url(name)
    migrate(url)
    return url


async def measure(
    cluster: PgCluster, folder: Path, urls: dict[str, str]
) -> tuple[dict[str, Report], int]:
    """Each run's report, and the 503s answered while SQLite's lock was still held."""
    reports: dict[str, Report] = {}
    pg = postgres_faults(cluster)
    reports["pg"] = await run(
        Server(urls["pg"], folder / "pg.log"),
        [(name, fault) for _ in range(ROUNDS) for name, fault in pg.items()],
    )
    redis = OwnRedis()
    await redis.start()
    try:
        reports["redis"] = await run(
            Server(urls["redis"], folder / "redis.log", env=redis_settings(redis)),
            [("redis_sigkill_3s", redis_fault(redis))] * ROUNDS,
        )
    finally:
        redis.close()
    workers = Server(urls["workers"], folder / "workers.log", "--workers", "2")
    reports["workers"] = await run(workers, [("worker_sigkill", worker_fault(workers, []))])
    path = folder / "solitaire.db"
    held: list[list[float]] = [[] for _ in range(ROUNDS)]
    reports["sqlite"] = await run(
        Server(f"sqlite:///{path}", folder / "sqlite.log"),
        [("sqlite_locked_8s", sqlite_lock_fault(path, moments)) for moments in held],
    )
    return reports, sum(answered_while_locked(reports["sqlite"], moments) for moments in held)


def main() -> None:
    began = time.monotonic()
    bindir = pg_bindir()
    if bindir is None:
        sys.exit("bench/faults.py: PostgreSQL's initdb and pg_ctl are needed (pg_config --bindir)")
    cluster = PgCluster(bindir)
    folder = Path(tempfile.mkdtemp(prefix="solitaire-bench-faults-"))
    try:
        cluster.start()
        urls = {
            name: database(cluster, f"bench_faults_{name}") for name in ("pg", "redis", "workers")
        }
        reports, while_locked = asyncio.run(measure(cluster, folder, urls))
    finally:
        cluster.close()
        shutil.rmtree(folder, ignore_errors=True)
    totals: dict[str, float] = dict.fromkeys(SUMMED, 0)
    recovery_max = 0.0
    waits_max = 0.0
    lines: list[str] = []
    for name, report in reports.items():
        figures = report.figures()
        for key in SUMMED:
            totals[key] += float(figures[key])
        recovery_max = max(recovery_max, float(figures["recovery_max_s"]))
        waits_max = max(waits_max, float(figures["waits_503_max_s"]))
        lines += [f"{name}_{key}={value}" for key, value in figures.items()]
        for traceback in report.server_tracebacks[:5]:
            print(f"{name} traceback: {traceback}")
        for failure in report.failures[:5]:
            print(f"{name} failure: {failure}")
    lines.append(f"sqlite_answers_503_while_locked={while_locked}")
    lines += [f"{key}={int(value)}" for key, value in totals.items()]
    lines.append(f"recovery_max_s={recovery_max:.2f}")
    lines.append(f"waits_503_max_s={waits_max:.2f}")
    lines.append(f"bench_seconds={time.monotonic() - began:.0f}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
