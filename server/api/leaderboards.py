"""`/api/v1/leaderboards`: the score and time boards (SPEC 2.5; the race board is in
`api/races.py`, a player's statistics and games in `api/players.py`)."""

from __future__ import annotations

from aiohttp import web

from server.api.render import iso, json_response, next_link
from server.api.schemas import BoardQueryIn, query_of
from server.engine import DealCode
from server.keys import BOARDS
from server.store.records import code_revealed

routes = web.RouteTableDef()


@routes.get("/api/v1/leaderboards")
async def leaderboards(request: web.Request) -> web.Response:
    q = query_of(request, BoardQueryIn)
    # A deal's board is of the deal's rule, whatever `rule` says.
    rule = DealCode.parse(q.code).rule if q.code is not None else q.rule
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
        "rule": rule.value,
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
            for rank, row in page.items
        ],
        "next": page.next,
    }
    return json_response(body, headers=next_link(request, page.next))
