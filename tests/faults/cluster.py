"""A PostgreSQL cluster and a Redis of the fault suite's own, to restart, kill and stop.

The cluster lives in a fresh temporary folder (`/tmp/solitaire-faults-pg-*`, not pytest's
own: that one is readable by its owner only, and the cluster runs as `postgres`), made by the
`initdb` of `pg_config --bindir` (Debian: /usr/lib/postgresql/15/bin) and run by its `pg_ctl`,
on a free port other than 5432, listening on 127.0.0.1 and on a socket in its own folder, with
trust authentication and `fsync=off` (the machine does not crash here: a killed postmaster or
an immediate stop loses nothing the OS holds). `synchronous_commit` stays on: an acknowledged
commit is in the WAL, which is what "an accepted action is durable" rests on. As root (CI runs
so) every command runs as the `postgres` user (`runuser -u postgres --`; initdb refuses root);
as anyone else, as that user. The machine's own cluster (5432) is never touched.

The Redis is `redis-server --port N --save '' --appendonly no` as a child process: killed with
SIGKILL and started again on the same port.

Availability: `require(what, why)` fails the test under CI (`CI` set: the suite must never
skip there) and skips it elsewhere.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PG_PORT_AVOIDED = 5432
"""The machine's own cluster's port: never ours."""
START_TIMEOUT_S = 30.0
IMMEDIATE = ("-w", "stop", "-m", "immediate")
REDIS_OPTIONS = ("--save", "", "--appendonly", "no", "--daemonize", "no")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now, other than 5432."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port: int = s.getsockname()[1]
        if port != PG_PORT_AVOIDED:
            return port


def require(available: bool, why: str) -> None:
    """Skips the test when `available` is false, or fails it under CI (never a skip there)."""
    if available:
        return
    import pytest  # here: bench/faults.py uses this module without pytest

    if os.environ.get("CI"):
        pytest.fail(f"CI is set and the fault suite cannot run: {why}")
    pytest.skip(why)


def pg_bindir() -> Path | None:
    """PostgreSQL's programs (`pg_config --bindir`), or None without them."""
    pg_config = shutil.which("pg_config")
    if pg_config is None:
        return None
    found = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
    path = Path(found.stdout.strip())
    if found.returncode != 0 or not (path / "initdb").exists() or not (path / "pg_ctl").exists():
        return None
    return path


def as_postgres() -> list[str]:
    """The prefix that runs a command as the cluster's owner: `runuser -u postgres --` as root,
    nothing otherwise (the current user owns the cluster then)."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


class PgCluster:
    """A cluster of our own: `initdb` once, then started, restarted, killed and stopped."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.folder = Path(tempfile.mkdtemp(prefix="solitaire-faults-pg-"))
        self.data = self.folder / "data"
        self.log = self.folder / "postgres.log"
        self.port = free_port()
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        )

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        command = [*as_postgres(), str(self.bindir / program), *args]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(
                f"{' '.join(command)}: {done.returncode}\n{done.stdout}{done.stderr}"
            )
        return done

    def _ctl(self, *args: str) -> None:
        options = (
            f"-c port={self.port} -c listen_addresses=127.0.0.1"
            f" -c unix_socket_directories={self.folder} -c fsync=off -c full_page_writes=off"
            " -c max_connections=200"
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
            *args,
        )

    def start(self) -> None:
        """Starts the cluster and waits for it to accept connections. After a SIGKILL of the
        postmaster its orphaned backends hold the shared memory a moment (they exit when they
        notice): the start is tried again until they have."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                self._ctl("start")
                return
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def restart_fast(self) -> None:
        """`pg_ctl restart -m fast`: sessions ended, a clean checkpoint, started again."""
        self._ctl("restart", "-m", "fast")

    def stop_immediate(self) -> None:
        """`pg_ctl stop -m immediate`: every process quits at once; crash recovery on start."""
        self._run("pg_ctl", "-D", str(self.data), "-w", "stop", "-m", "immediate")

    def postmaster_pid(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def kill_postmaster(self) -> None:
        """SIGKILL of the postmaster: its backends notice and exit; crash recovery on start."""
        os.kill(self.postmaster_pid(), signal.SIGKILL)

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            subprocess.run(
                [*as_postgres(), str(self.bindir / "pg_ctl"), "-D", str(self.data), *IMMEDIATE],
                capture_output=True,
                check=False,
            )

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


class OwnRedis:
    """A `redis-server` of our own on a free port, killed and started again on it."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        require(binary is not None, "redis-server is not installed")
        assert binary is not None
        self.binary = binary
        self.folder = Path(tempfile.mkdtemp(prefix="solitaire-faults-redis-"))
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", *REDIS_OPTIONS],
            cwd=self.folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            writer.write(b"PING\r\n")
            answer = await reader.readline()
            writer.close()
            await writer.wait_closed()
            if answer.startswith(b"+PONG"):
                return
            await asyncio.sleep(0.05)
        raise RuntimeError("redis-server did not answer")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.folder, ignore_errors=True)
