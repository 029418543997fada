"""What the database holds per game, move, idempotency record, player and session, measured.

One server process (`python -m server`, RATE_LIMIT=0, bench/load.py's `start`) on a fresh
PostgreSQL database `solitaire_bench_storage` on $BENCH_PG_URL's server (created, then dropped
at the end). BENCH_PLAYERS (100) players sign up (a guest each: one player row and one
session) and play BENCH_GAMES (4) whole games each, at most BENCH_CONCURRENCY (32) at a time,
in two waves of half the games: a random deal of its own code (classic and relaxed in turn, so
that the player's engine follows it), random legal moves (a foundation move when there is one
seven times in ten, an undo now and then) each with a fresh `Idempotency-Key` (uuid4, as the
web client sends), until the game is won, has no legal move or reaches BENCH_MOVES (250)
actions, when it is given up. Then each player deals a server-dealt game (its seed pairs) and
the day's daily deal and gives both up, and the players race in pairs (two seats; both racers
give up at once, which ends the race: its seats, ratings and notices).

Sizes come from `pg_total_relation_size` (heap, TOAST and indexes) and `pg_relation_size` per
index, at three moments: after each wave of play (the growth between the two, divided by the
rows it added, is a row's cost "as played": dead row versions of the games' updates and the
pages' free space included) and after `VACUUM FULL` with the server stopped ("compacted":
bytes / rows; a table of a few pages reads high, its pages' fixed cost over few rows). The WAL
of the second wave is read back with pg_walinspect (kept by a temporary replication slot) and
only this database's records count, with the commit records of their transactions (the
server's WAL is shared with other databases on this machine); CPU per action is the server
process's and this database's PostgreSQL backends' (from /proc, as bench/races.py measures).

Printed last as `name=value` lines: `games`, `actions`, `moves_per_game`, `won_games`;
`bytes_per_{game,move,idempotency_record}_played` and `_compacted`;
`bytes_per_{player,session,seed_pair,player_stats,notice,race,race_seat,rating}` (compacted);
`bytes_per_game_kept` (a solo game's row and its moves, compacted) and
`bytes_per_game_first_day` (with its actions' idempotency records, kept 24 h);
`games_hot_update_share` (the games' updates that wrote no index entry);
`game_row_bytes_played`, `game_row_bytes_other` (a games row's own bytes, `pg_column_size`:
the waves' games, and the server-dealt, daily and race games); `table_<t>_rows`,
`table_<t>_bytes`, `index_<i>_bytes` (compacted); `wal_bytes_per_action`,
`wal_fpi_share` (full-page images' part of it), `wal_cluster_bytes_per_action` (every database
of the server, an upper bound); `server_cpu_us_per_action`, `pg_cpu_us_per_action`,
`actions_per_s` (this client shares the cores); then a day at BENCH_DAY_GAMES (10,000) games:
`day_games_rows`, `day_moves_rows`, `day_idempotency_rows` (and their `_bytes`, compacted;
idempotency records are kept 24 h, so a day's records are also the table's steady size),
`day_kept_bytes` (games and moves: what stays), `day_wal_bytes`; `bench_seconds`.

With no arguments the run takes about two minutes on a 2-core machine. Environment:
BENCH_PLAYERS, BENCH_GAMES, BENCH_MOVES, BENCH_CONCURRENCY, BENCH_DAY_GAMES, BENCH_PG_URL (see
bench/load.py).
"""

from __future__ import annotations

import asyncio
import os
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import asyncpg
from load import PG_URL, Server, cpu_seconds, fresh_pg, start, stop
from races import postgres_seconds

from server.engine import DealCode, Game, Rule, Status  # (load puts ROOT on the path)

PLAYERS = int(os.environ.get("BENCH_PLAYERS", "100"))
GAMES = int(os.environ.get("BENCH_GAMES", "4"))
MOVES = int(os.environ.get("BENCH_MOVES", "250"))
CONCURRENCY = int(os.environ.get("BENCH_CONCURRENCY", "32"))
DAY_GAMES = int(os.environ.get("BENCH_DAY_GAMES", "10000"))
DATABASE = "solitaire_bench_storage"
PORT = 18393
BASE = f"http://127.0.0.1:{PORT}"


@dataclass
class Player:
    number: int
    id: str = ""
    auth: dict[str, str] = field(default_factory=dict)


@dataclass
class Counts:
    games: int = 0
    actions: int = 0
    won: int = 0
    errors: int = 0


async def call(
    session: aiohttp.ClientSession, method: str, path: str, player: Player, body: Any = None
) -> Any:
    headers = dict(player.auth)
    async with session.request(method, BASE + path, json=body, headers=headers) as r:
        if r.status >= 300:
            raise RuntimeError(f"{method} {path}: {r.status} {await r.text()}")
        return await r.json()


def next_action(game: Game, rng: random.Random) -> dict[str, Any] | None:
    """A random legal action (applied to `game`), a foundation move most often; None: none."""
    if game.history and rng.random() < 0.03:
        game.undo()
        return {"action": "undo"}
    moves = game.legal_moves()
    if not moves:
        return None
    home = [m for m in moves if m.to_foundation]
    move = rng.choice(home) if home and rng.random() < 0.7 else rng.choice(moves)
    game.apply(move.card, move.to)
    card, place = str(move).split("-")
    return {"card": card, "to": place}


async def play_game(
    session: aiohttp.ClientSession, player: Player, rng: random.Random, rule: Rule, c: Counts
) -> None:
    code = DealCode.random(rule, rng)
    game_id = (await call(session, "POST", "/api/v1/games", player, {"code": str(code)}))["id"]
    game = Game.deal(code)
    for _ in range(MOVES):
        body = next_action(game, rng)
        if body is None:
            break
        headers = {**player.auth, "Idempotency-Key": str(uuid.uuid4())}
        async with session.post(
            f"{BASE}/api/v1/games/{game_id}/moves", json=body, headers=headers
        ) as r:
            await r.read()
            c.actions += 1
            c.errors += r.status != 200
        if game.status is not Status.ACTIVE:
            break
    if game.status is Status.ACTIVE:
        await call(session, "POST", f"/api/v1/games/{game_id}/abandon", player)
    c.won += game.status is Status.WON
    c.games += 1


async def wave(
    session: aiohttp.ClientSession, players: list[Player], games: int, seed: int, c: Counts
) -> None:
    limit = asyncio.Semaphore(CONCURRENCY)

    async def run(p: Player) -> None:
        rng = random.Random(seed * 100_003 + p.number)
        async with limit:
            for n in range(games):
                rule = Rule.CLASSIC if (p.number + n) % 2 == 0 else Rule.RELAXED
                await play_game(session, p, rng, rule, c)

    await asyncio.gather(*(run(p) for p in players))


async def extras(session: aiohttp.ClientSession, players: list[Player]) -> int:
    """Each player's server-dealt game and daily game, given up; races in pairs, given up.
    The races that ended."""
    limit = asyncio.Semaphore(CONCURRENCY)

    async def solo(p: Player) -> None:
        async with limit:
            for body in ({}, {"daily": True}):
                game = await call(session, "POST", "/api/v1/games", p, body)
                await call(session, "POST", f"/api/v1/games/{game['id']}/abandon", p)

    await asyncio.gather(*(solo(p) for p in players))

    async def race(a: Player, b: Player) -> bool:
        async with limit:
            body = {"seats": 2, "winnable": False, "time_limit_s": 600}
            created = await call(session, "POST", "/api/v1/races", a, body)
            joined = await call(session, "POST", f"/api/v1/races/{created['id']}/join", b)
            for p in (a, b):
                game_id = joined["games"][p.id]
                await call(session, "POST", f"/api/v1/games/{game_id}/abandon", p)
        for _ in range(100):
            read = await call(session, "GET", f"/api/v1/races/{created['id']}", a)
            if read["status"] == "finished":
                return True
            await asyncio.sleep(0.2)
        return False

    pairs = list(zip(players[::2], players[1::2], strict=False))
    return sum(await asyncio.gather(*(race(a, b) for a, b in pairs)))


SIZES = """
SELECT c.relname, c.relkind::text, pg_total_relation_size(c.oid), pg_relation_size(c.oid),
       coalesce(i.indrelid::regclass::text, '')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_index i ON i.indexrelid = c.oid
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i') AND c.relname <> 'alembic_version'
      AND coalesce(i.indrelid::regclass::text, '') <> 'alembic_version'
"""


@dataclass
class Snapshot:
    rows: dict[str, int]
    total: dict[str, int]
    """Per table: heap, TOAST and indexes."""
    indexes: dict[str, int]


async def snapshot(db: asyncpg.Connection) -> Snapshot:
    rows: dict[str, int] = {}
    total: dict[str, int] = {}
    indexes: dict[str, int] = {}
    for name, kind, whole, own, _table in await db.fetch(SIZES):
        if kind == "r":
            total[name] = whole
            rows[name] = await db.fetchval(f'SELECT count(*) FROM "{name}"')
        else:
            indexes[name] = own
    return Snapshot(rows, total, indexes)


WAL = """
WITH r AS (SELECT xid::text AS xid, record_length, fpi_length, block_ref
           FROM pg_get_wal_records_info($1::text::pg_lsn, $2::text::pg_lsn)),
mine AS (SELECT * FROM r WHERE block_ref LIKE $3),
xids AS (SELECT DISTINCT xid FROM mine WHERE xid <> '0'),
commits AS (SELECT r.* FROM r JOIN xids USING (xid)
            WHERE r.block_ref IS NULL OR r.block_ref NOT LIKE $3)
SELECT (SELECT coalesce(sum(record_length), 0) FROM mine)
     + (SELECT coalesce(sum(record_length), 0) FROM commits),
       (SELECT coalesce(sum(fpi_length), 0) FROM mine)
"""


async def wal_of(db: asyncpg.Connection, start_lsn: str, end_lsn: str, dboid: int) -> list[int]:
    row = await db.fetchrow(WAL, start_lsn, end_lsn, f"% rel %/{dboid}/%")
    assert row is not None
    return [int(row[0]), int(row[1])]


def per_row(after: Snapshot, before: Snapshot, table: str) -> float:
    added = after.rows[table] - before.rows[table]
    return (after.total[table] - before.total[table]) / added if added else float("nan")


def compact(s: Snapshot, table: str) -> float:
    return s.total[table] / s.rows[table] if s.rows[table] else float("nan")


async def main() -> None:
    began = time.perf_counter()
    url = await fresh_pg(DATABASE)
    admin = await asyncpg.connect(PG_URL)
    db = await asyncpg.connect(url)
    server: Server | None = None
    figures: dict[str, float] = {}
    try:
        await db.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
        dboid = await db.fetchval("SELECT oid FROM pg_database WHERE datname = $1", DATABASE)
        # A temporary slot keeps the WAL of the run until it is read (dropped with `admin`).
        await admin.execute(
            "SELECT pg_create_physical_replication_slot($1, true, true)",
            f"bench_storage_{os.getpid()}",
        )
        server = await start(["-m", "server", "--database-url", url], PORT)
        counts = Counts()
        players = [Player(n) for n in range(PLAYERS)]
        connector = aiohttp.TCPConnector(limit=CONCURRENCY * 2)
        async with aiohttp.ClientSession(connector=connector) as session:
            for p in players:
                data = await call(session, "POST", "/api/v1/players", p, {"name": f"st{p.number}"})
                p.id, p.auth = data["id"], {"Authorization": f"Bearer {data['token']}"}
            first = GAMES // 2
            await wave(session, players, first, 1, counts)
            print(f"# wave 1: {counts.games} games, {counts.actions} actions", flush=True)
            mid = await snapshot(db)
            actions_before = counts.actions
            lsn_before = await admin.fetchval("SELECT pg_current_wal_lsn()::text")
            cpu_server, cpu_pg = cpu_seconds(server), postgres_seconds(DATABASE)
            t0 = time.perf_counter()
            await wave(session, players, GAMES - first, 2, counts)
            seconds = time.perf_counter() - t0
            cpu_server = cpu_seconds(server) - cpu_server
            cpu_pg = postgres_seconds(DATABASE) - cpu_pg
            lsn_after = await admin.fetchval("SELECT pg_current_wal_lsn()::text")
            end = await snapshot(db)
            wave_actions = counts.actions - actions_before
            print(f"# wave 2: {counts.games} games, {counts.actions} actions", flush=True)
            ended = await extras(session, players)
            print(f"# extras: {ended} races finished of {PLAYERS // 2}", flush=True)
        stop(server)
        server = None
        wal, fpi = await wal_of(db, lsn_before, lsn_after, dboid)
        cluster = await admin.fetchval(
            "SELECT $2::text::pg_lsn - $1::text::pg_lsn", lsn_before, lsn_after
        )
        updates, hot_updates = await db.fetchrow(
            "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'games'"
        )
        hot = hot_updates / updates if updates else 0.0
        await db.execute("VACUUM FULL ANALYZE")
        # A row's own bytes (no page, index or line pointer): the waves' games against the rest.
        played_row, other_row = await db.fetchrow(
            "SELECT avg(pg_column_size(g.*)) FILTER (WHERE chosen),"
            " avg(pg_column_size(g.*)) FILTER (WHERE NOT chosen) FROM games g"
        )
        done = await snapshot(db)

        figures["games"] = counts.games
        figures["actions"] = counts.actions
        figures["errors"] = counts.errors
        figures["moves_per_game"] = counts.actions / counts.games
        figures["won_games"] = counts.won
        figures["races_finished"] = ended
        for name, table in (
            ("game", "games"),
            ("move", "moves"),
            ("idempotency_record", "idempotency_keys"),
        ):
            figures[f"bytes_per_{name}_played"] = per_row(end, mid, table)
            figures[f"bytes_per_{name}_compacted"] = compact(done, table)
        for name, table in (
            ("player", "players"),
            ("session", "sessions"),
            ("seed_pair", "seed_pairs"),
            ("player_stats", "player_stats"),
            ("notice", "notices"),
            ("race", "races"),
            ("race_seat", "race_players"),
            ("rating", "ratings"),
        ):
            figures[f"bytes_per_{name}"] = compact(done, table)
        # A solo game of the waves: its row and its moves (kept), and for its first 24 hours the
        # idempotency records of its actions (every action keyed) besides.
        per_game_actions = counts.actions / counts.games
        figures["bytes_per_game_kept"] = (
            figures["bytes_per_game_compacted"]
            + per_game_actions * figures["bytes_per_move_compacted"]
        )
        figures["bytes_per_game_first_day"] = (
            figures["bytes_per_game_kept"]
            + per_game_actions * figures["bytes_per_idempotency_record_compacted"]
        )
        figures["games_hot_update_share"] = hot
        figures["game_row_bytes_played"] = float(played_row)
        figures["game_row_bytes_other"] = float(other_row)
        for table in sorted(done.total):
            figures[f"table_{table}_rows"] = done.rows[table]
            figures[f"table_{table}_bytes"] = done.total[table]
        for index in sorted(done.indexes):
            figures[f"index_{index}_bytes"] = done.indexes[index]
        figures["wal_bytes_per_action"] = wal / wave_actions
        figures["wal_fpi_share"] = fpi / wal if wal else 0.0
        figures["wal_cluster_bytes_per_action"] = float(cluster) / wave_actions
        figures["server_cpu_us_per_action"] = cpu_server / wave_actions * 1e6
        figures["pg_cpu_us_per_action"] = cpu_pg / wave_actions * 1e6
        figures["actions_per_s"] = wave_actions / seconds
        day_actions = DAY_GAMES * per_game_actions
        figures["day_games_rows"] = DAY_GAMES
        figures["day_games_bytes"] = DAY_GAMES * figures["bytes_per_game_compacted"]
        figures["day_moves_rows"] = day_actions
        figures["day_moves_bytes"] = day_actions * figures["bytes_per_move_compacted"]
        figures["day_idempotency_rows"] = day_actions
        figures["day_idempotency_bytes"] = (
            day_actions * figures["bytes_per_idempotency_record_compacted"]
        )
        figures["day_kept_bytes"] = DAY_GAMES * figures["bytes_per_game_kept"]
        figures["day_wal_bytes"] = day_actions * figures["wal_bytes_per_action"]
    finally:
        if server is not None:
            stop(server)
        await db.close()
        await admin.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
        await admin.close()
    figures["bench_seconds"] = time.perf_counter() - began
    for name, value in figures.items():
        text = f"{value:.0f}" if abs(value) >= 100 or float(value).is_integer() else f"{value:.3f}"
        print(f"{name}={text}")


if __name__ == "__main__":
    asyncio.run(main())
