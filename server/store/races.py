"""Queries of races, their seats, race games and ratings (SPEC 2.6.1).

Each takes an open session and never commits. A change to a race locks its row first
(`race(..., lock=True)`: `SELECT ... FOR UPDATE` on PostgreSQL; on SQLite the writers' `BEGIN
IMMEDIATE` already serializes), so that joins, leaves, the start and the end never interleave.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, insert, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession

from server.engine import Rule
from server.store.games import GAME_COLUMNS
from server.store.models import GameRow, MoveRow, Player, Race, RacePlayer, Rating
from server.store.records import GameRecord, RaceRecord, Seat, game_record

RACE_COLUMNS = (
    Race.id,
    Race.rule,
    Race.status,
    Race.seats,
    Race.public,
    Race.winnable,
    Race.time_limit_s,
    Race.creator_id,
    Race.code,
    Race.created_ms,
    Race.starts_ms,
    Race.ended_ms,
    Race.version,
    Race.server_seed_hash,
    Race.client_seeds,
    Race.candidate,
)


async def insert_race(session: AsyncSession, **values: Any) -> None:
    await session.execute(insert(Race).values(**values))


async def race(session: AsyncSession, race_id: str, *, lock: bool = False) -> RaceRecord | None:
    query = select(*RACE_COLUMNS).where(Race.id == race_id)
    if lock:
        query = query.with_for_update()
    row = (await session.execute(query)).first()
    if row is None:
        return None
    seeds = None if row.client_seeds is None else tuple(json.loads(row.client_seeds))
    return RaceRecord(**{**row._mapping, "rule": Rule(row.rule), "client_seeds": seeds})


async def sealed_seed(session: AsyncSession, race_id: str) -> str | None:
    """The race's server seed, sealed (`server.services.seeds.SeedBox`); None for a race made
    before seeds (its code was drawn at its creation)."""
    return await session.scalar(select(Race.server_seed).where(Race.id == race_id))


async def update_race(session: AsyncSession, race_id: str, **values: Any) -> None:
    await session.execute(
        update(Race).where(Race.id == race_id).values(version=Race.version + 1, **values)
    )


async def seats(session: AsyncSession, race_id: str) -> list[Seat]:
    query = (
        select(
            RacePlayer.player_id,
            Player.name,
            RacePlayer.seat,
            RacePlayer.game_id,
            RacePlayer.place,
            RacePlayer.mu_before,
            RacePlayer.sigma_before,
            RacePlayer.mu_after,
            RacePlayer.sigma_after,
        )
        .join(Player, Player.id == RacePlayer.player_id)
        .where(RacePlayer.race_id == race_id)
        .order_by(RacePlayer.seat)
    )
    return [Seat(*row) for row in (await session.execute(query)).all()]


async def add_seat(
    session: AsyncSession, race_id: str, player_id: str, seat: int, now: int
) -> None:
    await session.execute(
        insert(RacePlayer).values(race_id=race_id, player_id=player_id, seat=seat, joined_ms=now)
    )


async def remove_seat(session: AsyncSession, race_id: str, player_id: str) -> None:
    await session.execute(
        delete(RacePlayer).where(RacePlayer.race_id == race_id, RacePlayer.player_id == player_id)
    )


async def update_seat(session: AsyncSession, race_id: str, player_id: str, **values: Any) -> None:
    await session.execute(
        update(RacePlayer)
        .where(RacePlayer.race_id == race_id, RacePlayer.player_id == player_id)
        .values(**values)
    )


async def race_games(
    session: AsyncSession, race_id: str, *, lock: bool = False
) -> list[GameRecord]:
    query = select(*GAME_COLUMNS).where(GameRow.race_id == race_id)
    if lock:
        query = query.with_for_update()
    return [game_record(row) for row in (await session.execute(query)).all()]


async def races_of(session: AsyncSession, player_id: str) -> list[str]:
    """The races the player sits in or sat in, oldest first."""
    rows = await session.scalars(
        select(RacePlayer.race_id)
        .where(RacePlayer.player_id == player_id)
        .order_by(RacePlayer.joined_ms, RacePlayer.race_id)
    )
    return list(rows)


async def reveal_games(session: AsyncSession, race_id: str) -> None:
    """The games of an ending race are shown to everyone from now on (no change of a game: its
    state and version stay as they are)."""
    await session.execute(
        update(GameRow).where(GameRow.race_id == race_id).values(race_hidden=False)
    )


async def last_actions(session: AsyncSession, game_ids: list[str]) -> dict[str, int]:
    """The time of each game's last move-log entry (games without one are left out)."""
    if not game_ids:
        return {}
    query = (
        select(MoveRow.game_id, func.max(MoveRow.at_ms))
        .where(MoveRow.game_id.in_(game_ids))
        .group_by(MoveRow.game_id)
    )
    return {game_id: at_ms for game_id, at_ms in (await session.execute(query)).all()}


async def due_races(session: AsyncSession, now: int, stale_before: int) -> list[str]:
    """Races the server must move on by itself: a countdown that is over, a deadline that has
    passed, an open race older than `stale_before` (rows that another process has locked, being
    settled, are skipped)."""
    query = (
        select(Race.id)
        .where(
            ((Race.status == "starting") & (Race.starts_ms <= now))
            | (
                Race.status.in_(("starting", "running"))
                & (Race.starts_ms + Race.time_limit_s * 1000 <= now)
            )
            | ((Race.status == "open") & (Race.created_ms < stale_before))
        )
        .with_for_update(skip_locked=True)
        .limit(50)
    )
    return list((await session.execute(query)).scalars())


async def ratings(session: AsyncSession, rule: Rule, player_ids: list[str]) -> dict[str, Rating]:
    query = select(Rating).where(Rating.rule == rule, Rating.player_id.in_(player_ids))
    return {r.player_id: r for r in (await session.execute(query)).scalars()}


async def public_races(
    session: AsyncSession,
    *,
    status: str | None,
    rule: Rule | None,
    limit: int,
    after: tuple[int, str] | None,
) -> list[str]:
    """Public races, newest first (`status` running includes starting ones)."""
    query = select(Race.id).where(Race.public.is_(True))
    if status == "running":
        query = query.where(Race.status.in_(("starting", "running")))
    elif status is not None:
        query = query.where(Race.status == status)
    if rule is not None:
        query = query.where(Race.rule == rule)
    if after is not None:
        query = query.where(tuple_(Race.created_ms, Race.id) < tuple_(*after))
    query = query.order_by(Race.created_ms.desc(), Race.id.desc()).limit(limit)
    return list((await session.execute(query)).scalars())


async def save_rating(session: AsyncSession, rating: Rating, *, exists: bool) -> None:
    values = {
        "mu": rating.mu,
        "sigma": rating.sigma,
        "ordinal": rating.ordinal,
        "races": rating.races,
    }
    if exists:
        await session.execute(
            update(Rating)
            .where(Rating.player_id == rating.player_id, Rating.rule == rating.rule)
            .values(**values)
        )
    else:
        await session.execute(
            insert(Rating).values(player_id=rating.player_id, rule=rating.rule, **values)
        )


async def rating_of(session: AsyncSession, player_id: str, rule: Rule) -> Rating | None:
    return await session.get(Rating, (player_id, rule))


@dataclass(frozen=True, slots=True)
class RatingRow:
    player_id: str
    name: str
    mu: float
    sigma: float
    ordinal: float
    races: int


async def rating_board(
    session: AsyncSession, rule: Rule, limit: int, after: tuple[float, int, str] | None
) -> list[RatingRow]:
    """Players by ordinal, then more races, then id (the order of the ix_ratings_board index)."""
    key = (-Rating.ordinal, -Rating.races, Rating.player_id)
    query = (
        select(Rating.player_id, Player.name, Rating.mu, Rating.sigma, Rating.ordinal, Rating.races)
        .join(Player, Player.id == Rating.player_id)
        .where(Rating.rule == rule, Rating.races > 0)
    )
    if after is not None:
        query = query.where(tuple_(*key) > tuple_(-after[0], -after[1], after[2]))
    query = query.order_by(*key).limit(limit)
    return [RatingRow(*row) for row in (await session.execute(query)).all()]


async def rating_rank(session: AsyncSession, rule: Rule, after: tuple[float, int, str]) -> int:
    """The number of players on the race board up to and including the position `after` (the
    rank of the last entry of the page before it), read from the ix_ratings_board index."""
    key = (-Rating.ordinal, -Rating.races, Rating.player_id)
    query = (
        select(func.count())
        .select_from(Rating)
        .where(
            Rating.rule == rule,
            Rating.races > 0,
            tuple_(*key) <= tuple_(-after[0], -after[1], after[2]),
        )
    )
    return int(await session.scalar(query) or 0)


async def group_races(
    session: AsyncSession, rule: Rule, player_ids: list[str], since_ms: int
) -> int:
    """The rated races of `rule` that ended at or after `since_ms` whose rated racers were
    exactly `player_ids` (a group, SPEC 2.6.1): read from the seats of one of them (the
    ix_race_players_player index), then the rated seats of those races."""
    theirs = (
        select(RacePlayer.race_id)
        .join(Race, Race.id == RacePlayer.race_id)
        .where(
            RacePlayer.player_id == player_ids[0],
            RacePlayer.rated.is_(True),
            Race.rule == rule,
            Race.ended_ms >= since_ms,
        )
    )
    members = func.count().filter(RacePlayer.player_id.in_(player_ids))
    query = (
        select(func.count(), members)
        .where(RacePlayer.race_id.in_(theirs), RacePlayer.rated.is_(True))
        .group_by(RacePlayer.race_id)
    )
    size = len(player_ids)
    return sum(1 for total, members in await session.execute(query) if total == members == size)
