"""The database tables, as SQLAlchemy 2 declarative models.

The alembic migrations (`migrations/` at the top of the repository) are the only source of the
schema; these models mirror them for queries (a test checks that they agree). Times are integer
milliseconds since the Unix epoch (UTC), which both SQLite and PostgreSQL store and compare
exactly.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Player(Base):
    __tablename__ = "players"
    __table_args__ = (Index("ix_players_name_key", "name_key", unique=True),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(64))
    name_key: Mapped[str | None] = mapped_column(String(256))
    """The name as two players may not share it (`server.services.names.name_key`): unique.
    NULL for an erased player (whose name is '')."""
    created_ms: Mapped[int] = mapped_column(BigInteger)
    password_hash: Mapped[str | None] = mapped_column(String(128))
    """Argon2id (`server.services.passwords`); NULL for a guest."""
    deleted_ms: Mapped[int | None] = mapped_column(BigInteger)
    """When the player erased their account (SPEC 2.2.2)."""
    double_click: Mapped[bool] = mapped_column(Boolean, default=True)
    placement_help: Mapped[bool] = mapped_column(Boolean, default=True)
    interactive_rules: Mapped[bool] = mapped_column(Boolean, default=True)
    auto_placement: Mapped[bool] = mapped_column(Boolean, default=False)


class SessionRow(Base):
    """A session: one device's or one app's token (its hash) and what it may do."""

    __tablename__ = "sessions"
    __table_args__ = (Index("ix_sessions_player", "player_id", "created_ms"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    label: Mapped[str] = mapped_column(String(64))
    scopes: Mapped[str] = mapped_column(String(64))
    """Space-separated (`play race account read`)."""
    client_id: Mapped[str | None] = mapped_column(String(64))
    """The OAuth app's (NULL: the server's own client)."""
    created_ms: Mapped[int] = mapped_column(BigInteger)
    last_used_ms: Mapped[int] = mapped_column(BigInteger)
    expires_ms: Mapped[int | None] = mapped_column(BigInteger)


class SignInFailure(Base):
    __tablename__ = "sign_in_failures"
    __table_args__ = (
        Index("ix_sign_in_failures_name", "name_key", "at_ms"),
        Index("ix_sign_in_failures_at", "at_ms"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name_key: Mapped[str] = mapped_column(String(256))
    at_ms: Mapped[int] = mapped_column(BigInteger)


class OAuthCode(Base):
    __tablename__ = "oauth_codes"
    __table_args__ = (Index("ix_oauth_codes_expires", "expires_ms"),)

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"))
    client_id: Mapped[str] = mapped_column(String(64))
    redirect_uri: Mapped[str] = mapped_column(String(2048))
    code_challenge: Mapped[str] = mapped_column(String(128))
    scopes: Mapped[str] = mapped_column(String(64))
    expires_ms: Mapped[int] = mapped_column(BigInteger)
    used_ms: Mapped[int | None] = mapped_column(BigInteger)
    session_id: Mapped[str | None] = mapped_column(String(36))


class GameRow(Base):
    __tablename__ = "games"
    __table_args__ = (
        Index("ix_games_player_created", "player_id", "created_ms"),
        Index("ix_games_seed_pair", "seed_pair_id", "status"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"))
    code: Mapped[str] = mapped_column(String(64))
    rule: Mapped[str] = mapped_column(String(8))
    chosen: Mapped[bool] = mapped_column(Boolean)
    status: Mapped[str] = mapped_column(String(12))
    score: Mapped[int] = mapped_column(Integer)
    moves: Mapped[int] = mapped_column(Integer)
    version: Mapped[int] = mapped_column(Integer)
    snapshot: Mapped[str] = mapped_column(Text)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    started_ms: Mapped[int | None] = mapped_column(BigInteger)
    finished_ms: Mapped[int | None] = mapped_column(BigInteger)
    elapsed_ms: Mapped[int | None] = mapped_column(BigInteger)
    assisted: Mapped[bool] = mapped_column(Boolean, default=False)
    daily: Mapped[str | None] = mapped_column(String(10))
    """The UTC date (YYYY-MM-DD) of the daily deal this game plays, if it is one."""
    practice: Mapped[bool] = mapped_column(Boolean, default=False)
    """A daily game after the player's first attempt of that day: never ranked."""
    secret_deal: Mapped[bool] = mapped_column(Boolean, default=False)
    """Dealt by the server from a secret RU2 code, hidden until revealed (SPEC 2.3)."""
    ranked_score: Mapped[int] = mapped_column(Integer, default=0)
    """What the boards compare (SPEC 1.5)."""
    race_id: Mapped[str | None] = mapped_column(String(36))
    timed_out: Mapped[bool] = mapped_column(Boolean, default=False)
    deadline_ms: Mapped[int | None] = mapped_column(BigInteger)
    """A race game's deadline: no action lands at or after it."""
    race_hidden: Mapped[bool] = mapped_column(Boolean, default=False)
    """A race game while its race runs: visible to its racer only, code included."""
    active_ms: Mapped[int | None] = mapped_column(BigInteger)
    """The time of the game's last change (deal, action, end)."""
    seed_pair_id: Mapped[str | None] = mapped_column(String(36))
    """The seed pair that dealt a server-dealt solo game (SPEC 1.8.2), with its nonce and, for
    a winnable-only game, the candidate certified; NULL for chosen, daily and race games."""
    seed_hash: Mapped[str | None] = mapped_column(String(64))
    seed_client: Mapped[str | None] = mapped_column(String(64))
    seed_nonce: Mapped[int | None] = mapped_column(Integer)
    seed_candidate: Mapped[int | None] = mapped_column(Integer)


class SeedPair(Base):
    """A player's seed pair (SPEC 1.8.2): `current`, `next` or `ended` (its seed revealed)."""

    __tablename__ = "seed_pairs"
    __table_args__ = (Index("ix_seed_pairs_player_id", "player_id", "position", unique=True),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"))
    position: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(8))
    server_seed: Mapped[str] = mapped_column(Text)
    """Encrypted (`server.services.seeds`)."""
    server_seed_hash: Mapped[str] = mapped_column(String(64))
    client_seed: Mapped[str | None] = mapped_column(String(64))
    nonce: Mapped[int] = mapped_column(Integer)
    revealed_seed: Mapped[str | None] = mapped_column(String(64))
    created_ms: Mapped[int] = mapped_column(BigInteger)
    ended_ms: Mapped[int | None] = mapped_column(BigInteger)


class DealVerdict(Base):
    """The solver's verdict on a deal (SPEC 1.8 code), cached."""

    __tablename__ = "deal_verdicts"

    code: Mapped[str] = mapped_column(String(64), primary_key=True)
    take_backs: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    status: Mapped[str] = mapped_column(String(12))
    nodes: Mapped[int] = mapped_column(Integer)
    line: Mapped[str | None] = mapped_column(Text)
    created_ms: Mapped[int] = mapped_column(BigInteger)


class MoveRow(Base):
    """The move log: every accepted action of a game, undos included, in order."""

    __tablename__ = "moves"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    move: Mapped[str] = mapped_column(String(8))
    score: Mapped[int] = mapped_column(Integer)
    at_ms: Mapped[int] = mapped_column(BigInteger)


class IdempotencyRecord(Base):
    """The answer to an action sent with an `Idempotency-Key`, per player and key: the
    request's fingerprint and the applied change as data (`server.store.commits`)."""

    __tablename__ = "idempotency_keys"
    __table_args__ = (Index("ix_idempotency_keys_created", "created_ms"),)
    """The expired records, oldest first (`server.services.idempotency`, migration 0010)."""

    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64))
    answer: Mapped[str] = mapped_column(Text)
    created_ms: Mapped[int] = mapped_column(BigInteger)


class ServerSecret(Base):
    """A secret of the server, generated once (the deal secret of the daily deal)."""

    __tablename__ = "server_secrets"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))
    created_ms: Mapped[int] = mapped_column(BigInteger)


class DailyDeal(Base):
    """The deal of a day (UTC date) and rule, stored when it is first drawn."""

    __tablename__ = "daily_deals"

    day: Mapped[str] = mapped_column(String(10), primary_key=True)
    rule: Mapped[str] = mapped_column(String(8), primary_key=True)
    code: Mapped[str] = mapped_column(String(64))
    created_ms: Mapped[int] = mapped_column(BigInteger)


class Race(Base):
    """A race (SPEC 2.6.1): its secret deal, seats, countdown and end."""

    __tablename__ = "races"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    rule: Mapped[str] = mapped_column(String(8))
    status: Mapped[str] = mapped_column(String(12))
    seats: Mapped[int] = mapped_column(Integer)
    public: Mapped[bool] = mapped_column(Boolean)
    winnable: Mapped[bool] = mapped_column(Boolean)
    time_limit_s: Mapped[int] = mapped_column(Integer)
    creator_id: Mapped[str] = mapped_column(ForeignKey("players.id"))
    code: Mapped[str | None] = mapped_column(String(64))
    """Fixed when the countdown begins, from the racers' client seeds (SPEC 1.8.2)."""
    created_ms: Mapped[int] = mapped_column(BigInteger)
    starts_ms: Mapped[int | None] = mapped_column(BigInteger)
    ended_ms: Mapped[int | None] = mapped_column(BigInteger)
    version: Mapped[int] = mapped_column(Integer)
    server_seed: Mapped[str | None] = mapped_column(Text)
    """Encrypted (`server.services.seeds`); its hash is shown from the race's creation."""
    server_seed_hash: Mapped[str | None] = mapped_column(String(64))
    client_seeds: Mapped[str | None] = mapped_column(Text)
    """A JSON list of the racers' client seeds, sorted, fixed when the countdown begins."""
    candidate: Mapped[int | None] = mapped_column(Integer)


class RacePlayer(Base):
    """A seat of a race: the racer, their game, place and rating change."""

    __tablename__ = "race_players"

    race_id: Mapped[str] = mapped_column(ForeignKey("races.id"), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer)
    joined_ms: Mapped[int] = mapped_column(BigInteger)
    game_id: Mapped[str | None] = mapped_column(String(36))
    place: Mapped[int | None] = mapped_column(Integer)
    mu_before: Mapped[float | None] = mapped_column(Float)
    sigma_before: Mapped[float | None] = mapped_column(Float)
    mu_after: Mapped[float | None] = mapped_column(Float)
    sigma_after: Mapped[float | None] = mapped_column(Float)
    rated: Mapped[bool | None] = mapped_column(Boolean)
    """Whether the racer's place went into the race's rating update (NULL before its end)."""


class Rating(Base):
    """A player's race rating of one rule (OpenSkill Plackett-Luce)."""

    __tablename__ = "ratings"

    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    rule: Mapped[str] = mapped_column(String(8), primary_key=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    ordinal: Mapped[float] = mapped_column(Float)
    races: Mapped[int] = mapped_column(Integer)


class NoticeRow(Base):
    """A notice: an event that concerns a player (`server.services.notices`), numbered per
    player."""

    __tablename__ = "notices"

    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    at_ms: Mapped[int] = mapped_column(BigInteger)
    data: Mapped[str] = mapped_column(Text)
    """The notice's fields, a JSON object."""


class NoticeMark(Base):
    """Something announced once for everybody (a day's daily reveal: `daily:<date>`)."""

    __tablename__ = "notice_marks"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    at_ms: Mapped[int] = mapped_column(BigInteger)


class PlayerStatsRow(Base):
    """A player's statistics of one rule (SPEC 2.5), kept as their solo games finish
    (`server.store.stats`): one row per player and rule that has a finished game."""

    __tablename__ = "player_stats"

    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    rule: Mapped[str] = mapped_column(String(8), primary_key=True)
    played: Mapped[int] = mapped_column(Integer)
    won: Mapped[int] = mapped_column(Integer)
    clean_wins: Mapped[int] = mapped_column(Integer)
    best_score: Mapped[int | None] = mapped_column(Integer)
    best_ranked_score: Mapped[int | None] = mapped_column(Integer)
    best_time_ms: Mapped[int | None] = mapped_column(BigInteger)
    fewest_moves: Mapped[int | None] = mapped_column(Integer)
    current_streak: Mapped[int] = mapped_column(Integer)
    longest_streak: Mapped[int] = mapped_column(Integer)


class DailyRunRow(Base):
    """A run of consecutive UTC days whose daily deal of a rule the player won (day numbers:
    days since 1970-01-01), kept as their daily games finish (`server.store.stats`)."""

    __tablename__ = "daily_runs"
    __table_args__ = (Index("ix_daily_runs_player", "player_id", "rule", "last_day"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"))
    rule: Mapped[str] = mapped_column(String(8))
    first_day: Mapped[int] = mapped_column(Integer)
    last_day: Mapped[int] = mapped_column(Integer)
