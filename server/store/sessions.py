"""The `sessions`, `sign_in_failures` and `oauth_codes` tables (SPEC 2.2, 2.2.1)."""

from __future__ import annotations

import asyncio
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, insert, select, text, update
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession

from server.settings import DEFAULT_DATABASE_WAIT_S, async_url, is_sqlite
from server.store.db import DriverPool, configure_sqlite_connection, open_pool, pooled
from server.store.models import OAuthCode, Player, SessionRow, SignInFailure


@dataclass(frozen=True, slots=True)
class SessionRecord:
    id: str
    player_id: str
    label: str
    scopes: str
    client_id: str | None
    created_ms: int
    last_used_ms: int
    expires_ms: int | None


@dataclass(frozen=True, slots=True)
class Holder:
    """A token's session with its player, as `authenticate` needs them."""

    session: SessionRecord
    player_name: str
    player_created_ms: int


SESSION_COLUMNS = (
    SessionRow.id,
    SessionRow.player_id,
    SessionRow.label,
    SessionRow.scopes,
    SessionRow.client_id,
    SessionRow.created_ms,
    SessionRow.last_used_ms,
    SessionRow.expires_ms,
)


async def insert_session(session: AsyncSession, **values: Any) -> None:
    await session.execute(insert(SessionRow).values(**values))


async def holder_of(session: AsyncSession, token_hash: str, now_ms: int) -> Holder | None:
    """The live session of a token's hash (not expired, of a player not erased)."""
    row = (
        await session.execute(
            select(*SESSION_COLUMNS, Player.name, Player.created_ms)
            .join(Player, Player.id == SessionRow.player_id)
            .where(
                SessionRow.token_hash == token_hash,
                Player.deleted_ms.is_(None),
                (SessionRow.expires_ms.is_(None)) | (SessionRow.expires_ms > now_ms),
            )
        )
    ).first()
    if row is None:
        return None
    return Holder(SessionRecord(*row[:8]), row[8], row[9])


async def holds(session: AsyncSession, session_id: str, now_ms: int) -> bool:
    """Whether the session holds at `now_ms` (`HOLDS_SQL`, the commit's own test)."""
    found = await session.execute(
        text(HOLDS_SQL.format(":session_id", ":now_ms")),
        {"session_id": session_id, "now_ms": now_ms},
    )
    return found.first() is not None


async def touch(session: AsyncSession, session_id: str, now_ms: int) -> None:
    await session.execute(
        update(SessionRow).where(SessionRow.id == session_id).values(last_used_ms=now_ms)
    )


async def sessions_of(session: AsyncSession, player_id: str) -> list[SessionRecord]:
    rows = await session.execute(
        select(*SESSION_COLUMNS)
        .where(SessionRow.player_id == player_id)
        .order_by(SessionRow.created_ms, SessionRow.id)
    )
    return [SessionRecord(*row) for row in rows]


async def delete_session(session: AsyncSession, player_id: str, session_id: str) -> bool:
    result = await session.execute(
        delete(SessionRow).where(SessionRow.id == session_id, SessionRow.player_id == player_id)
    )
    return bool(getattr(result, "rowcount", 0))


async def delete_by_token_hash(session: AsyncSession, token_hash: str) -> str | None:
    """Deletes the session of a token's hash; its id, if there was one."""
    found = await session.scalar(select(SessionRow.id).where(SessionRow.token_hash == token_hash))
    if found is not None:
        await session.execute(delete(SessionRow).where(SessionRow.id == found))
    return found


async def player_of_token_hash(session: AsyncSession, token_hash: str) -> str | None:
    """The player of a token's hash's session, if there is one."""
    found: str | None = await session.scalar(
        select(SessionRow.player_id).where(SessionRow.token_hash == token_hash)
    )
    return found


async def delete_sessions_of(
    session: AsyncSession, player_id: str, keep: str | None = None
) -> list[str]:
    """Deletes every session of the player but `keep`; their ids."""
    query = select(SessionRow.id).where(SessionRow.player_id == player_id)
    if keep is not None:
        query = query.where(SessionRow.id != keep)
    ids = list((await session.scalars(query)).all())
    if ids:
        await session.execute(delete(SessionRow).where(SessionRow.id.in_(ids)))
    return ids


async def live_sessions(session: AsyncSession, session_ids: list[str], now_ms: int) -> set[str]:
    """Which of these sessions still hold (not revoked, not expired, player not erased)."""
    found: set[str] = set()
    for start in range(0, len(session_ids), 500):
        chunk = session_ids[start : start + 500]
        rows = await session.scalars(
            select(SessionRow.id)
            .join(Player, Player.id == SessionRow.player_id)
            .where(
                SessionRow.id.in_(chunk),
                Player.deleted_ms.is_(None),
                (SessionRow.expires_ms.is_(None)) | (SessionRow.expires_ms > now_ms),
            )
        )
        found.update(rows)
    return found


# ---------------------------------------------------------------- sign-in failures


async def failures_since(session: AsyncSession, name_key: str, since_ms: int) -> list[int]:
    """The times of the name's failed sign-ins since `since_ms`, oldest first."""
    rows = await session.scalars(
        select(SignInFailure.at_ms)
        .where(SignInFailure.name_key == name_key, SignInFailure.at_ms > since_ms)
        .order_by(SignInFailure.at_ms)
    )
    return list(rows)


async def add_failure(session: AsyncSession, name_key: str, now_ms: int, window_ms: int) -> None:
    """Records a failed sign-in, and forgets those that left the window (of every name)."""
    await session.execute(delete(SignInFailure).where(SignInFailure.at_ms <= now_ms - window_ms))
    await session.execute(insert(SignInFailure).values(name_key=name_key, at_ms=now_ms))


# ---------------------------------------------------------------- OAuth codes


@dataclass(frozen=True, slots=True)
class CodeRecord:
    code_hash: str
    player_id: str
    client_id: str
    redirect_uri: str
    code_challenge: str
    scopes: str
    expires_ms: int
    used_ms: int | None
    session_id: str | None


async def insert_code(session: AsyncSession, **values: Any) -> None:
    await session.execute(insert(OAuthCode).values(**values))


async def code_by_hash(session: AsyncSession, code_hash: str) -> CodeRecord | None:
    row = await session.get(OAuthCode, code_hash)
    if row is None:
        return None
    return CodeRecord(
        row.code_hash,
        row.player_id,
        row.client_id,
        row.redirect_uri,
        row.code_challenge,
        row.scopes,
        row.expires_ms,
        row.used_ms,
        row.session_id,
    )


async def use_code(session: AsyncSession, code_hash: str, now_ms: int, session_id: str) -> bool:
    """Marks an unused code used by the session it made; False if it was used already (two
    exchanges racing: one wins)."""
    result = await session.execute(
        update(OAuthCode)
        .where(OAuthCode.code_hash == code_hash, OAuthCode.used_ms.is_(None))
        .values(used_ms=now_ms, session_id=session_id)
    )
    return bool(getattr(result, "rowcount", 0))


async def forget_codes(session: AsyncSession, before_ms: int) -> None:
    """Codes that expired long enough ago that a second use no longer matters."""
    await session.execute(delete(OAuthCode).where(OAuthCode.expires_ms < before_ms))


# ---------------------------------------------------------------- who a token is, on the driver

_HOLDER_SQL = (
    "SELECT s.id, s.player_id, s.label, s.scopes, s.client_id, s.created_ms, s.last_used_ms, "
    "s.expires_ms, p.name, p.created_ms FROM sessions s JOIN players p ON p.id = s.player_id "
    "WHERE s.token_hash = {0} AND p.deleted_ms IS NULL "
    "AND (s.expires_ms IS NULL OR s.expires_ms > {1})"
)


HOLDS_SQL = (
    "SELECT 1 FROM sessions s JOIN players p ON p.id = s.player_id WHERE s.id = {0} "
    "AND p.deleted_ms IS NULL AND (s.expires_ms IS NULL OR s.expires_ms > {1})"
)
"""Whether a session holds at a time: `_HOLDER_SQL`'s test of a token, by the session's id (a
commit's `session`, `server.store.commits`)."""


def _holder(row: Any) -> Holder | None:
    if row is None:
        return None
    return Holder(SessionRecord(*tuple(row)[:8]), row[8], row[9])


class TokenReader:
    """`holder_of` on the database driver itself: a request with a token reads its session
    (`server.services.sessions`; a known token's move does not), and through SQLAlchemy's async
    session that read cost ~800 µs of CPU (a transaction's BEGIN and COMMIT, the ORM's rows),
    about what the rest of a move costs. Here it is one statement: on the commits' asyncpg pool
    (PostgreSQL), or on a reader thread with its own connection (SQLite, whose WAL lets it read
    beside the writer)."""

    def __init__(
        self,
        pool: DriverPool | None = None,
        path: str | None = None,
        wait_s: float = DEFAULT_DATABASE_WAIT_S,
        owns_pool: bool = True,
    ) -> None:
        self.pool = pool
        self.wait_s = wait_s
        self.path = path
        self.executor: ThreadPoolExecutor | None = None
        self.connection: sqlite3.Connection | None = None
        self.owns_pool = owns_pool
        """Whether `close` closes the pool (not when it is the commits')."""
        if path is not None:
            self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-tokens")

    @classmethod
    async def open(
        cls, url: str, wait_s: float = DEFAULT_DATABASE_WAIT_S, pool: DriverPool | None = None
    ) -> TokenReader:
        """The reader of the database at `url`; on PostgreSQL on `pool` (the commits' pool,
        closed by its owner) when it is given, else on a pool of its own. The commits' pool
        serves both best: each request holds a connection for one statement, and a token read
        that waited behind a small pool of its own (4 connections, before) was part of the
        moves' latency tail (bench/load.py: p99 250 ms with 4 beside the commits' 10, 100 ms
        with 10 beside 10; the fair gate, `server.store.db.DriverPool`, did the rest)."""
        if is_sqlite(url):
            return cls(path=make_url(async_url(url)).database or ":memory:", wait_s=wait_s)
        if pool is not None:
            return cls(pool=pool, wait_s=wait_s, owns_pool=False)
        return cls(pool=await open_pool(url, 10, wait_s), wait_s=wait_s)

    def _connection(self) -> sqlite3.Connection:
        if self.connection is None:
            assert self.path is not None
            connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            configure_sqlite_connection(connection, self.wait_s)
            self.connection = connection
        return self.connection

    def _read(self, token_hash: str, now_ms: int) -> Holder | None:
        row = self._connection().execute(_HOLDER_SQL.format("?", "?"), (token_hash, now_ms))
        return _holder(row.fetchone())

    async def holder(self, token_hash: str, now_ms: int) -> Holder | None:
        if self.pool is not None:
            async with pooled(self.pool, self.wait_s) as connection:
                row = await connection.fetchrow(_HOLDER_SQL.format("$1", "$2"), token_hash, now_ms)
            return _holder(row)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, self._read, token_hash, now_ms)

    def _holds(self, session_id: str, now_ms: int) -> bool:
        return (
            self._connection().execute(HOLDS_SQL.format("?", "?"), (session_id, now_ms)).fetchone()
            is not None
        )

    async def holds(self, session_id: str, now_ms: int) -> bool:
        """Whether the session holds at `now_ms` (`HOLDS_SQL`)."""
        if self.pool is not None:
            async with pooled(self.pool, self.wait_s) as connection:
                found = await connection.fetchval(HOLDS_SQL.format("$1", "$2"), session_id, now_ms)
            return found is not None
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, self._holds, session_id, now_ms)

    def _close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    async def close(self) -> None:
        if self.pool is not None and self.owns_pool:
            await self.pool.close()
        if self.executor is not None:
            await asyncio.get_running_loop().run_in_executor(self.executor, self._close)
            self.executor.shutdown(wait=True)
