"""CORS in a real browser (issue 20): a page served from another origin (another port) calls the
API with `fetch`, sends its own `X-Request-Id` (a header that needs a preflight) and reads every
header the API exposes: the request id, the rate-limit headers, `ETag`, `Location`, `Link`,
`Idempotent-Replayed`, `Content-Language`, `Content-Disposition`, `WWW-Authenticate`, and the
`Retry-After` of a real `429` (a name's sign-ins refused after its failures). What a page may not
read, Chromium hides from it: these checks fail if a header is not exposed."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from server.services.sessions import FAILURE_WINDOW_MS, FAILURES
from tests.process import free_port
from tests.web.conftest import DEFAULT_TIMEOUT_MS, WebServer

if TYPE_CHECKING:
    from playwright.sync_api import Browser

PAGE = b"<!doctype html><html lang='en'><title>another origin</title><p>elsewhere</p></html>"

# Runs in the page of the other origin: every call is a cross-origin fetch to `api`.
SCRIPT = """async ([api, requestId, failures]) => {
  const seen = {};
  const read = (name, response, ...headers) => {
    seen[name] = { status: response.status };
    for (const header of headers) seen[name][header] = response.headers.get(header);
  };
  let response = await fetch(api + "/api/v1/players", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Request-Id": requestId },
    body: JSON.stringify({ name: "cors-" + requestId.slice(-6) }),
  });
  read("signup", response, "X-Request-Id", "Location", "RateLimit", "RateLimit-Policy");
  const player = await response.json();
  const auth = { Authorization: "Bearer " + player.token, "Content-Type": "application/json" };
  response = await fetch(api + "/api/v1/games", {
    method: "POST", headers: auth, body: JSON.stringify({ code: "RU1-C-AAAAAFN" }),
  });
  const game = await response.json();
  const move = { method: "POST", body: JSON.stringify({ card: "AC", to: "f" }),
    headers: { ...auth, "Idempotency-Key": "cors-" + requestId } };
  await fetch(api + `/api/v1/games/${game.id}/moves`, move);
  response = await fetch(api + `/api/v1/games/${game.id}/moves`, move);
  read("replayed", response, "Idempotent-Replayed");
  response = await fetch(api + `/api/v1/games/${game.id}`, { cache: "no-store" });
  read("game", response, "ETag", "RateLimit", "X-Request-Id");
  const tag = response.headers.get("ETag");
  response = await fetch(api + `/api/v1/games/${game.id}`, {
    cache: "no-store", headers: { "If-None-Match": tag },
  });
  read("unchanged", response, "ETag");
  await fetch(api + `/api/v1/games/${game.id}/moves`, {
    method: "POST", headers: auth, body: JSON.stringify({ action: "undo" }),
  });
  response = await fetch(api + `/api/v1/games/${game.id}/moves`, {
    method: "POST", headers: { ...auth, "Accept-Language": "ro" },
    body: JSON.stringify({ card: "KS", to: "f" }),
  });
  read("refused", response, "Content-Language");
  await fetch(api + "/api/v1/games", {
    method: "POST", headers: auth, body: JSON.stringify({ code: "RU1-C-AAAAAFN" }),
  });
  response = await fetch(api + `/api/v1/players/${player.id}/games?limit=1`);
  read("games", response, "Link");
  response = await fetch(api + `/api/v1/players/${player.id}/games/export`);
  read("export", response, "Content-Disposition");
  await response.text();
  response = await fetch(api + "/api/v1/me", { headers: { Authorization: "Bearer made-up" } });
  read("unauthorized", response, "WWW-Authenticate", "RateLimit-Policy");
  // A name's sign-ins are refused (429, Retry-After) once it has failed `failures` times.
  const wrong = { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name: "nobody-" + requestId.slice(-6), password: "not the one" }) };
  for (let i = 0; i < failures; i++) {
    response = await fetch(api + "/api/v1/sessions", wrong);
    read("failed", response);
  }
  response = await fetch(api + "/api/v1/sessions", wrong);
  read("too_many", response, "Retry-After", "RateLimit-Policy");
  return seen;
}"""


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def other_origin() -> Iterator[str]:
    """A page on another port: another origin than the API's."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Page)
    thread = threading.Thread(target=server.serve_forever, name="other-origin", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_on_another_origin_sends_a_request_id_and_reads_the_exposed_headers(
    browser: Browser, web_server: WebServer, other_origin: str
) -> None:
    assert other_origin != web_server.base
    context = browser.new_context(locale="en-US")
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(other_origin + "/")
        request_id = "browser-check-0123456789"
        seen = page.evaluate(SCRIPT, [web_server.base, request_id, FAILURES])
    finally:
        context.close()
    assert not errors, errors

    signup = seen["signup"]
    assert signup["status"] == 201, seen
    assert signup["X-Request-Id"] == request_id  # sent (preflight allowed it) and read back
    assert signup["Location"].startswith("/api/v1/players/")
    assert signup["RateLimit-Policy"].startswith('"address";q=')
    assert signup["RateLimit"].startswith('"')
    assert ";r=" in signup["RateLimit"] and ";t=" in signup["RateLimit"]
    assert seen["replayed"] == {"status": 200, "Idempotent-Replayed": "true"}
    game = seen["game"]
    assert game["status"] == 200 and game["ETag"] and game["RateLimit"] and game["X-Request-Id"]
    assert seen["unchanged"] == {"status": 304, "ETag": game["ETag"]}
    assert seen["refused"]["status"] == 422 and seen["refused"]["Content-Language"] == "ro"
    assert seen["games"]["status"] == 200 and 'rel="next"' in seen["games"]["Link"]
    assert seen["export"]["status"] == 200
    assert seen["export"]["Content-Disposition"].startswith("attachment;")
    unauthorized = seen["unauthorized"]
    assert unauthorized["status"] == 401 and unauthorized["WWW-Authenticate"].startswith("Bearer")
    assert unauthorized["RateLimit-Policy"]
    assert seen["failed"] == {"status": 401}, seen
    too_many = seen["too_many"]
    assert too_many["status"] == 429, seen
    window_s = FAILURE_WINDOW_MS // 1000
    # Read by the page: the oldest failure, seconds ago, leaves the window in about 15 minutes.
    assert window_s - 120 <= int(too_many["Retry-After"]) <= window_s, too_many
    assert too_many["RateLimit-Policy"].startswith('"address";q='), too_many
