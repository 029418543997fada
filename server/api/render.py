"""The wire format out: games, moves and replays as JSON-ready dicts."""

from __future__ import annotations

import functools
import json
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from server.engine import DealCode, card_text
from server.engine.codes import commitment
from server.services.races.standings import RaceView, Standing
from server.services.values import Applied, GameView
from server.store.records import GameRecord, LoggedMove


def json_response(
    data: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    return web.Response(
        text=json.dumps(data, ensure_ascii=False),
        status=status,
        content_type="application/json",
        headers=headers,
    )


def next_link(request: web.Request, cursor: str | None) -> dict[str, str]:
    if cursor is None:
        return {}
    url = request.rel_url.update_query(after=cursor)
    return {"Link": f'<{url}>; rel="next"'}


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


def action_json(applied: Applied) -> dict[str, Any]:
    """The answer to an accepted action: `{"move": ..., "game": ...}` (HTTP and WebSocket)."""
    return {"move": applied.move, "game": game_json(applied.view)}


def event_json(applied: Applied) -> dict[str, Any]:
    """The message pushed to a game's watchers after an accepted change (`move` is None for a
    change that is not a move: an abandonment, a hint). Face-down cards are null."""
    view = applied.view
    return {
        "type": "event",
        "game_id": view.row.id,
        "version": view.row.version,
        "move": applied.move,
        "game": game_json(view),
    }


@functools.lru_cache(maxsize=4096)
def deal_commitment(code: str) -> str:
    """The commitment of a stored code (SPEC 1.8.1), computed once per code."""
    return commitment(code)


def code_json(row: GameRecord, now_ms: int) -> str | None:
    """The game's deal code, or None while it is a secret (SPEC 2.3 "Fair play")."""
    return row.code if row.code_revealed(now_ms) else None


def game_json(view: GameView) -> dict[str, Any]:
    row, game = view.row, view.game
    return {
        "id": row.id,
        "code": code_json(row, view.now_ms),
        "deal_commitment": deal_commitment(row.code),
        "rule": row.rule,
        "chosen": row.chosen,
        "daily": row.daily,
        "status": row.status,
        "player": {"id": row.player_id, "name": view.player_name},
        "score": game.score,
        "ranked_score": row.ranked_score,
        "moves": game.moves,
        "elapsed_ms": view.elapsed_ms,
        "undo_available": game.undo_available,
        "version": row.version,
        "assisted": row.assisted,
        "race_id": row.race_id,
        "timed_out": row.timed_out,
        "tableau": game.tableau_view(),
        "foundations": game.foundations_view(),
        "created_at": iso(row.created_ms),
        "finished_at": iso(row.finished_ms),
    }


def moves_json(view: GameView, log: list[LoggedMove], more: bool) -> dict[str, Any]:
    """A page of the move log; `next` is the `after` of the next page (null on the last)."""
    return {
        "game_id": view.row.id,
        "version": view.row.version,
        "moves": [
            {"seq": m.seq, "move": m.move, "score": m.score, "at": iso(m.at_ms)} for m in log
        ],
        "next": log[-1].seq if more and log else None,
    }


def deal_json(code: DealCode) -> list[list[str]]:
    return [[card_text(c) for c in column] for column in code.columns()]


def replay_json(view: GameView, log: list[LoggedMove]) -> dict[str, Any]:
    """The replay (SPEC 2.4): the code and the deal only once the game has ended and its code
    is revealed; the commitment always."""
    row, game = view.row, view.game
    started = row.started_ms
    code = code_json(row, view.now_ms)
    return {
        "format": REPLAY_FORMAT,
        "version": REPLAY_VERSION,
        "game_id": row.id,
        "code": code,
        "deal_commitment": deal_commitment(row.code),
        "rule": row.rule,
        "player": {"id": row.player_id, "name": view.player_name},
        "deal": deal_json(game.code) if code is not None and row.status != "active" else None,
        "actions": [
            {"move": m.move, "t_ms": max(0, m.at_ms - started) if started is not None else 0}
            for m in log
        ],
        "result": {
            "status": row.status,
            "score": game.score,
            "ranked_score": row.ranked_score,
            "moves": game.moves,
            "elapsed_ms": view.elapsed_ms,
        },
        "created_at": iso(row.created_ms),
        "finished_at": iso(row.finished_ms),
    }


def race_json(view: RaceView) -> dict[str, Any]:
    """The race document (SPEC 2.6.1): standings carry progress, never a card; the code is null
    until the race has finished; an open race has no games, no standings."""
    race = view.race
    finished = race.status == "finished"
    games = {s.player_id: s.game_id for s in view.seats if s.game_id is not None}
    return {
        "id": race.id,
        "rule": race.rule,
        "status": view.status,
        "seats": race.seats,
        "public": race.public,
        "winnable": race.winnable,
        "time_limit_s": race.time_limit_s,
        "creator": {"id": race.creator_id, "name": view.creator_name},
        "players": [{"id": s.player_id, "name": s.name} for s in view.seats],
        "created_at": iso(race.created_ms),
        "starts_at": iso(race.starts_ms),
        "ended_at": iso(race.ended_ms),
        "now": iso(view.now_ms),
        "deal_commitment": deal_commitment(race.code),
        "code": race.code if finished else None,
        "games": games,
        "standings": [standing_json(s) for s in view.standings()],
    }


def standing_json(s: Standing) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "player": {"id": s.player_id, "name": s.name},
        "status": s.status,
        "foundation_cards": s.foundation_cards,
        "ranked_score": s.ranked_score,
        "moves": s.moves,
        "elapsed_ms": s.elapsed_ms,
        "finished_at": iso(s.finished_ms),
        "place": s.place,
    }
    if s.rating is not None:
        mu_before, sigma_before, mu_after, sigma_after = s.rating
        entry["rating"] = {
            "before": {
                "mu": mu_before,
                "sigma": sigma_before,
                "ordinal": mu_before - 3 * sigma_before,
            },
            "after": {"mu": mu_after, "sigma": sigma_after, "ordinal": mu_after - 3 * sigma_after},
        }
    return entry


def rating_json(mu: float, sigma: float) -> dict[str, float]:
    """An OpenSkill rating; its ordinal is mu - 3 sigma (the `openskill` package's)."""
    return {"mu": mu, "sigma": sigma, "ordinal": mu - 3 * sigma}
