"""Accounts in the web client (SPEC 2.2, 2.2.2) in a real Chromium against a real server: a guest
creates a password in the Account view and signs in on another device (another browser context)
to the same player; the sessions list shows both devices and ending one sends that device back to
the welcome window at its next request; signing out; exporting one's data; deleting the account
after its question (the name is free afterwards, and the player's games and races stay as played
by "deleted player"); and a live socket closed with 4401 when its session ends elsewhere."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page, expect

from tests.conftest import load_data
from tests.names import unique_name
from tests.web.client import OPENER, as_player, call, new_game, play, sign_up
from tests.web.conftest import open_page
from tests.web.helpers import shot

if TYPE_CHECKING:
    from playwright.sync_api import Browser

    from tests.web.conftest import WebServer

CLASSIC = load_data("games.json")["games"][0]  # RU1-C-AAAAAFN, won with 625 points
PASSWORD = "correct horse battery"


@pytest.fixture
def second_page(
    browser: Browser, web_server: WebServer, allowed_answers: set[int]
) -> Iterator[Page]:
    """Another desktop page, in its own context (another browser), checked like `page`."""
    yield from open_page(
        browser, web_server, allowed_answers, viewport={"width": 1280, "height": 900}
    )


def status_of(server: WebServer, method: str, path: str, token: str) -> int:
    """The status of one API call (no body), with `token` unless it is empty, whatever it is."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(server.url("/api/v1" + path), method=method, headers=headers)
    try:
        with OPENER.open(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        error.close()
        return error.code


def stored(page: Page) -> dict[str, Any] | None:
    """This browser's player as the page keeps it (None when it has none)."""
    text = page.evaluate("localStorage.getItem('solitaire.player')")
    return json.loads(text) if text else None


def welcome_as_guest(page: Page, server: WebServer, name: str) -> dict[str, Any]:
    """Opens the page and signs up as the guest `name` through the welcome window."""
    page.goto(server.url("/"))
    page.fill("#welcome[open] #player-name", name)
    page.click("#welcome button[type=submit]")
    page.wait_for_selector('#view[aria-busy="false"] #table .board')
    me = stored(page)
    assert me is not None and me["name"] == name
    return me


def visit(page: Page, server: WebServer, path: str) -> None:
    """Opens `path` (afresh, when the page shows it already: going to the same address with a
    hash would change nothing)."""
    if page.url == server.url(path):
        page.reload()
    else:
        page.goto(server.url(path))


def open_account(page: Page, server: WebServer) -> None:
    visit(page, server, "/#/account")
    page.wait_for_selector('#view[aria-busy="false"] .view-account')


def sign_in(page: Page, name: str, password: str) -> None:
    """In the welcome window: "I already have an account: sign in", then name and password."""
    box = page.locator("#welcome[open]")
    if box.get_attribute("data-mode") != "sign-in":
        box.locator("#welcome-sign-in").click()
    box.locator("#sign-in-name").fill(name)
    box.locator("#sign-in-password").fill(password)
    box.locator("#sign-in-submit").click()


def create_password(page: Page, password: str) -> None:
    page.fill("#account-new-password", password)
    page.fill("#account-repeat-password", password)
    page.click("#account-password-save")


def test_a_guest_adds_a_password_and_signs_in_on_another_device(
    page: Page, phone_page: Page, web_server: WebServer, allowed_answers: set[int]
) -> None:
    allowed_answers.update({401, 422})  # a wrong password, a refused password, a revoked token
    name = unique_name("Device")
    me = welcome_as_guest(page, web_server, name)
    won = new_game(web_server, me, CLASSIC["code"])
    play(web_server, me["token"], won, CLASSIC["actions"])

    # the Account view of a guest: no password yet
    open_account(page, web_server)
    expect(page.locator("#account-name")).to_have_text(name)
    expect(page.locator("#account-kind")).to_have_text("Guest (no password)")
    expect(page.locator("#account-guest-note")).to_be_visible()
    expect(page.locator("#account-current-password")).to_have_count(0)
    shot(page, "account-guest")
    # refused by the page (the two differ) and by the server (too short), then created
    page.fill("#account-new-password", PASSWORD)
    page.fill("#account-repeat-password", PASSWORD + "!")
    page.click("#account-password-save")
    expect(page.locator("#account-password-error")).to_have_text("The two new passwords differ.")
    create_password(page, "short")
    expect(page.locator("#account-password-error")).not_to_be_empty()
    create_password(page, PASSWORD)
    expect(page.locator("#account-kind")).to_have_text("Account with a password")
    expect(page.locator("#account-status")).to_contain_text("Your password is set")
    expect(page.locator("#account-current-password")).to_be_visible()  # now it changes it
    expect(page.locator("#account-sessions tbody tr")).to_have_count(1)

    # another device: the welcome window offers to sign in; a wrong password is refused
    phone_page.goto(web_server.url("/"))
    phone_page.wait_for_selector("#welcome[open] #player-name")
    sign_in(phone_page, name, "not the password at all")
    expect(phone_page.locator("#sign-in-error")).to_have_text("The name or the password is wrong.")
    shot(phone_page, "welcome-sign-in-refused")
    sign_in(phone_page, name, PASSWORD)
    phone_page.wait_for_selector("#welcome", state="detached")
    phone_page.wait_for_selector('#view[aria-busy="false"] #table .board')
    other = stored(phone_page)
    assert other is not None
    assert other["id"] == me["id"] and other["name"] == name and other["token"] != me["token"]
    # the same player: name and statistics
    phone_page.goto(web_server.url("/#/me"))
    phone_page.wait_for_selector('#view[aria-busy="false"] .stats-table')
    expect(phone_page.locator("#stats-title")).to_contain_text(f"Statistics of {name}")
    expect(phone_page.locator("#stats-title .you")).to_be_visible()
    won_count = phone_page.locator('#stats-table tr[data-stat="won"] td[data-rule="classic"]')
    expect(won_count).to_have_text("1")
    expect(phone_page.locator(f'#games-table tr[data-game="{won}"]')).to_be_visible()

    # the sessions: both devices, this one marked; the phone's is ended from the desktop
    open_account(page, web_server)
    rows = page.locator("#account-sessions tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator('#account-sessions tr[data-current="true"] .here')).to_have_text(
        "This device"
    )
    shot(page, "account-two-sessions")
    ended = page.locator('#account-sessions tr[data-current="false"]')
    phone_session = ended.get_attribute("data-session")
    ended.locator("button.end-session").click()
    expect(rows).to_have_count(1)
    expect(page.locator("#account-status")).to_contain_text("is ended")
    assert status_of(web_server, "GET", "/me", other["token"]) == 401
    assert page.locator(f'#account-sessions tr[data-session="{phone_session}"]').count() == 0

    # the phone's next request is refused: it forgets the token and asks again
    phone_page.goto(web_server.url("/#/account"))
    phone_page.wait_for_selector("#welcome[open] #welcome-ended")
    shot(phone_page, "welcome-session-ended")
    assert stored(phone_page) is None
    sign_in(phone_page, name, PASSWORD)
    phone_page.wait_for_selector("#welcome", state="detached")
    # drawn again for the player signed in
    expect(phone_page.locator("#account-name")).to_have_text(name)
    again = stored(phone_page)
    assert again is not None and again["id"] == me["id"]
    expect(phone_page.locator("#account-sessions tbody tr")).to_have_count(2)
    shot(phone_page, "account-phone")

    # signing out: the session ends on the server and the page forgets its token
    phone_page.click("#account-sign-out")
    expect(phone_page.locator("#account-none")).to_be_visible()
    expect(phone_page.locator("#account-status")).to_have_text("You are signed out.")
    assert stored(phone_page) is None
    assert status_of(web_server, "GET", "/me", again["token"]) == 401
    assert status_of(web_server, "GET", "/me", me["token"]) == 200  # the desktop is still in
    # the signed-out Account view signs in again
    phone_page.click("#account-sign-in")
    sign_in(phone_page, name, PASSWORD)
    expect(phone_page.locator("#account-name")).to_have_text(name)


def test_changing_the_password_signs_the_other_devices_out(
    page: Page, phone_page: Page, web_server: WebServer, allowed_answers: set[int]
) -> None:
    allowed_answers.update({401, 403})
    name = unique_name("Changer")
    player = call(web_server, "POST", "/players", {"name": name, "password": PASSWORD})
    page.goto(web_server.url("/"))
    sign_in(page, name, PASSWORD)
    page.wait_for_selector("#welcome", state="detached")
    open_account(page, web_server)
    expect(page.locator("#account-kind")).to_have_text("Account with a password")
    expect(page.locator("#account-sessions tbody tr")).to_have_count(2)  # sign-up's and this
    # a wrong current password is refused
    page.fill("#account-current-password", "not the password at all")
    create_password(page, PASSWORD + " two")
    expect(page.locator("#account-password-error")).not_to_be_empty()
    page.fill("#account-current-password", PASSWORD)
    create_password(page, PASSWORD + " two")
    expect(page.locator("#account-status")).to_contain_text("Your password is changed")
    expect(page.locator("#account-sessions tbody tr")).to_have_count(1)
    assert status_of(web_server, "GET", "/me", player["token"]) == 401
    # the new password signs in elsewhere
    phone_page.goto(web_server.url("/#/account"))
    phone_page.click("#account-sign-in")
    sign_in(phone_page, name, PASSWORD + " two")
    expect(phone_page.locator("#account-name")).to_have_text(name)


def test_the_export_downloads_the_players_data(page: Page, web_server: WebServer) -> None:
    me = welcome_as_guest(page, web_server, unique_name("Export"))
    won = new_game(web_server, me, CLASSIC["code"])
    play(web_server, me["token"], won, CLASSIC["actions"])
    open_account(page, web_server)
    with page.expect_download() as info:
        page.click("#account-export")
    download = info.value
    assert download.suggested_filename == f"solitaire-{me['id']}.json"
    path = download.path()
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["format"] == "russian-solitaire-export"
    assert document["profile"]["id"] == me["id"]
    assert document["profile"]["name"] == me["name"]
    assert CLASSIC["code"] in [game["code"] for game in document["games"]]
    assert all("token" not in session for session in document["sessions"])
    expect(page.locator("#account-status")).to_contain_text(download.suggested_filename)


def test_deleting_the_account_frees_the_name_and_leaves_a_deleted_player(
    page: Page, second_page: Page, web_server: WebServer, allowed_answers: set[int]
) -> None:
    allowed_answers.update({401, 403, 404})
    name = unique_name("Leaver")
    me = welcome_as_guest(page, web_server, name)
    won = new_game(web_server, me, CLASSIC["code"])
    play(web_server, me["token"], won, CLASSIC["actions"])
    # a finished race of the player's (both racers gave up during the countdown)
    rival = sign_up(web_server, unique_name("Rival"))
    quick = {"seats": 2, "winnable": False, "time_limit_s": 3600}
    race = call(web_server, "POST", "/races", quick, me["token"])["id"]
    games = call(web_server, "POST", f"/races/{race}/join", {}, rival["token"])["games"]
    for racer in (me, rival):
        call(web_server, "POST", f"/games/{games[racer['id']]}/abandon", {}, racer["token"])
    # watched from another browser while it is deleted
    second_page.goto(web_server.url(f"/#/replay/{won}"))
    expect(second_page.locator("#replay-player a")).to_have_text(name)

    open_account(page, web_server)
    create_password(page, PASSWORD)
    expect(page.locator("#account-kind")).to_have_text("Account with a password")
    # the question asks for the password; cancelling keeps everything
    page.click("#account-delete")
    box = page.locator("#account-delete-dialog[open]")
    expect(box.locator("#account-delete-password")).to_be_focused()
    box.locator("#account-delete-cancel").click()
    page.wait_for_selector("#account-delete-dialog", state="detached")
    assert status_of(web_server, "GET", "/me", me["token"]) == 200
    # a wrong password is refused in the window
    page.click("#account-delete")
    box.locator("#account-delete-password").fill("not the password at all")
    box.locator("#account-delete-confirm").click()
    expect(box.locator("#account-delete-error")).not_to_be_empty()
    shot(page, "account-delete-refused")
    assert status_of(web_server, "GET", "/me", me["token"]) == 200
    box.locator("#account-delete-password").fill(PASSWORD)
    box.locator("#account-delete-confirm").click()
    page.wait_for_selector("#account-delete-dialog", state="detached")
    expect(page.locator("#account-none")).to_be_visible()
    expect(page.locator("#account-status")).to_have_text("Your account is deleted.")
    assert stored(page) is None
    assert status_of(web_server, "GET", "/me", me["token"]) == 401
    assert status_of(web_server, "GET", f"/players/{me['id']}", "") == 404

    # the games stay, played by "deleted player", with no link to a page of theirs
    visit(second_page, web_server, f"/#/replay/{won}")
    second_page.wait_for_selector('#view[aria-busy="false"] #replay-player')
    expect(second_page.locator("#replay-player")).to_have_text("deleted player")
    expect(second_page.locator("#replay-player a")).to_have_count(0)
    second_page.goto(web_server.url(f"/#/race/{race}"))
    second_page.wait_for_selector('#race-standings[data-final="true"] tbody tr')
    expect(second_page.locator("#race-title")).to_contain_text("deleted player")
    standings = second_page.locator("#race-standings tbody .col-player")
    expect(standings).to_have_count(2)
    expect(standings.filter(has_text="deleted player")).to_have_count(1)
    expect(standings.filter(has_text=rival["name"])).to_have_count(1)
    shot(second_page, "race-deleted-player")
    assert second_page.locator("#race-standings tbody .deleted-player a").count() == 0
    second_page.goto(web_server.url(f"/#/watch/{won}"))
    expect(second_page.locator("#watch-player")).to_have_text("deleted player")

    # the name is free: a new guest takes it, from the same browser
    page.click("#account-new")
    page.fill("#welcome[open] #player-name", name)
    page.click("#welcome button[type=submit]")
    expect(page.locator("#account-name")).to_have_text(name)
    expect(page.locator("#account-kind")).to_have_text("Guest (no password)")
    again = stored(page)
    assert again is not None and again["id"] != me["id"]


def test_a_guest_deletes_the_account_without_a_password(page: Page, web_server: WebServer) -> None:
    name = unique_name("Brief")
    me = welcome_as_guest(page, web_server, name)
    open_account(page, web_server)
    page.click("#account-delete")
    box = page.locator("#account-delete-dialog[open]")
    expect(box.locator("#account-delete-password")).to_have_count(0)
    expect(box).to_contain_text(name)
    box.locator("#account-delete-confirm").click()
    expect(page.locator("#account-none")).to_be_visible()
    assert status_of(web_server, "GET", "/me", me["token"]) == 401
    sign_up(web_server, name)  # the name is free


def test_a_guest_is_asked_before_signing_out(page: Page, web_server: WebServer) -> None:
    me = welcome_as_guest(page, web_server, unique_name("Leaving"))
    open_account(page, web_server)
    page.click("#account-sign-out")
    box = page.locator("#account-sign-out-confirm[open]")
    expect(box).to_contain_text("nobody can sign in as this player again")
    box.get_by_role("button", name="Cancel").click()
    assert stored(page) is not None
    assert status_of(web_server, "GET", "/me", me["token"]) == 200
    page.click("#account-sign-out")
    box.get_by_role("button", name="Sign out anyway").click()
    expect(page.locator("#account-none")).to_be_visible()
    assert stored(page) is None
    assert status_of(web_server, "GET", "/me", me["token"]) == 401


def test_a_watch_socket_closed_with_4401_asks_again(
    page: Page, web_server: WebServer, allowed_answers: set[int]
) -> None:
    allowed_answers.add(401)
    watcher = sign_up(web_server, unique_name("Watcher"))
    player = sign_up(web_server, unique_name("Watched"))
    game = new_game(web_server, player, CLASSIC["code"])
    play(web_server, player["token"], game, CLASSIC["actions"][:2])
    as_player(page, watcher)
    closes: list[int] = []
    page.on("websocket", lambda socket: socket.on("close", lambda _: closes.append(1)))
    refused: list[str] = []  # HTTP answers 401: none, so the socket's close is what ended it
    page.on(
        "response",
        lambda response: refused.append(response.url) if response.status == 401 else None,
    )
    page.goto(web_server.url(f"/#/watch/{game}"))
    page.wait_for_selector('#watch-state[data-state="live"]')
    # the watcher's session is ended elsewhere (signed out from another client)
    assert status_of(web_server, "DELETE", "/me/sessions/current", watcher["token"]) == 204
    page.wait_for_selector("#welcome[open] #welcome-ended", timeout=5000)
    assert closes, "the socket was not closed"
    assert refused == []
    assert page.evaluate("localStorage.getItem('solitaire.player')") is None
