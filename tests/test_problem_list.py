"""The problem types cannot drift apart: the README's list, `openapi.yaml`'s list (its
description's "Errors" paragraph), the pages the server explains them on
(`server/rules/problems.<lang>.md`, served at `/problems/<slug>`) and the types the server's
source can answer with are the same set.

The source is read, not run: every problem type is raised with a literal slug (`slug = "..."`,
`slug="..."`, or a status then the slug and its title: `problem_body(429, "too-many-requests",
"Too many requests", ...)`), so a new type written any of these ways is found here.

Every detail (and field message) that the source writes out, as a string, an f-string or a sum
of them, is in the catalogue of `server/api/texts.py` in Romanian and Hebrew: a new refusal
worded in English only fails here, not in front of a player.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
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


# ---------------------------------------------------------------- every detail translated

DETAIL_FIRST = {
    "Problem",
    "MalformedJson",
    "NotFound",
    "Unauthorized",
    "Forbidden",
    "InvalidInput",
    "VersionConflict",
    "Busy",
    "IdempotencyKeyReused",
    "RaceConflict",
    "WorkBusy",
    "OneAtATime",
}
"""The errors whose first argument is the problem's detail."""
DETAIL_SECOND = {"refused", "invalid", "Refusal"}
"""The calls whose second argument is a detail (or a field's message), when they take two (the
replays' `refused(code, rule, reason)` words a verdict, not a problem)."""
MESSAGES = {"ValueError"}
"""Validators' errors, which become a field's message: in the modules below only."""
VALIDATORS = ("api/schemas.py", "api/params.py", "services/names.py", "services/passwords.py")
SAMPLE = "'x1'"


def sample(node: Any, constants: dict[str, str] | None = None) -> str | None:
    """A text that `node` (a string, an f-string, a module's text constant, a sum of them) can
    be, with each varying part a sample value; None when it is not text written in the
    source."""
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and constants and node.id in constants:
        return constants[node.id]
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            part = sample(value) if isinstance(value, ast.Constant) else SAMPLE
            parts.append(part or SAMPLE)
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = sample(node.left, constants), sample(node.right, constants)
        if left is None and right is None:
            return None
        return (left or SAMPLE) + (right or SAMPLE)
    return None


def written_details() -> list[tuple[str, int, str]]:
    """(file, line, text) of every detail and field message that the source writes out."""
    import ast

    found = []
    for path in sorted(SERVER.rglob("*.py")):
        relative = path.relative_to(SERVER).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants: dict[str, str] = {}
        for statement in tree.body:
            target = value = None
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target, value = statement.targets[0], statement.value
            elif isinstance(statement, ast.AnnAssign):
                target, value = statement.target, statement.value
            if isinstance(target, ast.Name) and value is not None:
                text = sample(value, constants)
                if text is not None:
                    constants[target.id] = text
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            own = name == "__init__" and relative == "services/errors.py"  # a kind's own words
            if (name in DETAIL_FIRST or own) and node.args:
                argument = node.args[0]
            elif name in ("problem_body", "problem_response") and len(node.args) >= 4:
                argument = node.args[3]
            elif name in DETAIL_SECOND and len(node.args) == 2:
                argument = node.args[1]
            elif name in MESSAGES and relative in VALIDATORS and node.args:
                argument = node.args[0]
            elif name == "NotationError" and len(node.args) == 3:
                kind, reason = sample(node.args[0]), sample(node.args[2])
                if kind is not None and reason is not None:
                    found.append((relative, node.lineno, f"invalid {kind} {SAMPLE}: {reason}"))
                continue
            else:
                continue
            text = sample(argument, constants)
            if text is not None:
                found.append((relative, node.lineno, text))
    return found


@pytest.mark.parametrize("lang", ["ro", "he"])
def test_every_detail_the_source_writes_is_translated(lang: str) -> None:
    from server.api.texts import translate

    details = written_details()
    assert len(details) > 100, len(details)  # the search finds them
    missing = [(where, line, text) for where, line, text in details if not translate(text, lang)]
    assert not missing, "\n".join(f"{w}:{n}: {t}" for w, n, t in missing)
