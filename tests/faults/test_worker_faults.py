"""A server process killed under `--workers 2` (issue 21): the parent and two workers sharing
the port on the suite's PostgreSQL, 6 players over HTTP and 6 over the WebSocket; one worker
is SIGKILLed. Its sockets and keep-alive connections die under the players, who retry (a new
connection reaches the surviving worker): nothing lost or doubled, no 500, no traceback, the
parent still running and the port still served. The players need only the surviving worker;
the parent then starts another in the killed one's place (two workers again, the killed one
not among them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from tests.faults.harness import Server, scenario, spawned_children, verdict, worker_fault


async def test_players_lose_and_double_nothing_when_a_worker_is_killed(
    pg_database: str, tmp_path: Path, show: Callable[..., None]
) -> None:
    server = Server(pg_database, tmp_path / "server.log", "--workers", "2")
    killed: list[int] = []
    try:
        kill = worker_fault(server, killed)
        workers: list[int] = []

        async def watch() -> None:
            """The parent's workers once it has replaced the killed one (up to 10 s)."""
            for _ in range(100):
                now = spawned_children(server.process.pid)
                if len(now) == 2 and killed[0] not in now:
                    workers.extend(now)
                    return
                await asyncio.sleep(0.1)

        watching: list[asyncio.Task[None]] = []

        async def fault() -> None:
            await kill()
            watching.append(asyncio.create_task(watch()))

        report = await scenario(server, [("worker_sigkill", fault)], then_s=3.0)
        await asyncio.gather(*watching)
    finally:
        server.close()
    show(*report.lines(), f"killed_worker={killed}")
    assert not report.problems(), verdict(report, server)
    assert report.actions_acknowledged > 0
    assert len(workers) == 2 and killed[0] not in workers, (killed, workers)
    assert "starting another" in server.log_text(), "the parent did not replace the worker"
