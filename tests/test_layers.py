"""The layers of the server, held by a test (beside the engine's purity test in
`tests/engine/test_purity.py`).

Data flows one way: `api` (HTTP and WebSocket) → `services` (the use-cases) → `store` (the
tables), with `live` handing committed changes to watchers as values. So:

- `engine` imports nothing of the project (and only the standard library: the purity test);
- `store` never imports `services`, `live`, `api` or `tools`;
- `services` never imports `api` or `tools`; `live` never imports `api` or `tools`;
- only `api` renders JSON: nothing else imports aiohttp's web layer (responses, requests)
  except the wiring (`app.py`, `keys.py`, `serve.py`);
- nothing imports the wiring (`app`, `serve`) but the wiring and `tools`;
- `verify` (the offline verifier) imports only the engine of the project.

Imports are read from the source (at any depth: a function's import counts), so a lazy import
cannot hide a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import server

SERVER = Path(server.__file__).resolve().parent
LAYERS = ("engine", "services", "live", "store", "api", "tools")
WIRING = {"app", "keys", "serve", "__main__"}

FORBIDDEN: dict[str, set[str]] = {
    "engine": {
        "services",
        "live",
        "store",
        "api",
        "tools",
        "app",
        "keys",
        "serve",
        "settings",
        "files",
        "metrics",
    },
    "store": {"services", "live", "api", "tools", "app", "keys", "serve"},
    "services": {"api", "tools", "app", "keys", "serve"},
    "live": {"api", "tools", "app", "keys", "serve"},
    "api": {"tools", "app", "serve"},
    "verify": {
        "services",
        "live",
        "store",
        "api",
        "tools",
        "app",
        "keys",
        "serve",
        "settings",
        "files",
        "metrics",
    },
}
"""For each layer, the parts of `server` (a layer or a top-level module) it must not import."""

WEB_LAYER = ("aiohttp.web", "aiohttp.web_request", "aiohttp.web_response")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, root: Path) -> set[str]:
    """Every module the file imports, at any depth, as absolute names."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            # `from package import name`: the name may be a module (`from aiohttp import web`,
            # `from server import metrics`); counting it as one is never wrong here.
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def part_of(module: str) -> str | None:
    """The layer or top-level module of `server` that `module` belongs to (None: not ours)."""
    parts = module.split(".")
    if parts[0] != "server" or len(parts) < 2:
        return None
    return parts[1]


def violations(root: Path) -> list[str]:
    """Every forbidden import under `root` (a copy of the `server` package), as text: one line
    per module and forbidden part it imports."""
    found: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        here = module_name(path, root)
        layer = part_of(here)
        for module in imports_of(path, root):
            target = part_of(module)
            if layer is not None and target in FORBIDDEN.get(layer, set()):
                found.add(f"{here} imports server.{target}: {layer} must not import {target}")
            elif target in {"app", "serve"} and layer not in WIRING | {"tools"}:
                found.add(f"{here} imports server.{target}: only the wiring imports it")
            if layer not in WIRING | {"api"} and module in WEB_LAYER:
                found.add(f"{here} imports {module}: only api renders HTTP answers")
    return sorted(found)


def test_every_module_of_the_server_is_in_a_layer_or_is_a_known_top_level_module() -> None:
    top = {p.stem for p in SERVER.glob("*.py")}
    assert top == WIRING | {"__init__", "settings", "files", "metrics", "verify"}, top
    folders = {p.name for p in SERVER.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(LAYERS), folders


def test_the_layers_hold() -> None:
    assert violations(SERVER) == []


@pytest.mark.parametrize(
    ("where", "source", "expected"),
    [
        ("store/x.py", "from server.services.games import GameService\n", "store must not"),
        ("store/x.py", "def f():\n    from server import live\n", "store must not import live"),
        ("services/x.py", "from server.api import render\n", "services must not import api"),
        ("services/x.py", "from ..api.render import game_json\n", "services must not import api"),
        ("live/x.py", "import server.api.render\n", "live must not import api"),
        ("engine/x.py", "from server.store.records import GameRecord\n", "engine must not"),
        ("services/x.py", "from aiohttp import web\n", "only api renders"),
        ("live/x.py", "from server.serve import main\n", "live must not import serve"),
        ("metrics.py", "from server.app import create_app\n", "only the wiring"),
    ],
)
def test_the_checker_finds_a_forbidden_import(
    tmp_path: Path, where: str, source: str, expected: str
) -> None:
    root = tmp_path / "server"
    for folder in LAYERS:
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text("")
        (root / folder / "render.py").write_text("")
        (root / folder / "games.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "app.py").write_text("")
    (root / where).write_text(source)
    found = violations(root)
    assert len(found) == 1 and expected in found[0], found
