"""Players playing keyed actions against a real server process while its dependencies fail,
and the checks made once they stop: what the fault suite (tests/faults/) and bench/faults.py
share.

- **The server** is `python -m server` as a child process (`Server`), its stdout and stderr in
  one log file (a pipe nobody reads would fill and stop it), read afterwards for tracebacks.
- **Players** (`Players`) each sign up, deal a random classic game and play it with a local
  engine: a random legal move, now and then an undo; a new game after GAME_ACTIONS actions or
  when no move is left. Half of them act over HTTP (`POST /api/v1/games/{id}/moves`), half over
  the WebSocket (`act` on `/api/v1/live`). Every action carries a fresh uuid4 key
  (`Idempotency-Key`, the `act` message's `idempotency_key`), and a player retries it, with
  the same key and body, on no answer (a refused or reset connection, a closed socket, none
  within ANSWER_TIMEOUT_S), on a 5xx and on a 429, until it is answered 200 (`result` over the
  socket): only then does it move on to its next action. Retries come every RETRY_S, not after
  `Retry-After` (whose presence is checked): the first 200 after a fault's end is the recovery
  time, to a tenth of a second.
  And now and then (DROP_RATE, 3%) a player does not wait for an answer at all (a request
  abandoned, a socket closed right after its `act`) and retries: the server may have applied
  the action, and its retry must then get the stored answer, not a second application.
- **The tally** (`Tally`) counts every answer by status (0: none), and notes each one the SPEC
  forbids: a 500 (or any 5xx but 503), a 503 or 429 without `Retry-After` / `retry_after`, any
  other refusal of a player's action (a 4xx: a lost or doubled action would show so).
- **The checks** (`check`), after the players stop (each finishes the action it has in hand,
  within GIVE_UP_S): for every game, its move log (every page of `GET .../moves`) is exactly
  its acknowledged actions in order, each answered version its place in the log (a retried key
  applied once), plus at most the one action never acknowledged; the game document's score,
  moves, status and version are a replay of that log by the engine in this process, and each
  log entry's score is the replay's after it. `Report` gathers the figures, the faults'
  recovery times and the server's tracebacks (each one's last line) and prints `name=value`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import WSMsgType

from server.engine import DealCode, Game, Rule, parse_action
from tests.faults.cluster import OwnRedis, PgCluster, free_port
from tests.process import spawned_children

ROOT = Path(__file__).resolve().parent.parent.parent
LIVE = "/api/v1/live"
SUBPROTOCOL = "solitaire.v1"
ANSWER_TIMEOUT_S = 10.0
"""A request unanswered this long counts as no answer and is sent again (the server's own
waits are bounded at DATABASE_WAIT_S, 5 s)."""
RETRY_S = 0.1
PACE_S = 0.03
"""The pause between a player's acknowledged action and its next one."""
GAME_ACTIONS = 80
DROP_RATE = 0.03
"""The share of attempts whose answer the player does not wait for: an HTTP request abandoned
within DROP_WITHIN_S (its connection closed), a socket closed right after its `act`. Each is
retried with its key like any unanswered one; an action the server applied all the same is then
answered from its idempotency record (`actions_replayed`): the retry path, exercised in every
run, faults or not."""
DROP_WITHIN_S = 0.03
GIVE_UP_S = 20.0
"""How long after the stop a player goes on retrying the action it has in hand."""
RECOVERY_LIMIT_S = 20.0
"""A fault with no 200 this long after its end did not recover: the check fails."""


def monotonic() -> float:
    return time.monotonic()


# ---------------------------------------------------------------------------------- the server


class Server:
    """`python -m server` on a free port, its output in `log_path`."""

    def __init__(
        self,
        database_url: str,
        log_path: Path,
        *args: str,
        env: dict[str, str] | None = None,
    ) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        command = [sys.executable, "-m", "server", "--port", str(self.port)]
        command += ["--database-url", database_url, *args]
        environment = dict(os.environ, RATE_LIMIT="0", PYTHONPATH=str(ROOT))
        environment.update(env or {})
        self._log = log_path.open("wb")
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=self._log, stderr=subprocess.STDOUT
        )

    async def ready(self, timeout: float = 60) -> None:
        async with aiohttp.ClientSession() as session:
            deadline = monotonic() + timeout
            while monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"server exited: {self.log_text()}")
                try:
                    async with session.get(self.base + "/readyz") as response:
                        if response.status == 200:
                            return
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)
        raise RuntimeError(f"server did not become ready: {self.log_text()}")

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_text(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def terminate(self, timeout: float = 30) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self._log.close()


def tracebacks(log: str) -> list[str]:
    """Each traceback in a log: its last line (the exception), with the line that led to it."""
    found = []
    lines = log.splitlines()
    for n, line in enumerate(lines):
        if "Traceback (most recent call last)" not in line:
            continue
        end = n + 1
        while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end]):
            end += 1
        last = lines[end] if end < len(lines) else "?"
        before = lines[n - 1] if n > 0 else ""
        found.append(f"{before.strip()[:200]} → {last.strip()[:300]}")
    return found


def fault_lines(log: str, limit: int = 12) -> list[str]:
    """The log's warning and error lines (one line per fault, the SPEC says), the first few."""
    pattern = re.compile(r"\b(WARNING|ERROR|CRITICAL)\b")
    return [line[:300] for line in log.splitlines() if pattern.search(line)][:limit]


# ---------------------------------------------------------------------------------- the tally


@dataclass
class Tally:
    statuses: Counter[int] = field(default_factory=Counter)
    """Every answer a player got, by status; 0 for none (refused, reset, timed out)."""
    failures: list[str] = field(default_factory=list)
    """Each answer the SPEC forbids (a 500, a 503 without Retry-After, a refused action)."""
    oks: list[tuple[float, float]] = field(default_factory=list)
    """(sent, answered) of every 200 to an action."""
    waits_503: list[tuple[float, float]] = field(default_factory=list)
    """(sent, answered) of every 503."""

    dropped: int = 0
    """Attempts whose answer the player did not wait for (DROP_RATE)."""

    def no_answer(self) -> None:
        self.statuses[0] += 1

    def answer(
        self, what: str, status: int, retry_after: object, detail: str, sent: float, ok: int
    ) -> None:
        """One answer to `what`; `ok` the status that acknowledges it (200, 201)."""
        now = monotonic()
        self.statuses[status] += 1
        if status == ok:
            if what.endswith("act"):
                self.oks.append((sent, now))
            return
        if status in (503, 429):
            if status == 503:
                self.waits_503.append((sent, now))
            if retry_after in (None, ""):
                self.failures.append(f"{status} without Retry-After on {what}: {detail[:300]}")
            return
        self.failures.append(f"{status} on {what}: {detail[:400]}")

    def retry(self, status: int) -> bool:
        """Whether an answer of `status` is sent again (no answer, a 5xx, a 429)."""
        return status == 0 or status >= 500 or status == 429

    async def first_ok_after(self, moment: float, limit: float = RECOVERY_LIMIT_S) -> float | None:
        """Seconds from `moment` to the first 200 to an action sent at or after it (waiting up
        to `limit` for one); None if none came."""
        deadline = moment + limit
        while True:
            answered = [done for sent, done in self.oks if sent >= moment]
            if answered:
                return max(0.0, min(answered) - moment)
            if monotonic() > deadline:
                return None
            await asyncio.sleep(0.05)


# ---------------------------------------------------------------------------------- the players


@dataclass
class Sent:
    key: str
    text: str
    answer: dict[str, Any] | None = None
    """The acknowledged answer: {"version", "move", "replayed"}."""


@dataclass
class Played:
    game_id: str
    code: str
    auth: dict[str, str]
    sent: list[Sent] = field(default_factory=list)


def body_of(text: str) -> dict[str, Any]:
    if text == "undo":
        return {"action": "undo"}
    card, to = text.split("-")
    return {"card": card, "to": to}


def next_text(game: Game, rng: random.Random, actions: int) -> str | None:
    """The next action on `game` (not applied), or None when a new game is due."""
    if game.history and rng.random() < 0.1:
        return "undo"
    moves = game.legal_moves()
    if not moves or actions >= GAME_ACTIONS:
        return None
    return str(rng.choice(moves))


class Player:
    """One client: its own player, its games one after the other, its actions retried."""

    def __init__(
        self, players: Players, number: int, session: aiohttp.ClientSession, over_ws: bool
    ) -> None:
        self.players = players
        self.base = players.base
        self.tally = players.tally
        self.number = number
        self.session = session
        self.over_ws = over_ws
        self.rng = random.Random(number)
        self.auth: dict[str, str] = {}
        self.games: list[Played] = []
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.message_id = 0

    def stopping(self) -> bool:
        return self.players.stop.is_set()

    def given_up(self) -> bool:
        return self.players.stopped_at is not None and monotonic() > self.players.stopped_at + (
            GIVE_UP_S
        )

    async def request(
        self, method: str, path: str, what: str, ok: int, body: Any = None, **headers: str
    ) -> Any:
        """Sends until answered `ok` (or given up: None); the answer's JSON."""
        while not self.given_up():
            sent = monotonic()
            try:
                async with self.session.request(
                    method, self.base + path, json=body, headers={**self.auth, **headers}
                ) as response:
                    text = await response.text()
                    status = response.status
                    retry_after = response.headers.get("Retry-After")
            except (aiohttp.ClientError, OSError, TimeoutError):
                self.tally.no_answer()
                await asyncio.sleep(RETRY_S)
                continue
            self.tally.answer(what, status, retry_after, text, sent, ok)
            if status == ok:
                return json.loads(text)
            if not self.tally.retry(status):
                return None
            await asyncio.sleep(RETRY_S)
        return None

    async def run(self) -> None:
        name = f"faults-{self.number}-{uuid.uuid4().hex[:10]}"
        signed = await self.request("POST", "/api/v1/players", "POST /players", 201, {"name": name})
        if signed is None:
            return
        self.auth = {"Authorization": f"Bearer {signed['token']}"}
        try:
            while not self.stopping():
                code = DealCode.random(Rule.CLASSIC, self.rng)
                dealt = await self.request(
                    "POST", "/api/v1/games", "POST /games", 201, {"code": str(code)}
                )
                if dealt is None:
                    return
                played = Played(dealt["id"], str(code), self.auth)
                self.games.append(played)
                game = Game.deal(code)
                while not self.stopping():
                    text = next_text(game, self.rng, len(played.sent))
                    if text is None:
                        break
                    sent = Sent(str(uuid.uuid4()), text)
                    played.sent.append(sent)
                    if not await self.act(played, sent):
                        return  # given up after the stop
                    game.play(parse_action(text))
                    await asyncio.sleep(PACE_S)
        finally:
            if self.ws is not None:
                await self.ws.close()

    async def act(self, played: Played, sent: Sent) -> bool:
        """Sends `sent` until it is acknowledged (True) or given up (False)."""
        while not self.given_up():
            answer = await (
                self.act_ws(played, sent) if self.over_ws else self.act_http(played, sent)
            )
            if answer is not None:
                sent.answer = answer
                return True
            await asyncio.sleep(RETRY_S)
        return False

    async def exchange(self, played: Played, sent: Sent) -> tuple[int, str, str | None, bool]:
        """One POST of the action: (status, body, Retry-After, Idempotent-Replayed)."""
        async with self.session.post(
            f"{self.base}/api/v1/games/{played.game_id}/moves",
            json=body_of(sent.text),
            headers={**self.auth, "Idempotency-Key": sent.key},
        ) as response:
            text = await response.text()
            replayed = response.headers.get("Idempotent-Replayed") == "true"
            return response.status, text, response.headers.get("Retry-After"), replayed

    def drops(self) -> bool:
        """Whether this attempt gives up on its answer at once (see DROP_RATE)."""
        return self.rng.random() < DROP_RATE

    async def act_http(self, played: Played, sent: Sent) -> dict[str, Any] | None:
        began = monotonic()
        try:
            if self.drops():
                try:
                    exchanged = await asyncio.wait_for(
                        self.exchange(played, sent), self.rng.uniform(0, DROP_WITHIN_S)
                    )
                except TimeoutError:
                    self.tally.dropped += 1
                    return None
            else:
                exchanged = await self.exchange(played, sent)
        except (aiohttp.ClientError, OSError, TimeoutError):
            self.tally.no_answer()
            return None
        status, text, retry_after, replayed = exchanged
        self.tally.answer("HTTP act", status, retry_after, text, began, 200)
        if status != 200:
            return None
        document = json.loads(text)
        return {
            "version": document["game"]["version"],
            "move": document["move"],
            "replayed": replayed,
        }

    async def socket(self) -> aiohttp.ClientWebSocketResponse | None:
        if self.ws is not None and not self.ws.closed:
            return self.ws
        began = monotonic()
        try:
            self.ws = await self.session.ws_connect(
                self.base + LIVE, protocols=(SUBPROTOCOL,), headers=self.auth, autoping=True
            )
        except aiohttp.WSServerHandshakeError as exc:
            retry_after = exc.headers.get("Retry-After") if exc.headers else None
            self.tally.answer("WS handshake", exc.status, retry_after, exc.message, began, 101)
            return None
        except (aiohttp.ClientError, OSError, TimeoutError):
            self.tally.no_answer()
            return None
        return self.ws

    async def drop_socket(self) -> None:
        if self.ws is not None:
            ws, self.ws = self.ws, None
            with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError):
                await asyncio.wait_for(ws.close(), 2)

    async def act_ws(self, played: Played, sent: Sent) -> dict[str, Any] | None:
        ws = await self.socket()
        if ws is None:
            return None
        self.message_id += 1
        message = {
            "type": "act",
            "id": self.message_id,
            "game_id": played.game_id,
            "action": body_of(sent.text),
            "idempotency_key": sent.key,
        }
        began = monotonic()
        try:
            await ws.send_json(message)
            if self.drops():
                self.tally.dropped += 1
                await self.drop_socket()
                return None
            deadline = began + ANSWER_TIMEOUT_S
            while True:
                msg = await ws.receive(max(0.01, deadline - monotonic()))
                if msg.type != WSMsgType.TEXT:
                    self.tally.no_answer()  # closed (a worker killed, the server stopping)
                    await self.drop_socket()
                    return None
                data = json.loads(msg.data)
                if data.get("id") == self.message_id:
                    break
        except (aiohttp.ClientError, OSError, TimeoutError, ConnectionError):
            self.tally.no_answer()
            await self.drop_socket()
            return None
        if data.get("type") == "result":
            self.tally.answer("WS act", 200, None, "", began, 200)
            return {"version": data["version"], "move": data["move"], "replayed": data["replayed"]}
        problem = data.get("problem") or {}
        status = int(problem.get("status") or 0) if data.get("type") == "error" else -1
        self.tally.answer("WS act", status, problem.get("retry_after"), msg.data, began, 200)
        return None


class Players:
    """`http` players over HTTP and `ws` over the WebSocket, playing until `stop()`."""

    def __init__(self, base: str, http: int = 6, ws: int = 6) -> None:
        self.base = base
        self.tally = Tally()
        self.stop = asyncio.Event()
        self.stopped_at: float | None = None
        self.session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=ANSWER_TIMEOUT_S),
            connector=aiohttp.TCPConnector(limit=0),
        )
        self.players = [Player(self, n, self.session, over_ws=n >= http) for n in range(http + ws)]
        self.tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self.tasks = [asyncio.create_task(player.run()) for player in self.players]

    async def playing(self, actions: int, limit: float = 60) -> None:
        """Waits until the players have had `actions` actions acknowledged in all."""
        deadline = monotonic() + limit
        while len(self.tally.oks) < actions and monotonic() < deadline:
            for task in self.tasks:
                if task.done():
                    task.result()  # a player that failed: its exception
            await asyncio.sleep(0.05)

    async def finish(self) -> None:
        self.stopped_at = monotonic()
        self.stop.set()
        try:
            for task in asyncio.as_completed(self.tasks):
                await task
        finally:
            await self.session.close()

    def games(self) -> list[Played]:
        return [game for player in self.players for game in player.games]


# ---------------------------------------------------------------------------------- faults


@dataclass
class Fault:
    name: str
    down_s: float
    """From the fault's start to its end (the dependency back)."""
    recovery_s: float | None
    """From the fault's end to the first 200 to an action sent after it; None: none came."""


async def inject(
    name: str, players: Players, fault: Callable[[], Awaitable[None]], then_s: float = 2.0
) -> Fault:
    """Runs `fault` (its end: the dependency is back) while the players play, waits for the
    first 200 after it, then `then_s` more of play."""
    began = monotonic()
    await fault()
    ended = monotonic()
    recovery = await players.tally.first_ok_after(ended)
    await asyncio.sleep(then_s)
    return Fault(name, ended - began, recovery)


def in_thread(work: Callable[[], object]) -> Callable[[], Awaitable[None]]:
    """A blocking step (pg_ctl, a kill) as a fault that does not stop the players' loop."""

    async def run() -> None:
        await asyncio.to_thread(work)

    return run


DOWN_S = 3.0
"""How long a stopped dependency stays down."""
SQLITE_HOLD_S = 8.0
"""How long the other process holds SQLite's write lock: past DATABASE_WAIT_S (5 s)."""
SQLITE_LOCKER = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], timeout=30, isolation_level=None)
connection.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
connection.execute("COMMIT")
print("released", flush=True)
connection.close()
"""


def postgres_faults(cluster: PgCluster) -> dict[str, Callable[[], Awaitable[None]]]:
    """The cluster's three faults: `pg_ctl restart -m fast`; the postmaster SIGKILLed and
    started again (crash recovery); `pg_ctl stop -m immediate`, DOWN_S down, started again."""

    async def killed() -> None:
        await asyncio.to_thread(cluster.kill_postmaster)
        await asyncio.to_thread(cluster.start)

    async def stopped() -> None:
        await asyncio.to_thread(cluster.stop_immediate)
        await asyncio.sleep(DOWN_S)
        await asyncio.to_thread(cluster.start)

    return {
        "restart_fast": in_thread(cluster.restart_fast),
        "postmaster_sigkill": killed,
        "stop_immediate_3s": stopped,
    }


def redis_fault(redis: OwnRedis) -> Callable[[], Awaitable[None]]:
    """Redis SIGKILLed, DOWN_S down, started again on its port."""

    async def killed() -> None:
        redis.kill()
        await asyncio.sleep(DOWN_S)
        await redis.start()

    return killed


def redis_settings(redis: OwnRedis) -> dict[str, str]:
    """A server's environment with `redis` as its broker and its rate budgets' storage, the
    budgets far above the players' pace (so every request asks Redis, none is refused)."""
    return {
        "BROKER_URL": redis.url,
        "RATE_LIMIT_STORAGE": redis.url,
        "RATE_LIMIT": "100000",
        "SIGNUP_LIMIT": "100000",
    }


def worker_fault(server: Server, killed: list[int]) -> Callable[[], Awaitable[None]]:
    """One of the two workers of `server` (`--workers 2`) SIGKILLed (its pid put in `killed`);
    the fault ends at once: the other worker serves."""

    async def kill() -> None:
        workers = spawned_children(server.process.pid)
        assert len(workers) == 2, f"expected 2 workers, found {workers}"
        os.kill(workers[0], signal.SIGKILL)
        killed.append(workers[0])

    return kill


def sqlite_lock_fault(path: Path, held: list[float]) -> Callable[[], Awaitable[None]]:
    """Another process holds the SQLite file's write lock (`BEGIN EXCLUSIVE`) SQLITE_HOLD_S;
    `held` gets the moments it took and released it."""

    async def locked() -> None:
        locker = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            SQLITE_LOCKER,
            str(path),
            str(SQLITE_HOLD_S),
            stdout=asyncio.subprocess.PIPE,
        )
        assert locker.stdout is not None
        assert await locker.stdout.readline() == b"locked\n"
        held.append(monotonic())
        assert await locker.stdout.readline() == b"released\n"
        held.append(monotonic())
        assert await locker.wait() == 0

    return locked


def answered_while_locked(report: Report, held: list[float]) -> int:
    """The 503s to requests sent while the lock was held and answered before its release."""
    start, end = held
    return sum(start <= sent and done < end for sent, done in report.waits_503)


# ---------------------------------------------------------------------------------- checks


@dataclass
class Report:
    games: int = 0
    actions_acknowledged: int = 0
    actions_replayed: int = 0
    """Acknowledged answers that said the key had been applied before (a retry of one)."""
    games_lost_moves: int = 0
    games_doubled_moves: int = 0
    games_wrong_result: int = 0
    faults: list[Fault] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    server_tracebacks: list[str] = field(default_factory=list)
    dropped: int = 0
    waits_503: list[tuple[float, float]] = field(default_factory=list)
    """(sent, answered) of every 503."""

    def figures(self) -> dict[str, float | int | str]:
        recoveries = [f.recovery_s for f in self.faults]
        known = [r for r in recoveries if r is not None]
        figures: dict[str, float | int | str] = {
            "games": self.games,
            "actions_acknowledged": self.actions_acknowledged,
            "actions_replayed": self.actions_replayed,
            "answers_200": self.statuses[200] + self.statuses[201],
            "answers_500": sum(n for s, n in self.statuses.items() if s >= 500 and s != 503),
            "answers_503": self.statuses[503],
            "answers_429": self.statuses[429],
            "answers_none": self.statuses[0],
            "answers_dropped": self.dropped,
            "answers_other": sum(
                n for s, n in self.statuses.items() if s not in (0, 200, 201, 429) and s < 500
            ),
            "games_lost_moves": self.games_lost_moves,
            "games_doubled_moves": self.games_doubled_moves,
            "games_wrong_result": self.games_wrong_result,
            "recovery_max_s": round(max(known), 2) if known else -1,
            "unrecovered_faults": len(recoveries) - len(known),
            "waits_503_max_s": round(max((b - a for a, b in self.waits_503), default=0), 2),
            "server_tracebacks": len(self.server_tracebacks),
        }
        for fault in self.faults:
            value = -1 if fault.recovery_s is None else round(fault.recovery_s, 2)
            figures[f"recovery_s_{fault.name}"] = value
            figures[f"down_s_{fault.name}"] = round(fault.down_s, 2)
        return figures

    def lines(self) -> list[str]:
        return [f"{name}={value}" for name, value in self.figures().items()]

    def problems(self) -> list[str]:
        """Everything the SPEC's "Faults" forbids that happened, one line each."""
        found = []
        figures = self.figures()
        for name in ("answers_500", "games_lost_moves", "games_doubled_moves"):
            if figures[name]:
                found.append(f"{name}={figures[name]}")
        if self.games_wrong_result:
            found.append(f"games_wrong_result={self.games_wrong_result}")
        for fault in self.faults:
            if fault.recovery_s is None:
                found.append(f"{fault.name}: no 200 within {RECOVERY_LIMIT_S:.0f} s of its end")
        found += self.failures[:20]
        if len(self.failures) > 20:
            found.append(f"... and {len(self.failures) - 20} more refusals")
        found += [f"server traceback: {line}" for line in self.server_tracebacks[:20]]
        return found


async def moves_of(session: aiohttp.ClientSession, base: str, played: Played) -> list[Any]:
    """Every entry of a game's move log, page after page."""
    entries: list[Any] = []
    after: int | None = None
    while True:
        query = "" if after is None else f"?after={after}"
        url = f"{base}/api/v1/games/{played.game_id}/moves{query}"
        async with session.get(url, headers=played.auth) as response:
            assert response.status == 200, await response.text()
            page = await response.json()
        entries += page["moves"]
        after = page.get("next")
        if after is None:
            return entries


def replay(played: Played, log: list[str]) -> tuple[Game, list[int]]:
    """The engine's game after the log, and its score after each entry."""
    game = Game.deal(DealCode.parse(played.code))
    scores = []
    for text in log:
        game.play(parse_action(text))
        scores.append(game.score)
    return game, scores


def judge(played: Played, log: list[str], report: Report) -> None:
    """Compares one game's log with what its player sent and was told (see the module)."""
    acknowledged = [s for s in played.sent if s.answer is not None]
    pending = [s for s in played.sent if s.answer is None]
    expected = [s.text for s in acknowledged]
    where = f"game {played.game_id}"
    if len(pending) > 1 or (pending and pending[0] is not played.sent[-1]):
        report.failures.append(f"{where}: unacknowledged actions before the last: {len(pending)}")
    allowed = [expected] + ([[*expected, pending[0].text]] if pending else [])
    lost = False
    for place, sent in enumerate(acknowledged, 1):
        answer = sent.answer
        assert answer is not None
        if answer["version"] != place or answer["move"] != sent.text:
            report.failures.append(
                f"{where}: the answer to action {place} ({sent.text}, key {sent.key}) says "
                f"version {answer['version']} move {answer['move']}"
            )
        if len(log) < place or log[place - 1] != sent.text:
            lost = True
    if log not in allowed:
        doubled = len(log) > len(allowed[-1])
        report.games_doubled_moves += doubled
        report.games_lost_moves += lost or not doubled
        report.failures.append(
            f"{where}: move log {len(log)} entries {log[-6:]}, acknowledged {len(expected)} "
            f"{expected[-6:]}, pending {[s.text for s in pending]}"
        )


async def check(base: str, players: Players, server: Server, faults: list[Fault]) -> Report:
    """After `players.finish()`: the report of the run (see the module)."""
    tally = players.tally
    report = Report(
        faults=faults, statuses=tally.statuses, waits_503=tally.waits_503, dropped=tally.dropped
    )
    report.failures += tally.failures
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        for played in players.games():
            report.games += 1
            report.actions_acknowledged += sum(s.answer is not None for s in played.sent)
            report.actions_replayed += sum(
                s.answer is not None and bool(s.answer["replayed"]) for s in played.sent
            )
            entries = await moves_of(session, base, played)
            log = [entry["move"] for entry in entries]
            judge(played, log, report)
            url = f"{base}/api/v1/games/{played.game_id}"
            async with session.get(url, headers=played.auth) as response:
                assert response.status == 200, await response.text()
                document = await response.json()
            try:
                game, scores = replay(played, log)
            except Exception as exc:  # an illegal log: the engine refuses it
                report.games_wrong_result += 1
                report.failures.append(f"game {played.game_id}: its log does not replay: {exc}")
                continue
            stored = (document["score"], document["moves"], document["status"], document["version"])
            replayed = (game.score, game.moves, game.status.value, len(log))
            if stored != replayed or [entry["score"] for entry in entries] != scores:
                report.games_wrong_result += 1
                report.failures.append(
                    f"game {played.game_id}: (score, moves, status, version) {stored}, "
                    f"its log replayed {replayed}"
                )
    report.server_tracebacks = tracebacks(server.log_text())
    return report


# ---------------------------------------------------------------------------------- a run


async def scenario(
    server: Server,
    faults: list[tuple[str, Callable[[], Awaitable[None]]]],
    *,
    warm_up: int = 150,
    then_s: float = 2.0,
    http: int = 6,
    ws: int = 6,
) -> Report:
    """The server ready, the players playing `warm_up` actions, then each fault in turn (with
    `then_s` of play after each recovery); the players stopped, the checks made, the server
    stopped (SIGTERM) and its whole log read for tracebacks."""
    await server.ready()
    players = Players(server.base, http, ws)
    players.start()
    done: list[Fault] = []
    try:
        await players.playing(warm_up)
        for name, fault in faults:
            done.append(await inject(name, players, fault, then_s))
    finally:
        await players.finish()
    if not server.alive():
        raise AssertionError(f"the server exited during the faults:\n{server.log_text()[-3000:]}")
    report = await check(server.base, players, server, done)
    server.terminate()
    report.server_tracebacks = tracebacks(server.log_text())
    return report


def verdict(report: Report, server: Server) -> str:
    """The assertion message of a run that broke the SPEC: its problems and the log's faults."""
    lines = ["the SPEC's Faults (2.7) broken:", *report.problems()]
    lines += [
        "",
        "the server's warnings and errors (first lines):",
        *fault_lines(server.log_text()),
    ]
    lines += ["", "figures:", *report.lines()]
    return "\n".join(lines)
