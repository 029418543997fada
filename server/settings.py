"""Settings from the command line and the environment, validated once (SPEC 2.8)."""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

DEFAULT_DATABASE_URL = "sqlite:///solitaire.db"
DEFAULT_RATE_LIMIT = 50.0
"""Requests per second per client; comfortably above a player acting 20 times a second."""
DEFAULT_SIGNUP_LIMIT = 20
"""Sign-ups a minute per address: a household or a classroom, not a farm of names."""
DEFAULT_DATABASE_WAIT_S = 5.0
"""Seconds a request may wait for the database (SPEC 2.7 "Bounded waits"): a pool's checkout,
SQLite's lock, a statement; then `503 database-unavailable`."""
DEFAULT_REPLICA_MAX_LAG_S = 5.0
"""Seconds a read replica may lag before its reads go elsewhere (SPEC 2.8 "Read replicas")."""
DEFAULT_BODY_LIMIT = 256 * 1024
"""Bytes; enough for the replay of a very long game, small enough to refuse floods (413)."""


REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
"""redis-py's URLs: of `RATE_LIMIT_STORAGE` and `BROKER_URL`."""


class SettingsError(ValueError):
    """A setting that cannot be used; the message says which and why."""


@dataclass(frozen=True, slots=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8080
    database_url: str = DEFAULT_DATABASE_URL
    rate_limit: float = DEFAULT_RATE_LIMIT
    body_limit: int = DEFAULT_BODY_LIMIT
    migrate: bool = True
    workers: int = 1
    trust_forwarded: bool = False
    """Take a client's address from X-Forwarded-For (only behind a proxy that sets it)."""
    deal_secret: str | None = None
    """The secret the daily deals are drawn from (`DEAL_SECRET`); without it, one generated
    once and kept in the database. Every process of one deployment must agree on it."""
    seed_key: str | None = None
    """The key that seals the server seeds in the database (`SEED_KEY`, 64 hex digits; SPEC
    1.8.2, `server.services.seeds`); without it, one generated once and kept in the database,
    so that a dump of it holds the key too. Every process of one deployment must agree on it."""
    signup_limit: int = DEFAULT_SIGNUP_LIMIT
    """Sign-ups a minute from one address (`SIGNUP_LIMIT`); off with the rate limit."""
    rate_limit_storage: str = "memory://"
    """Where the rate budgets are counted (`RATE_LIMIT_STORAGE`, a `limits` storage URL):
    `memory://` in each process, `redis://host:port` shared by every process and replica."""
    broker_url: str | None = None
    """How game and race events reach the other processes (`BROKER_URL`): unset for the
    database's own (PostgreSQL LISTEN/NOTIFY; nothing to share with SQLite), `redis://…` for
    Redis pub/sub with one channel per game."""
    log_format: str = "text"
    database_wait_s: float = DEFAULT_DATABASE_WAIT_S
    """The longest a request waits for the database (`DATABASE_WAIT_S`, seconds): the pools'
    checkout, SQLite's busy timeout, every statement's timeout. Past it: `503`."""
    """`text` or `json` (`LOG_FORMAT`): the form of log lines, the access log's included."""
    database_replica_urls: tuple[str, ...] = ()
    """PostgreSQL streaming hot standbys of the primary (`DATABASE_REPLICA_URLS`, comma-separated)
    that take the lag-tolerant reads (`server.store.replicas`); none with SQLite."""
    replica_max_lag_s: float = DEFAULT_REPLICA_MAX_LAG_S
    """A replica further behind than this (`REPLICA_MAX_LAG_S`, seconds) is skipped."""

    @property
    def async_database_url(self) -> str:
        return async_url(self.database_url)

    @property
    def is_sqlite(self) -> bool:
        return is_sqlite(self.database_url)


def is_sqlite(url: str) -> bool:
    """Whether a database URL names SQLite (else PostgreSQL): the one place that tells the
    two backends apart; everything that differs between them asks this."""
    return async_url(url).startswith("sqlite")


def async_url(url: str) -> str:
    """The SQLAlchemy URL with the async driver for a user-facing database URL.

    `sqlite:///relative.db`, `sqlite:////absolute.db` and `postgresql://user:pw@host:port/db`
    (also `postgres://`) are accepted; URLs that already name a driver are kept if it is async.
    """
    scheme, sep, rest = url.partition("://")
    if not sep or not rest:
        raise SettingsError(f"database URL {url!r} is not a URL such as sqlite:///solitaire.db")
    scheme = scheme.lower()
    if scheme in ("sqlite", "sqlite+aiosqlite"):
        return f"sqlite+aiosqlite://{rest}"
    if scheme in ("postgresql", "postgres", "postgresql+asyncpg"):
        return f"postgresql+asyncpg://{rest}"
    raise SettingsError(
        f"database URL {url!r}: only sqlite:/// and postgresql:// databases are supported"
    )


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SettingsError(f"RATE_LIMIT {text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise SettingsError(f"RATE_LIMIT {text!r} must be 0 (off) or a positive number")
    return value


def _wait(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SettingsError(f"DATABASE_WAIT_S {text!r} is not a number") from None
    if not math.isfinite(value) or not 0.1 <= value <= 600:
        raise SettingsError(f"DATABASE_WAIT_S {text!r}: expected 0.1 to 600 seconds")
    return value


def _replica_urls(text: str) -> tuple[str, ...]:
    urls = tuple(url.strip() for url in text.split(",") if url.strip())
    for url in urls:
        if is_sqlite(url):  # async_url refuses anything but SQLite and PostgreSQL
            raise SettingsError(f"DATABASE_REPLICA_URLS: {url!r} is not a postgresql:// URL")
    return urls


def _lag(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SettingsError(f"REPLICA_MAX_LAG_S {text!r} is not a number") from None
    if not math.isfinite(value) or not 0.1 <= value <= 3600:
        raise SettingsError(f"REPLICA_MAX_LAG_S {text!r}: expected 0.1 to 3600 seconds")
    return value


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    text = env.get(name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise SettingsError(f"{name} {text!r} is not a whole number") from None


def from_args(
    argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Settings from `python -m server` arguments, falling back to the environment."""
    env = os.environ if environ is None else environ
    parser = argparse.ArgumentParser(prog="python -m server", description=__doc__)
    parser.add_argument("--host", default=env.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=_int(env, "PORT", 8080))
    parser.add_argument(
        "--database-url",
        default=env.get("DATABASE_URL", DEFAULT_DATABASE_URL),
        help="sqlite:///path.db or postgresql://user:password@host:port/dbname "
        "(default: $DATABASE_URL or sqlite:///solitaire.db)",
    )
    parser.add_argument(
        "--rate-limit",
        default=env.get("RATE_LIMIT", str(DEFAULT_RATE_LIMIT)),
        help="requests per second per client, 0 to turn off (default: $RATE_LIMIT or 50)",
    )
    parser.add_argument(
        "--signup-limit",
        type=int,
        default=_int(env, "SIGNUP_LIMIT", DEFAULT_SIGNUP_LIMIT),
        help="sign-ups a minute from one address (default: $SIGNUP_LIMIT or 20)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=_int(env, "WORKERS", 1),
        help="server processes sharing the port (PostgreSQL only; default: $WORKERS or 1)",
    )
    args = parser.parse_args(argv)
    settings = Settings(
        host=args.host,
        port=args.port,
        database_url=args.database_url,
        rate_limit=_rate(str(args.rate_limit)),
        workers=args.workers,
        signup_limit=args.signup_limit,
        trust_forwarded=env.get("TRUST_FORWARDED", "") not in ("", "0", "false", "no"),
        deal_secret=env.get("DEAL_SECRET") or None,
        seed_key=env.get("SEED_KEY") or None,
        rate_limit_storage=env.get("RATE_LIMIT_STORAGE") or "memory://",
        broker_url=env.get("BROKER_URL") or None,
        log_format=(env.get("LOG_FORMAT") or "text").lower(),
        database_wait_s=_wait(env.get("DATABASE_WAIT_S") or str(DEFAULT_DATABASE_WAIT_S)),
        database_replica_urls=_replica_urls(env.get("DATABASE_REPLICA_URLS") or ""),
        replica_max_lag_s=_lag(env.get("REPLICA_MAX_LAG_S") or str(DEFAULT_REPLICA_MAX_LAG_S)),
    )
    if settings.database_replica_urls and settings.is_sqlite:
        raise SettingsError(
            "DATABASE_REPLICA_URLS needs a PostgreSQL primary: SQLite has no streaming replicas"
        )
    if not settings.rate_limit_storage.startswith(("memory://", *REDIS_SCHEMES)):
        raise SettingsError(
            f"RATE_LIMIT_STORAGE {settings.rate_limit_storage!r}: expected memory:// or "
            "redis://host:port/db"
        )
    key = settings.seed_key
    if key is not None and (len(key) != 64 or any(c not in "0123456789abcdefABCDEF" for c in key)):
        raise SettingsError("SEED_KEY: expected 64 hex digits (a 256-bit key)")
    if settings.log_format not in ("text", "json"):
        raise SettingsError(f"LOG_FORMAT {settings.log_format!r}: expected text or json")
    if settings.broker_url is not None and not settings.broker_url.startswith(REDIS_SCHEMES):
        raise SettingsError(f"BROKER_URL {settings.broker_url!r}: expected redis://host:port")
    if settings.signup_limit < 1:
        raise SettingsError(f"SIGNUP_LIMIT {settings.signup_limit}: expected at least 1")
    if not 1 <= settings.workers <= 64:
        raise SettingsError(f"--workers {settings.workers}: expected 1 to 64")
    if settings.workers > 1 and settings.is_sqlite:
        raise SettingsError(
            "--workers above 1 needs PostgreSQL: with SQLite, watchers only hear of the moves "
            "made in their own process"
        )
    return settings
