"""Connections bounded, and aiohttp's own refusals answered as problem documents (SPEC 2.7).

`serve.py` runs the application through `Runner`, whose protocol factory (`Connections`, an
`aiohttp.web.Server`) makes a `Connection` (an `aiohttp.web_protocol.RequestHandler`) per
accepted socket. The figures:

- **Per address: `CONNECTIONS_PER_ADDRESS` (64) open connections** (a browser opens 6, the
  per-address socket cap of the live endpoints is 32, the in-flight cap 16: 64 is above what one
  address uses for them). A connection above it is answered, on its first request, with a `429
  too-many-requests` problem (`Retry-After: 1`, `Connection: close`) and closed; if its request
  head has not arrived within `REFUSED_HEAD_S` (2 s) it is closed without an answer. The address
  is the socket's peer (an IPv6 address standing for its /64 network, as in the rate budgets,
  `server.api.access.client_address`): with `TRUST_FORWARDED` (behind a proxy, every client
  comes from the proxy's address) this cap is off, and the proxy's own (`deploy/nginx.conf`,
  `limit_conn`) applies instead.
- **Per process: `CONNECTIONS_PER_PROCESS` (10,000) open connections, or the file limit less
  `RESERVED_FILES` (256, for the database pools, Redis, the log and the files served), whichever
  is lower.** A connection above it is closed at once, unanswered (nothing is cheaper).
  `raise_file_limit()`, called at start by every process (the single one, the `--workers`
  parent and each worker), raises `RLIMIT_NOFILE`'s soft limit to its hard limit and logs both
  figures.
- **A request head within `HEADER_TIMEOUT_S` (10 s)** of connecting, or of its first byte on a
  kept-alive connection; else the connection is closed, unanswered (as nginx does with
  `client_header_timeout`). A half-open connection that sends nothing is closed after 10 s,
  not aiohttp's 75 s.
- **A body within `BODY_TIMEOUT_S` (10 s)** of its head, whole (a total, not an idle time
  between reads: a trickle of one byte every few seconds is what it stops; the body limit is
  256 KiB, 10 s is 26 KB/s). A handler reading it gets a `408 request-timeout` problem
  (`Connection: close`); a body still arriving after its answer was sent is dropped with the
  connection (aiohttp would read and ignore it for 10 s more).
- **Idle keep-alive: `KEEPALIVE_TIMEOUT_S` (20 s)** between an answer and the first byte of the
  next request (aiohttp's `keepalive_timeout`; `run_app`'s default is 75 s). A client's or a
  proxy's idle connections must close before that (aiohttp's client: 15 s; nginx's upstream
  connections: 10 s), or it would send a request on a socket the server is closing.

aiohttp's own refusals, which happen before the application sees a request, and so outside
`server.api.problems`' middleware:

- `Connection.handle_error`: what aiohttp's parser refuses (a bad request line or method, an
  unknown HTTP version, a header with a NUL or too long (8,190 bytes), more than 128 headers,
  `Content-Length` beside `Transfer-Encoding`) is a `400 bad-request` problem; a body in
  `Content-Encoding: br` or `zstd` (this installation decodes neither: no Brotli nor
  backports.zstd) a `415 unsupported-encoding` with `Accept-Encoding: gzip, deflate`; a
  failure of the server outside the middlewares a `500 internal-error`. These answers are in
  English: aiohttp hands over no header of a request it could not parse (so no
  `Accept-Language`), nor the request's `X-Request-Id`, CORS or rate-limit headers. The too-long
  header stays a 400 (aiohttp does not tell a long request line from a long header; 414 or 431
  would each be wrong half the time).
- `Connections.handle`: an `Expect` other than `100-continue` is a `417 expectation-failed`
  problem (aiohttp's router answers it before any middleware, with a plain-text 417), in the
  request's language.

Where aiohttp does not let us: a request aiohttp's parser refused gets no request id, no CORS
headers, no access-log line and no metrics (it never reaches the middlewares; nor do the 417
and the address cap's 429, answered before them); the HTTP version of such an answer is
aiohttp's (1.0); a TLS handshake or other bytes that are not HTTP get the same 400 problem, which
their client cannot read. A body's `Content-Encoding` that is broken (a bad gzip stream) is found
while the handler reads it: `server.api.problems.read_json` answers it (`400 bad-body`). The
head timeout starts on the first byte of a head that arrives alone; the rest of a request head
pipelined in the same packet as a whole request before it is timed by the idle keep-alive
instead (aiohttp's parser does not say it holds part of a head). Only `python -m server` runs
this protocol: aiohttp's test server (`tests/api`) runs aiohttp's own.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import resource
from collections import Counter
from typing import Any, Final

from aiohttp import web
from aiohttp.compression_utils import HAS_BROTLI, HAS_ZSTD
from aiohttp.http_exceptions import ContentEncodingError, HttpProcessingError
from aiohttp.streams import StreamReader
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from server.api.access import address_of
from server.api.problems import CONTENT_TYPE, internal_error, problem_body
from server.api.texts import localize
from server.engine.messages import negotiate
from server.services.errors import Problem

log = logging.getLogger(__name__)

CONNECTIONS_PER_ADDRESS: Final = 64
CONNECTIONS_PER_PROCESS: Final = 10_000
RESERVED_FILES: Final = 256
"""File descriptors kept for what is not a client's connection."""
NO_HARD_LIMIT_FILES: Final = 1 << 20
"""The soft file limit asked for when the hard one is unlimited (Linux's default `nr_open`)."""
HEADER_TIMEOUT_S: Final = 10.0
BODY_TIMEOUT_S: Final = 10.0
KEEPALIVE_TIMEOUT_S: Final = 20.0
"""Above aiohttp's client's own 15 s, so that such a client never reuses a connection the server
is closing."""
REFUSED_HEAD_S: Final = 2.0
"""How long a connection over its address's cap may take to send the request it is refused."""

REFUSAL_CHARS: Final = 200
"""Characters of aiohttp's description of a refused request kept in a log line or a detail."""
CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")
UNSUPPORTED_CODING: Final = re.compile(r"\((br|zstd)\)")
"""How aiohttp names an encoding it cannot decode (`... brotli (br). Please install ...`)."""


# ---------------------------------------------------------------- file limit and figures


def raise_file_limit() -> tuple[int, int]:
    """Raises `RLIMIT_NOFILE`'s soft limit to its hard limit: (the soft limit now, the soft
    limit before). A limit that cannot be raised stays as it is."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = NO_HARD_LIMIT_FILES if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError):
            return soft, soft
        return wanted, soft
    return soft, soft


def process_cap(file_limit: int) -> int:
    """The open connections one process takes with `file_limit` files."""
    return max(1, min(CONNECTIONS_PER_PROCESS, file_limit - RESERVED_FILES))


# ---------------------------------------------------------------- refusals as problems


def describe_refusal(exc: HttpProcessingError) -> str:
    """aiohttp's account of a refused request on one line, control characters escaped and
    bounded in length (it quotes the client's bytes)."""
    lines = (line.strip() for line in str(exc.message).splitlines())
    text = " ".join(line for line in lines if line and line.strip("^"))
    text = text.encode("ascii", "backslashreplace").decode("ascii")
    text = CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    if len(text) > REFUSAL_CHARS:
        text = text[:REFUSAL_CHARS] + "..."
    return text


def accepted_encodings() -> str:
    """The request `Content-Encoding`s this installation's aiohttp decodes."""
    return ", ".join(
        ["gzip", "deflate"] + (["br"] if HAS_BROTLI else []) + (["zstd"] if HAS_ZSTD else [])
    )


def problem(body: dict[str, Any], lang: str, headers: dict[str, str] | None = None) -> web.Response:
    """The problem document `body`, already in `lang` (`Content-Language` says which)."""
    return web.Response(
        status=int(body["status"]),
        text=json.dumps(body, ensure_ascii=False),
        content_type=CONTENT_TYPE,
        headers={**(headers or {}), "Content-Language": lang},
    )


def refusal_body(status: int, exc: BaseException | None) -> tuple[dict[str, Any], dict[str, str]]:
    """The English problem document (and its headers) of a request aiohttp itself refused
    with `status`, for the error `exc` it gave."""
    if isinstance(exc, ContentEncodingError):
        named = UNSUPPORTED_CODING.search(str(exc.message))
        if named is not None:
            detail = (
                f"The body's Content-Encoding {named.group(1)} is not one this server decodes: "
                "send it gzip or deflate, or not encoded."
            )
            body = problem_body(415, "unsupported-encoding", "Unsupported encoding", detail)
            return body, {"Accept-Encoding": accepted_encodings()}
    if isinstance(exc, HttpProcessingError) and status < 500:
        detail = f"The request is not HTTP that this server reads: {describe_refusal(exc)}"
        return problem_body(400, "bad-request", "Bad request", detail), {}
    if status == 504:
        detail = "The server took too long to answer."
        return problem_body(504, "http-error", "HTTP error", detail), {}
    return internal_error("en"), {}


def request_timeout() -> Problem:
    """What a handler reading a body that did not arrive in time gets: a 408 problem."""
    return Problem(
        f"The body did not arrive within {BODY_TIMEOUT_S:g} s of the request's head.",
        status=408,
        slug="request-timeout",
        title="Request timeout",
        headers={"Connection": "close"},
    )


def too_many_connections(request: BaseRequest) -> web.Response:
    """The 429 of a connection over its address's cap, in the request's language."""
    lang = negotiate(request.headers.get("Accept-Language"))
    detail = (
        f"This address has {CONNECTIONS_PER_ADDRESS} connections open to this server, as many "
        "as one address may: send this request on one of them."
    )
    body = localize(problem_body(429, "too-many-requests", "Too many requests", detail), lang)
    response = problem(body, lang, {"Retry-After": "1"})
    response.force_close()
    return response


def expectation_failed(request: BaseRequest) -> web.Response:
    """The 417 of an `Expect` other than `100-continue`, in the request's language."""
    lang = negotiate(request.headers.get("Accept-Language"))
    detail = "This server meets no expectation but Expect: 100-continue."
    body = localize(problem_body(417, "expectation-failed", "Expectation failed", detail), lang)
    return problem(body, lang)


# ---------------------------------------------------------------- the protocol


class Connection(RequestHandler):
    """aiohttp's protocol for one HTTP connection, with the timeouts above and its place in
    the caps of `Connections`."""

    __slots__ = ("_body", "_body_timer", "_head_timer", "address", "counted", "refused")

    def __init__(self, manager: Connections, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self.address: str | None = None
        """The peer address this connection counts against (None: not counted per address)."""
        self.counted = False
        self.refused = False
        """Over its address's cap: its first request is answered 429, then it closes."""
        self._head_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._body: StreamReader | None = None
        """The body still arriving (that of the latest request head)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        manager = self._manager
        super().connection_made(transport)
        assert isinstance(manager, Connections)
        if not manager.admit(self, transport):
            self.force_close()
            return
        wait = REFUSED_HEAD_S if self.refused else HEADER_TIMEOUT_S
        self._head_timer = self._loop.call_later(wait, self._head_late)

    def connection_lost(self, exc: BaseException | None) -> None:
        self._stop_timers()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._upgraded or self._payload_parser is not None:
            # A WebSocket: its own pings, not these timeouts, tell a live peer from a dead one.
            self._stop_timers()
            super().data_received(data)
            return
        before = self._request_count
        super().data_received(data)
        if self._request_count != before:
            # A request head arrived (and with it every earlier request's body).
            self._cancel_head()
            self._cancel_body()
            if self._messages:
                payload = self._messages[-1][1]
                if not payload.is_eof():
                    self._body = payload
                    self._body_timer = self._loop.call_later(BODY_TIMEOUT_S, self._body_late)
        elif self._body is not None:
            if self._body.is_eof():
                self._cancel_body()
        elif data and self._head_timer is None and not self._force_close:
            self._head_timer = self._loop.call_later(HEADER_TIMEOUT_S, self._head_late)

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        """aiohttp's own refusal as a problem document. aiohttp's handler logs it (as one
        line: `serve.OneLineRefusals`) and raises if an answer was begun already."""
        super().handle_error(request, status, exc, message)
        body, headers = refusal_body(status, exc)
        response = problem(localize(body, "en"), "en", headers)
        response.force_close()
        return response

    def _head_late(self) -> None:
        self._head_timer = None
        if self._request_in_progress or self._messages:
            self.close()  # the requests it sent whole are answered first
        else:
            self.force_close()

    def _body_late(self) -> None:
        self._body_timer = None
        payload, self._body = self._body, None
        if payload is None or payload.is_eof():
            return
        self._lingering_time = 0.0  # not another 10 s of reading what is left of it
        waiting = any(queued is payload for _, queued in self._messages)
        if self._current_request is not None or waiting:
            payload.set_exception(request_timeout())
        else:
            self.force_close()  # answered already: what is left of the body is not read

    def _cancel_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _cancel_body(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None
        self._body = None

    def _stop_timers(self) -> None:
        self._cancel_head()
        self._cancel_body()


class Connections(web.Server):
    """aiohttp's server (the protocol factory) with the connection caps: `per_address` open
    connections per peer address (None: no cap) and `total` in the process."""

    def __init__(
        self,
        handler: Any,
        *,
        per_address: int | None,
        total: int,
        **kwargs: Any,
    ) -> None:
        super().__init__(self.handle, **kwargs)
        self._inner = handler
        self.per_address = per_address
        self.total = total
        self.open = 0
        self.by_address: Counter[str] = Counter()

    def __call__(self) -> RequestHandler:
        return Connection(self, loop=self._loop, **self._kwargs)

    def admit(self, connection: Connection, transport: asyncio.BaseTransport) -> bool:
        """Counts a new connection; False when the process has as many as it takes (the
        connection is then closed unanswered)."""
        if self.open >= self.total:
            return False
        self.open += 1
        connection.counted = True
        peer = transport.get_extra_info("peername")
        if self.per_address is None or not isinstance(peer, tuple) or not peer:
            return True
        address = address_of(str(peer[0]))
        if self.by_address[address] >= self.per_address:
            connection.refused = True
            return True
        self.by_address[address] += 1
        connection.address = address
        return True

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        if isinstance(handler, Connection):
            if handler.counted:
                handler.counted = False
                self.open -= 1
            if handler.address is not None:
                left = self.by_address[handler.address] - 1
                if left > 0:
                    self.by_address[handler.address] = left
                else:
                    del self.by_address[handler.address]
                handler.address = None
        super().connection_lost(handler, exc)

    async def handle(self, request: BaseRequest) -> web.StreamResponse:
        """The application's handler, behind the address cap's refusal; the HTTP errors that
        aiohttp's router raises outside the middlewares (an `Expect` it does not meet) as
        problems."""
        protocol = request.protocol
        if isinstance(protocol, Connection) and protocol.refused:
            return too_many_connections(request)
        try:
            response: web.StreamResponse = await self._inner(request)
        except web.HTTPExpectationFailed:
            return expectation_failed(request)
        return response


class Runner(web.AppRunner):
    """`web.AppRunner` whose server is `Connections`: the caps are `per_address` (None: off)
    and `total`."""

    def __init__(
        self, app: web.Application, *, per_address: int | None, total: int, **kwargs: Any
    ) -> None:
        super().__init__(app, **kwargs)
        self._caps = (per_address, total)

    async def _make_server(self) -> web.Server:
        plain = await super()._make_server()  # the application started, its handler made
        per_address, total = self._caps
        return Connections(
            plain.request_handler,
            per_address=per_address,
            total=total,
            request_factory=plain.request_factory,
            handler_cancellation=plain.handler_cancellation,
            loop=asyncio.get_running_loop(),
            **plain._kwargs,
        )
