"""A body that cannot be decoded (a `Content-Encoding` the bytes do not follow) is a 400
problem, not a 500 (issue 14, item 3): sent over a raw socket, as aiohttp's client would
encode it properly."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp.test_utils import TestClient


async def raw_post(client: TestClient[Any, Any], path: str, headers: str, body: bytes) -> bytes:
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{headers}"
        f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


async def test_a_body_that_is_not_the_gzip_it_claims_is_a_400_problem(
    client: TestClient[Any, Any],
) -> None:
    answer = await raw_post(
        client,
        "/api/v1/players",
        "Content-Type: application/json\r\nContent-Encoding: gzip\r\n",
        b"abcde",
    )
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 "), head
    assert b"application/problem+json" in head, head
    problem = json.loads(body)
    assert (problem["status"], problem["type"]) == (400, "/problems/bad-body"), problem
    # Nothing was created: the next sign-up is the first player.
    response = await client.post("/api/v1/players", json={"name": "after-the-bad-body"})
    assert response.status == 201
