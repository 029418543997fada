"""The wire format out: games, moves and replays as JSON-ready dicts."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from server.engine import Game, card_text
from server.engine.codes import deal_columns

if TYPE_CHECKING:
    from server.service import GameView
    from server.store.queries import LoggedMove

REPLAY_FORMAT = "russian-solitaire-replay"
REPLAY_VERSION = 1


def iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    return (
        datetime.fromtimestamp(ms / 1000, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def action_body(move: str, game: dict[str, Any]) -> str:
    """The response to an accepted action: `{"move": ..., "game": ...}`."""
    return json.dumps({"move": move, "game": game}, ensure_ascii=False)


def event_json(view: GameView, move: str | None, game: dict[str, Any] | None = None) -> str:
    """The message pushed to a game's watchers after an accepted action (`move` is None for an
    abandonment). The game is the public view: face-down cards are null."""
    return json.dumps(
        {
            "type": "event",
            "game_id": view.row.id,
            "version": view.row.version,
            "move": move,
            "game": game if game is not None else game_json(view),
        },
        ensure_ascii=False,
    )


def game_json(view: GameView) -> dict[str, Any]:
    row, game = view.row, view.game
    return {
        "id": row.id,
        "code": row.code,
        "rule": row.rule,
        "status": row.status,
        "player": {"id": row.player_id, "name": view.player_name},
        "score": game.score,
        "moves": game.moves,
        "elapsed_ms": view.elapsed_ms,
        "undo_available": game.undo_available,
        "version": row.version,
        "tableau": game.tableau_view(),
        "foundations": game.foundations_view(),
        "created_at": iso(row.created_ms),
        "finished_at": iso(row.finished_ms),
    }


def moves_json(view: GameView, log: list[LoggedMove]) -> dict[str, Any]:
    return {
        "game_id": view.row.id,
        "moves": [
            {"seq": m.seq, "move": m.move, "score": m.score, "at": iso(m.at_ms)} for m in log
        ],
    }


def deal_json(game: Game) -> list[list[str]]:
    return [[card_text(c) for c in column] for column in deal_columns(game.code.seed)]


def replay_json(view: GameView, log: list[LoggedMove]) -> dict[str, Any]:
    row, game = view.row, view.game
    started = row.started_ms
    finished = row.status != "active"
    return {
        "format": REPLAY_FORMAT,
        "version": REPLAY_VERSION,
        "game_id": row.id,
        "code": row.code,
        "rule": row.rule,
        "player": {"id": row.player_id, "name": view.player_name},
        "deal": deal_json(game) if finished else None,
        "actions": [
            {"move": m.move, "t_ms": max(0, m.at_ms - started) if started is not None else 0}
            for m in log
        ],
        "result": {
            "status": row.status,
            "score": game.score,
            "moves": game.moves,
            "elapsed_ms": view.elapsed_ms,
        },
        "created_at": iso(row.created_ms),
        "finished_at": iso(row.finished_ms),
    }
