"""Players under abuse: 32 players' latency while one client attacks the server, against the same
players with nobody attacking, with the server's defences on; one attack after another, each in
alternating quiet and attack phases.

One server process (`python -m server`) with its DEFAULT rate limit (`RATE_LIMIT` unset: 50
requests a second per client, 4x that per address, 20 sign-ups a minute per address; one costly
request in flight per client; the public solver lane's bounded queue), started with a soft limit
of BENCH_SERVER_NOFILE (1,024) open files (a common default; its hard limit as this shell has it:
a server that raises its own soft limit shows it in `server_open_files_soft`), on a fresh
database: a PostgreSQL database `solitaire_bench_abuse` on $BENCH_PG_URL's server (created, and
dropped at the end), or a fresh SQLite file when PostgreSQL cannot be reached.

- **Seeded histories.** Before the server starts, the database is migrated to revision 0008 (the
  schema before the statistics table) and filled by bulk SQL (asyncpg COPY, or sqlite3
  executemany), not through the API: a *big player* with BENCH_BIG_GAMES (200,000) finished
  games (won and abandoned games of both rules, made from the games of tests/data/games.json by
  the server's own `new_game_row` and engine snapshots; their move logs are left empty:
  statistics do not read them), and a *long player* with BENCH_LONG_GAMES (8) won games of
  4,999 actions each (the long replay below) with their whole move logs, and a session token
  (every scope). Then the rest of the migrations run (`seed_migrate_s`): a migration that
  backfills statistics from the games finds them as if they had been played. `seed_s` is the
  fill's time.
- **Players.** BENCH_PLAYERS (32) players, each a client of its own: its own source address
  (127.0.1.1, 127.0.1.2, ...: every player is a different household, and each signs up once,
  within the per-address sign-up budget), its own token, its own game. Each plays random legal
  moves of a random classic deal it asked for (followed by a local engine, as in bench/load.py;
  5% undos; a game over or past 400 moves is followed by a new one) over HTTP, with a fresh
  `Idempotency-Key` (uuid4) on every action, at a brisk human pace: BENCH_PACE (5) actions a
  second each, one at a time (an action answered late is followed at once, never by a burst).
  Every action's latency (request sent to response read) is recorded. The players play without
  a break for the whole run; the phases below only label their actions.
- **A newcomer.** Four times a second a client from 127.0.0.4 opens a *fresh* connection and
  reads a long game's document (`GET /api/v1/games/{id}`, 10 s timeout): what a new visitor
  gets while the attack holds the server's connections (`<phase>_fresh_p99_ms`,
  `<phase>_fresh_failures`: no answer or not 200).
- **The attacks** (BENCH_ATTACKS, all by default, in this order), each a separate process (so its
  CPU is not the players' client's) sending from an address of its own (the flood from
  127.0.0.2, the others from 127.0.0.11...):
  - `flood`: BENCH_FLOOD_CONCURRENCY (64) requests in flight, as fast as the answers come: in
    turn `GET /api/v1/deals/{code}/winnable` (fresh random RU1 codes of both rules, and a third
    of the time one of HARD_CODES, relaxed and classic deals whose search runs to the solver's
    node budget, such as RU1-R-AAAABOC; `take_backs` true or false), `POST
    /api/v1/replays/verify` with a long replay (the first won game of tests/data/games.json
    with move-and-undo pairs inserted up to 5,000 actions, ~200 KB, as a downloaded replay with
    `t_ms`, the deal and the result), and `POST /api/v1/players` sign-ups. Each request goes
    anonymous or with one of the (at most FLOOD_TOKENS, 4) tokens its sign-ups got (kept from
    one flood to the next, and lent to the trickle): one address, several clients.
    BENCH_FLOOD_KINDS (`verdict,verify,signup`: a subset floods only those routes).
  - `stats`: 4 anonymous requests in flight of `GET /api/v1/players/{big}/stats`.
  - `replays`: 16 in flight (the in-flight cap of an address) of anonymous `GET
    /api/v1/games/{id}/replay` of the long games.
  - `exports`: 16 in flight, in turn `GET /api/v1/players/{long}/games/export` (anonymous) and
    `GET /api/v1/me/export` (the long player's token): every long game, each request.
  - `movelog`: 16 in flight of anonymous 1,000-entry move-log pages, `GET
    /api/v1/games/{id}/moves?after=N&limit=1000` (N random).
  - `connections`: BENCH_HALF_OPEN (1,100) half-open connections from one address: half send
    nothing, half the start of a request head (`GET /healthz HTTP/1.1` and a Host line, never
    the blank line that ends it). A connection the server closes (or answers) is opened again a
    second later. `connections_opened`, `_held_max` (open at once), `_held_at_end`,
    `_closed_by_server`, its `_lifetime_s_{median,max}` (connect to close), what the server said
    first (`connections_answers_{status}`, 0: closed without a word) and the connects that
    failed (`connections_open_errors_{exception}`).
  - `trickle`: BENCH_TRICKLES (64) connections each sending a whole request head with
    `Content-Length: 100000` and then its body one byte a second: three in four `POST
    /api/v1/replays/verify` (every other one with a flood token), one in four `POST
    /api/v1/players`; on an answer or a close, the next one a second later.
    `trickle_started`, `trickle_answers_{route}_{status}` (0: closed without an answer),
    `trickle_held_s_{median,max}` (head sent to answer), `trickle_held_at_end`.
  - `nonapi`: 64 in flight, in turn `/healthz`, `/readyz`, `/metrics`, `/openapi.yaml`,
    `/asyncapi.yaml`, `/web/app.js`, `/web/style.css`, `/` and a 404 (a fresh path each time).
  The HTTP attacks' answers are counted as `<attack>_<route>_<status>` with the reason of a 429
  (`_address`: the address's budget, `_client`: the client's, `_signup`, `_costly`: one costly
  request at a time, `_inflight`: the address's in-flight cap) or a 503 (`_busy`: the lane's
  queue is full, `_searching`, `_timeout`, `_database`).
- **Phases.** BENCH_ROUNDS (2) rounds; in each, for every attack, a quiet phase then its attack
  phase, BENCH_SECONDS (5) each (the machine is shared: compare within a run; shortened from
  issue 14's 3 x 20 s so that eight attacks fit in five minutes). After an attack the run waits
  for the server to settle before the next quiet phase: after the flood for the solver's public
  lane to finish the searches it left queued (at most DRAIN_MAX_S, 20 s; the server follows a
  search to its end after the request gave up on it); after every attack until the server's CPU
  is back within a quarter (+0.05 core) of the quiet phase before it (at most SETTLE_MAX_S, 10 s;
  `<attack>_settle_s_max`), so that work an attack left running does not count in the next
  quiet phase.

Printed last as `name=value` lines (percentiles over all the actions of a kind of phase;
rates are medians over the rounds; counts are sums):

- `quiet_p50_ms`, `quiet_p99_ms`, `quiet_max_ms` over every quiet phase; for each attack
  `<attack>_p50_ms`, `_p99_ms`, `_max_ms` and **`<attack>_p99_ratio`**: its p99 over the p99 of
  the quiet phases just before it (target: at most 2); `flood_p99_ratio_rounds` (the median of
  each round's own ratio); `p99_ratio_max` (the worst attack's) and `attacks_over_target`;
- `{quiet,<attack>}_actions_per_s` (all players' accepted actions a second; the pace asks for
  players x BENCH_PACE), `_actions`, `_players_refused` (players' actions answered other than
  200: each is listed as `players_{phase}_status_{code}`, 0 for a lost connection);
- `{quiet,<attack>}_fresh_p99_ms`, `_fresh_failures` (the newcomer), `_server_rss_max_mb` and
  `_server_fds_max` (the server's resident memory and open files, seen each second);
- each attacker: `<attack>_requests_per_s` (HTTP requests sent, or connections opened), its
  answers as above, `<attack>_server_errors` (5xx other than 503: the target is 0),
  `<attack>_connection_errors`, `<attack>_unanswered` (in flight at a phase's end),
  `<attack>_server_cpu_ms_per_request` (the server's CPU in the attack phase less the players'
  actions at the quiet phase's cost, per attacker request answered; for the flood
  `flood_server_cpu_ms_per_flood_request`); the flood's own: `flood_{verdict,verify,signup}_per_s`,
  `flood_tokens` (tokens the flooder held at the end), `drain_s_max`, `drain_s_median`,
  `quiet_public_queue_max`, `flood_public_queue_max` (the public lane's jobs, running or
  waiting, seen at /metrics each second of the phases);
- CPU (cores used, from /proc; medians): `{quiet,<attack>}_server_cpu` (the server's event loop
  process), `_solver_cpu` (its worker processes), `_pg_cpu` (the bench database's PostgreSQL
  backends; 0 with SQLite), `_players_cpu` (this client), `<attack>_attacker_cpu` (the attacker
  process), `{quiet,<attack>}_machine_busy` (of all cores, 0..1: the rest is other load on the
  shared machine); `quiet_server_cpu_ms_per_action` (the server's CPU per player action);
- `server_log_tracebacks` (the target is 0; each kind of error the log holds is printed as a
  `#` line), `players_new_game_failures` (new games refused: the player asks again a second
  later), `seed_s`, `seed_migrate_s`, `big_player_games`, `long_games`;
- `bench_seconds`: how long the whole run took.

With no arguments the run takes about four minutes on a 2-core machine (under five).
Environment: BENCH_PLAYERS (32), BENCH_PACE (5), BENCH_SECONDS (5), BENCH_ROUNDS (2),
BENCH_ATTACKS (`flood,stats,replays,exports,movelog,connections,trickle,nonapi`),
BENCH_FLOOD_CONCURRENCY (64), BENCH_FLOOD_KINDS, BENCH_BIG_GAMES (200000), BENCH_LONG_GAMES (8),
BENCH_HALF_OPEN (1100), BENCH_TRICKLES (64), BENCH_SERVER_NOFILE (1024), BENCH_PG_URL (see
bench/load.py).

(`python bench/abuse.py --attack KIND SECONDS CONTEXT` is an attacker process itself: it prints
`ready`, attacks for SECONDS (CONTEXT: a JSON object, the base URL and the seeded ids and tokens)
and prints its counts as one JSON line.)
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import os
import random
import re
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
from load import ROOT, Server, cpu_seconds, fresh_pg, next_action, pct, stop
from load import start as load_start
from prometheus_client.parser import text_string_to_metric_families
from races import machine_ticks, postgres_seconds

from server.api.render import REPLAY_FORMAT, REPLAY_VERSION, deal_json
from server.engine import DealCode, Game, Rule, Status  # load puts ROOT on the path
from server.engine.moves import parse_action
from server.engine.replay import replay, verify_replay
from server.engine.snapshot import dumps
from server.services.games import new_game_row
from server.services.names import name_key
from server.services.sessions import SCOPES, hash_token, new_token, scope_text
from server.store.db import migrate
from server.store.records import GAME_FIELDS, GameRecord

PLAYERS = int(os.environ.get("BENCH_PLAYERS", "32"))
PACE = float(os.environ.get("BENCH_PACE", "5"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "5"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
ALL_ATTACKS = (
    "flood",
    "stats",
    "replays",
    "exports",
    "movelog",
    "connections",
    "trickle",
    "nonapi",
)
ATTACKS = tuple(a for a in os.environ.get("BENCH_ATTACKS", ",".join(ALL_ATTACKS)).split(",") if a)
assert set(ATTACKS) <= set(ALL_ATTACKS), ATTACKS
FLOOD_CONCURRENCY = int(os.environ.get("BENCH_FLOOD_CONCURRENCY", "64"))
FLOOD_KINDS = tuple(os.environ.get("BENCH_FLOOD_KINDS", "verdict,verify,signup").split(","))
assert set(FLOOD_KINDS) <= {"verdict", "verify", "signup"}, FLOOD_KINDS
BIG_GAMES = int(os.environ.get("BENCH_BIG_GAMES", "200000"))
LONG_GAMES = int(os.environ.get("BENCH_LONG_GAMES", "8"))
HALF_OPEN = int(os.environ.get("BENCH_HALF_OPEN", "1100"))
TRICKLES = int(os.environ.get("BENCH_TRICKLES", "64"))
SERVER_NOFILE = int(os.environ.get("BENCH_SERVER_NOFILE", "1024"))
PG_URL = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
DATABASE = "solitaire_bench_abuse"
PORT = 18381
BASE = f"http://127.0.0.1:{PORT}"
FLOOD_ADDRESS = "127.0.0.2"
WARM_ADDRESS = "127.0.0.3"
PROBE_ADDRESS = "127.0.0.4"
ATTACK_ADDRESSES = {
    name: FLOOD_ADDRESS if name == "flood" else f"127.0.0.{11 + i}"
    for i, name in enumerate(ALL_ATTACKS)
}
"""One address per attack: what one attack leaves behind (its budget's window, requests still
being answered) is not charged to the next."""
CONCURRENCY = {"stats": 4, "replays": 16, "exports": 16, "movelog": 16, "nonapi": 64}
"""Requests in flight of each HTTP attack but the flood (BENCH_FLOOD_CONCURRENCY): the issue's 4
connections for statistics, the in-flight cap of an address (16) for the costly reads."""
NON_API = (
    ("healthz", "/healthz"),
    ("readyz", "/readyz"),
    ("metrics", "/metrics"),
    ("openapi", "/openapi.yaml"),
    ("asyncapi", "/asyncapi.yaml"),
    ("web", "/web/app.js"),
    ("web", "/web/style.css"),
    ("index", "/"),
    ("notfound", ""),
)
PARTIAL_HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
TRICKLE_BODY = 100_000
TRICKLE_INTERVAL_S = 1.0
CONNECT_TIMEOUT_S = 10.0
PROBE_INTERVAL_S = 0.25
PROBE_TIMEOUT_S = 10.0
FLOOD_TOKENS = 4
DRAIN_MAX_S = 20.0
SETTLE_MAX_S = 10.0
SEED_REVISION = "0008"
FILL_FIELDS = tuple(name for name in GAME_FIELDS if not name.startswith("seed_"))
"""The games' columns at SEED_REVISION (the seed columns came with 0011)."""
"""The schema the histories are written into (before the statistics table of issue 21): the
migrations after it find the games as if they had been played."""
DAY_MS = 86_400_000
MAX_ACTIONS = 5_000
"""The longest replay the server verifies (server.services.values.MAX_ACTIONS)."""
MOVE_PAGE = 1_000
"""The longest move-log page (server.services.values.MOVE_PAGE_MAX)."""
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
    defences), and wait for its /readyz; with a soft limit of SERVER_NOFILE open files (this
    process's own limit is set back at once)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = SERVER_NOFILE if hard == resource.RLIM_INFINITY else min(SERVER_NOFILE, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
    try:
        starting = asyncio.ensure_future(
            load_start(["-m", "server", "--database-url", url], PORT, defaults=True)
        )
        await asyncio.sleep(0.5)  # the process is spawned at once: it has the limit
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return await starting


def open_files_limit(pid: int) -> tuple[float, float]:
    """A process's soft and hard limits of open files (/proc/<pid>/limits)."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return (
                float("inf") if soft == "unlimited" else float(soft),
                float("inf") if hard == "unlimited" else float(hard),
            )
    return float("nan"), float("nan")


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


def rss_mb(pid: int) -> float:
    """A process's resident memory (/proc/<pid>/status VmRSS), in MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def open_files(pid: int) -> float:
    try:
        return float(len(os.listdir(f"/proc/{pid}/fd")))
    except OSError:
        return 0.0


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
    """The public solver lane's jobs, running or waiting (the server's /metrics; 0 when it does
    not answer them)."""
    try:
        async with session.get(f"{BASE}/metrics") as response:
            if response.status != 200:
                return 0.0
            text = await response.text()
    except (aiohttp.ClientError, TimeoutError):
        return 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.endswith("solver_queue_length") and sample.labels.get("kind") == (
                "public"
            ):
                return sample.value
    return 0.0


# ---------------------------------------------------------------------------------- seeding


@dataclass(frozen=True)
class Seeded:
    """What the attacks need of the seeded histories."""

    big_player: str
    long_player: str
    long_token: str
    long_games: list[str]
    long_version: int
    seed_s: float
    migrate_s: float

    def context(self, tokens: list[str]) -> dict[str, Any]:
        return {
            "base": BASE,
            "big_player": self.big_player,
            "long_player": self.long_player,
            "long_token": self.long_token,
            "long_games": self.long_games,
            "long_version": self.long_version,
            "tokens": tokens,
        }


def plain(value: Any) -> Any:
    """A value as the database drivers take it (the engine's enums as their text)."""
    return value.value if isinstance(value, enum.Enum) else value


def templates(now: int) -> list[GameRecord]:
    """Finished games to copy: each game of tests/data/games.json won, and abandoned after its
    first eight actions (their rows as the server writes them, snapshots included)."""
    games = json.loads((ROOT / "tests" / "data" / "games.json").read_text())["games"]
    made: list[GameRecord] = []
    for g in games:
        code = DealCode.parse(g["code"])
        for actions in (g["actions"], g["actions"][:8]):
            game = replay(code, actions).game
            if game.status is Status.ACTIVE:
                game.abandon()
            row = new_game_row("", code, Game.deal(code), now, secret=False)
            made.append(
                replace(
                    row,
                    status=game.status,
                    score=game.score,
                    moves=game.moves,
                    ranked_score=game.ranked_score,
                    version=len(actions) + (game.status is Status.ABANDONED),
                    snapshot=dumps(game),
                )
            )
    return made


def long_actions() -> tuple[DealCode, list[str]]:
    """The long replay's deal and actions (4,999: see `long_replay`)."""
    games = json.loads((ROOT / "tests" / "data" / "games.json").read_text())["games"]
    game = next(g for g in games if g["status"] == "won")
    first, *rest = game["actions"]
    pairs = (MAX_ACTIONS - len(game["actions"])) // 2
    return DealCode.parse(game["code"]), [first, *[rest[0], "undo"] * pairs, *rest]


@dataclass
class Fill:
    """The rows to write, by table (their columns in order)."""

    columns: dict[str, list[str]]
    rows: dict[str, list[tuple[Any, ...]]]


def fill_rows(rng: random.Random) -> tuple[Fill, Seeded]:
    now = int(time.time() * 1000)
    big, long = str(uuid.uuid4()), str(uuid.uuid4())
    token = new_token()
    player_columns = [
        "id",
        "name",
        "name_key",
        "created_ms",
        "double_click",
        "placement_help",
        "interactive_rules",
        "auto_placement",
    ]
    players = []
    for player, name in ((big, f"bench-big-{big[:8]}"), (long, f"bench-long-{long[:8]}")):
        players.append((player, name, name_key(name), now - 400 * DAY_MS, True, True, True, False))
    session_columns = [
        "id",
        "player_id",
        "token_hash",
        "label",
        "scopes",
        "created_ms",
        "last_used_ms",
    ]
    sessions = [(str(uuid.uuid4()), long, hash_token(token), "bench", scope_text(SCOPES), now, now)]
    games: list[tuple[Any, ...]] = []
    made = templates(now)
    # The big player's games, one every 30 s or so back from now, oldest first: each a
    # template's row with its own id, player and times.
    rows = [[plain(getattr(t, name)) for name in FILL_FIELDS] for t in made]
    at = {name: FILL_FIELDS.index(name) for name in FILL_FIELDS}
    moment = now - BIG_GAMES * 30_000
    for _ in range(BIG_GAMES):
        values = rows[rng.randrange(len(rows))].copy()
        elapsed = rng.randrange(30_000, 600_000)
        moment += rng.randrange(20_000, 40_000)
        values[at["id"]] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        values[at["player_id"]] = big
        values[at["created_ms"]] = values[at["started_ms"]] = moment - elapsed
        values[at["finished_ms"]] = values[at["active_ms"]] = moment
        values[at["elapsed_ms"]] = elapsed
        values[at["assisted"]] = rng.random() < 0.05
        games.append(tuple(values))
    # The long player's games, with their move logs.
    code, actions = long_actions()
    game = Game.deal(code)
    log: list[tuple[str, int]] = []
    for text in actions:
        game.play(parse_action(text))
        log.append((text, game.score))
    assert game.status is Status.WON, game.status
    moves: list[tuple[Any, ...]] = []
    long_games: list[str] = []
    for n in range(LONG_GAMES):
        began = now - (n + 1) * DAY_MS
        finished = began + 650 * len(actions)
        row = replace(
            new_game_row(long, code, Game.deal(code), began, secret=False),
            status=game.status,
            score=game.score,
            moves=game.moves,
            ranked_score=game.ranked_score,
            version=len(actions),
            snapshot=dumps(game),
            started_ms=began,
            finished_ms=finished,
            elapsed_ms=finished - began,
            active_ms=finished,
        )
        long_games.append(row.id)
        games.append(tuple(plain(getattr(row, name)) for name in FILL_FIELDS))
        moves += [
            (row.id, seq, text, score, began + 650 * seq)
            for seq, (text, score) in enumerate(log, 1)
        ]
    fill = Fill(
        {
            "players": player_columns,
            "sessions": session_columns,
            "games": list(FILL_FIELDS),
            "moves": ["game_id", "seq", "move", "score", "at_ms"],
        },
        {"players": players, "sessions": sessions, "games": games, "moves": moves},
    )
    return fill, Seeded(big, long, token, long_games, len(actions), 0.0, 0.0)


async def write_pg(url: str, fill: Fill) -> None:
    """COPY, with the foreign keys' triggers off for the session (the rows are consistent) and
    the games' indexes (but their primary key's) made again after the games are in: several
    times faster than maintaining a dozen indexes row by row."""
    connection = await asyncpg.connect(url)
    try:
        with contextlib.suppress(asyncpg.PostgresError):  # a superuser's setting
            await connection.execute("SET session_replication_role = replica")
        indexes = await connection.fetch(
            "SELECT i.relname AS name, pg_get_indexdef(i.oid) AS definition "
            "FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
            "WHERE x.indrelid = 'games'::regclass AND NOT EXISTS "
            "(SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)"
        )
        for index in indexes:
            await connection.execute(f'DROP INDEX "{index["name"]}"')
        for table, rows in fill.rows.items():
            for i in range(0, len(rows), 50_000):
                await connection.copy_records_to_table(
                    table, records=rows[i : i + 50_000], columns=fill.columns[table]
                )
        for index in indexes:
            await connection.execute(index["definition"])
        await connection.execute("ANALYZE")
    finally:
        await connection.close()


def write_sqlite(path: str, fill: Fill) -> None:
    connection = sqlite3.connect(path)
    try:
        with connection:
            for table, rows in fill.rows.items():
                columns = fill.columns[table]
                connection.executemany(
                    f"INSERT INTO {table} ({', '.join(columns)}) "
                    f"VALUES ({', '.join('?' * len(columns))})",
                    rows,
                )
        connection.execute("ANALYZE")
    finally:
        connection.close()


async def seed(url: str, pg: bool) -> Seeded:
    """The big and the long player's histories, written at SEED_REVISION; then the database
    migrated to the head."""
    t0 = time.perf_counter()
    await asyncio.to_thread(migrate, url, SEED_REVISION)
    fill, seeded = fill_rows(random.Random(21))
    if pg:
        await write_pg(url, fill)
    else:
        await asyncio.to_thread(write_sqlite, url.removeprefix("sqlite:///"), fill)
    t1 = time.perf_counter()
    await asyncio.to_thread(migrate, url)
    t2 = time.perf_counter()
    print(
        f"# seeded {BIG_GAMES} games of the big player and {LONG_GAMES} of "
        f"{seeded.long_version} actions in {t1 - t0:.1f} s, migrated on in {t2 - t1:.1f} s",
        flush=True,
    )
    return replace(seeded, seed_s=t1 - t0, migrate_s=t2 - t1)


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
    each action's latency (s) and status; and the newcomer's latencies (s) and failures."""

    phase: str | None = None
    stopped: bool = False
    new_game_failures: int = 0
    latencies: dict[str, list[float]] = field(default_factory=dict)
    statuses: dict[str, Counter[int]] = field(default_factory=dict)
    fresh: dict[str, list[float]] = field(default_factory=dict)
    fresh_failures: dict[str, Counter[str]] = field(default_factory=dict)


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


# ---------------------------------------------------------------------------------- attackers


def long_replay() -> bytes:
    """The first won game of tests/data/games.json as a downloaded replay, with move-and-undo
    pairs of its second move inserted after its first, up to MAX_ACTIONS actions."""
    code, actions = long_actions()
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
        if "at a time" in detail:
            return "_inflight"
        return "_client"
    if status == 503:
        if "busy" in detail:
            return "_busy"
        if "searched" in detail:
            return "_searching"
        if "database" in detail.lower():
            return "_database"
        return "_timeout"
    return ""


def detail_of(body: bytes) -> str:
    try:
        document = json.loads(body)
    except ValueError:
        return ""
    return str(document.get("detail", "")) if isinstance(document, dict) else ""


async def keep_busy(
    concurrency: int,
    seconds: float,
    one: Callable[[int], Awaitable[None]],
    at_end: Callable[[], None] | None = None,
) -> float:
    """`concurrency` workers each calling `one` (with a worker's running count) for `seconds`,
    after printing `ready`, then `at_end` and the workers cancelled; the seconds they ran."""
    print("ready", flush=True)
    began = time.perf_counter()

    async def worker(n: int) -> None:
        i = n
        while True:
            await one(i)
            i += concurrency

    workers = [asyncio.create_task(worker(n)) for n in range(concurrency)]
    await asyncio.sleep(seconds)
    if at_end is not None:
        at_end()
    for task in workers:
        task.cancel()
    await asyncio.gather(*workers, return_exceptions=True)
    return time.perf_counter() - began


async def flood(ctx: dict[str, Any], seconds: float) -> dict[str, Any]:
    """Requests from FLOOD_ADDRESS, FLOOD_CONCURRENCY at a time, for `seconds`."""
    base, tokens = ctx["base"], list(ctx["tokens"])
    rng = random.Random()
    replay_body = long_replay()
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

        async def one(i: int) -> None:
            nonlocal sent
            kind = FLOOD_KINDS[i % len(FLOOD_KINDS)]
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
                    f"{base}/api/v1/replays/verify", data=replay_body, headers=headers
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
                detail = detail_of(body)
                if kind == "signup" and status == 201 and len(tokens) < FLOOD_TOKENS:
                    tokens.append(json.loads(body)["token"])
            counts[f"{kind}_{status}{reason(status, detail)}"] += 1

        elapsed = await keep_busy(FLOOD_CONCURRENCY, seconds, one)
    return {
        "seconds": elapsed,
        "sent": sent,
        "unanswered": sent - sum(counts.values()),
        "counts": dict(counts),
        "tokens": tokens,
    }


def attack_request(
    kind: str, ctx: dict[str, Any], i: int, rng: random.Random
) -> tuple[str, str, dict[str, str]]:
    """The route's label, the URL and the headers of an HTTP attack's i-th request (a GET)."""
    base = ctx["base"]
    game = rng.choice(ctx["long_games"])
    if kind == "stats":
        return "stats", f"{base}/api/v1/players/{ctx['big_player']}/stats", {}
    if kind == "replays":
        return "replay", f"{base}/api/v1/games/{game}/replay", {}
    if kind == "movelog":
        after = rng.randrange(max(1, ctx["long_version"] - MOVE_PAGE))
        return "moves", f"{base}/api/v1/games/{game}/moves?after={after}&limit={MOVE_PAGE}", {}
    if kind == "exports":
        if i % 2:
            auth = {"Authorization": f"Bearer {ctx['long_token']}"}
            return "me_export", f"{base}/api/v1/me/export", auth
        return "games_export", f"{base}/api/v1/players/{ctx['long_player']}/games/export", {}
    assert kind == "nonapi", kind
    label, path = NON_API[i % len(NON_API)]
    return label, base + (path or f"/no-such-page-{rng.getrandbits(32):08x}"), {}


async def http_attack(kind: str, ctx: dict[str, Any], seconds: float) -> dict[str, Any]:
    """CONCURRENCY[kind] GETs in flight from the attack's address, as fast as the answers come
    (each body read whole), for `seconds`."""
    rng = random.Random()
    counts: Counter[str] = Counter()
    sent = 0
    received = 0
    concurrency = CONCURRENCY[kind]
    connector = aiohttp.TCPConnector(local_addr=(ATTACK_ADDRESSES[kind], 0), limit=concurrency)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=60)
    ) as session:

        async def one(i: int) -> None:
            nonlocal sent, received
            label, url, headers = attack_request(kind, ctx, i, rng)
            sent += 1
            try:
                async with session.get(url, headers=headers) as response:
                    body = await response.read()
                    status = response.status
            except (aiohttp.ClientError, TimeoutError) as exc:
                counts[f"{label}_connection_error_{type(exc).__name__}"] += 1
                return
            received += len(body)
            detail = detail_of(body) if status in (429, 503) else ""
            counts[f"{label}_{status}{reason(status, detail)}"] += 1

        elapsed = await keep_busy(concurrency, seconds, one)
    return {
        "seconds": elapsed,
        "sent": sent,
        "unanswered": sent - sum(counts.values()),
        "counts": dict(counts),
        "received_mb": received / 1e6,
    }


def raise_file_limit(want: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(
            resource.RLIMIT_NOFILE,
            (want if hard == resource.RLIM_INFINITY else min(want, hard), hard),
        )


def status_of(line: bytes) -> str:
    """The status of an HTTP status line ("0": none)."""
    parts = line.split()
    return parts[1].decode(errors="replace") if len(parts) > 1 else "0"


async def connect(address: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.wait_for(
        asyncio.open_connection("127.0.0.1", PORT, local_addr=(address, 0)), CONNECT_TIMEOUT_S
    )


async def half_open(ctx: dict[str, Any], seconds: float) -> dict[str, Any]:
    """HALF_OPEN connections from one address held open, saying nothing or the start of a
    request head; one the server closes is opened again a second later."""
    raise_file_limit(HALF_OPEN + 256)
    counts: Counter[str] = Counter()
    lifetimes: list[float] = []
    held = held_max = opened = at_end = 0
    address = ATTACK_ADDRESSES["connections"]

    def ended() -> None:
        nonlocal at_end
        at_end = held

    async def one(i: int) -> None:
        nonlocal held, held_max, opened
        try:
            reader, writer = await connect(address)
        except (OSError, TimeoutError) as exc:
            counts[f"open_errors_{type(exc).__name__}"] += 1
            await asyncio.sleep(1)
            return
        opened += 1
        held += 1
        held_max = max(held_max, held)
        t0 = time.perf_counter()
        try:
            if i % 2:
                writer.write(PARTIAL_HEAD)
            first = await reader.readline()  # waits until the server says something or closes
            counts[f"answers_{status_of(first)}"] += 1
            counts["closed_by_server"] += 1
            lifetimes.append(time.perf_counter() - t0)
        except OSError as exc:
            counts[f"answers_0_{type(exc).__name__}"] += 1
            counts["closed_by_server"] += 1
            lifetimes.append(time.perf_counter() - t0)
        finally:
            held -= 1
            writer.close()
        await asyncio.sleep(1)

    elapsed = await keep_busy(HALF_OPEN, seconds, one, ended)
    lifetimes.sort()
    return {
        "seconds": elapsed,
        "sent": opened,
        "unanswered": 0,
        "counts": dict(counts),
        "figures": {
            "opened": opened,
            "held_max": held_max,
            "held_at_end": at_end,
            "lifetime_s_median": median(lifetimes),
            "lifetime_s_max": lifetimes[-1] if lifetimes else float("nan"),
        },
    }


async def trickle(ctx: dict[str, Any], seconds: float) -> dict[str, Any]:
    """TRICKLES connections from one address, each a whole request head then its body a byte
    every TRICKLE_INTERVAL_S until the server answers or closes; the next a second later."""
    raise_file_limit(TRICKLES + 256)
    counts: Counter[str] = Counter()
    held_s: list[float] = []
    held = started = at_end = 0
    address = ATTACK_ADDRESSES["trickle"]
    tokens: list[str] = ctx["tokens"]

    def ended() -> None:
        nonlocal at_end
        at_end = held

    async def drip(writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while True:
                await asyncio.sleep(TRICKLE_INTERVAL_S)
                writer.write(b" ")
                await writer.drain()

    async def one(i: int) -> None:
        nonlocal held, started
        verify = i % 4 != 3
        route, path = (
            ("verify", "/api/v1/replays/verify") if verify else ("signup", "/api/v1/players")
        )
        auth = ""
        if verify and tokens and i % 2:
            auth = f"Authorization: Bearer {tokens[i % len(tokens)]}\r\n"
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {TRICKLE_BODY}\r\n{auth}\r\n"
        )
        try:
            reader, writer = await connect(address)
        except (OSError, TimeoutError) as exc:
            counts[f"open_errors_{type(exc).__name__}"] += 1
            await asyncio.sleep(1)
            return
        started += 1
        held += 1
        t0 = time.perf_counter()
        dripping = asyncio.create_task(drip(writer))
        try:
            writer.write(head.encode())
            first = await reader.readline()
            counts[f"answers_{route}_{status_of(first)}"] += 1
            held_s.append(time.perf_counter() - t0)
        except OSError as exc:
            counts[f"answers_{route}_0_{type(exc).__name__}"] += 1
            held_s.append(time.perf_counter() - t0)
        finally:
            held -= 1
            dripping.cancel()
            writer.close()
        await asyncio.sleep(1)

    elapsed = await keep_busy(TRICKLES, seconds, one, ended)
    held_s.sort()
    return {
        "seconds": elapsed,
        "sent": started,
        "unanswered": 0,
        "counts": dict(counts),
        "figures": {
            "started": started,
            "held_at_end": at_end,
            "held_s_median": median(held_s),
            "held_s_max": held_s[-1] if held_s else float("nan"),
        },
    }


async def attack(kind: str, ctx: dict[str, Any], seconds: float) -> dict[str, Any]:
    """One attack; its counts, and the CPU seconds this process spent on it (`cpu`)."""
    cpu = time.process_time()
    if kind == "flood":
        result = await flood(ctx, seconds)
    elif kind == "connections":
        result = await half_open(ctx, seconds)
    elif kind == "trickle":
        result = await trickle(ctx, seconds)
    else:
        result = await http_attack(kind, ctx, seconds)
    result["cpu"] = time.process_time() - cpu
    return result


async def serve_attacks() -> None:
    """The attacker process: an attack for each line of its input (a JSON object: `kind`,
    `seconds`, `context`), `ready` as it starts and its result as one JSON line after it (or
    `{"error": ...}`); ends with its input. One process for the whole run: starting one per
    attack cost a second or two each on a busy machine."""
    while line := await asyncio.to_thread(sys.stdin.readline):
        order = json.loads(line)
        try:
            result = await attack(order["kind"], order["context"], order["seconds"])
        except Exception as exc:
            result = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(result), flush=True)


FAILED: dict[str, Any] = {"sent": 0, "unanswered": 0, "counts": {}, "cpu": 0.0, "failed": 1}


class Attacker:
    """The attacker process (`serve_attacks`), started once."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls) -> Attacker:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--attacker",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=1 << 22,
        )
        return cls(process)

    async def line(self, timeout: float) -> str:
        assert self.process.stdout is not None
        try:
            return (await asyncio.wait_for(self.process.stdout.readline(), timeout)).decode()
        except TimeoutError:
            return ""

    async def begin(self, kind: str, seconds: float, ctx: dict[str, Any]) -> dict[str, Any] | None:
        """Starts an attack: None once it runs, else the failure's result."""
        assert self.process.stdin is not None
        order = {"kind": kind, "seconds": seconds, "context": ctx}
        self.process.stdin.write(json.dumps(order).encode() + b"\n")
        await self.process.stdin.drain()
        line = await self.line(60)
        if line.strip() == "ready":
            return None
        print(f"# the {kind} attacker did not start: {line.strip()[:500]!r}", flush=True)
        return {**FAILED, "seconds": seconds}

    async def result(self, kind: str) -> dict[str, Any]:
        """The attack's counts (empty ones, with `failed`, when it failed)."""
        line = await self.line(SECONDS + 60)
        result: dict[str, Any] = json.loads(line) if line.strip() else {"error": "no answer"}
        if "error" in result:
            print(f"# the {kind} attacker failed: {result['error'][:500]}", flush=True)
            return {**FAILED, "seconds": SECONDS}
        return result

    async def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 15)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


# ---------------------------------------------------------------------------------- newcomer


async def newcomer(state: Play, game_id: str) -> None:
    """A fresh connection from PROBE_ADDRESS every PROBE_INTERVAL_S reading a game's document:
    its latency, or why it failed, by phase."""
    connector = aiohttp.TCPConnector(local_addr=(PROBE_ADDRESS, 0), force_close=True)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=PROBE_TIMEOUT_S)
    ) as session:
        while not state.stopped:
            phase = state.phase
            t0 = time.perf_counter()
            failure = ""
            try:
                async with session.get(f"{BASE}/api/v1/games/{game_id}") as response:
                    await response.read()
                    if response.status != 200:
                        failure = str(response.status)
            except (aiohttp.ClientError, TimeoutError) as exc:
                failure = type(exc).__name__
            t1 = time.perf_counter()
            if phase is not None and phase == state.phase:
                if failure:
                    state.fresh_failures.setdefault(phase, Counter())[failure] += 1
                else:
                    state.fresh.setdefault(phase, []).append(t1 - t0)
            await asyncio.sleep(max(0.0, PROBE_INTERVAL_S - (t1 - t0)))


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


@dataclass
class Watch:
    """What was seen each second of a phase: the public lane's jobs, the server's resident
    memory (MB) and open files."""

    queue: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    fds: list[float] = field(default_factory=list)


async def watch(
    server: Server, session: aiohttp.ClientSession, seen: Watch, done: asyncio.Event
) -> None:
    while not done.is_set():
        seen.rss.append(rss_mb(server.pid))
        seen.fds.append(open_files(server.pid))
        seen.queue.append(await public_queue(session))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), 1)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


@dataclass
class Phase:
    """One phase: quiet (before `attack`) or `attack` itself, of a round."""

    kind: str
    attack: str
    round: int
    label: str
    wall: float
    server_s: float
    shares: dict[str, float]
    seen: Watch
    result: dict[str, Any] | None = None
    drain_s: float | None = None
    settle_s: float = 0.0
    actions: int = 0
    """The players' actions answered in it."""


async def drain(session: aiohttp.ClientSession) -> float:
    """Waits (at most DRAIN_MAX_S) for the public lane to finish what a flood left queued."""
    t0 = time.perf_counter()
    while await public_queue(session) > 0:
        if time.perf_counter() - t0 > DRAIN_MAX_S:
            break
        await asyncio.sleep(0.5)
    return time.perf_counter() - t0


async def settle(server: Server, quiet_share: float) -> float:
    """Waits (at most SETTLE_MAX_S) until the server's CPU over half a second is back within a
    quarter (+0.05 core) of the quiet phase's."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < SETTLE_MAX_S:
        cpu, wall = cpu_seconds(server), time.perf_counter()
        await asyncio.sleep(0.5)
        share = (cpu_seconds(server) - cpu) / (time.perf_counter() - wall)
        if share <= quiet_share * 1.25 + 0.05:
            break
    return time.perf_counter() - t0


async def run_phase(
    server: Server,
    pg: bool,
    state: Play,
    session: aiohttp.ClientSession,
    attacker: Attacker,
    kind: str,
    attack: str,
    round_: int,
    ctx: dict[str, Any],
    quiet_share: float,
) -> Phase:
    label = f"quiet:{attack}{round_}" if kind == "quiet" else f"{attack}{round_}"
    attacking = kind != "quiet"
    failure = await attacker.begin(kind, SECONDS, ctx) if attacking else None
    seen = Watch()
    done = asyncio.Event()
    watcher = asyncio.create_task(watch(server, session, seen, done))
    mark = CpuMark.now(server, pg)
    state.phase = label
    await asyncio.sleep(SECONDS)
    state.phase = None
    later = CpuMark.now(server, pg)
    done.set()
    await watcher
    phase = Phase(
        kind,
        attack,
        round_,
        label,
        later.wall - mark.wall,
        later.server - mark.server,
        mark.shares(later),
        seen,
    )
    extra = ""
    if attacking:
        phase.result = result = failure or await attacker.result(kind)
        extra = f", attacker {result['sent'] / max(1e-9, result['seconds']):.0f}/s"
        if kind == "flood":
            phase.drain_s = await drain(session)
            extra += f", drained in {phase.drain_s:.1f} s"
        phase.settle_s = await settle(server, quiet_share)
        extra += f", settled in {phase.settle_s:.1f} s"
    latencies = sorted(state.latencies.get(label, []))
    statuses = state.statuses.get(label, Counter())
    count = sum(statuses.values())
    print(
        f"# round {round_}: {label} {count / phase.wall:.0f} actions/s, "
        f"p50 {pct(latencies, 0.5):.1f} ms, p99 {pct(latencies, 0.99):.1f} ms, "
        f"refused {count - statuses[200]}, fresh p99 "
        f"{pct(sorted(state.fresh.get(label, [])), 0.99):.0f} ms "
        f"failed {sum(state.fresh_failures.get(label, Counter()).values())}, "
        f"rss max {max(seen.rss, default=0):.0f} MB, fds max {max(seen.fds, default=0):.0f}, "
        f"public queue max {max(seen.queue, default=0):.0f}{extra}",
        flush=True,
    )
    return phase


async def main() -> None:
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        url, pg = await database_url(tmp)
        try:
            seeded = await seed(url, pg)
            server = await start(url)
            try:
                soft, hard = open_files_limit(server.pid)
                figures = await measure(server, pg, seeded)
                tracebacks, seen = server_errors(server)
                figures["server_log_tracebacks"] = float(tracebacks)
                for line, n in seen.most_common(8):
                    print(f"# server log, {n} times: {line}", flush=True)
            finally:
                stop(server)
        finally:
            if pg:
                await drop_pg()
    figures["server_open_files_soft"] = soft
    figures["server_open_files_hard"] = hard
    figures["seed_s"] = seeded.seed_s
    figures["seed_migrate_s"] = seeded.migrate_s
    figures["bench_seconds"] = time.perf_counter() - began
    print(f"database={'postgresql' if pg else 'sqlite'}")
    print(f"attacks={','.join(ATTACKS)}")
    print(f"players={PLAYERS}")
    print(f"pace_per_player={PACE:g}")
    print(f"rounds={ROUNDS}")
    print(f"seconds_per_phase={SECONDS:g}")
    print(f"flood_concurrency={FLOOD_CONCURRENCY}")
    print(f"big_player_games={BIG_GAMES}")
    print(f"long_games={LONG_GAMES}")
    print(f"long_game_actions={seeded.long_version}")
    print(f"half_open={HALF_OPEN}")
    print(f"trickles={TRICKLES}")
    for name, value in figures.items():
        print(f"{name}={number(value)}")


def number(value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")) or value != int(value):
        return f"{value:.2f}"
    return str(int(value))


async def measure(server: Server, pg: bool, seeded: Seeded) -> dict[str, float]:
    await warm_up()
    rng = random.Random(14)
    state = Play()
    players = [Player(i, random.Random(rng.random())) for i in range(PLAYERS)]
    metrics_session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
    phases: list[Phase] = []
    attacker = await Attacker.start()
    try:
        for p in players:  # one by one: each its own address, one sign-up each
            await p.sign_up()
        await asyncio.gather(*(p.new_game() for p in players))
        tasks = [asyncio.create_task(play(p, state)) for p in players]
        tasks.append(asyncio.create_task(newcomer(state, seeded.long_games[0])))
        await asyncio.sleep(3)  # warm: every game in the server's cache
        tokens: list[str] = []
        for round_ in range(1, ROUNDS + 1):
            for attack in ATTACKS:
                ctx = seeded.context(tokens)
                quiet = await run_phase(
                    server, pg, state, metrics_session, attacker, "quiet", attack, round_, ctx, 0.0
                )
                phases.append(quiet)
                share = quiet.shares["server_cpu"]
                hit = await run_phase(
                    server, pg, state, metrics_session, attacker, attack, attack, round_, ctx, share
                )
                phases.append(hit)
                if hit.result is not None and "tokens" in hit.result:
                    tokens = hit.result["tokens"]
        state.stopped = True
        await asyncio.gather(*tasks)
    finally:
        state.stopped = True
        await attacker.close()
        await metrics_session.close()
        for p in players:
            await p.session.close()
    figures = figures_of(state, phases)
    figures["players_new_game_failures"] = float(state.new_game_failures)
    return figures


def pooled(values: dict[str, list[float]], phases: list[Phase]) -> list[float]:
    return sorted(v for p in phases for v in values.get(p.label, []))


def players_figures(state: Play, prefix: str, phases: list[Phase]) -> dict[str, float]:
    """The players' and the newcomer's figures over `phases`, and what was seen of the server."""
    figures: dict[str, float] = {}
    latencies = pooled(state.latencies, phases)
    figures[f"{prefix}_p50_ms"] = pct(latencies, 0.5)
    figures[f"{prefix}_p99_ms"] = pct(latencies, 0.99)
    figures[f"{prefix}_max_ms"] = latencies[-1] * 1000 if latencies else float("nan")
    statuses: Counter[int] = Counter()
    failures: Counter[str] = Counter()
    rates = []
    for p in phases:
        mine = state.statuses.get(p.label, Counter())
        statuses += mine
        rates.append(sum(mine.values()) / p.wall)
        failures += state.fresh_failures.get(p.label, Counter())
    figures[f"{prefix}_actions_per_s"] = median(rates)
    figures[f"{prefix}_actions"] = float(sum(statuses.values()))
    figures[f"{prefix}_players_refused"] = float(
        sum(n for status, n in statuses.items() if status != 200)
    )
    for status, n in sorted(statuses.items()):
        if status != 200:
            figures[f"players_{prefix}_status_{status}"] = float(n)
    figures[f"{prefix}_fresh_p99_ms"] = pct(pooled(state.fresh, phases), 0.99)
    figures[f"{prefix}_fresh_failures"] = float(sum(failures.values()))
    for name, n in sorted(failures.items()):
        figures[f"{prefix}_fresh_failures_{name}"] = float(n)
    figures[f"{prefix}_server_rss_max_mb"] = max((v for p in phases for v in p.seen.rss), default=0)
    figures[f"{prefix}_server_fds_max"] = max((v for p in phases for v in p.seen.fds), default=0)
    for name in phases[0].shares if phases else ():
        figures[f"{prefix}_{name}"] = median([p.shares[name] for p in phases])
    return figures


def attacker_figures(attack: str, hits: list[Phase], quiet: list[Phase]) -> dict[str, float]:
    """What the attacker sent and was answered, and what its requests cost the server."""
    figures: dict[str, float] = {}
    results = [p.result for p in hits if p.result is not None]
    counts: Counter[str] = Counter()
    for r in results:
        counts.update(r["counts"])
    figures[f"{attack}_requests_per_s"] = median([r["sent"] / r["seconds"] for r in results])
    if any("received_mb" in r for r in results):
        figures[f"{attack}_received_mb_per_s"] = median(
            [r.get("received_mb", 0.0) / r["seconds"] for r in results]
        )
    for name, n in sorted(counts.items()):
        figures[f"{attack}_{name}"] = float(n)
    figures[f"{attack}_server_errors"] = float(
        sum(n for name, n in counts.items() if re.search(r"_5(?!03)\d\d(_|$)", name))
    )
    figures[f"{attack}_connection_errors"] = float(
        sum(n for name, n in counts.items() if "connection_error" in name)
    )
    figures[f"{attack}_unanswered"] = float(sum(r["unanswered"] for r in results))
    if any(r.get("failed") for r in results):
        figures[f"{attack}_attacker_failed"] = float(sum(r.get("failed", 0) for r in results))
    kept: dict[str, list[float]] = {}
    for r in results:
        for name, value in r.get("figures", {}).items():
            kept.setdefault(name, []).append(float(value))
    for name, values in kept.items():
        if name.endswith("_median"):
            figures[f"{attack}_{name}"] = median(values)
        elif name in ("opened", "started"):
            figures[f"{attack}_{name}"] = sum(values)
        else:
            figures[f"{attack}_{name}"] = max(values)
    figures[f"{attack}_attacker_cpu"] = median([r["cpu"] / r["seconds"] for r in results])
    figures[f"{attack}_settle_s_max"] = max((p.settle_s for p in hits), default=0.0)
    if attack not in ("connections", "trickle"):
        # The server's CPU less what the players' actions cost it in the quiet phase before,
        # over the attacker's requests answered (their share of this phase's).
        costs = []
        for hit in hits:
            before = next(q for q in quiet if q.round == hit.round)
            if hit.result is None:
                continue
            per_action = before.server_s / max(1, before.actions)
            spent = hit.server_s - per_action * hit.actions
            r = hit.result
            answered = (r["sent"] - r["unanswered"]) * hit.wall / r["seconds"]
            costs.append(spent / max(1, answered) * 1e3)
        name = (
            "flood_server_cpu_ms_per_flood_request"
            if attack == "flood"
            else (f"{attack}_server_cpu_ms_per_request")
        )
        figures[name] = median(costs)
    return figures


def figures_of(state: Play, phases: list[Phase]) -> dict[str, float]:
    for p in phases:
        p.actions = sum(state.statuses.get(p.label, Counter()).values())
    figures: dict[str, float] = {}
    quiet = [p for p in phases if p.kind == "quiet"]
    figures |= players_figures(state, "quiet", quiet)
    figures["quiet_server_cpu_ms_per_action"] = median(
        [p.server_s / max(1, p.actions) * 1e3 for p in quiet]
    )
    ratios: dict[str, float] = {}
    for attack in ATTACKS:
        hits = [p for p in phases if p.kind == attack]
        before = [p for p in quiet if p.attack == attack]
        mine = players_figures(state, attack, hits)
        quiet_p99 = pct(pooled(state.latencies, before), 0.99)
        ratios[attack] = mine[f"{attack}_p99_ms"] / quiet_p99
        figures[f"{attack}_p99_ratio"] = ratios[attack]
        if attack == "flood":
            figures["flood_p99_ratio_rounds"] = median(
                [
                    pct(pooled(state.latencies, [h]), 0.99)
                    / pct(pooled(state.latencies, [q]), 0.99)
                    for q, h in zip(before, hits, strict=True)
                ]
            )
        figures |= mine
        figures |= attacker_figures(attack, hits, before)
        if attack == "flood":
            figures |= flood_figures(hits, before)
    figures["p99_ratio_max"] = max(ratios.values(), default=float("nan"))
    figures["attacks_over_target"] = float(sum(1 for r in ratios.values() if not r <= 2))
    return figures


def flood_figures(hits: list[Phase], quiet: list[Phase]) -> dict[str, float]:
    figures: dict[str, float] = {}
    results = [p.result for p in hits if p.result is not None]
    seconds = sum(r["seconds"] for r in results)
    counts: Counter[str] = Counter()
    for r in results:
        counts.update(r["counts"])
    for kind in ("verdict", "verify", "signup"):
        total = sum(n for name, n in counts.items() if name.startswith(kind + "_"))
        figures[f"flood_{kind}_per_s"] = total / seconds if seconds else float("nan")
    figures["flood_tokens"] = float(len(results[-1].get("tokens", [])) if results else 0)
    drains = [p.drain_s for p in hits if p.drain_s is not None]
    figures["drain_s_max"] = max(drains, default=0.0)
    figures["drain_s_median"] = median(drains)
    figures["quiet_public_queue_max"] = max((v for p in quiet for v in p.seen.queue), default=0)
    figures["flood_public_queue_max"] = max((v for p in hits for v in p.seen.queue), default=0)
    return figures


if __name__ == "__main__":
    if sys.argv[1:2] == ["--attacker"]:
        asyncio.run(serve_attacks())
    else:
        asyncio.run(main())
