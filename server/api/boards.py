"""Leaderboards, player statistics, a player's games and their export (SPEC 2.5)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, TypeVar

from aiohttp import web
from pydantic import ValidationError

from server.api.common import json_response, path_id, viewer
from server.api.problems import validation_errors, validation_problem
from server.api.schemas import BoardQueryIn, GamesQueryIn, LiveGamesQueryIn, Strict
from server.domain import code_revealed, utc_day
from server.engine import DealCode
from server.keys import BOARDS
from server.store.boards import GameFilter
from server.views import game_json, iso, replay_json

routes = web.RouteTableDef()
Q = TypeVar("Q", bound=Strict)


def query_of(request: web.Request, model: type[Q]) -> Q:
    try:
        return model.model_validate(dict(request.query))
    except ValidationError as exc:
        raise validation_problem(validation_errors(exc)) from None


def next_link(request: web.Request, cursor: str | None) -> dict[str, str]:
    if cursor is None:
        return {}
    url = request.rel_url.update_query(after=cursor)
    return {"Link": f'<{url}>; rel="next"'}


@routes.get("/api/v1/leaderboards")
async def leaderboards(request: web.Request) -> web.Response:
    q = query_of(request, BoardQueryIn)
    # A deal's board is of the deal's rule, whatever `rule` says.
    rule = (DealCode.parse(q.code).rule if q.code is not None else q.rule).value
    page = await request.app[BOARDS].leaderboard(
        rule=rule,
        by=q.by,
        period=q.period,
        assisted=q.assisted,
        code=q.code,
        daily=q.daily,
        limit=q.limit,
        after=q.after,
    )
    now = page.now_ms
    body = {
        "rule": rule,
        "by": q.by,
        "period": q.period,
        "code": page.code,
        "daily": q.daily,
        "assisted": q.assisted,
        "entries": [
            {
                "rank": rank,
                "player": {"id": row.player_id, "name": row.player_name},
                "game_id": row.game_id,
                "code": (
                    row.code if code_revealed(row.secret_deal, row.daily, row.status, now) else None
                ),
                "status": row.status,
                "score": row.score,
                "ranked_score": row.ranked_score,
                "time_ms": row.elapsed_ms,
                "moves": row.moves,
                "finished_at": iso(row.finished_ms),
            }
            for rank, row in page.rows
        ],
        "next": page.next,
    }
    return json_response(body, headers=next_link(request, page.next))


@routes.get("/api/v1/players/{id}/stats")
async def stats(request: web.Request) -> web.Response:
    player_id = path_id(request)
    name, per_rule = await request.app[BOARDS].stats(player_id)
    return json_response({"player": {"id": player_id, "name": name}, "rules": per_rule})


async def _filter(request: web.Request, player_id: str, q: GamesQueryIn) -> GameFilter:
    def ms(moment: datetime | None) -> int | None:
        if moment is None:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1000)

    asker = await viewer(request)
    others = asker is None or asker.id != player_id
    return GameFilter(
        player_id=player_id,
        rule=q.rule.value if q.rule is not None else None,
        status=q.statuses(),
        since_ms=ms(q.since),
        until_ms=ms(q.until),
        hide_daily_from=utc_day(request.app[BOARDS].clock()) if others else None,
    )


@routes.get("/api/v1/players/{id}/games")
async def player_games(request: web.Request) -> web.Response:
    player_id = path_id(request)
    q = query_of(request, GamesQueryIn)
    f = await _filter(request, player_id, q)
    page = await request.app[BOARDS].games(f, after=q.after, limit=q.limit)
    body: dict[str, Any] = {
        "games": [game_json(view) for view in page.games],
        "next": page.next,
    }
    return json_response(body, headers=next_link(request, page.next))


@routes.get("/api/v1/players/{id}/games/export")
async def export(request: web.Request) -> web.StreamResponse:
    """The player's finished games as NDJSON replays, streamed a chunk at a time."""
    player_id = path_id(request)
    q = query_of(request, GamesQueryIn)
    paging = [name for name in ("limit", "after") if name in request.query]
    if paging:
        raise validation_problem(
            [
                {"field": name, "message": "the export has no pages: it streams every game"}
                for name in paging
            ]
        )
    f = await _filter(request, player_id, q)
    finished = tuple(s for s in (f.status or ("won", "abandoned")) if s != "active")
    f = replace(f, status=finished or ("none",))
    games = await request.app[BOARDS].export(f)
    response = web.StreamResponse(
        headers={
            "Content-Type": "application/x-ndjson",
            "Content-Disposition": f'attachment; filename="games-{player_id}.ndjson"',
        }
    )
    await response.prepare(request)
    async for view, log in games:
        line = json.dumps(replay_json(view, log), ensure_ascii=False) + "\n"
        await response.write(line.encode())
    await response.write_eof()
    return response


@routes.get("/api/v1/live/games")
async def live_games(request: web.Request) -> web.Response:
    """Games in play that anyone may watch, most recently active first, paged."""
    q = query_of(request, LiveGamesQueryIn)
    boards = request.app[BOARDS]
    after = None
    if q.after is not None:
        active, game_id = boards.cursors.decode(q.after, "live", (int, str))
        after = (active, game_id)
    views, cursor = await boards.live_games(limit=q.limit, after=after)
    next_cursor = boards.cursors.encode(list(cursor), "live") if cursor is not None else None
    body = {"games": [game_json(view) for view in views], "next": next_cursor}
    return json_response(body, headers=next_link(request, next_cursor))
