"""The engine is pure: standard library only, and nothing from the rest of the server."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import server.engine

ENGINE = Path(server.engine.__file__).resolve().parent
MODULES = sorted(ENGINE.glob("*.py"))
EXPECTED = {
    "__init__.py",
    "cards.py",
    "codes.py",
    "errors.py",
    "game.py",
    "messages.py",
    "moves.py",
    "replay.py",
    "snapshot.py",
}
# Modules that do I/O or talk to the outside world have no place in the rules engine.
FORBIDDEN = {
    "asyncio",
    "http",
    "io",
    "logging",
    "os",
    "pathlib",
    "shutil",
    "socket",
    "sqlite3",
    "subprocess",
    "urllib",
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every (level, module) the file imports, at any depth (functions included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((0, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or ""))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name | ast.Attribute)
            and getattr(node.func, "id", getattr(node.func, "attr", "")) == "__import__"
        ):
            raise AssertionError(f"{path.name}: dynamic import")
    return found


def test_the_engine_modules_are_all_checked() -> None:
    assert {p.name for p in MODULES} >= EXPECTED
    nested = [p for p in ENGINE.rglob("*.py") if p.parent != ENGINE]
    assert nested == [], "sub-packages of the engine would escape this check"


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_standard_library_only(path: Path) -> None:
    for level, module in imported_modules(path):
        if level:
            continue  # relative: inside the engine package
        top = module.split(".")[0]
        if top == "server":
            assert module == "server.engine" or module.startswith("server.engine."), (
                f"{path.name} imports {module}: the engine must not use the rest of the server"
            )
            continue
        assert top == "__future__" or top in sys.stdlib_module_names, (
            f"{path.name} imports {module}, which is not in the standard library"
        )
        assert top not in FORBIDDEN, f"{path.name} imports {module}: the engine does no I/O"


def test_checker_catches_a_third_party_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import pydantic\nfrom server.store import db\n\ndef f():\n    import yaml\n")
    assert imported_modules(bad) == [(0, "pydantic"), (0, "server.store"), (0, "yaml")]
    assert "pydantic" not in sys.stdlib_module_names
