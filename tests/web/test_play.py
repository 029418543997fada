"""The game view in a real Chromium against a real server on SQLite: dealing a code, dragging a
group, a refused drop and its message, taps, double taps, undo, the keyboard, the settings,
hints, and whole games of the vectors won through the page and opened as replays."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page, Route, expect

from server.engine import FOUNDATION, Card, Game, card_text, parse_action, place_text
from tests.conftest import load_data
from tests.web.driver import Table, engine_game
from tests.web.helpers import audit, shot

if TYPE_CHECKING:
    from tests.web.conftest import WebServer

GAMES = load_data("games.json")["games"]
CLASSIC = GAMES[0]  # RU1-C-AAAAAFN, won in 87 moves


def api(page: Page, table: Table, method: str, path: str, body: Any = None) -> Any:
    """The same API the page uses, with the page's own player token."""
    headers = {"Authorization": f"Bearer {table.me['token']}", "Accept-Language": "en"}
    response = page.request.fetch(
        table.base + "/api/v1" + path,
        method=method,
        headers=headers,
        data=json.dumps(body) if body is not None else None,
    )
    return response.status, response.json()


def test_deal_a_code_and_drag_a_group(page: Page, web_server: WebServer) -> None:
    table = Table(page, web_server.base).sign_up()
    code = CLASSIC["code"]
    table.deal(code)
    game = engine_game(code)
    assert table.tableau() == game.tableau_view()
    assert table.figure("moves") == "0" and table.figure("score") == "0"
    # a legal move of a card with other cards on top of it
    group = next(
        move
        for move in game.legal_moves()
        if move.to != FOUNDATION and game.columns[game.where[move.card]][-1] != move.card
    )
    card, place = card_text(group.card), place_text(group.to)
    source = game.where[group.card]
    carried = [card_text(c) for c in game.columns[source][game.columns[source].index(group.card) :]]
    assert len(carried) > 1
    shot(page, "game-dealt")
    table.play(f"{card}-{place}")
    game.play(group)
    assert table.tableau() == game.tableau_view()
    assert table.column(group.to + 1)[-len(carried) :] == carried
    assert table.figure("moves") == "1"
    assert table.figure("score") == str(game.score)
    assert "→" in table.message()


def illegal_drop(code: str) -> tuple[str, str]:
    """A face-up card and a column that the card does not fit (same_suit)."""
    game = engine_game(code)
    for card in range(52):
        if game.hidden[card] or game.where[card] == FOUNDATION:
            continue
        for to in range(7):
            if to != game.where[card] and game.refusal(Card(card), to) == "same_suit":
                return card_text(card), place_text(to)
    raise AssertionError("no illegal drop in this deal")


def refusal(page: Page, table: Table, card: str, place: str, language: str) -> dict[str, Any]:
    """What the server answers to this move in `language` (the page's player asks)."""
    response = page.request.fetch(
        table.base + f"/api/v1/games/{table.game_id}/moves",
        method="POST",
        headers={"Authorization": f"Bearer {table.me['token']}", "Accept-Language": language},
        data=json.dumps({"card": card, "to": place}),
    )
    assert response.status == 422
    problem: dict[str, Any] = response.json()
    return problem


def test_an_illegal_drop_is_refused_with_the_servers_message(
    page: Page, web_server: WebServer
) -> None:
    table = Table(page, web_server.base).sign_up()
    code = CLASSIC["code"]
    table.deal(code)
    before = table.tableau()
    card, place = illegal_drop(code)
    english = refusal(page, table, card, place, "en")
    assert english["rule"] == "same_suit"
    table.drag(card, place)
    expect(page.locator("#message")).to_have_text(english["detail"])
    assert page.get_attribute("#message", "data-kind") == "refusal"
    assert table.tableau() == before  # the card went back where it was
    assert table.version == 0 and table.figure("moves") == "0"
    shot(page, "illegal-move")

    # in Hebrew: right to left, and the server's Hebrew explanation
    hebrew = refusal(page, table, card, place, "he")
    assert hebrew["detail"] != english["detail"]
    table.language("he")
    assert page.get_attribute("html", "dir") == "rtl"
    assert page.get_attribute("html", "lang") == "he"
    table.drag(card, place)
    expect(page.locator("#message")).to_have_text(hebrew["detail"])
    shot(page, "illegal-move-hebrew")

    romanian = refusal(page, table, card, place, "ro")
    table.language("ro")
    assert page.get_attribute("html", "dir") == "ltr"
    table.drag(card, place)
    expect(page.locator("#message")).to_have_text(romanian["detail"])
    assert table.version == 0


def test_without_interactive_rules_a_refusal_is_not_explained(
    page: Page, web_server: WebServer
) -> None:
    table = Table(page, web_server.base).sign_up()
    code = CLASSIC["code"]
    table.deal(code)
    page.click("#settings")
    box = page.locator("#settings-dialog")
    for name in ("double_click", "placement_help", "interactive_rules"):
        expect(box.locator(f"#setting-{name}")).to_be_checked()
    expect(box.locator("#setting-auto_placement")).not_to_be_checked()
    box.locator("#setting-interactive_rules").uncheck()
    shot(page, "settings")
    box.get_by_role("button").last.click()
    card, place = illegal_drop(code)
    table.drag(card, place)
    expect(page.locator("#message")).to_have_text("That move is not allowed.")
    # stored per player: the server has it, and a reload shows it
    status, stored = api(page, table, "GET", f"/players/{table.me['id']}/settings")
    assert status == 200 and stored["interactive_rules"] is False
    page.reload()
    table.wait_view()
    page.click("#settings")
    expect(page.locator("#setting-interactive_rules")).not_to_be_checked()


def test_tap_sends_a_last_card_home_and_undo_brings_it_back(
    page: Page, web_server: WebServer
) -> None:
    table = Table(page, web_server.base).sign_up()
    code = CLASSIC["code"]  # its first move is AC-f: the ace of clubs lies last in its column
    table.deal(code)
    game = engine_game(code)
    assert CLASSIC["actions"][0] == "AC-f"
    before = table.tableau()
    assert table.is_last("AC")
    table.click("AC")  # a tap
    table.wait_version(1)
    assert table.foundation_counts() == [0, 0, 0, 1]
    assert page.get_attribute('#table .foundation[data-suit="C"]', "data-card") == "AC"
    game.play(game.resolve_tap(Card.parse("AC")))
    assert table.tableau() == game.tableau_view()
    assert table.figure("score") == "10" and table.figure("moves") == "1"
    expect(page.locator("#undo")).to_be_enabled()
    page.click("#undo")
    table.wait_version(2)
    assert table.tableau() == before
    assert table.foundation_counts() == [0, 0, 0, 0]
    assert table.figure("score") == "0" and table.figure("moves") == "1"  # undo keeps the count
    expect(page.locator("#undo")).to_be_disabled()
    # a tap on a card that cannot go home is refused with the server's reason
    stuck = next(
        card
        for card in (table.column(n)[-1] for n in range(1, 8))
        if card is not None and game.refusal(Card.parse(card), FOUNDATION) is not None
    )
    table.click(stuck)
    expect(page.locator("#message")).to_have_attribute("data-kind", "refusal")
    assert table.version == 2
    status, log = api(page, table, "GET", f"/games/{table.game_id}/moves")
    assert status == 200
    assert [entry["move"] for entry in log["moves"]] == ["AC-f", "undo"]


def test_double_click_places_a_card_by_the_servers_rule(page: Page, web_server: WebServer) -> None:
    table = Table(page, web_server.base).sign_up()
    code = CLASSIC["code"]
    table.deal(code)
    game = engine_game(code)
    card = placeable(game)
    expected = game.resolve_double_tap(Card(card))
    table.click(card_text(card), clicks=2)
    table.wait_version(1)
    game.play(expected)
    assert table.tableau() == game.tableau_view()
    status, log = api(page, table, "GET", f"/games/{table.game_id}/moves")
    assert status == 200
    assert [entry["move"] for entry in log["moves"]] == [str(expected)]


def placeable(game: Game) -> Card:
    """A face-up card that cannot go home but has a place on the tableau."""
    return next(
        Card(card)
        for card in range(52)
        if not game.hidden[card]
        and game.where[card] != FOUNDATION
        and game.refusal(Card(card), FOUNDATION) is not None
        and any(game.refusal(Card(card), to) is None for to in range(7))
    )


def test_auto_placement_places_a_released_card(page: Page, web_server: WebServer) -> None:
    table = Table(page, web_server.base).sign_up()
    table.setting("auto_placement", True)
    code = CLASSIC["code"]
    table.deal(code)
    game = engine_game(code)
    # a click (press and release) asks the server to place the card
    card = placeable(game)
    expected = [game.resolve_double_tap(card)]
    game.play(expected[0])
    table.click(card_text(card))
    table.wait_version(1)
    assert table.tableau() == game.tableau_view()
    # so does a card released where there is no place
    card = placeable(game)
    expected.append(game.resolve_double_tap(card))
    game.play(expected[1])
    x, y = table.press_card(card_text(card))
    page.mouse.move(x + 40, y + 40, steps=3)
    page.mouse.move(5, 5, steps=3)
    page.mouse.up()
    table.wait_version(2)
    assert table.tableau() == game.tableau_view()
    # a double click places the card once, not once per click
    card = placeable(game)
    expected.append(game.resolve_double_tap(card))
    game.play(expected[2])
    sent = table.actions_sent
    table.click(card_text(card), clicks=2)
    table.wait_version(3)
    page.wait_for_timeout(500)  # time for a second action, if the page were to send one
    assert table.actions_sent == sent + 1
    assert table.version == 3
    assert table.tableau() == game.tableau_view()
    status, log = api(page, table, "GET", f"/games/{table.game_id}/moves")
    assert status == 200
    assert [entry["move"] for entry in log["moves"]] == [str(move) for move in expected]


def test_placement_help_highlights_the_servers_targets_during_a_drag(
    page: Page, web_server: WebServer
) -> None:
    table = Table(page, web_server.base).sign_up()
    code = CLASSIC["code"]
    table.deal(code)
    game = engine_game(code)
    card = next(c for c in range(52) if len(game.targets(Card(c))) >= 1 and not game.hidden[c])
    text = card_text(card)
    expected = {place_text(p) for p in game.targets(Card(card))}
    table.drag(text, "t1" if game.where[card] != 0 else "t2", release=False)
    page.wait_for_selector("#table .target")
    highlighted = set(
        page.eval_on_selector_all(
            "#table .target",
            "nodes => nodes.map(n => n.classList.contains('foundation') ? 'f' : n.dataset.place)",
        )
    )
    assert highlighted == expected
    assert page.locator(".drag-ghost .card").first.get_attribute("data-card") == text
    shot(page, "placement-help")
    page.mouse.move(5, 5)
    page.mouse.up()  # dropped off the table: nothing happens
    expect(page.locator(".drag-ghost")).to_have_count(0)
    expect(page.locator("#table .target")).to_have_count(0)
    page.wait_for_timeout(500)  # time for an action, if the page were to send one
    assert table.actions_sent == 0 and table.version == 0


def test_the_keyboard_alone_plays(page: Page, web_server: WebServer) -> None:
    table = Table(page, web_server.base).sign_up()
    code = CLASSIC["code"]
    table.deal(code)
    game = engine_game(code)
    # every card has a spoken name; face-down cards say so and never their face
    assert page.get_attribute('#table .card[data-card="AC"]', "aria-label") == "ace of clubs"
    downs = page.locator("#table .card.down")
    assert downs.count() == 21
    assert downs.first.get_attribute("aria-label") == "face-down card"
    assert downs.first.get_attribute("data-card") is None
    for action in CLASSIC["actions"][:6]:
        table.play(action, how="keys")
        game.play(parse_action(action))
        assert table.tableau() == game.tableau_view()
    table.play("undo", how="keys")
    game.undo()
    assert table.tableau() == game.tableau_view()
    # arrows move between cards; Escape puts a picked-up card back
    page.locator(
        "#table .column[data-place='t1'] .card.last, #table .slot[data-place='t1']"
    ).last.focus()
    page.keyboard.press("ArrowRight")
    focused = page.evaluate("document.activeElement.closest('.column').dataset.place")
    assert focused == "t2"
    page.keyboard.press("Enter")
    expect(page.locator("#table .card.selected")).to_have_count(1)
    page.keyboard.press("Escape")
    expect(page.locator("#table .card.selected")).to_have_count(0)


@pytest.mark.parametrize(
    ("index", "how"),
    [(0, "mouse"), (1, "mixed"), (2, "keys")],
    ids=["clean-mouse", "take-back-drags", "undo-keys"],
)
def test_a_whole_game_of_the_vectors_is_won_through_the_page(
    page: Page, web_server: WebServer, index: int, how: str
) -> None:
    vector = GAMES[index]
    table = Table(page, web_server.base).sign_up(f"winner{index}")
    if how == "mouse":
        # a click taps at once instead of waiting to see whether a second click follows
        table.setting("double_click", False)
    table.deal(vector["code"])
    game = engine_game(vector["code"])
    for number, action in enumerate(vector["actions"], start=1):
        table.play(action, how=how)
        game.play(parse_action(action))
        if number % 20 == 0:
            assert table.tableau() == game.tableau_view()
            assert table.figure("score") == str(game.score)
    assert table.foundation_counts() == [13, 13, 13, 13]
    assert table.figure("score") == str(vector["score"])
    assert table.figure("moves") == str(vector["moves"])
    won = page.locator("#won-dialog")
    expect(won).to_be_visible()
    expect(won).to_contain_text(str(vector["score"]))
    shot(page, f"won-{index}")
    if index == 0:
        audit(page, "the won window")
    status, record = api(page, table, "GET", f"/games/{table.game_id}")
    assert status == 200
    assert record["status"] == "won" and record["score"] == vector["score"]
    # the result offers the replay
    won.get_by_role("button", name="Watch the replay").click()
    page.wait_for_url(f"**#/replay/{record['id']}")
    expect(page.locator("#replay-step")).to_have_text(f"0 / {len(vector['actions'])}")
    page.click("[data-action=last]")
    expect(page.locator("#replay-step")).to_have_text(
        f"{len(vector['actions'])} / {len(vector['actions'])}"
    )
    shot(page, f"won-{index}-replay")


def test_the_new_game_window(page: Page, web_server: WebServer) -> None:
    table = Table(page, web_server.base).sign_up()
    # a newcomer is dealt a classic game at once, from a secret deal
    expect(page.locator("#game-code")).to_have_text("Deal hidden until the game ends")
    status, dealt = api(page, table, "GET", f"/games/{table.game_id}")
    assert status == 200 and dealt["code"] is None and dealt["rule"] == "classic"
    table.deal(CLASSIC["code"])
    first = table.game_id
    table.play(CLASSIC["actions"][0])

    # a code that is not one: the window says why and stays open
    page.click("#new-game")
    expect(page.locator("#new-game-dialog #deal-code-help")).to_contain_text("RU1 or RU2")
    shot(page, "new-game")
    page.fill("#deal-code", "RU1-X-HELLO")
    page.click("#deal")
    expect(page.locator("#new-game-dialog .problem")).not_to_be_empty()
    expect(page.locator("#new-game-dialog")).to_be_visible()

    # a relaxed deal that the solver certifies winnable, secret until the game ends
    page.fill("#deal-code", "")
    page.check("#new-game-dialog input[value=relaxed]")
    page.check("#winnable")
    page.click("#deal")
    expect(page.locator("#new-game-dialog")).to_have_count(0)
    expect(page.locator("#game-code")).to_have_attribute("data-hidden", "true")
    expect(page.locator("#deal-copy")).to_be_hidden()
    # the game left with a move in it counts as abandoned (the page tells the server as it goes)
    deadline = time.monotonic() + 10
    while api(page, table, "GET", f"/games/{first}")[1]["status"] != "abandoned":
        assert time.monotonic() < deadline, "the game left was not abandoned"
        page.wait_for_timeout(100)
    # given up, its code is shown, and it is the winnable deal it was said to be
    table.give_up()
    expect(page.locator("#game-code")).to_contain_text("RU2-R-")
    code = table.figure("code")
    status, verdict = api(page, table, "GET", f"/deals/{code}/winnable")
    assert status == 200 and verdict["status"] == "winnable"

    # an RU2 code may be typed (lower case too): a chosen deal, shown from the start
    page.click("#new-game")
    page.fill("#deal-code", code.lower())
    page.click("#deal")
    expect(page.locator("#game-code")).to_have_text(code)
    expect(page.locator("#game-code")).to_have_attribute("data-hidden", "false")
    expect(page.locator("#deal-copy")).to_be_visible()
    expect(page.locator("#deal-commitment-toggle")).to_be_hidden()
    status, chosen = api(page, table, "GET", f"/games/{table.game_id}")
    assert chosen["chosen"] is True and chosen["code"] == code

    # today's deal, for the rule chosen in the window: hidden until the day ends
    page.click("#new-game")
    page.check("#new-game-dialog input[value=classic]")
    page.click("#daily")
    expect(page.locator("#game-code")).to_have_text("Deal hidden until the day ends (UTC)")
    status, daily = api(page, table, "GET", "/daily?rule=classic")
    assert status == 200 and daily["code"] is None
    page.click("#deal-commitment-toggle")
    expect(page.locator("#deal-commitment")).to_have_text(daily["deal_commitment"])


def test_a_hint_marks_the_next_move_of_a_winning_line(page: Page, web_server: WebServer) -> None:
    table = Table(page, web_server.base).sign_up()
    table.deal(CLASSIC["code"])
    page.click("#hint")
    confirm = page.locator("#hint-confirm")
    expect(confirm).to_contain_text("assisted")
    confirm.get_by_role("button", name="Ask for a hint").click()
    expect(page.locator("#message")).to_contain_text("Hint:", timeout=30_000)
    status, hint = api(page, table, "GET", f"/games/{table.game_id}/hint")
    assert status == 200 and hint["status"] == "winnable"
    card, place = hint["move"].split("-")
    marked = page.locator("#table .hint-card")
    expect(marked.first).to_have_attribute("data-card", card)
    target = "#table .foundation.hint-place" if place == "f" else "#table .column.hint-place"
    expect(page.locator(target)).to_have_count(1)
    if place != "f":
        assert page.get_attribute(target, "data-place") == place
    shot(page, "hint")
    table.play(hint["move"])  # the hinted move is legal: the server takes it
    expect(page.locator("#table .hint-card")).to_have_count(0)


def test_on_a_phone_the_table_fits_and_a_tap_plays(phone_page: Page, web_server: WebServer) -> None:
    table = Table(phone_page, web_server.base).sign_up("phone")
    table.deal(CLASSIC["code"])
    width = phone_page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width}px wide on a 390px screen"
    table.card("AC").tap()
    table.wait_version(1)
    assert table.foundation_counts() == [0, 0, 0, 1]
    shot(phone_page, "phone-game")


def test_on_a_phone_a_finger_drags_a_group(phone_page: Page, web_server: WebServer) -> None:
    table = Table(phone_page, web_server.base).sign_up("finger")
    code = CLASSIC["code"]
    table.deal(code)
    game = engine_game(code)
    move = next(m for m in game.legal_moves() if m.to != FOUNDATION)
    card, place = card_text(move.card), place_text(move.to)
    box = table.card(card).bounding_box()
    assert box is not None
    x0, y0 = box["x"] + box["width"] / 2, box["y"] + 8
    x1, y1 = table.drop_point(place, card)
    touch = phone_page.context.new_cdp_session(phone_page)
    touch.send(
        "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y0}]}
    )
    for step in range(1, 9):
        x, y = x0 + (x1 - x0) * step / 8, y0 + (y1 - y0) * step / 8
        touch.send(
            "Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]}
        )
    touch.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    table.wait_version(1)
    game.play(move)
    assert table.tableau() == game.tableau_view()


def test_a_spectator_sees_each_move_made_in_the_page(
    page: Page, phone_page: Page, web_server: WebServer
) -> None:
    table = Table(page, web_server.base).sign_up("player")
    table.deal(CLASSIC["code"])
    link = page.get_attribute("#watch-link", "href")
    assert link == f"#/watch/{table.game_id}"
    phone_page.goto(web_server.base + "/" + link)
    expect(phone_page.locator("#watch-state")).to_have_attribute("data-state", "live")

    def spectator_columns() -> list[list[str | None]]:
        columns: list[list[str | None]] = phone_page.eval_on_selector_all(
            "#watch-board .column",
            """columns => columns.map(column => [...column.querySelectorAll('.card')]
                .map(n => n.classList.contains('down') ? null : n.dataset.card))""",
        )
        return columns

    assert spectator_columns() == table.tableau()
    for action, shown in [
        ("AC-f", "A♣ → foundation"),
        ("3D-t3", "3♦ → column 3"),
        ("undo", "undo"),
    ]:
        table.play(action)
        expect(phone_page.locator("#watch-move")).to_have_text(shown)
        expect(phone_page.locator("#watch-moves")).to_have_text(table.figure("moves"))
        assert spectator_columns() == table.tableau()
    # a spectator sees the table but has nothing to press on it
    assert phone_page.locator("#watch-board button").count() == 0
    shot(phone_page, "spectator-phone")


def test_quick_hands_keep_their_order_and_the_focus(page: Page, web_server: WebServer) -> None:
    table = Table(page, web_server.base).sign_up()
    table.deal(CLASSIC["code"])
    # a click taps only once it is clear that no second click follows; an undo pressed at once
    # comes after that tap, as the player made them
    table.click("AC")
    page.locator("#table").focus()
    page.keyboard.press("u")
    table.wait_version(2)
    status, log = api(page, table, "GET", f"/games/{table.game_id}/moves")
    assert status == 200
    assert [entry["move"] for entry in log["moves"]] == ["AC-f", "undo"]
    # F sends the focused card home; the focus follows it to its foundation
    table.key("AC", "f")
    table.wait_version(3)
    assert page.evaluate("document.activeElement.dataset.suit") == "C"
    # the shortcuts go by the key's place, so they work with a Hebrew keyboard too
    vav = "\u05d5"  # the letter on the U key of a Hebrew keyboard
    page.dispatch_event("#table", "keydown", {"key": vav, "code": "KeyU", "bubbles": True})
    table.wait_version(4)
    assert table.foundation_counts() == [0, 0, 0, 0]
    assert page.evaluate("document.activeElement.dataset.suit") == "C"  # still there, empty
    # the Undo button turns itself off when nothing is left to undo: the focus goes to the table
    table.key("AC", "f")
    table.wait_version(5)
    page.focus("#undo")
    page.keyboard.press("Enter")
    table.wait_version(6)
    expect(page.locator("#undo")).to_be_disabled()
    assert page.evaluate("document.activeElement.id") == "table"


def test_a_game_left_while_it_loads_leaves_the_page_alone(
    page: Page, web_server: WebServer
) -> None:
    table = Table(page, web_server.base).sign_up()
    first = table.game_id
    table.deal(CLASSIC["code"])
    second = table.game_id
    held: list[Route] = []
    page.route(f"**/api/v1/games/{first}", lambda route: held.append(route))  # held back
    page.evaluate(f"location.hash = '#/play/{first}'")
    deadline = time.monotonic() + 10
    while not held:
        assert time.monotonic() < deadline
        page.wait_for_timeout(20)
    page.evaluate("location.hash = '#/boards'")  # the player goes elsewhere meanwhile
    page.wait_for_selector('#view[aria-busy="false"] .view-boards')
    held[0].continue_()
    page.wait_for_timeout(500)  # time for the late answer to do harm, if it could
    assert page.evaluate("location.hash") == "#/boards"
    assert page.locator("#table").count() == 0
    assert page.evaluate("localStorage.getItem('solitaire.game')") == second
