"""PostgreSQL failing under players (issue 21, SPEC 2.7 "Faults"): a server process on the
suite's own cluster while 6 players act over HTTP and 6 over the WebSocket, each action keyed
and retried; the cluster is (1) restarted with `pg_ctl restart -m fast`, (2) its postmaster
killed with SIGKILL and started again (crash recovery), (3) stopped with `-m immediate`, left
down 3 s and started again. After each: the same server process still serving, every game's
move log its acknowledged actions (each once), each result a replay of its log, no 500, no
traceback in the server's log; the recovery time (the database back → the first 200) printed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.faults.cluster import PgCluster
from tests.faults.harness import Server, postgres_faults, scenario, verdict


@pytest.mark.parametrize("fault", ["restart_fast", "postmaster_sigkill", "stop_immediate_3s"])
async def test_players_lose_and_double_nothing_while_postgresql_fails(
    fault: str,
    pg_cluster: PgCluster,
    pg_database: str,
    tmp_path: Path,
    show: Callable[..., None],
) -> None:
    server = Server(pg_database, tmp_path / "server.log")
    try:
        report = await scenario(server, [(fault, postgres_faults(pg_cluster)[fault])])
    finally:
        server.close()
    show(*report.lines())
    assert not report.problems(), verdict(report, server)
    assert report.actions_acknowledged > 0
