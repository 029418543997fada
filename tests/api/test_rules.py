"""The rules served (SPEC 1, issue 20): `/rules` in English, Romanian and Hebrew from the
Markdown in the package, every rule id the server can refuse with defined under its anchor in
each language, each refusal's `rule_url` leading there, and the links to it from the web client
and from `openapi.yaml`."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp.test_utils import TestClient

from server.api.rules import FOLDER, anchors
from server.engine.messages import LANGUAGES, RULES
from tests.api.helpers import illegal, new_player, problem
from tests.api.test_live import illegal_same_suit

ROOT = Path(__file__).resolve().parent.parent.parent
SERVER = ROOT / "server"
CODE = "RU1-C-AAAAABB"
RULE_ID = r"[a-z]+(?:_[a-z]+)*"
RAISED = (
    re.compile(rf'IllegalMove\(\s*"({RULE_ID})"'),
    re.compile(rf'\brefused\(\s*(?:code,\s*)?"({RULE_ID})"'),
    re.compile(rf'\brule="({RULE_ID})"'),
    re.compile(rf'ReplayResult\(game, applied, index, "({RULE_ID})"'),
    re.compile(rf'None,\s*"({RULE_ID})",\s*f"'),
)
"""How the source names the rule of a refusal: the engine's, a race's, a replay's verdict."""


def refusal_rules() -> set[str]:
    """Every rule id the server can refuse with, read from its source."""
    found = set(RULES)
    game = (SERVER / "engine" / "game.py").read_text(encoding="utf-8")
    refusal = game.split("def refusal(", 1)[1].split("\n    def ", 1)[0]
    found.update(re.findall(rf'return "({RULE_ID})"', refusal))
    for path in SERVER.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        for pattern in RAISED:
            found.update(pattern.findall(source))
    return found


class Page(HTMLParser):
    """What a test reads of an HTML page: its root's attributes, ids, links and headings."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.root: dict[str, str | None] = {}
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.tags: set[str] = set()
        self.h1: list[str] = []
        self._in_h1 = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.tags.add(tag)
        if tag == "html":
            self.root = values
        if values.get("id"):
            self.ids.add(str(values["id"]))
        if tag == "a" and values.get("href"):
            self.links.append(str(values["href"]))
        if tag == "h1":
            self._in_h1 = True
            self.h1.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "h1":
            self._in_h1 = False

    def handle_data(self, data: str) -> None:
        if self._in_h1:
            self.h1[-1] += data


async def page(client: TestClient[Any, Any], path: str, lang: str | None = None) -> Page:
    headers = {"Accept-Language": lang} if lang else {}
    response = await client.get(path, headers=headers)
    text = await response.text()
    assert response.status == 200, text
    assert response.content_type == "text/html", response.content_type
    assert "Accept-Language" in response.headers["Vary"]
    parsed = Page(text)
    assert parsed.root["lang"] == response.headers["Content-Language"]
    assert "{#" not in text, "a heading's id was left in its text"
    return parsed


def test_the_source_refuses_with_the_rules_of_the_spec() -> None:
    """The search of the source finds the rule ids written each way (so it is not empty)."""
    rules = refusal_rules()
    spec = {"same_suit", "rank", "empty_column_king", "group_too_large", "face_down"}
    spec |= {"not_last_card", "foundation_order", "same_column", "no_place", "nothing_to_undo"}
    assert spec | {"game_over"} <= rules
    assert {"race_full", "race_started", "race_over", "race_no_hints"} <= rules
    assert {"commitment_mismatch", "notation", "result_mismatch"} <= rules


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_refusal_rule_is_defined_under_its_anchor_in_every_language(lang: str) -> None:
    missing = {f"rule-{rule}" for rule in refusal_rules()} - anchors("rules", lang)
    assert not missing, (lang, sorted(missing))


@pytest.mark.parametrize("name", ["rules", "problems"])
def test_the_three_languages_have_the_same_sections(name: str) -> None:
    english = anchors(name, "en")
    for lang in LANGUAGES:
        assert anchors(name, lang) == english, lang
        assert (FOLDER / f"{name}.{lang}.md").is_file()


async def test_the_rules_page_in_each_language(client: TestClient[Any, Any]) -> None:
    expected = {"en": ("ltr", "the rules"), "ro": ("ltr", "regulile"), "he": ("rtl", "החוקים")}
    for lang, (direction, title) in expected.items():
        for by_header in (True, False):
            response = await client.get(
                "/rules" if by_header else f"/rules?lang={lang}",
                headers={"Accept-Language": lang if by_header else "en;q=0.1, de"},
            )
            text = await response.text()
            assert response.status == 200, text
            assert response.headers["Content-Language"] == lang
            parsed = Page(text)
            assert parsed.root == {"lang": lang, "dir": direction}
            assert title in parsed.h1[0]
            # Markdown rendered: the deal's table, the rule ids as anchors, links kept in lang.
            assert {"table", "code", "h2", "h3"} <= parsed.tags
            assert "rule-group_too_large" in parsed.ids and "notation" in parsed.ids
            assert f"/problems/illegal-move?lang={lang}" in parsed.links
            assert "#rule-group_too_large" in parsed.links  # within the page
            assert f"/problems?lang={lang}" in parsed.links
    # ?lang= wins over Accept-Language; an unknown one is ignored; a region counts.
    for query, header, lang in (("he", "ro", "he"), ("xx", "ro", "ro"), ("ro-RO", None, "ro")):
        parsed = await page(client, f"/rules?lang={query}", header)
        assert parsed.root["lang"] == lang, query
    assert (await page(client, "/rules")).root["lang"] == "en"
    assert (await page(client, "/rules", "fr, he;q=0.5")).root["lang"] == "he"


async def test_the_group_limit_is_defined(client: TestClient[Any, Any]) -> None:
    response = await client.get("/rules")
    text = await response.text()
    section = text.split('id="rule-group_too_large"', 1)[1].split("<h3", 1)[0]
    assert "20 cards" in section and "19 cards on top of it" in section


async def test_a_refused_move_links_to_its_rule(client: TestClient[Any, Any]) -> None:
    player = await new_player(client, "rules-reader")
    created = await client.post("/api/v1/games", json={"code": CODE}, headers=player.auth)
    game = await created.json()
    bad = illegal_same_suit(CODE)
    for lang in LANGUAGES:
        response = await client.post(
            f"/api/v1/games/{game['id']}/moves",
            json=bad,
            headers={**player.auth, "Accept-Language": lang},
        )
        body = await illegal(response, "same_suit")
        path, _, anchor = body["rule_url"].partition("#")
        assert (path, anchor) == ("/rules", "rule-same_suit")
        assert anchor in (await page(client, path, lang)).ids
    undo = await client.post(
        f"/api/v1/games/{game['id']}/moves", json={"action": "undo"}, headers=player.auth
    )
    assert (await illegal(undo, "nothing_to_undo"))["rule_url"] == "/rules#rule-nothing_to_undo"


async def test_a_race_refusal_links_to_its_rule(client: TestClient[Any, Any]) -> None:
    creator = await new_player(client, "race-maker")
    created = await client.post("/api/v1/races", json={}, headers=creator.auth)
    assert created.status == 201, await created.text()
    race = await created.json()
    again = await client.post(
        f"/api/v1/races/{race['id']}/join", headers={**creator.auth, "Accept-Language": "ro"}
    )
    body = await problem(again, 409)
    assert body["rule"] == "already_seated"
    assert body["rule_url"] == "/rules#rule-already_seated"
    assert body["title"] == "Refuzat de cursă" and again.headers["Content-Language"] == "ro"
    assert body["detail"] == "Aveți deja un loc în această cursă."
    assert "rule-already_seated" in (await page(client, "/rules", "ro")).ids


async def test_the_web_client_and_openapi_yaml_link_to_the_rules(
    client: TestClient[Any, Any],
) -> None:
    index = await (await client.get("/")).text()
    assert 'href="/rules"' in index
    app = await (await client.get("/web/app.js")).text()
    assert "/rules?lang=" in app
    document = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    description = document["info"]["description"]
    assert "[`/rules`](/rules)" in description and "/rules#rule-" in description


async def test_a_replay_verdict_links_to_its_rule(client: TestClient[Any, Any]) -> None:
    for actions, rule in (
        ([{"move": "undo"}], "nothing_to_undo"),
        ([{"move": "ZZ-t1"}], "notation"),
    ):
        response = await client.post(
            "/api/v1/replays/verify", json={"code": CODE, "actions": actions}
        )
        verdict = await response.json()
        assert response.status == 200 and verdict["valid"] is False, verdict
        assert (verdict["rule"], verdict["rule_url"]) == (rule, f"/rules#rule-{rule}")
        assert f"rule-{rule}" in (await page(client, "/rules")).ids
    valid = await client.post("/api/v1/replays/verify", json={"code": CODE, "actions": []})
    assert (await valid.json())["rule_url"] is None
