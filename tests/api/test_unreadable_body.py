"""A body that cannot be decoded (a `Content-Encoding` the bytes do not follow) is a 400
problem, not a 500 (issue 14, item 3): sent over a raw socket, as aiohttp's client would
encode it properly."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from tests.api.helpers import raw


async def test_a_body_that_is_not_the_gzip_it_claims_is_a_400_problem(
    client: TestClient[Any, Any],
) -> None:
    status, headers, problem = await raw(
        client,
        b"POST /api/v1/players HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        b"Content-Type: application/json\r\nContent-Encoding: gzip\r\n"
        b"Content-Length: 5\r\n\r\nabcde",
    )
    assert status == 400, problem
    assert headers["content-type"].startswith("application/problem+json"), headers
    assert (problem["status"], problem["type"]) == (400, "/problems/bad-body"), problem
    # Nothing was created: the next sign-up is the first player.
    response = await client.post("/api/v1/players", json={"name": "after-the-bad-body"})
    assert response.status == 201
