"""The rate-limit headers (SPEC 2.7, issue 20): every `/api/` answer names the budgets that
charged it in `RateLimit-Policy` and the state of the one nearest to its end in `RateLimit`
(IETF httpapi structured fields); `r` counts down and is `0` exactly when `429` begins, in one
process and across processes sharing Redis. The budgets are `server/api/limits.py`'s; the tests
use a budget of 5 requests every 8 seconds (`RATE`), so that what a burst spends stays spent."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp.test_utils import TestClient

from server.api.limits import (
    ADDRESS_FACTOR,
    IN_FLIGHT_PER_ADDRESS,
    SIGNIN_LIMIT,
    SOCKETS_PER_ADDRESS,
    SOCKETS_PER_PLAYER,
)
from server.app import create_app
from server.keys import BUDGET
from server.services.sessions import FAILURE_WINDOW_MS, FAILURES
from server.services.workers import PER_ADDRESS, PER_CLIENT, QUEUE
from server.settings import DEFAULT_BODY_LIMIT, DEFAULT_SIGNUP_LIMIT, Settings
from tests.api.helpers import problem
from tests.conftest import ClientFactory
from tests.names import unique_name
from tests.redis_support import redis as redis

DOCUMENT = Path(__file__).resolve().parents[2] / "openapi.yaml"
RATE = 0.625
"""5 requests every 8 seconds."""
QUOTA, WINDOW = 5, 8

# RFC 8941: a List of Items, each a String with Parameters whose values are Integers or Strings
# (all these fields use). Parsed strictly: anything else in the field fails the test.
KEY = r"[a-z*][a-z0-9_.*-]*"
PARAMETER = rf';({KEY})=(-?\d{{1,15}}|"[^"\\]*")'
MEMBER = re.compile(rf'"([^"\\]*)"((?:{PARAMETER})*)')


def structured_list(field: str) -> list[tuple[str, dict[str, int | str]]]:
    """The members of a structured-field List of strings with parameters, strictly parsed."""
    members = []
    for text in field.split(", "):
        match = MEMBER.fullmatch(text)
        assert match is not None, f"not a structured-field member: {text!r} in {field!r}"
        params: dict[str, int | str] = {}
        for key, value in re.findall(PARAMETER, match.group(2)):
            params[key] = value.strip('"') if value.startswith('"') else int(value)
        members.append((match.group(1), params))
    return members


def policies(response: Any) -> dict[str, dict[str, int | str]]:
    return dict(structured_list(response.headers["RateLimit-Policy"]))


def state(response: Any) -> tuple[str, int, int]:
    """(the budget named, r, t) of the RateLimit header, which names exactly one."""
    [(name, params)] = structured_list(response.headers["RateLimit"])
    assert set(params) == {"r", "t"}, params
    r, t = params["r"], params["t"]
    assert isinstance(r, int) and isinstance(t, int)
    return name, r, t


async def limited_app(
    aiohttp_client: ClientFactory, database_url: str, **extra: Any
) -> TestClient[Any, Any]:
    settings = Settings(
        database_url=database_url,
        rate_limit=RATE,
        migrate=False,
        trust_forwarded=True,
        **extra,
    )
    return await aiohttp_client(create_app(settings))


@pytest.fixture
async def limited(aiohttp_client: ClientFactory, database_url: str) -> TestClient[Any, Any]:
    return await limited_app(aiohttp_client, database_url)


def at(address: str, **headers: str) -> dict[str, str]:
    return {"X-Forwarded-For": address, **headers}


async def sign_up(client: TestClient[Any, Any], address: str) -> dict[str, str]:
    response = await client.post(
        "/api/v1/players", json={"name": unique_name("rl")}, headers=at(address)
    )
    assert response.status == 201, await response.text()
    return {"Authorization": f"Bearer {(await response.json())['token']}"}


async def count_down(client: TestClient[Any, Any], send: Any, budget: str, quota: int) -> list[int]:
    """Sends `send()` until the first 429; checks that every answer before it names `budget`
    with `r` one less each time, that `r` is 0 on the last answered one, and that the 429 names
    `budget` with `r=0` and `t` equal to its Retry-After. The r's seen."""
    seen = []
    for _ in range(quota + 1):
        response = await send()
        name, r, t = state(response)
        assert name == budget, response.headers["RateLimit"]
        if response.status == 429:
            await problem(response, 429)
            assert r == 0 and t == int(response.headers["Retry-After"]) >= 1
            assert seen and seen[-1] == 0, seen
            return seen
        assert response.status < 400, await response.text()
        assert 1 <= t <= WINDOW, t
        seen.append(r)
    raise AssertionError(f"no 429 after {quota + 1} requests: {seen}")


async def test_a_players_r_counts_down_to_0_and_429_begins_there(
    limited: TestClient[Any, Any],
) -> None:
    auth = await sign_up(limited, "198.51.100.1")

    async def send() -> Any:
        return await limited.get("/api/v1/me", headers=at("198.51.100.2", **auth))

    seen = await count_down(limited, send, "player", QUOTA)
    assert seen == [4, 3, 2, 1, 0]
    response = await send()  # still refused, still 0
    assert response.status == 429 and state(response)[1] == 0
    assert policies(response) == {
        "address": {"q": QUOTA * ADDRESS_FACTOR, "w": WINDOW},
        "player": {"q": QUOTA, "w": WINDOW},
    }


async def test_an_anonymous_client_counts_down_its_own_budget(
    limited: TestClient[Any, Any],
) -> None:
    async def send() -> Any:
        return await limited.get("/api/v1/daily", headers=at("198.51.100.3"))

    assert await count_down(limited, send, "anonymous", QUOTA) == [4, 3, 2, 1, 0]


async def test_the_address_budget_is_named_when_it_is_nearest_to_its_end(
    limited: TestClient[Any, Any],
) -> None:
    """Players signed up elsewhere, all speaking from one address: each player's budget has
    room, the address's runs out first, and the headers follow it down to its 429."""
    players = [await sign_up(limited, f"198.51.100.{10 + n}") for n in range(ADDRESS_FACTOR + 1)]
    sent = 0
    address_quota = QUOTA * ADDRESS_FACTOR

    async def send() -> Any:
        nonlocal sent
        auth = players[sent % len(players)]
        sent += 1
        return await limited.get("/api/v1/me", headers=at("203.0.113.9", **auth))

    seen = []
    # While a player has fewer left than the address, its budget is the one named.
    for _ in range(address_quota + 1):
        response = await send()
        name, r, _ = state(response)
        if response.status == 429:
            assert name == "address" and r == 0
            break
        address_left = address_quota - sent
        players_left = QUOTA - (sent - 1) // len(players) - 1
        assert (name, r) == (
            ("address", address_left) if address_left <= players_left else ("player", players_left)
        ), (sent, response.headers["RateLimit"])
        seen.append((name, r))
    assert seen[-1] == ("address", 0), seen
    assert sent == address_quota + 1
    assert list(policies(response)) == ["address"]  # refused before any other budget


async def test_sign_ups_and_sign_ins_name_their_budget(limited: TestClient[Any, Any]) -> None:
    response = await limited.post(
        "/api/v1/players", json={"name": unique_name("su")}, headers=at("198.51.100.20")
    )
    assert response.status == 201
    assert policies(response)["signup"] == {"q": DEFAULT_SIGNUP_LIMIT, "w": 60}
    assert list(policies(response)) == ["address", "anonymous", "signup"]
    response = await limited.post(
        "/api/v1/sessions",
        json={"name": unique_name("nobody"), "password": "a wrong password"},
        headers=at("198.51.100.21"),
    )
    await problem(response, 401)
    assert policies(response)["signin"] == {"q": SIGNIN_LIMIT, "w": 60}
    assert state(response)[0] == "anonymous"  # 4 left of 5, 29 of 30


async def test_every_kind_of_answer_carries_the_headers(limited: TestClient[Any, Any]) -> None:
    """Problems, a preflight, a HEAD, an unknown path and a WebSocket's handshake."""
    answers = [
        await limited.get("/api/v1/games/not-a-uuid", headers=at("198.51.100.30")),
        await limited.get("/api/v1/nothing-here", headers=at("198.51.100.31")),
        await limited.post("/api/v1/games", data=b"{", headers=at("198.51.100.32")),
        await limited.options(
            "/api/v1/games",
            headers=at(
                "198.51.100.33",
                Origin="http://elsewhere.example",
                **{"Access-Control-Request-Method": "POST"},
            ),
        ),
        await limited.head("/api/v1/daily", headers=at("198.51.100.34")),
    ]
    for response in answers:
        assert state(response)[:2] == ("anonymous", QUOTA - 1), response
        assert "anonymous" in policies(response)
    ws = await limited.ws_connect(
        "/api/v1/live", protocols=("solitaire.v1",), headers=at("198.51.100.35")
    )
    try:
        assert ws._response is not None
        assert state(ws._response)[:2] == ("anonymous", QUOTA - 1)
    finally:
        await ws.close()
    # An event stream: its answer's headers are sent before its first event.
    auth = await sign_up(limited, "198.51.100.36")
    stream = await limited.get("/api/v1/me/events", headers=at("198.51.100.37", **auth))
    try:
        assert stream.status == 200 and stream.content_type == "text/event-stream"
        assert state(stream)[:2] == ("player", QUOTA - 1)
    finally:
        stream.close()


async def test_the_in_flight_cap_names_itself(limited: TestClient[Any, Any]) -> None:
    """A refusal by the in-flight cap charges no budget: its headers name the cap."""
    budget = limited.app[BUDGET]
    budget.in_flight["198.51.100.40"] = IN_FLIGHT_PER_ADDRESS  # as if 16 were being answered
    response = await limited.get("/api/v1/daily", headers=at("198.51.100.40"))
    await problem(response, 429)
    assert response.headers["RateLimit-Policy"] == (
        f'"in-flight";q={IN_FLIGHT_PER_ADDRESS};qu="concurrent-requests"'
    )
    assert state(response) == ("in-flight", 0, 1)
    del budget.in_flight["198.51.100.40"]


async def test_no_headers_when_the_rate_limit_is_off(client: TestClient[Any, Any]) -> None:
    response = await client.get("/api/v1/daily")
    assert response.status == 200
    assert "RateLimit" not in response.headers and "RateLimit-Policy" not in response.headers


async def test_r_counts_down_across_processes_sharing_redis(
    aiohttp_client: ClientFactory, database_url: str, redis: tuple[str, Any]
) -> None:
    """Two apps (as two server processes) on one Redis: one budget, one count, whichever
    process answers; the 429 begins where the shared r reached 0."""
    url, _ = redis
    apps = [
        await limited_app(aiohttp_client, database_url, rate_limit_storage=url) for _ in range(2)
    ]
    address = "10." + ".".join(str(byte) for byte in uuid.uuid4().bytes[:3])  # this run's own
    sent = 0

    async def send() -> Any:
        nonlocal sent
        sent += 1
        return await apps[sent % 2].get("/api/v1/daily", headers=at(address))

    assert await count_down(apps[0], send, "anonymous", QUOTA) == [4, 3, 2, 1, 0]


def openapi() -> dict[str, Any]:
    loaded = yaml.safe_load(DOCUMENT.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_the_document_names_every_limit_with_its_figure() -> None:
    """The Limits section of openapi.yaml says the figures the code has."""
    text = " ".join(openapi()["info"]["description"].split())
    limits = text[text.index("**Limits.**") : text.index("**CORS.**")]
    rate = Settings(database_url="sqlite:///unused.db").rate_limit
    assert DEFAULT_BODY_LIMIT % 1024 == 0 and FAILURE_WINDOW_MS % 60_000 == 0
    minutes = FAILURE_WINDOW_MS // 60_000
    for figure in (
        f"*Request bodies*: {DEFAULT_BODY_LIMIT // 1024} KiB (`413`)",
        f"`RATE_LIMIT` requests a second (**{rate:g}**",
        f"{ADDRESS_FACTOR} times that (**{rate * ADDRESS_FACTOR:g}** a second)",
        f"**{DEFAULT_SIGNUP_LIMIT} a minute** per address (`SIGNUP_LIMIT`)",
        f"**{SIGNIN_LIMIT} a minute** per address",
        f"after **{FAILURES} failures within {minutes} minutes** for one name",
        f"until the oldest of them is {minutes} minutes old",
        f"**{IN_FLIGHT_PER_ADDRESS} requests** being answered at once",
        f"**{PER_CLIENT} at a time per client** and **{PER_ADDRESS} at a time per address**",
        f"**1 running and {QUEUE} waiting**",
        f"**{SOCKETS_PER_PLAYER} per player** and **{SOCKETS_PER_ADDRESS} per address**",
        f'"in-flight";q={IN_FLIGHT_PER_ADDRESS};qu="concurrent-requests"',
        f'"costly-address";q={PER_ADDRESS};qu="concurrent-requests"',
    ):
        assert figure in limits, figure


def test_every_api_answer_documents_the_headers() -> None:
    """Every /api/ operation's success (and handshake) documents RateLimit-Policy and
    RateLimit, and so does the 429."""
    document = openapi()
    for path, item in document["paths"].items():
        if not path.startswith("/api/"):
            continue
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for status, response in operation["responses"].items():
                if status[0] in "12" and "$ref" not in response:
                    headers = response.get("headers", {})
                    assert {"RateLimit-Policy", "RateLimit"} <= set(headers), (
                        method,
                        path,
                        status,
                    )
    refused = document["components"]["responses"]["TooManyRequests"]["headers"]
    assert {"Retry-After", "RateLimit-Policy", "RateLimit"} <= set(refused)
