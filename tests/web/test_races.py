"""Races in the page (SPEC 2.6.1): two players in two browsers race each other through the page
(one creates the race on the Races page, the other joins it from the list; both see the
countdown by the server's clock, then their own table; each sees the other's progress live; both
give up, and both see the results with places and rating changes, and the replays); a third
browser watches the race and sees the standings, never a card. The Watch page lists a live solo
game and the races; the leaderboards show the race board; a refusal of the server is shown, in
Romanian too."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page, WebSocket, expect

from tests.conftest import load_data
from tests.web.client import as_player, call, new_game, play, sign_up
from tests.web.conftest import open_page
from tests.web.driver import Table, some_move
from tests.web.helpers import shot

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Response

    from tests.web.conftest import WebServer

CLASSIC = load_data("games.json")["games"][0]
COUNTDOWN_MS = 12_000  # the countdown is 5 s; the race runs from the next tick (1 s) at most
DESKTOP = {"width": 1280, "height": 900}


@pytest.fixture
def second_page(
    browser: Browser, web_server: WebServer, allowed_answers: set[int]
) -> Iterator[Page]:
    """Another desktop page, in its own context (another browser), checked like `page`."""
    yield from open_page(browser, web_server, allowed_answers, viewport=DESKTOP)


@pytest.fixture
def third_page(
    browser: Browser, web_server: WebServer, allowed_answers: set[int]
) -> Iterator[Page]:
    yield from open_page(browser, web_server, allowed_answers, viewport=DESKTOP)


class Received:
    """Everything a page received from the API and over its WebSockets, and what it asked for."""

    def __init__(self, page: Page) -> None:
        self.bodies: list[str] = []
        self.asked: list[str] = []
        page.on("response", self.on_response)
        page.on("websocket", self.on_websocket)

    def on_response(self, response: Response) -> None:
        if "/api/" in response.url:
            self.asked.append(response.url)
            self.bodies.append(response.text())

    def on_websocket(self, socket: WebSocket) -> None:
        socket.on("framereceived", lambda payload: self.bodies.append(str(payload)))


# Notes every state of the race's clock the page shows, so that a countdown of 5 s is seen however
# slowly the test gets to look at it.
CLOCK_SPY = """
window.__clock = [];
setInterval(() => {
  const clock = document.getElementById("race-clock");
  const seen = clock ? `${clock.dataset.phase}|${clock.textContent}` : null;
  if (seen && window.__clock.at(-1) !== seen) window.__clock.push(seen);
}, 50);
"""


def clock_states(page: Page) -> list[str]:
    states: list[str] = page.evaluate("window.__clock")
    return states


def legal_move(page: Page, table: Table, game_id: str) -> str:
    """A legal move of the racer's game as the page shows it, from the server's placement help."""
    move = some_move(page, table, game_id)
    assert move is not None, "no legal move on the table"
    return move


def standing(page: Page, player_id: str, column: str) -> Any:
    return page.locator(f'#race-standings tr[data-player="{player_id}"] .col-{column}')


def no_card(page: Page) -> None:
    """Nothing of a racer's table is drawn: no card, face-up or down, no table."""
    assert page.locator("#table").count() == 0
    assert page.locator(".card").count() == 0


def test_two_players_race_each_other_through_the_page(
    page: Page,
    second_page: Page,
    third_page: Page,
    web_server: WebServer,
    allowed_answers: set[int],
) -> None:
    allowed_answers.add(409)  # starting alone: the server's refusal, shown
    ana = sign_up(web_server, "Ana")
    bo = sign_up(web_server, "Bo")
    as_player(page, ana)
    as_player(second_page, bo)
    spectator = third_page  # no player at all: watching needs none
    seen = Received(spectator)
    for each in (page, second_page, spectator):
        each.add_init_script(CLOCK_SPY)

    # Ana creates a race of 2 seats (any deal, so that it is dealt at once) on the Races page.
    page.goto(web_server.url("/#/races"))
    page.wait_for_selector('#view[aria-busy="false"] .view-races')
    expect(page.locator("nav a[href='#/races']")).to_have_attribute("aria-current", "page")
    page.select_option("#race-rule", "relaxed")
    page.select_option("#race-seats", "2")
    page.select_option("#race-limit", "300")
    page.uncheck("#race-winnable")
    expect(page.locator("#race-public")).to_be_checked()
    page.click("#race-create")
    page.wait_for_url("**#/race/*")
    race_id = page.evaluate("location.hash").removeprefix("#/race/")
    expect(page.locator("#race-title")).to_have_text("Ana's race (Relaxed)")
    expect(page.locator("#race-connection")).to_have_attribute("data-state", "live")
    expect(page.locator("#race-players li")).to_have_count(1)
    expect(page.locator("#race-players")).to_contain_text("Ana (creator, you)")
    expect(page.locator("#race-clock")).to_have_text("Waiting for players: 1 of 2")
    expect(page.locator("#race-seats")).to_have_text("1 / 2")
    expect(page.locator("#race-limit")).to_have_text("5 min")
    expect(page.locator("#race-code")).to_have_text("hidden until the race ends")
    race = call(web_server, "GET", f"/races/{race_id}")
    assert race["rule"] == "relaxed" and race["seats"] == 2 and race["time_limit_s"] == 300
    assert race["winnable"] is False and race["public"] is True
    # Open: the deal waits for every racer's seed; the server's seed is committed already.
    assert race["deal_commitment"] is None and len(race["server_seed_hash"]) == 64
    expect(page.locator("#race-commitment")).to_have_text(
        "fixed when the race starts, from every racer's seed"
    )
    expect(page.locator("#race-seed-hash")).to_have_text(race["server_seed_hash"])
    expect(page.locator("#race-join")).to_be_hidden()
    # Starting alone: the server refuses, in its own words.
    page.click("#race-start")
    expect(page.locator("#race-error")).to_have_text("A race starts with at least two players.")
    shot(page, "race-lobby")

    # A spectator follows the race from its link: it may join, it sees no table.
    spectator.goto(web_server.url(f"/#/race/{race_id}"))
    expect(spectator.locator("#race-connection")).to_have_attribute("data-state", "live")
    expect(spectator.locator("#race-join")).to_be_visible()
    expect(spectator.locator("#race-start")).to_be_hidden()

    # Bo finds the race on the Races page and joins it: it is full, so it starts.
    second_page.goto(web_server.url("/#/races"))
    item = second_page.locator(f'#races-open-list li[data-race="{race_id}"]')
    expect(item).to_contain_text("Ana's race")
    expect(item).to_contain_text("1 of 2 players")
    expect(item).to_contain_text("any deal")
    shot(second_page, "races")
    item.get_by_role("button", name="Join Ana's race").click()
    second_page.wait_for_url(f"**#/race/{race_id}")

    # The countdown, by the server's clock, on every page; each racer's own table, locked.
    for each in (page, second_page, spectator):
        expect(each.locator("#race-standings tbody tr")).to_have_count(2)
    race = call(web_server, "GET", f"/races/{race_id}")
    assert race["status"] in ("starting", "running") and race["starts_at"]
    games = race["games"]
    ana_table = Table(page, web_server.base)
    bo_table = Table(second_page, web_server.base)
    for each in (page, second_page):
        each.wait_for_selector("#race-table #table .board")
        expect(each.locator("#game-code")).to_have_text("Deal hidden until the race ends")
        expect(each.locator("#new-game")).to_have_count(0)  # a race has no new game
        expect(each.locator("#hint")).to_have_count(0)  # nor hints
    shot(second_page, "race-countdown")
    assert page.locator("#table").get_attribute("data-locked") == "true" or (
        page.locator("#race-clock").get_attribute("data-phase") == "running"
    )
    assert ana_table.tableau() == bo_table.tableau()  # the same deal
    no_card(spectator)
    expect(spectator.locator("#race-spectating")).to_be_visible()

    # Go: each racer plays through the page, and sees the other's progress live.
    for each in (page, second_page):
        each.wait_for_selector('#table[data-locked="false"]', timeout=COUNTDOWN_MS)
        expect(each.locator("#race-clock")).to_contain_text("Time left")
    for each in (page, second_page, spectator):
        expect(each.locator("#race-clock")).to_have_attribute("data-phase", "running")
        states = clock_states(each)
        counted = [s for s in states if s.startswith("starting|Starts in ")]
        assert counted, states
        # the seconds count down, and the race runs once they are over
        numbers = [int(s.rsplit(" ", 1)[1]) for s in counted]
        assert numbers == sorted(numbers, reverse=True) and all(1 <= n <= 5 for n in numbers)
        assert states.index(counted[-1]) < max(
            i for i, s in enumerate(states) if s.startswith("running|Time left")
        )
    for each in (page, second_page, spectator):
        expect(each.locator("#race-announce")).to_have_text("Go! The race has started.")
    # The deal was fixed from both racers' seeds at the start: its commitment is shown now.
    started = call(web_server, "GET", f"/races/{race_id}")
    assert started["deal_commitment"] is not None
    for each in (page, second_page, spectator):
        expect(each.locator("#race-commitment")).to_have_text(started["deal_commitment"])
    move = legal_move(page, ana_table, games[ana["id"]])
    ana_table.play(move)
    for each in (page, second_page, spectator):
        expect(standing(each, ana["id"], "moves")).to_have_text("1")
        expect(standing(each, bo["id"], "moves")).to_have_text("0")
    first_ranked = page.inner_text(f'#race-standings tr[data-player="{ana["id"]}"] .col-ranked')
    assert int(first_ranked) >= 0
    moves = [legal_move(second_page, bo_table, games[bo["id"]])]
    bo_table.play(moves[0])
    moves.append(legal_move(second_page, bo_table, games[bo["id"]]))
    bo_table.play(moves[1])
    for each in (page, second_page, spectator):
        expect(standing(each, bo["id"], "moves")).to_have_text("2")
        expect(standing(each, bo["id"], "status")).to_have_text("in progress")
    # the leader by the rules of the standings is first
    standings = call(web_server, "GET", f"/races/{race_id}")["standings"]
    for entry in standings:
        row = spectator.locator(f'#race-standings tr[data-player="{entry["player"]["id"]}"]')
        expect(row).to_have_attribute("data-place", str(entry["place"]))
        expect(row.locator(".col-cards")).to_have_text(str(entry["foundation_cards"]))
        expect(row.locator(".col-ranked")).to_have_text(str(entry["ranked_score"]))
    expect(page.locator(f'#race-standings tr[data-player="{ana["id"]}"]')).to_have_class("you")
    shot(page, "race-running")
    shot(spectator, "race-spectator")
    no_card(spectator)

    # Ana gives up: the race goes on for Bo.
    ana_table.give_up()
    expect(page.locator("#banner")).to_contain_text("You gave up.")
    expect(page.locator("#banner")).to_contain_text("still playing")
    expect(page.locator("#game-code")).to_have_text("Deal hidden until the race ends")
    for each in (page, second_page, spectator):
        expect(standing(each, ana["id"], "status")).to_have_text("abandoned")
    expect(second_page.locator("#race-clock")).to_contain_text("Time left")

    # Bo gives up too: the race is over. Everyone sees the results.
    bo_table.give_up()
    race = call(web_server, "GET", f"/races/{race_id}")
    assert race["status"] == "finished" and race["code"]
    for each in (page, second_page, spectator):
        table = each.locator('#race-standings[data-final="true"]')
        expect(table).to_be_visible()
        expect(table.locator("caption")).to_have_text("Results")
        expect(each.locator("#race-clock")).to_have_text("The race is over")
        expect(each.locator("#race-code")).to_have_text(race["code"])
        expect(each.locator("#race-code-check")).to_have_attribute("data-state", "verified")
        for entry in race["standings"]:
            row = each.locator(f'#race-standings tr[data-player="{entry["player"]["id"]}"]')
            expect(row).to_have_attribute("data-place", str(entry["place"]))
            expect(row.locator(".col-place")).to_have_text(str(entry["place"]))
            expect(row.locator(".col-status")).to_have_text("abandoned")
            rating = row.locator(".col-rating")
            expect(rating).to_have_attribute("data-after", str(entry["rating"]["after"]["ordinal"]))
            before = float(rating.get_attribute("data-before") or "nan")
            assert before == pytest.approx(entry["rating"]["before"]["ordinal"])
            expect(rating).to_contain_text("→")
            old, new = entry["rating"]["before"]["ordinal"], entry["rating"]["after"]["ordinal"]
            label = rating.get_attribute("aria-label") or ""
            assert label.startswith(f"Rating {old:.1f} → {new:.1f} ("), label
            expect(row.locator(".col-replay a")).to_have_attribute(
                "href", f"#/replay/{games[entry['player']['id']]}"
            )
    places = sorted(entry["place"] for entry in race["standings"])
    assert places in ([1, 2], [1, 1])
    expect(page.locator("#race-announce")).to_contain_text("The race is over")
    # The racer's own table: the revealed deal, checked; its replay.
    expect(page.locator("#game-code")).to_have_text(race["code"])
    expect(page.locator("#deal-check")).to_have_attribute("data-state", "verified", timeout=15_000)
    expect(page.locator("#race-own-replay")).to_have_attribute(
        "href", f"#/replay/{games[ana['id']]}"
    )
    shot(page, "race-results")
    no_card(spectator)

    # Nothing the spectator received held a card of a racer's game, or asked for one.
    assert not [url for url in seen.asked if "/games/" in url]
    for body in seen.bodies:
        assert '"tableau"' not in body and '"foundations"' not in body, body[:200]
        assert race["code"] not in body or re.search(r'"status": ?"finished"', body), body[:200]

    # The replays open, from the results and from the racer's own table.
    spectator.locator(f'#race-standings tr[data-player="{bo["id"]}"] .col-replay a').click()
    spectator.wait_for_url(f"**#/replay/{games[bo['id']]}")
    expect(spectator.locator("#replay-step")).to_have_text("0 / 2")
    expect(spectator.locator("#replay-commitment-check")).to_have_attribute(
        "data-state", "verified"
    )
    page.click("#race-own-replay")
    page.wait_for_url(f"**#/replay/{games[ana['id']]}")
    expect(page.locator("#replay-step")).to_have_text("0 / 1")
    page.click("#replay-verify-button")
    expect(page.locator("#replay-verify")).to_contain_text("Valid")


def race_of_two(
    server: WebServer, first: dict[str, str], second: dict[str, str], rule: str = "classic"
) -> str:
    """A race of two seats that `second` joined (so it started), with any deal."""
    body = {"rule": rule, "seats": 2, "winnable": False, "time_limit_s": 3600}
    race_id: str = call(server, "POST", "/races", body, first["token"])["id"]
    call(server, "POST", f"/races/{race_id}/join", {}, second["token"])
    return race_id


def test_the_watch_page_lists_live_games_and_races(page: Page, web_server: WebServer) -> None:
    cleo = sign_up(web_server, "Cleo")
    solo = new_game(web_server, cleo, CLASSIC["code"])
    play(web_server, cleo["token"], solo, CLASSIC["actions"][:2])
    dan = sign_up(web_server, "Dan")
    eve = sign_up(web_server, "Eve")
    running = race_of_two(web_server, dan, eve)
    racing_games = list(call(web_server, "GET", f"/races/{running}")["games"].values())
    body = {"seats": 3, "winnable": False, "time_limit_s": 120}
    waiting = call(web_server, "POST", "/races", body, cleo["token"])["id"]

    page.goto(web_server.url("/#/watch"))
    page.wait_for_selector('#view[aria-busy="false"] .view-live')
    expect(page.locator("nav a[href='#/watch']")).to_have_attribute("aria-current", "page")
    game = page.locator(f'#live-games-list li[data-game="{solo}"]')
    expect(game).to_contain_text("Cleo's game")
    expect(game).to_contain_text("2 moves")
    for hidden in racing_games:  # a race's games are hidden until it ends
        expect(page.locator(f'#live-games-list li[data-game="{hidden}"]')).to_have_count(0)
    race = page.locator(f'#live-races-running-list li[data-race="{running}"]')
    expect(race).to_contain_text("Dan's race")
    expect(race).to_contain_text("Dan, Eve")
    expect(race).to_contain_text("2 of 2 players")
    expect(race.locator(".join")).to_have_count(0)
    open_race = page.locator(f'#live-races-open-list li[data-race="{waiting}"]')
    expect(open_race).to_contain_text("Cleo's race")
    expect(open_race).to_contain_text("1 of 3 players")
    shot(page, "watch-list")

    # A move of the solo game shows up on the next reading; the game opens in the spectator view.
    play(web_server, cleo["token"], solo, CLASSIC["actions"][2:3])
    page.click("#live-refresh")
    expect(game).to_contain_text("3 moves")
    game.get_by_role("link", name="Watch Cleo's game").click()
    page.wait_for_url(f"**#/watch/{solo}")
    expect(page.locator("#watch-state")).to_have_attribute("data-state", "live")
    expect(page.locator("#watch-moves")).to_have_text("3")
    page.go_back()
    page.wait_for_selector('#view[aria-busy="false"] .view-live')
    page.locator(f'#live-races-running-list li[data-race="{running}"] a.race-link').click()
    page.wait_for_url(f"**#/race/{running}")
    expect(page.locator("#race-standings tbody tr")).to_have_count(2)
    no_card(page)


def test_the_race_board_ranks_racers_by_rating(page: Page, web_server: WebServer) -> None:
    fay = sign_up(web_server, "Fay")
    gus = sign_up(web_server, "Gus")
    race_id = race_of_two(web_server, fay, gus, "relaxed")
    race = call(web_server, "GET", f"/races/{race_id}")
    # Once the countdown is over Gus plays a move, then Fay (only racers who moved are rated:
    # SPEC 2.6.1), then both give up: Gus is first, by the earlier last action.
    time.sleep(max(0.0, seconds(race["starts_at"]) - seconds(race["now"])) + 0.2)
    for racer in (gus, fay):
        game_id = race["games"][racer["id"]]
        legal = call(web_server, "GET", f"/games/{game_id}/legal", token=racer["token"])
        card, to = legal["moves"][0].split("-")
        body = {"card": card, "to": to}
        call(web_server, "POST", f"/games/{game_id}/moves", body, racer["token"])
    for player in (fay, gus):
        game_id = race["games"][player["id"]]
        call(web_server, "POST", f"/games/{game_id}/abandon", {}, player["token"])
    assert call(web_server, "GET", f"/races/{race_id}")["status"] == "finished"

    page.goto(web_server.url("/#/boards?by=rating&rule=relaxed"))
    table = page.locator('#boards-table[data-board="races"]')
    expect(table).to_be_visible()
    expect(page.locator("#boards-caption")).to_have_text("Race ratings: Relaxed")
    expect(page.locator("#boards-period")).to_be_hidden()
    expect(page.locator("#boards-code")).to_be_hidden()
    board = call(web_server, "GET", "/leaderboards/races?rule=relaxed")
    for entry in board["entries"][:5]:
        row = table.locator(f'tbody tr[data-player="{entry["player"]["id"]}"]')
        expect(row.locator(".col-rank")).to_have_text(str(entry["rank"]))
        expect(row.locator(".col-ordinal")).to_have_text(f"{entry['ordinal']:.1f}")
        expect(row.locator(".col-races")).to_have_text(str(entry["races"]))
    ranks = {e["player"]["id"]: e["rank"] for e in board["entries"]}
    assert ranks[gus["id"]] < ranks[fay["id"]]
    shot(page, "boards-races")
    # The other boards come back as they were.
    page.select_option("#boards-by", "score")
    expect(page.locator('#boards-table[data-board="games"]')).to_be_attached()
    expect(page.locator("#boards-period")).to_be_visible()
    # The player's statistics show the race rating.
    page.goto(web_server.url(f"/#/player/{gus['id']}"))
    ordinal = next(e["ordinal"] for e in board["entries"] if e["player"]["id"] == gus["id"])
    rating = page.locator('#stats-table tr[data-stat="race_rating"] td[data-rule="relaxed"]')
    expect(rating).to_have_text(f"{ordinal:.1f}")
    races = page.locator('#stats-table tr[data-stat="races"] td[data-rule="relaxed"]')
    expect(races).to_have_text("1")


def seconds(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def test_a_refusal_in_romanian_and_leaving_an_open_race(
    page: Page, web_server: WebServer, allowed_answers: set[int]
) -> None:
    allowed_answers.add(409)
    ion = sign_up(web_server, "Ion")
    ana = sign_up(web_server, "Ana R")
    maria = sign_up(web_server, "Maria")
    as_player(page, ion, "ro")
    body = {"seats": 2, "winnable": False, "time_limit_s": 60}
    race_id = call(web_server, "POST", "/races", body, ana["token"])["id"]
    page.goto(web_server.url("/#/races"))
    item = page.locator(f'#races-open-list li[data-race="{race_id}"]')
    expect(item).to_contain_text("Cursa lui Ana R")
    # Maria takes the last seat meanwhile: Ion's Join is refused (race_full), in Romanian.
    call(web_server, "POST", f"/races/{race_id}/join", {}, maria["token"])
    item.get_by_role("button", name="Intră în cursa lui Ana R").click()
    expect(page.locator("#races-error")).to_have_text("Toate locurile acestei curse sunt ocupate.")
    expect(page.locator(f'#races-open-list li[data-race="{race_id}"]')).to_have_count(0)

    # Ion opens a race of his own, then leaves it: it is cancelled.
    page.select_option("#race-seats", "3")
    page.click("#race-create")
    page.wait_for_url("**#/race/*")
    own = page.evaluate("location.hash").removeprefix("#/race/")
    expect(page.locator("#race-clock")).to_have_text("Se așteaptă jucători: 1 din 3")
    expect(page.locator("#race-deal")).to_have_text("câștigabilă (certificată de rezolvitor)")
    page.click("#race-leave")
    expect(page.locator("#race-clock")).to_have_text("Cursa a fost anulată.")
    assert call(web_server, "GET", f"/races/{own}")["status"] == "cancelled"
    expect(page.locator("#race-lobby")).to_be_hidden()


def test_a_race_left_to_its_deadline_ends_by_itself(page: Page, web_server: WebServer) -> None:
    """The shortest race (60 s), played by nobody: at the deadline the table locks, the server
    ends the race on its own, and every game is shown as timed out. (It takes a minute.)"""
    hal = sign_up(web_server, "Hal")
    ida = sign_up(web_server, "Ida")
    body = {"rule": "relaxed", "seats": 2, "winnable": False, "time_limit_s": 60}
    race_id = call(web_server, "POST", "/races", body, hal["token"])["id"]
    as_player(page, hal, "he")
    page.goto(web_server.url(f"/#/race/{race_id}"))
    expect(page.locator("#race-clock")).to_have_text("ממתין לשחקנים: 1 מתוך 2")
    race = call(web_server, "POST", f"/races/{race_id}/join", {}, ida["token"])
    page.wait_for_selector('#table[data-locked="false"]', timeout=COUNTDOWN_MS)
    expect(page.locator("#race-clock")).to_contain_text("זמן שנותר")
    expect(page.locator("#give-up")).to_be_enabled()
    left = seconds(race["starts_at"]) + 60 - seconds(race["now"])
    # The server ends the race at the deadline on its own (within 2 s): the results.
    final = page.locator('#race-standings[data-final="true"]')
    expect(final).to_be_visible(timeout=int(left * 1000) + 10_000)
    expect(page.locator("#race-clock")).to_have_text("המרוץ הסתיים")
    expect(page.locator("#give-up")).to_be_disabled()
    expect(page.locator("#table button")).to_have_count(0)  # nothing left to play
    for player in (hal, ida):
        row = final.locator(f'tr[data-player="{player["id"]}"]')
        expect(row.locator(".col-status")).to_have_text("הזמן נגמר")
        expect(row.locator(".col-time")).to_have_text("1:00")
    expect(page.locator("#banner")).to_contain_text("הזמן נגמר.")
    game = call(web_server, "GET", f"/games/{race['games'][hal['id']]}")
    assert game["timed_out"] is True and game["status"] == "abandoned"
    expect(page.locator("#game-code")).to_have_text(game["code"])
    shot(page, "race-timed-out-he")
