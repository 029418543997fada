"""`/api/v1/leaderboards`: the score, time and moves boards (SPEC 2.5; the race board is in
`api/races.py`, a player's statistics and games in `api/players.py`)."""

from __future__ import annotations

from aiohttp import web

from server.api.render import board_page_json, json_response, next_link
from server.api.schemas import BoardQueryIn, query_of
from server.keys import BOARDS

routes = web.RouteTableDef()


@routes.get("/api/v1/leaderboards")
async def leaderboards(request: web.Request) -> web.Response:
    q = query_of(request, BoardQueryIn)
    page = await request.app[BOARDS].leaderboard(
        rule=q.rule,
        by=q.by,
        period=q.period,
        assisted=q.assisted,
        code=q.code,
        daily=q.daily,
        limit=q.limit,
        after=q.after,
    )
    return json_response(board_page_json(page), headers=next_link(request, page.next))
