"""Race ratings (SPEC 2.6.1): OpenSkill (Plackett-Luce, the `openskill` package), one per player
and rule, updated when a race ends; and the race board, players by their rating's ordinal."""

from __future__ import annotations

from dataclasses import dataclass

from openskill.models import PlackettLuce
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.engine import Rule
from server.services.cursors import Cursors
from server.services.races.standings import Standing
from server.services.values import Page
from server.store import races as store
from server.store.models import Rating
from server.store.races import RatingRow
from server.store.records import RaceRecord

MODEL = PlackettLuce()


async def rate(session: AsyncSession, race: RaceRecord, standings: list[Standing]) -> None:
    """Rates the racers of an ending race by their places, in the race's transaction: each
    seat keeps the rating before and after, and each racer's rating of the rule changes."""
    # The racers are locked (in id order) while their ratings change: two races with a racer
    # in common that end at once wait for each other, also for a first rating.
    await store.lock_players(session, [s.player_id for s in standings])
    current = await store.ratings(session, race.rule, [s.player_id for s in standings])
    before = [
        MODEL.create_rating([current[s.player_id].mu, current[s.player_id].sigma])
        if s.player_id in current
        else MODEL.rating()
        for s in standings
    ]
    after = MODEL.rate([[r] for r in before], ranks=[float(s.place) for s in standings])
    for s, old, (new,) in zip(standings, before, after, strict=True):
        await store.update_seat(
            session,
            race.id,
            s.player_id,
            place=s.place,
            mu_before=old.mu,
            sigma_before=old.sigma,
            mu_after=new.mu,
            sigma_after=new.sigma,
        )
        races = current[s.player_id].races + 1 if s.player_id in current else 1
        await store.save_rating(
            session,
            Rating(
                player_id=s.player_id,
                rule=race.rule,
                mu=new.mu,
                sigma=new.sigma,
                ordinal=new.ordinal(),
                races=races,
            ),
            exists=s.player_id in current,
        )


@dataclass(frozen=True, slots=True)
class RatingPage(Page[tuple[int, RatingRow]]):
    """A page of the race board: (rank, entry) pairs."""

    rule: Rule


class RatingBoard:
    """The race board of a rule: players with a finished race, by ordinal, then more races."""

    def __init__(self, readers: async_sessionmaker[AsyncSession], cursors: Cursors) -> None:
        self.readers = readers
        self.cursors = cursors

    async def page(self, rule: Rule, *, limit: int, after: str | None) -> RatingPage:
        board = f"races-{rule.value}"
        position = None
        if after is not None:
            ordinal, races, player_id = self.cursors.decode(after, board, (float, int, str))
            position = (ordinal, races, player_id)
        async with self.readers.begin() as session:
            rows = await store.rating_board(session, rule, limit + 1, position)
            # The rank is counted, never taken from the client.
            rank = await store.rating_rank(session, rule, position) if rows and position else 0
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = None
        if more and rows:
            last = rows[-1]
            next_cursor = self.cursors.encode([last.ordinal, last.races, last.player_id], board)
        return RatingPage([(rank + i + 1, row) for i, row in enumerate(rows)], next_cursor, rule)
