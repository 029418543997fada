"""The problem types cannot drift apart: the README's list, `openapi.yaml`'s list (its
description's "Errors" paragraph), the pages the server explains them on
(`server/rules/problems.<lang>.md`, served at `/problems/<slug>`) and the types the server's
source can answer with are the same set.

The source is read, not run: every problem type is raised with a literal slug (`slug = "..."`,
`slug="..."`, or a status then the slug and its title: `problem_body(429, "too-many-requests",
"Too many requests", ...)`), so a new type written any of these ways is found here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from server.api.rules import problem_slugs, problem_title
from server.engine.messages import LANGUAGES

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "server"
SLUG = r"[a-z]+(?:-[a-z]+)*"
RAISED = (
    re.compile(rf'\bslug\s*=\s*"({SLUG})"'),
    re.compile(rf'\b[45]\d\d(?:,|:\s*\()\s*"({SLUG})",\s*"[A-Z]'),
    re.compile(rf'\(\s*"({SLUG})",\s*"[A-Z][^"]*",\s*exc\.'),
)
"""How the source names the type of a problem it answers with."""


def readme_slugs() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    item = text.split("- **Problem types**", 1)[1].split("\n- ", 1)[0]
    listed = item.split("):", 1)[1].split(".\n", 1)[0]
    return re.findall(rf"`({SLUG})`", listed)


def openapi_document() -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def openapi_slugs() -> list[str]:
    document = openapi_document()
    paragraph = document["info"]["description"].split("**Errors.**", 1)[1].split("\n\n", 1)[0]
    listed = paragraph.split("the slugs are", 1)[1].split("The `title`", 1)[0]
    # The paragraph also names members of the problem document (`scope`, `rule`): not types.
    members = set(document["components"]["schemas"]["Problem"]["properties"])
    return [word for word in re.findall(rf"`({SLUG})`", listed) if word not in members]


def raised_slugs() -> set[str]:
    found: set[str] = set()
    for path in SERVER.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        for pattern in RAISED:
            found.update(pattern.findall(source))
    return found


def test_the_readme_lists_the_problem_types_of_openapi_yaml() -> None:
    readme, document = readme_slugs(), openapi_slugs()
    assert len(readme) == len(set(readme)), readme
    assert len(document) == len(set(document)), document
    assert set(readme) == set(document), {
        "in the README only": sorted(set(readme) - set(document)),
        "in openapi.yaml only": sorted(set(document) - set(readme)),
    }


def test_every_listed_type_has_its_page_and_every_page_is_listed() -> None:
    assert set(problem_slugs()) == set(openapi_slugs()), {
        "pages not listed": sorted(set(problem_slugs()) - set(openapi_slugs())),
        "listed without a page": sorted(set(openapi_slugs()) - set(problem_slugs())),
    }


def test_every_type_the_server_answers_with_is_listed() -> None:
    raised = raised_slugs()
    # The search finds the types written each way (so that it cannot silently find nothing).
    assert {"illegal-move", "too-many-requests", "not-ready", "http-error", "bad-body"} <= raised
    assert {"websocket-required", "not-found", "race-conflict", "internal-error"} <= raised
    assert raised <= set(openapi_slugs()), sorted(raised - set(openapi_slugs()))


def test_every_type_has_a_title_in_every_language() -> None:
    for slug in problem_slugs():
        titles = {lang: problem_title(slug, lang) for lang in LANGUAGES}
        assert all(titles.values()), (slug, titles)
        assert len(set(titles.values())) == len(LANGUAGES) or slug == "conflict", titles
