"""`python -m server`: serve the API on http://127.0.0.1:8080 with ./solitaire.db."""

from __future__ import annotations

import asyncio
import logging
import sys

from aiohttp import web

from server.app import create_app
from server.settings import SettingsError, from_args


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        settings = from_args(argv)
    except SettingsError as exc:
        sys.exit(f"python -m server: {exc}")
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
    )


if __name__ == "__main__":
    main()
