"""The `player_stats` and `daily_runs` tables: a player's statistics (SPEC 2.5), kept as their
solo games finish, so that reading them costs the same whatever the player's history.

**Which games count.** Exactly those `server.services.leaderboards.rule_stats` counts: every
finished game of the player but race games (they count in their races), practice, chosen and
assisted games included. A game finishes once (won, given up, or ended by the action limit);
nothing changes a finished game's figures afterwards (a hint answered after the end marks
nothing: `GameService.mark_assisted`). An erased player's rows stay, as their games do; the
statistics of an erased player are not shown.

**How.** The change that finishes a solo game carries its figures (`Finish`, made by
`finish_of` from the game's row before and after the change) in its `GameCommit`, and the commit
adds them in the same transaction (`server.store.commits`): on PostgreSQL as CTEs of the
commit's one statement (`pg_ctes`), on SQLite as statements of its transaction
(`sqlite_apply`). A commit that finds the game at another version writes nothing, the figures
included. Migration 0009 fills both tables from the games finished before it; `rebuild` does it
again for one player (from their games, as `rule_stats` counts them).

- `player_stats`, a row per (player, rule): played, won, clean wins added; best score and best
  ranked score the greatest; best time and fewest moves (of won games) the least; the current
  streak is one more after a win, 0 after any other end, and the longest the greatest it
  reached. SQLite's scalar MIN/MAX are NULL when an argument is: the SQL says CASE instead.
- `daily_runs`: the runs of consecutive UTC days (day numbers, days since 1970-01-01) whose
  daily deal the player won. A daily game may finish days after its own day (it is still a game
  of its day's deal), so wins do not come in day order: each won day deletes the runs it
  touches (the run ending the day before, the one starting the day after, or one holding it)
  and inserts their union with it. The daily streak is the length of the latest run while
  it ends today or yesterday (alive until today's daily is missed), else 0.

**Order.** The streaks follow the order the commits take (each locks the player's row: on
PostgreSQL the upsert waits for a concurrent one and adds to the row as committed). That is the
order of `finished_ms` but for two games of one player that finish in the same moment in two
processes (or two concurrent requests), where `rule_stats` orders by (finished_ms, id). For the
same reason two daily wins of one player committed at the same moment on PostgreSQL (each
statement reads `daily_runs` as it was when it began) may leave two rows of one run: the read
merges runs that touch or overlap, and the next daily win merges their rows.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from server.engine import Rule, Status
from server.store.games import finished_games
from server.store.models import DailyRunRow, PlayerStatsRow
from server.store.records import GameRecord

EPOCH = date(1970, 1, 1)
RUNS_READ = 4
"""Runs of daily wins read at a time: the latest and the next one (which ends the latest run
unless two rows of one run were left by concurrent commits)."""


def day_number(day: str | date) -> int:
    """A UTC date (YYYY-MM-DD) as days since 1970-01-01."""
    if isinstance(day, str):
        day = date.fromisoformat(day)
    return (day - EPOCH).days


@dataclass(frozen=True, slots=True)
class Finish:
    """What the end of a solo game adds to its player's statistics of its rule: `won` and
    `clean` (won without help) as 0 or 1; `time_ms` and `moves` of a won game only (None
    otherwise); `daily_day` the day number of a won daily game's day."""

    player_id: str
    rule: str
    won: int
    clean: int
    score: int
    ranked_score: int
    time_ms: int | None
    moves: int | None
    daily_day: int | None

    def args(self) -> list[Any]:
        """The parameters of `pg_ctes` and `sqlite_apply`, in order."""
        values: list[Any] = [
            self.player_id,
            self.rule,
            self.won,
            self.clean,
            self.score,
            self.ranked_score,
            self.time_ms,
            self.moves,
        ]
        if self.daily_day is not None:
            values.append(self.daily_day)
        return values


def finish_of(before: GameRecord, after: GameRecord) -> Finish | None:
    """The figures a change from `before` to `after` adds, when it finishes a solo game (None
    for every other change: a move, a hint's mark, a race game's end)."""
    if before.finished_ms is not None or after.finished_ms is None or after.race_id is not None:
        return None
    won = after.status is Status.WON
    return Finish(
        player_id=after.player_id,
        rule=after.rule.value,
        won=int(won),
        clean=int(won and not after.assisted),
        score=after.score,
        ranked_score=after.ranked_score,
        time_ms=after.elapsed_ms if won else None,
        moves=after.moves if won else None,
        daily_day=day_number(after.daily) if won and after.daily is not None else None,
    )


# ---------------------------------------------------------------- the writes

_COLUMNS = (
    "player_id",
    "rule",
    "played",
    "won",
    "clean_wins",
    "best_score",
    "best_ranked_score",
    "best_time_ms",
    "fewest_moves",
    "current_streak",
    "longest_streak",
)


def _greater(column: str, least: bool = False) -> str:
    """The greater (or lesser) of the row's and the finished game's figure, either may be
    NULL (the same SQL on both databases)."""
    old, new = f"player_stats.{column}", f"excluded.{column}"
    better = f"{new} < {old}" if least else f"{new} > {old}"
    return f"{column} = CASE WHEN {old} IS NULL OR {better} THEN {new} ELSE {old} END"


_STREAK = "CASE WHEN excluded.won = 1 THEN player_stats.current_streak + 1 ELSE 0 END"
_ON_CONFLICT = (
    "ON CONFLICT (player_id, rule) DO UPDATE SET "
    "played = player_stats.played + 1, "
    "won = player_stats.won + excluded.won, "
    "clean_wins = player_stats.clean_wins + excluded.clean_wins, "
    f"{_greater('best_score')}, {_greater('best_ranked_score')}, "
    f"{_greater('best_time_ms', least=True)}, {_greater('fewest_moves', least=True)}, "
    f"current_streak = {_STREAK}, "
    f"longest_streak = CASE WHEN {_STREAK} > player_stats.longest_streak THEN {_STREAK} "
    "ELSE player_stats.longest_streak END"
)
"""What a finished game adds to its player's row (the inserted row, `excluded`, is the game's
figures: played 1, won and clean 0 or 1, its streaks 1 if won)."""

_TOUCHING = "player_id = {p} AND rule = {r} AND first_day <= {d} + 1 AND last_day >= {d} - 1"
"""The runs a won day `d` touches: the one ending the day before, the one starting the day
after, one holding it."""


def pg_arity(daily: bool) -> int:
    """How many parameters `pg_ctes` takes."""
    return 9 if daily else 8


def pg_ctes(n: int, daily: bool) -> list[str]:
    """The CTEs of a PostgreSQL commit that finishes a solo game, after the commit's `g` (the
    game's update, RETURNING its id): the figures are `Finish.args()` from `$n` on. Each writes
    only if `g` updated the game."""
    p, r, won, clean, score, ranked, time_ms, moves = (
        f"${n + i}::{kind}"
        for i, kind in enumerate(
            ("varchar", "varchar", "integer", "integer", "integer", "integer", "bigint", "integer")
        )
    )
    parts = [
        f"s AS (INSERT INTO player_stats ({', '.join(_COLUMNS)}) "
        f"SELECT {p}, {r}, 1, {won}, {clean}, {score}, {ranked}, {time_ms}, {moves}, {won}, "
        f"{won} FROM g {_ON_CONFLICT})"
    ]
    if daily:
        d = f"${n + 8}::integer"
        parts.append(
            f"dd AS (DELETE FROM daily_runs WHERE {_TOUCHING.format(p=p, r=r, d=d)} "
            "AND EXISTS (SELECT 1 FROM g) RETURNING first_day, last_day)"
        )
        parts.append(
            "di AS (INSERT INTO daily_runs (player_id, rule, first_day, last_day) "
            f"SELECT {p}, {r}, LEAST({d}, MIN(dd.first_day)), GREATEST({d}, MAX(dd.last_day)) "
            "FROM g LEFT JOIN dd ON true GROUP BY g.id)"
        )
    return parts


_SQLITE_STATS = (
    f"INSERT INTO player_stats ({', '.join(_COLUMNS)}) "
    f"VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?) {_ON_CONFLICT}"
)
_SQLITE_TOUCHING = _TOUCHING.format(p="?", r="?", d="?")
_SQLITE_RUNS = f"SELECT MIN(first_day), MAX(last_day) FROM daily_runs WHERE {_SQLITE_TOUCHING}"
_SQLITE_MERGED = f"DELETE FROM daily_runs WHERE {_SQLITE_TOUCHING}"
_SQLITE_RUN = "INSERT INTO daily_runs (player_id, rule, first_day, last_day) VALUES (?, ?, ?, ?)"


def sqlite_apply(connection: sqlite3.Connection, f: Finish) -> None:
    """Adds a finished game's figures on SQLite, inside the commit's transaction (after its
    update of the game)."""
    connection.execute(
        _SQLITE_STATS,
        (
            f.player_id,
            f.rule,
            f.won,
            f.clean,
            f.score,
            f.ranked_score,
            f.time_ms,
            f.moves,
            f.won,
            f.won,
        ),
    )
    if f.daily_day is None:
        return
    d = f.daily_day
    touching = (f.player_id, f.rule, d, d)
    first, last = connection.execute(_SQLITE_RUNS, touching).fetchone()
    connection.execute(_SQLITE_MERGED, touching)
    first = d if first is None else min(first, d)
    last = d if last is None else max(last, d)
    connection.execute(_SQLITE_RUN, (f.player_id, f.rule, first, last))


# ---------------------------------------------------------------- the reads


@dataclass(frozen=True, slots=True)
class Totals:
    """A player's statistics of one rule as kept (zeros for a rule never finished), with the
    latest run of won daily days (`daily_first`, `daily_last`: day numbers)."""

    played: int = 0
    won: int = 0
    clean_wins: int = 0
    best_score: int | None = None
    best_ranked_score: int | None = None
    best_time_ms: int | None = None
    fewest_moves: int | None = None
    current_streak: int = 0
    longest_streak: int = 0
    daily_first: int | None = None
    daily_last: int | None = None

    def daily_streak(self, today: date) -> int:
        """The run of won daily days while it ends today or yesterday (a streak is alive until
        today's daily is missed), else 0."""
        if self.daily_first is None or self.daily_last is None:
            return 0
        if self.daily_last not in (day_number(today), day_number(today - timedelta(days=1))):
            return 0
        return self.daily_last - self.daily_first + 1


async def latest_run(session: AsyncSession, player_id: str, rule: Rule) -> tuple[int, int] | None:
    """The latest run of the player's won daily days (first, last), merged with the runs that
    touch or overlap it (rows concurrent commits left apart): RUNS_READ rows at a time, newest
    first, until one ends before the run."""
    run: tuple[int, int] | None = None
    offset = 0
    while True:
        query = (
            select(DailyRunRow.first_day, DailyRunRow.last_day)
            .where(DailyRunRow.player_id == player_id, DailyRunRow.rule == rule.value)
            .order_by(DailyRunRow.last_day.desc(), DailyRunRow.first_day)
            .offset(offset)
            .limit(RUNS_READ)
        )
        rows = (await session.execute(query)).all()
        for first, last in rows:
            if run is None:
                run = (first, last)
            elif last >= run[0] - 1:
                run = (min(first, run[0]), run[1])
            else:
                return run
        if len(rows) < RUNS_READ:
            return run
        offset += RUNS_READ


async def totals(session: AsyncSession, player_id: str) -> dict[Rule, Totals]:
    """The player's statistics of every rule: a row per rule and its latest daily run."""
    query = select(PlayerStatsRow).where(PlayerStatsRow.player_id == player_id)
    rows = {Rule(row.rule): row for row in await session.scalars(query)}
    found = {}
    for rule in Rule:
        run = await latest_run(session, player_id, rule)
        first, last = run if run is not None else (None, None)
        row = rows.get(rule)
        if row is None:
            found[rule] = Totals(daily_first=first, daily_last=last)
            continue
        found[rule] = Totals(
            played=row.played,
            won=row.won,
            clean_wins=row.clean_wins,
            best_score=row.best_score,
            best_ranked_score=row.best_ranked_score,
            best_time_ms=row.best_time_ms,
            fewest_moves=row.fewest_moves,
            current_streak=row.current_streak,
            longest_streak=row.longest_streak,
            daily_first=first,
            daily_last=last,
        )
    return found


# ---------------------------------------------------------------- from scratch


async def rebuild(session: AsyncSession, player_id: str) -> None:
    """Writes the player's rows again from their finished games, as `rule_stats` counts them
    (games written without the commit path: an operator's repair, the tests' own rows)."""
    await session.execute(delete(PlayerStatsRow).where(PlayerStatsRow.player_id == player_id))
    await session.execute(delete(DailyRunRow).where(DailyRunRow.player_id == player_id))
    games = await finished_games(session, player_id)
    for rule in Rule:
        mine = [g for g in games if g.rule is rule]
        if not mine:
            continue
        won = [g for g in mine if g.status is Status.WON]
        streak = longest = 0
        for g in mine:
            streak = streak + 1 if g.status is Status.WON else 0
            longest = max(longest, streak)
        times = [g.elapsed_ms for g in won if g.elapsed_ms is not None]
        row = {
            "player_id": player_id,
            "rule": rule.value,
            "played": len(mine),
            "won": len(won),
            "clean_wins": sum(1 for g in won if not g.assisted),
            "best_score": max(g.score for g in mine),
            "best_ranked_score": max(g.ranked_score for g in mine),
            "best_time_ms": min(times, default=None),
            "fewest_moves": min((g.moves for g in won), default=None),
            "current_streak": streak,
            "longest_streak": longest,
        }
        await session.execute(insert(PlayerStatsRow).values(row))
        days = sorted({day_number(g.daily) for g in won if g.daily is not None})
        runs: list[list[int]] = []
        for day in days:
            if runs and runs[-1][1] == day - 1:
                runs[-1][1] = day
            else:
                runs.append([day, day])
        for first, last in runs:
            await session.execute(
                insert(DailyRunRow).values(
                    player_id=player_id, rule=rule.value, first_day=first, last_day=last
                )
            )
