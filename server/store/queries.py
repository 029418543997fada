"""Functions that load and save players, games, the move log and idempotency records.

Each takes an open session and never commits: the caller owns the transaction.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from server.domain import GAME_FIELDS, GameRecord, LoggedMove
from server.store.models import (
    DailyDeal,
    DealVerdict,
    GameRow,
    IdempotencyRecord,
    MoveRow,
    Player,
    ServerSecret,
)


async def insert_player(session: AsyncSession, **values: Any) -> None:
    await session.execute(insert(Player).values(**values))


async def player_by_token_hash(session: AsyncSession, token_hash: str) -> tuple[str, str] | None:
    row = (
        await session.execute(select(Player.id, Player.name).where(Player.token_hash == token_hash))
    ).first()
    return (row[0], row[1]) if row else None


async def player_by_id(session: AsyncSession, player_id: str) -> Player | None:
    return await session.get(Player, player_id)


async def update_player(session: AsyncSession, player_id: str, **values: Any) -> None:
    await session.execute(update(Player).where(Player.id == player_id).values(**values))


async def insert_game(session: AsyncSession, **values: Any) -> None:
    await session.execute(insert(GameRow).values(**values))


GAME_COLUMNS = [getattr(GameRow, name) for name in GAME_FIELDS]


async def load_game(session: AsyncSession, game_id: str) -> tuple[GameRecord, str] | None:
    """The game and its player's name."""
    query = (
        select(*GAME_COLUMNS, Player.name)
        .join(Player, Player.id == GameRow.player_id)
        .where(GameRow.id == game_id)
    )
    row = (await session.execute(query)).first()
    if row is None:
        return None
    return GameRecord(*row[:-1]), row[-1]


LOG_COLUMNS = (MoveRow.game_id, MoveRow.seq, MoveRow.move, MoveRow.score, MoveRow.at_ms)


async def move_log(
    session: AsyncSession,
    game_id: str,
    up_to: int,
    *,
    after: int = 0,
    limit: int | None = None,
    last: int | None = None,
) -> list[LoggedMove]:
    """The move log after sequence number `after` up to `up_to` (the game's version as it was
    read, since under READ COMMITTED a later statement may see actions committed after that
    read): its first `limit` entries, or its `last` ones, in order."""
    query = select(*LOG_COLUMNS).where(
        MoveRow.game_id == game_id, MoveRow.seq > after, MoveRow.seq <= up_to
    )
    if last is not None:
        query = query.order_by(MoveRow.seq.desc()).limit(last)
        return [LoggedMove(*row) for row in reversed((await session.execute(query)).all())]
    result = await session.execute(query.order_by(MoveRow.seq).limit(limit))
    return [LoggedMove(*row) for row in result]


async def deal_verdicts(
    session: AsyncSession, codes: list[str], take_backs: bool
) -> dict[str, tuple[str, int]]:
    query = select(DealVerdict.code, DealVerdict.status, DealVerdict.nodes).where(
        DealVerdict.code.in_(codes), DealVerdict.take_backs == take_backs
    )
    return {code: (status, nodes) for code, status, nodes in await session.execute(query)}


async def insert_deal_verdict(
    session: AsyncSession, code: str, take_backs: bool, status: str, nodes: int, now: int
) -> None:
    await session.execute(
        insert(DealVerdict).values(
            code=code, take_backs=take_backs, status=status, nodes=nodes, created_ms=now
        )
    )


async def idempotency_answer(
    session: AsyncSession, player_id: str, key: str
) -> tuple[str, str] | None:
    """The (fingerprint, answer) stored with a player's idempotency key, if any."""
    row = (
        await session.execute(
            select(IdempotencyRecord.fingerprint, IdempotencyRecord.answer).where(
                IdempotencyRecord.player_id == player_id, IdempotencyRecord.key == key
            )
        )
    ).first()
    return (row[0], row[1]) if row else None


async def server_secret(session: AsyncSession, name: str) -> str | None:
    return await session.scalar(select(ServerSecret.value).where(ServerSecret.name == name))


async def insert_server_secret(session: AsyncSession, name: str, value: str, now: int) -> None:
    await session.execute(insert(ServerSecret).values(name=name, value=value, created_ms=now))


async def daily_deal(session: AsyncSession, day: str, rule: str) -> str | None:
    """The code of the daily deal of `day` and `rule`, if it was drawn."""
    return await session.scalar(
        select(DailyDeal.code).where(DailyDeal.day == day, DailyDeal.rule == rule)
    )


async def insert_daily_deal(
    session: AsyncSession, day: str, rule: str, code: str, now: int
) -> None:
    await session.execute(insert(DailyDeal).values(day=day, rule=rule, code=code, created_ms=now))


async def update_game_row(session: AsyncSession, game_id: str, **values: Any) -> None:
    """Changes a game's row outside the change path (a race ending times out its games)."""
    await session.execute(update(GameRow).where(GameRow.id == game_id).values(**values))
