"""Fair play in the page (SPEC 2.3 "Fair play", 1.8.1): a deal the server chose is hidden until
the game ends, in the game bar and everywhere else the page shows a game, and in everything the
page receives; its commitment is shown on request; once the game is given up or won, the code is
shown with the outcome of the page's check (SHA-256 in the page, the replay verified by the
server, the cards the page showed); a tampered reveal is not verified. A daily deal stays hidden
until its day ends. In English, Romanian and Hebrew."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sqlite3
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Page, Request, Response, Route, WebSocket, expect

from tests.web.client import as_player, call, play, sign_up
from tests.web.driver import Table, some_move
from tests.web.helpers import shot

if TYPE_CHECKING:
    from tests.web.conftest import WebServer

ANY_CODE = re.compile(r"RU[12]-[CR]-[A-Z]{7}")
RU2_CODE = re.compile(r"^RU2-[CR]-[A-Z]{7}(-[A-Z]{7}){3}$")
CHECK_TIMEOUT_MS = 15_000


class Wire:
    """Everything a page received from the server: API answers and WebSocket messages."""

    def __init__(self, page: Page) -> None:
        self.responses: list[Response] = []
        self.frames: list[str] = []
        self.requests: list[Request] = []
        page.on("response", self.on_response)
        page.on("websocket", self.on_websocket)
        page.on("request", self.on_request)

    def on_request(self, request: Request) -> None:
        self.requests.append(request)

    def on_response(self, response: Response) -> None:
        if "/api/" in response.url:
            self.responses.append(response)

    def on_websocket(self, socket: WebSocket) -> None:
        socket.on("framereceived", lambda payload: self.frames.append(str(payload)))

    def mark(self) -> tuple[int, int]:
        return len(self.responses), len(self.frames)

    def texts(self, until: tuple[int, int]) -> list[str]:
        """The bodies received before `until` (a mark())."""
        answers, frames = until
        return [r.text() for r in self.responses[:answers]] + self.frames[:frames]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def page_text(page: Page) -> str:
    """The page as it is (text and attributes) and what it keeps in the browser."""
    html: str = page.content()
    stored: str = page.evaluate("JSON.stringify(localStorage) + JSON.stringify(sessionStorage)")
    return html + stored


def test_a_secret_deal_is_hidden_until_the_player_gives_up(
    page: Page, web_server: WebServer
) -> None:
    wire = Wire(page)
    table = Table(page, web_server.base).sign_up("Secret")
    game_id = table.game_id  # a newcomer's first game: a random, secret deal
    code_out = page.locator("#game-code")
    expect(code_out).to_have_text("Deal hidden until the game ends")
    expect(code_out).to_have_attribute("data-hidden", "true")
    expect(page.locator("#deal-copy")).to_be_hidden()
    expect(page.locator("#deal-check")).to_be_empty()

    # The commitment, on request.
    toggle = page.locator("#deal-commitment-toggle")
    expect(toggle).to_have_text("Commitment")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(page.locator("#deal-details")).to_be_hidden()
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#deal-details")).to_be_visible()
    expect(page.locator("#deal-details")).to_contain_text("SHA-256")
    commitment = page.inner_text("#deal-commitment")
    assert re.fullmatch("[0-9a-f]{64}", commitment), commitment
    game = call(web_server, "GET", f"/games/{game_id}", token=table.me["token"])
    assert game["code"] is None and game["deal_commitment"] == commitment
    assert game["chosen"] is False and game["daily"] is None
    move = some_move(page, table, game_id)
    if move is not None:
        table.play(move)
    shot(page, "deal-hidden")
    seen = [page_text(page)]

    # Every other view of the game says "hidden" too.
    page.goto(web_server.url(f"/#/watch/{game_id}"))
    expect(page.locator("#watch-state")).to_have_attribute("data-state", "live")
    expect(page.locator("#watch-code")).to_have_text("Deal hidden until the game ends")
    seen.append(page_text(page))
    page.goto(web_server.url("/#/me"))
    row = page.locator(f'.games-table tr[data-game="{game_id}"]')
    expect(row.locator(".col-code")).to_have_text("hidden")
    expect(row.locator("a.continue-link")).to_have_attribute(
        "aria-label", re.compile(r"^Continue: game of .+ \(deal hidden\)$")
    )
    seen.append(page_text(page))
    page.goto(web_server.url(f"/#/replay/{game_id}"))
    expect(page.locator("#replay-active")).to_be_visible()
    expect(page.locator("#replay-code")).to_have_text("hidden")
    seen.append(page_text(page))
    page.goto(web_server.url(f"/#/play/{game_id}"))
    table.wait_view()
    expect(code_out).to_have_attribute("data-hidden", "true")
    seen.append(page_text(page))
    before = wire.mark()
    assert before[1] > 0, "the spectator view received nothing over its WebSocket"
    for text in seen:
        assert not ANY_CODE.search(text), "a deal code in the page"

    # Given up, the code is shown, checked, and may be copied.
    table.give_up()
    expect(code_out).to_have_attribute("data-hidden", "false")
    expect(code_out).to_have_text(RU2_CODE)
    code = table.figure("code")
    assert sha256(code) == commitment
    check = page.locator("#deal-check")
    expect(check).to_have_attribute("data-state", "verified", timeout=CHECK_TIMEOUT_MS)
    expect(check).to_contain_text("Verified")
    expect(check.locator(".visually-hidden")).to_contain_text(
        "the code matches the commitment shown when the game was dealt"
    )
    expect(page.locator("#deal-verdict")).to_have_text(
        "Verified: the code matches the commitment shown when the game was dealt, and deals "
        "the cards that were played."
    )
    expect(page.locator("#deal-commitment")).to_have_text(commitment)
    expect(page.locator("#deal-hash")).to_have_text(commitment)
    expect(page.locator("#give-up")).to_be_disabled()
    # The code was in nothing the page received before the end, and the page asked the server
    # to verify the revealed replay.
    for text in wire.texts(before):
        assert code not in text and not ANY_CODE.search(text), "a deal code on the wire"
    verified = [r for r in wire.requests if r.url.endswith("/api/v1/replays/verify")]
    assert verified and verified[-1].post_data_json["code"] == code
    assert verified[-1].post_data_json["deal_commitment"] == commitment
    shot(page, "deal-revealed")

    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=web_server.base)
    page.click("#deal-copy")
    expect(page.locator("#toast")).to_have_text(f"Deal code {code} copied.")
    assert page.evaluate("navigator.clipboard.readText()") == code

    # The global board by score lists the finished game with its code, now public.
    page.goto(web_server.url("/#/boards"))
    entry = page.locator(f'.board-table tr[data-game="{game_id}"]')
    expect(entry.locator(".col-deal")).to_have_text(code)
    finished = call(web_server, "GET", f"/games/{game_id}")
    expect(entry.locator(".col-ranked")).to_have_text(str(finished["ranked_score"]))
    expect(entry.locator(".col-score")).to_have_text(str(finished["score"]))
    expect(entry.locator(".col-finished")).to_contain_text("(abandoned)")

    # Its replay: the code, its commitment checked in the page, and verified by the server.
    entry.locator("a.replay-link").click()
    expect(page.locator("#replay-code")).to_have_text(code)
    expect(page.locator("#replay-commitment")).to_have_text(commitment)
    expect(page.locator("#replay-commitment-check")).to_have_attribute("data-state", "verified")
    expect(page.locator("#replay-commitment-check")).to_have_text("✓ matches the commitment")
    page.click("#replay-verify-button")
    expect(page.locator("#replay-verify")).to_have_attribute("data-valid", "true")


def test_a_won_secret_deal_is_verified_in_romanian(page: Page, web_server: WebServer) -> None:
    player = sign_up(web_server, "Ioana")
    game = call(web_server, "POST", "/games", {"winnable": True}, player["token"])
    assert game["code"] is None
    # The solver plays it to its last move (the page is not what is tested here).
    while True:
        hint = call(web_server, "GET", f"/games/{game['id']}/hint", token=player["token"])
        assert hint["status"] == "winnable"
        if hint["line_length"] == 1:
            break
        play(web_server, player["token"], game["id"], [hint["move"]])
    as_player(page, player, "ro")
    table = Table(page, web_server.base)
    page.goto(web_server.url(f"/#/play/{game['id']}"))
    table.wait_view()
    expect(page.locator("#game-code")).to_have_text("Împărțire ascunsă până la sfârșitul jocului")
    page.click("#deal-commitment-toggle")
    expect(page.locator("#deal-commitment")).to_have_text(game["deal_commitment"])

    # The last move, in the page: won, the code revealed and verified.
    table.play(hint["move"])
    won = page.locator("#won-dialog")
    expect(won).to_be_visible()
    expect(won.locator("#won-deal")).to_contain_text("Împărțirea:")
    code = won.locator("#won-deal .deal-code").inner_text()
    assert RU2_CODE.match(code) and sha256(code) == game["deal_commitment"]
    won.get_by_role("button", name="Închide").click()
    expect(page.locator("#game-code")).to_have_text(code)
    check = page.locator("#deal-check")
    expect(check).to_have_attribute("data-state", "verified", timeout=CHECK_TIMEOUT_MS)
    expect(check.locator(".short")).to_have_text("Verificat")
    expect(page.locator("#deal-verdict")).to_contain_text("Verificat: codul se potrivește")
    expect(page.locator("#deal-copy")).to_have_text("Copiază")
    shot(page, "deal-won-ro")


def finished_secret_game(web_server: WebServer, name: str) -> tuple[dict[str, str], str]:
    """A player's random game with a move or two, given up through the API."""
    player = sign_up(web_server, name)
    game = call(web_server, "POST", "/games", {}, player["token"])
    call(web_server, "POST", f"/games/{game['id']}/abandon", {}, player["token"])
    return player, game["id"]


def tamper(page: Page, pattern: str, change: Any) -> None:
    """Answers the page's requests to `pattern` with the server's JSON, changed by `change`."""

    def handle(route: Route) -> None:
        response = route.fetch()
        body = response.json()
        change(body)
        route.fulfill(response=response, body=json.dumps(body))

    page.route(pattern, handle)


def test_a_tampered_reveal_is_not_verified_in_hebrew(page: Page, web_server: WebServer) -> None:
    player, game_id = finished_secret_game(web_server, "Dana")
    game = call(web_server, "GET", f"/games/{game_id}")
    as_player(page, player, "he")
    table = Table(page, web_server.base)
    check = page.locator("#deal-check")
    verdict = page.locator("#deal-verdict")

    def open_game() -> None:
        page.goto(web_server.url(f"/#/play/{game_id}"))
        page.reload()  # the same address again: a fresh page
        table.wait_view()
        expect(check).not_to_have_attribute("data-state", "checking", timeout=CHECK_TIMEOUT_MS)

    # As served: a finished game opened later, verified.
    open_game()
    expect(page.locator("#game-code")).to_have_text(game["code"])
    expect(check).to_have_attribute("data-state", "verified")
    expect(check.locator(".short")).to_have_text("אומת")

    # The replay's commitment is not the one the game showed: not verified.
    replay = f"**/api/v1/games/{game_id}/replay"
    tamper(page, replay, lambda body: body.update(deal_commitment="0" * 64))
    open_game()
    expect(check).to_have_attribute("data-state", "failed")
    expect(check.locator(".short")).to_have_text("לא אומת")
    expect(verdict).to_have_text("לא אומת: הקוד אינו מתאים להתחייבות שהוצגה בחלוקה.")
    shot(page, "deal-not-verified-he")
    page.unroute(replay)

    # The replay deals other cards than the code does: the server refuses it.
    def swap(body: dict[str, Any]) -> None:
        body["deal"][6][-1], body["deal"][5][-1] = body["deal"][5][-1], body["deal"][6][-1]

    tamper(page, replay, swap)
    open_game()
    expect(check).to_have_attribute("data-state", "failed")
    expect(verdict).to_have_text("לא אומת: הקוד אינו מחלק את הקלפים ששוחקו.")
    page.unroute(replay)

    # The game shows another code than the one committed to (the SHA-256 in the page differs).
    other = "RU2-C-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAB"
    tamper(page, f"**/api/v1/games/{game_id}", lambda body: body.update(code=other))
    open_game()
    expect(page.locator("#game-code")).to_have_text(other)
    expect(check).to_have_attribute("data-state", "failed")
    page.click("#deal-commitment-toggle")
    expect(page.locator("#deal-hash")).to_have_text(sha256(other))
    expect(page.locator("#deal-commitment")).to_have_text(game["deal_commitment"])
    page.unroute(f"**/api/v1/games/{game_id}")

    # The server answers as it should, but showed another commitment while the game was played
    # (this browser kept it): not verified either.
    page.evaluate(
        "id => localStorage.setItem('solitaire.commitments',"
        " JSON.stringify({[id]: {commitment: 'f'.repeat(64)}}))",
        game_id,
    )
    open_game()
    expect(check).to_have_attribute("data-state", "failed")
    expect(verdict).to_contain_text("אינו מתאים להתחייבות")


def test_the_page_hashes_like_subtle_crypto_without_it(page: Page, web_server: WebServer) -> None:
    """The SHA-256 the page falls back on where SubtleCrypto is missing (plain http)."""
    page.goto(web_server.url("/#/boards"))
    expect(page.locator(".view-boards")).to_be_visible()
    sizes = [0, 1, 3, 55, 56, 63, 64, 65, 119, 120, 1000]
    hashes = page.evaluate(
        """async sizes => {
          const deal = await import("/web/lib/deal.js");
          const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
          const out = [];
          for (const size of sizes) {
            const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 31 + 7) & 255);
            const subtle = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
            out.push([hex(deal.sha256(bytes)), hex(subtle)]);
          }
          return out;
        }""",
        sizes,
    )
    for size, (fallback, subtle) in zip(sizes, hashes, strict=True):
        expected = hashlib.sha256(bytes((i * 31 + 7) & 255 for i in range(size))).hexdigest()
        assert fallback == subtle == expected, size


def test_a_daily_deal_stays_hidden_until_its_day_ends(
    page: Page, web_server: WebServer, allowed_answers: set[int]
) -> None:
    table = Table(page, web_server.base).sign_up("Daily")
    # A player made on the day plays the daily as practice (SPEC 2.5): this one signed up
    # yesterday, as far as the server knows, so that their game is on the day's board.
    assert web_server.database is not None
    with contextlib.closing(sqlite3.connect(web_server.database)) as db, db:
        db.execute("UPDATE players SET created_ms = created_ms - 86400000 WHERE name = 'Daily'")
    page.click("#new-game")
    page.click("#daily")
    code_out = page.locator("#game-code")
    expect(code_out).to_have_text("Deal hidden until the day ends (UTC)")
    daily = call(web_server, "GET", "/daily?rule=classic")
    game_id = table.game_id
    page.click("#deal-commitment-toggle")
    expect(page.locator("#deal-commitment")).to_have_text(daily["deal_commitment"])

    # Given up, it stays hidden: the day is not over.
    page.click("#give-up")
    expect(page.locator("#give-up-confirm")).to_contain_text("when the day ends (UTC)")
    page.locator("#give-up-confirm button.primary").click()
    page.wait_for_selector('#table[data-status="abandoned"]')
    expect(code_out).to_have_text("Deal hidden until the day ends (UTC)")
    expect(page.locator("#deal-check")).to_be_empty()
    expect(page.locator("#deal-copy")).to_be_hidden()
    assert not ANY_CODE.search(page_text(page))

    # Its board: the day's deal hidden, its commitment; the game's deal "hidden".
    page.goto(web_server.url("/#/boards?daily=1"))
    expect(page.locator("#boards-daily-code")).to_have_text("hidden until the day ends (UTC)")
    expect(page.locator("#boards-daily-commitment")).to_have_text(daily["deal_commitment"])
    entry = page.locator(f'.board-table tr[data-game="{game_id}"]')
    expect(entry.locator(".col-deal")).to_have_text("hidden")
    expect(entry.locator(".col-ranked")).to_have_text("0")
    expect(entry).to_have_attribute("data-status", "abandoned")
    shot(page, "daily-board")
    # The replay waits for the end of the day.
    entry.locator("a.replay-link").click()
    expect(page.locator("#replay-hidden")).to_contain_text("until the day ends (UTC)")
    expect(page.locator("#replay-code")).to_have_text("hidden")

    # Another day: the day before the first daily deal of this server had none.
    allowed_answers.add(404)
    page.goto(web_server.url("/#/boards?daily=2020-01-01"))
    expect(page.locator("#boards-error")).to_contain_text("2020-01-01")
    expect(page.locator("#boards-daily-deal")).to_be_hidden()
