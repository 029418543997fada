"""A primary and a streaming hot standby of it, of the replica suite's own (and the bench's).

The primary is a cluster of our own (`tests.faults.cluster.PgCluster`: `initdb` in a temporary
folder, run as the `postgres` user on a free port), not the machine's: the suite stops its
primary, pauses its replay and checks what the standby saw, and the machine's cluster is never
stopped nor reconfigured (here its `pg_hba.conf` has no `replication` entry either). initdb's
own `pg_hba.conf` lets local replication connections in, and its `wal_level` is `replica`.

The standby is `pg_basebackup -R -D <folder> -h 127.0.0.1 -p <primary> -U postgres` (as the
`postgres` user: `-R` writes `standby.signal` and `primary_conninfo`), started by `pg_ctl` on
another free port with `hot_standby=on` and `pg_stat_statements` loaded: what it ran is counted
there, on the standby itself (the extension is made in the primary's template database, and
replicated). `pause()` and `resume()` are `pg_wal_replay_pause()`
and `pg_wal_replay_resume()` on it; `cut_off()` stops its WAL receiver and `reconnect()` starts it
again.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import asyncpg

from tests.faults.cluster import START_TIMEOUT_S, PgCluster, as_postgres, free_port


class Standby:
    """A hot standby of `primary`, made by pg_basebackup -R and started on its own port."""

    def __init__(self, primary: PgCluster) -> None:
        self.primary = primary
        self.bindir = primary.bindir
        self.folder = Path(tempfile.mkdtemp(prefix="solitaire-replica-pg-"))
        self.data = self.folder / "data"
        self.log = self.folder / "postgres.log"
        self.port = free_port()
        if as_postgres():
            shutil.chown(self.folder, "postgres")
        self._run(
            "pg_basebackup",
            "-R",
            "-D",
            str(self.data),
            "-h",
            "127.0.0.1",
            "-p",
            str(primary.port),
            "-U",
            "postgres",
            "-X",
            "stream",
            "-c",
            "fast",
            "--no-sync",
        )

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, program: str, *args: str) -> None:
        command = [*as_postgres(), str(self.bindir / program), *args]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(
                f"{' '.join(command)}: {done.returncode}\n{done.stdout}{done.stderr}"
            )

    def start(self) -> None:
        options = (
            f"-c port={self.port} -c listen_addresses=127.0.0.1"
            f" -c unix_socket_directories={self.folder} -c fsync=off -c hot_standby=on"
            " -c hot_standby_feedback=on -c max_connections=200"
            " -c shared_preload_libraries=pg_stat_statements"
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-w",
            "-t",
            str(int(START_TIMEOUT_S)),
            "-o",
            options,
            "start",
        )

    async def execute(self, sql: str, database: str = "postgres") -> object:
        connection = await asyncpg.connect(self.url(database))
        try:
            return await connection.fetchval(sql)
        finally:
            await connection.close()

    async def statements(self, database: str) -> dict[str, int]:
        """The statements run on the standby in `database` and how many times each ran."""
        connection = await asyncpg.connect(self.url(database))
        try:
            rows = await connection.fetch(
                "SELECT query, calls FROM pg_stat_statements"
                " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
            )
        finally:
            await connection.close()
        return {row["query"]: int(row["calls"]) for row in rows}

    async def pause(self) -> None:
        await self.execute("SELECT pg_wal_replay_pause()")

    async def resume(self) -> None:
        await self.execute("SELECT pg_wal_replay_resume()")

    async def cut_off(self) -> str:
        """Stops the standby's WAL receiver (its `primary_conninfo` emptied and the setting
        reloaded): it replays all it received, and receives nothing more. Returns the setting,
        for `reconnect`."""
        conninfo = str(await self.execute("SHOW primary_conninfo"))
        await self.execute("ALTER SYSTEM SET primary_conninfo = ''")
        await self.execute("SELECT pg_reload_conf()")
        return conninfo

    async def reconnect(self, conninfo: str) -> None:
        quoted = conninfo.replace("'", "''")
        await self.execute(f"ALTER SYSTEM SET primary_conninfo = '{quoted}'")
        await self.execute("SELECT pg_reload_conf()")

    async def has_database(self, database: str, timeout: float = 30) -> None:
        """Waits until the standby has replayed the creation of `database`."""
        deadline = time.monotonic() + timeout
        while True:
            found = await self.execute(f"SELECT 1 FROM pg_database WHERE datname = '{database}'")
            if found == 1:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the standby never saw the database {database}")
            await asyncio.sleep(0.05)

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            pg_ctl = str(self.bindir / "pg_ctl")
            subprocess.run(
                [*as_postgres(), pg_ctl, "-D", str(self.data), "-w", "stop", "-m", "immediate"],
                capture_output=True,
                check=False,
            )

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
