"""Running `python -m server` as a real child process in tests."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp

from tests.names import unique_name

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class ServerProcess:
    def __init__(self, database_url: str | None, cwd: Path = ROOT, *extra: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        args = [sys.executable, "-m", "server", "--port", str(self.port), *extra]
        if database_url is not None:
            args += ["--database-url", database_url]
        env = dict(os.environ, RATE_LIMIT="0", PYTHONPATH=str(ROOT))
        self.process = subprocess.Popen(
            args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )

    async def ready(self, timeout: float = 30) -> None:
        async with aiohttp.ClientSession() as session:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            while loop.time() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"server exited: {self.output()}")
                try:
                    async with session.get(self.base + "/readyz") as response:
                        if response.status == 200:
                            return
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)
        raise RuntimeError("server did not become ready")

    def output(self) -> str:
        if self.process.poll() is None or self.process.stdout is None:
            return ""
        return self.process.stdout.read().decode(errors="replace")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def terminate(self, timeout: float = 30) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def close(self) -> None:
        if self.process.poll() is None:
            self.kill()
        if self.process.stdout is not None:
            self.process.stdout.close()


async def start_game(base: str) -> tuple[str, dict[str, str], str]:
    """A new player and a game of RU1-C-AAAAAFN (3D-t3, QD-t4 and AC-f are legal at once):
    (game id, the player's Authorization header, the code)."""
    code = "RU1-C-AAAAAFN"
    async with aiohttp.ClientSession() as session:
        async with session.post(base + "/api/v1/players", json={"name": unique_name("crash")}) as r:
            auth = {"Authorization": f"Bearer {(await r.json())['token']}"}
        async with session.post(base + "/api/v1/games", json={"code": code}, headers=auth) as r:
            game_id = (await r.json())["id"]
    return game_id, auth, code


def spawned_children(parent: int) -> list[int]:
    """The processes that `parent` started with multiprocessing's spawn (server workers of
    `--workers N`, solver workers), not its other helpers; none once `parent` is gone."""
    try:
        children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    except FileNotFoundError:
        return []
    found = []
    for pid in map(int, children):
        try:
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except FileNotFoundError:
            continue
    return found
