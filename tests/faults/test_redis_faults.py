"""Redis failing under players (issue 21): a server process with Redis of the suite's own as
its broker (`BROKER_URL`) and its rate budgets' storage (`RATE_LIMIT_STORAGE`, with a budget
far above the players' pace, so every request asks Redis), on the suite's PostgreSQL; Redis is
killed with SIGKILL, left down 3 s and started again on its port while 6 players act over HTTP
and 6 over the WebSocket. Play needs no Redis: the same checks as for the database's faults
(nothing lost or doubled, no 500, no traceback), the recovery time printed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.faults.cluster import OwnRedis
from tests.faults.harness import Server, redis_fault, redis_settings, scenario, verdict


async def test_players_lose_and_double_nothing_while_redis_is_killed(
    pg_database: str, own_redis: OwnRedis, tmp_path: Path, show: Callable[..., None]
) -> None:
    server = Server(pg_database, tmp_path / "server.log", env=redis_settings(own_redis))
    try:
        report = await scenario(server, [("redis_sigkill_3s", redis_fault(own_redis))])
    finally:
        server.close()
    show(*report.lines())
    assert not report.problems(), verdict(report, server)
    assert report.actions_acknowledged > 0
