"""The `seed_pairs` table: players' seed pairs (SPEC 1.8.2), their server seeds sealed.

A player has one `current` pair (games are dealt with it; its `nonce` is the next game's) and one
`next` pair (committed by its hash, its client seed chosen at rotation), and any number of
`ended` ones, whose seeds are revealed. The server seeds are stored sealed
(`server.services.seeds.SeedBox`); this module never sees them in the clear, except an ended
pair's `revealed_seed`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from server.store.models import GameRow, Race, SeedPair

CURRENT = "current"
NEXT = "next"
ENDED = "ended"


@dataclass(frozen=True, slots=True)
class PairRecord:
    id: str
    player_id: str
    position: int
    state: str
    server_seed: str
    """Sealed."""
    server_seed_hash: str
    client_seed: str | None
    nonce: int
    revealed_seed: str | None
    created_ms: int
    ended_ms: int | None


_COLUMNS = (
    SeedPair.id,
    SeedPair.player_id,
    SeedPair.position,
    SeedPair.state,
    SeedPair.server_seed,
    SeedPair.server_seed_hash,
    SeedPair.client_seed,
    SeedPair.nonce,
    SeedPair.revealed_seed,
    SeedPair.created_ms,
    SeedPair.ended_ms,
)


def _record(row: Any) -> PairRecord:
    return PairRecord(**row._mapping)


async def insert_pair(session: AsyncSession, **values: Any) -> None:
    await session.execute(insert(SeedPair).values(**values))


async def live_pairs(
    session: AsyncSession, player_id: str, *, lock: bool = False
) -> dict[str, PairRecord]:
    """The player's current and next pairs, by state (none for a player who has none yet)."""
    query = select(*_COLUMNS).where(
        SeedPair.player_id == player_id, SeedPair.state.in_((CURRENT, NEXT))
    )
    if lock:
        query = query.with_for_update()
    return {r.state: r for r in map(_record, (await session.execute(query)).all())}


async def current_client_seeds(session: AsyncSession, player_ids: list[str]) -> dict[str, str]:
    """The client seeds of the players' current pairs (players without one are left out)."""
    query = select(SeedPair.player_id, SeedPair.client_seed).where(
        SeedPair.player_id.in_(player_ids), SeedPair.state == CURRENT
    )
    return {p: c for p, c in (await session.execute(query)).all() if c is not None}


async def take_nonce(session: AsyncSession, player_id: str) -> PairRecord | None:
    """The player's current pair with the nonce of the game being dealt (`nonce`), counted
    up by one in the same statement (so two games dealt at once never share a nonce)."""
    query = (
        update(SeedPair)
        .where(SeedPair.player_id == player_id, SeedPair.state == CURRENT)
        .values(nonce=SeedPair.nonce + 1)
        .returning(*_COLUMNS)
    )
    row = (await session.execute(query)).first()
    if row is None:
        return None
    record = _record(row)
    return PairRecord(**{**row._mapping, "nonce": record.nonce - 1})


async def end_pair(session: AsyncSession, pair_id: str, revealed_seed: str, now: int) -> None:
    await session.execute(
        update(SeedPair)
        .where(SeedPair.id == pair_id)
        .values(state=ENDED, revealed_seed=revealed_seed, ended_ms=now)
    )


async def make_current(session: AsyncSession, pair_id: str, client_seed: str) -> None:
    await session.execute(
        update(SeedPair)
        .where(SeedPair.id == pair_id)
        .values(state=CURRENT, client_seed=client_seed, nonce=0)
    )


async def ended_pairs(
    session: AsyncSession, player_id: str, limit: int, before: int | None
) -> list[PairRecord]:
    """The player's ended pairs, the latest first; those before position `before`."""
    query = select(*_COLUMNS).where(SeedPair.player_id == player_id, SeedPair.state == ENDED)
    if before is not None:
        query = query.where(SeedPair.position < before)
    query = query.order_by(SeedPair.position.desc()).limit(limit)
    return [_record(r) for r in (await session.execute(query)).all()]


async def revealed_seeds(session: AsyncSession, pair_ids: list[str]) -> dict[str, str]:
    """The revealed server seeds (hex) of those of `pair_ids` that have ended."""
    if not pair_ids:
        return {}
    query = select(SeedPair.id, SeedPair.revealed_seed).where(
        SeedPair.id.in_(pair_ids), SeedPair.state == ENDED
    )
    return {i: s for i, s in (await session.execute(query)).all() if s is not None}


async def pair_in_play(session: AsyncSession, pair_id: str) -> bool:
    """Whether a game the pair dealt is still in play (its code would follow from the seed)."""
    query = (
        select(GameRow.id)
        .where(GameRow.seed_pair_id == pair_id, GameRow.status == "active")
        .limit(1)
    )
    return (await session.execute(query)).first() is not None


async def pair_state(session: AsyncSession, pair_id: str) -> str | None:
    """The pair's state, its row locked (PostgreSQL) until the transaction ends."""
    query = select(SeedPair.state).where(SeedPair.id == pair_id).with_for_update()
    return await session.scalar(query)


async def any_sealed(session: AsyncSession) -> tuple[str, str] | None:
    """One sealed server seed and its hash (a pair's, else a race's), to check a key on."""
    pair = (
        await session.execute(select(SeedPair.server_seed, SeedPair.server_seed_hash).limit(1))
    ).first()
    if pair is not None:
        return pair[0], pair[1]
    race = (
        await session.execute(
            select(Race.server_seed, Race.server_seed_hash)
            .where(Race.server_seed.is_not(None))
            .limit(1)
        )
    ).first()
    if race is None or race[0] is None or race[1] is None:
        return None
    return race[0], race[1]
