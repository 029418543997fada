"""A client of the API for the browser tests: players and games made without the page, and a
page made to belong to one of them."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.web.conftest import WebServer

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def call(server: WebServer, method: str, path: str, body: Any = None, token: str = "") -> Any:
    """One API call; waits out a 429 (the server runs with its rate limits on)."""
    headers = {"Content-Type": "application/json", "Accept-Language": "en"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    for _ in range(20):
        request = urllib.request.Request(
            server.url("/api/v1" + path), data=data, method=method, headers=headers
        )
        try:
            with OPENER.open(request, timeout=10) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            if error.code != 429:
                detail = error.read().decode(errors="replace")
                error.close()
                raise AssertionError(f"{method} {path}: {error.code} {detail}") from None
            wait = float(error.headers.get("Retry-After") or 1)
            error.close()
            time.sleep(min(wait, 2))
    raise AssertionError(f"{method} {path}: still rate-limited")


def action_body(action: str) -> dict[str, str]:
    if action == "undo":
        return {"action": "undo"}
    card, place = action.split("-")
    return {"card": card, "to": place}


def play(server: WebServer, token: str, game_id: str, actions: list[str]) -> Any:
    answer = None
    for action in actions:
        answer = call(server, "POST", f"/games/{game_id}/moves", action_body(action), token)
        assert answer["move"] == action
    return answer


def sign_up(server: WebServer, name: str) -> dict[str, str]:
    player: dict[str, str] = call(server, "POST", "/players", {"name": name})
    return player


def new_game(server: WebServer, player: dict[str, str], code: str) -> str:
    game_id: str = call(server, "POST", "/games", {"code": code}, player["token"])["id"]
    return game_id


def as_player(page: Page, player: dict[str, str], language: str = "en") -> None:
    """Makes `player` this browser's own player (and sets the page's language)."""
    stored = json.dumps({"id": player["id"], "name": player["name"], "token": player["token"]})
    page.add_init_script(
        f"localStorage.setItem('solitaire.player', {json.dumps(stored)});"
        f"localStorage.setItem('solitaire.language', {json.dumps(language)});"
    )
