"""Every path metered (issue 21, `server/api/limits.py`): the health checks, `/metrics`, the API
documents, the rules pages, the web client's files and every path no route takes are charged to
their address's budget (the same as its `/api/` requests) and refused with a `429` problem and
`Retry-After` once it is spent, while another address is served; the OAuth routes, which charge
the budgets themselves, are charged once; the in-flight cap stays the API's. The web client's
files and the documents are served from memory with an `ETag` and `Cache-Control: no-cache`
(`304` to `If-None-Match`), and read again once they change."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from server.api import pages
from server.api.limits import ADDRESS_FACTOR, IN_FLIGHT_PER_ADDRESS
from server.keys import BUDGET
from tests.api.helpers import problem
from tests.api.test_rate_budget import BUDGET as CLIENT_BUDGET
from tests.api.test_rate_budget import from_address, rate_limited, too_many
from tests.conftest import ClientFactory

ADDRESS_BUDGET = ADDRESS_FACTOR * CLIENT_BUDGET
"""What one address may send in the tests' window of 8 seconds (RATE 0.625: 5 a client)."""
POLICY = f'"address";q={ADDRESS_BUDGET};w=8'

PATHS = [
    ("GET", "/healthz", 200),
    ("GET", "/readyz", 200),
    ("GET", "/metrics", 200),
    ("GET", "/openapi.yaml", 200),
    ("GET", "/asyncapi.yaml", 200),
    ("GET", "/rules", 200),
    ("GET", "/problems", 200),
    ("GET", "/problems/too-many-requests", 200),
    ("GET", "/", 200),
    ("GET", "/web/app.js", 200),
    ("HEAD", "/web/style.css", 200),
    ("GET", "/web/nothing.js", 404),
    ("GET", "/nowhere", 404),
    ("GET", "/problems/nothing", 404),
    ("PUT", "/healthz", 405),
]


@pytest.fixture
async def limited(aiohttp_client: ClientFactory, database_url: str) -> TestClient[Any, Any]:
    """The rate limit of tests/api/test_rate_budget.py (5 a client, 20 an address, every 8
    seconds), behind a trusted proxy: a test speaks from several addresses."""
    return await rate_limited(aiohttp_client, database_url, trust_forwarded=True)


@pytest.mark.parametrize(("method", "path", "status"), PATHS)
async def test_every_path_spends_its_address_budget(
    limited: TestClient[Any, Any], method: str, path: str, status: int
) -> None:
    """Exactly the address's budget is answered (each request charged once), then `429`."""
    address = from_address("198.51.100.1")
    for _ in range(ADDRESS_BUDGET):
        response = await limited.request(method, path, headers=address)
        assert response.status == status, (path, await response.text())
        assert response.headers["RateLimit-Policy"] == POLICY
        await response.read()
    refused = await limited.request(method, path, headers=address)
    if method == "HEAD":
        assert refused.status == 429 and int(refused.headers["Retry-After"]) >= 1
    else:
        await too_many(refused)
    assert refused.headers["RateLimit-Policy"] == POLICY
    assert refused.headers["RateLimit"].startswith('"address";r=0;t=')


async def test_a_flood_of_health_checks_and_404s_is_refused_while_others_are_served(
    limited: TestClient[Any, Any],
) -> None:
    flooder = from_address("198.51.100.2")
    sent = [
        limited.get("/healthz" if n % 2 else f"/missing/{n}", headers=flooder)
        for n in range(3 * ADDRESS_BUDGET)
    ]
    statuses = [response.status for response in await asyncio.gather(*sent)]
    assert statuses.count(429) == 2 * ADDRESS_BUDGET, statuses
    assert statuses.count(200) + statuses.count(404) == ADDRESS_BUDGET, statuses
    # The flooding address's API requests share its budget: refused too.
    await too_many(await limited.get("/api/v1/daily", headers=flooder))
    # Another address is served, its health checks and its API requests.
    other = from_address("198.51.100.3")
    assert (await limited.get("/healthz", headers=other)).status == 200
    assert (await limited.get("/api/v1/daily", headers=other)).status == 200
    assert (await limited.get("/nowhere", headers=other)).status == 404


async def test_api_requests_spend_the_budget_of_the_other_paths(
    limited: TestClient[Any, Any],
) -> None:
    """One address's budget, whatever the path: the API's four players' worth (here anonymous
    requests spread over tokens would do the same) then a page's file is refused."""
    address = "198.51.100.4"
    for n in range(ADDRESS_BUDGET):
        response = await limited.get(
            "/api/v1/daily" if n < CLIENT_BUDGET else "/web/app.js", headers=from_address(address)
        )
        assert response.status == 200, (n, await response.text())
    await too_many(await limited.get("/web/app.js", headers=from_address(address)))


async def test_a_refusal_is_in_the_language_asked_for(limited: TestClient[Any, Any]) -> None:
    headers = from_address("198.51.100.5", {"Accept-Language": "he"})
    for _ in range(ADDRESS_BUDGET):
        await (await limited.get("/healthz", headers=headers)).read()
    refused = await limited.get("/healthz", headers=headers)
    body = await problem(refused, 429)
    assert refused.headers["Content-Language"] == "he"
    assert "Slow down" not in body["detail"], body


async def test_the_oauth_routes_are_charged_once(limited: TestClient[Any, Any]) -> None:
    """They charge the budgets themselves (`server.api.oauth`): the middleware leaves them."""
    budget = limited.app[BUDGET]
    assert budget.limiter is not None
    address = "198.51.100.6"
    response = await limited.get(
        "/.well-known/oauth-authorization-server", headers=from_address(address)
    )
    assert response.status == 200
    stats = await budget.limiter.get_window_stats(budget.address_item, "address", address)
    assert stats.remaining == ADDRESS_BUDGET - 1
    # A path under /oauth/ that no route takes is a 404 like any other: charged once too.
    missing = await limited.get("/oauth/nothing", headers=from_address(address))
    assert missing.status == 404
    stats = await budget.limiter.get_window_stats(budget.address_item, "address", address)
    assert stats.remaining == ADDRESS_BUDGET - 2


async def test_the_in_flight_cap_stays_the_apis(limited: TestClient[Any, Any]) -> None:
    budget = limited.app[BUDGET]
    address = "198.51.100.7"
    budget.in_flight[address] = IN_FLIGHT_PER_ADDRESS  # as if 16 API requests were answered
    try:
        assert (await limited.get("/healthz", headers=from_address(address))).status == 200
        assert (await limited.get("/web/app.js", headers=from_address(address))).status == 200
        refused = await limited.get("/api/v1/daily", headers=from_address(address))
        await problem(refused, 429)
    finally:
        del budget.in_flight[address]


async def test_nothing_is_counted_with_the_rate_limit_off(client: TestClient[Any, Any]) -> None:
    for path in ("/healthz", "/web/app.js", "/nowhere"):
        response = await client.get(path)
        assert "RateLimit-Policy" not in response.headers, path


# ---------------------------------------------------------------- cheap files, cache headers


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/web/app.js", "text/javascript"),
        ("/", "text/html"),
        ("/openapi.yaml", "application/yaml"),
        ("/asyncapi.yaml", "application/yaml"),
    ],
)
async def test_files_carry_cache_headers_and_revalidate(
    client: TestClient[Any, Any], path: str, content_type: str
) -> None:
    first = await client.get(path)
    assert first.status == 200 and first.content_type == content_type
    body = await first.read()
    etag = first.headers["ETag"]
    assert first.headers["Cache-Control"] == "no-cache"
    again = await client.get(path)
    assert await again.read() == body and again.headers["ETag"] == etag
    kept = await client.get(path, headers={"If-None-Match": etag})
    assert kept.status == 304 and await kept.read() == b""
    assert kept.headers["ETag"] == etag and kept.headers["Cache-Control"] == "no-cache"
    other = await client.get(path, headers={"If-None-Match": '"other"'})
    assert other.status == 200 and await other.read() == body


async def test_a_changed_file_is_read_again(
    client: TestClient[Any, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "web"
    folder.mkdir()
    file = folder / "app.js"
    file.write_text("export const a = 1;\n", encoding="utf-8")
    monkeypatch.setattr(pages, "FOLDER", folder)
    first = await client.get("/web/app.js")
    assert await first.text() == "export const a = 1;\n"
    file.write_text("export const a = 22;\n", encoding="utf-8")  # another size
    second = await client.get("/web/app.js", headers={"If-None-Match": first.headers["ETag"]})
    assert second.status == 200 and await second.text() == "export const a = 22;\n"
    assert second.headers["ETag"] != first.headers["ETag"]
    file.unlink()
    assert (await client.get("/web/app.js")).status == 404
