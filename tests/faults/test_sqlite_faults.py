"""SQLite locked by another process (issue 21, SPEC 2.7 "Bounded waits"): a server process on
a SQLite file while 6 players act over HTTP and 6 over the WebSocket; another process takes
the file's write lock (`BEGIN EXCLUSIVE`) and holds it 8 s, longer than DATABASE_WAIT_S
(5 s). Actions sent while it is held are answered `503` with `Retry-After` while it is still
held (no request waits for the lock's end: an ordering of events, not a timed assertion), then
`200`s once it is released; and the same checks as for the other faults (nothing lost or
doubled, no 500, no traceback).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.faults.harness import (
    SQLITE_HOLD_S,
    Server,
    answered_while_locked,
    scenario,
    sqlite_lock_fault,
    verdict,
)

DATABASE_WAIT_S = 5.0


async def test_a_locked_sqlite_file_is_503s_within_the_wait_then_200s(
    tmp_path: Path, show: Callable[..., None]
) -> None:
    path = tmp_path / "solitaire.db"
    held: list[float] = []
    env = {"DATABASE_WAIT_S": str(DATABASE_WAIT_S)}
    server = Server(f"sqlite:///{path}", tmp_path / "server.log", env=env)
    try:
        report = await scenario(server, [("sqlite_locked_8s", sqlite_lock_fault(path, held))])
    finally:
        server.close()
    within = answered_while_locked(report, held)
    show(
        *report.lines(),
        f"lock_held_s={held[1] - held[0]:.2f}",
        f"answers_503_while_locked={within}",
    )
    assert not report.problems(), verdict(report, server)
    assert within, (
        f"no action sent while SQLite was locked was answered 503 before the lock's end "
        f"({SQLITE_HOLD_S:.0f} s; DATABASE_WAIT_S {DATABASE_WAIT_S:.0f} s): requests waited "
        f"for the lock\n{verdict(report, server)}"
    )
