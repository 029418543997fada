"""The replicas' settings and the choice of a replica, without a database: the URLs and the lag
limit validated once, SQLite refused, reads spread round robin over the healthy replicas, a
request kept to its replica, and the primary when none is healthy."""

from __future__ import annotations

import pytest

from server.settings import SettingsError, from_args
from server.store.replicas import Reads, Replicas

PRIMARY = "postgresql://postgres@127.0.0.1:5432/solitaire"


def test_replica_settings_are_read_and_validated() -> None:
    env = {
        "DATABASE_URL": PRIMARY,
        "DATABASE_REPLICA_URLS": " postgresql://r1:5432/s , postgres://r2/s,",
        "REPLICA_MAX_LAG_S": "2.5",
    }
    settings = from_args([], env)
    assert settings.database_replica_urls == ("postgresql://r1:5432/s", "postgres://r2/s")
    assert settings.replica_max_lag_s == 2.5
    defaults = from_args([], {"DATABASE_URL": PRIMARY})
    assert defaults.database_replica_urls == () and defaults.replica_max_lag_s == 5.0
    for bad in ("0", "-1", "nan", "soon", "4000"):
        with pytest.raises(SettingsError, match="REPLICA_MAX_LAG_S"):
            from_args([], {**env, "REPLICA_MAX_LAG_S": bad})
    for url in ("sqlite:///r.db", "mysql://r/s", "r1"):
        with pytest.raises(SettingsError):
            from_args([], {**env, "DATABASE_REPLICA_URLS": url})
    with pytest.raises(SettingsError, match="SQLite has no streaming replicas"):
        from_args([], {**env, "DATABASE_URL": "sqlite:///solitaire.db"})


async def test_reads_are_spread_round_robin_over_the_healthy_replicas() -> None:
    replicas = Replicas([f"postgresql://postgres@127.0.0.1:1/r{n}" for n in range(3)], max_lag_s=5)
    try:
        assert [replicas.pick(Reads()) for _ in range(2)] == [None, None]  # none checked yet
        for replica in replicas.replicas:
            replica.healthy = True
        picked = [replicas.pick(Reads()) for _ in range(6)]
        assert [r.index if r else None for r in picked] == [0, 1, 2, 0, 1, 2]
        replicas.replicas[1].healthy = False
        picked = [replicas.pick(Reads()) for _ in range(4)]
        assert [r.index if r else None for r in picked] == [0, 2, 0, 2]
        # One request keeps its replica while it is healthy, and never goes back to one that
        # failed it.
        reads = Reads()
        first = replicas.pick(reads)
        assert first is not None and replicas.pick(reads) is first
        reads.failed.add(first.index)
        first.healthy = False
        other = replicas.pick(reads)
        assert other is not None and other is not first
        assert reads.on_primary() and replicas.pick(reads) is None
        for replica in replicas.replicas:
            replica.healthy = False
        assert replicas.pick(Reads()) is None
    finally:
        await replicas.close()
