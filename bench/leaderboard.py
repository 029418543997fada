"""Leaderboards at size: 1,000,000 finished games of 10,000 players in PostgreSQL.

Fills a fresh database (`solitaire_bench_boards` on $BENCH_PG_URL's server) by bulk COPY, not
through the API, then starts the server on it and times over HTTP: a top-100 page of each
board, a deep page by cursor (rank 10,001-10,100; the server counts the rank of its first
entry), one player's statistics (a player with 1,000 games and a typical one) and the NDJSON
export of 1,000 games. Prints the query plans of the board (and of the deep page's rank count),
statistics and export queries and counts sequential scans on `games` in them. The games are
written at migration 0008 and the last migration then fills the statistics from them
(`stats_backfill_s`). Ends with `name=value` figures.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import time
import uuid
from typing import Any

import aiohttp
import asyncpg
from load import fresh_pg, start, stop
from sqlalchemy.dialects import postgresql

from server.engine import DealCode, Game, Rule
from server.engine.snapshot import dumps
from server.store import leaderboards as board_rows
from server.store.db import migrate

GAMES = int(os.environ.get("BENCH_GAMES", "1000000"))
PLAYERS = int(os.environ.get("BENCH_PLAYERS", "10000"))
HEAVY = 1000  # games of player 0, who is exported
REPEAT = 30
PORT = 18381
DAY = 86_400_000
DEAL = "RU2-C-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAB"  # a per-deal board (its plan; no game has it)


def dsn(url: str) -> str:
    return url


async def fill(url: str) -> tuple[str, str]:
    rng = random.Random(2026)
    now = int(time.time() * 1000)
    players = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(PLAYERS)]
    codes = [
        DealCode(Rule.CLASSIC if i % 5 else Rule.RELAXED, rng.getrandbits(128), 2)
        for i in range(1000)
    ]
    start_snaps = {str(c): dumps(Game.deal(c)) for c in codes}
    connection = await asyncpg.connect(url)
    try:
        await connection.copy_records_to_table(
            "players",
            records=[
                (
                    p,
                    f"player{i}",
                    f"player{i}",  # the name's key (server.services.names.name_key): unique
                    now - 400 * DAY,
                    True,
                    True,
                    True,
                    False,
                )
                for i, p in enumerate(players)
            ],
            columns=[
                "id",
                "name",
                "name_key",
                "created_ms",
                "double_click",
                "placement_help",
                "interactive_rules",
                "auto_placement",
            ],
        )
        columns = [
            "id",
            "player_id",
            "code",
            "rule",
            "chosen",
            "status",
            "score",
            "moves",
            "version",
            "snapshot",
            "created_ms",
            "started_ms",
            "finished_ms",
            "elapsed_ms",
            "assisted",
            "practice",
            "secret_deal",
            "ranked_score",
        ]
        heavy_ids: list[str] = []
        batch: list[tuple[Any, ...]] = []
        for n in range(GAMES):
            player = players[0] if n < HEAVY else players[rng.randrange(1, PLAYERS)]
            code = codes[rng.randrange(len(codes))]
            won = rng.random() < 0.3
            finished = now - rng.randrange(365 * DAY)
            created = finished - rng.randrange(60_000, 3_600_000)
            moves = rng.randrange(80, 400) if won else rng.randrange(0, 300)
            elapsed = finished - created
            score = (625 + 10 * rng.randrange(0, 3)) if won else rng.randrange(0, 60) * 5
            text = str(code)
            snapshot = (
                f"S1|{text}|won|{score}|{moves}|13.13.13.13|0:/0:/0:/0:/0:/0:/0:|"
                if won
                else start_snaps[text].replace("|active|", "|abandoned|", 1)
            )
            game_id = str(uuid.UUID(int=rng.getrandbits(128)))
            chosen = rng.random() < 0.1
            if n < HEAVY:
                heavy_ids.append(game_id)
            batch.append(
                (
                    game_id,
                    player,
                    text,
                    code.rule.value,
                    chosen,
                    "won" if won else "abandoned",
                    score,
                    moves,
                    moves,
                    snapshot,
                    created,
                    created,
                    finished,
                    elapsed,
                    rng.random() < 0.05,
                    False,
                    not chosen,  # a secret server-dealt deal (random), on the global boards
                    625 if won else score,
                )
            )
            if len(batch) == 50_000:
                await connection.copy_records_to_table("games", records=batch, columns=columns)
                batch = []
        if batch:
            await connection.copy_records_to_table("games", records=batch, columns=columns)
        # Move logs for the exported player's games (the export replays need them).
        logs = [
            (game_id, seq, "AS-f", seq * 10, now) for game_id in heavy_ids for seq in range(1, 41)
        ]
        await connection.copy_records_to_table(
            "moves", records=logs, columns=["game_id", "seq", "move", "score", "at_ms"]
        )
        await connection.execute("VACUUM ANALYZE")
    finally:
        await connection.close()
    return players[0], players[PLAYERS // 2]


def sql_of(query: Any) -> str:
    return str(query.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))


async def plans(url: str, heavy: str) -> tuple[int, list[str]]:
    queries = {
        "top_score": board_rows.board_query(
            board_rows.BoardQuery("classic", "score", False, limit=101)
        ),
        "top_time": board_rows.board_query(
            board_rows.BoardQuery("classic", "time", False, limit=101)
        ),
        "top_moves": board_rows.board_query(
            board_rows.BoardQuery("classic", "moves", False, limit=101)
        ),
        "deep_score": board_rows.board_query(
            board_rows.BoardQuery("classic", "score", False, after=(-1200, 0, ""), limit=101)
        ),
        "deep_score_rank": board_rows.board_rank_query(
            board_rows.BoardQuery("classic", "score", False, after=(-1200, 0, ""), limit=101)
        ),
        "deal_score": board_rows.board_query(
            board_rows.BoardQuery("classic", "score", False, code=DEAL, limit=101)
        ),
    }
    # A player's statistics are kept rows (server.store.stats): their row per rule, and the
    # latest run of won daily days per rule.
    stats_sql = f"SELECT * FROM player_stats WHERE player_id = '{heavy}'"
    runs_sql = (
        f"SELECT first_day, last_day FROM daily_runs WHERE player_id = '{heavy}' "
        "AND rule = 'classic' ORDER BY last_day DESC, first_day LIMIT 4"
    )
    export_sql = (
        f"SELECT * FROM games WHERE player_id = '{heavy}' AND status IN ('won', 'abandoned') "
        "ORDER BY created_ms, id LIMIT 100"
    )
    texts = {name: sql_of(q) for name, q in queries.items()}
    texts["stats"] = stats_sql
    texts["stats_daily_runs"] = runs_sql
    texts["export_chunk"] = export_sql
    seq = 0
    out = []
    connection = await asyncpg.connect(url)
    try:
        for name, sql in texts.items():
            rows = await connection.fetch("EXPLAIN " + sql)
            plan = "\n".join(r[0] for r in rows)
            seq += plan.count("Seq Scan on games")
            out.append(f"-- {name}\n{plan}")
    finally:
        await connection.close()
    return seq, out


async def timed(session: aiohttp.ClientSession, url: str) -> tuple[float, Any]:
    t0 = time.perf_counter()
    async with session.get(url) as response:
        body = await response.read()
        assert response.status == 200, body[:300]
    return (time.perf_counter() - t0) * 1000, (response.headers, body)


async def measure(base: str, heavy: str, typical: str) -> dict[str, float]:
    figures: dict[str, list[float]] = {}
    async with aiohttp.ClientSession() as session:
        # the cursor of rank 10,000: walk there once
        url = f"{base}/api/v1/leaderboards?rule=classic&by=score&limit=100"
        for page in range(100):
            _, (headers, body) = await timed(session, url)
            assert "Link" in headers, (page, url, body[:300])
            url = base + headers["Link"].split(">")[0].lstrip("<")
        deep = url
        for _ in range(REPEAT):
            for name, target in (
                ("top100_score_ms", f"{base}/api/v1/leaderboards?by=score&limit=100"),
                ("top100_time_ms", f"{base}/api/v1/leaderboards?by=time&limit=100"),
                ("top100_moves_ms", f"{base}/api/v1/leaderboards?by=moves&limit=100"),
                ("deal_top100_ms", f"{base}/api/v1/leaderboards?code={DEAL}&limit=100"),
                ("deep_page_ms", deep),
                ("stats_1000_games_ms", f"{base}/api/v1/players/{heavy}/stats"),
                ("stats_typical_ms", f"{base}/api/v1/players/{typical}/stats"),
            ):
                ms, _ = await timed(session, target)
                figures.setdefault(name, []).append(ms)
        for _ in range(3):
            ms, (_, body) = await timed(session, f"{base}/api/v1/players/{heavy}/games/export")
            figures.setdefault("export_1000_games_ms", []).append(ms)
            assert body.count(b"\n") == HEAVY, body.count(b"\n")
    return {name: statistics.median(values) for name, values in figures.items()}


async def main() -> None:
    pg = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
    os.environ["BENCH_PG_URL"] = pg
    url = await fresh_pg("solitaire_bench_boards")
    # Filled before migration 0009, which fills the statistics from the games (as an upgrade
    # of a database with a history does): its time is a figure.
    await asyncio.to_thread(migrate, url, "0008")
    t0 = time.perf_counter()
    heavy, typical = await fill(url)
    print(f"# filled {GAMES} games in {time.perf_counter() - t0:.0f} s", flush=True)
    t0 = time.perf_counter()
    await asyncio.to_thread(migrate, url)
    backfill_s = time.perf_counter() - t0
    seq_scans, plan_texts = await plans(url, heavy)
    for text in plan_texts:
        print(text)
    process = await start(["-m", "server", "--database-url", url], PORT)
    try:
        figures = await measure(f"http://127.0.0.1:{PORT}", heavy, typical)
    finally:
        stop(process)
    print(f"games={GAMES}")
    print(f"players={PLAYERS}")
    for name, value in figures.items():
        print(f"{name}={value:.2f}")
    print(f"seq_scans_on_games={seq_scans}")
    print(f"stats_backfill_s={backfill_s:.1f}")


if __name__ == "__main__":
    asyncio.run(main())
