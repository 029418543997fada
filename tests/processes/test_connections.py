"""Connections bounded (issue 21, `server/api/connections.py`), against `python -m server` over
real sockets: the 65th connection of one address is refused with a 429 problem while its other
64 and another address are served; a connection that sends no request head, or sends it too
slowly, is closed by the server within `HEADER_TIMEOUT_S` (not held for 75 s); a body trickled
in is a 408 problem; aiohttp's own refusals (a bad request line, `Content-Encoding: br` or
`zstd`, `Expect: 200-ok`, a header too long) are problem documents. No traceback in the log.

The waits below bound how long the test waits for the server to act, well past the figures;
what is checked is what the server does, not when.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from server.api.connections import (
    BODY_TIMEOUT_S,
    CONNECTIONS_PER_ADDRESS,
    HEADER_TIMEOUT_S,
    KEEPALIVE_TIMEOUT_S,
)
from tests.process import ServerProcess

PROBLEM = "application/problem+json"
SLACK_S = 10.0
"""How much longer than its figure the test waits for the server to close a connection."""
HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[ServerProcess]:
    process = ServerProcess(None, tmp_path)
    try:
        await process.ready()
        yield process
        assert await asyncio.to_thread(process.terminate) == 0
        output = process.output()
        assert "Traceback" not in output, output
        assert "file limit" in output, output
    finally:
        process.close()


class Answer:
    def __init__(self, head: bytes, body: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in lines[1:] if line)
        }
        self.body = body

    def problem(self) -> dict[str, Any]:
        assert self.headers["content-type"].startswith(PROBLEM), self.headers
        document = json.loads(self.body)
        assert isinstance(document, dict)
        assert {"type", "title", "status", "detail"} <= set(document)
        assert document["status"] == self.status
        return document


async def connect(
    server: ServerProcess, source: str = "127.0.0.1"
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", server.port, local_addr=(source, 0))


async def answer(reader: asyncio.StreamReader) -> Answer:
    head = await reader.readuntil(b"\r\n\r\n")
    found = Answer(head, b"")
    found.body = await reader.readexactly(int(found.headers.get("content-length", "0")))
    return found


async def ask(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> Answer:
    writer.write(request)
    await writer.drain()
    return await asyncio.wait_for(answer(reader), 10)


async def closed_by_server(reader: asyncio.StreamReader, within_s: float) -> bytes:
    """What the server sent before it closed the connection (it must close it in time)."""
    return await asyncio.wait_for(reader.read(), within_s)


async def shut(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()


async def test_the_connection_over_an_address_cap_is_refused_while_the_others_work(
    server: ServerProcess,
) -> None:
    kept = [await connect(server) for _ in range(CONNECTIONS_PER_ADDRESS)]
    try:
        for reader, writer in kept:  # each kept alive after its answer
            assert (await ask(reader, writer, HEALTHZ)).status == 200

        reader, writer = await connect(server)
        refused = await ask(
            reader, writer, b"GET /healthz HTTP/1.1\r\nHost: x\r\nAccept-Language: ro\r\n\r\n"
        )
        assert refused.status == 429
        assert refused.headers["retry-after"] == "1"
        assert refused.headers["content-language"] == "ro"
        assert refused.problem()["type"] == "/problems/too-many-requests"
        assert str(CONNECTIONS_PER_ADDRESS) in refused.problem()["detail"]
        assert await closed_by_server(reader, SLACK_S) == b""
        await shut(writer)

        # The address's other connections are served, and so is another address.
        assert (await ask(*kept[0], HEALTHZ)).status == 200
        other = await connect(server, "127.0.0.2")
        assert (await ask(*other, HEALTHZ)).status == 200
        await shut(other[1])

        # A connection closed frees its place (once the server has seen it close).
        await shut(kept.pop()[1])
        for _ in range(100):
            reader, writer = await connect(server)
            status = (await ask(reader, writer, HEALTHZ)).status
            await shut(writer)
            if status == 200:
                break
            await asyncio.sleep(0.1)
        assert status == 200
    finally:
        for _, writer in kept:
            await shut(writer)


async def test_slow_or_silent_senders_are_dropped_within_the_header_timeout(
    server: ServerProcess,
) -> None:
    async def silent() -> bytes:
        reader, writer = await connect(server)  # half-open: connects, sends nothing
        try:
            return await closed_by_server(reader, HEADER_TIMEOUT_S + SLACK_S)
        finally:
            await shut(writer)

    async def trickled_head() -> bytes:
        reader, writer = await connect(server)
        try:
            with contextlib.suppress(ConnectionError):  # closed by the server while sending
                for byte in HEALTHZ[:-4]:  # one byte a second, never the blank line
                    if reader.at_eof():
                        break
                    writer.write(bytes([byte]))
                    await writer.drain()
                    await asyncio.sleep(1)
            return await closed_by_server(reader, HEADER_TIMEOUT_S + SLACK_S)
        finally:
            await shut(writer)

    async def idle_after_an_answer() -> bytes:
        reader, writer = await connect(server)
        try:
            assert (await ask(reader, writer, HEALTHZ)).status == 200
            return await closed_by_server(reader, KEEPALIVE_TIMEOUT_S + SLACK_S)
        finally:
            await shut(writer)

    async def served_meanwhile() -> None:
        for _ in range(5):
            reader, writer = await connect(server)
            assert (await ask(reader, writer, HEALTHZ)).status == 200
            await shut(writer)
            await asyncio.sleep(1)

    found = await asyncio.gather(
        silent(), trickled_head(), idle_after_an_answer(), served_meanwhile()
    )
    # Each connection was closed by the server, unanswered.
    assert list(found[:3]) == [b"", b"", b""]


async def test_a_trickled_body_is_a_408_problem_and_the_connection_closes(
    server: ServerProcess,
) -> None:
    reader, writer = await connect(server)
    body = json.dumps({"name": "slow-sender"}).encode()
    writer.write(
        b"POST /api/v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\nAccept-Language: he\r\n\r\n" % len(body)
    )
    await writer.drain()

    async def trickle() -> None:
        for byte in body[:-1]:  # never the last byte
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(1)

    sending = asyncio.create_task(trickle())
    try:
        timed_out = await asyncio.wait_for(answer(reader), BODY_TIMEOUT_S + SLACK_S)
    finally:
        sending.cancel()
    assert timed_out.status == 408
    assert timed_out.headers["connection"] == "close"
    assert timed_out.headers["content-language"] == "he"
    assert timed_out.problem()["type"] == "/problems/request-timeout"
    assert await closed_by_server(reader, SLACK_S) == b""
    await shut(writer)

    # The same body sent at once is served.
    reader, writer = await connect(server)
    created = await ask(
        reader,
        writer,
        b"POST /api/v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body),
    )
    assert created.status == 201, created.body
    await shut(writer)


REFUSALS = [
    ("a bad request line", b"GARBAGE\r\n\r\n", 400, "bad-request", None),
    (
        "Content-Encoding: br",
        b"POST /api/v1/players HTTP/1.1\r\nHost: x\r\nContent-Encoding: br\r\n"
        b"Content-Length: 2\r\n\r\n{}",
        415,
        "unsupported-encoding",
        "accept-encoding",
    ),
    (
        "Content-Encoding: zstd",
        b"POST /api/v1/players HTTP/1.1\r\nHost: x\r\nContent-Encoding: zstd\r\n"
        b"Content-Length: 2\r\n\r\n{}",
        415,
        "unsupported-encoding",
        "accept-encoding",
    ),
    (
        "Expect: 200-ok",
        b"POST /api/v1/players HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n"
        b"Accept-Language: ro\r\nContent-Length: 2\r\n\r\n{}",
        417,
        "expectation-failed",
        "content-language",
    ),
    (
        "a header too long",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 10_000 + b"\r\n\r\n",
        400,
        "bad-request",
        None,
    ),
    (
        "too many headers",
        b"GET /healthz HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % n for n in range(200)) + b"\r\n",
        400,
        "bad-request",
        None,
    ),
]


async def test_aiohttps_own_refusals_are_problem_documents(server: ServerProcess) -> None:
    for name, request, status, slug, header in REFUSALS:
        reader, writer = await connect(server)
        refused = await ask(reader, writer, request)
        assert refused.status == status, (name, refused.body)
        document = refused.problem()
        assert document["type"] == f"/problems/{slug}", (name, document)
        if header == "accept-encoding":
            assert set(refused.headers[header].split(", ")) >= {"gzip", "deflate"}
        if header == "content-language":
            assert refused.headers[header] == "ro"
            assert document["title"] != "Expectation failed"  # in Romanian
        await shut(writer)
