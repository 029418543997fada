"""The values that several layers share: who acts, what they ask for, a game as read, and an
applied change. The service produces them, the store keeps them, the views render them; this
module depends on the engine alone, so none of those layers has to import another for them.

Every value here is immutable. A `GameView` holds a `Game` that nothing changes any more: the
service acts on a copy and replaces the view once the copy's write has committed.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import orjson

from server.engine import Card, Game
from server.engine.snapshot import loads
from server.store.records import GAME_FIELDS, GameRecord, game_record_of

MAX_ACTIONS = 5_000
"""The longest game: the change that brings a game to this version ends it as abandoned (if it
has not ended), so that no game's log grows without end; replays of more actions are refused."""
MOVE_PAGE_MAX = 1_000
"""The most move-log entries one read returns (`GET .../moves`, a WebSocket resync)."""

Clock = Callable[[], int]
"""The server's clock: milliseconds since the Unix epoch."""


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def is_printable_ascii(text: str) -> bool:
    """Whether `text` is printable ASCII (what tokens and idempotency keys are made of)."""
    return text.isascii() and text.isprintable()


@dataclass(frozen=True, slots=True)
class Principal:
    """The authenticated player of a request: who, through which session, allowed what."""

    id: str
    name: str
    session_id: str = ""
    scopes: frozenset[str] = frozenset()
    created_ms: int = 0
    """When the player signed up (the daily board ranks only players older than the day)."""

    def may(self, scope: str) -> bool:
        return scope in self.scopes


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


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a paged list: its items, and the signed cursor of the page after it (None
    on the last page). Every list is paged this way, by its use-case (`server.services`)."""

    items: list[T]
    next: str | None


def encode_answer(applied: Applied) -> str:
    """The answer to keep with an idempotency record: the move and the game right after it."""
    view = applied.view
    return orjson.dumps(
        {
            "move": applied.move,
            "row": {name: getattr(view.row, name) for name in GAME_FIELDS},
            "player_name": view.player_name,
            "now_ms": view.now_ms,
        }
    ).decode()


def decode_answer(text: str) -> Applied:
    """The stored answer again, as the same value (marked `replayed`)."""
    data = json.loads(text)
    row = game_record_of(data["row"])
    # Text this server wrote itself: the undo history is not replayed to check it.
    view = GameView(
        row, data["player_name"], loads(row.snapshot, check_history=False), data["now_ms"]
    )
    return Applied(data["move"], view, replayed=True)
