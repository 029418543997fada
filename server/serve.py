"""Running the server: one process, or `--workers N` processes sharing the port.

With `--workers N` (PostgreSQL), N processes share the port (SO_REUSEPORT): the parent migrates
the database once, starts them, replaces one that dies (killed, out of memory: the others
serve the port meanwhile), and passes SIGTERM / SIGINT on to them. Their metrics are kept
in `PROMETHEUS_MULTIPROC_DIR` (a fresh temporary folder when it is not set), which the parent
clears before they start, and each worker's live gauges are dropped when it exits.

Log lines go to stderr, as plain text or (`LOG_FORMAT=json`) one JSON object per line; the lines
written while a request is handled carry its request id. aiohttp's refusals of bytes that are
not HTTP (a bad request line, a header with a NUL byte, a line too long) are one line each, not
a traceback; an error in the server's own code keeps its traceback.

Every process raises its file limit (`RLIMIT_NOFILE`'s soft limit to its hard one) at start and
logs it; the connection caps and timeouts are `server.api.connections`' (64 open connections
per address, 10,000 per process or the file limit less 256, a request head within 10 s, a body
within 10 s, 20 s of idle keep-alive). aiohttp's `web.run_app` is not used: it cannot be given a
protocol of our own, so `serve` does what it does (SIGTERM and SIGINT stop it gracefully: the
listening socket closed, idle connections closed, WebSockets closed with 1001 by the
application's shutdown, requests in flight given `SHUTDOWN_TIMEOUT_S` to finish) with
`connections.Runner`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any, Final

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError
from aiohttp.web_runner import GracefulExit
from prometheus_client.multiprocess import mark_process_dead

from server.api import connections
from server.api.monitoring import REQUEST_ID
from server.app import create_app
from server.metrics import MULTIPROC_DIR
from server.services.workers import exit_with_parent
from server.settings import Settings, SettingsError, from_args
from server.store.db import migrate

log = logging.getLogger("server")

RESTART_PAUSE_S: Final = 1.0
"""A worker that dies sooner than this after its start is replaced only after this pause."""

TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s %(message)s"
SHUTDOWN_TIMEOUT_S: Final = 10.0
"""How long a stopping process gives the requests in flight to finish."""
STANDARD_ATTRIBUTES: Final = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message",
    "asctime",
    "taskName",
}


# ---------------------------------------------------------------- logging


class RequestIdFilter(logging.Filter):
    """Gives a record written while a request is handled that request's id."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            rid = REQUEST_ID.get()
            if rid is not None:
                record.request_id = rid
        return True


class TextFormatter(logging.Formatter):
    """`time level logger message`, then `id=<request id>` when there is one."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        rid = getattr(record, "request_id", None)
        return line if rid is None else f"{line} id={rid}"


class JsonFormatter(logging.Formatter):
    """One JSON object per line: `time` (UTC, ISO 8601), `level`, `logger`, `message`, the
    record's extra fields (the access log's `method`, `route`, `status`, `duration_ms`,
    `request_id`), and `exception` (the traceback) when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in STANDARD_ATTRIBUTES and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str)


def describe_refusal(exc: HttpProcessingError) -> str:
    """aiohttp's account of a refused request on one line, with its status."""
    return f"{exc.code} {connections.describe_refusal(exc)}"


def parse_error(exc: BaseException | None) -> HttpProcessingError | None:
    """The error of aiohttp's parser behind `exc`: the request line or headers it refused, or
    a body it could not decode (then raised again as a `RequestPayloadError`)."""
    if isinstance(exc, RequestPayloadError):
        exc = exc.__cause__
    return exc if isinstance(exc, HttpProcessingError) else None


class OneLineRefusals(logging.Filter):
    """On aiohttp's server logger: a request aiohttp refused (its parser raised an
    `HttpProcessingError`) becomes one WARNING line without a traceback.
    Other errors keep theirs; aiohttp's debug lines are dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        refusal = parse_error(record.exc_info[1] if record.exc_info else None)
        if refusal is not None:
            args = record.args if isinstance(record.args, tuple) else ()
            remote = args[0] if args else "?"
            record.msg = "refused a malformed request from %s: %s"
            record.args = (remote, describe_refusal(refusal))
            record.exc_info = None
            record.exc_text = None
            record.levelno = logging.WARNING
            record.levelname = logging.getLevelName(logging.WARNING)
            return True
        return record.levelno >= logging.INFO


def configure_logging(log_format: str) -> None:
    """Every log line of the process to stderr, in `log_format` (`text` or `json`)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    aiohttp_server = logging.getLogger("aiohttp.server")
    # aiohttp logs a request that is not HTTP at all (a TLS handshake, garbage) at DEBUG: let
    # it reach the filter, which keeps it as one line and drops every other DEBUG line.
    aiohttp_server.setLevel(logging.DEBUG)
    aiohttp_server.addFilter(OneLineRefusals())


def file_limit() -> int:
    """Raises this process's file limit (`connections.raise_file_limit`) and logs it."""
    now, before = connections.raise_file_limit()
    if now != before:
        log.info("file limit raised from %d to %d open files", before, now)
    else:
        log.info("file limit: %d open files", now)
    return now


# ---------------------------------------------------------------- serving


GC_THRESHOLD: Final = (20_000, 20, 20)
"""The collector's thresholds while serving (CPython's default is 700, 10, 10)."""


def settle_heap() -> None:
    """Once started, the objects of the start (modules, the schema, the API's models, the
    rules pages: most of the heap) are moved out of the collector's sight (`gc.freeze`), and its
    young generation made bigger. Without this every full collection walked them all: under wrk
    (bench/load.py) one took ~100 ms every couple of seconds, the whole of the moves' p99, and
    a young collection ran every 700 allocations. Nothing is leaked: a frozen object is still
    freed by reference counting; only a cycle among them would wait for the end."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


async def run(app: web.Application, settings: Settings, reuse_port: bool) -> None:
    """Serves `app` until cancelled (or a signal's `GracefulExit`), then stops gracefully."""
    runner = connections.Runner(
        app,
        per_address=None if settings.trust_forwarded else connections.CONNECTIONS_PER_ADDRESS,
        total=connections.process_cap(file_limit()),
        handle_signals=True,
        shutdown_timeout=SHUTDOWN_TIMEOUT_S,
        keepalive_timeout=connections.KEEPALIVE_TIMEOUT_S,
        access_log=None,  # server.api.monitoring writes the access log
    )
    await runner.setup()
    try:
        site = web.TCPSite(runner, settings.host, settings.port, reuse_port=reuse_port or None)
        await site.start()
        settle_heap()
        log.info("serving on %s", site.name)
        while True:
            await asyncio.sleep(3600)
    finally:
        await runner.cleanup()


def serve(settings: Settings, reuse_port: bool = False) -> None:
    """Serves until stopped; `reuse_port` in a worker of `serve_workers`, which then also ends
    if the parent process is killed (a parent that ends cleanly stops it with SIGTERM first)."""
    if reuse_port:
        exit_with_parent(os.getppid())
    configure_logging(settings.log_format)
    try:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    except ImportError:  # pragma: no cover - uvloop is optional (not on Windows)
        pass
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    main = loop.create_task(run(create_app(settings), settings, reuse_port))
    try:
        loop.run_until_complete(main)
    except (GracefulExit, KeyboardInterrupt):
        pass
    finally:
        # As web.run_app ends: the serving task finished (its cleanup run), then every task
        # left cancelled, the async generators closed.
        if not main.done():
            main.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                loop.run_until_complete(main)
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


@contextlib.contextmanager
def metrics_directory() -> Iterator[Path]:
    """`PROMETHEUS_MULTIPROC_DIR` for the workers, set in the environment they inherit: the
    folder already named there, cleared of earlier runs' figures, or else a fresh temporary
    folder, removed afterwards."""
    named = os.environ.get(MULTIPROC_DIR)
    if named:
        path = Path(named)
        path.mkdir(parents=True, exist_ok=True)
        for stale in path.glob("*.db"):  # only prometheus-client's files
            stale.unlink()
        yield path
        return
    made = Path(tempfile.mkdtemp(prefix="solitaire-metrics-"))
    os.environ[MULTIPROC_DIR] = str(made)
    try:
        yield made
    finally:
        os.environ.pop(MULTIPROC_DIR, None)
        shutil.rmtree(made, ignore_errors=True)


def serve_workers(settings: Settings) -> int:
    configure_logging(settings.log_format)
    file_limit()  # the workers inherit it (and each raises its own: the same)
    migrate(settings.database_url)
    worker_settings = replace(settings, migrate=False)
    context = multiprocessing.get_context("spawn")
    stopping = False

    def start(n: int) -> multiprocessing.process.BaseProcess:
        worker = context.Process(target=serve, args=(worker_settings, True), name=f"worker-{n}")
        worker.start()
        return worker

    with metrics_directory() as directory:
        workers = [start(n) for n in range(settings.workers)]
        started = dict.fromkeys(range(settings.workers), time.monotonic())

        def forward(signum: int, _frame: FrameType | None) -> None:
            nonlocal stopping
            stopping = True
            for worker in workers:
                if worker.is_alive():
                    worker.terminate()

        signal.signal(signal.SIGTERM, forward)
        signal.signal(signal.SIGINT, forward)
        running = {worker.sentinel: (n, worker) for n, worker in enumerate(workers)}
        while running:
            for sentinel in multiprocessing.connection.wait(list(running)):
                assert isinstance(sentinel, int)
                n, worker = running.pop(sentinel)
                worker.join()
                if worker.pid is not None:
                    # Its live gauges (sockets, watchers, queue, pool) no longer count.
                    mark_process_dead(worker.pid, str(directory))  # type: ignore[no-untyped-call]
                if stopping:
                    continue
                # A worker that died (killed, out of memory) is replaced; the others went on
                # serving the port meanwhile. One that dies within a second of its start is
                # replaced after a second's pause, not in a tight loop.
                log.warning(
                    "worker-%d ended with exit code %s; starting another", n, worker.exitcode
                )
                if time.monotonic() - started[n] < RESTART_PAUSE_S:
                    time.sleep(RESTART_PAUSE_S)
                if stopping:
                    continue
                workers[n] = start(n)
                started[n] = time.monotonic()
                running[workers[n].sentinel] = (n, workers[n])
    return max((worker.exitcode or 0) for worker in workers)


def main(argv: list[str] | None = None) -> None:
    try:
        settings = from_args(argv)
    except SettingsError as exc:
        sys.exit(f"python -m server: {exc}")
    if settings.workers > 1:
        sys.exit(serve_workers(settings))
    serve(settings)
