"""Who a race rates (SPEC 2.6.1 "Ratings"; issue 22): only the racers who made a move after the
start; nobody when fewer than two did; and the same group of players no more than 3 times in
24 h. Scripted as the cheats of issue 22 tried them: the sybil race farm (seven accounts join,
quit during the countdown, and the main account wins with one move) and the same two accounts
racing over and over. On both databases, with a clock the test moves."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from openskill.models import PlackettLuce
from sqlalchemy import select

from server.store.models import RacePlayer
from tests.api.boards_helpers import HOUR, Clock, get_page
from tests.api.helpers import Player, line_of, new_player
from tests.api.test_races import COUNTDOWN_MS, SETTLE_S, Db, act

MODEL = PlackettLuce()
MINUTE = 60_000


class Ratings(Db):
    async def rated(self, race_id: str) -> dict[str, bool | None]:
        """Each seat's `rated` as the race's end recorded it."""
        async with self.engine.connect() as connection:
            query = select(RacePlayer.player_id, RacePlayer.rated).where(
                RacePlayer.race_id == race_id
            )
            return {player_id: rated for player_id, rated in await connection.execute(query)}


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Ratings]:
    found = Ratings(database_url)
    yield found
    await found.close()


@pytest.fixture
def client(timed: TestClient[Any, Any]) -> TestClient[Any, Any]:
    """The app of `timed` (tests/api/conftest.py): every service, the race service and its
    tick included, reads the test's `clock`."""
    return timed


async def abandon(client: TestClient[Any, Any], player: Player, game_id: str) -> None:
    response = await client.post(f"/api/v1/games/{game_id}/abandon", headers=player.auth)
    assert response.status == 200, await response.text()


async def post(client: TestClient[Any, Any], path: str, player: Player, **body: Any) -> Any:
    response = await client.post(path, json=body, headers=player.auth)
    assert response.status in (200, 201), (path, await response.text())
    return await response.json()


async def race(
    client: TestClient[Any, Any],
    clock: Clock,
    db: Ratings,
    movers: list[Player],
    idle: Sequence[Player] = (),
    *,
    quit_early: bool = True,
) -> dict[str, Any]:
    """A race of `movers` and `idle` racers (winnable, so that a first move exists), the first
    mover its creator: the idle ones quit during the countdown (`quit_early`), else sit until
    the deadline and are timed out; after the start each mover makes the same first move, a
    minute apart in their order (so they place in it), then abandons. Returns the finished
    race."""
    creator, *others = movers
    opened = await post(client, "/api/v1/races", creator, seats=len(movers) + len(idle))
    race_id = opened["id"]
    for player in [*others, *idle]:
        clock.now += 1
        full = await post(client, f"/api/v1/races/{race_id}/join", player)
    assert full["status"] == "starting", full
    games = full["games"]
    starts = clock.now + COUNTDOWN_MS
    line = line_of(await db.race_code(race_id), 1)
    assert line is not None
    if quit_early:
        for player in idle:
            await abandon(client, player, games[player.id])
    clock.now = starts
    for player in movers:
        clock.now += MINUTE
        await act(client, player, games[player.id], line[0])
    for player in movers:
        await abandon(client, player, games[player.id])
    if not quit_early and idle:
        clock.now = starts + 600_000  # the deadline: the idle racers are timed out
        loop = asyncio.get_running_loop()
        until = loop.time() + SETTLE_S
        while (await db.race_status(race_id)) != "finished":
            assert loop.time() < until, "the race did not end at its deadline"
            await asyncio.sleep(0.05)
    response = await client.get(f"/api/v1/races/{race_id}")
    finished: dict[str, Any] = await response.json()
    assert finished["status"] == "finished", finished
    names = {s["player"]["name"]: s["place"] for s in finished["standings"]}
    for place, player in enumerate(movers, 1):
        assert names[player.name] == place, finished
    return finished


def changes(race: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The rating changes a finished race shows, by racer name."""
    return {s["player"]["name"]: s["rating"] for s in race["standings"] if "rating" in s}


async def test_the_sybil_race_farm_changes_no_rating(
    client: TestClient[Any, Any], clock: Clock, db: Ratings
) -> None:
    """Seven sybils join the main account's race and quit during the countdown; the main
    account wins with one move. Before issue 22 this gave it +2.3 ordinal a race; now nobody
    but one racer moved, so the race rates nobody, however often it is repeated."""
    main = await new_player(client, "main")
    sybils = [await new_player(client, f"sybil{k}") for k in range(7)]
    for _ in range(3):
        finished = await race(client, clock, db, [main], sybils)
        assert changes(finished) == {}, finished
        assert set((await db.rated(finished["id"])).values()) == {False}
        assert finished["standings"][0]["place"] == 1  # the places still stand
        clock.now += 10 * MINUTE
    assert await db.ratings() == {}
    board, _ = await get_page(client, "/api/v1/leaderboards/races?rule=classic")
    assert board["entries"] == [], board
    response = await client.get(f"/api/v1/players/{main.id}/stats")
    assert (await response.json())["rules"]["classic"]["race"]["races"] == 0


async def test_the_same_group_counts_three_times_a_day(
    client: TestClient[Any, Any], clock: Clock, db: Ratings
) -> None:
    """ana and ben race each other again and again, both moving: the first three races within
    24 h rate them, the 4th changes nothing; another group (with cat) is rated meanwhile; once
    the first race is more than 24 h old, the group counts again."""
    ana, ben, cat = [await new_player(client, name) for name in ("ana", "ben", "cat")]
    first_end = clock.now
    for count in range(1, 4):
        before = await db.ratings()
        finished = await race(client, clock, db, [ana, ben])
        assert set(changes(finished)) == {"ana", "ben"}, finished
        assert await db.rated(finished["id"]) == {ana.id: True, ben.id: True}
        after = await db.ratings()
        assert after[(ana.id, "classic")][3] == after[(ben.id, "classic")][3] == count
        assert after != before
        if count == 1:
            first_end = clock.now
        clock.now += 10 * MINUTE
    held = await db.ratings()
    fourth = await race(client, clock, db, [ana, ben])
    assert changes(fourth) == {}, fourth
    assert await db.rated(fourth["id"]) == {ana.id: False, ben.id: False}
    assert await db.ratings() == held
    # Another group is another group: ana, ben and cat are rated together.
    clock.now += 10 * MINUTE
    trio = await race(client, clock, db, [ana, ben, cat])
    assert set(changes(trio)) == {"ana", "ben", "cat"}, trio
    # A day after the first race (the 2nd and 3rd still within 24 h): rated again.
    held = await db.ratings()
    clock.now = first_end + 24 * HOUR + 5 * MINUTE
    again = await race(client, clock, db, [ana, ben])
    assert set(changes(again)) == {"ana", "ben"}, again
    assert await db.ratings() != held
    assert (await db.ratings())[(ana.id, "classic")][3] == held[(ana.id, "classic")][3] + 1


@pytest.mark.parametrize("quit_early", [True, False], ids=["quits", "times-out"])
async def test_a_racer_who_never_moves_is_left_out(
    client: TestClient[Any, Any], clock: Clock, db: Ratings, quit_early: bool
) -> None:
    """cat has a rating from an earlier race; in the next, cat never moves (quits during the
    countdown, or sits until timed out at the deadline): cat's rating stays as it was, and
    ana's and ben's change exactly as in a race of the two of them."""
    ana, ben, cat = [await new_player(client, name) for name in ("ana", "ben", "cat")]
    await race(client, clock, db, [cat, ben, ana])
    held = await db.ratings()
    clock.now += HOUR
    finished = await race(client, clock, db, [ana, ben], [cat], quit_early=quit_early)
    assert set(changes(finished)) == {"ana", "ben"}, finished
    assert await db.rated(finished["id"]) == {ana.id: True, ben.id: True, cat.id: False}
    places = {s["player"]["name"]: s["place"] for s in finished["standings"]}
    assert places["cat"] == 3, places
    now = await db.ratings()
    assert now[(cat.id, "classic")] == held[(cat.id, "classic")]

    def rating(player: Player) -> Any:
        mu, sigma, _, _ = held[(player.id, "classic")]
        return MODEL.create_rating([mu, sigma])

    (ana_after,), (ben_after,) = MODEL.rate([[rating(ana)], [rating(ben)]], ranks=[1.0, 2.0])
    for player, expected in ((ana, ana_after), (ben, ben_after)):
        mu, sigma, ordinal, races = now[(player.id, "classic")]
        assert (mu, sigma, ordinal) == pytest.approx(
            (expected.mu, expected.sigma, expected.ordinal())
        )
        assert races == 2
    shown = changes(finished)["ana"]
    assert (shown["after"]["mu"], shown["after"]["sigma"]) == pytest.approx(
        (ana_after.mu, ana_after.sigma)
    )
