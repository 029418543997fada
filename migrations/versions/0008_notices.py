"""A player's own events (issue 20, SPEC 2.6.2): `notices` and `notice_marks`.

Revision ID: 0008
Revises: 0007
Create Date: 2027-03-01

- `notices`: what concerns a player, whoever caused it (`server.services.notices`): its number
  `id`, counted per player from 1 (the primary key is `(player_id, id)`), its `kind`, when it
  happened (`at_ms`) and its fields as a JSON object (`data`, text). Older notices are pruned as
  new ones come: a player keeps at least the last 100, and every notice of the last 24 hours.
- `notice_marks`: what was announced once for everybody (the reveal of a day's daily deal, by the
  key `daily:<date>`): the first process to insert the mark posts the notices, in the same
  transaction, so that a periodic check in every process announces it exactly once.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "notices",
        sa.Column("player_id", sa.String(36), nullable=False),
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name="fk_notices_player_id_players"),
        sa.PrimaryKeyConstraint("player_id", "id", name="pk_notices"),
    )
    op.create_table(
        "notice_marks",
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_notice_marks"),
    )


def downgrade() -> None:
    op.drop_table("notice_marks")
    op.drop_table("notices")
