"""Fair play: secret server-dealt deals (RU2), the ranked score, the deal secret, daily deals.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

- `games.code` and `deal_verdicts.code` widen to hold RU2 codes (42 characters).
- `games.secret_deal`: the game was dealt by the server from a secret RU2 code (a random, a
  winnable-only or a daily deal); its code is hidden until it is revealed (SPEC 2.3). Games dealt
  before this revision had public RU1 codes: they are not secret, and not on the global boards.
- `games.ranked_score` (SPEC 1.5): what the boards compare. Games of before this revision cannot
  be replayed to find it, so it is taken as their score, at most 625.
- `server_secrets`: the deal secret of the daily deal when `DEAL_SECRET` is not set, generated
  once by the first process that needs it, so that every process deals the same daily deal.
- `daily_deals`: each day's deal per rule, stored when it is first drawn, so it never changes.
- The boards' indexes: the global boards rank secret, non-daily deals only; `by=score` orders by
  the ranked score, a won game before an abandoned one at equal ranked score, as one descending
  key `-(ranked_score * 2 + won)` (`server.store.leaderboards.SCORE_KEY` is the same expression).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

FINISHED = "finished_ms IS NOT NULL"
WON = "status = 'won'"
GLOBAL = "secret_deal = true AND daily IS NULL"
SCORE_KEY = "(-(ranked_score * 2 + CASE WHEN status = 'won' THEN 1 ELSE 0 END))"
OLD_GLOBAL = "chosen = false"


def _index(name: str, columns: list[str], where: str) -> None:
    op.create_index(
        name,
        "games",
        [sa.text(c) for c in columns],
        postgresql_where=sa.text(where),
        sqlite_where=sa.text(where),
    )


BOARDS = ("ix_games_board_score", "ix_games_board_time", "ix_games_board_moves")
PERIOD = "ix_games_board_period"
DEAL_SCORE = "ix_games_deal_score"


def upgrade() -> None:
    for name in (*BOARDS, PERIOD, DEAL_SCORE):
        op.drop_index(name, table_name="games")
    with op.batch_alter_table("games") as batch:
        batch.alter_column("code", type_=sa.String(64), existing_nullable=False)
        batch.add_column(
            sa.Column("secret_deal", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(
            sa.Column("ranked_score", sa.Integer(), nullable=False, server_default="0")
        )
    op.execute("UPDATE games SET ranked_score = CASE WHEN score > 625 THEN 625 ELSE score END")
    with op.batch_alter_table("deal_verdicts") as batch:
        batch.alter_column("code", type_=sa.String(64), existing_nullable=False)
    _index(
        "ix_games_board_score",
        ["rule", "assisted", SCORE_KEY, "finished_ms", "id"],
        f"{FINISHED} AND {GLOBAL}",
    )
    _index(
        "ix_games_board_time",
        ["rule", "assisted", "elapsed_ms", "finished_ms", "id"],
        f"{WON} AND {GLOBAL}",
    )
    _index(
        "ix_games_board_moves",
        ["rule", "assisted", "moves", "finished_ms", "id"],
        f"{WON} AND {GLOBAL}",
    )
    _index("ix_games_board_period", ["rule", "assisted", "finished_ms"], f"{FINISHED} AND {GLOBAL}")
    _index(
        "ix_games_deal_score",
        ["code", "assisted", SCORE_KEY, "finished_ms", "id"],
        f"{FINISHED} AND practice = false",
    )
    op.create_table(
        "server_secrets",
        sa.Column("name", sa.String(32), nullable=False),
        sa.Column("value", sa.String(128), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_server_secrets"),
    )
    op.create_table(
        "daily_deals",
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("rule", sa.String(8), nullable=False),
        sa.Column("code", sa.String(64), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("day", "rule", name="pk_daily_deals"),
    )


def downgrade() -> None:
    op.drop_table("daily_deals")
    op.drop_table("server_secrets")
    for name in (*BOARDS, PERIOD, DEAL_SCORE):
        op.drop_index(name, table_name="games")
    op.execute("DELETE FROM deal_verdicts WHERE length(code) > 16")
    with op.batch_alter_table("deal_verdicts") as batch:
        batch.alter_column("code", type_=sa.String(16), existing_nullable=False)
    # Games dealt from RU2 codes cannot be kept in a 16-character column: they go, with their
    # moves and idempotency records (a downgrade is for development, not for production data).
    long_games = "SELECT id FROM games WHERE length(code) > 16"
    op.execute(f"DELETE FROM moves WHERE game_id IN ({long_games})")
    op.execute("DELETE FROM games WHERE length(code) > 16")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("ranked_score")
        batch.drop_column("secret_deal")
        batch.alter_column("code", type_=sa.String(16), existing_nullable=False)
    _index(
        "ix_games_board_score",
        ["rule", "assisted", "(-score)", "finished_ms", "id"],
        f"{FINISHED} AND {OLD_GLOBAL}",
    )
    _index(
        "ix_games_board_time",
        ["rule", "assisted", "elapsed_ms", "finished_ms", "id"],
        f"{WON} AND {OLD_GLOBAL}",
    )
    _index(
        "ix_games_board_moves",
        ["rule", "assisted", "moves", "finished_ms", "id"],
        f"{WON} AND {OLD_GLOBAL}",
    )
    _index(
        "ix_games_board_period", ["rule", "assisted", "finished_ms"], f"{FINISHED} AND {OLD_GLOBAL}"
    )
    _index(
        "ix_games_deal_score",
        ["code", "assisted", "(-score)", "finished_ms", "id"],
        f"{FINISHED} AND practice = false",
    )
