"""The values that several layers share: who acts, what they ask for, a game as read, and an
applied change. The service produces them, the store keeps them, the views render them; this
module depends on the engine alone, so none of those layers has to import another for them.

Every value here is immutable. A `GameView` holds a `Game` that nothing changes any more: the
service acts on a copy and replaces the view once the copy's write has committed.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, fields

from server.engine import Card, Game

MAX_ACTIONS = 5_000
"""The longest game: the change that brings a game to this version ends it as abandoned (if it
has not ended), so that no game's log grows without end; replays of more actions are refused."""
MOVE_PAGE_MAX = 1_000
"""The most move-log entries one read returns (`GET .../moves`, a WebSocket resync)."""

Clock = Callable[[], int]
"""The server's clock: milliseconds since the Unix epoch."""


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def utc_day(ms: int) -> str:
    """The UTC date of a time in milliseconds, as YYYY-MM-DD."""
    return time.strftime("%Y-%m-%d", time.gmtime(ms / 1000))


@dataclass(frozen=True, slots=True)
class Principal:
    """The authenticated player of a request."""

    id: str
    name: str


def code_revealed(secret_deal: bool, daily: str | None, status: str, now_ms: int) -> bool:
    """Whether a game's deal code may be shown (SPEC 2.3 "Fair play"): always for a chosen game
    (or one dealt before secret deals existed); for a secret server-dealt deal once the game has
    ended, and for a daily deal once its UTC day has ended (also for games that ended earlier)."""
    if not secret_deal:
        return True
    if daily is not None:
        return utc_day(now_ms) > daily
    return status != "active"


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A row of `games` as plain data (not an ORM object, so nothing writes it by accident)."""

    id: str
    player_id: str
    code: str
    rule: str
    chosen: bool
    status: str
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

    def code_revealed(self, now_ms: int) -> bool:
        if self.race_hidden:
            return False
        return code_revealed(self.secret_deal, self.daily, self.status, now_ms)


GAME_FIELDS = tuple(f.name for f in fields(GameRecord))

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
)
"""The columns of a game that an accepted change writes (every other one is fixed at the deal)."""


@dataclass(frozen=True, slots=True)
class GameView:
    """A game as read at `now_ms`: its row, its player's name and its engine state."""

    row: GameRecord
    player_name: str
    game: Game
    now_ms: int

    @property
    def elapsed_ms(self) -> int:
        row = self.row
        if row.elapsed_ms is not None:
            return row.elapsed_ms
        if row.started_ms is None:
            return 0
        now = self.now_ms if row.deadline_ms is None else min(self.now_ms, row.deadline_ms)
        return max(0, now - row.started_ms)


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
class ActionRequest:
    """What a client asked for: `kind` is move, tap, double_tap or undo."""

    kind: str
    card: Card | None = None
    to: int | None = None
    expected_version: int | None = None

    def fingerprint(self, game_id: str) -> str:
        """What an `Idempotency-Key` is bound to: the same key with another request is refused."""
        text = f"{game_id}|{self.kind}|{self.card}|{self.to}|{self.expected_version}"
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Applied:
    """An accepted change of a game: `move` is the notation of what was applied (None for a
    change that is not a move: an abandonment, a hint), `view` the game after it.

    `replayed` is True when this is the stored answer to an earlier request with the same
    `Idempotency-Key`: the same change, answered again, not applied twice."""

    move: str | None
    view: GameView
    replayed: bool = False
