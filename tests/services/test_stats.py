"""Player statistics kept as solo games finish (`server.store.stats`), checked against the count
from scratch that defines them (`rule_stats` of the player's finished games), on SQLite and
PostgreSQL: random histories played through the real game service (wins, give-ups, daily games
won on consecutive and broken days and finished days after their own day, hints, practice), the
action limit, concurrent finishes, migration 0009's fill of games finished before it, and a read
that never touches the games whatever the history."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import event, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession

from server.engine import UNDO, DealCode, Move, Rule, Status, parse_action
from server.services import games as games_module
from server.services.cursors import Cursors
from server.services.leaderboards import BoardService, PlayerStats, rule_stats
from server.services.values import ActionRequest, Principal
from server.store import stats as stats_rows
from server.store.db import downgrade, make_engine, migrate, sessionmakers
from server.store.games import finished_games
from server.store.models import DailyRunRow, GameRow, Player, PlayerStatsRow
from server.store.records import utc_day
from tests.api.helpers import vectors
from tests.services.conftest import Services

HOUR = 3_600_000
DAY = 24 * HOUR


def winning(rule: Rule) -> list[dict[str, Any]]:
    """The whole won games of games.json of a rule (plain, with a take-back, with undos)."""
    return [v for v in vectors() if DealCode.parse(v["code"]).rule is rule]


def requests(actions: list[str]) -> Iterator[ActionRequest]:
    for text in actions:
        action = parse_action(text)
        if action is UNDO:
            yield ActionRequest("undo")
        else:
            assert isinstance(action, Move)
            yield ActionRequest("move", action.card, action.to)


def board_service(services: Services) -> BoardService:
    readers, _ = sessionmakers(services.engine)
    return BoardService(readers, Cursors(b"k" * 32), services.clock)


async def check(services: Services, player_id: str) -> PlayerStats:
    """The player's statistics as kept equal those counted from scratch (every rule, today)."""
    board = board_service(services)
    kept = await board.stats(player_id)
    async with board.readers.begin() as session:
        games = await finished_games(session, player_id)
    today = datetime.fromtimestamp(services.clock() / 1000, UTC).date()
    for rule in Rule:
        counted = rule_stats([g for g in games if g.rule is rule], today, kept.rules[rule].race)
        assert kept.rules[rule] == counted, (rule, len(games))
    return kept


@dataclass
class Playing:
    """A game of a random history: whose, the actions it will take, how far it is."""

    player: Principal
    game_id: str
    actions: list[str]
    done: int = 0


async def play(services: Services, game: Playing, upto: int, rng: random.Random) -> None:
    for req in list(requests(game.actions))[game.done : upto]:
        services.clock.now += rng.randrange(200, 3_000)
        await services.games.act(game.player, game.game_id, req)
    game.done = max(game.done, upto)


async def give_up(services: Services, game: Playing) -> None:
    services.clock.now += 1_000
    await services.games.abandon(game.player, game.game_id)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_kept_statistics_equal_a_count_from_scratch_over_random_histories(
    services: Services, seed: int
) -> None:
    """Each game finishes at a time of its own: two games of one player finished in the same
    millisecond are counted in the order of their commits, which `rule_stats` does not know
    (it orders them by id; `server.store.stats`, "Order")."""
    rng = random.Random(seed)
    ana = await services.player(f"ana{seed}")
    players = [ana]
    held: list[Playing] = []
    finished: list[Playing] = []
    daily_streaks: list[int] = []
    for step in range(30):
        # Three games a day on most days, some days without any.
        services.clock.now += rng.choice(
            [3 * HOUR, 6 * HOUR, 8 * HOUR, 8 * HOUR, 10 * HOUR, 2 * DAY]
        )
        if step == 6:  # a player made later: their daily of the day they were made is practice
            players.append(await services.player(f"bea{seed}"))
        player = rng.choice(players)
        rule = Rule.CLASSIC if rng.random() < 0.85 else Rule.RELAXED
        vector = rng.choice(winning(rule))
        daily = utc_day(services.clock()) if rng.random() < 0.6 else None
        view = await services.games.create_game(
            player, None, DealCode.parse(vector["code"]), secret=daily is not None, daily=daily
        )
        game = Playing(player, view.row.id, vector["actions"])
        if rng.random() < 0.2:
            await services.games.mark_assisted(player, game.game_id)
        kind = rng.random() * (0.8 if daily else 1)  # a daily deal is won more often
        if kind < 0.45:  # won now
            await play(services, game, len(game.actions), rng)
            finished.append(game)
        elif kind < 0.7:  # given up after a few moves
            await play(services, game, rng.randrange(0, 10), rng)
            await give_up(services, game)
            finished.append(game)
        else:  # left in play, finished on a later step (a daily game days after its day)
            await play(services, game, rng.randrange(0, 10), rng)
            held.append(game)
        if held and rng.random() < 0.4:
            late = held.pop(rng.randrange(len(held)))
            if rng.random() < 0.7:
                await play(services, late, len(late.actions), rng)
            else:
                await give_up(services, late)
            finished.append(late)
        if finished and rng.random() < 0.2:  # a hint answered after its game ended
            ended = rng.choice(finished)
            await services.games.mark_assisted(ended.player, ended.game_id)
        for someone in players:
            kept = await check(services, someone.id)
            daily_streaks.append(max(r.daily_streak for r in kept.rules.values()))
    kept = await check(services, ana.id)
    assert kept.rules[Rule.CLASSIC].played > 0
    assert max(daily_streaks) >= 2, daily_streaks  # the history had a run of daily wins
    for _ in range(3):  # the daily streak as days pass without a daily won
        services.clock.now += DAY
        for someone in players:
            await check(services, someone.id)


async def test_daily_games_won_out_of_their_days_order_join_one_run(services: Services) -> None:
    """Daily games of the 15th, 17th and 16th won in that order (each finished days after its
    own day, but for the first) make one run of three days."""
    ana = await services.player("ana")
    vector = winning(Rule.CLASSIC)[0]
    code = DealCode.parse(vector["code"])
    rng = random.Random(0)
    games = {}
    for day in (0, 1, 2):
        view = await services.games.create_game(
            ana, None, code, secret=True, daily=utc_day(services.clock())
        )
        games[day] = Playing(ana, view.row.id, vector["actions"])
        services.clock.now += DAY
    for day in (0, 2, 1):
        await play(services, games[day], len(vector["actions"]), rng)
        await check(services, ana.id)
    kept = await check(services, ana.id)
    # The clock is on the 18th now: the run of the 15th to the 17th ended yesterday.
    assert kept.rules[Rule.CLASSIC].daily_streak == 3


async def test_the_action_limit_ends_a_game_counted_as_given_up(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(games_module, "MAX_ACTIONS", 3)
    ana = await services.player("ana")
    vector = winning(Rule.CLASSIC)[0]
    view = await services.games.create_game(ana, None, DealCode.parse(vector["code"]))
    for req in list(requests(vector["actions"]))[:3]:
        services.clock.now += 1_000
        applied = await services.games.act(ana, view.row.id, req)
    assert applied.view.row.status is Status.ABANDONED
    kept = await check(services, ana.id)
    classic = kept.rules[Rule.CLASSIC]
    assert (classic.played, classic.won, classic.best_score) == (1, 0, applied.view.row.score)


async def test_games_finished_at_once_in_two_processes_all_count(services: Services) -> None:
    """Two game services (two processes' caches) give up eight games of one player at the same
    time: every one is counted (the first row is made once, the others add to it)."""
    ana = await services.player("ana")
    other = services.another_process()
    ids = []
    for _ in range(8):
        view = await services.games.create_game(ana, Rule.CLASSIC, None)
        ids.append(view.row.id)
    await asyncio.gather(
        *(
            (services.games if i % 2 else other).abandon(ana, game_id)
            for i, game_id in enumerate(ids)
        )
    )
    kept = await board_service(services).stats(ana.id)
    classic = kept.rules[Rule.CLASSIC]
    assert (classic.played, classic.won, classic.current_streak) == (8, 0, 0)


async def test_reading_statistics_never_reads_the_games(services: Services) -> None:
    """The statistics of a player with a long history are read from a few rows: no statement of
    the read touches `games`, and their number does not grow with the history."""
    ana = await services.player("ana")
    statements: list[str] = []

    def seen(_conn: Connection, _cursor: Any, statement: str, *_args: Any, **_kwargs: Any) -> None:
        statements.append(statement)

    counts = []
    for _ in range(2):
        for _ in range(5):
            view = await services.games.create_game(ana, Rule.CLASSIC, None)
            await services.games.abandon(ana, view.row.id)
        statements.clear()
        event.listen(services.engine.sync_engine, "before_cursor_execute", seen)
        try:
            kept = await board_service(services).stats(ana.id)
        finally:
            event.remove(services.engine.sync_engine, "before_cursor_execute", seen)
        counts.append(len(statements))
        assert not [s for s in statements if "games" in s], statements
    assert kept.rules[Rule.CLASSIC].played == 10
    assert counts[0] == counts[1]


async def test_the_read_merges_daily_runs_left_apart(services: Services) -> None:
    """Rows of one run left apart (two daily wins committed at the same moment on PostgreSQL
    each read the runs as they were) are read as one run, touching or overlapping."""
    ana = await services.player("ana")
    today = stats_rows.day_number(utc_day(services.clock()))
    runs = [
        (today - 1, today),
        (today - 3, today - 2),
        (today - 3, today - 3),
        (today - 9, today - 5),
    ]
    async with AsyncSession(services.engine) as session, session.begin():
        for first, last in runs:
            await session.execute(
                insert(DailyRunRow).values(
                    player_id=ana.id, rule="classic", first_day=first, last_day=last
                )
            )
    kept = await board_service(services).stats(ana.id)
    assert kept.rules[Rule.CLASSIC].daily_streak == 4
    async with AsyncSession(services.engine) as session, session.begin():
        assert await stats_rows.latest_run(session, ana.id, Rule.CLASSIC) == (today - 3, today)


# ---------------------------------------------------------------- migration 0009


def player_values(player_id: str) -> dict[str, Any]:
    return {
        "id": player_id,
        "name": player_id[:8],
        "name_key": player_id,
        "created_ms": 0,
        "double_click": True,
        "placement_help": True,
        "interactive_rules": True,
        "auto_placement": False,
    }


def random_game(rng: random.Random, player_id: str, base_ms: int) -> dict[str, Any]:
    """A game row as 0008 left it: finished (won or given up) or not, some daily, some of a
    race, some finished in the same millisecond (ordered by id then)."""
    status = rng.choice(["won", "won", "abandoned", "active"])
    finished = None if status == "active" else base_ms + rng.randrange(0, 40) * HOUR
    won = status == "won"
    rule = rng.choice(["classic", "classic", "relaxed"])
    daily = None
    if rng.random() < 0.4:
        daily = utc_day(base_ms + rng.randrange(0, 8) * DAY)
    return {
        "id": str(uuid.UUID(int=rng.getrandbits(128))),
        "player_id": player_id,
        "code": "RU1-C-AAAAAFN" if rule == "classic" else "RU1-R-AAAAAHW",
        "rule": rule,
        "chosen": True,
        "status": status,
        "score": 625 if won else rng.randrange(0, 60) * 5,
        "ranked_score": 625 if won else rng.randrange(0, 60) * 5,
        "moves": rng.randrange(80, 200),
        "version": 1,
        "snapshot": "",
        "created_ms": base_ms,
        "started_ms": base_ms,
        "finished_ms": finished,
        "elapsed_ms": rng.choice([None, rng.randrange(1, 10**6)]) if finished else None,
        "assisted": rng.random() < 0.3,
        "daily": daily,
        "practice": rng.random() < 0.2,
        "race_id": str(uuid.uuid4()) if rng.random() < 0.1 else None,
    }


async def test_the_migration_fills_statistics_from_the_games_finished_before_it(
    services: Services,
) -> None:
    url = services.url
    await services.engine.dispose()
    await asyncio.to_thread(downgrade, url, "0008")
    rng = random.Random(21)
    ids = [str(uuid.uuid4()) for _ in range(6)]
    engine = make_engine(url)
    base = services.clock()
    try:
        async with engine.begin() as connection:
            await connection.execute(insert(Player), [player_values(p) for p in ids])
            rows = [random_game(rng, p, base) for p in ids for _ in range(rng.randrange(0, 40))]
            ranked: set[tuple[str, str, str]] = set()
            for row in rows:  # one ranked game of a day's deal per player (a unique index)
                key = (row["player_id"], row["daily"], row["rule"])
                if row["daily"] is not None and not row["practice"]:
                    row["practice"] = key in ranked
                    ranked.add(key)
            await connection.execute(insert(GameRow), rows)
    finally:
        await engine.dispose()
    await asyncio.to_thread(migrate, url)
    streaks = 0
    for _ in range(10):  # each day of the dailies and after them
        kept = {p: await check(services, p) for p in ids}
        streaks += sum(s.rules[r].daily_streak for s in kept.values() for r in Rule)
        services.clock.now += DAY
    assert streaks > 0
    # `rebuild` writes the same rows again.
    async with AsyncSession(services.engine) as session, session.begin():
        before = (await session.execute(select(PlayerStatsRow.__table__))).all()
        for p in ids:
            await stats_rows.rebuild(session, p)
        after = (await session.execute(select(PlayerStatsRow.__table__))).all()
    assert sorted(before) == sorted(after)
    for p in ids:
        assert await board_service(services).stats(p) == kept[p]
