"""Idempotency records keep their answer as data, not as an HTTP body.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01

A record used to store the HTTP response (`status_code`, `body`) of the first request with a
key; it now stores `answer`, the applied change as data (the move and the game right after it,
`server.store.commits.encode_answer`), which HTTP and the WebSocket both render. Records of the
old form cannot be turned into answers, so the upgrade drops them (a record only serves the
retries of a request made moments before); the downgrade drops the new ones likewise.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("DELETE FROM idempotency_keys")
    with op.batch_alter_table("idempotency_keys") as batch:
        batch.drop_column("status_code")
        batch.drop_column("body")
        batch.add_column(sa.Column("answer", sa.Text(), nullable=False))


def downgrade() -> None:
    op.execute("DELETE FROM idempotency_keys")
    with op.batch_alter_table("idempotency_keys") as batch:
        batch.drop_column("answer")
        batch.add_column(sa.Column("status_code", sa.Integer(), nullable=False))
        batch.add_column(sa.Column("body", sa.Text(), nullable=False))
