"""The README's map of the house ("## Layout") cannot drift: every module and folder of
`server/` and every folder of `tests/` is on it, and everything on it exists.

The map is a tree in a code block: an entry is a name ending in `/` (a folder) or in a file
suffix, indented two spaces a level; text after the name (and lines indented past the names)
describe it. Folders of the web client are listed, its files may be.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "server"
ENTRY = re.compile(
    r"^(?P<indent>(?:  )*)(?P<name>[\w.-]+(?:/|\.py|\.js|\.css|\.html|\.svg))(?: |$)"
)
IGNORED = {"__pycache__", "artifacts"}
"""Folders of tests/ that are not the suite's: caches, and the browser tests' screenshots
(git ignores both)."""
DESCRIPTION_COLUMN = 16
"""Lines indented this far or further continue a description."""


def layout_block(readme: str) -> list[str]:
    section = readme.split("\n## Layout\n", 1)[1]
    block = section.split("```", 2)[1]
    return block.splitlines()[1:]


def listed_paths(lines: list[str]) -> set[str]:
    """The paths the map names, relative to the project's root (folders end in `/`)."""
    stack: list[str] = []
    paths: set[str] = set()
    for line in lines:
        if not line.strip() or len(line) - len(line.lstrip(" ")) >= DESCRIPTION_COLUMN:
            continue
        match = ENTRY.match(line)
        if match is None:
            continue
        depth = len(match["indent"]) // 2
        assert depth <= len(stack), f"entry deeper than its folder: {line!r}"
        del stack[depth:]
        path = "".join(stack) + match["name"]
        paths.add(path)
        if path.endswith("/"):
            stack.append(match["name"])
    return paths


def actual_paths() -> tuple[set[str], set[str]]:
    """(what must be on the map, what may be): the Python modules and folders of `server/`
    (the web client's folders among them) and the folders of `tests/` must be; the web
    client's files and the folders inside the test folders may be."""
    must: set[str] = set()
    may: set[str] = set()
    for path in SERVER.rglob("*"):
        rel = path.relative_to(ROOT)
        if "__pycache__" in rel.parts or "_bundled" in rel.parts:
            continue
        if path.is_dir():
            must.add(f"{rel.as_posix()}/")
        elif path.suffix == ".py" and path.name != "__init__.py":
            must.add(rel.as_posix())
        elif "web" in rel.parts:
            may.add(rel.as_posix())
    must.update({"server/", "tests/"})
    for path in (ROOT / "tests").rglob("*"):
        rel = path.relative_to(ROOT)
        if not path.is_dir() or any(p in IGNORED or p.startswith(".") for p in rel.parts):
            continue
        (must if len(rel.parts) == 2 else may).add(f"{rel.as_posix()}/")
    return must, may


def test_the_readme_map_lists_every_module_and_folder_and_nothing_else() -> None:
    listed = listed_paths(layout_block((ROOT / "README.md").read_text(encoding="utf-8")))
    must, may = actual_paths()
    ours = {p for p in listed if p.startswith(("server/", "tests/"))}
    assert sorted(must - ours) == [], "missing from the README's map"
    assert sorted(ours - must - may) == [], "on the README's map but not in the tree"


def test_the_map_reader_finds_nesting_and_skips_descriptions() -> None:
    lines = [
        "server/",
        "  app.py        wiring",
        "  engine/       the rules: see cards.py",
        "                continued, naming fake.py",
        "    cards.py    cards",
        "  api/",
        "    games.py",
        "tests/          mirrors server/",
    ]
    assert listed_paths(lines) == {
        "server/",
        "server/app.py",
        "server/engine/",
        "server/engine/cards.py",
        "server/api/",
        "server/api/games.py",
        "tests/",
    }
