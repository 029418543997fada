"""The web client's page loads in a real browser, from the server alone."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tests.web.helpers import shot

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.web.conftest import WebServer


def test_the_page_loads_and_unknown_files_are_404(page: Page, web_server: WebServer) -> None:
    response = page.goto(web_server.url("/"))
    assert response is not None and response.status == 200
    # The document as served; the page may then name its view in front ("Play · …").
    assert re.search(r"<title>\s*Russian Solitaire\s*</title>", response.text())
    assert page.title().endswith("Russian Solitaire")
    assert page.locator("main#view").count() == 1
    missing = page.request.get(web_server.url("/web/does-not-exist.js"))
    assert missing.status == 404
    shot(page, "first-load")
