"""The leaderboards, statistics, replay and spectator views in a real Chromium against a real
server on SQLite. Games are played through the public API (as another client would), then looked
at through the page: the board lists them, the replay viewer rebuilds every position from the
deal (undos included), the statistics count them, and a watcher sees moves arrive live."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.conftest import load_data
from tests.web.client import as_player, call, new_game, play, sign_up
from tests.web.helpers import shot

if TYPE_CHECKING:
    from tests.web.conftest import WebServer

GAMES = load_data("games.json")["games"]
CLEAN = GAMES[0]  # RU1-C-AAAAAFN: 87 actions, won with 625 points
UNDOS = GAMES[2]  # the same deal with two undos: 91 actions, 89 moves
SUITS = "SHDC"


@pytest.fixture(scope="module")
def finished(web_server: WebServer) -> dict[str, Any]:
    """Two players who each won a game of the vectors through the API."""
    ana = sign_up(web_server, "Ana")
    clean = new_game(web_server, ana, CLEAN["code"])
    last = play(web_server, ana["token"], clean, CLEAN["actions"])
    assert last["game"]["status"] == "won" and last["game"]["score"] == 625
    bo = sign_up(web_server, "Bo")
    undone = new_game(web_server, bo, UNDOS["code"])
    last = play(web_server, bo["token"], undone, UNDOS["actions"])
    assert last["game"]["status"] == "won" and last["game"]["moves"] == UNDOS["moves"]
    return {"ana": ana, "clean": clean, "bo": bo, "undone": undone}


# --- what the page shows ----------------------------------------------------------------------


def columns(page: Page, board: str) -> list[list[str | None]]:
    """The tableau as drawn in `board`, bottom to top, None for a face-down card."""
    drawn: list[list[str | None]] = page.eval_on_selector_all(
        f"{board} .column",
        """columns => columns.map(column => Array.from(column.querySelectorAll('.card'),
            card => card.classList.contains('down') ? null : card.dataset.card))""",
    )
    return drawn


def foundation_counts(page: Page, board: str) -> list[int]:
    counts: list[str] = page.eval_on_selector_all(
        f"{board} .foundation", "piles => piles.map(pile => pile.dataset.count)"
    )
    return [int(count) for count in counts]


def move_text(action: str) -> str:
    """An action as the page writes it in English: "7♥ → column 5", "A♣ → foundation"."""
    if action == "undo":
        return "undo"
    card, place = action.split("-")
    rank = {"T": "10"}.get(card[0], card[0])
    symbol = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[card[1]]
    where = "foundation" if place == "f" else f"column {place[1:]}"
    return f"{rank}{symbol} → {where}"


def no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    viewport = page.evaluate("window.innerWidth")
    assert width <= viewport, f"the page scrolls sideways: {width} > {viewport}"


# --- leaderboards -----------------------------------------------------------------------------


def test_leaderboards_list_the_game_and_open_its_replay(
    page: Page, web_server: WebServer, finished: dict[str, Any]
) -> None:
    page.goto(web_server.url("/#/boards"))
    expect(page.locator("h2")).to_have_text("Leaderboards")
    # The global board leaves out deals the player chose: nothing is there yet.
    expect(page.locator("#boards-empty")).to_be_visible()
    expect(page.locator("#boards-empty")).to_contain_text("No games yet")
    expect(page.locator(".board-table")).to_be_hidden()
    assert page.title().startswith("Leaderboards")

    # The deal's own board ranks every clean game of that deal.
    page.get_by_label("Deal code").fill(CLEAN["code"].lower())
    page.get_by_label("Deal code").press("Enter")
    row = page.locator(f'.board-table tbody tr[data-game="{finished["clean"]}"]')
    expect(row).to_be_visible()
    expect(page.locator(".board-table caption")).to_contain_text(CLEAN["code"])
    expect(row.locator(".col-score")).to_have_text("625")
    # by score, the board ranks by the ranked score (SPEC 1.5), shown beside the score
    expect(row.locator(".col-ranked")).to_have_text("625")
    expect(row.locator(".col-moves")).to_have_text("87")
    expect(row.locator(".col-deal")).to_have_text(CLEAN["code"])
    expect(row.locator(".col-player a")).to_have_text("Ana")
    assert row.locator(".col-player a").get_attribute("href") == f"#/player/{finished['ana']['id']}"
    # Bo's game has the same score and finished later: Ana first.
    expect(page.locator(".board-table tbody tr")).to_have_count(2)
    expect(page.locator(".board-table tbody tr").first).to_have_attribute(
        "data-game", finished["clean"]
    )
    expect(row.locator(".col-rank")).to_have_text("1")
    assert page.locator(".board-table th[scope=col]").count() == 9
    expect(page.locator(".board-table th.col-ranked")).to_have_text("Ranked score")
    # The choice is kept in the address, so the board can be shared.
    assert f"code={CLEAN['code']}" in page.evaluate("location.hash")
    expect(page.locator("#boards-more")).to_be_hidden()

    # Ranked by moves: Ana's 87 before Bo's 89; still two rows.
    page.get_by_label("Rank by").select_option("moves")
    expect(page.locator(".board-table caption")).to_contain_text("by moves")
    expect(page.locator(".board-table tbody tr").first).to_have_attribute(
        "data-game", finished["clean"]
    )
    shot(page, "leaderboards")

    # The replay link opens the replay viewer.
    row.get_by_role("link", name="Replay").click()
    page.wait_for_url(f"**#/replay/{finished['clean']}")
    expect(page.locator("#replay-step")).to_have_text("0 / 87")


def test_leaderboards_daily_assisted_and_paging(
    page: Page, web_server: WebServer, finished: dict[str, Any]
) -> None:
    daily = call(web_server, "GET", "/daily?rule=classic")
    assert daily["code"] is None  # today's deal is secret until the day ends
    boards: list[str] = []
    page.on(
        "request",
        lambda request: boards.append(request.url) if "/leaderboards?" in request.url else None,
    )
    page.goto(web_server.url("/#/boards"))
    expect(page.locator("#boards-empty")).to_be_visible()
    expect(page.locator("#boards-date")).to_be_hidden()
    page.get_by_label("Daily deal").check()
    expect(page.locator("#boards-code")).to_be_disabled()
    expect(page.locator("#boards-empty")).to_be_visible()
    expect(page.locator("#boards-status")).to_have_text(
        "No games yet. Play one and it will be here!"
    )
    assert "daily=1" in page.evaluate("location.hash")
    # today's deal: its day, its code hidden, its commitment; the board asked by date and rule
    expect(page.locator("#boards-date")).to_have_value(daily["date"])
    expect(page.locator("#boards-daily-deal")).to_contain_text(f"Daily deal of {daily['date']}")
    expect(page.locator("#boards-daily-code")).to_have_text("hidden until the day ends (UTC)")
    expect(page.locator("#boards-daily-commitment")).to_have_text(daily["deal_commitment"])
    expect(page.locator(".board-table caption")).to_contain_text("hidden until the day ends")
    asked = parse_qs(urlsplit(boards[-1]).query)
    assert asked["daily"] == [daily["date"]] and asked["rule"] == ["classic"]
    assert "code" not in asked
    page.get_by_label("Daily deal").uncheck()
    expect(page.locator("#boards-code")).to_be_enabled()
    expect(page.locator("#boards-daily-deal")).to_be_hidden()

    # A code that is no code is refused before asking the server.
    page.get_by_label("Deal code").fill("nonsense")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_role("alert")).to_contain_text("A deal code looks like RU1-C-AAAAABB")
    expect(page.get_by_role("alert")).to_contain_text("RU2-C-")
    expect(page.locator("#boards-code")).to_have_attribute("aria-invalid", "true")
    expect(page.locator(".board-table")).to_be_hidden()

    # Paging: three games on one deal, two a page.
    carla = sign_up(web_server, "Carla")
    for _ in range(2):
        play(
            web_server, carla["token"], new_game(web_server, carla, CLEAN["code"]), CLEAN["actions"]
        )
    page.route(
        "**/api/v1/leaderboards?*",
        lambda route: route.continue_(url=route.request.url + "&limit=2"),
    )
    page.get_by_label("Deal code").fill(CLEAN["code"])
    page.get_by_label("Deal code").press("Enter")
    rows = page.locator(".board-table tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator("#boards-more")).to_be_visible()
    page.locator("#boards-more").click()
    expect(rows).to_have_count(4)
    expect(page.locator("#boards-more")).to_be_hidden()
    ranks = page.locator(".board-table tbody .col-rank").all_inner_texts()
    assert ranks == ["1", "2", "3", "4"]

    # The assisted board of the deal has nobody.
    page.get_by_label("Assisted games (a hint was used)").check()
    expect(page.locator("#boards-empty")).to_be_visible()
    expect(page.locator(".board-table caption")).to_contain_text("assisted")


# --- the replay viewer ------------------------------------------------------------------------


def test_replay_viewer_steps_through_a_whole_game(
    page: Page, web_server: WebServer, finished: dict[str, Any]
) -> None:
    game_id = finished["clean"]
    document = call(web_server, "GET", f"/games/{game_id}/replay")
    page.goto(web_server.url(f"/#/replay/{game_id}"))
    expect(page.locator("#replay-step")).to_have_text("0 / 87")
    expect(page.locator("#replay-score")).to_have_text("0")
    expect(page.locator("#replay-moves")).to_have_text("0")
    expect(page.locator("#replay-player")).to_have_text("Ana")
    expect(page.locator("#replay-code")).to_have_text(CLEAN["code"])
    expect(page.locator("#replay-result")).to_contain_text("won, 625 points, 87 moves")

    # Step 0 is the deal: in column i the lowest i cards face-down, the rest as dealt.
    deal = document["deal"]
    drawn = columns(page, "#replay-board")
    for index, column in enumerate(drawn):
        assert column[:index] == [None] * index
        assert column[index:] == deal[index][index:]
    assert sum(card is None for column in drawn for card in column) == 21
    assert foundation_counts(page, "#replay-board") == [0, 0, 0, 0]

    # One step: AC-f. The ace of clubs is on its foundation and no longer in column 4 or so.
    page.click("[data-action=forward]")
    expect(page.locator("#replay-step")).to_have_text("1 / 87")
    clubs = page.locator('#replay-board .foundation[data-suit="C"]')
    expect(clubs).to_have_attribute("data-card", "AC")
    expect(clubs).to_have_attribute("data-count", "1")
    assert "AC" not in [card for column in columns(page, "#replay-board") for card in column]
    expect(page.locator("#replay-move")).to_have_text("A♣ → foundation")
    expect(page.locator("#replay-score")).to_have_text("10")
    expect(page.locator("#replay-moves")).to_have_text("1")

    # The second: 3D-t3, a group move onto column 3.
    page.click("[data-action=forward]")
    expect(page.locator("#replay-step")).to_have_text("2 / 87")
    assert "3D" in columns(page, "#replay-board")[2]
    expect(page.locator("#replay-move")).to_have_text("3♦ → column 3")

    # Keys: arrows step, Home and End jump.
    page.locator("[data-action=forward]").focus()
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#replay-step")).to_have_text("1 / 87")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#replay-step")).to_have_text("2 / 87")
    page.keyboard.press("End")
    expect(page.locator("#replay-step")).to_have_text("87 / 87")
    page.keyboard.press("Home")
    expect(page.locator("#replay-step")).to_have_text("0 / 87")
    expect(page.locator("[data-action=back]")).to_be_disabled()

    # The last position: every card home, 13 a foundation, no card on the tableau.
    page.click("[data-action=last]")
    expect(page.locator("#replay-step")).to_have_text("87 / 87")
    assert foundation_counts(page, "#replay-board") == [13, 13, 13, 13]
    for suit in SUITS:
        expect(page.locator(f'#replay-board .foundation[data-suit="{suit}"]')).to_have_attribute(
            "data-card", f"K{suit}"
        )
    assert columns(page, "#replay-board") == [[]] * 7
    expect(page.locator("#replay-score")).to_have_text("625")
    expect(page.locator("#replay-moves")).to_have_text("87")
    expect(page.locator("[data-action=forward]")).to_be_disabled()

    # One back: the king of hearts is off its foundation again.
    page.click("[data-action=back]")
    expect(page.locator("#replay-step")).to_have_text("86 / 87")
    assert foundation_counts(page, "#replay-board") == [13, 12, 13, 13]
    assert columns(page, "#replay-board")[1] == ["KH"]
    expect(page.locator("#replay-score")).to_have_text("615")

    # The slider.
    slider = page.locator("#replay-position")
    assert slider.get_attribute("aria-label")
    slider.evaluate("s => { s.value = '40'; s.dispatchEvent(new Event('input', {bubbles: true})) }")
    expect(page.locator("#replay-step")).to_have_text("40 / 87")
    expect(page.locator("#replay-move")).to_have_text(move_text(CLEAN["actions"][39]))

    # Play steps by itself; pressing it again pauses.
    play_button = page.locator("[data-action=play]")
    play_button.click()
    expect(play_button).to_have_attribute("data-playing", "true")
    expect(play_button).to_have_attribute("aria-label", "Pause")
    page.wait_for_function(
        "() => parseInt(document.querySelector('#replay-step').textContent) >= 42", timeout=5000
    )
    play_button.click()
    expect(play_button).to_have_attribute("data-playing", "false")
    paused = page.inner_text("#replay-step")
    page.wait_for_timeout(1200)
    assert page.inner_text("#replay-step") == paused

    # The server checks the document.
    page.click("#replay-verify-button")
    verdict = page.locator("#replay-verify")
    expect(verdict).to_have_attribute("data-valid", "true")
    expect(verdict).to_contain_text("Valid")
    expect(verdict).to_contain_text("625 points, 87 moves")

    # The download is the server's replay document.
    with page.expect_download() as downloading:
        page.click("#replay-download")
    saved = downloading.value
    assert saved.suggested_filename == f"replay-{CLEAN['code']}.json"
    served = page.request.get(f"{web_server.base}/api/v1/games/{game_id}/replay").json()
    assert json.loads(Path(saved.path()).read_text(encoding="utf-8")) == served
    page.click("[data-action=last]")
    shot(page, "replay")


def test_replay_viewer_undo_restores_the_face_down_card(
    page: Page, web_server: WebServer, finished: dict[str, Any]
) -> None:
    actions = UNDOS["actions"]
    total = len(actions)
    page.goto(web_server.url(f"/#/replay/{finished['undone']}"))
    expect(page.locator("#replay-step")).to_have_text(f"0 / {total}")
    # Action 23 (5S-f) turns a card face-up, action 24 undoes it.
    assert actions[22] == "5S-f" and actions[23] == "undo"
    slider = page.locator("#replay-position")

    def at(step: int) -> list[list[str | None]]:
        slider.evaluate(
            "(s, step) => { s.value = String(step); s.dispatchEvent(new Event('input')) }", step
        )
        expect(page.locator("#replay-step")).to_have_text(f"{step} / {total}")
        return columns(page, "#replay-board")

    before, moved, undone = at(22), at(23), at(24)
    down = [sum(card is None for card in column) for column in (*before, *moved)]
    assert sum(down[:7]) == sum(down[7:]) + 1  # the move turned one card face-up
    assert undone == before  # the undo put it face-down again, and 5S back
    expect(page.locator("#replay-move")).to_have_text("undo")
    # an undo is not a move (there was another one at action 12)
    counted = sum(action != "undo" for action in actions[:24])
    assert counted == 22
    expect(page.locator("#replay-moves")).to_have_text(str(counted))
    page.keyboard.press("End")
    expect(page.locator("#replay-step")).to_have_text(f"{total} / {total}")
    expect(page.locator("#replay-moves")).to_have_text(str(UNDOS["moves"]))
    expect(page.locator("#replay-score")).to_have_text(str(UNDOS["score"]))
    assert foundation_counts(page, "#replay-board") == [13, 13, 13, 13]
    page.click("#replay-verify-button")
    expect(page.locator("#replay-verify")).to_have_attribute("data-valid", "true")


def test_replay_of_an_active_game_points_to_watching(
    page: Page, web_server: WebServer, finished: dict[str, Any]
) -> None:
    game_id = new_game(web_server, finished["bo"], CLEAN["code"])
    page.goto(web_server.url(f"/#/replay/{game_id}"))
    expect(page.locator("#replay-active")).to_contain_text("still being played")
    page.click("#replay-watch")
    page.wait_for_url(f"**#/watch/{game_id}")
    expect(page.locator("#watch-state")).to_have_attribute("data-state", "live")


def test_replay_on_a_phone_in_hebrew(
    phone_page: Page, web_server: WebServer, finished: dict[str, Any]
) -> None:
    page = phone_page
    as_player(page, finished["ana"], "he")
    page.goto(web_server.url(f"/#/replay/{finished['clean']}"))
    expect(page.locator("#replay-step")).to_have_text("0 / 87")
    assert page.evaluate("document.documentElement.dir") == "rtl"
    # Right to left, the arrows swap: ArrowLeft goes forward.
    page.locator("[data-action=first]").focus()
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#replay-step")).to_have_text("1 / 87")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#replay-step")).to_have_text("0 / 87")
    page.locator("[data-action=forward]").tap()
    expect(page.locator("#replay-step")).to_have_text("1 / 87")
    page.locator("[data-action=last]").tap()
    expect(page.locator("#replay-step")).to_have_text("87 / 87")
    assert foundation_counts(page, "#replay-board") == [13, 13, 13, 13]
    no_sideways_scroll(page)
    shot(page, "replay-phone")
    page.goto(web_server.url("/#/boards?code=" + CLEAN["code"]))
    expect(page.locator(f'.board-table tr[data-game="{finished["clean"]}"]')).to_be_visible()
    no_sideways_scroll(page)
    shot(page, "leaderboards-phone")


# --- statistics -------------------------------------------------------------------------------


def test_statistics_of_a_player(
    page: Page, web_server: WebServer, finished: dict[str, Any]
) -> None:
    ana = finished["ana"]
    active = new_game(web_server, ana, CLEAN["code"])

    # Anyone may look: no "Continue" on somebody else's game.
    page.goto(web_server.url(f"/#/player/{ana['id']}"))
    expect(page.locator("#stats-title")).to_have_text("Statistics of Ana")
    stat = page.locator(".stats-table")
    expect(stat.locator('tr[data-stat="played"] td[data-rule="classic"]')).to_have_text("1")
    expect(stat.locator('tr[data-stat="won"] td[data-rule="classic"]')).to_have_text("1")
    expect(stat.locator('tr[data-stat="win_rate"] td[data-rule="classic"]')).to_have_text("100%")
    expect(stat.locator('tr[data-stat="best_score"] td[data-rule="classic"]')).to_have_text("625")
    best_ranked = stat.locator('tr[data-stat="best_ranked_score"]')
    expect(best_ranked.locator("th")).to_have_text("Best ranked score")
    expect(best_ranked.locator('td[data-rule="classic"]')).to_have_text("625")
    expect(best_ranked.locator('td[data-rule="relaxed"]')).to_have_text("—")
    expect(stat.locator('tr[data-stat="fewest_moves"] td[data-rule="classic"]')).to_have_text("87")
    expect(stat.locator('tr[data-stat="played"] td[data-rule="relaxed"]')).to_have_text("0")
    expect(stat.locator('tr[data-stat="best_score"] td[data-rule="relaxed"]')).to_have_text("—")
    games = page.locator(".games-table tbody tr")
    expect(games).to_have_count(2)
    won = page.locator(f'.games-table tr[data-game="{finished["clean"]}"]')
    expect(won.locator(".col-status")).to_have_text("won")
    expect(won.locator(".col-score")).to_contain_text("625")
    expect(won.get_by_role("link", name="Replay")).to_have_attribute(
        "href", f"#/replay/{finished['clean']}"
    )
    playing = page.locator(f'.games-table tr[data-game="{active}"]')
    expect(playing.locator(".col-status")).to_have_text("in progress")
    expect(playing.locator("a.watch-link")).to_have_attribute("href", f"#/watch/{active}")
    expect(playing.locator("a.continue-link")).to_have_count(0)

    # In Ana's own browser, #/me is her page, and her game in progress can be continued.
    page.evaluate("player => localStorage.setItem('solitaire.player', JSON.stringify(player))", ana)
    page.goto(web_server.url("/#/me"))
    page.reload()
    expect(page.locator("#stats-title")).to_contain_text("Statistics of Ana")
    playing = page.locator(f'.games-table tr[data-game="{active}"]')
    expect(playing.locator("a.continue-link")).to_have_attribute("href", f"#/play/{active}")
    expect(playing.locator("a.replay-link")).to_have_count(0)
    shot(page, "stats")

    # The replay link of a finished game opens it.
    page.locator(f'.games-table tr[data-game="{finished["clean"]}"] a.replay-link').click()
    page.wait_for_url(f"**#/replay/{finished['clean']}")
    expect(page.locator("#replay-step")).to_have_text("0 / 87")


def test_my_statistics_without_a_player(page: Page, web_server: WebServer) -> None:
    page.goto(web_server.url("/#/me"))
    expect(page.locator("#stats-none")).to_be_visible()
    expect(page.locator(".view-stats a[href='#/']")).to_be_visible()


# --- watching ---------------------------------------------------------------------------------


def test_watch_an_active_game_live(
    page: Page, web_server: WebServer, finished: dict[str, Any]
) -> None:
    ana = finished["ana"]
    game_id = new_game(web_server, ana, CLEAN["code"])
    first, second, *rest = CLEAN["actions"]
    page.goto(web_server.url(f"/#/watch/{game_id}"))
    expect(page.locator("#watch-state")).to_have_attribute("data-state", "live")
    expect(page.locator("#watch-state")).to_have_text("Live")
    expect(page.locator("#watch-player")).to_have_text("Ana")
    expect(page.locator("#watch-code")).to_have_text(CLEAN["code"])
    expect(page.locator("#watch-status")).to_have_text("in progress")
    expect(page.locator("#watch-moves")).to_have_text("0")
    expect(page.locator("#watch-time")).to_have_text("0:00")
    drawn = columns(page, "#watch-board")
    assert sum(card is None for column in drawn for card in column) == 21
    assert [len(column) for column in drawn] == [1, 6, 7, 8, 9, 10, 11]
    # face-down cards are never sent to a watcher
    html = page.inner_html("#watch-board")
    game = call(web_server, "GET", f"/games/{game_id}")
    assert game["tableau"] == drawn
    assert html.count('class="card down"') == 21
    assert page.locator("#watch-board button").count() == 0  # read-only

    # A move made elsewhere (through the API) shows up here.
    assert first == "AC-f"
    play(web_server, ana["token"], game_id, [first])
    clubs = page.locator('#watch-board .foundation[data-suit="C"]')
    expect(clubs).to_have_attribute("data-card", "AC")
    expect(page.locator("#watch-move")).to_have_text("A♣ → foundation")
    expect(page.locator("#watch-score")).to_have_text("10")
    expect(page.locator("#watch-moves")).to_have_text("1")

    assert second == "3D-t3"
    play(web_server, ana["token"], game_id, [second])
    expect(
        page.locator('#watch-board .column[data-place="t3"] .card[data-card="3D"]')
    ).to_be_visible()
    expect(page.locator("#watch-move")).to_have_text("3♦ → column 3")
    shot(page, "watch")

    # To the end: the win is announced, with the replay.
    play(web_server, ana["token"], game_id, rest)
    expect(page.locator("#watch-status")).to_have_text("won")
    expect(page.locator("#watch-result")).to_contain_text("The game is won!")
    assert foundation_counts(page, "#watch-board") == [13, 13, 13, 13]
    expect(page.locator("#watch-move")).to_have_text("K♥ → foundation")
    expect(page.locator("#watch-score")).to_have_text("625")
    page.click("#watch-replay")
    page.wait_for_url(f"**#/replay/{game_id}")
    expect(page.locator("#replay-step")).to_have_text("0 / 87")


# Keeps the page's WebSockets and the messages it sends, to drop a connection and look at them.
SPY = """
(() => {
  const Native = window.WebSocket;
  window.__sockets = [];
  window.__sent = [];
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      window.__sockets.push(this);
    }
    send(data) {
      window.__sent.push(JSON.parse(data));
      super.send(data);
    }
  };
})();
"""


def test_watch_shows_the_last_move_and_reconnects(
    page: Page, web_server: WebServer, finished: dict[str, Any]
) -> None:
    bo = finished["bo"]
    game_id = new_game(web_server, bo, CLEAN["code"])
    play(web_server, bo["token"], game_id, CLEAN["actions"][:3])
    as_player(page, bo)
    page.add_init_script(SPY)
    page.goto(web_server.url(f"/#/watch/{game_id}"))
    expect(page.locator("#watch-state")).to_have_attribute("data-state", "live")
    # The move made before we came, from the move log.
    expect(page.locator("#watch-move")).to_have_text("Q♦ → column 4")
    expect(page.locator("#watch-moves")).to_have_text("3")
    # The page's own player signs in first (a daily game is visible to its player only).
    sent = page.evaluate("window.__sent")
    assert sent[0] == {"type": "auth", "token": bo["token"]}
    assert sent[1] == {"type": "watch", "game_id": game_id, "id": 1}

    # The connection drops; a move is made meanwhile; the page reconnects with `since`.
    page.evaluate("window.__sockets[0].close()")
    expect(page.locator("#watch-state")).to_have_attribute("data-state", "reconnecting")
    expect(page.locator("#watch-state")).to_contain_text("Reconnecting")
    play(web_server, bo["token"], game_id, [CLEAN["actions"][3]])
    expect(page.locator("#watch-state")).to_have_attribute("data-state", "live")
    assert page.evaluate("window.__sockets.length") == 2
    sent = page.evaluate("window.__sent")
    assert sent[3] == {"type": "watch", "game_id": game_id, "id": 1, "since": 3}
    expect(page.locator("#watch-moves")).to_have_text("4")
    expect(page.locator("#watch-move")).to_have_text("J♦ → column 4")
    expect(
        page.locator('#watch-board .column[data-place="t4"] .card[data-card="JD"]')
    ).to_be_visible()

    # Live again: the next move arrives as usual.
    play(web_server, bo["token"], game_id, [CLEAN["actions"][4]])
    expect(page.locator("#watch-moves")).to_have_text("5")
    expect(page.locator("#watch-move")).to_have_text("8♠ → column 3")

    # Leaving the view closes the socket for good: no reconnection.
    page.goto(web_server.url("/#/boards"))
    expect(page.locator(".view-boards")).to_be_visible()
    page.wait_for_function("window.__sockets[1].readyState === WebSocket.CLOSED")
    page.wait_for_timeout(1500)
    assert page.evaluate("window.__sockets.length") == 2
