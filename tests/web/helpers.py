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
