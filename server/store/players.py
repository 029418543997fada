"""The `players` table."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, insert, select, true, update
from sqlalchemy.ext.asyncio import AsyncSession

from server.store.models import GameRow, OAuthCode, Player, Rating, SeedPair, SessionRow

DEFAULT_SETTINGS = {
    "double_click": True,
    "placement_help": True,
    "interactive_rules": True,
    "auto_placement": False,
}
"""A new player's play settings (SPEC 1.7), and an erased player's."""

ERASED_NAME = ""
"""The name of an erased player: no name (SPEC 2.2.2; no name accepted is empty)."""


async def insert_player(session: AsyncSession, **values: Any) -> None:
    await session.execute(insert(Player).values(**values))


async def lock_players(session: AsyncSession, player_ids: list[str]) -> None:
    """Locks the players' rows in id order (no deadlock between two lockers), FOR NO KEY
    UPDATE (PostgreSQL; SQLite's writers are one at a time): lockers of the same players take
    turns, while other transactions' foreign-key checks (a game or a notice of the player being
    stored) do not wait for them, so neither can deadlock with a locker."""
    query = select(Player.id).where(Player.id.in_(player_ids)).order_by(Player.id)
    await session.execute(query.with_for_update(key_share=True))


async def player_by_id(session: AsyncSession, player_id: str) -> Player | None:
    """The player, unless erased."""
    player = await session.get(Player, player_id)
    return player if player is not None and player.deleted_ms is None else None


async def update_player(session: AsyncSession, player_id: str, **values: Any) -> None:
    await session.execute(update(Player).where(Player.id == player_id).values(**values))


async def player_by_name_key(session: AsyncSession, key: str) -> Player | None:
    return (await session.scalars(select(Player).where(Player.name_key == key))).first()


async def erase_player(session: AsyncSession, player_id: str, now_ms: int) -> list[str]:
    """Erases what identifies the player (SPEC 2.2.2): their name (free again), password,
    settings (back to the defaults), sessions, OAuth codes, ratings and seed pairs (a client
    seed is free text of the player's: their games keep no seed either, so their replays say
    `seed: null`); their games stay, made practice so that no board ranks them. The ids of the
    sessions that ended."""
    await session.execute(
        update(Player)
        .where(Player.id == player_id)
        .values(
            name=ERASED_NAME,
            name_key=None,
            password_hash=None,
            deleted_ms=now_ms,
            **DEFAULT_SETTINGS,
        )
    )
    ended = list(
        await session.scalars(select(SessionRow.id).where(SessionRow.player_id == player_id))
    )
    await session.execute(delete(SessionRow).where(SessionRow.player_id == player_id))
    await session.execute(delete(OAuthCode).where(OAuthCode.player_id == player_id))
    await session.execute(delete(Rating).where(Rating.player_id == player_id))
    await session.execute(
        update(GameRow).where(GameRow.player_id == player_id).values(practice=true())
    )
    await session.execute(delete(SeedPair).where(SeedPair.player_id == player_id))
    await session.execute(
        update(GameRow)
        .where(GameRow.player_id == player_id, GameRow.seed_pair_id.is_not(None))
        .values(
            seed_pair_id=None,
            seed_hash=None,
            seed_client=None,
            seed_nonce=None,
            seed_candidate=None,
        )
    )
    return ended
