"""Running the server: one process, or `--workers N` processes sharing the port.

With `--workers N` (PostgreSQL), N processes share the port (SO_REUSEPORT): the parent migrates
the database once, starts them, and passes SIGTERM / SIGINT on to them.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import signal
import sys
from dataclasses import replace
from types import FrameType

from aiohttp import web

from server.app import create_app
from server.settings import Settings, SettingsError, from_args
from server.store.db import migrate


def serve(settings: Settings, reuse_port: bool = False) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    except ImportError:  # pragma: no cover - uvloop is optional (not on Windows)
        pass
    web.run_app(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        shutdown_timeout=10,
        access_log=None,
        reuse_port=reuse_port or None,
    )


def serve_workers(settings: Settings) -> int:
    migrate(settings.database_url)
    worker_settings = replace(settings, migrate=False)
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=serve, args=(worker_settings, True), name=f"worker-{n}")
        for n in range(settings.workers)
    ]
    for worker in workers:
        worker.start()

    def forward(signum: int, _frame: FrameType | None) -> None:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    for worker in workers:
        worker.join()
    return max((worker.exitcode or 0) for worker in workers)


def main(argv: list[str] | None = None) -> None:
    try:
        settings = from_args(argv)
    except SettingsError as exc:
        sys.exit(f"python -m server: {exc}")
    if settings.workers > 1:
        sys.exit(serve_workers(settings))
    serve(settings)
