"""Races (SPEC 2.6.1) under load: racers' actions/s against the same players without races, and
the delay from a racer's action to the standings at a spectator on a second server process.

Two server processes (`python -m server`, RATE_LIMIT=0) share a fresh PostgreSQL database
`solitaire_bench_races` on $BENCH_PG_URL's server (bench/load.py's `fresh_pg`, `start`, `stop`).
On process A, BENCH_PLAYERS (400) players sign up; every fourth creates a race (`{"seats": 4,
"winnable": false, "time_limit_s": 600}`) and the next three join it, so BENCH_PLAYERS / 4 (100)
races start together; each player also deals an ordinary game of its own (a random secret deal,
not a race game). BENCH_SPECTATORS (4) spectators per race connect to process B and send
`watch_race` (they stay connected for the whole run). Each player opens a WebSocket to A
(bearer token) for each measurement (one left idle in between would miss the heartbeat).

The deal is secret, so a player cannot follow its game with a local engine (as bench/ws.py
does). Once, before the rounds, each player reads its own two games (`GET /api/v1/games/{id}`
shows it the face-up cards) and finds one legal move with `GET .../targets?card=` (the likely
cards first: an ace at the end of a column, a card whose successor of its suit ends a column;
then every face-up card). A player then alternates that move and `undo` (an action and its undo
keep the position, so the move stays legal): every message is an accepted action, as with
bench/load.py's wrk script (AC-f / undo). Each `act` carries a fresh `idempotency_key` (uuid4),
as the web client sends. Players act one message at a time, at full speed. Before the first
round every player plays the move and its undo once on each of its games, so that every
measurement finds the games in A's cache (the first action on a race game loads it).

BENCH_ROUNDS (2) rounds, each of two measurements of BENCH_SECONDS (10), alternating: race then
solo in odd rounds, solo then race in even ones (the machine is shared: compare ratios within
one run).

- race: all players act on their race games (the races have started: the run waits for the
  5 s countdown and the server's tick to `running`);
- solo (the baseline): the same players and kind of actions on their own ordinary games.

Standings delay: a racer's `result` of a move (not an undo: an undo leaves `moves` unchanged)
carries the game's `moves` count m; the action is shown at a spectator by the first `race`
message whose standings give that racer `moves` >= m (the spectator on process B, which reads
the race again on each change, may fold several changes into one message). The delay is the
time from the result reaching the racer to that message reaching the spectator, for each of the
race's spectators (the commit precedes both, so it may be negative when B is quicker than A's
answer). Both timestamps are taken in this one client process.

CPU (user + system, from /proc) is measured per measurement for server A, server B, the
PostgreSQL backends of the bench database (PostgreSQL runs here; its shared background
processes are left out), this client, and the whole machine (from /proc/stat; the rest is other
load on the shared machine). The client shares the 2 cores
with the servers and PostgreSQL, so the rates include its own CPU; the servers' CPU per action
is the steadier figure.

Printed last as `name=value` lines (medians over the rounds; counts are sums):

- `race_actions_per_s`, `solo_actions_per_s`, `race_to_solo` (target >= 0.8);
  `race_p50_ms`, `race_p99_ms`, `solo_p50_ms`, `solo_p99_ms` (act sent -> result received);
- `standings_p50_ms`, `standings_p99_ms` (target < 100), `standings_max_ms`,
  `standings_samples` (move x spectator pairs), `standings_unseen` (moves no race message
  showed within 2 s of the round's end);
- where the delay goes: this client also LISTENs on the servers' NOTIFY channel and hears each
  race's change signal (sent by A after a racer's commit) when B does: `b_lag_p50_ms`,
  `b_lag_p99_ms` are signal -> the next race message of that race at each of its spectators
  (process B's part: reading the race, rendering, sending); the rest of the standings delay
  is A's (result -> signal sent); `race_signals` counts the signals heard;
- `race_messages` (received by spectators in the race measurements), `race_messages_per_action`
  (per racer action, over all spectators: 4 would be one message per action and spectator),
  `solo_race_messages` (received during the solo measurements: should be 0), `race_actions`,
  `solo_actions`;
- `race_errors`, `solo_errors` (acts answered with an error), `spectator_errors`,
  `warm_up_errors`, `players_without_move` (games where no legal move was found: their player
  sits those measurements out);
- `{race,solo}_{a,b,pg,client}_cpu_us_per_action` (server A, server B, PostgreSQL, this client),
  `{race,solo}_{a,b,pg,client,other}_cpu_share` (cores used; `other`: every other process on
  the shared machine), `{race,solo}_machine_busy` (of all cores, 0..1);
  `race_to_solo_cpu` (A + B + PostgreSQL CPU per solo action / per race action: what
  `race_to_solo` would be if the servers had the machine to themselves and were CPU-bound);
- `bench_seconds`: how long the whole run took.

With no arguments the run takes about two minutes on a 2-core machine. Environment:
BENCH_PLAYERS (400; a multiple of 4), BENCH_SPECTATORS (4), BENCH_SECONDS (10), BENCH_ROUNDS
(2), BENCH_PG_URL (see bench/load.py), BENCH_PROFILE (a new directory: when `py-spy` is
installed, sample A and B with it during the first race and the first solo measurement, write
the collapsed stacks there as `{race,solo}_{a,b}.txt`, and print each one's busiest functions at
the end; py-spy takes some CPU of its own, so such a run's figures are not the benchmark's).
"""

from __future__ import annotations

import asyncio
import bisect
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
from load import Server, cpu_seconds, fresh_pg, pct, start, stop

from server.store.db import CHANNEL  # the servers' NOTIFY channel (load puts ROOT on the path)

try:
    from orjson import loads
except ImportError:  # pragma: no cover - orjson is optional here
    from json import loads  # type: ignore[assignment]

PLAYERS = int(os.environ.get("BENCH_PLAYERS", "400"))
SEATS = 4
SPECTATORS = int(os.environ.get("BENCH_SPECTATORS", "4"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "10"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
PROFILE = os.environ.get("BENCH_PROFILE")
PORT_A, PORT_B = 18291, 18292
BASE_A, BASE_B = f"http://127.0.0.1:{PORT_A}", f"http://127.0.0.1:{PORT_B}"
ORDER = ("race", "solo")
DATABASE = "solitaire_bench_races"
SETUP_CONCURRENCY = 32
RANKS = "A23456789TJQK"


# ---------------------------------------------------------------------------------- CPU


def machine_ticks() -> tuple[int, int]:
    """(busy, total) clock ticks of all cores so far (/proc/stat)."""
    fields = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    total = sum(fields[:8])
    return total - idle, total


def postgres_seconds(database: str) -> float:
    """User + system CPU time so far of the PostgreSQL backends serving `database` (their
    process titles name it; the shared background processes, WAL writer included, are left
    out: other databases on this server use them too)."""
    tick = os.sysconf("SC_CLK_TCK")
    marker = f" {database} ".encode()
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if marker not in Path(entry.path, "cmdline").read_bytes():
                continue
            text = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        if text.split("(", 1)[1].startswith("postgres"):
            fields = text.rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total / tick


@dataclass
class CpuMark:
    a: float
    b: float
    pg: float
    client: float
    busy: int
    total: int
    wall: float

    @classmethod
    def now(cls, a: Server, b: Server) -> CpuMark:
        busy, total = machine_ticks()
        return cls(
            cpu_seconds(a),
            cpu_seconds(b),
            postgres_seconds(DATABASE),
            time.process_time(),
            busy,
            total,
            time.perf_counter(),
        )


# ---------------------------------------------------------------------------------- players


@dataclass
class Player:
    number: int
    id: str = ""
    auth: dict[str, str] = field(default_factory=dict)
    solo_game: str = ""
    race_id: str = ""
    race_game: str = ""
    move: dict[str, dict[str, str]] = field(default_factory=dict)
    """game id -> its found legal move (the action body)"""
    undo_next: dict[str, bool] = field(default_factory=dict)
    ws: aiohttp.ClientWebSocketResponse | None = None
    sent: int = 0


def card_rank_suit(text: str) -> tuple[int, str]:
    return RANKS.index(text[:-1] if text[:-1] != "10" else "T"), text[-1]


def candidates(game: dict[str, Any]) -> list[str]:
    """The game's face-up cards in the tableau, the likely movable ones first."""
    columns: list[list[str | None]] = game["tableau"]
    lasts = {column[-1] for column in columns if column and column[-1] is not None}
    likely, rest = [], []
    for column in columns:
        for i, card in enumerate(column):
            if card is None:
                continue
            rank, suit = card_rank_suit(card)
            successor = RANKS[rank + 1] + suit if rank < 12 else None
            at_end = i == len(column) - 1
            if (rank == 0 and at_end) or (successor in lasts and successor != column[-1]):
                likely.append(card)
            elif rank == 12 and i > 0:
                likely.append(card)  # a king not at the bottom: an empty column may take it
            else:
                rest.append(card)
    return likely + rest


async def find_move(
    session: aiohttp.ClientSession, player: Player, game_id: str
) -> dict[str, str] | None:
    """A legal move of the player's game, found through its own view of the game and the
    placement help (the deal is secret: no local mirror)."""
    async with session.get(f"{BASE_A}/api/v1/games/{game_id}", headers=player.auth) as r:
        if r.status != 200:
            raise RuntimeError(f"reading game {game_id}: {r.status} {await r.text()}")
        game = await r.json()
    for card in candidates(game):
        async with session.get(
            f"{BASE_A}/api/v1/games/{game_id}/targets", params={"card": card}, headers=player.auth
        ) as r:
            if r.status != 200:
                raise RuntimeError(f"targets of {card} in {game_id}: {r.status} {await r.text()}")
            targets = (await r.json())["targets"]
        if targets:
            return {"card": card, "to": targets[0]}
    return None


async def post(
    session: aiohttp.ClientSession, url: str, body: dict[str, Any], auth: dict[str, str]
) -> dict[str, Any]:
    async with session.post(url, json=body, headers=auth) as r:
        if r.status not in (200, 201):
            raise RuntimeError(f"POST {url}: {r.status} {await r.text()}")
        data: dict[str, Any] = await r.json()
        return data


def parse_iso(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


# ---------------------------------------------------------------------------------- spectators


@dataclass
class Spectator:
    race_id: str
    shown: dict[str, tuple[list[int], list[float]]] = field(default_factory=dict)
    """racer id -> (moves counts as they grew, when each first reached this spectator)"""
    arrivals: list[float] = field(default_factory=list)
    """when each `race` message arrived"""
    ready: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Counts:
    phase: str = "setup"
    messages: Counter[str] = field(default_factory=Counter)
    spectator_errors: int = 0
    problems: Counter[str] = field(default_factory=Counter)


async def spectate(
    session: aiohttp.ClientSession,
    spectator: Spectator,
    counts: Counts,
    limit: asyncio.Semaphore,
) -> None:
    shown = spectator.shown

    def note(race: dict[str, Any], at: float) -> None:
        for entry in race["standings"]:
            moves = entry["moves"]
            counts_, times = shown.setdefault(entry["player"]["id"], ([], []))
            if not counts_ or moves > counts_[-1]:
                counts_.append(moves)
                times.append(at)

    async with limit:  # the connections are staggered
        ws = await session.ws_connect(BASE_B + "/api/v1/live", max_msg_size=0)
    async with ws:
        await ws.send_str(json.dumps({"type": "watch_race", "id": 1, "race_id": spectator.race_id}))
        async for msg in ws:
            at = time.perf_counter()
            if msg.type != aiohttp.WSMsgType.TEXT:
                break
            data = loads(msg.data)
            kind = data["type"]
            if kind == "race":
                counts.messages[counts.phase] += 1
                spectator.arrivals.append(at)
                note(data["race"], at)
            elif kind == "watching_race":
                note(data["race"], at)
                spectator.ready.set()
            else:
                counts.spectator_errors += 1
                counts.problems[f"spectator: {str(data)[:200]}"] += 1
    # Only a closed socket gets here (the run cancels the spectators at its end).
    counts.spectator_errors += 1
    counts.problems[f"spectator socket closed by B: {ws.close_code}"] += 1
    spectator.ready.set()


async def listen(url: str, signals: dict[str, list[float]]) -> Any:
    """A connection LISTENing on the servers' channel: when each race's change signal (sent by
    process A after a racer's commit, heard by B at the same time) reached this client."""
    connection = await asyncpg.connect(url)

    def heard(_connection: Any, _pid: int, _channel: str, payload: str) -> None:
        if payload.startswith("race:"):
            signals.setdefault(payload[5:].split(" ", 1)[0], []).append(time.perf_counter())

    await connection.add_listener(CHANNEL, heard)
    return connection


# ---------------------------------------------------------------------------------- rounds


@dataclass
class Measurement:
    kind: str
    actions: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)
    moves: list[tuple[str, str, int, float]] = field(default_factory=list)
    """(race id, racer id, moves after the action, when its result arrived): race moves"""
    seconds: float = 0.0
    started: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)
    messages: int = 0


async def resync(session: aiohttp.ClientSession, player: Player, game_id: str) -> None:
    """After a refused action: whether the game's next action is the undo, read from the game."""
    async with session.get(f"{BASE_A}/api/v1/games/{game_id}", headers=player.auth) as r:
        if r.status == 200:
            player.undo_next[game_id] = (await r.json())["undo_available"] > 0


async def play(
    session: aiohttp.ClientSession,
    player: Player,
    game_id: str,
    deadline: float,
    m: Measurement,
    counts: Counts,
    count: int | None = None,
) -> None:
    """The player acts on the game until the deadline (or `count` actions), one at a time."""
    ws = player.ws
    assert ws is not None
    move = player.move.get(game_id)
    if move is None:
        return  # no legal move found in this game: the player sits this one out
    racing = m.kind == "race"
    sent = 0
    while time.perf_counter() < deadline and (count is None or sent < count):
        sent += 1
        undo = player.undo_next[game_id]
        player.sent += 1
        message = {
            "type": "act",
            "id": player.sent,
            "game_id": game_id,
            "action": {"action": "undo"} if undo else move,
            "idempotency_key": str(uuid.uuid4()),
        }
        t0 = time.perf_counter()
        await ws.send_str(json.dumps(message))
        try:
            msg = await ws.receive(timeout=60)
        except TimeoutError:
            m.errors += 1
            counts.problems["player: no answer within 60 s"] += 1
            return
        t1 = time.perf_counter()
        if msg.type != aiohttp.WSMsgType.TEXT:
            m.errors += 1
            counts.problems[f"player socket: {msg.type!r} {msg.data!r}"] += 1
            return
        reply = loads(msg.data)
        if reply.get("type") != "result":
            m.errors += 1
            counts.problems[f"{m.kind}: {str(reply.get('problem', reply))[:200]}"] += 1
            await resync(session, player, game_id)
            continue
        player.undo_next[game_id] = not undo
        m.latencies.append(t1 - t0)
        if racing and not undo:
            m.moves.append((player.race_id, player.id, reply["game"]["moves"], t1))
    return


def game_of(player: Player, kind: str) -> str:
    return player.race_game if kind == "race" else player.solo_game


async def connect_all(session: aiohttp.ClientSession, players: list[Player]) -> None:
    """A fresh WebSocket to A for each player, per measurement: one left idle between
    measurements would miss the server's heartbeat."""
    limit = asyncio.Semaphore(64)

    async def connect(p: Player) -> None:
        async with limit:
            p.ws = await session.ws_connect(BASE_A + "/api/v1/live", headers=p.auth)

    await asyncio.gather(*(connect(p) for p in players))


async def close_all(players: list[Player]) -> None:
    for p in players:
        if p.ws is not None:
            await p.ws.close()
            p.ws = None


async def warm_up(session: aiohttp.ClientSession, players: list[Player], counts: Counts) -> int:
    """The move and its undo on each player's race game and solo game before the rounds, so
    that every measurement finds the games in process A's cache (a race game is not put there
    when the race starts, a solo game is when it is dealt). Returns the errors."""
    errors = 0
    counts.phase = "warm-up"
    for kind in ORDER:
        m = Measurement("warm-up")
        acting = [p for p in players if game_of(p, kind) in p.move]
        await connect_all(session, acting)
        await asyncio.gather(
            *(play(session, p, game_of(p, kind), math.inf, m, counts, 2) for p in acting)
        )
        await close_all(acting)
        errors += m.errors
    counts.phase = "idle"
    return errors


async def measure(
    session: aiohttp.ClientSession,
    kind: str,
    players: list[Player],
    counts: Counts,
    a: Server,
    b: Server,
) -> Measurement:
    m = Measurement(kind)
    acting = [p for p in players if game_of(p, kind) in p.move]
    await connect_all(session, acting)
    counts.phase = kind
    before_messages = counts.messages[kind]
    profilers = start_profilers(kind, a, b)
    mark = CpuMark.now(a, b)
    m.started = mark.wall
    deadline = time.perf_counter() + SECONDS
    await asyncio.gather(*(play(session, p, game_of(p, kind), deadline, m, counts) for p in acting))
    end = CpuMark.now(a, b)
    await close_all(acting)
    for profiler in profilers:
        try:
            await asyncio.to_thread(profiler.wait, 30)
        except subprocess.TimeoutExpired:
            profiler.kill()
    m.seconds = end.wall - mark.wall
    m.actions = len(m.latencies)
    m.latencies.sort()
    n = max(1, m.actions)
    cores = os.cpu_count() or 1
    m.cpu = {
        "a_cpu_us_per_action": (end.a - mark.a) / n * 1e6,
        "b_cpu_us_per_action": (end.b - mark.b) / n * 1e6,
        "pg_cpu_us_per_action": (end.pg - mark.pg) / n * 1e6,
        "client_cpu_us_per_action": (end.client - mark.client) / n * 1e6,
        "a_cpu_share": (end.a - mark.a) / m.seconds,
        "b_cpu_share": (end.b - mark.b) / m.seconds,
        "pg_cpu_share": (end.pg - mark.pg) / m.seconds,
        "client_cpu_share": (end.client - mark.client) / m.seconds,
    }
    busy = (end.busy - mark.busy) / max(1, end.total - mark.total)
    m.cpu["machine_busy"] = busy
    ours = m.cpu["a_cpu_share"] + m.cpu["b_cpu_share"] + m.cpu["pg_cpu_share"]
    ours += m.cpu["client_cpu_share"]
    m.cpu["other_cpu_share"] = max(0.0, busy * cores - ours)
    await asyncio.sleep(2)  # the last standings reach the spectators
    counts.phase = "idle"
    m.messages = counts.messages[kind] - before_messages
    return m


def delays(m: Measurement, spectators: dict[str, list[Spectator]]) -> tuple[list[float], int]:
    """Move result -> first race message at a spectator showing it, for every spectator of the
    race; and how many (move, spectator) pairs were never shown."""
    out: list[float] = []
    unseen = 0
    for race_id, racer_id, moves, at in m.moves:
        for spectator in spectators[race_id]:
            counts_, times = spectator.shown.get(racer_id, ([], []))
            i = bisect.bisect_left(counts_, moves)
            if i == len(counts_):
                unseen += 1
            else:
                out.append(times[i] - at)
    out.sort()
    return out, unseen


def b_lags(
    m: Measurement, spectators: dict[str, list[Spectator]], signals: dict[str, list[float]]
) -> list[float]:
    """B's part of the delay: a race's change signal heard by this client (B hears it at the
    same moment) -> the next race message of that race at each of its spectators."""
    out: list[float] = []
    end = m.started + m.seconds
    for race_id, heard in signals.items():
        lo, hi = bisect.bisect_left(heard, m.started), bisect.bisect_right(heard, end)
        for at in heard[lo:hi]:
            for spectator in spectators[race_id]:
                i = bisect.bisect_left(spectator.arrivals, at)
                if i < len(spectator.arrivals):
                    out.append(spectator.arrivals[i] - at)
    out.sort()
    return out


def profile_summary(path: Path, count: int = 20) -> list[str]:
    """A process's busiest functions from py-spy's collapsed stacks: own samples (the frame on
    top) and inclusive samples (the frame anywhere in the stack), in % of B's active samples."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in Path(path).read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        frames = [f.strip() for f in stack.split(";") if f.strip()]
        samples = int(n)
        total += samples
        if frames:
            own[frames[-1]] += samples
        for frame in set(frames):
            inclusive[frame] += samples
    what = path.stem.replace("_", " measurement, process ").replace(" a", " A").replace(" b", " B")
    lines = [f"profile of the {what}: {total} active samples"]
    for title, counter in (("own", own), ("inclusive", inclusive)):
        lines.append(f"{what}: {title} samples")
        lines += [f"  {n / total:6.1%}  {frame}" for frame, n in counter.most_common(count)]
    return lines


def start_profilers(kind: str, a: Server, b: Server) -> list[subprocess.Popen[bytes]]:
    """py-spy on A and B during the first measurement of each kind (BENCH_PROFILE)."""
    if not PROFILE or shutil.which("py-spy") is None:
        return []
    out = []
    for name, server in (("a", a), ("b", b)):
        path = Path(PROFILE, f"{kind}_{name}.txt")
        if path.exists():
            continue
        options = f"--duration {int(SECONDS)} --rate 100 --nonblocking --format raw".split()
        command = ["py-spy", "record", "--pid", str(server.pid), *options, "--output", str(path)]
        out.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return out


# ---------------------------------------------------------------------------------- setup


async def set_up(session: aiohttp.ClientSession) -> tuple[list[Player], dict[str, list[Player]]]:
    """Players, their solo games, the races (full, so counting down), the races' games."""
    limit = asyncio.Semaphore(SETUP_CONCURRENCY)
    players = [Player(n) for n in range(PLAYERS)]

    async def sign_up(p: Player) -> None:
        async with limit:
            data = await post(session, f"{BASE_A}/api/v1/players", {"name": f"racer{p.number}"}, {})
            p.auth = {"Authorization": f"Bearer {data['token']}"}
            p.id = data["id"]
            game = await post(session, f"{BASE_A}/api/v1/games", {}, p.auth)
            p.solo_game = game["id"]

    await asyncio.gather(*(sign_up(p) for p in players))
    races: dict[str, list[Player]] = {}
    creators = players[::SEATS]

    async def create(p: Player) -> None:
        async with limit:
            race = await post(
                session,
                f"{BASE_A}/api/v1/races",
                {"seats": SEATS, "winnable": False, "time_limit_s": 600},
                p.auth,
            )
        races[race["id"]] = players[p.number : p.number + SEATS]

    await asyncio.gather(*(create(p) for p in creators))
    last: list[dict[str, Any]] = []

    async def join(race_id: str, p: Player) -> None:
        async with limit:
            race = await post(session, f"{BASE_A}/api/v1/races/{race_id}/join", {}, p.auth)
        if race["status"] != "open":
            last.append(race)

    await asyncio.gather(
        *(join(race_id, p) for race_id, seated in races.items() for p in seated[1:])
    )
    if len(last) != len(races):
        raise RuntimeError(f"{len(races) - len(last)} races did not start when full")
    for race in last:
        for p in races[race["id"]]:
            p.race_id = race["id"]
            p.race_game = race["games"][p.id]
    return players, races


# ---------------------------------------------------------------------------------- main


def raise_file_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 4 * (PLAYERS + PLAYERS * SPECTATORS // SEATS) + 1024
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))


async def main() -> None:
    began = time.perf_counter()
    if PLAYERS % SEATS:
        raise SystemExit(f"BENCH_PLAYERS must be a multiple of {SEATS}")
    raise_file_limit()  # the servers inherit it
    if PROFILE:
        Path(PROFILE).mkdir(parents=True, exist_ok=False)
    url = await fresh_pg(DATABASE)
    args = ["-m", "server", "--database-url", url]
    a = await start(args, PORT_A)
    b = await start(args, PORT_B)
    signals: dict[str, list[float]] = {}
    listener = await listen(url, signals)
    counts = Counts()
    figures: dict[str, list[float]] = {}
    totals: Counter[str] = Counter()
    tasks: list[asyncio.Task[None]] = []

    def add(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)

    try:
        connector = aiohttp.TCPConnector(limit=0)
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=30)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            players, races = await set_up(session)
            first = races[next(iter(races))][0]
            async with session.get(f"{BASE_A}/api/v1/races/{first.race_id}") as r:
                race = await r.json()
            # When the countdown ends, by the server's clock; then the tick (1 s) runs it.
            starts_in = parse_iso(race["starts_at"]) - parse_iso(race["now"])
            start_at = time.perf_counter() + starts_in + 2.0
            print(
                f"# {len(players)} players, {len(races)} races set up in "
                f"{time.perf_counter() - began:.1f} s; countdown {starts_in:.1f} s",
                flush=True,
            )

            spectators: dict[str, list[Spectator]] = {
                race_id: [Spectator(race_id) for _ in range(SPECTATORS)] for race_id in races
            }
            connect_limit = asyncio.Semaphore(64)

            for group in spectators.values():
                for s in group:
                    tasks.append(asyncio.create_task(spectate(session, s, counts, connect_limit)))

            async def ready(p: Player) -> None:
                async with connect_limit:
                    for game_id in (p.solo_game, p.race_game):
                        move = await find_move(session, p, game_id)
                        if move is not None:
                            p.move[game_id] = move
                            p.undo_next[game_id] = False

            await asyncio.gather(*(ready(p) for p in players))
            all_spectators = [s for group in spectators.values() for s in group]
            await asyncio.wait_for(asyncio.gather(*(s.ready.wait() for s in all_spectators)), 120)
            idle = {
                "race": sum(p.race_game not in p.move for p in players),
                "solo": sum(p.solo_game not in p.move for p in players),
            }
            print(
                f"# connected {len(players)} players to A, {len(all_spectators)} spectators to B "
                f"at {time.perf_counter() - began:.1f} s; players without a legal move: {idle}",
                flush=True,
            )
            await asyncio.sleep(max(0.0, start_at - time.perf_counter()))
            warm_errors = await warm_up(session, players, counts)
            await asyncio.sleep(1)

            samples: list[float] = []
            for round_ in range(ROUNDS):
                for kind in ORDER if round_ % 2 == 0 else ORDER[::-1]:
                    m = await measure(session, kind, players, counts, a, b)
                    rate = m.actions / m.seconds
                    add(f"{kind}_actions_per_s", rate)
                    add(f"{kind}_p50_ms", pct(m.latencies, 0.5))
                    add(f"{kind}_p99_ms", pct(m.latencies, 0.99))
                    for name, value in m.cpu.items():
                        add(f"{kind}_{name}", value)
                    totals[f"{kind}_actions"] += m.actions
                    totals[f"{kind}_errors"] += m.errors
                    extra = ""
                    if kind == "race":
                        found, unseen = delays(m, spectators)
                        samples += found
                        add("standings_p50_ms", pct(found, 0.5))
                        add("standings_p99_ms", pct(found, 0.99))
                        lags = b_lags(m, spectators, signals)
                        add("b_lag_p50_ms", pct(lags, 0.5))
                        add("b_lag_p99_ms", pct(lags, 0.99))
                        totals["race_signals"] += sum(
                            bisect.bisect_right(t, m.started + m.seconds)
                            - bisect.bisect_left(t, m.started)
                            for t in signals.values()
                        )
                        totals["standings_samples"] += len(found)
                        totals["standings_unseen"] += unseen
                        totals["race_messages"] += m.messages
                        extra = (
                            f", standings p50 {pct(found, 0.5):.0f} ms p99 "
                            f"{pct(found, 0.99):.0f} ms ({len(found)} samples, {unseen} unseen), "
                            f"signal to spectator p50 {pct(lags, 0.5):.0f} ms p99 "
                            f"{pct(lags, 0.99):.0f} ms, {m.messages} race messages"
                        )
                    else:
                        totals["solo_race_messages"] += m.messages
                    print(
                        f"# round {round_ + 1}: {kind} {rate:.0f} actions/s, p99 "
                        f"{pct(m.latencies, 0.99):.0f} ms, {m.errors} errors{extra}; CPU us/action"
                        f" A {m.cpu['a_cpu_us_per_action']:.0f}, B "
                        f"{m.cpu['b_cpu_us_per_action']:.0f}, PostgreSQL "
                        f"{m.cpu['pg_cpu_us_per_action']:.0f}, client "
                        f"{m.cpu['client_cpu_us_per_action']:.0f}; cores A "
                        f"{m.cpu['a_cpu_share']:.2f} B {m.cpu['b_cpu_share']:.2f} PostgreSQL "
                        f"{m.cpu['pg_cpu_share']:.2f} client {m.cpu['client_cpu_share']:.2f} "
                        f"other {m.cpu['other_cpu_share']:.2f}, machine busy "
                        f"{m.cpu['machine_busy']:.0%}",
                        flush=True,
                    )
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        await listener.close()
        stop(a)
        stop(b)
    median = {name: statistics.median(values) for name, values in figures.items()}
    out: dict[str, float | int] = {
        "race_actions_per_s": median["race_actions_per_s"],
        "solo_actions_per_s": median["solo_actions_per_s"],
        "race_to_solo": median["race_actions_per_s"] / median["solo_actions_per_s"],
    }
    for kind in ORDER:
        out[f"{kind}_p50_ms"] = median[f"{kind}_p50_ms"]
        out[f"{kind}_p99_ms"] = median[f"{kind}_p99_ms"]
    samples.sort()
    out |= {
        "standings_p50_ms": median["standings_p50_ms"],
        "standings_p99_ms": median["standings_p99_ms"],
        "standings_max_ms": samples[-1] * 1000 if samples else float("nan"),
        "standings_samples": totals["standings_samples"],
        "standings_unseen": totals["standings_unseen"],
        "b_lag_p50_ms": median["b_lag_p50_ms"],
        "b_lag_p99_ms": median["b_lag_p99_ms"],
        "race_signals": totals["race_signals"],
        "race_messages": totals["race_messages"],
        "race_messages_per_action": totals["race_messages"] / max(1, totals["race_actions"]),
        "solo_race_messages": totals["solo_race_messages"],
        "race_actions": totals["race_actions"],
        "solo_actions": totals["solo_actions"],
        "race_errors": totals["race_errors"],
        "solo_errors": totals["solo_errors"],
        "spectator_errors": counts.spectator_errors,
        "warm_up_errors": warm_errors,
        "players_without_move": idle["race"] + idle["solo"],
    }
    for kind in ORDER:
        for part in ("a", "b", "pg", "client"):
            out[f"{kind}_{part}_cpu_us_per_action"] = median[f"{kind}_{part}_cpu_us_per_action"]
        for part in ("a", "b", "pg", "client", "other"):
            out[f"{kind}_{part}_cpu_share"] = median[f"{kind}_{part}_cpu_share"]
        out[f"{kind}_machine_busy"] = median[f"{kind}_machine_busy"]
    servers = ("a", "b", "pg")
    out["race_to_solo_cpu"] = sum(out[f"solo_{p}_cpu_us_per_action"] for p in servers) / sum(
        out[f"race_{p}_cpu_us_per_action"] for p in servers
    )
    out["bench_seconds"] = time.perf_counter() - began
    if PROFILE:
        for path in sorted(Path(PROFILE).glob("*_[ab].txt")):
            for line in profile_summary(path):
                print(f"# {line}")
    for problem, n in counts.problems.most_common(10):
        print(f"# {n} x {problem}")
    print(f"players={PLAYERS}")
    print(f"races={PLAYERS // SEATS}")
    print(f"spectators={PLAYERS // SEATS * SPECTATORS}")
    print(f"rounds={ROUNDS}")
    print(f"seconds_per_measurement={SECONDS:g}")
    for name, value in out.items():
        print(f"{name}={value:.2f}" if isinstance(value, float) else f"{name}={value}")


if __name__ == "__main__":
    try:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    except ImportError:  # pragma: no cover - uvloop is optional
        pass
    asyncio.run(main())
