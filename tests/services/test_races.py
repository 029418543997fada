"""The race use-cases driven directly: a race's time-out is a change of each game still active,
through the game's one change path (a version, its watchers told, the cache swapped)."""

from __future__ import annotations

from server.engine import Rule, Status
from server.services.races.lobby import COUNTDOWN_MS
from server.services.workers import Client
from tests.services.conftest import Services

CLIENT = Client("address:test", "test")


async def test_a_time_out_is_a_change_of_the_game(services: Services) -> None:
    races = services.races()
    ana, ben = await services.player("ana"), await services.player("ben")
    race = await races.create(
        ana,
        rule=Rule.CLASSIC,
        seats=2,
        winnable=False,
        time_limit_s=60,
        public=True,
        client=CLIENT,
    )
    started = await races.join(ben, race.race.id)
    games = {seat.player_id: seat.game_id for seat in started.seats}
    assert all(g.rule is Rule.CLASSIC and g.race_hidden for g in started.games)
    ana_game, ben_game = games[ana.id], games[ben.id]
    assert ana_game is not None and ben_game is not None
    await services.games.abandon(ben, ben_game)  # ben quits: only ana's game is timed out

    events: list[int] = []
    services.broker.subscribe(ana_game, lambda version, _text: events.append(version))
    before = await services.games.get_game(ana_game, ana)
    deadline = started.race.starts_ms + 60_000  # type: ignore[operator]
    services.clock.now = deadline + 250
    await races.tick()

    after = await services.games.get_game(ana_game)  # revealed: anyone may see it now
    row = after.row
    assert (row.status, row.timed_out, row.race_hidden) == (Status.ABANDONED, True, False)
    assert row.version == before.row.version + 1
    assert (row.finished_ms, row.elapsed_ms) == (deadline, 60_000)
    assert events == [row.version]  # its watchers were told, as of any change
    cached = services.games.cache.slot(ana_game).view
    assert cached is None or cached.row == row  # never the row as it was before the time-out
    ended = await races.view(race.race.id)
    assert ended.race.status == "finished"
    assert {s.player_id: s.status for s in ended.standings()} == {
        ana.id: Status.ABANDONED,
        ben.id: Status.ABANDONED,
    }
    # ben's game ended by itself: untouched by the time-out.
    ben_row = (await services.games.get_game(ben_game)).row
    assert (ben_row.status, ben_row.timed_out) == (Status.ABANDONED, False)
    assert started.race.starts_ms == before.row.created_ms + COUNTDOWN_MS
    assert ended.race.ended_ms == deadline
