"""Accounts (issue 19): passwords, a session per device, sign-in limits, OAuth codes, erasure.

Revision ID: 0007
Revises: 0006
Create Date: 2027-02-01

- `sessions`: one per device or app, each with its own token (its SHA-256 hash only), label,
  scopes (space-separated: play race account read), the OAuth app's `client_id` (NULL for the
  server's own client), its times and, for an app's token, when it expires. A revoked session is
  deleted. Every player's token of before this revision becomes their first session ("sign-up",
  every scope): nobody signs in again.
- `players`: `token_hash` leaves (tokens are sessions now); `password_hash` (an Argon2id hash,
  NULL for a guest) and `deleted_ms` (when the player erased their account, SPEC 2.2.2) come;
  `name_key` becomes nullable: an erased player keeps their row (their games still name it) with
  the name '' and no key, so the name is free again.
- `sign_in_failures`: each failed sign-in by the name's key, for the limit of 10 in 15 minutes
  per name whatever the address; rows older than the window are deleted as new ones come.
- `oauth_codes`: the authorization codes of the OAuth flow (their hash), each bound to its
  client, redirect URI and PKCE challenge, living 60 s, used once (`used_ms`, and the session it
  made, so that a second use revokes that session).
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

ALL_SCOPES = "play race account read"


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("player_id", sa.String(36), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("label", sa.String(64), nullable=False),
        sa.Column("scopes", sa.String(64), nullable=False),
        sa.Column("client_id", sa.String(64), nullable=True),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.Column("last_used_ms", sa.BigInteger(), nullable=False),
        sa.Column("expires_ms", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name="fk_sessions_player_id_players"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_sessions"),
        sa.UniqueConstraint("token_hash", name="uq_sessions_token_hash"),
    )
    op.create_index("ix_sessions_player", "sessions", ["player_id", "created_ms"])
    bind = op.get_bind()
    rows = bind.execute(sa.text("SELECT id, token_hash, created_ms FROM players")).all()
    sessions = sa.table(
        "sessions",
        sa.column("id", sa.String),
        sa.column("player_id", sa.String),
        sa.column("token_hash", sa.String),
        sa.column("label", sa.String),
        sa.column("scopes", sa.String),
        sa.column("created_ms", sa.BigInteger),
        sa.column("last_used_ms", sa.BigInteger),
    )
    if rows:
        op.bulk_insert(
            sessions,
            [
                {
                    "id": str(uuid.uuid4()),
                    "player_id": player_id,
                    "token_hash": token_hash,
                    "label": "sign-up",
                    "scopes": ALL_SCOPES,
                    "created_ms": created_ms,
                    "last_used_ms": created_ms,
                }
                for player_id, token_hash, created_ms in rows
            ],
        )
    with op.batch_alter_table("players") as batch:
        batch.drop_constraint("uq_players_token_hash", type_="unique")
        batch.drop_column("token_hash")
        batch.add_column(sa.Column("password_hash", sa.String(128), nullable=True))
        batch.add_column(sa.Column("deleted_ms", sa.BigInteger(), nullable=True))
        batch.alter_column("name_key", existing_type=sa.String(256), nullable=True)
    op.create_table(
        "sign_in_failures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name_key", sa.String(256), nullable=False),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_sign_in_failures"),
    )
    op.create_index("ix_sign_in_failures_name", "sign_in_failures", ["name_key", "at_ms"])
    op.create_index("ix_sign_in_failures_at", "sign_in_failures", ["at_ms"])
    op.create_table(
        "oauth_codes",
        sa.Column("code_hash", sa.String(64), nullable=False),
        sa.Column("player_id", sa.String(36), nullable=False),
        sa.Column("client_id", sa.String(64), nullable=False),
        sa.Column("redirect_uri", sa.String(2048), nullable=False),
        sa.Column("code_challenge", sa.String(128), nullable=False),
        sa.Column("scopes", sa.String(64), nullable=False),
        sa.Column("expires_ms", sa.BigInteger(), nullable=False),
        sa.Column("used_ms", sa.BigInteger(), nullable=True),
        sa.Column("session_id", sa.String(36), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name="fk_oauth_codes_player_id_players"
        ),
        sa.PrimaryKeyConstraint("code_hash", name="pk_oauth_codes"),
    )
    op.create_index("ix_oauth_codes_expires", "oauth_codes", ["expires_ms"])


def downgrade() -> None:
    op.drop_index("ix_oauth_codes_expires", table_name="oauth_codes")
    op.drop_table("oauth_codes")
    op.drop_index("ix_sign_in_failures_at", table_name="sign_in_failures")
    op.drop_index("ix_sign_in_failures_name", table_name="sign_in_failures")
    op.drop_table("sign_in_failures")
    # Each player's oldest session's token becomes their token again (erased players, who have
    # none, get a hash that no token has).
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("token_hash", sa.String(64), nullable=True))
    op.execute(
        "UPDATE players SET token_hash = COALESCE((SELECT s.token_hash FROM sessions s "
        "WHERE s.player_id = players.id ORDER BY s.created_ms, s.id LIMIT 1), 'erased-' || id), "
        "name_key = COALESCE(name_key, 'erased-' || id)"
    )
    with op.batch_alter_table("players") as batch:
        batch.alter_column("token_hash", existing_type=sa.String(64), nullable=False)
        batch.alter_column("name_key", existing_type=sa.String(256), nullable=False)
        batch.create_unique_constraint("uq_players_token_hash", ["token_hash"])
        batch.drop_column("deleted_ms")
        batch.drop_column("password_hash")
    op.drop_index("ix_sessions_player", table_name="sessions")
    op.drop_table("sessions")
