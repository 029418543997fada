"""Helpers of the leaderboard, statistics and daily-deal tests: a clock the test controls, an
app built with it, finished games written straight into the database (to control ordering, ties
and times) as the server deals them (SPEC 2.3 "Fair play"), and reading boards and pages over
HTTP."""

from __future__ import annotations

import functools
import re
import secrets
import uuid
from datetime import UTC, datetime
from typing import Any

from aiohttp.test_utils import TestClient
from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from yarl import URL

from server.app import create_app
from server.engine import CARDS, DealCode, Game, Rule, card_text, parse_action
from server.engine.cards import place_text
from server.engine.snapshot import dumps
from server.settings import Settings
from server.store import stats as stats_rows
from server.store.db import make_engine
from server.store.models import DailyDeal, GameRow
from tests.api.helpers import local_game, vectors
from tests.conftest import ClientFactory

LINK_RE = re.compile(r'^<([^>]+)>; rel="next"$')


def ms(*parts: int) -> int:
    """Epoch milliseconds of a UTC date and time: ms(2030, 5, 15, 12)."""
    return int(datetime(*parts, tzinfo=UTC).timestamp() * 1000)  # type: ignore[misc]


# A Wednesday, in the middle of a month: its day, week (from Monday 13th) and month differ.
NOW = ms(2030, 5, 15, 12)
TODAY = "2030-05-15"
HOUR = 3_600_000
DAY = 24 * HOUR


class Clock:
    """A clock of epoch milliseconds that only moves when the test says so."""

    def __init__(self, now: int = NOW) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


async def clocked_client(
    aiohttp_client: ClientFactory, settings: Settings, clock: Clock
) -> TestClient[Any, Any]:
    """A test client of a new app whose services all read `clock`."""
    return await aiohttp_client(create_app(settings, clock=clock))


# ---------------------------------------------------------------- games in the database


@functools.cache
def won_game(rule: str) -> str:
    """The snapshot of a won game of `rule`: a whole game of games.json, replayed."""
    for vector in vectors():
        if vector["code"][4] == rule[0].upper() and "note" not in vector:
            return dumps(local_game(vector["code"], vector["actions"]))
    raise AssertionError(rule)


def won_snapshot(code: str) -> str:
    """A won game's snapshot of the deal of `code`: a won position does not depend on the deal
    (every card is on its foundation), so a whole game of games.json stands for it, with its
    code replaced (the snapshot's code is the deal a replay shows)."""
    fields = won_game(DealCode.parse(code).rule.value).split("|")
    fields[1] = code
    return "|".join(fields)


def dealt_snapshot(code: str, *, abandoned: bool) -> str:
    game = Game.deal(DealCode.parse(code))
    if abandoned:
        game.abandon()
    return dumps(game)


_seeds = iter(range(1000, 10**9))


def fresh_code(rule: str, version: int = 2) -> str:
    """A code of `rule` no other game of a test uses: an RU2 code of 128 random bits, as the
    server deals (random, winnable-only and daily deals), or an RU1 code (`version=1`) whose
    seed is above those of games.json."""
    if version == 2:
        return str(DealCode(Rule(rule), secrets.randbits(128), 2))
    return str(DealCode(Rule(rule), next(_seeds)))


class Db:
    """Writes games (and daily deals) straight into the test database, next to the app."""

    def __init__(self, url: str) -> None:
        self.engine = make_engine(url, pool_size=2)

    async def close(self) -> None:
        await self.engine.dispose()

    async def daily_deal(self, day: str, rule: str = "classic", *, draw: bool = True) -> str | None:
        """The code of the daily deal of `day` and `rule` as stored in `daily_deals` (the server
        keeps the secret code there). A day without one gets a fresh RU2 code stored, as when
        the server first draws a day's deal, unless `draw` is false."""
        async with self.engine.begin() as connection:
            found: str | None = await connection.scalar(
                select(DailyDeal.code).where(DailyDeal.day == day, DailyDeal.rule == rule)
            )
            if found is None and draw:
                found = fresh_code(rule)
                row = {"day": day, "rule": rule, "code": found, "created_ms": NOW}
                await connection.execute(insert(DailyDeal), [row])
        return found

    async def add(
        self,
        player_id: str,
        *,
        status: str = "won",
        rule: str = "classic",
        code: str | None = None,
        score: int | None = None,
        ranked_score: int | None = None,
        moves: int = 100,
        elapsed_ms: int | None = 60_000,
        finished_ms: int | None = NOW - DAY,
        created_ms: int | None = None,
        chosen: bool = False,
        secret_deal: bool | None = None,
        assisted: bool = False,
        daily: str | None = None,
        practice: bool = False,
        game_id: str | None = None,
    ) -> str:
        """Adds one game; finished unless `status` is active. Returns its id.

        By default the game is what the server now deals: a random deal (a fresh secret RU2
        code, `secret_deal`, not `chosen`), or with `daily` the day's deal of `rule` (stored in
        `daily_deals` if no deal was drawn for that day yet). A `chosen` game's code is the
        player's: an RU1 code unless given (for a won game the classic or relaxed code of
        games.json). A game that is neither chosen nor secret is one dealt before secret deals
        existed: give it an RU1 `code` and `secret_deal=False`.

        A won game scores 625 and ranks 625 (`ranked_score`); any other game ranks its score
        unless told otherwise (a score above 625 needs take-backs: give its `ranked_score`)."""
        if code is None:
            if daily is not None:
                code = await self.daily_deal(daily, rule)
            elif chosen:
                code = won_game_code(rule) if status == "won" else fresh_code(rule, 1)
            else:
                code = fresh_code(rule)
        assert code is not None
        if secret_deal is None:
            secret_deal = not chosen and DealCode.parse(code).version == 2
        if status == "won":
            snapshot = won_snapshot(code)
            score = 625 if score is None else score
            ranked_score = 625 if ranked_score is None else ranked_score
        else:
            snapshot = dealt_snapshot(code, abandoned=status == "abandoned")
            score = 0 if score is None else score
            if ranked_score is None:
                assert score <= 625, "a score above 625 comes with take-backs: set ranked_score"
                ranked_score = score
        if status == "active":
            finished_ms = elapsed_ms = None
        if created_ms is None:
            created_ms = (finished_ms if finished_ms is not None else NOW) - 10 * 60_000
        game_id = game_id or str(uuid.uuid4())
        values = {
            "id": game_id,
            "player_id": player_id,
            "code": code,
            "rule": rule,
            "chosen": chosen,
            "secret_deal": secret_deal,
            "status": status,
            "score": score,
            "ranked_score": ranked_score,
            "moves": moves,
            "version": moves,
            "snapshot": snapshot,
            "created_ms": created_ms,
            "started_ms": created_ms + 1000,
            "finished_ms": finished_ms,
            "elapsed_ms": elapsed_ms,
            "assisted": assisted,
            "daily": daily,
            "practice": practice,
            "active_ms": finished_ms if finished_ms is not None else created_ms + 1000,
        }
        async with self.engine.begin() as connection:
            await connection.execute(insert(GameRow), [values])
        if finished_ms is not None:
            await self.rebuild_stats(player_id)
        return game_id

    async def rebuild_stats(self, player_id: str) -> None:
        """The player's statistics written again from their games (`server.store.stats`): a
        game written here does not take the commit path that keeps them."""
        async with AsyncSession(self.engine) as session, session.begin():
            await stats_rows.rebuild(session, player_id)

    async def update(self, game_id: str, **values: Any) -> None:
        async with self.engine.begin() as connection:
            await connection.execute(update(GameRow).where(GameRow.id == game_id).values(**values))
            player_id = await connection.scalar(
                select(GameRow.player_id).where(GameRow.id == game_id)
            )
        if player_id is not None:
            await self.rebuild_stats(player_id)


def won_game_code(rule: str) -> str:
    """The code of the won game of games.json of `rule` (classic: RU1-C-AAAAAFN)."""
    return won_game(rule).split("|")[1]


def ordered_ids(n: int) -> list[str]:
    """`n` new game ids in the order the boards break full ties (the smaller id first)."""
    return sorted(str(uuid.uuid4()) for _ in range(n))


# ---------------------------------------------------------------- reading over HTTP


def next_link(headers: Any) -> str | None:
    """The path and query of the `Link: <...>; rel="next"` header, if any."""
    value = headers.get("Link")
    if value is None:
        return None
    found = LINK_RE.match(value)
    assert found, value
    url = URL(found.group(1))
    return url.path_qs if url.is_absolute() else str(url)


async def get_page(client: TestClient[Any, Any], path: str) -> tuple[dict[str, Any], str | None]:
    """A page (a leaderboard or a game listing) and the address in its Link header."""
    response = await client.get(path)
    text = await response.text()
    assert response.status == 200, (path, text)
    assert response.content_type == "application/json", text
    body: dict[str, Any] = await response.json()
    link = next_link(response.headers)
    assert (link is None) == (body["next"] is None), (body["next"], link)
    if link is not None:
        assert URL(link).query["after"] == body["next"], link
    return body, link


async def board(client: TestClient[Any, Any], **params: Any) -> dict[str, Any]:
    """One leaderboard page with `params` (booleans as true/false)."""
    query = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in params.items()}
    body, _ = await get_page(client, str(URL("/api/v1/leaderboards").with_query(query)))
    return body


def ids(body: dict[str, Any], key: str = "entries") -> list[str]:
    if key == "entries":
        return [entry["game_id"] for entry in body["entries"]]
    return [game["id"] for game in body[key]]


async def walk(
    client: TestClient[Any, Any],
    path: str,
    params: dict[str, Any],
    limit: int,
    *,
    key: str = "entries",
    by_link: bool = False,
) -> list[dict[str, Any]]:
    """Every page from the first one, following `next` (as `after`) or the Link header."""
    query = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in params.items()}
    address = str(URL(path).with_query({**query, "limit": str(limit)}))
    pages = []
    while True:
        body, link = await get_page(client, address)
        assert len(body[key]) <= limit
        pages.append(body)
        if body["next"] is None:
            return pages
        assert body[key], "a page with a next page is not empty"
        if by_link:
            assert link is not None
            address = link
        else:
            after = {**query, "limit": str(limit), "after": body["next"]}
            address = str(URL(path).with_query(after))


def legal_line(code: str, count: int, played: tuple[str, ...] = ()) -> list[str]:
    """`count` legal move texts from the deal of `code` after `played` (the first legal move
    each time), computed with the engine."""
    game = local_game(code, played)
    line = []
    for _ in range(count):
        for card in CARDS:
            places = game.targets(card)
            if places:
                text = f"{card_text(card)}-{place_text(places[0])}"
                break
        else:
            raise AssertionError("no legal move")
        game.play(parse_action(text))
        line.append(text)
    return line
