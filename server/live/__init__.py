"""Changes to watchers, in this process and across processes (SPEC 2.6): `broker.py` holds the
local half (who watches what here) and the in-process broker, `postgres.py` delivers through
PostgreSQL's LISTEN/NOTIFY, `redis.py` through Redis pub/sub. `make_broker` picks one."""

from __future__ import annotations

from server.live.broker import Broker, LocalBroker
from server.live.postgres import PgBroker
from server.live.redis import RedisBroker
from server.settings import is_sqlite


def make_broker(url: str, broker_url: str | None = None) -> Broker:
    """The broker for the database at `url`, or Redis's at `broker_url` (`BROKER_URL`)."""
    if broker_url is not None:
        return RedisBroker(broker_url)
    if is_sqlite(url):
        return LocalBroker()
    return PgBroker(url)
