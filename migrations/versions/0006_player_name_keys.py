"""Player names are unique by their key (issue 14): `players.name_key`, unique.

Revision ID: 0006
Revises: 0005
Create Date: 2027-01-10

- `players.name_key`: the name as two players may not share it
  (`server.services.names.name_key`: NFKC,
  casefolded, without default-ignorable characters, runs of spaces made one), with a unique
  index. Players are never deleted, so every player holds their key for good.
- Existing rows are filled here, oldest player first. Databases made before this revision may
  hold players whose names now share a key: the oldest keeps the plain key and each later one
  gets the key followed by U+001F and a number (2, 3, ...). No name accepted from now on has a
  control character, so those keys never stand in the way of a new name except their own.
  They keep their names as they were.
- PostgreSQL (14 and later): extended statistics `st_games_score_key` on the score board's key
  expression and `finished_ms`, so that the planner knows how many games a range of the index
  holds: the rank after a cursor is counted in such ranges (`server.store.leaderboards`), and
  without them it took a count of a few entries for a scan of the whole table.
"""

from __future__ import annotations

import unicodedata

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

KEY_LENGTH = 256
INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5")
SEPARATOR = "\x1f"
SCORE_KEY = "(-(ranked_score * 2 + CASE WHEN status = 'won' THEN 1 ELSE 0 END))"


def _extended_statistics() -> bool:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return False
    version = bind.execute(sa.text("SHOW server_version_num")).scalar()
    return int(version or 0) >= 140000


def _ignorable(char: str) -> bool:
    code = ord(char)
    return (
        char in INVISIBLE
        or 0xFE00 <= code <= 0xFE0F
        or 0xE0100 <= code <= 0xE01EF
        or 0x180B <= code <= 0x180F
        or unicodedata.category(char) == "Cf"
    )


def name_key(name: str) -> str:
    """`server.services.names.name_key` as of this revision (a test checks that they agree)."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    kept = "".join(char for char in folded if not _ignorable(char))
    return " ".join(kept.split())


def keys_of(players: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(id, key) of players given oldest first as (id, name): a later player whose key is
    taken gets the key, U+001F and the first free number from 2."""
    taken: set[str] = set()
    keys = []
    for player_id, name in players:
        # An old name may be longer than a new one may be: its key is cut to leave room.
        base = name_key(name)[: KEY_LENGTH - 8]
        key = base
        number = 1
        while key in taken:
            number += 1
            key = f"{base}{SEPARATOR}{number}"
        taken.add(key)
        keys.append((player_id, key))
    return keys


def upgrade() -> None:
    op.add_column("players", sa.Column("name_key", sa.String(KEY_LENGTH), nullable=True))
    players = sa.table(
        "players",
        sa.column("id", sa.String),
        sa.column("name", sa.String),
        sa.column("created_ms", sa.BigInteger),
        sa.column("name_key", sa.String),
    )
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(players.c.id, players.c.name).order_by(players.c.created_ms, players.c.id)
    ).all()
    keys = keys_of([(row[0], row[1]) for row in rows])
    if keys:
        connection.execute(
            players.update()
            .where(players.c.id == sa.bindparam("player_id"))
            .values(name_key=sa.bindparam("key")),
            [{"player_id": player_id, "key": key} for player_id, key in keys],
        )
    with op.batch_alter_table("players") as batch:
        batch.alter_column("name_key", existing_type=sa.String(KEY_LENGTH), nullable=False)
    op.create_index("ix_players_name_key", "players", ["name_key"], unique=True)
    if _extended_statistics():
        op.execute(f"CREATE STATISTICS st_games_score_key ON {SCORE_KEY}, finished_ms FROM games")
        op.execute("ANALYZE games")


def downgrade() -> None:
    if _extended_statistics():
        op.execute("DROP STATISTICS IF EXISTS st_games_score_key")
    op.drop_index("ix_players_name_key", table_name="players")
    with op.batch_alter_table("players") as batch:
        batch.drop_column("name_key")
