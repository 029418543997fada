"""Idempotency records expire (issue 21): an index on `idempotency_keys.created_ms`.

Revision ID: 0010
Revises: 0009
Create Date: 2027-04-02

A record answers the retries of its request for 24 hours (`server.services.idempotency`); a
background job of every process then deletes the expired ones in bounded batches, the oldest
first. `ix_idempotency_keys_created` finds them without reading the table: each batch reads
as many index entries as it deletes, however many records are kept. The records kept before
this revision stay, and expire like the others (their `created_ms` was always written).
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_idempotency_keys_created", "idempotency_keys", ["created_ms"])


def downgrade() -> None:
    op.drop_index("ix_idempotency_keys_created", table_name="idempotency_keys")
