"""Metrics and logs of `python -m server` as real processes (issue 14): with `--workers 2`
(PostgreSQL) one scrape adds up both workers' requests, whichever worker answers it; with one
process (SQLite) the process's own figures. `LOG_FORMAT=json` gives one JSON object per line, an
access line per request; a request aiohttp refuses (a bad request line, a NUL in a header) is
one line, never a traceback.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from server.metrics import MULTIPROC_DIR
from server.serve import metrics_directory
from tests.process import ROOT, ServerProcess, spawned_children

REQUESTS = 40
HEALTHZ = {"route": "/healthz", "method": "GET", "status": "200"}
COUNTER = "solitaire_http_requests_total"
STARTUP_S = 10.0


def healthz_count(families: Any) -> float:
    total = 0.0
    for family in families:
        for sample in family.samples:
            if sample.name == COUNTER and sample.labels == HEALTHZ:
                total += sample.value
    return total


async def fresh_get(base: str, path: str, headers: dict[str, str] | None = None) -> str:
    """A GET on a connection of its own (the kernel spreads connections over the workers)."""
    connector = aiohttp.TCPConnector(force_close=True)
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        session.get(base + path, headers=headers) as response,
    ):
        assert response.status == 200, await response.text()
        return await response.text()


def environment_of(pid: int) -> dict[str, str]:
    pairs = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(pair.decode().split("=", 1) for pair in pairs if b"=" in pair)


def own_count(directory: Path, pid: int, scratch: Path) -> float:
    """The /healthz requests counted by worker `pid` alone, read from its own file."""
    alone = scratch / str(pid)
    alone.mkdir()
    shutil.copy(directory / f"counter_{pid}.db", alone)
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(alone))  # type: ignore[no-untyped-call]
    return healthz_count(registry.collect())


async def test_one_scrape_adds_up_every_worker(database_url: str, tmp_path: Path) -> None:
    workers = database_url.startswith("postgresql")
    extra = ("--workers", "2") if workers else ()
    server = ServerProcess(database_url, ROOT, *extra)
    try:
        await server.ready()
        pids: list[int] = []
        if workers:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + STARTUP_S
            while len(pids := spawned_children(server.process.pid)) < 2:
                assert loop.time() < deadline, pids
                await asyncio.sleep(0.1)
        sent = 0
        for _ in range(REQUESTS):
            await fresh_get(server.base, "/healthz")
            sent += 1
        if workers:
            # The first worker ready may answer everything while the other is still starting:
            # ask until each has answered (each has written its own file of figures).
            directory = Path(environment_of(pids[0])[MULTIPROC_DIR])
            while not all((directory / f"counter_{pid}.db").exists() for pid in pids):
                assert loop.time() < deadline + 30 * STARTUP_S, pids
                await fresh_get(server.base, "/healthz")
                sent += 1
        # Whichever worker answers the scrape, it counts every request of every worker.
        for _ in range(6):
            scraped = await fresh_get(server.base, "/metrics")
            assert healthz_count(text_string_to_metric_families(scraped)) == sent
        if workers:
            # The parent made a fresh folder for them (none was set) ...
            directories = {environment_of(pid)[MULTIPROC_DIR] for pid in pids}
            assert len(directories) == 1
            directory = Path(directories.pop())
            assert directory.is_dir()
            # ... and both workers answered some of the requests.
            counts = [own_count(directory, pid, tmp_path) for pid in pids]
            assert all(count > 0 for count in counts), counts
            assert sum(counts) == sent
        server.process.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(server.process.wait, 30) == 0, server.output()
        if workers:
            assert not directory.exists()  # removed with the workers
    finally:
        server.close()


async def test_json_log_lines_and_one_line_per_refused_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOG_FORMAT", "json")
    server = ServerProcess(None, tmp_path)
    malformed = [
        b"GET / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n",
        b"GARBAGE\r\n\r\n",
        b"GET /\xff HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 10_000 + b"\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",  # TLS on the HTTP port
    ]
    try:
        await server.ready()
        for raw in malformed:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(raw)
            await writer.drain()
            answer = await reader.read()
            assert answer.startswith(b"HTTP/1.") and b" 400 " in answer.split(b"\r\n")[0]
            writer.close()
            await writer.wait_closed()
        await fresh_get(server.base, "/healthz", {"X-Request-Id": "probe-1"})
        missing_game = f"{server.base}/api/v1/games/{uuid.uuid4()}"
        async with aiohttp.ClientSession() as session, session.get(missing_game) as response:
            assert response.status == 404
            made = response.headers["X-Request-Id"]
        server.process.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(server.process.wait, 30) == 0
        output = server.output()
    finally:
        server.close()

    assert "Traceback" not in output, output
    entries = [json.loads(line) for line in output.splitlines() if line.strip()]
    for entry in entries:
        assert {"time", "level", "logger", "message"} <= set(entry), entry
    refusals = [e for e in entries if e["logger"] == "aiohttp.server"]
    assert len(refusals) == len(malformed), refusals
    assert all(e["message"].startswith("refused a malformed request from ") for e in refusals)
    assert all("\n" not in e["message"] for e in refusals)
    access = [e for e in entries if e["logger"] == "server.access"]
    probe = [e for e in access if e["request_id"] == "probe-1"]
    assert len(probe) == 1
    assert {k: probe[0][k] for k in ("method", "route", "status")} == {
        "method": "GET",
        "route": "/healthz",
        "status": 200,
    }
    assert isinstance(probe[0]["duration_ms"], float)
    missing = [e for e in access if e["request_id"] == made]
    assert len(missing) == 1 and missing[0]["route"] == "/api/v1/games/{id}"
    assert missing[0]["status"] == 404


def test_a_named_metrics_directory_is_cleared_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = tmp_path / "metrics"
    named.mkdir()
    (named / "counter_123.db").write_bytes(b"an earlier run")
    (named / "notes.txt").write_text("not prometheus-client's")
    monkeypatch.setenv(MULTIPROC_DIR, str(named))
    with metrics_directory() as directory:
        assert directory == named
        assert os.environ[MULTIPROC_DIR] == str(named)
        assert sorted(p.name for p in named.iterdir()) == ["notes.txt"]
    assert named.is_dir()


def test_without_a_metrics_directory_a_fresh_one_is_made_and_removed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(MULTIPROC_DIR, raising=False)
    with metrics_directory() as directory:
        assert directory.is_dir() and not any(directory.iterdir())
        assert os.environ[MULTIPROC_DIR] == str(directory)
    assert not directory.exists()
    assert MULTIPROC_DIR not in os.environ
