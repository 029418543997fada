"""A server killed outright leaves no process behind: its solver workers and its `--workers N`
server processes end with it (`server.services.workers`). Real processes, real signals."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import aiohttp

from tests.process import ROOT, ServerProcess, spawned_children

GONE_S = 30.0


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def until_gone(pids: list[int]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + GONE_S
    while any(alive(pid) for pid in pids):
        assert loop.time() < deadline, [pid for pid in pids if alive(pid)]
        await asyncio.sleep(0.2)


def descendants(pid: int) -> list[int]:
    """Every process spawned under `pid`, its workers' workers included."""
    found = spawned_children(pid)
    for child in list(found):
        found += descendants(child)
    return found


async def test_a_killed_server_leaves_no_process_behind(database_url: str) -> None:
    """SIGKILL to `python -m server` (with `--workers 2` on PostgreSQL): its server workers and
    their solver workers end too, within seconds."""
    workers = database_url.startswith("postgresql")
    extra = ("--workers", "2") if workers else ()
    server = ServerProcess(database_url, ROOT, *extra)
    try:
        await server.ready()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + GONE_S
        while workers and len(spawned_children(server.process.pid)) < 2:
            assert loop.time() < deadline, spawned_children(server.process.pid)
            await asyncio.sleep(0.1)
        async with aiohttp.ClientSession() as session:  # a verdict: a solver worker starts
            url = f"{server.base}/api/v1/deals/RU1-C-AAAAAFN/winnable"
            async with session.get(url) as response:
                assert response.status == 200, await response.text()
        spawned = descendants(server.process.pid)
        assert len(spawned) >= (3 if workers else 1), spawned
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(10)
        await until_gone(spawned)
    finally:
        server.close()
