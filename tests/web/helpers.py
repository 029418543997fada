"""Helpers for the browser tests of the web client."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tests.process import ROOT

if TYPE_CHECKING:
    from playwright.sync_api import Page

# Ignored by git (.gitignore): screenshots to look at, never compared.
ARTIFACTS = ROOT / "tests" / "artifacts"


def shot(page: Page, name: str) -> Path:
    """Saves a full-page screenshot of `page` to tests/artifacts/<name>.png and returns its path."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"not a plain file name: {name!r}")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


# axe-core's rules of WCAG 2.1, levels A and AA.
RULES = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}


def audit(page: Page, screen: str) -> None:
    """Runs axe-core (the copy inside the axe-playwright-python package) on the page as it is,
    and fails on any violation of impact "serious" or "critical"."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options=RULES)
    violations = [
        f"{rule['id']} ({rule['impact']}): {rule['help']} at "
        + ", ".join(str(node["target"]) for node in rule["nodes"][:5])
        for rule in results.response["violations"]
        if rule["impact"] in ("serious", "critical")
    ]
    assert not violations, f"{screen}:\n  " + "\n  ".join(violations)
