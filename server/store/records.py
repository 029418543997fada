"""Rows as plain, immutable values (not ORM objects, so nothing writes them by accident): a game,
a move-log entry, a race and its seats, and the fair-play rule of when a game's code may be
shown. The store reads and writes these; the services and the API pass them on."""

from __future__ import annotations

import calendar
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from server.engine import Rule, Status


def utc_day(ms: int) -> str:
    """The UTC date of a time in milliseconds, as YYYY-MM-DD."""
    return time.strftime("%Y-%m-%d", time.gmtime(ms / 1000))


def day_start_ms(day: str) -> int:
    """The first millisecond (UTC) of a date YYYY-MM-DD."""
    return calendar.timegm(time.strptime(day, "%Y-%m-%d")) * 1000


def code_revealed(secret_deal: bool, daily: str | None, status: Status, now_ms: int) -> bool:
    """Whether a game's deal code may be shown (SPEC 2.3 "Fair play"): always for a chosen game
    (or one dealt before secret deals existed); for a secret server-dealt deal once the game has
    ended, and for a daily deal once its UTC day has ended (also for games that ended earlier)."""
    if not secret_deal:
        return True
    if daily is not None:
        return utc_day(now_ms) > daily
    return status is not Status.ACTIVE


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A row of `games` as plain data (not an ORM object, so nothing writes it by accident)."""

    id: str
    player_id: str
    code: str
    rule: Rule
    chosen: bool
    status: Status
    score: int
    moves: int
    version: int
    snapshot: str
    created_ms: int
    started_ms: int | None
    finished_ms: int | None
    elapsed_ms: int | None
    assisted: bool
    daily: str | None = None
    practice: bool = False
    secret_deal: bool = False
    ranked_score: int = 0
    race_id: str | None = None
    timed_out: bool = False
    deadline_ms: int | None = None
    race_hidden: bool = False
    active_ms: int | None = None
    seed_pair_id: str | None = None
    """The seed pair that dealt a server-dealt solo game (SPEC 1.8.2): its server seed's hash,
    its client seed, the game's nonce and (a winnable-only game) the candidate certified."""
    seed_hash: str | None = None
    seed_client: str | None = None
    seed_nonce: int | None = None
    seed_candidate: int | None = None

    def code_revealed(self, now_ms: int) -> bool:
        if self.race_hidden:
            return False
        return code_revealed(self.secret_deal, self.daily, self.status, now_ms)


GAME_FIELDS = tuple(f.name for f in fields(GameRecord))


_RULE = GAME_FIELDS.index("rule")
_STATUS = GAME_FIELDS.index("status")


def game_record(values: Sequence[Any]) -> GameRecord:
    """A game's row as read (its columns in the order of `GAME_FIELDS`): its rule and status
    become the engine's `Rule` and `Status` here, at the store's edge."""
    typed = list(values)
    typed[_RULE] = Rule(typed[_RULE])
    typed[_STATUS] = Status(typed[_STATUS])
    return GameRecord(*typed)


def game_record_of(values: Mapping[str, Any]) -> GameRecord:
    """A game's row from its columns by name (a stored answer's, for one)."""
    return GameRecord(
        **{**values, "rule": Rule(values["rule"]), "status": Status(values["status"])}
    )


STATE_FIELDS = (
    "status",
    "score",
    "moves",
    "version",
    "snapshot",
    "started_ms",
    "finished_ms",
    "elapsed_ms",
    "assisted",
    "ranked_score",
    "practice",
    "active_ms",
    "timed_out",
)
"""The columns of a game that an accepted change writes (every other one is fixed at the deal;
`timed_out` changes only with the time-out of a race game at its race's deadline)."""


@dataclass(frozen=True, slots=True)
class LoggedMove:
    """One entry of a move log (plain data: a log can be long, ORM objects are costly).

    `seq` is the game's version after the action: an accepted change that is not a move (a
    hint marking the game assisted, an abandonment) takes a version without a log entry."""

    game_id: str
    seq: int
    move: str
    score: int
    at_ms: int


@dataclass(frozen=True, slots=True)
class RaceRecord:
    id: str
    rule: Rule
    status: str
    seats: int
    public: bool
    winnable: bool
    time_limit_s: int
    creator_id: str
    code: str | None
    """Fixed when the countdown begins (SPEC 1.8.2); None while the race is open."""
    created_ms: int
    starts_ms: int | None
    ended_ms: int | None
    version: int
    server_seed_hash: str | None = None
    client_seeds: tuple[str, ...] | None = None
    candidate: int | None = None


@dataclass(frozen=True, slots=True)
class Seat:
    player_id: str
    name: str
    seat: int
    game_id: str | None
    place: int | None
    mu_before: float | None
    sigma_before: float | None
    mu_after: float | None
    sigma_after: float | None
