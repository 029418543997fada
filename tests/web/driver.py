"""Drives the web client's game view the way a player does: mouse, touch and keyboard."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from server.engine import DealCode, Game, Move, card_text, parse_action, place_text
from tests.names import unique_name

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page, Request


class Table:
    """The game view of one page, signed up as a new player."""

    def __init__(self, page: Page, base: str) -> None:
        self.page = page
        self.base = base
        self.actions_sent = 0  # POST .../moves requests the page has made
        page.on("request", self._count)

    def _count(self, request: Request) -> None:
        if request.method == "POST" and request.url.endswith("/moves"):
            self.actions_sent += 1

    # --- set-up -------------------------------------------------------------------------------

    def sign_up(self, name: str | None = None) -> Table:
        """Signs up through the welcome window, as `name` or a fresh "tester-..." (names are
        unique on the server)."""
        self.page.goto(self.base + "/")
        name = name if name is not None else unique_name("tester")
        self.page.fill("#player-name", name)
        self.page.click("#welcome button[type=submit]")
        self.wait_view()
        return self

    def wait_view(self) -> None:
        """Waits until the view the address names is drawn (the router clears aria-busy)."""
        self.page.wait_for_selector('#view[aria-busy="false"] #table .board')

    def setting(self, name: str, on: bool) -> None:
        """Sets one of the four play settings in the Settings window."""
        self.page.click("#settings")
        box = self.page.locator("#settings-dialog")
        box.locator(f"#setting-{name}").set_checked(on)
        box.get_by_role("button").last.click()
        self.page.wait_for_selector("#settings-dialog", state="detached")

    def language(self, language: str) -> None:
        self.page.select_option("#language", language)
        self.page.wait_for_selector(f'html[lang="{language}"] #view[aria-busy="false"] #table')

    @property
    def me(self) -> dict[str, Any]:
        stored = self.page.evaluate("localStorage.getItem('solitaire.player')")
        assert isinstance(stored, str)
        player: dict[str, Any] = json.loads(stored)
        return player

    @property
    def game_id(self) -> str:
        """The game on the table, from the page's address (#/play/ID)."""
        address = self.page.evaluate("location.hash")
        assert isinstance(address, str) and address.startswith("#/play/"), address
        return address.removeprefix("#/play/")

    def deal(self, code: str) -> None:
        """Deals `code` (a chosen deal: its code is shown from the start)."""
        self.page.click("#new-game")
        self.page.fill("#deal-code", code)
        self.page.click("#deal")
        self.page.wait_for_function(
            "code => document.querySelector('#game-code').textContent === code", arg=code
        )
        self.wait_version(0)

    def give_up(self) -> None:
        """Gives the game in play up (Give up, then the window's Give up): it is abandoned."""
        self.page.click("#give-up")
        self.page.locator("#give-up-confirm button.primary").click()
        self.page.wait_for_selector('#table[data-status="abandoned"]')

    # --- what the page shows ------------------------------------------------------------------

    @property
    def version(self) -> int:
        return int(self.page.get_attribute("#table", "data-version") or "-1")

    def wait_version(self, version: int) -> None:
        self.page.wait_for_selector(f'#table[data-version="{version}"]')

    def figure(self, name: str) -> str:
        return self.page.inner_text(f"#game-{name}")

    def column(self, n: int) -> list[str | None]:
        """Column tN as drawn, bottom to top: card text, None for a face-down card."""
        cards: list[str | None] = self.page.eval_on_selector_all(
            f'#table .column[data-place="t{n}"] .card',
            "nodes => nodes.map(n => n.classList.contains('down') ? null : n.dataset.card)",
        )
        return cards

    def tableau(self) -> list[list[str | None]]:
        return [self.column(n) for n in range(1, 8)]

    def foundation_counts(self) -> list[int]:
        counts: list[str] = self.page.eval_on_selector_all(
            "#table .foundation", "nodes => nodes.map(n => n.dataset.count)"
        )
        return [int(c) for c in counts]

    def message(self) -> str:
        return self.page.inner_text("#message")

    def card(self, card: str) -> Locator:
        """The card's control: a tableau card, or the foundation pile it tops."""
        column = self.page.locator(f'#table .column .card[data-card="{card}"]')
        if column.count():
            return column
        return self.page.locator(f'#table .foundation[data-card="{card}"]')

    # --- playing ------------------------------------------------------------------------------

    def click(self, card: str, clicks: int = 1) -> None:
        """Clicks the visible top strip of a card (cards on top of it cover the rest)."""
        self.card(card).click(position={"x": 20, "y": 8}, click_count=clicks)

    def drop_point(self, place: str, card: str) -> tuple[float, float]:
        if place == "f":
            suit = card[1]
            target = self.page.locator(f'#table .foundation[data-suit="{suit}"]')
        else:
            column = self.page.locator(f'#table .column[data-place="{place}"]')
            last = column.locator(".card.last")
            target = last if last.count() else column.locator(".slot")
        box = target.bounding_box()
        assert box is not None
        return box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 20)

    def press_card(self, card: str) -> tuple[float, float]:
        box = self.card(card).bounding_box()
        assert box is not None
        x, y = box["x"] + box["width"] / 2, box["y"] + 8
        self.page.mouse.move(x, y)
        self.page.mouse.down()
        return x, y

    def drag(self, card: str, place: str, *, release: bool = True) -> None:
        """Drags `card` (with every card on top of it) and drops it on `place`."""
        x0, y0 = self.press_card(card)
        x1, y1 = self.drop_point(place, card)
        self.page.mouse.move(x0 + 10, y0 + 10, steps=2)
        self.page.mouse.move(x1, y1, steps=6)
        if release:
            self.page.mouse.up()

    def key(self, card: str, key: str) -> None:
        self.card(card).focus()
        self.page.keyboard.press(key)

    def play(self, action: str, how: str = "mouse") -> None:
        """Plays one action given in move text, and waits for the server's answer.

        how: "mouse" (drag, or a click on a column's last card for a move to the foundation),
        "keys" (Enter / Enter, F for the foundation, U for undo), "mixed" (drags, and F for a
        move to the foundation).
        """
        before = self.version
        parsed = parse_action(action)
        if not isinstance(parsed, Move):
            if how == "keys":
                self.page.locator("#table").focus()
                self.page.keyboard.press("u")
            else:
                self.page.click("#undo")
        else:
            card, place = card_text(parsed.card), place_text(parsed.to)
            if how == "mixed" and place == "f":
                self.key(card, "f")
            elif how == "keys":
                if place == "f":
                    self.key(card, "f")
                else:
                    self.key(card, "Enter")
                    self.page.locator(f'#table .slot[data-place="{place}"]').focus()
                    self.page.keyboard.press("Enter")
            elif place == "f" and self.is_last(card):
                self.click(card)
            else:
                self.drag(card, place)
        self.wait_version(before + 1)

    def is_last(self, card: str) -> bool:
        return bool(self.page.locator(f'#table .column .card.last[data-card="{card}"]').count())


def engine_game(code: str, actions: Sequence[str] = ()) -> Game:
    """The server's engine at the same position, to pick moves and check what the page shows."""
    game = Game.deal(DealCode.parse(code))
    for action in actions:
        game.play(parse_action(action))
    return game


def some_move(page: Page, table: Table, game_id: str) -> str | None:
    """A legal move of the game on the table, found with the server's placement help."""
    token = table.me["token"]
    for column in table.tableau():
        for card in column:
            if card is None:
                continue
            answer = page.request.get(
                f"{table.base}/api/v1/games/{game_id}/targets?card={card}",
                headers={"Authorization": f"Bearer {token}"},
            ).json()
            if answer["targets"]:
                return f"{card}-{answer['targets'][0]}"
    return None
