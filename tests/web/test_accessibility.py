"""An accessibility audit of every screen of the web client with axe-core (the copy that the
axe-playwright-python package carries; nothing is fetched): no violation of impact "serious" or
"critical" on the WCAG 2 A/AA rules, in English and in Hebrew (right to left)."""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page

from tests.conftest import load_data
from tests.web.client import as_player, call, new_game, play, sign_up
from tests.web.driver import Table
from tests.web.helpers import audit

if TYPE_CHECKING:
    from tests.web.conftest import WebServer

CLASSIC = load_data("games.json")["games"][0]


@pytest.fixture(scope="module")
def won(web_server: WebServer) -> dict[str, Any]:
    player = sign_up(web_server, "Audit")
    game = new_game(web_server, player, CLASSIC["code"])
    play(web_server, player["token"], game, CLASSIC["actions"])
    active = new_game(web_server, player, CLASSIC["code"])
    play(web_server, player["token"], active, CLASSIC["actions"][:3])
    # a secret deal given up (its code revealed and checked), and one in play (hidden)
    revealed = call(web_server, "POST", "/games", {}, player["token"])["id"]
    call(web_server, "POST", f"/games/{revealed}/abandon", {}, player["token"])
    secret = call(web_server, "POST", "/games", {}, player["token"])["id"]
    # races: one open (the player created it), one running with the player seated, one finished
    rival = sign_up(web_server, "Rival")
    other = sign_up(web_server, "Other")
    quick = {"seats": 2, "winnable": False, "time_limit_s": 3600}
    open_race = call(web_server, "POST", "/races", {**quick, "seats": 3}, player["token"])["id"]
    running = call(web_server, "POST", "/races", quick, player["token"])["id"]
    call(web_server, "POST", f"/races/{running}/join", {}, rival["token"])
    finished = call(web_server, "POST", "/races", quick, rival["token"])["id"]
    joined = call(web_server, "POST", f"/races/{finished}/join", {}, other["token"])
    games = joined["games"]
    # After the countdown each racer makes a move (only racers who moved are rated, and the
    # results show the rating changes), then gives up: the race is over at once.
    wait = datetime.fromisoformat(joined["starts_at"]) - datetime.fromisoformat(joined["now"])
    time.sleep(max(0.0, wait.total_seconds()) + 0.2)
    for racer in (rival, other):
        game_id = games[racer["id"]]
        legal = call(web_server, "GET", f"/games/{game_id}/legal", token=racer["token"])
        card, to = legal["moves"][0].split("-")
        body = {"card": card, "to": to}
        call(web_server, "POST", f"/games/{game_id}/moves", body, racer["token"])
    for racer in (rival, other):
        call(web_server, "POST", f"/games/{games[racer['id']]}/abandon", {}, racer["token"])
    return {
        "player": player,
        "won": game,
        "active": active,
        "revealed": revealed,
        "secret": secret,
        "open_race": open_race,
        "running_race": running,
        "finished_race": finished,
    }


@pytest.mark.parametrize("language", ["en", "he"])
def test_every_screen_passes_an_accessibility_audit(
    page: Page, web_server: WebServer, won: dict[str, Any], language: str
) -> None:
    as_player(page, won["player"], language)
    table = Table(page, web_server.base)
    page.goto(web_server.url(f"/#/play/{won['active']}"))
    table.wait_view()
    audit(page, "play")
    table.key(CLASSIC["actions"][3].split("-")[0], "Enter")  # a card picked up
    page.wait_for_selector("#table .card.selected")
    audit(page, "play, a card picked up")
    page.keyboard.press("Escape")
    for opener, box in [
        ("#new-game", "#new-game-dialog"),
        ("#settings", "#settings-dialog"),
        ("#hint", "#hint-confirm"),
        ("#give-up", "#give-up-confirm"),
    ]:
        page.click(opener)
        page.wait_for_selector(box)
        audit(page, box)
        page.keyboard.press("Escape")
        page.wait_for_selector(box, state="detached")
    # a secret deal: hidden, with its commitment shown; then revealed and checked
    page.goto(web_server.url(f"/#/play/{won['secret']}"))
    table.wait_view()
    page.click("#deal-commitment-toggle")
    page.wait_for_selector("#deal-details:not([hidden])")
    audit(page, "play, a secret deal and its commitment")
    page.goto(web_server.url(f"/#/play/{won['revealed']}"))
    page.wait_for_selector('#deal-check[data-state="verified"]')
    page.click("#deal-commitment-toggle")
    audit(page, "play, a revealed deal, verified")
    for screen, ready in [
        (f"#/replay/{won['revealed']}", "#replay-commitment-check[data-state]"),
        ("#/boards?daily=1", "#boards-daily-commitment"),
        (f"#/replay/{won['won']}", "#replay-step"),
        (f"#/watch/{won['active']}", '#watch-state[data-state="live"]'),
        ("#/boards", ".view-boards"),
        (f"#/player/{won['player']['id']}", ".stats-table"),
        ("#/races", "#races-finished-list"),
        (f"#/race/{won['open_race']}", "#race-lobby:not([hidden]) #race-start"),
        (f"#/race/{won['running_race']}", "#race-table #table .board"),
        (f"#/race/{won['finished_race']}", '#race-standings[data-final="true"] .col-rating'),
        ("#/watch", ".view-live #live-races-running-list"),
        ("#/boards?by=rating", '#boards-table[data-board="races"] tbody tr'),
        ("#/account", "#account-sessions tbody tr"),
    ]:
        page.goto(web_server.url("/" + screen))
        page.wait_for_selector(f'#view[aria-busy="false"] {ready}')
        audit(page, screen)
    # the account's questions: deleting it, signing a guest out (both cancelled)
    for opener, box in [
        ("#account-delete", "#account-delete-dialog"),
        ("#account-sign-out", "#account-sign-out-confirm"),
    ]:
        page.click(opener)
        page.wait_for_selector(f"{box}[open]")
        audit(page, box)
        page.keyboard.press("Escape")
        page.wait_for_selector(box, state="detached")


def test_the_welcome_window_passes_an_accessibility_audit(
    page: Page, web_server: WebServer
) -> None:
    page.goto(web_server.url("/"))
    page.wait_for_selector("#welcome[open] #player-name")
    audit(page, "welcome")
    page.click("#welcome-sign-in")
    page.wait_for_selector("#welcome[open] #sign-in-password")
    audit(page, "welcome, signing in")


@pytest.mark.parametrize("language", ["en", "he"])
def test_the_account_view_without_a_player_passes_an_accessibility_audit(
    page: Page, web_server: WebServer, language: str
) -> None:
    page.add_init_script(f"localStorage.setItem('solitaire.language', '{language}');")
    page.goto(web_server.url("/#/account"))
    page.wait_for_selector('#view[aria-busy="false"] #account-none')
    audit(page, "account, nobody signed in")
