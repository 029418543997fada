"""The daily deals' commitments a week ahead (SPEC 1.8.2; issue 22): `GET /api/v1/daily/upcoming`
lists the next 7 UTC days' commitments, never a code, drawn and stored ahead by the background
draw; when the clock reaches each day, its daily deal is the one committed to. On both
databases, with a clock the test moves."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from server.engine import commitment
from server.keys import SOLVER
from server.services import deals
from server.settings import Settings
from tests.api.boards_helpers import DAY, NOW, TODAY, Clock, Db, clocked_client, ms
from tests.api.helpers import problem
from tests.conftest import Api, ClientFactory

UPCOMING = "/api/v1/daily/upcoming"
WEEK = [f"2030-05-{day}" for day in range(16, 23)]
"""The 7 days after TODAY (2030-05-15)."""


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Db]:
    found = Db(database_url)
    yield found
    await found.close()


async def upcoming(tapi: Api, rule: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = await tapi.get(UPCOMING + (f"?rule={rule}" if rule else ""))
    return body


async def test_the_commitments_of_the_coming_week_are_those_of_its_deals(
    aiohttp_client: ClientFactory,
    settings: Settings,
    timed: TestClient[Any, Any],
    tapi: Api,
    clock: Clock,
    db: Db,
) -> None:
    # Nothing is drawn yet (the first round of the background draw is a minute away): the
    # request draws the week of its rule, as a request for today's deal draws it.
    first = await upcoming(tapi, "relaxed")
    for day in WEEK:
        assert await db.daily_deal(day, "relaxed", draw=False) is not None, day
        assert await db.daily_deal(day, "classic", draw=False) is None, day

    # One round of the background draw: today and the 7 days after it, both rules.
    await timed.app[SOLVER].draw_ahead()
    for day in [TODAY, *WEEK]:
        for rule in ("classic", "relaxed"):
            assert await db.daily_deal(day, rule, draw=False) is not None, (day, rule)

    classic = await upcoming(tapi)
    assert classic == await upcoming(tapi, "classic")
    relaxed = await upcoming(tapi, "relaxed")
    assert relaxed == first, "the round kept the deals the request drew"
    for rule, listed in (("classic", classic), ("relaxed", relaxed)):
        assert set(listed) == {"rule", "days"} and listed["rule"] == rule, listed
        assert [d["date"] for d in listed["days"]] == WEEK, listed
        for entry in listed["days"]:
            assert set(entry) == {"date", "deal_commitment"}, entry  # never a code
            code = await db.daily_deal(entry["date"], rule, draw=False)
            assert code is not None and commitment(code) == entry["deal_commitment"]
    today = await tapi.get("/api/v1/daily")
    assert today["deal_commitment"] not in [d["deal_commitment"] for d in classic["days"]]
    text = await (await timed.get(UPCOMING)).text()
    for day in [TODAY, *WEEK]:
        code = await db.daily_deal(day, "classic", draw=False)
        assert code is not None and code not in text and code.split("-", 2)[2] not in text

    # Another process of the same database answers the same, from the store.
    other = Api(await clocked_client(aiohttp_client, settings, Clock(NOW)))
    assert await upcoming(other) == classic
    assert await upcoming(other, "relaxed") == relaxed

    # Day by day, each day's daily deal is the one committed to a week before.
    for k, day in enumerate(WEEK, 1):
        clock.now = NOW + k * DAY
        for rule, listed in (("classic", classic), ("relaxed", relaxed)):
            daily = await tapi.get(f"/api/v1/daily?rule={rule}")
            assert daily["date"] == day and daily["code"] is None, daily
            assert daily["deal_commitment"] == listed["days"][k - 1]["deal_commitment"]
            assert await tapi.get(f"/api/v1/daily?rule={rule}&date={day}") == daily
    # On the 22nd, the list runs to the 29th: the day not drawn yet is drawn by the request;
    # the days already listed keep their commitments.
    assert await db.daily_deal("2030-05-29", "classic", draw=False) is None
    later = await upcoming(tapi)
    assert [d["date"] for d in later["days"]] == [f"2030-05-{day}" for day in range(23, 30)]
    clock.now = ms(2030, 5, 23, 0, 0, 0)
    assert (await tapi.get("/api/v1/daily"))["deal_commitment"] == (
        later["days"][0]["deal_commitment"]
    )


async def test_the_background_draw_runs_by_itself(
    aiohttp_client: ClientFactory,
    settings: Settings,
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
    db: Db,
) -> None:
    """Started with the app: its first round (here at once) draws the week of both rules, with
    no request asking."""
    monkeypatch.setattr(deals, "DRAW_AHEAD_FIRST_S", 0.0)
    tapi = Api(await clocked_client(aiohttp_client, settings, clock))
    loop = asyncio.get_running_loop()
    until = loop.time() + 30
    while True:
        drawn = [
            await db.daily_deal(day, rule, draw=False)
            for day in [TODAY, *WEEK]
            for rule in ("classic", "relaxed")
        ]
        if all(code is not None for code in drawn):
            break
        assert loop.time() < until, "the background draw did not draw the week"
        await asyncio.sleep(0.1)
    body = await upcoming(tapi, "relaxed")
    assert [d["date"] for d in body["days"]] == WEEK, body


async def test_bad_parameters_are_refused(timed: TestClient[Any, Any]) -> None:
    for query in ("?rule=spider", "?rule=", "?date=2030-05-16", "?days=3"):
        await problem(await timed.get(UPCOMING + query), 422)
