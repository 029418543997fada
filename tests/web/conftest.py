"""Fixtures for the end-to-end tests of the web client (`server/web/`) in a real browser.

Debian's Chromium (/usr/bin/chromium) driven by Playwright's sync API, against a real
`python -m server` process on SQLite. Tests are plain sync functions.

- `web_server` (module): the server process; `.base` is `http://127.0.0.1:PORT`, `.url(path)`.
- `browser` (session): one Chromium for the whole run.
- `page` (desktop, 1280x900) and `phone_page` (390x844, touch): a fresh context and page each.
  At teardown they fail the test when the page asked any other host than the server for anything
  (requests and WebSockets), threw an uncaught error, logged a console error (except Chromium's
  note of an API's 4xx refusal, which the page shows), or got a 5xx answer.
- `shot(page, name)` (tests/web/helpers.py): a full-page screenshot in tests/artifacts/.

Like PostgreSQL in tests/conftest.py, the browser never silently skips in CI: without Chromium
or the playwright package the web tests skip, with the reason, unless CI is set; then they fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from tests.process import ServerProcess

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        ConsoleMessage,
        Page,
        Playwright,
        Request,
        Response,
        WebSocket,
    )
    from playwright.sync_api import Error as PlaywrightError

# Without the playwright package the test modules cannot be imported at all: outside CI they
# are left out, like the browser tests without Chromium; under CI they are collected, and fail.
if importlib.util.find_spec("playwright") is None and not os.environ.get("CI"):
    collect_ignore_glob = ["test_*.py"]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
READY_TIMEOUT_S = 30
DEFAULT_TIMEOUT_MS = 10_000
# Addresses that ask no host for anything.
LOCAL_SCHEMES = {"data", "blob", "about"}
FAILED_LOAD = re.compile(r"^Failed to load resource: the server responded with a status of (\d+)\b")
# The answers a page may get without a test saying so: a refused move (422).
REFUSALS = frozenset({422})


# --- the browser ------------------------------------------------------------------------------


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if not os.access(CHROMIUM, os.X_OK):
        return f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
    return None


class Chromium:
    """Playwright (sync API) and one launched Chromium, shared by the whole test session.

    Between two calls, Playwright's sync API leaves its own event loop marked as the running loop
    of the thread. Async tests that run while the browser is up (pytest-asyncio starts a loop per
    test) would then fail with "cannot be called from a running event loop". So the mark is
    parked while no browser test runs, and put back for each browser test (`_playwright_turn`).
    """

    def __init__(self) -> None:
        from playwright.sync_api import sync_playwright

        self.playwright: Playwright = sync_playwright().start()
        try:
            self.browser: Browser = self.playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
        except BaseException:
            self.playwright.stop()
            raise
        self.parked: asyncio.AbstractEventLoop | None = None

    def park(self) -> None:
        self.parked = asyncio._get_running_loop()
        asyncio._set_running_loop(None)

    def resume(self) -> None:
        if self.parked is not None:
            asyncio._set_running_loop(self.parked)
            self.parked = None

    def close(self) -> None:
        self.resume()
        try:
            self.browser.close()
        finally:
            self.playwright.stop()


@pytest.fixture(scope="session")
def chromium() -> Iterator[Chromium]:
    reason = browser_missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set, so the web tests may not skip: {reason}", pytrace=False)
        pytest.skip(reason)
    session = Chromium()
    session.park()
    try:
        yield session
    finally:
        session.close()


@pytest.fixture(scope="session")
def browser(chromium: Chromium) -> Browser:
    return chromium.browser


@pytest.fixture(autouse=True)
def _playwright_turn(request: pytest.FixtureRequest) -> Iterator[None]:
    """Gives Playwright its event loop back for the length of a browser test."""
    if "chromium" not in request.fixturenames:
        yield
        return
    session: Chromium = request.getfixturevalue("chromium")
    session.resume()
    try:
        yield
    finally:
        session.park()


# --- the server -------------------------------------------------------------------------------


@dataclass
class WebServer:
    """A running `python -m server`; its output is read all along, so the pipe never fills."""

    process: ServerProcess
    database: Path | None = None
    """The server's SQLite file (for a test that must set up what no client can)."""
    log: list[str] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self.reader = threading.Thread(target=self._read, name="web-server-log", daemon=True)
        self.reader.start()

    @property
    def base(self) -> str:
        """`http://127.0.0.1:PORT`, without a trailing slash."""
        return self.process.base

    @property
    def netloc(self) -> str:
        """`127.0.0.1:PORT`: the only host:port the page may ask anything of."""
        return urlsplit(self.process.base).netloc

    def url(self, path: str = "/") -> str:
        return self.base + path

    def output(self) -> str:
        return "".join(self.log)

    def _read(self) -> None:
        stream = self.process.process.stdout
        assert stream is not None
        with contextlib.suppress(ValueError, OSError):
            for line in iter(stream.readline, b""):
                self.log.append(line.decode(errors="replace"))

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.process.poll() is not None:
                self.reader.join(5)
                pytest.fail(
                    f"the server exited with {self.process.process.returncode}:\n{self.output()}",
                    pytrace=False,
                )
            try:
                with opener.open(self.base + "/readyz", timeout=2) as response:
                    if response.status == 200:
                        return
            except urllib.error.HTTPError as error:
                error.close()
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        pytest.fail(f"the server was not ready in {timeout} s:\n{self.output()}", pytrace=False)

    def close(self) -> None:
        if self.process.process.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.terminate(10)
        self.process.close()
        self.reader.join(5)


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    """`python -m server` on a fresh SQLite database, with the rate limits on, at four times
    the default rate and 600 sign-ups a minute: every page of a test module and the tests' own
    calls come from one address, which shares one budget (a refused call is retried by the page,
    but the browser logs the 429, and the tests fail on any console error)."""
    folder = tmp_path_factory.mktemp("web")
    server = WebServer(
        ServerProcess(
            f"sqlite:///{folder / 'web.db'}",
            folder,
            "--rate-limit",
            "200",
            "--signup-limit",
            "600",
        ),
        folder / "web.db",
    )
    try:
        server.wait_ready()
        yield server
    finally:
        server.close()


# --- pages ------------------------------------------------------------------------------------


@dataclass
class PageWatch:
    """What a page did that a test must never see: other hosts, uncaught errors, console errors."""

    server: WebServer
    urls: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    server_errors: list[str] = field(default_factory=list)
    allowed: set[int] = field(default_factory=lambda: set(REFUSALS))  # see allowed_answers

    def attach(self, page: Page) -> None:
        page.on("request", self.on_request)
        page.on("websocket", self.on_websocket)
        page.on("pageerror", self.on_page_error)
        page.on("console", self.on_console)
        page.on("response", self.on_response)

    def on_request(self, request: Request) -> None:
        self.urls.append(request.url)

    def on_websocket(self, socket: WebSocket) -> None:
        self.urls.append(socket.url)

    def on_page_error(self, error: PlaywrightError) -> None:
        self.page_errors.append(error.stack or f"{error.name}: {error.message}")

    def on_response(self, response: Response) -> None:
        if response.status >= 500:
            self.server_errors.append(f"{response.status} {response.request.method} {response.url}")

    def on_console(self, message: ConsoleMessage) -> None:
        # Chromium logs every answer that is not 2xx as "Failed to load resource". An API answer
        # that the test expects (by default a refused move, 422, which the page shows) is not an
        # error; any other one is, and so is a 4xx for a file of the page (a missing module,
        # style sheet or icon). A 5xx is caught by on_response.
        if message.type != "error":
            return
        where = message.location
        failed = FAILED_LOAD.match(message.text)
        if not (
            failed
            and int(failed.group(1)) in self.allowed
            and urlsplit(where.get("url", "")).path.startswith("/api/")
        ):
            at = f" ({where['url']}:{where['lineNumber']})" if where.get("url") else ""
            self.console_errors.append(message.text + at)

    def foreign(self) -> list[str]:
        return [
            url
            for url in self.urls
            if urlsplit(url).scheme not in LOCAL_SCHEMES
            and urlsplit(url).netloc != self.server.netloc
        ]

    def check(self) -> None:
        problems = []
        if foreign := self.foreign():
            problems.append(
                f"the page asked other hosts than {self.server.netloc}:\n  " + "\n  ".join(foreign)
            )
        if self.page_errors:
            problems.append("uncaught errors in the page:\n  " + "\n  ".join(self.page_errors))
        if self.server_errors:
            problems.append("the server failed:\n  " + "\n  ".join(self.server_errors))
        if self.console_errors:
            problems.append("console errors:\n  " + "\n  ".join(self.console_errors))
        if problems:
            pytest.fail("\n".join(problems), pytrace=False)


def open_page(
    browser: Browser, server: WebServer, allowed: set[int], **options: Any
) -> Iterator[Page]:
    context = browser.new_context(locale="en-US", **options)
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    watch = PageWatch(server, allowed=allowed)
    try:
        page = context.new_page()
        watch.attach(page)
        yield page
    finally:
        context.close()
    watch.check()


@pytest.fixture
def allowed_answers() -> set[int]:
    """The API's 4xx answers a test's pages may get: a refused move (422), and whatever the test
    adds (`allowed_answers.add(403)`); any other one fails the test."""
    return set(REFUSALS)


@pytest.fixture
def page(browser: Browser, web_server: WebServer, allowed_answers: set[int]) -> Iterator[Page]:
    """A desktop page (1280x900) in a fresh context, checked at teardown (see PageWatch)."""
    yield from open_page(
        browser, web_server, allowed_answers, viewport={"width": 1280, "height": 900}
    )


@pytest.fixture
def phone_page(
    browser: Browser, web_server: WebServer, allowed_answers: set[int]
) -> Iterator[Page]:
    """A phone page (390x844, touch) in a fresh context, checked at teardown (see PageWatch)."""
    yield from open_page(
        browser,
        web_server,
        allowed_answers,
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
    )
