"""An app signs a player in through the consent page (SPEC 2.2.1) in a real Chromium against a
real server: the whole PKCE flow, signing in on the page with a name and password or continuing
as the web client's session of this browser, denying, the page in Hebrew (right to left), and
the axe audit of every state of the page.

The app is a little HTTP server of the test's own on another port of 127.0.0.1 (another origin,
so the page's `form-action` is tried on a real cross-origin redirect): its redirect target
answers a plain page and keeps the address it was sent to. The pages are watched as every
browser test's are (`tests/web/conftest.py`), the app's origin being the one other host they
may ask, and the error page's 400 the one answer they may get."""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import secrets
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page, expect

from tests.names import unique_name
from tests.web.client import OPENER, as_player, call
from tests.web.conftest import DEFAULT_TIMEOUT_MS, PageWatch
from tests.web.helpers import audit, shot

if TYPE_CHECKING:
    from playwright.sync_api import Browser

    from tests.web.conftest import WebServer

PASSWORD = "correct horse battery"
CLIENT = "Solver <Pro> & friends"
CALLBACK = "/callback"
DONE = (
    b'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>The app</title>'
    b'<link rel="icon" href="data:,"></head>'
    b'<body><p id="app-done">Back in the app</p></body></html>'
)


class AppServer:
    """The app's own little server: `GET /callback?...` answers a plain page, and every address
    it was sent to is kept (`arrived`)."""

    def __init__(self) -> None:
        self.arrived: list[str] = []
        arrived = self.arrived

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                arrived.append(self.path)
                self.send_response(200 if self.path.startswith(CALLBACK) else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(DONE)))
                self.end_headers()
                self.wfile.write(DONE)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.netloc = f"127.0.0.1:{self.http.server_address[1]}"
        self.base = f"http://{self.netloc}"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture(scope="module")
def app_server() -> Iterator[AppServer]:
    server = AppServer()
    try:
        yield server
    finally:
        server.close()


class AppPageWatch(PageWatch):
    """The usual watch of a page, for a page that may also go to the app, and may get the
    error page's 400."""

    app_netloc: str = ""

    def foreign(self) -> list[str]:
        return [
            url for url in super().foreign() if urllib.parse.urlsplit(url).netloc != self.app_netloc
        ]

    def on_console(self, message: Any) -> None:
        if "status of 400" in message.text and "/oauth/authorize" in message.location.get(
            "url", ""
        ):
            return
        super().on_console(message)


@pytest.fixture
def page(browser: Browser, web_server: WebServer, app_server: AppServer) -> Iterator[Page]:
    """A desktop page in a fresh context, watched (AppPageWatch) and checked at teardown."""
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    watch = AppPageWatch(web_server)
    watch.app_netloc = app_server.netloc
    try:
        page = context.new_page()
        watch.attach(page)
        yield page
    finally:
        context.close()
    watch.check()


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).decode().rstrip("=")


def account(server: WebServer) -> dict[str, str]:
    name = unique_name("oauth")
    player: dict[str, str] = call(server, "POST", "/players", {"name": name, "password": PASSWORD})
    return player


class App:
    """A third-party app on this machine: it sends the browser to the consent page and takes
    the code its redirect brings back."""

    def __init__(
        self, page: Page, server: WebServer, app: AppServer, scope: str = "play read"
    ) -> None:
        self.page = page
        self.server = server
        self.app = app
        self.verifier, challenge = pkce()
        self.state = secrets.token_hex(8)
        self.redirect_uri = app.base + CALLBACK
        self.params = {
            "response_type": "code",
            "client_id": CLIENT,
            "redirect_uri": self.redirect_uri,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "scope": scope,
            "state": self.state,
        }
        app.arrived.clear()

    def open(self, lang: str | None = None) -> None:
        query = dict(self.params, **({"lang": lang} if lang else {}))
        self.page.goto(self.server.url("/oauth/authorize?" + urllib.parse.urlencode(query)))
        self.page.wait_for_selector("#consent-form")

    def answer(self) -> dict[str, str]:
        """The query the browser brought back to the app."""
        self.page.wait_for_selector("#app-done")
        assert len(self.app.arrived) == 1, self.app.arrived
        url = urllib.parse.urlsplit(self.app.arrived[0])
        assert url.path == CALLBACK
        answer = dict(urllib.parse.parse_qsl(url.query))
        assert answer["state"] == self.state
        return answer

    def exchange(self, code: str) -> tuple[int, dict[str, Any]]:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "code_verifier": self.verifier,
            "redirect_uri": self.redirect_uri,
            "client_id": CLIENT,
        }
        request = urllib.request.Request(
            self.server.url("/oauth/token"),
            data=urllib.parse.urlencode(form).encode(),
            method="POST",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        try:
            with OPENER.open(request, timeout=10) as response:
                return int(response.status), json.loads(response.read())
        except urllib.error.HTTPError as error:
            body = json.loads(error.read())
            error.close()
            return error.code, body


def test_a_player_signs_in_on_the_consent_page_and_the_app_gets_its_token(
    page: Page, web_server: WebServer, app_server: AppServer
) -> None:
    player = account(web_server)
    app = App(page, web_server, app_server)
    app.open()
    expect(page.locator("#oauth-title")).to_contain_text(CLIENT)  # shown as text, escaped
    expect(page.locator("#oauth-redirect")).to_contain_text(app_server.netloc)
    expect(page.locator('#oauth-scopes li[data-scope="play"]')).to_be_visible()
    expect(page.locator('#oauth-scopes li[data-scope="read"]')).to_be_visible()
    expect(page.locator('#oauth-scopes li[data-scope="account"]')).to_have_count(0)
    expect(page.locator("#oauth-who")).to_be_hidden()  # no session kept in this browser
    audit(page, "consent page")
    shot(page, "oauth-consent")
    page.fill("#oauth-name", player["name"])
    page.fill("#oauth-password", PASSWORD)
    page.click("#oauth-approve")
    answer = app.answer()
    status, token = app.exchange(answer["code"])
    assert status == 200, token
    assert token["scope"] == "play read" and token["token_type"] == "Bearer"
    me = call(web_server, "GET", "/me", token=token["access_token"])
    assert me["id"] == player["id"]
    assert me["session"]["app"] == {"client_id": CLIENT, "name": CLIENT}
    assert call(web_server, "POST", "/games", {}, token["access_token"])["status"] == "active"
    # the code was used: a second exchange is refused, and the token it gave is dead
    status, refused = app.exchange(answer["code"])
    assert (status, refused["error"]) == (400, "invalid_grant")
    with pytest.raises(AssertionError, match="401"):
        call(web_server, "GET", "/me", token=token["access_token"])


def test_the_web_clients_session_continues_without_a_password(
    page: Page, web_server: WebServer, app_server: AppServer
) -> None:
    player = account(web_server)
    as_player(page, player)
    app = App(page, web_server, app_server, scope="race")
    app.open()
    expect(page.locator("#oauth-who")).to_be_visible()
    expect(page.locator("#oauth-current-name")).to_have_text(player["name"])
    expect(page.locator("#oauth-who-current")).to_be_checked()
    expect(page.locator("#oauth-sign-in")).to_be_hidden()
    audit(page, "consent page, continue as")
    # another account is one choice away, and back
    page.check("#oauth-who-password")
    expect(page.locator("#oauth-name")).to_be_focused()
    page.check("#oauth-who-current")
    expect(page.locator("#oauth-sign-in")).to_be_hidden()
    page.click("#oauth-approve")
    status, token = app.exchange(app.answer()["code"])
    assert status == 200, token
    me = call(web_server, "GET", "/me", token=token["access_token"])
    assert me["id"] == player["id"] and me["session"]["scopes"] == ["race"]


def test_denying_sends_access_denied_to_the_app(
    page: Page, web_server: WebServer, app_server: AppServer
) -> None:
    app = App(page, web_server, app_server)
    app.open()
    page.click("#oauth-deny")  # no name or password needed to say no
    answer = app.answer()
    assert answer["error"] == "access_denied" and "code" not in answer


def test_the_page_in_hebrew_is_right_to_left_and_passes_the_audit(
    page: Page, web_server: WebServer, app_server: AppServer
) -> None:
    player = account(web_server)
    app = App(page, web_server, app_server)
    app.open(lang="he")
    expect(page.locator("html")).to_have_attribute("dir", "rtl")
    expect(page.locator("html")).to_have_attribute("lang", "he")
    expect(page.locator("#oauth-approve")).to_have_text("אישור")
    audit(page, "consent page, Hebrew")
    shot(page, "oauth-consent-he")
    page.click('.oauth-languages a[lang="ro"]')
    expect(page.locator("html")).to_have_attribute("lang", "ro")
    page.fill("#oauth-name", player["name"])
    page.fill("#oauth-password", PASSWORD)
    page.click("#oauth-approve")
    status, _ = app.exchange(app.answer()["code"])
    assert status == 200


@pytest.mark.parametrize("language", ["en", "he"])
def test_the_error_page_passes_the_audit(
    page: Page, web_server: WebServer, app_server: AppServer, language: str
) -> None:
    app = App(page, web_server, app_server)
    query = dict(app.params, code_challenge_method="plain", lang=language)
    response = page.goto(web_server.url("/oauth/authorize?" + urllib.parse.urlencode(query)))
    assert response is not None and response.status == 400
    expect(page.locator("#oauth-error")).to_contain_text("S256")
    assert app_server.arrived == []  # never sent back to the app
    audit(page, f"OAuth error page ({language})")
