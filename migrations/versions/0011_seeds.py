"""Deals neither side can choose (issue 22, SPEC 1.8.2): seed pairs, seeded games and races.

Revision ID: 0011
Revises: 0010
Create Date: 2027-04-03

- `seed_pairs`: a player's seed pairs in order (`position` 0, 1, 2, ...): the server seed
  (32 bytes, stored encrypted: `server.services.seeds` says with which key), its commitment
  `server_seed_hash`, the player's `client_seed` (NULL for the next pair until the player
  rotates to it), the `nonce` of the next game dealt with it, and its `state`: `current` (the
  pair games are dealt with), `next` (committed, not yet used) or `ended` (rotated away: its
  seed is revealed in `revealed_seed`, hex). A player has at most one current and one next pair.
- `games.seed_pair_id`, `seed_hash`, `seed_client`, `seed_nonce`, `seed_candidate`: the pair
  (its server seed's hash and client seed, copied so that a game is read without a join), nonce
  and candidate that dealt a server-dealt solo game (NULL for chosen, daily and race games, and
  games dealt before this revision).
- `races.server_seed` (encrypted), `server_seed_hash` (shown from the race's creation),
  `client_seeds` (a JSON list of the racers' client seeds, sorted, fixed when the countdown
  begins) and `candidate`; `races.code` may be NULL until then. The races of before this
  revision keep their code and have no seed.
- `race_players.rated`: whether the racer's place went into the rating update of the race
  (SPEC 2.6.1: only racers who moved after the start, in a race with two of them at least,
  and not a group rated against each other more than 3 times in 24 h); NULL before the end.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "seed_pairs",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("player_id", sa.String(36), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("server_seed", sa.Text(), nullable=False),
        sa.Column("server_seed_hash", sa.String(64), nullable=False),
        sa.Column("client_seed", sa.String(64), nullable=True),
        sa.Column("nonce", sa.Integer(), nullable=False),
        sa.Column("revealed_seed", sa.String(64), nullable=True),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.Column("ended_ms", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_seed_pairs_player_id", "seed_pairs", ["player_id", "position"], unique=True)
    # Plain ADD COLUMN (not a batch, which would rebuild `games` and its expression indexes).
    op.add_column("games", sa.Column("seed_pair_id", sa.String(36), nullable=True))
    op.add_column("games", sa.Column("seed_hash", sa.String(64), nullable=True))
    op.add_column("games", sa.Column("seed_client", sa.String(64), nullable=True))
    op.add_column("games", sa.Column("seed_nonce", sa.Integer(), nullable=True))
    op.add_column("games", sa.Column("seed_candidate", sa.Integer(), nullable=True))
    # A rotation looks for the pair's games still in play (it refuses while one is).
    op.create_index("ix_games_seed_pair", "games", ["seed_pair_id", "status"])
    with op.batch_alter_table("races") as batch:
        batch.alter_column("code", existing_type=sa.String(64), nullable=True)
        batch.add_column(sa.Column("server_seed", sa.Text(), nullable=True))
        batch.add_column(sa.Column("server_seed_hash", sa.String(64), nullable=True))
        batch.add_column(sa.Column("client_seeds", sa.Text(), nullable=True))
        batch.add_column(sa.Column("candidate", sa.Integer(), nullable=True))
    op.add_column("race_players", sa.Column("rated", sa.Boolean(), nullable=True))


def downgrade() -> None:
    op.drop_column("race_players", "rated")
    # An open race has no code before 0011's start: it is cancelled (no games, no ratings).
    op.execute("UPDATE races SET status = 'cancelled' WHERE code IS NULL AND status = 'open'")
    op.execute("UPDATE races SET code = '' WHERE code IS NULL")
    with op.batch_alter_table("races") as batch:
        batch.drop_column("candidate")
        batch.drop_column("client_seeds")
        batch.drop_column("server_seed_hash")
        batch.drop_column("server_seed")
        batch.alter_column("code", existing_type=sa.String(64), nullable=False)
    op.drop_index("ix_games_seed_pair", table_name="games")
    for column in ("seed_candidate", "seed_nonce", "seed_client", "seed_hash", "seed_pair_id"):
        op.drop_column("games", column)  # SQLite 3.35+ drops a plain column in place
    op.drop_index("ix_seed_pairs_player_id", table_name="seed_pairs")
    op.drop_table("seed_pairs")
