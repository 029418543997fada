"""Problems explained and translated (SPEC 2.3, 2.7, issue 20): every problem type answers `200`
at its `type` URI with a page explaining it, in each language; the problem documents that the
server answers with, over HTTP and the WebSocket, have their `title` and `detail` (and their
`errors`' messages) in the language asked for, with `Content-Language`."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from server.api.rules import problem_slugs, problem_title
from server.api.texts import CATALOGUE, PLACEHOLDER, translate
from server.app import create_app
from server.engine.messages import LANGUAGES
from server.settings import Settings
from tests.api.helpers import new_player, problem
from tests.api.test_live import SUBPROTOCOL, Live
from tests.api.test_rules import Page, page
from tests.conftest import ClientFactory
from tests.test_problem_list import raised_slugs

UNKNOWN_GAME = "00000000-0000-4000-8000-000000000000"


async def test_every_problem_type_has_its_page(client: TestClient[Any, Any]) -> None:
    slugs = set(problem_slugs()) | raised_slugs()
    assert len(slugs) >= 26
    for slug in sorted(slugs):
        for lang in LANGUAGES:
            parsed = await page(client, f"/problems/{slug}", lang)
            assert parsed.root["lang"] == lang
            assert parsed.h1 == [problem_title(slug, lang)], (slug, lang, parsed.h1)
            assert f"/problems?lang={lang}" in parsed.links
    # The list of them all, each under its slug.
    for lang in LANGUAGES:
        listed = await page(client, "/problems", lang)
        assert slugs <= listed.ids, sorted(slugs - listed.ids)


async def test_an_unknown_problem_type_is_a_translated_404(client: TestClient[Any, Any]) -> None:
    for slug, lang in (("no-such-type", "he"), ("Illegal-Move", "ro"), ("x" * 300, "en")):
        response = await client.get(f"/problems/{slug}", headers={"Accept-Language": lang})
        body = await problem(response, 404)
        assert response.headers["Content-Language"] == lang
        assert body["title"] == problem_title("not-found", lang)


def english(text: str) -> bool:
    """Whether `text` is worded in English (Romanian is told by its letters and words,
    Hebrew by its script)."""
    return not re.search(r"[\u0590-\u05ff]|[ăâîșțĂÂÎȘȚ]|\b(nu|este|pe|de|un|o)\b", text)


async def answers(client: TestClient[Any, Any], lang: str) -> list[tuple[Any, dict[str, Any]]]:
    """A problem of each kind the server answers with, asked for in `lang`."""
    headers = {"Accept-Language": lang}
    player = await new_player(client, f"problems-{lang}")
    auth = {**player.auth, **headers}
    created = await client.post("/api/v1/games", json={}, headers=auth)
    game = (await created.json())["id"]
    race = await (await client.post("/api/v1/races", json={}, headers=auth)).json()
    moves = f"/api/v1/games/{game}/moves"
    undo = {"action": "undo"}
    requests: list[tuple[str, str, dict[str, Any], int]] = [
        ("GET", f"/api/v1/games/{UNKNOWN_GAME}", {"headers": headers}, 404),
        ("GET", "/api/v1/no-such-thing", {"headers": headers}, 404),
        ("DELETE", "/api/v1/leaderboards", {"headers": headers}, 405),
        ("POST", "/api/v1/games", {"data": b"{nope", "headers": auth}, 400),
        ("POST", "/api/v1/games", {"json": {"rule": "fast"}, "headers": auth}, 422),
        ("POST", "/api/v1/games", {"json": {"code": "RU1-C-AAAA"}, "headers": auth}, 422),
        ("POST", moves, {"json": {"card": "7H"}, "headers": auth}, 422),
        ("POST", moves, {"json": undo, "headers": auth}, 422),
        ("POST", moves, {"json": undo, "headers": headers}, 401),
        ("POST", moves, {"json": {**undo, "expected_version": 7}, "headers": auth}, 409),
        ("POST", f"/api/v1/races/{race['id']}/join", {"headers": auth}, 409),
        ("POST", "/api/v1/players", {"json": {"name": player.name}, "headers": headers}, 409),
        ("GET", "/api/v1/live", {"headers": headers}, 400),
    ]
    found = []
    for method, path, options, status in requests:
        response = await client.request(method, path, **options)
        found.append((response, await problem(response, status)))
    return found


async def test_every_problem_is_in_the_language_asked_for(client: TestClient[Any, Any]) -> None:
    english_details = []
    for lang in LANGUAGES:
        for response, body in await answers(client, lang):
            where = (lang, str(response.url), body)
            assert response.headers["Content-Language"] == lang, where
            slug = body["type"].removeprefix("/problems/")
            assert body["title"] == problem_title(slug, lang), where
            if lang == "en":
                english_details.append(body["detail"])
            else:
                assert not english(body["detail"]), where
                for error in body.get("errors", []):
                    assert not english(error["message"]), where
    assert all(english(detail) for detail in english_details), english_details


async def test_the_rate_budget_refuses_in_the_language_asked_for(
    aiohttp_client: ClientFactory, database_url: str
) -> None:
    settings = Settings(database_url=database_url, rate_limit=1, migrate=False)
    client = await aiohttp_client(create_app(settings))
    seen: dict[int, str] = {}
    for _ in range(20):
        response = await client.get("/api/v1/leaderboards", headers={"Accept-Language": "he"})
        if response.status == 429:
            body = await problem(response, 429)
            assert response.headers["Content-Language"] == "he"
            assert body["title"] == problem_title("too-many-requests", "he")
            assert not english(body["detail"]), body
            seen[429] = body["detail"]
            break
    assert 429 in seen


async def test_websocket_errors_are_in_the_language_of_the_handshake(
    client: TestClient[Any, Any],
) -> None:
    ws = await client.ws_connect(
        "/api/v1/live", headers={"Accept-Language": "ro"}, protocols=(SUBPROTOCOL,)
    )
    live = Live(ws)
    try:
        malformed = await live.error("{nope", 400)
        assert malformed["title"] == "JSON greșit" and not english(malformed["detail"])
        unknown = await live.error({"type": "watch", "id": 1, "game_id": UNKNOWN_GAME}, 404, 1)
        assert unknown["title"] == "Negăsit"
        assert unknown["detail"] == f"Nu există jocul '{UNKNOWN_GAME}'."
        act = {"type": "act", "id": 2, "game_id": UNKNOWN_GAME, "action": {"action": "undo"}}
        unauthorized = await live.error(act, 401, 2)
        assert unauthorized["title"] == "Neautorizat" and not english(unauthorized["detail"])
    finally:
        await ws.close()


@pytest.mark.parametrize("english_text", sorted(CATALOGUE))
def test_each_text_of_the_catalogue_is_translated_alike(english_text: str) -> None:
    """Every entry has Romanian and Hebrew, with the same parts to fill in."""
    names = sorted(name for name, _ in PLACEHOLDER.findall(english_text))
    for lang in ("ro", "he"):
        text = CATALOGUE[english_text][lang]
        assert sorted(name for name, _ in PLACEHOLDER.findall(text)) == names, lang
        assert not any(star for _, star in PLACEHOLDER.findall(text)), lang


def test_templates_fill_their_parts_and_translate_the_phrases() -> None:
    assert translate("There is no game 'x'.", "he") == "אין משחק 'x'."
    assert translate("There is no race 'r 1'.", "ro") == "Nu există cursa 'r 1'."
    assert (
        translate("invalid card '7Z': a card is text such as 'TH' or '7S'", "ro")
        == "carte nevalid(ă) '7Z': o carte este un text precum 'TH' sau '7S'"
    )
    assert translate("Something the catalogue never heard of.", "ro") is None
    assert translate("Something the catalogue never heard of.", "en") is not None
    # A part is copied as it is, braces and all.
    assert translate("There is no player '{n}'.", "ro") == "Nu există jucătorul '{n}'."


async def test_problem_pages_are_plain_html(client: TestClient[Any, Any]) -> None:
    """No Markdown source shows through and no raw HTML of the texts is passed on."""
    response = await client.get("/problems/illegal-move?lang=he")
    text = await response.text()
    parsed = Page(text)
    assert parsed.root == {"lang": "he", "dir": "rtl"}
    assert "**" not in text and "{#" not in text
    assert "default-src 'none'" in response.headers["Content-Security-Policy"]
