"""Player statistics kept as games finish (issue 21): `player_stats` and `daily_runs`.

Revision ID: 0009
Revises: 0008
Create Date: 2027-04-01

- `player_stats`: one row per player and rule with a finished solo game (SPEC 2.5): games
  played, won, won without help (`clean_wins`), the best score and ranked score, the best time
  and fewest moves of a won game, the current and longest winning streak in finishing order.
  The commit that finishes a game updates it in its own transaction (`server.store.stats`),
  so that a player's statistics are read in O(1) whatever their history.
- `daily_runs`: the runs of consecutive UTC days (day numbers: days since 1970-01-01) whose
  daily deal of a rule the player won, merged as daily games finish (in any order: a daily
  game may finish days after its own day). The daily streak is read from the latest run.
- Both are filled here from the games already finished, as `server.services.leaderboards.
  rule_stats` counts them: every finished game but race games, ordered by (finished_ms, id).
  The streaks are gaps and islands: a game's group is the number of games lost or given up
  up to it (itself included), so the wins of a group are a run; the daily runs group
  distinct won days by day number minus their rank.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

FINISHED = "finished_ms IS NOT NULL AND race_id IS NULL"
WON = "CASE WHEN status = 'won' THEN 1 ELSE 0 END"

BACKFILL_STATS = f"""
INSERT INTO player_stats (player_id, rule, played, won, clean_wins, best_score,
    best_ranked_score, best_time_ms, fewest_moves, current_streak, longest_streak)
WITH finished AS (
    SELECT player_id, rule, status, score, ranked_score, elapsed_ms, moves, assisted,
        {WON} AS win,
        SUM(1 - {WON}) OVER (PARTITION BY player_id, rule ORDER BY finished_ms, id
            ROWS UNBOUNDED PRECEDING) AS grp
    FROM games WHERE {FINISHED}
), runs AS (
    SELECT player_id, rule, grp, SUM(win) AS wins FROM finished GROUP BY player_id, rule, grp
), streaks AS (
    SELECT player_id, rule, MAX(wins) AS longest, MAX(grp) AS last_grp
    FROM runs GROUP BY player_id, rule
)
SELECT f.player_id, f.rule, COUNT(*), SUM(f.win),
    SUM(CASE WHEN f.status = 'won' AND NOT f.assisted THEN 1 ELSE 0 END),
    MAX(f.score), MAX(f.ranked_score),
    MIN(CASE WHEN f.status = 'won' THEN f.elapsed_ms END),
    MIN(CASE WHEN f.status = 'won' THEN f.moves END),
    (SELECT r.wins FROM runs r WHERE r.player_id = s.player_id AND r.rule = s.rule
        AND r.grp = s.last_grp),
    s.longest
FROM finished f JOIN streaks s ON s.player_id = f.player_id AND s.rule = f.rule
GROUP BY f.player_id, f.rule, s.player_id, s.rule, s.longest, s.last_grp
"""

DAY_NUMBER = {
    "postgresql": "(CAST(daily AS date) - DATE '1970-01-01')",
    "sqlite": "CAST(julianday(daily) - 2440587.5 AS INTEGER)",
}
"""A daily game's UTC date (YYYY-MM-DD) as its day number, days since 1970-01-01."""


def backfill_runs(day_number: str) -> str:
    return f"""
INSERT INTO daily_runs (player_id, rule, first_day, last_day)
WITH days AS (
    SELECT DISTINCT player_id, rule, {day_number} AS day
    FROM games WHERE {FINISHED} AND status = 'won' AND daily IS NOT NULL
), islands AS (
    SELECT player_id, rule, day,
        day - ROW_NUMBER() OVER (PARTITION BY player_id, rule ORDER BY day) AS island
    FROM days
)
SELECT player_id, rule, MIN(day), MAX(day) FROM islands GROUP BY player_id, rule, island
"""


def upgrade() -> None:
    op.create_table(
        "player_stats",
        sa.Column("player_id", sa.String(36), nullable=False),
        sa.Column("rule", sa.String(8), nullable=False),
        sa.Column("played", sa.Integer(), nullable=False),
        sa.Column("won", sa.Integer(), nullable=False),
        sa.Column("clean_wins", sa.Integer(), nullable=False),
        sa.Column("best_score", sa.Integer(), nullable=True),
        sa.Column("best_ranked_score", sa.Integer(), nullable=True),
        sa.Column("best_time_ms", sa.BigInteger(), nullable=True),
        sa.Column("fewest_moves", sa.Integer(), nullable=True),
        sa.Column("current_streak", sa.Integer(), nullable=False),
        sa.Column("longest_streak", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name="fk_player_stats_player_id_players"
        ),
        sa.PrimaryKeyConstraint("player_id", "rule", name="pk_player_stats"),
    )
    op.create_table(
        "daily_runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("player_id", sa.String(36), nullable=False),
        sa.Column("rule", sa.String(8), nullable=False),
        sa.Column("first_day", sa.Integer(), nullable=False),
        sa.Column("last_day", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name="fk_daily_runs_player_id_players"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_daily_runs"),
    )
    op.create_index("ix_daily_runs_player", "daily_runs", ["player_id", "rule", "last_day"])
    op.execute(BACKFILL_STATS)
    op.execute(backfill_runs(DAY_NUMBER[op.get_bind().dialect.name]))


def downgrade() -> None:
    op.drop_index("ix_daily_runs_player", table_name="daily_runs")
    op.drop_table("daily_runs")
    op.drop_table("player_stats")
