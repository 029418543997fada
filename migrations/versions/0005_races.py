"""Races: several players on the same secret deal (SPEC 2.6.1), and race ratings.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

- `races`: one race, its secret RU2 deal (`code`, shown once it is finished), its countdown
  (`starts_ms`) and end (`ended_ms`). `version` grows with every change of the race row itself
  (a join, a leave, the countdown, the start, the end); the race document's version adds the
  versions of its games, so that every racer's action is a new version without writing here.
- `race_players`: the seats, with each racer's game, place and rating before and after.
- `ratings`: OpenSkill (Plackett-Luce) ratings per player and rule; the race board reads them
  by ordinal.
- `games.race_id`, `games.timed_out`, `games.deadline_ms` (nothing lands after it),
  `games.race_hidden` (visible to its racer only, code included, until the race ends) and
  `games.active_ms` (the time of its last change: the live list shows the most recent first).
  Race games are `practice`, so the per-deal boards leave them out, and the global boards now
  also require `practice = false`.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

FINISHED = "finished_ms IS NOT NULL"
WON = "status = 'won'"
SCORE_KEY = "(-(ranked_score * 2 + CASE WHEN status = 'won' THEN 1 ELSE 0 END))"
GLOBAL_0004 = "secret_deal = true AND daily IS NULL"
GLOBAL = f"{GLOBAL_0004} AND practice = false"
BOARDS = {
    "ix_games_board_score": (["rule", "assisted", SCORE_KEY, "finished_ms", "id"], FINISHED),
    "ix_games_board_time": (["rule", "assisted", "elapsed_ms", "finished_ms", "id"], WON),
    "ix_games_board_moves": (["rule", "assisted", "moves", "finished_ms", "id"], WON),
    "ix_games_board_period": (["rule", "assisted", "finished_ms"], FINISHED),
}


def _drop_boards() -> None:
    for name in BOARDS:
        op.drop_index(name, table_name="games")


def _boards(scope: str) -> None:
    for name, (columns, where) in BOARDS.items():
        op.create_index(
            name,
            "games",
            [sa.text(c) for c in columns],
            postgresql_where=sa.text(f"{where} AND {scope}"),
            sqlite_where=sa.text(f"{where} AND {scope}"),
        )


def upgrade() -> None:
    _drop_boards()
    op.create_table(
        "races",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("rule", sa.String(8), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("seats", sa.Integer(), nullable=False),
        sa.Column("public", sa.Boolean(), nullable=False),
        sa.Column("winnable", sa.Boolean(), nullable=False),
        sa.Column("time_limit_s", sa.Integer(), nullable=False),
        sa.Column("creator_id", sa.String(36), nullable=False),
        sa.Column("code", sa.String(64), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.Column("starts_ms", sa.BigInteger(), nullable=True),
        sa.Column("ended_ms", sa.BigInteger(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["creator_id"], ["players.id"], name="fk_races_creator_id_players"),
        sa.PrimaryKeyConstraint("id", name="pk_races"),
    )
    op.create_index("ix_races_status_created", "races", ["status", "created_ms", "id"])
    op.create_index("ix_races_public_created", "races", ["public", "created_ms", "id"])
    op.create_table(
        "race_players",
        sa.Column("race_id", sa.String(36), nullable=False),
        sa.Column("player_id", sa.String(36), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("joined_ms", sa.BigInteger(), nullable=False),
        sa.Column("game_id", sa.String(36), nullable=True),
        sa.Column("place", sa.Integer(), nullable=True),
        sa.Column("mu_before", sa.Float(), nullable=True),
        sa.Column("sigma_before", sa.Float(), nullable=True),
        sa.Column("mu_after", sa.Float(), nullable=True),
        sa.Column("sigma_after", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["race_id"], ["races.id"], name="fk_race_players_race_id_races"),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name="fk_race_players_player_id_players"
        ),
        sa.PrimaryKeyConstraint("race_id", "player_id", name="pk_race_players"),
    )
    op.create_index("ix_race_players_player", "race_players", ["player_id"])
    op.create_table(
        "ratings",
        sa.Column("player_id", sa.String(36), nullable=False),
        sa.Column("rule", sa.String(8), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("ordinal", sa.Float(), nullable=False),
        sa.Column("races", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name="fk_ratings_player_id_players"),
        sa.PrimaryKeyConstraint("player_id", "rule", name="pk_ratings"),
    )
    op.create_index(
        "ix_ratings_board",
        "ratings",
        ["rule", sa.text("(-ordinal)"), sa.text("(-races)"), "player_id"],
    )
    # Plain ADD COLUMNs: no rebuild of the table on SQLite, so its indexes stay as they are.
    op.add_column("games", sa.Column("race_id", sa.String(36), nullable=True))
    op.add_column(
        "games", sa.Column("timed_out", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column("games", sa.Column("deadline_ms", sa.BigInteger(), nullable=True))
    op.add_column(
        "games", sa.Column("race_hidden", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column("games", sa.Column("active_ms", sa.BigInteger(), nullable=True))
    op.execute("UPDATE games SET active_ms = COALESCE(finished_ms, started_ms, created_ms)")
    op.create_index("ix_games_race", "games", ["race_id"])
    # Games in play that anyone may watch, most recently active first (GET /api/v1/live/games).
    op.create_index(
        "ix_games_live",
        "games",
        [sa.text("(-active_ms)"), "id"],
        postgresql_where=sa.text("status = 'active'"),
        sqlite_where=sa.text("status = 'active'"),
    )
    _boards(GLOBAL)


def downgrade() -> None:
    # SQLite's batch mode rebuilds `games` to drop columns and cannot carry expression indexes
    # over: they are dropped first and made again after it.
    _drop_boards()
    op.drop_index("ix_games_deal_score", table_name="games")
    op.drop_index("ix_games_live", table_name="games")
    op.drop_index("ix_games_race", table_name="games")
    race_games = "SELECT id FROM games WHERE race_id IS NOT NULL"
    op.execute(f"DELETE FROM moves WHERE game_id IN ({race_games})")
    op.execute("DELETE FROM games WHERE race_id IS NOT NULL")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("active_ms")
        batch.drop_column("race_hidden")
        batch.drop_column("deadline_ms")
        batch.drop_column("timed_out")
        batch.drop_column("race_id")
    _boards(GLOBAL_0004)
    op.create_index(
        "ix_games_deal_score",
        "games",
        [sa.text(c) for c in ("code", "assisted", SCORE_KEY, "finished_ms", "id")],
        postgresql_where=sa.text(f"{FINISHED} AND practice = false"),
        sqlite_where=sa.text(f"{FINISHED} AND practice = false"),
    )
    op.drop_index("ix_ratings_board", table_name="ratings")
    op.drop_table("ratings")
    op.drop_index("ix_race_players_player", table_name="race_players")
    op.drop_table("race_players")
    op.drop_index("ix_races_public_created", table_name="races")
    op.drop_index("ix_races_status_created", table_name="races")
    op.drop_table("races")
