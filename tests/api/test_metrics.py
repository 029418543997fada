"""`GET /metrics` (issue 14): the Prometheus text format, parsed by prometheus-client's own
parser, with figures that move; bounded labels (route templates, never a raw path or an id);
the request id; the access log's lines and the other log lines written meanwhile.

The metrics of one process are shared by every app it runs, so each test compares a scrape
taken before with one taken after what it does.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

from server.app import create_app
from server.keys import ENGINE
from server.serve import JsonFormatter, OneLineRefusals, RequestIdFilter, TextFormatter
from server.settings import Settings
from tests.conftest import Api, ClientFactory

Labels = frozenset[tuple[str, str]]
Samples = dict[tuple[str, Labels], float]

CODE = "RU1-C-AAAAAAA"  # 6S-t1 is refused by `same_suit`; 8C-t6 is legal
SETTLE_S = 10.0
"""How long a figure moved by a closing socket may take to settle (a bound, not a measure)."""


def labels(**pairs: str) -> Labels:
    return frozenset(pairs.items())


async def scrape(client: TestClient[Any, Any]) -> Samples:
    response = await client.get("/metrics")
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    samples: Samples = {}
    for family in text_string_to_metric_families(await response.text()):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def moved(before: Samples, after: Samples, name: str, **pairs: str) -> float:
    key = (name, labels(**pairs))
    return after.get(key, 0.0) - before.get(key, 0.0)


def every_label_value(samples: Samples) -> Iterator[str]:
    for _, pairs in samples:
        for _, value in pairs:
            yield value


async def settled(
    client: TestClient[Any, Any], check: Callable[[Samples], bool], what: str
) -> Samples:
    """Scrapes until `check` holds (for what a closing socket does after the client's close)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_S
    while True:
        samples = await scrape(client)
        if check(samples):
            return samples
        assert loop.time() < deadline, what
        await asyncio.sleep(0.02)


# ---------------------------------------------------------------- requests


async def test_requests_are_counted_by_route_template_method_and_status(
    client: TestClient[Any, Any], api: Api
) -> None:
    unknown = str(uuid.uuid4())
    before = await scrape(client)
    assert (await client.get("/healthz")).status == 200
    assert (await client.get(f"/api/v1/games/{unknown}")).status == 404
    assert (await client.get(f"/no/such/place/{unknown}")).status == 404
    assert (await client.get(f"/elsewhere/{uuid.uuid4()}")).status == 404
    assert (await client.put("/healthz")).status == 405
    _, auth = await api.player("metered")
    game = await api.game(auth, code=CODE)
    after = await scrape(client)

    requests = "solitaire_http_requests_total"
    assert moved(before, after, requests, route="/healthz", method="GET", status="200") == 1
    game_route = "/api/v1/games/{id}"
    assert moved(before, after, requests, route=game_route, method="GET", status="404") == 1
    # Every path that no route takes shares one label, whatever the path.
    assert moved(before, after, requests, route="(unmatched)", method="GET", status="404") == 2
    assert moved(before, after, requests, route="(unmatched)", method="PUT", status="405") == 1
    assert moved(before, after, requests, route="/api/v1/players", method="POST", status="201") == 1
    assert moved(before, after, requests, route="/api/v1/games", method="POST", status="201") == 1
    # The scrape before this one is counted too.
    assert moved(before, after, requests, route="/metrics", method="GET", status="200") == 1

    # A latency histogram per route: one observation more in the +Inf bucket and the count.
    latency = "solitaire_http_request_duration_seconds"
    for name in (f"{latency}_count", f"{latency}_bucket"):
        extra = {"le": "+Inf"} if name.endswith("_bucket") else {}
        assert moved(before, after, name, route=game_route, method="GET", **extra) == 1
    assert moved(before, after, f"{latency}_sum", route=game_route, method="GET") > 0

    # No label ever holds a raw path, an id, a token or a player.
    values = set(every_label_value(after))
    for secret in (unknown, game["id"], auth["Authorization"].split()[1], "metered"):
        assert not any(secret in value for value in values), secret


async def test_a_method_outside_the_usual_ones_is_one_label(client: TestClient[Any, Any]) -> None:
    before = await scrape(client)
    response = await client.request("PROPFIND", "/healthz")
    assert response.status == 405
    after = await scrape(client)
    requests = "solitaire_http_requests_total"
    assert moved(before, after, requests, route="(unmatched)", method="other", status="405") == 1
    assert "PROPFIND" not in set(every_label_value(after))


@pytest.mark.slow
async def test_metrics_are_served_beside_a_flood_and_refusals_are_counted(
    database_url: str, aiohttp_client: ClientFactory
) -> None:
    settings = Settings(
        database_url=database_url, rate_limit=5, migrate=False, trust_forwarded=True
    )
    client = await aiohttp_client(create_app(settings))
    before = await scrape(client)
    flooder = {"X-Forwarded-For": "198.51.100.9"}
    statuses = [
        (await client.get("/api/v1/players/nobody", headers=flooder)).status for _ in range(10)
    ]
    assert 429 in statuses, statuses
    # /metrics is charged to its own address's budget (issue 21: every path is metered, see
    # tests/api/test_metering.py): scraped from another address than the flood's, it is served.
    for _ in range(10):
        await scrape(client)
    after = await scrape(client)
    requests = "solitaire_http_requests_total"
    route = "/api/v1/players/{id}"
    refused = moved(before, after, requests, route=route, method="GET", status="429")
    assert refused == statuses.count(429)
    assert moved(before, after, requests, route="/metrics", method="GET", status="200") == 11
    # Each refusal is counted once by the budget that refused it (an address or a client).
    kinds = {
        dict(pairs)["kind"] for name, pairs in after if name == "solitaire_rate_refusals_total"
    }
    by_kind = sum(moved(before, after, "solitaire_rate_refusals_total", kind=k) for k in kinds)
    assert by_kind == statuses.count(429)


async def test_openmetrics_when_asked(client: TestClient[Any, Any]) -> None:
    response = await client.get("/metrics", headers={"Accept": "application/openmetrics-text"})
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("application/openmetrics-text")
    assert (await response.text()).rstrip().endswith("# EOF")


# ---------------------------------------------------------------- database pool


async def idle_connections(client: TestClient[Any, Any], gauge: tuple[str, Any]) -> float:
    """The gauge once no background task (the races' tick, the daily reveal's check, the
    sessions' guard) holds a connection for a moment: at most 5 s of readings."""
    for _ in range(50):
        value = (await scrape(client))[gauge]
        if value == 0:
            return value
        await asyncio.sleep(0.1)
    return value


async def test_the_database_connections_in_use(client: TestClient[Any, Any]) -> None:
    gauge = ("solitaire_db_pool_connections_in_use", labels())
    assert await idle_connections(client, gauge) == 0
    engine = client.app[ENGINE]
    async with engine.connect() as first, engine.connect() as second:
        await first.execute(text("SELECT 1"))
        await second.execute(text("SELECT 1"))
        assert (await scrape(client))[gauge] >= 2  # (and a background task's, at times)
    assert await idle_connections(client, gauge) == 0


# ---------------------------------------------------------------- request ids and the log


async def test_a_sane_request_id_is_echoed_and_any_other_replaced(
    client: TestClient[Any, Any],
) -> None:
    response = await client.get("/healthz", headers={"X-Request-Id": "edge-7f3a:1.b_c"})
    assert response.headers["X-Request-Id"] == "edge-7f3a:1.b_c"
    # A problem answer names it too.
    response = await client.get("/nowhere", headers={"X-Request-Id": "abc"})
    assert response.status == 404
    assert response.headers["X-Request-Id"] == "abc"
    seen = set()
    for sent in (None, "", "has space", "x" * 65, "semi;colon", "é"):
        headers = {} if sent is None else {"X-Request-Id": sent}
        response = await client.get("/healthz", headers=headers)
        made = response.headers["X-Request-Id"]
        assert re.fullmatch(r"[0-9a-f]{32}", made), (sent, made)
        seen.add(made)
    assert len(seen) == 6  # a fresh one each time


async def test_one_access_log_line_per_request_with_its_fields(
    client: TestClient[Any, Any], caplog: pytest.LogCaptureFixture
) -> None:
    game_id = str(uuid.uuid4())
    with caplog.at_level(logging.INFO, logger="server.access"):
        response = await client.get(f"/api/v1/games/{game_id}", headers={"X-Request-Id": "r-1"})
        assert response.status == 404
        await client.get("/healthz")
    lines = [record for record in caplog.records if record.name == "server.access"]
    assert len(lines) == 2
    first = lines[0]
    entry = json.loads(JsonFormatter().format(first))
    assert entry["level"] == "INFO" and entry["logger"] == "server.access"
    assert entry["method"] == "GET"
    assert entry["route"] == "/api/v1/games/{id}"
    assert entry["status"] == 404
    assert isinstance(entry["duration_ms"], float) and entry["duration_ms"] >= 0
    assert entry["request_id"] == "r-1"
    assert game_id not in json.dumps(entry)  # the route, never the path
    plain = TextFormatter().format(first)
    assert "\n" not in plain
    assert "GET /api/v1/games/{id} 404 " in plain and plain.endswith("id=r-1")
    assert json.loads(JsonFormatter().format(lines[1]))["route"] == "/healthz"


async def test_an_error_in_our_code_keeps_its_traceback_and_request_id(
    settings: Settings, aiohttp_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    async def boom(request: web.Request) -> web.Response:
        raise RuntimeError("the handler broke")

    app = create_app(settings)
    app.router.add_get("/boom", boom)
    client = await aiohttp_client(app)
    caplog.handler.addFilter(RequestIdFilter())
    with caplog.at_level(logging.INFO):
        response = await client.get("/boom", headers={"X-Request-Id": "boom-1"})
    assert response.status == 500
    assert response.headers["Content-Type"].startswith("application/problem+json")
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert len(errors) == 1
    entry = json.loads(JsonFormatter().format(errors[0]))
    assert entry["request_id"] == "boom-1"
    assert "Traceback" in entry["exception"] and "the handler broke" in entry["exception"]
    assert "Traceback" in TextFormatter().format(errors[0])
    # aiohttp's server logger keeps the traceback of an error that is not a parse error.
    try:
        raise RuntimeError("not a parse error")
    except RuntimeError:
        record = logging.getLogger("aiohttp.server").makeRecord(
            "aiohttp.server", logging.ERROR, __file__, 1, "Error handling request", (), None
        )
        record.exc_info = sys.exc_info()
    assert OneLineRefusals().filter(record)
    assert record.exc_info is not None
    assert "Traceback" in TextFormatter().format(record)


# ---------------------------------------------------------------- hooks in the service and
# the WebSocket: these hold once the events are wired (see server/metrics.py)


async def test_applied_and_refused_actions_are_counted_by_rule(
    client: TestClient[Any, Any], api: Api
) -> None:
    _, auth = await api.player("mover")
    game = await api.game(auth, code=CODE)
    before = await scrape(client)
    refusal = await api.act(auth, game["id"], {"card": "6S", "to": "t1"}, status=422)
    assert refusal["rule"] == "same_suit"
    middle = await scrape(client)
    assert moved(before, middle, "solitaire_actions_refused_total", rule="same_suit") == 1
    assert moved(before, middle, "solitaire_actions_applied_total", rule="classic") == 0
    await api.act(auth, game["id"], {"card": "8C", "to": "t6"})
    after = await scrape(client)
    assert moved(middle, after, "solitaire_actions_applied_total", rule="classic") == 1
    assert moved(middle, after, "solitaire_actions_refused_total", rule="same_suit") == 0
    # A retry answered from its idempotency key is not applied again.
    key = {"Idempotency-Key": "k-1", **auth}
    path = f"/api/v1/games/{game['id']}/moves"
    for _ in range(2):
        response = await client.post(path, json={"action": "undo"}, headers=key)
        assert response.status == 200, await response.text()
    last = await scrape(client)
    assert moved(after, last, "solitaire_actions_applied_total", rule="classic") == 1


async def test_open_sockets_and_watchers(client: TestClient[Any, Any], api: Api) -> None:
    _, auth = await api.player("watcher")
    game = await api.game(auth, code=CODE)
    sockets = ("solitaire_websockets_open", labels())
    watchers = ("solitaire_watchers", labels())
    before = await scrape(client)
    ws = await client.ws_connect("/api/v1/live", protocols=("solitaire.v1",))
    try:
        await ws.send_json({"type": "watch", "id": 1, "game_id": game["id"]})
        answer = await ws.receive_json(timeout=SETTLE_S)
        assert answer["type"] == "watching", answer
        during = await scrape(client)
        assert during[sockets] - before.get(sockets, 0) == 1
        assert during[watchers] - before.get(watchers, 0) == 1
    finally:
        await ws.close()
    await settled(
        client,
        lambda now: (
            now[sockets] == before.get(sockets, 0) and now[watchers] == before.get(watchers, 0)
        ),
        "the socket and its watch are still counted after the close",
    )


async def test_a_hint_is_timed_and_leaves_the_solver_queue_empty(
    client: TestClient[Any, Any], api: Api
) -> None:
    _, auth = await api.player("hinted")
    game = await api.game(auth, code=CODE)
    before = await scrape(client)
    response = await client.get(f"/api/v1/games/{game['id']}/hint", headers=auth)
    assert response.status == 200, await response.text()
    after = await scrape(client)
    # Hints run in the play lane of the costly work (server/services/workers.py).
    assert moved(before, after, "solitaire_solver_seconds_count", kind="play") == 1
    assert moved(before, after, "solitaire_solver_seconds_bucket", kind="play", le="+Inf") == 1
    assert after[("solitaire_solver_queue_length", labels(kind="play"))] == 0
