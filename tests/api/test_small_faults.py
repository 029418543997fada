"""The small ones of issue 21, on both databases, with a clock the test moves.

- A keyed retry is answered from its idempotency record before any deadline or state check: an
  action applied before its race's deadline and retried with the same key after it gets its
  stored answer (over HTTP and the WebSocket), not `409 race_over`; so does a retry of the move
  that won a game (the game is over now). A new key after the deadline is `race_over`.
- Dates and times out of range are `422` wherever one is a parameter (the daily board's date,
  the daily deal's date, a player's games' `since` and `until`, their export): year 0, the last
  day (whose board would end on a day no date can name), offsets that carry an instant past
  year 1 or 9999, a 61st second, a 13th month; never a `500`. The extremes that are real
  instants are answered.
- Idempotency records expire after 24 hours: a key older than that is fresh (even before the
  job has deleted its record), and the job of every app deletes the expired records in bounded
  batches, the oldest first, keeping the others.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import pytest
from aiohttp.test_utils import TestClient
from sqlalchemy import func, select

from server.keys import RACES, SERVICE
from server.services.idempotency import IDEMPOTENCY_TTL_MS, KeyExpiry
from server.store.models import IdempotencyRecord
from tests.api.boards_helpers import NOW, Clock
from tests.api.helpers import action_body, new_player, problem, vectors
from tests.api.test_races import (
    COUNTDOWN_MS,
    LIVE,
    SUBPROTOCOL,
    Db,
    race_with_line,
    refused,
    seat,
)

# ---------------------------------------------------------------- fixtures


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Db]:
    found = Db(database_url)
    yield found
    await found.close()


@pytest.fixture
def client(timed: TestClient[Any, Any]) -> TestClient[Any, Any]:
    """The app of `timed` (tests/api/conftest.py): every service, the race service and its
    tick included, reads the test's `clock`."""
    return timed


async def keyed(
    client: TestClient[Any, Any], auth: dict[str, str], game_id: str, text: str, key: str
) -> Any:
    return await client.post(
        f"/api/v1/games/{game_id}/moves",
        json=action_body(text),
        headers={**auth, "Idempotency-Key": key},
    )


# ---------------------------------------------------------------- keyed retries


async def test_a_retry_after_the_deadline_gets_its_stored_answer(
    client: TestClient[Any, Any], clock: Clock, db: Db
) -> None:
    """The race's tick is held back (the race stays unsettled at its deadline, as a slow tick
    or another process would leave it); then it runs, and the retries still get their answers
    once the race has ended and the game is timed out."""
    races = client.app[RACES]
    ticker = races.ticker
    assert ticker is not None
    ticker.cancel()
    await asyncio.gather(ticker, return_exceptions=True)

    ana = await new_player(client, "ana")
    ben = await new_player(client, "ben")
    race, _, line = await race_with_line(client, db, ana, 3, [ben], seats=2, time_limit_s=60)
    full = await seat(client, race["id"], "join", ben)
    game = full["games"][ana.id]
    starts = NOW + COUNTDOWN_MS
    deadline = starts + 60_000

    clock.now = starts
    first = await keyed(client, ana.auth, game, line[0], "k-first")
    assert first.status == 200, await first.text()
    clock.now = deadline - 1
    last = await keyed(client, ana.auth, game, line[1], "k-last")
    assert last.status == 200, await last.text()
    answer = await last.json()

    clock.now = deadline
    for key, text in (("k-last", line[1]), ("k-first", line[0])):
        again = await keyed(client, ana.auth, game, text, key)
        assert again.status == 200, await again.text()
        assert again.headers.get("Idempotent-Replayed") == "true"
        body = await again.json()
        assert body["move"] == text, body
    again = await keyed(client, ana.auth, game, line[1], "k-last")
    assert (await again.json())["game"] == answer["game"]
    # The same over the WebSocket: the act's result, marked replayed.
    ws = await client.ws_connect(LIVE, headers=ana.auth, protocols=(SUBPROTOCOL,))
    try:
        await ws.send_str(
            json.dumps(
                {
                    "type": "act",
                    "id": 1,
                    "game_id": game,
                    "action": action_body(line[1]),
                    "idempotency_key": "k-last",
                }
            )
        )
        message = json.loads((await ws.receive(10)).data)
        assert message["type"] == "result" and message["replayed"] is True, message
        assert message["version"] == 2 and message["move"] == line[1], message
    finally:
        await ws.close()
    # A new key after the deadline is refused as before; so is an old key with another action.
    fresh = await keyed(client, ana.auth, game, line[2], "k-new")
    await refused(fresh, 409, "race_over")
    other = await keyed(client, ana.auth, game, line[2], "k-last")
    await problem(other, 422)
    assert await db.moves(game) == 2

    # The race ended by the server (the game timed out): the retry is still answered.
    await races.tick()
    assert await db.race_status(race["id"]) == "finished"
    retried = await keyed(client, ana.auth, game, line[1], "k-last")
    assert retried.status == 200, await retried.text()
    assert (await retried.json())["move"] == line[1]
    assert await db.moves(game) == 2


async def test_a_retry_of_the_winning_move_gets_its_answer(
    client: TestClient[Any, Any], clock: Clock
) -> None:
    """A game won by its last move is over: the move retried with its key is not refused as
    illegal, it gets the answer of the move that won."""
    vector = next(v for v in vectors() if "note" not in v)
    ana = await new_player(client, "ana")
    response = await client.post("/api/v1/games", json={"code": vector["code"]}, headers=ana.auth)
    assert response.status == 201, await response.text()
    game = (await response.json())["id"]
    actions: list[str] = vector["actions"]
    for number, text in enumerate(actions):
        answer = await keyed(client, ana.auth, game, text, f"k{number}")
        assert answer.status == 200, (text, await answer.text())
    won = await answer.json()
    assert won["game"]["status"] == "won", won
    clock.now += 3_600_000
    again = await keyed(client, ana.auth, game, actions[-1], f"k{len(actions) - 1}")
    assert again.status == 200, await again.text()
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert (await again.json())["game"]["status"] == "won"
    late = await keyed(client, ana.auth, game, actions[-1], str(uuid.uuid4()))
    await problem(late, 422)


# ---------------------------------------------------------------- dates and times out of range

INSTANTS_OUT = [
    "0000-01-01T00:00:00Z",  # year 0: no date
    "0001-01-01T00:30:00+01:00",  # year 0 in UTC
    "0001-01-01T00:00:00-00:00:00",  # not RFC 3339
    "9999-12-31T23:30:00-01:00",  # year 10000 in UTC
    "9999-12-31T23:59:59-23:59",
    "10000-01-01T00:00:00Z",
    "2026-13-01T00:00:00Z",
    "2026-01-01T00:00:61Z",
    "99999999999-01-01T00:00:00Z",
]
INSTANTS_IN = [
    "0001-01-01T00:00:00Z",
    "0001-01-01T01:00:00+01:00",
    "9999-12-31T23:59:59.999999Z",
    "9999-12-31T23:59:60Z",  # a leap second: the last microsecond of its minute
    "9999-12-31T22:59:59-01:00",
    "3000-01-01T00:00:00Z",
]
DAYS_OUT = ["0000-01-01", "9999-12-31", "2026-13-01", "2026-02-30", "10000-01-01", "99-01-01"]
DAYS_IN = ["0001-01-01", "9999-12-30"]


async def test_instants_out_of_range_are_422(client: TestClient[Any, Any]) -> None:
    """A player's games and their export, `since` and `until`: 422 naming the parameter for
    every instant out of range, 200 for the extremes that are real instants."""
    ana = await new_player(client, "ana")
    paths = [f"/api/v1/players/{ana.id}/games", f"/api/v1/players/{ana.id}/games/export"]
    for path in paths:
        for name in ("since", "until"):
            for text in INSTANTS_OUT:
                response = await client.get(f"{path}?{name}={quote(text)}", headers=ana.auth)
                found = await problem(response, 422)
                assert name in json.dumps(found), (path, name, text, found)
            for text in INSTANTS_IN:
                response = await client.get(f"{path}?{name}={quote(text)}", headers=ana.auth)
                assert response.status == 200, (path, name, text, await response.text())
                await response.read()
        both = f"{path}?since={quote(INSTANTS_IN[0])}&until={quote(INSTANTS_IN[2])}"
        assert (await client.get(both, headers=ana.auth)).status == 200


async def test_instants_out_of_range_are_refused_in_every_language(
    client: TestClient[Any, Any],
) -> None:
    ana = await new_player(client, "ana")
    path = f"/api/v1/players/{ana.id}/games?since={quote('0001-01-01T00:30:00+01:00')}"
    english = await problem(await client.get(path), 422)
    for lang in ("ro", "he"):
        found = await problem(await client.get(path, headers={"Accept-Language": lang}), 422)
        assert json.dumps(found) != json.dumps(english), found
        assert "an instant from" not in json.dumps(found), found


async def test_days_out_of_range_are_422(client: TestClient[Any, Any], clock: Clock) -> None:
    """The daily board's `daily`, with every period, and the daily deal's `date`: 422 for a day
    out of range (the last day too: its board would end on a day no date can name); the first
    and the last but one are answered (the daily deal of a day long gone is 404: none was
    drawn; of a day not yet come, 422)."""
    for day in DAYS_OUT:
        for period in ("day", "week", "month", "all"):
            response = await client.get(f"/api/v1/leaderboards?daily={day}&period={period}")
            found = await problem(response, 422)
            assert "daily" in json.dumps(found), (day, found)
        for rule in ("classic", "relaxed"):
            response = await client.get(f"/api/v1/daily?date={day}&rule={rule}")
            await problem(response, 422)
    for day in DAYS_IN:
        for period in ("day", "week", "month", "all"):
            response = await client.get(f"/api/v1/leaderboards?daily={day}&period={period}")
            assert response.status == 200, (day, period, await response.text())
    first = await client.get("/api/v1/daily?date=0001-01-01")
    assert first.status == 404, await first.text()
    assert (await client.get("/api/v1/daily?date=9999-12-30")).status == 422


# ---------------------------------------------------------------- idempotency records expire


async def records(db: Db) -> int:
    count: int = await db.scalar(select(func.count()).select_from(IdempotencyRecord))
    return count


async def dealt(client: TestClient[Any, Any], auth: dict[str, str]) -> tuple[str, str]:
    """A new game of a whole game's deal, and its first move (legal at once)."""
    vector = next(v for v in vectors() if "note" not in v)
    response = await client.post("/api/v1/games", json={"code": vector["code"]}, headers=auth)
    assert response.status == 201, await response.text()
    return (await response.json())["id"], vector["actions"][0]


async def test_a_key_older_than_24_hours_is_fresh(
    client: TestClient[Any, Any], clock: Clock, db: Db
) -> None:
    """A move, then an undo: the move is legal again. Retried with its key within 24 hours
    (the last millisecond too), it gets its stored answer and nothing is applied; retried
    after, before the job has deleted the record, the key is fresh: the move is applied again,
    a new action with a new answer (and a new record)."""
    ana = await new_player(client, "ana")
    game, move = await dealt(client, ana.auth)
    first = await keyed(client, ana.auth, game, move, "k-move")
    assert first.status == 200, await first.text()
    undone = await keyed(client, ana.auth, game, "undo", "k-undo")
    assert undone.status == 200, await undone.text()
    clock.now = NOW + IDEMPOTENCY_TTL_MS
    again = await keyed(client, ana.auth, game, move, "k-move")
    assert again.status == 200 and again.headers.get("Idempotent-Replayed") == "true"
    assert (await again.json())["game"]["version"] == 1
    assert await db.moves(game) == 2
    clock.now = NOW + IDEMPOTENCY_TTL_MS + 1
    fresh = await keyed(client, ana.auth, game, move, "k-move")
    assert fresh.status == 200, await fresh.text()
    assert "Idempotent-Replayed" not in fresh.headers
    assert (await fresh.json())["game"]["version"] == 3
    assert await db.moves(game) == 3
    # The new record answers the key from now on.
    replayed = await keyed(client, ana.auth, game, move, "k-move")
    assert replayed.headers.get("Idempotent-Replayed") == "true"
    assert (await replayed.json())["game"]["version"] == 3
    # An expired key may name another action: it is a fresh key (not idempotency-key-reused).
    other = await keyed(client, ana.auth, game, "undo", "k-undo")
    assert other.status == 200 and "Idempotent-Replayed" not in other.headers
    assert (await other.json())["game"]["version"] == 4
    assert await records(db) == 2


async def test_the_expiry_job_deletes_expired_records_in_bounded_batches(
    client: TestClient[Any, Any], clock: Clock, db: Db
) -> None:
    ana = await new_player(client, "ana")
    game, move = await dealt(client, ana.auth)
    actions = [move, "undo"] * 4
    for number, text in enumerate(actions[:5]):
        response = await keyed(client, ana.auth, game, text, f"old-{number}")
        assert response.status == 200, await response.text()
    clock.now = NOW + 2 * 3_600_000
    for number, text in enumerate(actions[5:7]):
        response = await keyed(client, ana.auth, game, text, f"new-{number}")
        assert response.status == 200, await response.text()
    assert await records(db) == 7
    expiry = KeyExpiry(client.app[SERVICE].writers, clock)
    clock.now = NOW + IDEMPOTENCY_TTL_MS  # nothing is older than 24 hours yet
    assert await expiry.step(batch=2) == 0
    clock.now = NOW + IDEMPOTENCY_TTL_MS + 3_600_000  # the five first are
    assert await expiry.step(batch=2, batches=2) == 4  # two batches of two: bounded
    assert await records(db) == 3
    assert await expiry.step(batch=2) == 1
    assert await expiry.step(batch=2) == 0
    assert await records(db) == 2
    # The records kept still answer their retries.
    again = await keyed(client, ana.auth, game, actions[6], "new-1")
    assert again.headers.get("Idempotent-Replayed") == "true", await again.text()
    clock.now = NOW + 2 * 3_600_000 + IDEMPOTENCY_TTL_MS + 1
    assert await expiry.step() == 2
    assert await records(db) == 0


async def test_every_app_runs_the_expiry_job(client: TestClient[Any, Any]) -> None:
    names = {task.get_name() for task in asyncio.all_tasks()}
    assert "the idempotency records' expiry" in names, names
