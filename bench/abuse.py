"""Players under abuse: 32 players' latency while one client floods the costly routes and
sign-ups, against the same players with nobody flooding, with the server's defences on.

One server process (`python -m server`) with its DEFAULT rate limit (`RATE_LIMIT` unset: 50
requests a second per client, 4x that per address, 20 sign-ups a minute per address; one costly
request in flight per client; the public solver lane's bounded queue), on a fresh database: a
PostgreSQL database `solitaire_bench_abuse` on $BENCH_PG_URL's server (created, and dropped at
the end), or a fresh SQLite file when PostgreSQL cannot be reached.

- **Players.** BENCH_PLAYERS (32) players, each a client of its own: its own source address
  (127.0.1.1, 127.0.1.2, ...: every player is a different household, and each signs up once,
  within the per-address sign-up budget), its own token, its own game. Each plays random legal
  moves of a random classic deal it asked for (followed by a local engine, as in bench/load.py;
  5% undos; a game over or past 400 moves is followed by a new one) over HTTP, with a fresh
  `Idempotency-Key` (uuid4) on every action, at a brisk human pace: BENCH_PACE (5) actions a
  second each, one at a time (an action answered late is followed at once, never by a burst).
  Every action's latency (request sent to response read) is recorded. The players play without
  a break for the whole run; the phases below only label their actions.
- **The flooder** is another client: a separate process (so its CPU is not the players'
  client's) sending from its own address, 127.0.0.2, with BENCH_FLOOD_CONCURRENCY (64) requests
  in flight, as fast as the answers come: in turn `GET /api/v1/deals/{code}/winnable` (fresh
  random RU1 codes of both rules, and a third of the time one of HARD_CODES, relaxed and classic
  deals whose search runs to the solver's node budget, such as RU1-R-AAAABOC; `take_backs` true
  or false), `POST /api/v1/replays/verify` with a long replay (the first won game of
  tests/data/games.json with move-and-undo pairs inserted up to 5,000 actions, ~200 KB, as a
  downloaded replay with `t_ms`, the deal and the result), and `POST /api/v1/players` sign-ups.
  Each request goes anonymous or with one of the (at most FLOOD_TOKENS, 4) tokens its sign-ups
  got (kept from one flood to the next): one address, several clients.
- **Phases.** BENCH_ROUNDS (3) rounds of a quiet phase then a flood phase, BENCH_SECONDS (20)
  each, alternating in one run (the machine is shared: compare within a run). After a flood the
  run waits (at most DRAIN_MAX_S, 30 s) for the solver's public lane to finish the searches the
  flood left queued (the server follows a search to its end after the request gave up on it),
  so that the next quiet phase is quiet; `quiet_public_queue_max` says whether it was.

Printed last as `name=value` lines (percentiles over all the actions of a kind of phase;
rates are medians over the rounds; counts are sums):

- `quiet_p50_ms`, `quiet_p99_ms`, `flood_p50_ms`, `flood_p99_ms`, `{quiet,flood}_max_ms`;
  `flood_p99_ratio` (flood p99 over quiet p99; target: at most 2) and
  `flood_p99_ratio_rounds` (the median of each round's own ratio);
- `{quiet,flood}_actions_per_s` (all players' accepted actions a second; the pace asks for
  players x BENCH_PACE), `{quiet,flood}_actions`, `{quiet,flood}_players_refused` (players'
  actions answered other than 200: each is listed as `players_{phase}_status_{code}`, 0 for a
  lost connection);
- the flooder: `flood_requests_per_s`, and its answers counted by route and status,
  `flood_{verdict,verify,signup}_{status}` with the reason of each 429 (`_address`: the
  address's budget, `_client`: the client's, `_signup`: the sign-up budget, `_costly`: one
  costly request at a time) and 503 (`_busy`: the lane's queue is full, `_searching`: the
  verdict is still being searched, `_timeout`); `flood_server_errors` (5xx other than 503: the
  target is 0), `flood_connection_errors`, `flood_unanswered` (in flight at a phase's end);
  `flood_tokens` (tokens the flooder held at the end);
- `drain_s_max`, `drain_s_median` (waits for the public lane after a flood),
  `quiet_public_queue_max`, `flood_public_queue_max` (the public lane's jobs, running or waiting,
  seen at /metrics each second of the phases);
- CPU (cores used, from /proc; medians): `{quiet,flood}_server_cpu` (the server's event loop
  process), `_solver_cpu` (its worker processes), `_pg_cpu` (the bench database's PostgreSQL
  backends; 0 with SQLite), `_players_cpu` (this client), `flood_flooder_cpu` (the flooder
  process), `{quiet,flood}_machine_busy` (of all cores, 0..1: the rest is other load on the
  shared machine); `quiet_server_cpu_ms_per_action` (the server's CPU per player action) and
  `flood_server_cpu_ms_per_flood_request` (its CPU in a flood phase less the players' actions
  at the quiet phase's cost, per flooder request answered);
- `server_log_tracebacks` (the target is 0; each kind of error the log holds is printed as a
  `#` line), `players_new_game_failures` (new games refused: the player asks again a second
  later);
- `bench_seconds`: how long the whole run took.

With no arguments the run takes three to four minutes on a 2-core machine.
Environment: BENCH_PLAYERS (32), BENCH_PACE (5), BENCH_SECONDS (20), BENCH_ROUNDS (3),
BENCH_FLOOD_CONCURRENCY (64), BENCH_FLOOD_KINDS (`verdict,verify,signup`: a subset floods only
those routes, to see what each costs), BENCH_PG_URL (see bench/load.py).

(`python bench/abuse.py --flood BASE SECONDS [TOKENS]` is the flooder process itself: it prints
`ready`, floods BASE for SECONDS and prints its counts as one JSON line.)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
from load import ROOT, Server, cpu_seconds, fresh_pg, next_action, pct, stop
from load import start as load_start
from prometheus_client.parser import text_string_to_metric_families
from races import machine_ticks, postgres_seconds

from server.api.render import REPLAY_FORMAT, REPLAY_VERSION, deal_json
from server.engine import DealCode, Game, Rule  # load puts ROOT on the path
from server.engine.replay import verify_replay

PLAYERS = int(os.environ.get("BENCH_PLAYERS", "32"))
PACE = float(os.environ.get("BENCH_PACE", "5"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "20"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
FLOOD_CONCURRENCY = int(os.environ.get("BENCH_FLOOD_CONCURRENCY", "64"))
FLOOD_KINDS = tuple(os.environ.get("BENCH_FLOOD_KINDS", "verdict,verify,signup").split(","))
assert set(FLOOD_KINDS) <= {"verdict", "verify", "signup"}, FLOOD_KINDS
PG_URL = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
DATABASE = "solitaire_bench_abuse"
PORT = 18381
BASE = f"http://127.0.0.1:{PORT}"
FLOOD_ADDRESS = "127.0.0.2"
WARM_ADDRESS = "127.0.0.3"
FLOOD_TOKENS = 4
DRAIN_MAX_S = 30.0
MAX_ACTIONS = 5_000
"""The longest replay the server verifies (server.services.values.MAX_ACTIONS)."""
HARD_CODES = (
    "RU1-R-AAAABOC",
    "RU1-R-AAAAABQ",
    "RU1-R-AAAAASA",
    "RU1-R-AAAABFZ",
    "RU1-R-AAAABTY",
    "RU1-R-AAAACGH",
    "RU1-R-AAAACSL",
    "RU1-R-AAAADAA",
    "RU1-R-AAAAEIZ",
    "RU1-R-AAAAEWW",
    "RU1-C-AAAAAAC",
    "RU1-C-AAAAANN",
    "RU1-C-AAAAAPN",
    "RU1-C-AAAACAV",
    "RU1-C-AAAADBZ",
    "RU1-C-AAAADGT",
    "RU1-C-AAAAESR",
    "RU1-C-AAAAFCT",
)
"""The deals of seeds 0..3999 (both rules) whose search with take-backs needs more than 1,500
nodes (most random deals are decided in under 200): each is searched once per `take_backs` value
(the verdict is stored), for up to the solver's whole node budget."""


# ---------------------------------------------------------------------------------- server


async def database_url(tmp: str) -> tuple[str, bool]:
    """A fresh PostgreSQL database when its server answers, else a fresh SQLite file; and
    whether it is PostgreSQL."""
    try:
        admin = await asyncpg.connect(PG_URL, timeout=5)
        await admin.close()
    except (OSError, asyncpg.PostgresError, TimeoutError):
        print(f"# PostgreSQL at {PG_URL} cannot be reached: SQLite", flush=True)
        return f"sqlite:///{tmp}/abuse.db", False
    return await fresh_pg(DATABASE), True


async def drop_pg() -> None:
    admin = await asyncpg.connect(PG_URL)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
    finally:
        await admin.close()


async def start(url: str) -> Server:
    """`python -m server` with its default rate limit (the point is to measure the server's
    defences), and wait for its /readyz."""
    return await load_start(["-m", "server", "--database-url", url], PORT, defaults=True)


def server_errors(process: Server) -> tuple[int, Counter[str]]:
    """The server log's tracebacks: how many, and how often each exception line (the last
    line of a traceback) and each ERROR line occurs."""
    process.log.seek(0)
    lines = process.log.read().decode(errors="replace").splitlines()
    tracebacks = 0
    seen: Counter[str] = Counter()
    for i, line in enumerate(lines):
        if line.startswith("Traceback"):
            tracebacks += 1
            end = i + 1
            while end < len(lines) and lines[end].startswith(" "):
                end += 1
            if end < len(lines):
                seen[lines[end][:200]] += 1
        elif " ERROR " in line:
            seen[re.sub(r"^\S+ \S+ | id=\w+|/[A-Z0-9-]{13}/", " ", line)[:200]] += 1
    return tracebacks, seen


def descendants(pid: int) -> list[int]:
    """The processes started by `pid`, and theirs (Linux /proc/<pid>/task/*/children)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            found += children
            todo += children
    return found


def process_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0  # ended meanwhile
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class CpuMark:
    """CPU seconds used so far by the server, its workers, PostgreSQL and this client."""

    server: float
    solver: dict[int, float]
    pg: float
    players: float
    busy: int
    total: int
    wall: float

    @classmethod
    def now(cls, server: Server, pg: bool) -> CpuMark:
        busy, total = machine_ticks()
        return cls(
            cpu_seconds(server),
            {pid: process_seconds(pid) for pid in descendants(server.pid)},
            postgres_seconds(DATABASE) if pg else 0.0,
            time.process_time(),
            busy,
            total,
            time.perf_counter(),
        )

    def shares(self, later: CpuMark) -> dict[str, float]:
        """Cores used by each between this mark and `later`, and the machine's busy share."""
        wall = later.wall - self.wall
        solver = sum(s - self.solver.get(pid, 0.0) for pid, s in later.solver.items())
        return {
            "server_cpu": (later.server - self.server) / wall,
            "solver_cpu": solver / wall,
            "pg_cpu": (later.pg - self.pg) / wall,
            "players_cpu": (later.players - self.players) / wall,
            "machine_busy": (later.busy - self.busy) / max(1, later.total - self.total),
        }


async def public_queue(session: aiohttp.ClientSession) -> float:
    """The public solver lane's jobs, running or waiting (the server's /metrics)."""
    async with session.get(f"{BASE}/metrics") as response:
        text = await response.text()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.endswith("solver_queue_length") and sample.labels.get("kind") == (
                "public"
            ):
                return sample.value
    return 0.0


# ---------------------------------------------------------------------------------- players


class Player:
    """One player: its own address, token and game, a fresh `Idempotency-Key` per action."""

    def __init__(self, index: int, rng: random.Random) -> None:
        self.address = f"127.0.1.{index + 1}"
        self.rng = rng
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(local_addr=(self.address, 0), limit=1),
            timeout=aiohttp.ClientTimeout(total=60),
        )
        self.auth: dict[str, str] = {}
        self.game_id = ""
        self.game: Game | None = None

    async def sign_up(self) -> None:
        name = {"name": f"player-{uuid.uuid4().hex[:12]}"}
        async with self.session.post(f"{BASE}/api/v1/players", json=name) as response:
            if response.status != 201:
                raise RuntimeError(
                    f"{self.address}: sign-up {response.status} {await response.text()}"
                )
            self.auth = {"Authorization": f"Bearer {(await response.json())['token']}"}

    async def new_game(self) -> None:
        code = DealCode.random(Rule.CLASSIC, self.rng)
        async with self.session.post(
            f"{BASE}/api/v1/games", json={"code": str(code)}, headers=self.auth
        ) as response:
            if response.status != 201:
                raise RuntimeError(f"{self.address}: new game {response.status}")
            self.game_id = (await response.json())["id"]
        self.game = Game.deal(code)

    def next_action(self) -> dict[str, Any] | None:
        """The next action (applied to the local copy), or None when a new game is due."""
        assert self.game is not None
        return next_action(self.game, self.rng)

    async def act(self, body: dict[str, Any]) -> int:
        """POST one action with a fresh key; its status (0: no answer)."""
        headers = {**self.auth, "Idempotency-Key": str(uuid.uuid4())}
        try:
            async with self.session.post(
                f"{BASE}/api/v1/games/{self.game_id}/moves", json=body, headers=headers
            ) as response:
                await response.read()
                return response.status
        except (aiohttp.ClientError, TimeoutError):
            return 0


@dataclass
class Play:
    """What the players did: the current phase's label (None between phases) and, per label,
    each action's latency (s) and status."""

    phase: str | None = None
    stopped: bool = False
    new_game_failures: int = 0
    latencies: dict[str, list[float]] = field(default_factory=dict)
    statuses: dict[str, Counter[int]] = field(default_factory=dict)


async def new_game(player: Player, state: Play) -> None:
    """A new game for `player`, asked again a second later while it is refused."""
    while True:
        try:
            return await player.new_game()
        except (RuntimeError, aiohttp.ClientError, TimeoutError) as exc:
            state.new_game_failures += 1
            print(f"# {exc}", flush=True)
            await asyncio.sleep(1)


async def play(player: Player, state: Play) -> None:
    interval = 1 / PACE
    due = time.perf_counter() + player.rng.random() * interval
    while not state.stopped:
        wait = due - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        body = player.next_action()
        if body is None:
            await new_game(player, state)
            due = time.perf_counter() + interval
            continue
        phase = state.phase
        t0 = time.perf_counter()
        status = await player.act(body)
        t1 = time.perf_counter()
        if phase is not None and phase == state.phase:
            state.latencies.setdefault(phase, []).append(t1 - t0)
            state.statuses.setdefault(phase, Counter())[status] += 1
        if status != 200:  # the local copy is no longer the server's game
            await new_game(player, state)
        due = max(due + interval, t1)


# ---------------------------------------------------------------------------------- flooder


def long_replay() -> bytes:
    """The first won game of tests/data/games.json as a downloaded replay, with move-and-undo
    pairs of its second move inserted after its first, up to MAX_ACTIONS actions."""
    games = json.loads((ROOT / "tests" / "data" / "games.json").read_text())["games"]
    game = next(g for g in games if g["status"] == "won")
    first, *rest = game["actions"]
    pairs = (MAX_ACTIONS - len(game["actions"])) // 2
    actions = [first, *[rest[0], "undo"] * pairs, *rest]
    code = DealCode.parse(game["code"])
    checked = verify_replay(code, actions, None)
    assert checked.valid and checked.status == "won", checked
    return json.dumps(
        {
            "format": REPLAY_FORMAT,
            "version": REPLAY_VERSION,
            "code": str(code),
            "deal_commitment": code.commitment,
            "rule": code.rule.value,
            "deal": deal_json(code),
            "actions": [{"move": m, "t_ms": 1_000 + 650 * i} for i, m in enumerate(actions)],
            "result": {
                "status": checked.status,
                "score": checked.score,
                "ranked_score": checked.ranked_score,
                "moves": checked.moves,
            },
        }
    ).encode()


def reason(status: int, detail: str) -> str:
    """The kind of a refusal, from its problem's detail."""
    if status == 429:
        if "sign-ups" in detail:
            return "_signup"
        if "from one address" in detail:
            return "_address"
        if "costly" in detail:
            return "_costly"
        return "_client"
    if status == 503:
        if "busy" in detail:
            return "_busy"
        if "searched" in detail:
            return "_searching"
        return "_timeout"
    return ""


async def flood(base: str, seconds: float, tokens: list[str]) -> dict[str, Any]:
    """Requests from FLOOD_ADDRESS, FLOOD_CONCURRENCY at a time, for `seconds`."""
    rng = random.Random()
    replay = long_replay()
    counts: Counter[str] = Counter()
    sent = 0
    connector = aiohttp.TCPConnector(local_addr=(FLOOD_ADDRESS, 0), limit=FLOOD_CONCURRENCY)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=60)
    ) as session:

        def code() -> str:
            roll = rng.random()
            if roll < 1 / 3:
                return rng.choice(HARD_CODES)
            return str(DealCode.random(Rule.RELAXED if roll < 2 / 3 else Rule.CLASSIC, rng))

        async def one(kind: str) -> None:
            nonlocal sent
            token = rng.choice([None, *tokens])
            headers = {} if token is None else {"Authorization": f"Bearer {token}"}
            if kind == "verdict":
                flag = rng.choice(("true", "false"))
                request = session.get(
                    f"{base}/api/v1/deals/{code()}/winnable?take_backs={flag}", headers=headers
                )
            elif kind == "verify":
                headers["Content-Type"] = "application/json"
                request = session.post(
                    f"{base}/api/v1/replays/verify", data=replay, headers=headers
                )
            else:
                name = {"name": f"flood-{uuid.uuid4().hex[:12]}"}
                request = session.post(f"{base}/api/v1/players", json=name)
            sent += 1
            try:
                async with request as response:
                    body = await response.read()
                    status = response.status
            except (aiohttp.ClientError, TimeoutError) as exc:
                counts[f"{kind}_connection_error_{type(exc).__name__}"] += 1
                return
            detail = ""
            if status in (201, 429, 503) or status >= 500:
                try:
                    document = json.loads(body)
                except ValueError:
                    document = {}
                detail = str(document.get("detail", ""))
                if kind == "signup" and status == 201 and len(tokens) < FLOOD_TOKENS:
                    tokens.append(document["token"])
            counts[f"{kind}_{status}{reason(status, detail)}"] += 1

        async def worker(n: int) -> None:
            i = n
            while True:
                await one(FLOOD_KINDS[i % len(FLOOD_KINDS)])
                i += 1

        print("ready", flush=True)
        began = time.perf_counter()
        workers = [asyncio.create_task(worker(n)) for n in range(FLOOD_CONCURRENCY)]
        await asyncio.sleep(seconds)
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        elapsed = time.perf_counter() - began
    answered = sum(counts.values())
    return {
        "seconds": elapsed,
        "sent": sent,
        "unanswered": sent - answered,
        "counts": dict(counts),
        "tokens": tokens,
        "cpu": time.process_time(),
    }


async def run_flooder(seconds: float, tokens: list[str]) -> asyncio.subprocess.Process:
    """The flooder as a process of its own, once it is ready (`flooder_result` has its counts)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--flood",
        BASE,
        str(seconds),
        ",".join(tokens),
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    line = await process.stdout.readline()
    if line.strip() != b"ready":
        raise RuntimeError(f"the flooder did not start: {line!r}")
    return process


async def flooder_result(process: asyncio.subprocess.Process) -> dict[str, Any]:
    out = (await process.communicate())[0].decode()
    if process.returncode != 0:
        raise RuntimeError(f"the flooder failed ({process.returncode}):\n{out}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


# ---------------------------------------------------------------------------------- run


async def warm_up() -> None:
    """One verdict and one verification from another address: the public lane's worker is
    spawned on first use."""
    connector = aiohttp.TCPConnector(local_addr=(WARM_ADDRESS, 0))
    async with aiohttp.ClientSession(connector=connector) as session:
        async with session.get(f"{BASE}/api/v1/deals/RU1-C-AAAAAFN/winnable") as response:
            await response.read()
        async with session.post(
            f"{BASE}/api/v1/replays/verify",
            data=long_replay(),
            headers={"Content-Type": "application/json"},
        ) as response:
            if response.status != 200:
                raise RuntimeError(f"the long replay: {response.status} {await response.text()}")


async def watch_queue(
    session: aiohttp.ClientSession, seen: list[float], done: asyncio.Event
) -> None:
    while not done.is_set():
        seen.append(await public_queue(session))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), 1)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


async def main() -> None:
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        url, pg = await database_url(tmp)
        server = await start(url)
        try:
            figures = await measure(server, pg)
            tracebacks, seen = server_errors(server)
            figures["server_log_tracebacks"] = float(tracebacks)
            for line, n in seen.most_common(8):
                print(f"# server log, {n} times: {line}", flush=True)
        finally:
            stop(server)
            if pg:
                await drop_pg()
    figures["bench_seconds"] = time.perf_counter() - began
    print(f"database={'postgresql' if pg else 'sqlite'}")
    print(f"players={PLAYERS}")
    print(f"pace_per_player={PACE:g}")
    print(f"rounds={ROUNDS}")
    print(f"seconds_per_phase={SECONDS:g}")
    print(f"flood_concurrency={FLOOD_CONCURRENCY}")
    for name, value in figures.items():
        print(f"{name}={value:.2f}" if value != int(value) else f"{name}={int(value)}")


async def measure(server: Server, pg: bool) -> dict[str, float]:
    await warm_up()
    rng = random.Random(14)
    state = Play()
    players = [Player(i, random.Random(rng.random())) for i in range(PLAYERS)]
    metrics_session = aiohttp.ClientSession()
    try:
        for p in players:  # one by one: each its own address, one sign-up each
            await p.sign_up()
        await asyncio.gather(*(p.new_game() for p in players))
        tasks = [asyncio.create_task(play(p, state)) for p in players]
        await asyncio.sleep(3)  # warm: every game in the server's cache
        tokens: list[str] = []
        shares: dict[str, list[float]] = {}
        rates: dict[str, list[float]] = {}
        queue_max: dict[str, float] = {"quiet": 0.0, "flood": 0.0}
        flooded: list[dict[str, Any]] = []
        drains: list[float] = []
        costs: dict[str, list[float]] = {}
        per_action = 0.0
        for round_ in range(1, ROUNDS + 1):
            for kind in ("quiet", "flood"):
                label = f"{kind}{round_}"
                process = None
                if kind == "flood":
                    process = await run_flooder(SECONDS, tokens)
                seen: list[float] = []
                done = asyncio.Event()
                watcher = asyncio.create_task(watch_queue(metrics_session, seen, done))
                mark = CpuMark.now(server, pg)
                state.phase = label
                await asyncio.sleep(SECONDS)
                state.phase = None
                later = CpuMark.now(server, pg)
                done.set()
                await watcher
                queue_max[kind] = max(queue_max[kind], *seen, 0.0)
                for name, value in mark.shares(later).items():
                    shares.setdefault(f"{kind}_{name}", []).append(value)
                count = sum(state.statuses.get(label, Counter()).values())
                rates.setdefault(kind, []).append(count / (later.wall - mark.wall))
                server_s = later.server - mark.server
                extra = ""
                if process is None:
                    per_action = server_s / max(1, count)
                    costs.setdefault("quiet_server_cpu_ms_per_action", []).append(per_action * 1e3)
                else:
                    result = await flooder_result(process)
                    flooded.append(result)
                    # The server's CPU less what the players' actions cost it in the quiet phase
                    # before, over the flooder's requests (their share of this phase's).
                    flood_s = server_s - per_action * count
                    answered = (result["sent"] - result["unanswered"]) * SECONDS / result["seconds"]
                    costs.setdefault("flood_server_cpu_ms_per_flood_request", []).append(
                        flood_s / max(1, answered) * 1e3
                    )
                    tokens = result["tokens"]
                    shares.setdefault("flood_flooder_cpu", []).append(
                        result["cpu"] / result["seconds"]
                    )
                    t0 = time.perf_counter()
                    while await public_queue(metrics_session) > 0:
                        if time.perf_counter() - t0 > DRAIN_MAX_S:
                            break
                        await asyncio.sleep(0.5)
                    drains.append(time.perf_counter() - t0)
                    extra = (
                        f", flooder {result['sent'] / result['seconds']:.0f} req/s, "
                        f"drained in {drains[-1]:.1f} s"
                    )
                latencies = sorted(state.latencies.get(label, []))
                print(
                    f"# round {round_}: {kind} {rates[kind][-1]:.0f} actions/s, "
                    f"p50 {pct(latencies, 0.5):.1f} ms, p99 {pct(latencies, 0.99):.1f} ms, "
                    f"refused {count - state.statuses.get(label, Counter())[200]}, "
                    f"public queue max {max(seen, default=0):.0f}{extra}",
                    flush=True,
                )
        state.stopped = True
        await asyncio.gather(*tasks)
    finally:
        state.stopped = True
        await metrics_session.close()
        for p in players:
            await p.session.close()
    figures = figures_of(state, rates, shares, queue_max, flooded, drains)
    figures |= {name: median(values) for name, values in costs.items()}
    figures["players_new_game_failures"] = float(state.new_game_failures)
    return figures


def figures_of(
    state: Play,
    rates: dict[str, list[float]],
    shares: dict[str, list[float]],
    queue_max: dict[str, float],
    flooded: list[dict[str, Any]],
    drains: list[float],
) -> dict[str, float]:
    figures: dict[str, float] = {}
    pooled: dict[str, list[float]] = {}
    statuses: dict[str, Counter[int]] = {"quiet": Counter(), "flood": Counter()}
    p99s: dict[str, list[float]] = {"quiet": [], "flood": []}
    for round_ in range(1, ROUNDS + 1):
        for kind in ("quiet", "flood"):
            latencies = sorted(state.latencies.get(f"{kind}{round_}", []))
            pooled.setdefault(kind, []).extend(latencies)
            p99s[kind].append(pct(latencies, 0.99))
            statuses[kind] += state.statuses.get(f"{kind}{round_}", Counter())
    for kind in ("quiet", "flood"):
        latencies = sorted(pooled[kind])
        figures[f"{kind}_p50_ms"] = pct(latencies, 0.5)
        figures[f"{kind}_p99_ms"] = pct(latencies, 0.99)
        figures[f"{kind}_max_ms"] = latencies[-1] * 1000 if latencies else float("nan")
    figures["flood_p99_ratio"] = figures["flood_p99_ms"] / figures["quiet_p99_ms"]
    figures["flood_p99_ratio_rounds"] = median(
        [f / q for q, f in zip(p99s["quiet"], p99s["flood"], strict=True)]
    )
    for kind in ("quiet", "flood"):
        figures[f"{kind}_actions_per_s"] = median(rates[kind])
        figures[f"{kind}_actions"] = float(sum(statuses[kind].values()))
        figures[f"{kind}_players_refused"] = float(
            sum(n for status, n in statuses[kind].items() if status != 200)
        )
        for status, n in sorted(statuses[kind].items()):
            if status != 200:
                figures[f"players_{kind}_status_{status}"] = float(n)
    seconds = sum(r["seconds"] for r in flooded)
    counts: Counter[str] = Counter()
    for r in flooded:
        counts.update(r["counts"])
    figures["flood_requests_per_s"] = median([r["sent"] / r["seconds"] for r in flooded])
    for kind in ("verdict", "verify", "signup"):
        mine = {name: n for name, n in counts.items() if name.startswith(kind + "_")}
        total = sum(mine.values())
        figures[f"flood_{kind}_per_s"] = total / seconds
        for name, n in sorted(mine.items()):
            figures[f"flood_{name}"] = float(n)
    figures["flood_server_errors"] = float(
        sum(n for name, n in counts.items() if re.fullmatch(r"[a-z]+_5(?!03)\d\d", name))
    )
    figures["flood_connection_errors"] = float(
        sum(n for name, n in counts.items() if "connection_error" in name)
    )
    figures["flood_unanswered"] = float(sum(r["unanswered"] for r in flooded))
    figures["flood_tokens"] = float(len(flooded[-1]["tokens"]) if flooded else 0)
    figures["drain_s_max"] = max(drains, default=0.0)
    figures["drain_s_median"] = median(drains)
    figures["quiet_public_queue_max"] = queue_max["quiet"]
    figures["flood_public_queue_max"] = queue_max["flood"]
    for name, values in shares.items():
        figures[name] = median(values)
    return figures


if __name__ == "__main__":
    if sys.argv[1:2] == ["--flood"]:
        base, seconds = sys.argv[2], float(sys.argv[3])
        held = [t for t in (sys.argv[4] if len(sys.argv) > 4 else "").split(",") if t]
        print(json.dumps(asyncio.run(flood(base, seconds, held))), flush=True)
    else:
        asyncio.run(main())
