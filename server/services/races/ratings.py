"""Race ratings (SPEC 2.6.1): OpenSkill (Plackett-Luce, the `openskill` package), one per player
and rule, updated when a race ends; and the race board, players by their rating's ordinal.

Who is rated. A rating is evidence of skill, so a race counts only what it shows about skill:

- Only racers who made at least one move-log entry after the start are rated. A racer who never
  moved (abandoned during the countdown, or timed out without a move) showed nothing; left in,
  they would hand everyone placed above them a win for free. So they are left out of the update:
  their rating does not change, they give nobody points, and the others are rated exactly as if
  they had not been seated. Their place still stands in the race.
- A race with fewer than two such racers changes no rating: nobody was beaten by anyone.
- The same group (the same set of rated players, the same rule) rated against each other more
  than REPEATS (3) times within REPEAT_WINDOW_MS (24 h) counts no more: the 4th and later races
  of that group within 24 h of the earlier ones change no rating. The count is of the group's
  earlier races that were rated (whose seats say `rated`) and ended within the 24 h before this
  race's end, one query over `race_players` and `races` from one racer's seats.

Why the group cap is the right model. The cheat it closes is farming: a player and accounts they
control (or a friend) race each other over and over, one side losing on purpose, each race worth
a little ordinal. The mover rule alone does not stop it (a sybil can make one move and then
lose). What makes farming pay is repetition, and repetition between the same accounts is
exactly what carries no new information about skill: the third result of the same pairing in a
day says little the first two did not, while an honest player's rating grows from racing many
different people. Chess servers meet the same abuse (rating manipulation and sandbagging between
the same accounts) mostly with detection after the fact and account review, which a small server
cannot staff; and a rating floor only stops one side of it. A cap on repeated groups instead
needs no judgment, cannot be gamed by timing (a fixed 24 h window, sliding over race ends, is
predictable: a player can tell when a group counts again) and is cheap (one indexed read of one
racer's seats of the last day, in the race's own transaction). It costs honest players little:
three rated races a day against the very same opponents, and unlimited unrated ones. A farmer
must vary the group, which takes further accounts that must each move, and their gains against
fresh accounts shrink as those accounts' ratings fall.

The group's racers are locked (in id order) before the count, so two races of the same group
that end at once are counted one after the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from openskill.models import PlackettLuce
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.engine import Rule
from server.services.cursors import Cursors
from server.services.races.standings import Standing
from server.services.values import Page
from server.store import players as player_rows
from server.store import races as store
from server.store.models import Rating
from server.store.races import RatingRow
from server.store.records import RaceRecord

MODEL = PlackettLuce()
REPEATS = 3
"""How many rated races one group may have within REPEAT_WINDOW_MS."""
REPEAT_WINDOW_MS = 24 * 3_600_000


async def rate(
    session: AsyncSession,
    race: RaceRecord,
    standings: list[Standing],
    moved: set[str],
    ended_ms: int,
) -> None:
    """Rates the racers of an ending race by their places, in the race's transaction (see the
    module docstring for who is rated): every seat keeps its place and whether it was `rated`;
    a rated seat keeps the rating before and after, and its racer's rating of the rule changes.
    `moved`: the racers with a move-log entry after the start."""
    racing = [s for s in standings if s.player_id in moved]
    group = sorted(s.player_id for s in racing)
    rated = len(racing) >= 2
    if rated:
        # The racers are locked (in id order) while their ratings change: two races with a
        # racer in common that end at once wait for each other, also for a first rating and for
        # the count of the group's races.
        await player_rows.lock_players(session, group)
        since = ended_ms - REPEAT_WINDOW_MS
        rated = await store.group_races(session, race.rule, group, since) < REPEATS
    if not rated:
        racing = []
    rated_ids = {s.player_id for s in racing}
    for s in standings:
        if s.player_id not in rated_ids:
            await store.update_seat(session, race.id, s.player_id, place=s.place, rated=False)
    if not racing:
        return
    current = await store.ratings(session, race.rule, group)
    before = [
        MODEL.create_rating([current[s.player_id].mu, current[s.player_id].sigma])
        if s.player_id in current
        else MODEL.rating()
        for s in racing
    ]
    # The racers' own places among themselves (1, 2, 2, 4), as if nobody else had been seated.
    places = [s.place for s in racing]
    ranks = [float(1 + sum(p < s.place for p in places)) for s in racing]
    after = MODEL.rate([[r] for r in before], ranks=ranks)
    for s, old, (new,) in zip(racing, before, after, strict=True):
        await store.update_seat(
            session,
            race.id,
            s.player_id,
            place=s.place,
            rated=True,
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
