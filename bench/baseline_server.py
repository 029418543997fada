"""A bare aiohttp endpoint doing one move-shaped transaction, to measure the server against.

    python bench/baseline_server.py --mode pg_raw|pg_orm|sqlite_orm --port P --database-url URL

`POST /move` with `{"game_id": n}`: SELECT ... FOR UPDATE the game, INSERT a move row, UPDATE
the game, commit, answer a small JSON document. No rules, no auth: the ceiling of one process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from aiohttp import web
from sqlalchemy import text

from server.store.db import make_engine, sessionmakers

N_GAMES = 1000
STATE = json.dumps([[i * 8 + j for j in range(8)] for i in range(7)])

SCHEMA = [
    "DROP TABLE IF EXISTS bl_moves",
    "DROP TABLE IF EXISTS bl_games",
    "CREATE TABLE bl_games (id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, state TEXT NOT NULL)",
    "CREATE TABLE bl_moves (game_id INTEGER NOT NULL, seq INTEGER NOT NULL, move TEXT NOT NULL,"
    " at_ms BIGINT NOT NULL, PRIMARY KEY (game_id, seq))",
]


async def setup(url: str) -> None:
    engine = make_engine(url)
    async with engine.begin() as connection:
        for statement in SCHEMA:
            await connection.execute(text(statement))
        await connection.execute(
            text("INSERT INTO bl_games (id, seq, state) VALUES (:id, 0, :state)"),
            [{"id": i, "state": STATE} for i in range(1, N_GAMES + 1)],
        )
    await engine.dispose()


def build(mode: str, url: str) -> web.Application:
    app = web.Application()
    engine = make_engine(url)
    _, writers = sessionmakers(engine)
    pool: list[Any] = []

    async def orm_move(request: web.Request) -> web.Response:
        data = await request.json()
        gid = int(data["game_id"])
        async with writers.begin() as session:
            seq = (
                await session.execute(
                    text(
                        "SELECT seq FROM bl_games WHERE id = :id FOR UPDATE"
                        if not mode.startswith("sqlite")
                        else "SELECT seq FROM bl_games WHERE id = :id"
                    ),
                    {"id": gid},
                )
            ).scalar_one() + 1
            await session.execute(
                text("INSERT INTO bl_moves VALUES (:g, :s, :m, :t)"),
                {"g": gid, "s": seq, "m": "7H-t5", "t": time.time_ns() // 1_000_000},
            )
            await session.execute(
                text("UPDATE bl_games SET seq = :s, state = :st WHERE id = :id"),
                {"s": seq, "st": STATE, "id": gid},
            )
        return web.json_response({"ok": True, "seq": seq})

    async def raw_move(request: web.Request) -> web.Response:
        data = await request.json()
        gid = int(data["game_id"])
        async with pool[0].acquire() as connection, connection.transaction():
            seq = (
                await connection.fetchval("SELECT seq FROM bl_games WHERE id = $1 FOR UPDATE", gid)
                + 1
            )
            await connection.execute(
                "INSERT INTO bl_moves VALUES ($1, $2, $3, $4)",
                gid,
                seq,
                "7H-t5",
                time.time_ns() // 1_000_000,
            )
            await connection.execute(
                "UPDATE bl_games SET seq = $1, state = $2 WHERE id = $3", seq, STATE, gid
            )
        return web.json_response({"ok": True, "seq": seq})

    async def lifecycle(app: web.Application) -> Any:
        await setup(url)
        if mode == "pg_raw":
            import asyncpg

            dsn = url.replace("postgresql+asyncpg://", "postgresql://")
            pool.append(await asyncpg.create_pool(dsn, min_size=10, max_size=10))
        yield
        if pool:
            await pool[0].close()
        await engine.dispose()

    app.cleanup_ctx.append(lifecycle)
    app.router.add_post("/move", raw_move if mode == "pg_raw" else orm_move)
    app.router.add_get("/readyz", lambda request: asyncio.sleep(0, web.json_response({})))
    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["pg_raw", "pg_orm", "sqlite_orm"], required=True)
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--database-url", required=True)
    args = parser.parse_args()
    web.run_app(
        build(args.mode, args.database_url),
        host="127.0.0.1",
        port=args.port,
        print=None,
        access_log=None,
    )


if __name__ == "__main__":
    main()
