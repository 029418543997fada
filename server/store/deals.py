"""The `deal_verdicts` and `daily_deals` tables: solver verdicts kept per deal, and the deal of
each day and rule."""

from __future__ import annotations

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from server.engine import Rule
from server.store.models import (
    DailyDeal,
    DealVerdict,
)


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


async def daily_deal(session: AsyncSession, day: str, rule: Rule) -> str | None:
    """The code of the daily deal of `day` and `rule`, if it was drawn."""
    return await session.scalar(
        select(DailyDeal.code).where(DailyDeal.day == day, DailyDeal.rule == rule)
    )


async def insert_daily_deal(
    session: AsyncSession, day: str, rule: Rule, code: str, now: int
) -> None:
    await session.execute(insert(DailyDeal).values(day=day, rule=rule, code=code, created_ms=now))


async def daily_deals(session: AsyncSession, days: list[str], rule: Rule) -> dict[str, str]:
    """The codes of the daily deals of `rule` drawn for any of `days`, by day."""
    query = select(DailyDeal.day, DailyDeal.code).where(
        DailyDeal.day.in_(days), DailyDeal.rule == rule
    )
    return {day: code for day, code in await session.execute(query)}
