"""Leaderboards, player statistics, a player's games and their export, and the daily deal
(SPEC 1.5 ranked score, 2.3 "Fair play", 2.5; README "Solver, hints, leaderboards, statistics,
the daily deal").

Finished games are mostly written straight into the database (tests/api/boards_helpers.py) to
control scores, ranked scores, times, ties and finishing moments, as the server deals them: a
random game is a secret RU2 deal, a daily game plays the day's deal of `daily_deals`. The whole
games of games.json are played over HTTP where the result must be real (replays, statistics, the
per-deal board). The server's clock is replaced by one the test moves (calendar periods, daily
streaks, the daily deal's day). The test reads a daily deal's secret code from the database
where it needs the deal's cards (to play legal moves) before the day reveals it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp import WSMsgType
from aiohttp.test_utils import TestClient
from yarl import URL

from server.engine import DealCode, Rule
from server.engine.codes import commitment
from server.settings import Settings
from tests.api.boards_helpers import (
    DAY,
    HOUR,
    NOW,
    TODAY,
    Clock,
    Db,
    board,
    clocked_client,
    fresh_code,
    get_page,
    ids,
    legal_line,
    ms,
    ordered_ids,
    walk,
    won_game_code,
)
from tests.api.helpers import GAME_KEYS, action_body, local_game, play, problem, vectors
from tests.conftest import Api, ClientFactory

BOARDS = "/api/v1/leaderboards"
CODE_RE = re.compile(r"^RU2-([CR])(-[A-Z]{7}){4}$")
COMMITMENT_RE = re.compile(r"^[0-9a-f]{64}$")
ENTRY_KEYS = {
    "rank",
    "player",
    "game_id",
    "code",
    "status",
    "score",
    "ranked_score",
    "time_ms",
    "moves",
    "finished_at",
}
STATS_KEYS = {
    "played",
    "won",
    "win_rate",
    "best_score",
    "best_ranked_score",
    "best_time_ms",
    "fewest_moves",
    "current_streak",
    "longest_streak",
    "clean_wins",
    "daily_streak",
    "race",
}
NO_RACE = {"mu": 25.0, "sigma": 25 / 3, "ordinal": 0.0, "races": 0}  # the rating before a race
VECTOR_CODE = "RU1-C-AAAAAFN"  # the classic games of games.json
assert won_game_code("classic") == VECTOR_CODE


def iso(moment: int) -> str:
    return datetime.fromtimestamp(moment / 1000, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def finished_ms(entry: dict[str, Any]) -> int:
    text = entry["finished_at"]
    assert isinstance(text, str) and text.endswith("Z"), text
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def sort_key(by: str, entry: dict[str, Any]) -> tuple[tuple[int, ...], int, str]:
    """The order of a board: its measure (by=score: the ranked score highest first, a won game
    before an abandoned one at equal ranked score), the earlier finish, the id."""
    measure = {
        "score": (-entry["ranked_score"], entry["status"] != "won"),
        "time": (entry["time_ms"],),
        "moves": (entry["moves"],),
    }[by]
    return measure, finished_ms(entry), entry["game_id"]


def entries_of(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry for page in pages for entry in page["entries"]]


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Db]:
    found = Db(database_url)
    yield found
    await found.close()


async def players(api: Api, *names: str) -> list[tuple[str, dict[str, str]]]:
    return [await api.player(name) for name in names]


async def paced_play(
    api: Api, clock: Clock, auth: dict[str, str], game_id: str, actions: list[str], step: int
) -> None:
    """Plays `actions`, the clock moving `step` ms before every action after the first."""
    for index, text in enumerate(actions):
        if index:
            clock.now += step
        result = await api.act(auth, game_id, action_body(text))
        assert result["move"] == text


# ================================================================ leaderboards: order


async def test_score_board_orders_breaks_ties_and_leaves_out_other_games(
    client: TestClient[Any, Any], api: Api, db: Db
) -> None:
    (ana, _), (bob, _) = await players(api, "Ana", "Bob")
    t = NOW - 10 * HOUR
    tie_a, tie_b = ordered_ids(2)
    code3 = fresh_code("classic")
    # The board compares ranked scores: a won game ranks 625 (so a take-back's extra points
    # do not help g1), won games first at equal ranked score, then the earlier finish.
    g1 = await db.add(ana, score=635, moves=89, elapsed_ms=70_000, finished_ms=t + 5)
    g2 = await db.add(bob, score=625, moves=87, elapsed_ms=80_000, finished_ms=t + 3)
    g3 = await db.add(ana, code=code3, score=625, moves=90, elapsed_ms=90_000, finished_ms=t + 1)
    # Every card reached its foundation once, one was taken back, then the game was given up:
    # it ranks 625, after every won game, although it finished first and scored more.
    g9 = await db.add(bob, status="abandoned", score=655, ranked_score=625, finished_ms=t - 2)
    g4 = await db.add(bob, status="abandoned", score=400, elapsed_ms=5_000, finished_ms=t + 2)
    g5 = await db.add(ana, status="abandoned", score=400, elapsed_ms=6_000, finished_ms=t)
    # Farmed with take-backs: 900 points, ranked by its 300.
    farmed = await db.add(bob, status="abandoned", score=900, ranked_score=300, finished_ms=t)
    # A full tie (ranked score and finishing moment): the smaller id first, whatever the
    # insert order.
    await db.add(bob, status="abandoned", score=250, finished_ms=t + 4, game_id=tie_b)
    await db.add(ana, status="abandoned", score=250, finished_ms=t + 4, game_id=tie_a)
    g8 = await db.add(bob, status="abandoned", score=0, finished_ms=t + 6)
    # Never on the global classic board: a chosen code (RU1 or RU2), a daily deal (of a past
    # day, so its code is no secret any more), a game dealt before secret deals existed (its
    # RU1 code was public), a hint, another rule, a game still in progress.
    await db.add(ana, finished_ms=t - 1, chosen=True, code=fresh_code("classic", 1))
    await db.add(ana, finished_ms=t - 1, chosen=True, code=fresh_code("classic"))
    await db.add(bob, finished_ms=t - 1, daily="2030-05-01")
    await db.add(bob, finished_ms=t - 1, code=fresh_code("classic", 1), secret_deal=False)
    await db.add(ana, finished_ms=t - 1, assisted=True)
    relaxed = await db.add(bob, rule="relaxed", finished_ms=t - 1)
    await db.add(ana, status="active", score=600)

    response = await client.get(f"{BOARDS}?rule=classic&by=score")
    assert response.status == 200
    assert "Link" not in response.headers
    body = await response.json()
    assert {k: v for k, v in body.items() if k != "entries"} == {
        "rule": "classic",
        "by": "score",
        "period": "all",
        "code": None,
        "daily": None,
        "assisted": False,
        "next": None,
    }
    assert ids(body) == [g3, g2, g1, g9, g5, g4, farmed, tie_a, tie_b, g8]
    assert [e["rank"] for e in body["entries"]] == list(range(1, 11))
    assert [(e["status"], e["score"], e["ranked_score"]) for e in body["entries"]] == [
        ("won", 625, 625),
        ("won", 625, 625),
        ("won", 635, 625),
        ("abandoned", 655, 625),
        ("abandoned", 400, 400),
        ("abandoned", 400, 400),
        ("abandoned", 900, 300),
        ("abandoned", 250, 250),
        ("abandoned", 250, 250),
        ("abandoned", 0, 0),
    ]
    first = body["entries"][0]
    assert set(first) == ENTRY_KEYS
    assert first["player"] == {"id": ana, "name": "Ana"}
    # A random game's code is revealed once it has ended.
    assert (first["code"], first["time_ms"], first["moves"]) == (code3, 90_000, 90)
    assert first["finished_at"] == iso(t + 1)
    assert all(e["code"] is not None and e["code"].startswith("RU2-C-") for e in body["entries"])
    assert len({e["code"] for e in body["entries"]}) == 10, "every random game its own deal"
    assert body["entries"][1]["player"] == {"id": bob, "name": "Bob"}
    assert body["entries"][2]["player"] == {"id": ana, "name": "Ana"}
    # The defaults are rule=classic, by=score.
    assert ids(await board(client)) == ids(body)
    assert ids(await board(client, rule="relaxed")) == [relaxed]


async def test_time_and_moves_boards_rank_won_games_only(
    client: TestClient[Any, Any], api: Api, db: Db
) -> None:
    (ana, _), (bob, _) = await players(api, "Ana", "Bob")
    t = NOW - 10 * HOUR
    w1 = await db.add(ana, elapsed_ms=50_000, moves=120, finished_ms=t + 1)
    w2 = await db.add(bob, elapsed_ms=40_000, moves=150, finished_ms=t + 2)
    w3 = await db.add(ana, elapsed_ms=40_000, moves=120, finished_ms=t)
    w4 = await db.add(bob, score=635, elapsed_ms=90_000, moves=100, finished_ms=t + 3)
    # Abandoned games (however fast or short), chosen deals, daily deals, games dealt before
    # secret deals existed and hinted games are not on these boards.
    given_up = await db.add(ana, status="abandoned", elapsed_ms=1_000, moves=3, finished_ms=t)
    await db.add(bob, elapsed_ms=1, moves=1, finished_ms=t, chosen=True)
    await db.add(bob, elapsed_ms=1, moves=1, finished_ms=t, daily="2030-05-14")
    await db.add(
        bob, elapsed_ms=1, moves=1, finished_ms=t, code=fresh_code("classic", 1), secret_deal=False
    )
    await db.add(bob, elapsed_ms=1, moves=1, finished_ms=t, assisted=True)

    by_time = await board(client, by="time")
    assert ids(by_time) == [w3, w2, w1, w4]
    assert [e["time_ms"] for e in by_time["entries"]] == [40_000, 40_000, 50_000, 90_000]
    assert by_time["by"] == "time"
    by_moves = await board(client, by="moves")
    assert ids(by_moves) == [w4, w3, w1, w2]
    assert [e["moves"] for e in by_moves["entries"]] == [100, 120, 120, 150]
    assert [e["rank"] for e in by_moves["entries"]] == [1, 2, 3, 4]
    # The abandoned game is on the score board, after the won ones (all ranked 625, so in
    # finishing order: w4's take-back points do not count).
    assert ids(await board(client, by="score")) == [w3, w1, w2, w4, given_up]


async def test_per_deal_board_ranks_every_clean_game_of_the_deal(
    timed: TestClient[Any, Any], tapi: Api, db: Db
) -> None:
    """On the test's clock (2030-05-15), so that the daily deal of 2030-05-10 is revealed."""
    client = timed
    (ana, _), (bob, _) = await players(tapi, "Ana", "Bob")
    t = NOW - 10 * HOUR
    day = "2030-05-10"
    # The deal: the classic daily deal of a past day (its code revealed when the day ended),
    # which players have chosen since (a chosen game may give any RU1 or RU2 code).
    deal = await db.daily_deal(day)
    assert deal is not None and deal.startswith("RU2-C-")
    daily = await db.add(
        bob, status="abandoned", daily=day, score=200, finished_ms=ms(2030, 5, 10, 10)
    )
    # A second attempt of the day: practice, on no board.
    await db.add(
        bob,
        status="abandoned",
        daily=day,
        score=400,
        practice=True,
        finished_ms=ms(2030, 5, 10, 11),
    )
    chosen = await db.add(
        ana, code=deal, chosen=True, elapsed_ms=70_000, moves=95, finished_ms=t + 1
    )
    # A take-back scored 10 more: ranked 625 like every won game.
    again = await db.add(
        bob, code=deal, chosen=True, score=635, elapsed_ms=80_000, moves=90, finished_ms=t + 2
    )
    given_up = await db.add(
        ana, status="abandoned", code=deal, chosen=True, score=300, finished_ms=t
    )
    hinted = await db.add(bob, code=deal, chosen=True, assisted=True, finished_ms=t)
    # Other deals, also the same seed under the other rule, and a game in progress.
    other_rule = str(DealCode.parse(deal).with_rule(Rule.RELAXED))
    await db.add(ana, code=fresh_code("classic"), chosen=True, finished_ms=t)
    await db.add(
        ana, status="abandoned", code=other_rule, rule="relaxed", chosen=True, finished_ms=t
    )
    await db.add(ana, status="active", code=deal, chosen=True)

    body = await board(client, code=deal.lower(), rule="relaxed")
    assert (body["code"], body["rule"], body["daily"]) == (deal, "classic", None)
    assert ids(body) == [chosen, again, given_up, daily]
    assert [e["code"] for e in body["entries"]] == [deal] * 4
    assert [(e["score"], e["ranked_score"]) for e in body["entries"]] == [
        (625, 625),
        (635, 625),
        (300, 300),
        (200, 200),
    ]
    assert ids(await board(client, code=deal, by="time")) == [chosen, again]
    assert ids(await board(client, code=deal, by="moves")) == [again, chosen]
    assert ids(await board(client, code=deal, assisted=True)) == [hinted]
    # The daily board of that day (by date and rule) ranks the daily game finished within it
    # and shows the code, its day being over; a day or a rule with no deal drawn is empty.
    by_day = await board(client, daily=day)
    assert (by_day["code"], by_day["rule"], by_day["daily"]) == (deal, "classic", day)
    assert ids(by_day) == [daily]
    assert [e["code"] for e in by_day["entries"]] == [deal]
    for params in ({"daily": "2030-05-11"}, {"daily": day, "rule": "relaxed"}):
        empty = await board(client, **params)
        assert (empty["code"], empty["entries"], empty["next"]) == (None, [], None), params
    # `code` and `daily` together are refused: the daily board is addressed by date and rule.
    await refused(client, BOARDS, {"code": deal, "daily": day})

    # A random deal, revealed when its game ended, then chosen by another player: both are on
    # its board, only the random game on the global board (no chosen or daily game is).
    code = fresh_code("classic")
    random = await db.add(bob, code=code, finished_ms=t + 3)
    replay = await db.add(ana, code=code, chosen=True, finished_ms=t + 4)
    assert ids(await board(client, code=code)) == [random, replay]
    assert ids(await board(client)) == [random]


async def test_assisted_games_are_ranked_only_on_assisted_boards(
    client: TestClient[Any, Any], api: Api, db: Db
) -> None:
    (ana, _), (bob, _) = await players(api, "Ana", "Bob")
    t = NOW - 10 * HOUR
    deal = fresh_code("classic")
    clean1 = await db.add(ana, code=deal, score=625, elapsed_ms=60_000, finished_ms=t)
    clean2 = await db.add(bob, status="abandoned", score=100, finished_ms=t + 1)
    hint1 = await db.add(bob, score=635, elapsed_ms=10_000, finished_ms=t + 2, assisted=True)
    hint2 = await db.add(ana, status="abandoned", score=500, finished_ms=t + 3, assisted=True)
    await db.add(ana, status="abandoned", score=600, finished_ms=t, assisted=True, chosen=True)
    # Clean1's deal, revealed when it ended, chosen by Bob, who used a hint.
    replay = await db.add(
        bob, code=deal, chosen=True, elapsed_ms=5_000, finished_ms=t + 4, assisted=True
    )
    assert ids(await board(client)) == [clean1, clean2]
    assert ids(await board(client, assisted=False)) == [clean1, clean2]
    assisted = await board(client, assisted=True)
    assert assisted["assisted"] is True
    assert ids(assisted) == [hint1, hint2]
    assert ids(await board(client, by="time")) == [clean1]
    assert ids(await board(client, by="time", assisted=True)) == [hint1]
    assert ids(await board(client, by="moves", assisted=True)) == [hint1]
    # Per-deal boards too: a hint keeps a game off the clean board of its deal.
    assert ids(await board(client, code=deal)) == [clean1]
    assert ids(await board(client, code=deal, assisted=True)) == [replay]


async def test_games_played_over_http_on_the_per_deal_board(
    timed: TestClient[Any, Any], tapi: Api, clock: Clock
) -> None:
    """The three classic games of games.json by three players, at three paces."""
    games = vectors()
    (ana, a_auth), (bob, b_auth), (cyd, c_auth) = await players(tapi, "Ana", "Bob", "Cyd")
    played = {}
    for (pid, auth), vector, step in (
        ((ana, a_auth), games[0], 1000),  # 625 points, 87 moves, 86 s
        ((bob, b_auth), games[1], 500),  # 635 points (a take-back), 89 moves, 44 s
        ((cyd, c_auth), games[2], 2000),  # 625 points, 89 moves (2 undos), 180 s
    ):
        clock.now += 60_000
        game = await tapi.game(auth, code=vector["code"])
        await paced_play(tapi, clock, auth, game["id"], vector["actions"], step)
        played[pid] = game["id"]
    # And a game that Ana gives up after a few moves of the same deal.
    clock.now += 60_000
    game = await tapi.game(a_auth, code=VECTOR_CODE)
    await paced_play(tapi, clock, a_auth, game["id"], games[0]["actions"][:6], 1000)
    abandon = await timed.post(f"/api/v1/games/{game['id']}/abandon", headers=a_auth)
    assert abandon.status == 200
    abandoned = await abandon.json()
    # No take-back in those six moves: its ranked score is its score.
    assert 0 < abandoned["ranked_score"] == abandoned["score"] < 625

    # Ranked by ranked score: Bob's take-back scored 10 more, not a better rank; the three wins
    # tie at 625 and go in finishing order.
    by_score = await board(timed, code=VECTOR_CODE)
    assert ids(by_score) == [played[ana], played[bob], played[cyd], game["id"]]
    assert [(e["status"], e["score"], e["ranked_score"]) for e in by_score["entries"]] == [
        ("won", 625, 625),
        ("won", 635, 625),
        ("won", 625, 625),
        ("abandoned", abandoned["score"], abandoned["ranked_score"]),
    ]
    by_time = await board(timed, code=VECTOR_CODE, by="time")
    assert ids(by_time) == [played[bob], played[ana], played[cyd]]
    assert [e["time_ms"] for e in by_time["entries"]] == [44_000, 86_000, 180_000]
    by_moves = await board(timed, code=VECTOR_CODE, by="moves")
    assert ids(by_moves) == [played[ana], played[bob], played[cyd]]
    assert [e["moves"] for e in by_moves["entries"]] == [87, 89, 89]
    for entry in by_score["entries"]:
        game_body = await tapi.get(f"/api/v1/games/{entry['game_id']}")
        assert entry["finished_at"] == game_body["finished_at"]
        assert entry["player"] == game_body["player"]
        assert entry["code"] == game_body["code"] == VECTOR_CODE
        assert (entry["score"], entry["ranked_score"]) == (
            game_body["score"],
            game_body["ranked_score"],
        )
    # Every one chose its deal: the global boards are empty.
    for by in ("score", "time", "moves"):
        assert ids(await board(timed, by=by)) == []


# ================================================================ leaderboards: periods


async def test_periods_are_calendar_periods_in_utc(
    timed: TestClient[Any, Any], tapi: Api, db: Db, clock: Clock
) -> None:
    (ana, _) = await tapi.player("Ana")
    day = ms(2030, 5, 15)  # clock: Wednesday 2030-05-15 12:00 UTC
    week = ms(2030, 5, 13)  # Monday
    month = ms(2030, 5, 1)
    moments = {
        "now": NOW - 1,
        "midnight": day,
        "yesterday": day - 1,
        "monday": week,
        "sunday": week - 1,
        "first": month,
        "april": month - 1,
        "last year": ms(2029, 12, 31, 23, 59),
    }
    game_of = {}
    for index, (name, moment) in enumerate(moments.items()):
        # Every won game ranks 625 (whatever its take-back points), so the score board is in
        # finishing order; the games that finished earlier are also faster and shorter, so
        # that the order is the same on every board: the earliest finish first.
        game_of[name] = await db.add(
            ana, score=635 - index, elapsed_ms=20_000 - index, moves=120 - index, finished_ms=moment
        )
    names = list(moments)

    def in_order(kept: list[str]) -> list[str]:
        return [game_of[n] for n in reversed(kept)]

    expected = {
        "day": names[:2],
        "week": names[:4],
        "month": names[:6],
        "all": names,
    }
    for period, kept in expected.items():
        for by in ("score", "time", "moves"):
            body = await board(timed, period=period, by=by)
            assert body["period"] == period
            assert ids(body) == in_order(kept), (period, by)

    # The next midnight starts a new day, not a new week.
    clock.now = ms(2030, 5, 16)
    assert ids(await board(timed, period="day")) == []
    assert ids(await board(timed, period="week")) == in_order(names[:4])
    # Sunday night is still that week; Monday starts the next.
    clock.now = ms(2030, 5, 20) - 1
    assert ids(await board(timed, period="week")) == in_order(names[:4])
    clock.now = ms(2030, 5, 20)
    assert ids(await board(timed, period="week")) == []
    assert ids(await board(timed, period="month")) == in_order(names[:6])
    # A week that began in the previous month: the week keeps May 28, the month does not.
    late_may = await db.add(ana, score=100, finished_ms=ms(2030, 5, 28, 9))
    june = await db.add(ana, score=50, finished_ms=ms(2030, 6, 1, 9))
    clock.now = ms(2030, 6, 2, 18)  # a Sunday
    assert ids(await board(timed, period="week")) == [late_may, june]
    assert ids(await board(timed, period="month")) == [june]
    assert ids(await board(timed, period="day")) == []
    clock.now = ms(2030, 6, 1, 23, 59, 59)
    assert ids(await board(timed, period="day")) == [june]


# ================================================================ leaderboards: pages


async def add_crowd(db: Db, player_ids: list[str], n: int, code: str | None = None) -> None:
    """`n` won and abandoned games with many ties of measure and of finishing moment (random
    deals, or games of `code`, half of them chosen). Won games score 625 or 635 (a take-back)
    and rank 625; abandoned ones rank 0 to 400, or 625 (tied with the won games), and some
    scored take-back points above their ranked score."""
    t = NOW - 2 * HOUR  # today
    game_ids = ordered_ids(n)
    for index in range(n):
        won = index % 4 != 3
        ranked = 625 if won or index % 5 == 3 else 100 * (index % 5)
        await db.add(
            player_ids[index % len(player_ids)],
            status="won" if won else "abandoned",
            score=ranked + 10 * (index % 2),
            ranked_score=ranked,
            elapsed_ms=40_000 + 1_000 * (index % 3),
            moves=87 + index % 4,
            finished_ms=t + 1_000 * (index % 5),
            code=code,
            chosen=code is not None and index % 2 == 0,
            game_id=game_ids[(index * 7) % n],  # ids out of insert order
        )


@pytest.mark.parametrize("by", ["score", "time", "moves"])
async def test_pages_follow_next_and_link_with_continuing_ranks(
    client: TestClient[Any, Any], api: Api, db: Db, by: str
) -> None:
    (ana, _), (bob, _) = await players(api, "Ana", "Bob")
    await add_crowd(db, [ana, bob], 23)
    whole = await board(client, by=by, limit=100)
    entries = whole["entries"]
    assert len(entries) == (23 if by == "score" else 18)
    assert [sort_key(by, e) for e in entries] == sorted(sort_key(by, e) for e in entries)
    assert [e["rank"] for e in entries] == list(range(1, len(entries) + 1))

    for limit, by_link in ((5, False), (4, True), (1, False), (100, True)):
        pages = await walk(client, BOARDS, {"by": by, "rule": "classic"}, limit, by_link=by_link)
        assert entries_of(pages) == entries, (limit, by_link)
        assert [len(p["entries"]) for p in pages[:-1]] == [limit] * (len(pages) - 1)
        for page in pages:
            assert (page["by"], page["rule"], page["period"]) == (by, "classic", "all")

    # The Link header keeps the board's parameters; `limit` may change between pages.
    first = await client.get(f"{BOARDS}?by={by}&limit=3&period=all")
    link = first.headers["Link"]
    target = URL(re.match(r'^<([^>]+)>; rel="next"$', link).group(1))  # type: ignore[union-attr]
    assert target.path == BOARDS
    assert (target.query["by"], target.query["limit"], target.query["period"]) == (by, "3", "all")
    cursor = (await first.json())["next"]
    rest = await board(client, by=by, period="all", limit=100, after=cursor)
    assert rest["entries"] == entries[3:]
    assert rest["next"] is None


async def test_pages_of_per_deal_and_period_boards(
    timed: TestClient[Any, Any], tapi: Api, db: Db
) -> None:
    (ana, _), (bob, _) = await players(tapi, "Ana", "Bob")
    await add_crowd(db, [ana, bob], 17, code=VECTOR_CODE)
    await add_crowd(db, [bob], 9)
    for params in (
        {"code": VECTOR_CODE},
        {"code": VECTOR_CODE, "by": "time"},
        {"period": "day"},
        {"period": "week", "by": "moves"},
        {"code": VECTOR_CODE, "period": "month", "by": "score"},
    ):
        whole = (await board(timed, **params, limit=100))["entries"]
        assert whole, params
        for limit in (2, 5):
            pages = await walk(timed, BOARDS, params, limit, by_link=limit == 2)
            assert entries_of(pages) == whole, (params, limit)
            assert [e["rank"] for e in entries_of(pages)] == list(range(1, len(whole) + 1))


@pytest.mark.parametrize("by", ["score", "time"])
async def test_a_walk_stays_whole_while_games_finish(
    client: TestClient[Any, Any], api: Api, db: Db, by: str
) -> None:
    """Games that finish between page fetches, better or worse or tied, never make the walk
    repeat or skip a game that was there when it started, and the walk stays in order."""
    (ana, _), (bob, _) = await players(api, "Ana", "Bob")
    await add_crowd(db, [ana, bob], 16)
    before = ids(await board(client, by=by, limit=100))
    assert len(before) == (16 if by == "score" else 12)
    seen: list[dict[str, Any]] = []
    limit = 3
    body = await board(client, by=by, limit=limit)
    later = NOW
    round_ = 0
    while True:
        seen.extend(body["entries"])
        # Each page's ranks are the entries' ranks on the whole board as it is now (counted by
        # the server: the games that went ahead meanwhile count).
        whole = {
            e["game_id"]: e["rank"] for e in (await board(client, by=by, limit=100))["entries"]
        }
        assert {e["game_id"]: e["rank"] for e in body["entries"]} == {
            e["game_id"]: whole[e["game_id"]] for e in body["entries"]
        }
        if body["next"] is None:
            break
        round_ += 1
        last = body["entries"][-1]
        # Finishing now (later than every game so far): a better game (the fastest; on the
        # score board a win, which ranks 625 whatever its take-back points, so it is better
        # once the walk is past the wins), a worse one (the slowest win; the lowest ranked
        # score), and one tied with the last game seen (it goes after it: it finished later).
        later += 1_000
        await db.add(ana, score=635, elapsed_ms=1_000 + round_, moves=50, finished_ms=later)
        if by == "time":
            await db.add(bob, status="won", elapsed_ms=999_000, finished_ms=later + 1)
        else:
            await db.add(bob, status="abandoned", score=0, elapsed_ms=1, finished_ms=later + 2)
        await db.add(
            ana,
            status=last["status"],
            score=last["score"],
            ranked_score=last["ranked_score"],
            elapsed_ms=last["time_ms"],
            moves=last["moves"],
            finished_ms=later + 3,
        )
        body = await board(client, by=by, limit=limit, after=body["next"])
    walked = [e["game_id"] for e in seen]
    assert len(walked) == len(set(walked)), "a game came twice"
    missing = set(before) - set(walked)
    assert not missing, f"games skipped: {missing}"
    keys = [sort_key(by, e) for e in seen]
    assert keys == sorted(keys), "the walk is out of order"
    ranks = [e["rank"] for e in seen]
    assert ranks == sorted(set(ranks)), "the ranks go down or repeat"


# ================================================================ leaderboards: bad input


def cursor_json(cursor: str) -> Any:
    return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))


def make_cursor(data: Any) -> str:
    raw = json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


async def refused(client: TestClient[Any, Any], path: str, params: dict[str, str]) -> None:
    response = await client.get(str(URL(path).with_query(params)))
    body = await problem(response, 422)
    assert body["type"].endswith("/problems/validation-error"), body
    assert isinstance(body.get("errors"), list) and body["errors"], body


async def test_bad_board_parameters_are_refused(
    client: TestClient[Any, Any], api: Api, db: Db
) -> None:
    (ana, _) = await api.player("Ana")
    for index in range(3):
        await db.add(ana, score=600 + index, finished_ms=NOW - HOUR + index)
    first = await board(client, limit=1)
    cursor = first["next"]
    assert isinstance(cursor, str) and cursor
    assert len((await board(client, limit=2, after=cursor))["entries"]) == 2  # limit may change

    for params in (
        {"by": "nonsense"},
        {"by": ""},
        {"limit": "-1"},
        {"limit": "0"},
        {"limit": "101"},
        {"limit": "ten"},
        {"limit": "2.5"},
        {"period": "year"},
        {"rule": "spider"},
        {"assisted": "maybe"},
        {"code": "RU1-X-AAAAAAA"},
        {"code": "RU1-C-AAAAAA"},
        {"code": "hello"},
        {"daily": "2030-02-30"},
        {"daily": "9999-12-31"},  # its day would end past every date (was a 500)
        {"daily": "today"},
        {"code": VECTOR_CODE, "daily": "2030-05-15"},
        {"unknown": "1"},
    ):
        await refused(client, BOARDS, params)

    right_board = cursor_json(cursor)["b"]
    forged = [
        "x",
        "!!!!",
        "a" * 600,
        cursor[:-3],
        cursor + "AAAA",
        make_cursor({}),
        make_cursor([1, 2, 3]),
        make_cursor(None),
        make_cursor({"v": [-600, NOW, "x", 1], "b": "another board"}),
        make_cursor({"v": [-600, NOW, "x"], "b": right_board}),
        make_cursor({"v": ["-600", NOW, "x", 1], "b": right_board}),
        make_cursor({"v": [-600.5, NOW, "x", 1], "b": right_board}),
        make_cursor({"v": [True, NOW, "x", 1], "b": right_board}),
        make_cursor({"v": [-600, NOW, "x", -5], "b": right_board}),  # a negative rank
        # The right board, but values no board could give out (out of any column's range).
        make_cursor({"v": [-(2**70), NOW, "x", 1], "b": right_board}),
        make_cursor({"v": [-600, 2**64, "x", 1], "b": right_board}),
    ]
    for text in forged:
        await refused(client, BOARDS, {"after": text})

    # A cursor of this board on any other board (a daily board whose deal was drawn).
    await db.daily_deal(TODAY)
    for other in (
        {"by": "time"},
        {"by": "moves"},
        {"rule": "relaxed"},
        {"period": "day"},
        {"period": "week"},
        {"assisted": "true"},
        {"code": VECTOR_CODE},
        {"daily": TODAY},
    ):
        await refused(client, BOARDS, {**other, "after": cursor})
    # A cursor of a player's game listing is not a board's, and the other way round.
    for index in range(3):
        await db.add(ana, status="active", created_ms=NOW - index)
    listing = f"/api/v1/players/{ana}/games"
    games_cursor = (await api.get(f"{listing}?limit=1"))["next"]
    assert games_cursor
    await refused(client, BOARDS, {"after": games_cursor})
    await refused(client, listing, {"after": cursor})


# ================================================================ statistics


async def test_stats_per_rule_with_streaks_in_finishing_order(
    client: TestClient[Any, Any], api: Api, db: Db
) -> None:
    (ana, _), (bob, _) = await players(api, "Ana", "Bob")
    t = NOW - 30 * DAY
    # (status, score, elapsed, moves, assisted), in the order they finished; created in the
    # opposite order, so that only the finishing order gives these streaks.
    classic = [
        ("won", 625, 80_000, 100, False),
        ("won", 635, 70_000, 95, False),
        ("abandoned", 300, 9_000, 20, False),
        ("won", 625, 60_000, 90, True),
        ("won", 625, 90_000, 110, False),
        ("won", 625, 75_000, 99, False),
        ("abandoned", 120, 5_000, 10, False),
        ("won", 625, 65_000, 105, False),
    ]
    for index, (status, score, elapsed, moves, assisted) in enumerate(classic):
        await db.add(
            ana,
            status=status,
            score=score,
            elapsed_ms=elapsed,
            moves=moves,
            assisted=assisted,
            finished_ms=t + index * HOUR,
            created_ms=t - index * HOUR,
            chosen=index == 1,  # every game counts, whatever its deal
        )
    for index, status in enumerate(["abandoned", "won", "won"]):
        await db.add(
            ana,
            rule="relaxed",
            status=status,
            score=625 if status == "won" else 40,
            elapsed_ms=100_000 + index,
            moves=250 - index,
            finished_ms=t + index * HOUR,
        )
    await db.add(ana, status="active", score=610)  # not finished: not counted
    await db.add(bob, score=700, elapsed_ms=1, moves=1)  # another player's

    body = await api.get(f"/api/v1/players/{ana}/stats")
    assert body["player"] == {"id": ana, "name": "Ana"}
    assert set(body["rules"]) == {"classic", "relaxed"}
    assert body["rules"]["classic"] == {
        "played": 8,
        "won": 6,
        "win_rate": 0.75,
        "best_score": 635,
        "best_ranked_score": 625,  # the 635 points of a take-back rank 625
        "best_time_ms": 60_000,
        "fewest_moves": 90,
        "current_streak": 1,
        "longest_streak": 3,
        "clean_wins": 5,
        "daily_streak": 0,
        "race": NO_RACE,
    }
    relaxed = body["rules"]["relaxed"]
    assert set(relaxed) == STATS_KEYS
    assert relaxed["played"] == 3 and relaxed["won"] == 2
    assert relaxed["win_rate"] == pytest.approx(2 / 3, abs=1e-4)
    assert (
        relaxed["best_score"],
        relaxed["best_ranked_score"],
        relaxed["best_time_ms"],
        relaxed["fewest_moves"],
    ) == (625, 625, 100_001, 248)
    assert (relaxed["current_streak"], relaxed["longest_streak"], relaxed["clean_wins"]) == (
        2,
        2,
        2,
    )

    # An abandon breaks the current streak.
    await db.add(ana, status="abandoned", score=10, finished_ms=t + 20 * HOUR)
    after = (await api.get(f"/api/v1/players/{ana}/stats"))["rules"]["classic"]
    assert (after["played"], after["current_streak"], after["longest_streak"]) == (9, 0, 3)

    # A player with no finished game.
    (cyd, _) = await api.player("Cyd")
    empty = await api.get(f"/api/v1/players/{cyd}/stats")
    for rule in ("classic", "relaxed"):
        assert empty["rules"][rule] == {
            "played": 0,
            "won": 0,
            "win_rate": 0,
            "best_score": None,
            "best_ranked_score": None,
            "best_time_ms": None,
            "fewest_moves": None,
            "current_streak": 0,
            "longest_streak": 0,
            "clean_wins": 0,
            "daily_streak": 0,
            "race": NO_RACE,
        }


async def test_stats_of_games_played_over_http(
    timed: TestClient[Any, Any], tapi: Api, clock: Clock
) -> None:
    (ana, auth) = await tapi.player("Ana")
    vector = vectors()[0]
    game = await tapi.game(auth, code=vector["code"])
    await paced_play(tapi, clock, auth, game["id"], vector["actions"], 1000)
    clock.now += 60_000
    other = await tapi.game(auth)  # a random classic deal, given up at once
    assert (await timed.post(f"/api/v1/games/{other['id']}/abandon", headers=auth)).status == 200
    await tapi.game(auth, rule="relaxed")  # still active
    stats = await tapi.get(f"/api/v1/players/{ana}/stats")
    assert stats["rules"]["classic"] == {
        "played": 2,
        "won": 1,
        "win_rate": 0.5,
        "best_score": 625,
        "best_ranked_score": 625,
        "best_time_ms": 86_000,
        "fewest_moves": 87,
        "current_streak": 0,
        "longest_streak": 1,
        "clean_wins": 1,
        "daily_streak": 0,
        "race": NO_RACE,
    }
    assert stats["rules"]["relaxed"]["played"] == 0


async def test_daily_streak_counts_consecutive_won_daily_deals(
    timed: TestClient[Any, Any], tapi: Api, db: Db, clock: Clock
) -> None:
    (ana, _) = await tapi.player("Ana")

    async def daily_won(day: int, status: str = "won", practice: bool = False) -> None:
        date = f"2030-05-{day:02d}"
        await db.add(
            ana,
            status=status,
            score=625 if status == "won" else 50,
            finished_ms=ms(2030, 5, day, 10),
            daily=date,
            practice=practice,
        )

    async def streak(rule: str = "classic") -> int:
        stats = await tapi.get(f"/api/v1/players/{ana}/stats")
        found: int = stats["rules"][rule]["daily_streak"]
        return found

    for day in (14, 13, 12, 10):
        await daily_won(day)
    await daily_won(11, "abandoned")  # a lost daily deal ends the run
    await daily_won(15, "abandoned")  # today's, given up: the run up to yesterday still counts
    await db.add(ana, finished_ms=NOW - HOUR)  # a won game that is not a daily deal
    assert await streak() == 3
    await daily_won(
        15, practice=True
    )  # today's won (a second attempt, practice: still won that day)
    assert await streak() == 4
    await daily_won(14, practice=True)  # a second win on a day counts once
    assert await streak() == 4
    assert await streak("relaxed") == 0
    clock.now = ms(2030, 5, 16, 23)  # today's not won yet: the run up to yesterday
    assert await streak() == 4
    clock.now = ms(2030, 5, 17, 1)  # a day missed
    assert await streak() == 0


async def test_stats_of_an_unknown_player(client: TestClient[Any, Any]) -> None:
    for player in ("00000000-0000-4000-8000-000000000000", "nobody"):
        response = await client.get(f"/api/v1/players/{player}/stats")
        body = await problem(response, 404)
        assert body["type"].endswith("/problems/not-found")


# ================================================================ a player's games


async def test_player_games_newest_first_with_filters_and_pages(
    client: TestClient[Any, Any], api: Api, db: Db
) -> None:
    (ana, _auth), (bob, _) = await players(api, "Ana", "Bob")
    base = ms(2030, 5, 1)
    made: dict[str, dict[str, Any]] = {}
    statuses = ("active", "won", "abandoned")
    for index in range(17):
        created = base + (index // 2) * 60_000  # pairs created at the same moment
        rule = "relaxed" if index % 3 == 0 else "classic"
        status = statuses[index % 3 if index % 5 else 1]
        code = fresh_code(rule)  # random deals, dealt from secret codes
        game_id = await db.add(
            ana,
            rule=rule,
            status=status,
            code=code,
            created_ms=created,
            finished_ms=created + 30_000,
        )
        made[game_id] = {"created": created, "rule": rule, "status": status, "code": code}
    await db.add(bob, created_ms=base + 60_000)  # another player's
    listing = f"/api/v1/players/{ana}/games"

    def expect(
        rule: str | None = None,
        status: tuple[str, ...] | None = None,
        since: int | None = None,
        until: int | None = None,
    ) -> set[str]:
        return {
            game_id
            for game_id, game in made.items()
            if (rule is None or game["rule"] == rule)
            and (status is None or game["status"] in status)
            and (since is None or game["created"] >= since)
            and (until is None or game["created"] < until)
        }

    whole = await api.get(f"{listing}?limit=100")
    assert whole["next"] is None
    games = whole["games"]
    assert set(ids(whole, "games")) == set(made)
    assert len(games) == len(made)
    created = [made[g["id"]]["created"] for g in games]
    assert created == sorted(created, reverse=True), "newest first"
    for game in games:
        assert set(game) == GAME_KEYS
        assert game["player"] == {"id": ana, "name": "Ana"}
        assert (game["rule"], game["status"]) == (
            made[game["id"]]["rule"],
            made[game["id"]]["status"],
        )
        # A random deal's code is a secret until its game ends; its commitment is always shown.
        code = made[game["id"]]["code"]
        assert game["code"] == (None if game["status"] == "active" else code)
        assert game["deal_commitment"] == commitment(code)
        assert (game["chosen"], game["daily"]) == (False, None)
        if game["status"] == "active":
            assert game["finished_at"] is None
            assert sum(card is None for column in game["tableau"] for card in column) == 21
    assert len((await api.get(listing))["games"]) == 17  # default limit 20

    # Pages (by `next` and by the Link header) give the same games in the same order.
    for limit, by_link in ((3, False), (4, True), (1, True)):
        pages = await walk(client, listing, {}, limit, key="games", by_link=by_link)
        assert [g["id"] for p in pages for g in p["games"]] == ids(whole, "games")

    cases: list[tuple[dict[str, str], set[str]]] = [
        ({"rule": "relaxed"}, expect(rule="relaxed")),
        ({"rule": "classic"}, expect(rule="classic")),
        ({"status": "active"}, expect(status=("active",))),
        ({"status": "won"}, expect(status=("won",))),
        ({"status": "abandoned"}, expect(status=("abandoned",))),
        ({"status": "finished"}, expect(status=("won", "abandoned"))),
        ({"since": iso(base + 3 * 60_000)}, expect(since=base + 3 * 60_000)),
        ({"until": iso(base + 3 * 60_000)}, expect(until=base + 3 * 60_000)),
        (
            {"since": "2030-05-01T00:02:00", "until": "2030-05-01T02:06:00+02:00"},
            expect(since=base + 2 * 60_000, until=base + 6 * 60_000),
        ),
        (
            {"rule": "classic", "status": "finished", "since": iso(base + 60_000)},
            expect(rule="classic", status=("won", "abandoned"), since=base + 60_000),
        ),
    ]
    for params, expected in cases:
        assert expected and expected != set(made), params
        found = await walk(client, listing, params, 2, key="games", by_link=True)
        walked = [g["id"] for p in found for g in p["games"]]
        assert len(walked) == len(set(walked)), params
        assert set(walked) == expected, params
        moments = [made[g]["created"] for g in walked]
        assert moments == sorted(moments, reverse=True), params

    # Games dealt between page fetches are newer than the walk: it neither repeats nor skips.
    body, _ = await get_page(client, f"{listing}?limit=5")
    walked = ids(body, "games")
    newer = base + DAY
    while body["next"] is not None:
        newer += 60_000
        await db.add(ana, status="active", created_ms=newer)
        body, _ = await get_page(client, str(URL(listing).with_query(limit=5, after=body["next"])))
        walked.extend(ids(body, "games"))
    assert walked == ids(whole, "games")

    for params in (
        {"status": "lost"},
        {"rule": "spider"},
        {"since": "yesterday"},
        {"until": "2030-13-01T00:00:00Z"},
        {"limit": "0"},
        {"limit": "101"},
        {"limit": "-1"},
        {"after": "garbage"},
        {"colour": "red"},
    ):
        await refused(client, listing, params)
    unknown = await client.get("/api/v1/players/00000000-0000-4000-8000-000000000000/games")
    await problem(unknown, 404)


# ================================================================ export


async def export(
    client: TestClient[Any, Any],
    player_id: str,
    headers: dict[str, str] | None = None,
    **params: str,
) -> list[dict[str, Any]]:
    path = str(URL(f"/api/v1/players/{player_id}/games/export").with_query(params))
    response = await client.get(path, headers=headers or {})
    text = await response.text()
    assert response.status == 200, text
    assert response.content_type == "application/x-ndjson", response.content_type
    if not text:
        return []
    assert text.endswith("\n")
    return [json.loads(line) for line in text.split("\n")[:-1]]


async def test_export_streams_verifiable_replays_of_finished_games(
    timed: TestClient[Any, Any], tapi: Api, clock: Clock
) -> None:
    (ana, auth), (_bob, b_auth) = await players(tapi, "Ana", "Bob")
    games = vectors()
    created: list[int] = []

    async def new(auth_: dict[str, str], **body: Any) -> str:
        clock.now += 10 * 60_000
        created.append(clock.now)
        game = await tapi.game(auth_, **body)
        game_id: str = game["id"]
        return game_id

    async def abandon(auth_: dict[str, str], game_id: str) -> None:
        response = await timed.post(f"/api/v1/games/{game_id}/abandon", headers=auth_)
        assert response.status == 200

    won1 = await new(auth, code=games[0]["code"])
    await paced_play(tapi, clock, auth, won1, games[0]["actions"], 700)
    won2 = await new(auth, code=games[2]["code"])  # with undos
    await paced_play(tapi, clock, auth, won2, games[2]["actions"], 300)
    quit1 = await new(auth, code=games[1]["code"])
    await play(tapi, auth, quit1, games[1]["actions"][:5])
    await abandon(auth, quit1)
    quit2 = await new(auth, code=games[3]["code"])  # relaxed
    await play(tapi, auth, quit2, games[3]["actions"][:4])
    await abandon(auth, quit2)
    quit3 = await new(auth)  # given up before a move
    await abandon(auth, quit3)
    active = await new(auth, code=games[0]["code"])
    await play(tapi, auth, active, games[0]["actions"][:3])
    theirs = await new(b_auth)
    await abandon(b_auth, theirs)
    finished = [won1, won2, quit1, quit2, quit3]

    response = await timed.get(f"/api/v1/players/{ana}/games/export")
    assert response.status == 200
    assert response.content_type == "application/x-ndjson"
    assert response.headers["Content-Disposition"] == (f'attachment; filename="games-{ana}.ndjson"')
    lines = await export(timed, ana)
    assert [line["game_id"] for line in lines] == finished  # oldest first, active left out
    for line in lines:
        game = await tapi.get(f"/api/v1/games/{line['game_id']}")
        assert line == await tapi.get(f"/api/v1/games/{line['game_id']}/replay")
        assert line["deal"] is not None
        # Finished: a random deal's code is revealed too, and matches its commitment.
        assert line["code"] == game["code"] is not None
        assert line["deal_commitment"] == game["deal_commitment"] == commitment(line["code"])
        assert game["chosen"] is (line["game_id"] != quit3)
        assert line["player"] == {"id": ana, "name": "Ana"}
        result = line["result"]
        assert (result["status"], result["score"], result["moves"]) == (
            game["status"],
            game["score"],
            game["moves"],
        )
        verified = await timed.post("/api/v1/replays/verify", json=line)
        assert verified.status == 200, await verified.text()
        check = await verified.json()
        assert check["valid"] is True, (line["game_id"], check)
        assert (check["status"], check["score"], check["moves"]) == (
            result["status"],
            result["score"],
            result["moves"],
        )
    assert [line["result"]["status"] for line in lines] == ["won"] * 2 + ["abandoned"] * 3
    assert lines[-1]["code"].startswith("RU2-C-")  # the random deal

    async def exported(**params: str) -> list[str]:
        return [line["game_id"] for line in await export(timed, ana, **params)]

    assert await exported(rule="relaxed") == [quit2]
    assert await exported(rule="classic") == [won1, won2, quit1, quit3]
    assert await exported(status="won") == [won1, won2]
    assert await exported(status="abandoned") == [quit1, quit2, quit3]
    assert await exported(status="finished") == finished
    assert await exported(status="active") == []
    assert await exported(since=iso(created[1]), until=iso(created[3])) == [won2, quit1]
    assert await exported(status="abandoned", rule="classic", since=iso(created[2])) == [
        quit1,
        quit3,
    ]
    assert await exported(since=iso(clock.now + 1)) == []

    base = f"/api/v1/players/{ana}/games/export"
    for params in (
        {"limit": "10"},
        {"after": "abc"},
        {"limit": "2", "status": "won"},
        {"status": "lost"},
        {"since": "soon"},
        {"format": "csv"},
    ):
        await refused(timed, base, params)
    missing = await timed.get("/api/v1/players/00000000-0000-4000-8000-000000000000/games/export")
    await problem(missing, 404)


# ================================================================ the daily deal


async def secret_code(db: Db, game: dict[str, Any]) -> str:
    """The secret code of a daily game's deal as the server stored it (`daily_deals`), which
    the test needs to play legal moves before the day reveals it; checked against the game's
    commitment."""
    code = await db.daily_deal(game["daily"], game["rule"], draw=False)
    assert code is not None and commitment(code) == game["deal_commitment"], (code, game)
    return code


async def test_the_daily_deal_is_the_same_everywhere_and_changes_with_the_day(
    aiohttp_client: ClientFactory,
    settings: Settings,
    timed: TestClient[Any, Any],
    tapi: Api,
    clock: Clock,
    db: Db,
) -> None:
    first = await tapi.get("/api/v1/daily")
    assert set(first) == {"date", "rule", "code", "deal_commitment", "reveals_at", "leaderboard"}
    # Revealed at the end of its UTC day: at that very millisecond (below) the code is shown.
    assert first["reveals_at"] == "2030-05-16T00:00:00.000Z" and TODAY == "2030-05-15"
    assert (first["date"], first["rule"], first["code"]) == (TODAY, "classic", None)
    assert COMMITMENT_RE.match(first["deal_commitment"]), first
    assert first["leaderboard"] == f"/api/v1/leaderboards?daily={TODAY}&rule=classic"
    assert await tapi.get("/api/v1/daily") == first
    assert await tapi.get("/api/v1/daily?rule=classic") == first
    assert await tapi.get(f"/api/v1/daily?date={TODAY}") == first
    relaxed = await tapi.get("/api/v1/daily?rule=relaxed")
    assert (relaxed["date"], relaxed["rule"], relaxed["code"]) == (TODAY, "relaxed", None)
    assert relaxed["reveals_at"] == first["reveals_at"]
    assert COMMITMENT_RE.match(relaxed["deal_commitment"]), relaxed
    assert relaxed["deal_commitment"] != first["deal_commitment"]
    assert relaxed["leaderboard"] == f"/api/v1/leaderboards?daily={TODAY}&rule=relaxed"
    assert await tapi.get("/api/v1/daily?rule=relaxed") == relaxed
    # The day's deals were stored when first drawn: secret RU2 codes, the ones committed to.
    code = await db.daily_deal(TODAY, "classic", draw=False)
    relaxed_code = await db.daily_deal(TODAY, "relaxed", draw=False)
    assert code is not None and CODE_RE.match(code) and code[4] == "C", code
    assert relaxed_code is not None and CODE_RE.match(relaxed_code), relaxed_code
    assert relaxed_code[4] == "R"
    assert (commitment(code), commitment(relaxed_code)) == (
        first["deal_commitment"],
        relaxed["deal_commitment"],
    )
    # The solver certified it winnable (and says so again).
    verdict = await tapi.get(f"/api/v1/deals/{code}/winnable")
    assert verdict["status"] == "winnable"

    # Every player gets that deal, on every server process of the database: Ana here, Bob on
    # another process later the same day.
    (_ana, a_auth), (_bob, b_auth) = await players(tapi, "Ana", "Bob")
    ana_game = await tapi.game(a_auth, daily=True)
    other_clock = Clock(NOW + 11 * HOUR)
    other = Api(await clocked_client(aiohttp_client, settings, other_clock))
    assert await other.get("/api/v1/daily") == first
    assert await other.get("/api/v1/daily?rule=relaxed") == relaxed
    bob_game = await other.game(b_auth, daily=True)
    for game in (ana_game, bob_game):
        assert (game["code"], game["deal_commitment"], game["daily"], game["chosen"]) == (
            None,
            first["deal_commitment"],
            TODAY,
            False,
        )
        assert game["tableau"] == local_game(code).tableau_view()

    # Another day, another deal; the day before reveals its code, the one committed to.
    clock.now = ms(2030, 5, 16, 0, 0, 0)
    tomorrow = await tapi.get("/api/v1/daily")
    assert (tomorrow["date"], tomorrow["rule"], tomorrow["code"]) == ("2030-05-16", "classic", None)
    assert tomorrow["leaderboard"] == "/api/v1/leaderboards?daily=2030-05-16&rule=classic"
    assert tomorrow["reveals_at"] == "2030-05-17T00:00:00.000Z"
    next_code = await db.daily_deal("2030-05-16", "classic", draw=False)
    assert next_code is not None and next_code != code and next_code[4] == "C"
    assert commitment(next_code) == tomorrow["deal_commitment"] != first["deal_commitment"]
    past = await tapi.get(f"/api/v1/daily?date={TODAY}")
    assert past == {**first, "code": code}
    assert await tapi.get(f"/api/v1/daily?date={TODAY}&rule=relaxed") == {
        **relaxed,
        "code": relaxed_code,
    }
    for game in (ana_game, bob_game):
        revealed = await tapi.get(f"/api/v1/games/{game['id']}")
        assert (revealed["code"], revealed["deal_commitment"]) == (code, first["deal_commitment"])
    # The other process, still on the 15th, keeps the code secret; on the 16th it deals the
    # same new deal and reveals the same code.
    assert await other.get("/api/v1/daily") == first
    other_clock.now = ms(2030, 5, 16, 8)
    assert await other.get("/api/v1/daily") == tomorrow
    assert await other.get(f"/api/v1/daily?date={TODAY}") == past
    # Late on the 15th the deal is the same, and secret again.
    clock.now = ms(2030, 5, 15, 23, 59, 59)
    assert await tapi.get("/api/v1/daily") == first

    for params in (
        {"rule": "spider"},
        {"rule": ""},
        {"day": "2030-05-16"},
        {"date": "2030-05-16"},  # tomorrow, on this process
        {"date": "2030-5-15"},
    ):
        await refused(timed, "/api/v1/daily", params)


async def test_the_daily_deal_without_a_test_clock_is_todays(
    client: TestClient[Any, Any], api: Api
) -> None:
    before = datetime.now(UTC).strftime("%Y-%m-%d")
    body = await api.get("/api/v1/daily")
    (_, auth) = await api.player("Ana")
    game = await api.game(auth, daily=True)
    after = datetime.now(UTC).strftime("%Y-%m-%d")
    assert body["date"] in (before, after)
    assert (body["code"], game["code"], game["chosen"]) == (None, None, False)
    if before == after:  # not across midnight
        assert game["daily"] == body["date"]
        assert game["deal_commitment"] == body["deal_commitment"]


async def test_daily_games_first_attempt_ranked_later_ones_practice(
    timed: TestClient[Any, Any], tapi: Api, clock: Clock, db: Db
) -> None:
    clock.now -= DAY  # players made before the day began (SPEC 2.5)
    (_ana, a_auth), (_bob, b_auth) = await players(tapi, "Ana", "Bob")
    clock.now += DAY
    daily = await tapi.get("/api/v1/daily")
    commitment_of_day = daily["deal_commitment"]

    async def daily_game(auth: dict[str, str], moves: int, **body: Any) -> dict[str, Any]:
        clock.now += 60_000
        game = await tapi.game(auth, daily=True, **body)
        line = legal_line(await secret_code(db, game), moves)
        await play(tapi, auth, game["id"], line)
        clock.now += 60_000
        response = await timed.post(f"/api/v1/games/{game['id']}/abandon", headers=auth)
        assert response.status == 200
        finished: dict[str, Any] = await response.json()
        return finished

    first = await daily_game(a_auth, 1)
    code = await secret_code(db, first)
    assert (first["code"], first["rule"], first["daily"], first["chosen"]) == (
        None,
        "classic",
        TODAY,
        False,
    )
    assert first["deal_commitment"] == commitment_of_day
    again = await daily_game(a_auth, 6)  # practice, however good
    assert (again["code"], again["deal_commitment"]) == (None, commitment_of_day)
    theirs = await daily_game(b_auth, 2)

    ranked = await board(timed, daily=TODAY)
    assert (ranked["code"], ranked["daily"], ranked["rule"]) == (None, TODAY, "classic")
    assert set(ids(ranked)) == {first["id"], theirs["id"]}
    assert [e["code"] for e in ranked["entries"]] == [None, None]  # secret until the day ends
    assert again["id"] not in ids(await board(timed, code=code))
    assert ids(await board(timed, daily="2030-05-14")) == []
    # The link the daily deal gives is that board.
    linked, _ = await get_page(timed, daily["leaderboard"])
    assert ids(linked) == ids(ranked)
    # Daily games are never on the global boards.
    assert ids(await board(timed)) == []

    # The relaxed daily deal, and bodies that mix a daily deal with another choice.
    relaxed = await tapi.game(b_auth, daily=True, rule="relaxed")
    relaxed_day = await tapi.get("/api/v1/daily?rule=relaxed")
    assert (relaxed["code"], relaxed["deal_commitment"]) == (None, relaxed_day["deal_commitment"])
    for body in (
        {"daily": True, "code": code},
        {"daily": True, "winnable": True},
        {"daily": "yes"},
    ):
        response = await timed.post("/api/v1/games", json=body, headers=a_auth)
        await problem(response, 422)

    # The next day, Ana's first game of the new daily deal is ranked again.
    clock.now = ms(2030, 5, 16, 9)
    next_day = await daily_game(a_auth, 1)
    assert next_day["daily"] == "2030-05-16"
    assert await secret_code(db, next_day) != code
    assert ids(await board(timed, daily="2030-05-16")) == [next_day["id"]]
    # The day before is over: its board keeps its games and shows the code.
    past = await board(timed, daily=TODAY)
    assert (past["code"], ids(past)) == (code, ids(ranked))
    assert [e["code"] for e in past["entries"]] == [code, code]


async def test_the_first_daily_game_of_each_rule_is_ranked(
    timed: TestClient[Any, Any], tapi: Api, db: Db, clock: Clock
) -> None:
    """Each rule has its own daily deal and board: playing the classic one first does not make
    the player's relaxed daily game of the same day practice."""
    clock.now -= DAY
    (_ana, auth) = await tapi.player("Ana")
    clock.now += DAY
    played = {}
    for rule in ("classic", "relaxed"):
        game = await tapi.game(auth, daily=True, rule=rule)
        await play(tapi, auth, game["id"], legal_line(await secret_code(db, game), 1))
        response = await timed.post(f"/api/v1/games/{game['id']}/abandon", headers=auth)
        assert response.status == 200
        played[rule] = game
    for rule, game in played.items():
        ranked = await board(timed, daily=TODAY, rule=rule)
        assert ids(ranked) == [game["id"]], (rule, ranked)


async def test_a_daily_game_is_hidden_from_others_until_its_day_ends(
    timed: TestClient[Any, Any], tapi: Api, clock: Clock, db: Db
) -> None:
    (_ana, a_auth), (_bob, b_auth) = await players(tapi, "Ana", "Bob")
    game = await tapi.game(b_auth, daily=True)
    game_id = game["id"]
    code = await secret_code(db, game)
    await play(tapi, b_auth, game_id, legal_line(code, 2))
    ordinary = await tapi.game(b_auth)
    paths = [
        f"/api/v1/games/{game_id}",
        f"/api/v1/games/{game_id}/moves",
        f"/api/v1/games/{game_id}/replay",
        f"/api/v1/games/{game_id}/targets?card=AS",
    ]

    async def statuses(headers: dict[str, str] | None) -> list[int]:
        found = []
        for path in paths:
            response = await timed.get(path, headers=headers or {})
            if response.status == 403:
                await problem(response, 403)
            found.append(response.status)
        return found

    async def watch_status() -> int:
        ws = await timed.ws_connect("/api/v1/live", protocols=("solitaire.v1",))
        try:
            await ws.send_str(json.dumps({"type": "watch", "id": "w", "game_id": game_id}))
            msg = await ws.receive(5.0)
            assert msg.type == WSMsgType.TEXT, msg
            answer = json.loads(msg.data)
        finally:
            await ws.close()
        if answer["type"] == "error":
            status: int = answer["problem"]["status"]
            return status
        assert answer["type"] == "watching", answer
        return 200

    assert await statuses(None) == [403] * 4
    assert await statuses(a_auth) == [403] * 4
    assert await statuses(b_auth) == [200] * 4
    assert await watch_status() == 403
    assert (await timed.get(f"/api/v1/games/{ordinary['id']}", headers=a_auth)).status == 200

    # Finished, it stays hidden until the day ends (UTC).
    abandoned = await timed.post(f"/api/v1/games/{game_id}/abandon", headers=b_auth)
    assert abandoned.status == 200
    clock.now = ms(2030, 5, 15, 23, 59, 59) + 999
    assert await statuses(None) == [403] * 4
    assert await statuses(a_auth) == [403] * 4
    assert await statuses(b_auth) == [200] * 4

    clock.now = ms(2030, 5, 16)
    assert await statuses(None) == [200] * 4
    assert await statuses(a_auth) == [200] * 4
    assert await watch_status() == 200
    replay = await tapi.get(f"/api/v1/games/{game_id}/replay")
    assert replay["deal"] is not None and len(replay["actions"]) == 2
    assert (replay["code"], replay["deal_commitment"]) == (code, game["deal_commitment"])


async def hidden_daily_game(
    timed: TestClient[Any, Any], tapi: Api, db: Db, *, finish: bool
) -> tuple[str, dict[str, str], str, list[str]]:
    """Bob's daily game of today, three moves in (and given up if `finish`), which GET refuses
    to others: (Bob's id, his auth, the game's id, its moves)."""
    (bob, b_auth) = await tapi.player("Bob")
    game = await tapi.game(b_auth, daily=True)
    game_id = game["id"]
    line = legal_line(await secret_code(db, game), 3)
    await play(tapi, b_auth, game_id, line)
    if finish:
        response = await timed.post(f"/api/v1/games/{game_id}/abandon", headers=b_auth)
        assert response.status == 200
    assert (await timed.get(f"/api/v1/games/{game_id}")).status == 403
    assert (await timed.get(f"/api/v1/games/{game_id}/replay")).status == 403
    return bob, b_auth, game_id, line


async def test_others_export_leaves_out_a_daily_game_of_today(
    timed: TestClient[Any, Any], tapi: Api, clock: Clock, db: Db
) -> None:
    """The export needs no token: it must not give others the line of a daily game whose
    replay is refused to them (403) until the day ends."""
    bob, b_auth, game_id, line = await hidden_daily_game(timed, tapi, db, finish=True)
    exported = await export(timed, bob)
    assert game_id not in [replay["game_id"] for replay in exported], "the line is exported"
    # Its own player gets it, and so does everyone once the day is over.
    mine = await export(timed, bob, headers=b_auth)
    assert [replay["game_id"] for replay in mine] == [game_id]
    assert (mine[0]["code"], mine[0]["deal"]) == (None, None)  # the code is secret to all
    clock.now = ms(2030, 5, 16, 1)
    later = await export(timed, bob)
    assert [replay["game_id"] for replay in later] == [game_id]
    assert [a["move"] for a in later[0]["actions"]] == line
    assert commitment(later[0]["code"]) == later[0]["deal_commitment"] == mine[0]["deal_commitment"]
    assert later[0]["deal"] is not None


async def test_others_listing_does_not_show_a_daily_game_of_today(
    timed: TestClient[Any, Any], tapi: Api, clock: Clock, db: Db
) -> None:
    """The game listing needs no token: it must not show others the position of a daily game
    that GET /games/{id} refuses them (403) until the day ends."""
    bob, b_auth, game_id, _ = await hidden_daily_game(timed, tapi, db, finish=False)

    def shown(listing: dict[str, Any]) -> list[str]:
        """The cards the listing shows of the daily game (none if it leaves the game out)."""
        return [
            card
            for game in listing["games"]
            if game["id"] == game_id
            for pile in (*game["tableau"], *game["foundations"])
            for card in pile
            if card is not None
        ]

    assert shown(await tapi.get(f"/api/v1/players/{bob}/games")) == [], "position shown"
    response = await timed.get(f"/api/v1/players/{bob}/games", headers=b_auth)
    assert shown(await response.json()), "its own player sees it"
    clock.now = ms(2030, 5, 16, 1)
    assert shown(await tapi.get(f"/api/v1/players/{bob}/games"))
