"""`/api/v1/deals/{code}/winnable` (the solver's verdict on a deal), `/api/v1/daily` (the
daily deal) and `/api/v1/daily/upcoming` (the coming days' commitments), SPEC 1.8.2, 2.3, 2.5:
the deal's noun, as in `services/deals.py` and `store/deals.py`."""

from __future__ import annotations

from datetime import date

from aiohttp import web

from server.api.access import client_of
from server.api.params import flag
from server.api.problems import invalid, validation_problem
from server.api.render import daily_json, json_response, upcoming_json, verdict_json
from server.engine import DealCode, NotationError, Rule
from server.keys import SOLVER

routes = web.RouteTableDef()


@routes.get("/api/v1/deals/{code}/winnable")
async def winnable(request: web.Request) -> web.Response:
    """The solver's verdict on a deal: winnable, unwinnable or unknown (within its budget)."""
    try:
        code = DealCode.parse(request.match_info["code"])
    except NotationError as exc:
        raise invalid("code", str(exc)) from None
    unknown = set(request.query) - {"take_backs"}
    if unknown:
        raise validation_problem(
            [{"field": name, "message": "unknown parameter"} for name in sorted(unknown)]
        )
    take_backs = flag(request.query, "take_backs", default=True)
    client = await client_of(request)
    verdict = await request.app[SOLVER].verdict(code, take_backs, client)
    return json_response(verdict_json(code, take_backs, verdict))


@routes.get("/api/v1/daily")
async def daily(request: web.Request) -> web.Response:
    """The daily deal of a rule and UTC date (today by default), the same for every player and
    process, certified winnable. Its code is shown only once the day has ended; until then its
    commitment binds the server to it (SPEC 2.3, 2.5; `SolverService.daily`)."""
    unknown = set(request.query) - {"rule", "date"}
    if unknown:
        raise validation_problem(
            [{"field": name, "message": "unknown parameter"} for name in unknown]
        )
    text = request.query.get("rule", "classic")
    if text not in ("classic", "relaxed"):
        raise invalid("rule", "expected classic or relaxed")
    day = request.query.get("date")
    if day is not None and not is_date(day):
        raise invalid("date", "expected a date YYYY-MM-DD")
    return json_response(daily_json(await request.app[SOLVER].daily(Rule(text), day)))


@routes.get("/api/v1/daily/upcoming")
async def upcoming(request: web.Request) -> web.Response:
    """The commitments of the daily deals of a rule on the 7 UTC days after today, published a
    week ahead so that a day's deal is fixed before anyone knows who will play it (SPEC 1.8.2;
    `SolverService.upcoming`). Never a code, and never today's (`GET /api/v1/daily` has it).
    Each day's deal is drawn and certified ahead by the background draw; a day not drawn yet is
    not waited for: `503` with `Retry-After` (`solver-unavailable`) while its draw goes on."""
    unknown = set(request.query) - {"rule"}
    if unknown:
        raise validation_problem(
            [{"field": name, "message": "unknown parameter"} for name in sorted(unknown)]
        )
    text = request.query.get("rule", "classic")
    if text not in ("classic", "relaxed"):
        raise invalid("rule", "expected classic or relaxed")
    return json_response(upcoming_json(text, await request.app[SOLVER].upcoming(Rule(text))))


def is_date(text: str) -> bool:
    """Whether `text` is a real calendar date written YYYY-MM-DD."""
    try:
        return date.fromisoformat(text).isoformat() == text
    except ValueError:
        return False
