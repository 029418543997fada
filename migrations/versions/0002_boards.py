"""Leaderboards, statistics, daily deals, solver verdicts.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

The board indexes are partial (finished games only) and ordered as the boards read them (score
as `-score`, so that a page after a cursor is one row-value comparison on the index), so a page
is an index range scan whatever the size of the table.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

FINISHED = "finished_ms IS NOT NULL"
WON = "status = 'won'"


def _index(name: str, columns: list[str], where: str) -> None:
    op.create_index(
        name,
        "games",
        [sa.text(c) for c in columns],
        postgresql_where=sa.text(where),
        sqlite_where=sa.text(where),
    )


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("daily", sa.String(10), nullable=True))
        batch.add_column(
            sa.Column("practice", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    # Global boards: deals the server chose (random), by rule.
    _index(
        "ix_games_board_score",
        ["rule", "assisted", "(-score)", "finished_ms", "id"],
        f"{FINISHED} AND chosen = false",
    )
    _index(
        "ix_games_board_time",
        ["rule", "assisted", "elapsed_ms", "finished_ms", "id"],
        f"{WON} AND chosen = false",
    )
    _index(
        "ix_games_board_moves",
        ["rule", "assisted", "moves", "finished_ms", "id"],
        f"{WON} AND chosen = false",
    )
    _index(
        "ix_games_board_period",
        ["rule", "assisted", "finished_ms"],
        f"{FINISHED} AND chosen = false",
    )
    # Per-deal boards (and the daily board): every clean game of one deal.
    _index(
        "ix_games_deal_score",
        ["code", "assisted", "(-score)", "finished_ms", "id"],
        f"{FINISHED} AND practice = false",
    )
    _index(
        "ix_games_deal_time",
        ["code", "assisted", "elapsed_ms", "finished_ms", "id"],
        f"{WON} AND practice = false",
    )
    _index(
        "ix_games_deal_moves",
        ["code", "assisted", "moves", "finished_ms", "id"],
        f"{WON} AND practice = false",
    )
    # A player's games: statistics, listing and export.
    op.create_index("ix_games_player_finished", "games", ["player_id", "finished_ms", "id"])
    # One ranked attempt per player, day and rule: a second insert fails and becomes practice.
    op.create_index(
        "ix_games_player_daily",
        "games",
        ["player_id", "daily", "rule"],
        unique=True,
        postgresql_where=sa.text("daily IS NOT NULL AND practice = false"),
        sqlite_where=sa.text("daily IS NOT NULL AND practice = false"),
    )
    op.create_table(
        "deal_verdicts",
        sa.Column("code", sa.String(16), nullable=False),
        sa.Column("take_backs", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("nodes", sa.Integer(), nullable=False),
        sa.Column("line", sa.Text(), nullable=True),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("code", "take_backs", name="pk_deal_verdicts"),
    )


def downgrade() -> None:
    op.drop_table("deal_verdicts")
    for name in (
        "ix_games_player_daily",
        "ix_games_player_finished",
        "ix_games_deal_moves",
        "ix_games_deal_time",
        "ix_games_deal_score",
        "ix_games_board_period",
        "ix_games_board_moves",
        "ix_games_board_time",
        "ix_games_board_score",
    ):
        op.drop_index(name, table_name="games")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("practice")
        batch.drop_column("daily")
