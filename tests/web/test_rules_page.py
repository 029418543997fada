"""The rules in Chromium: the web client's navigation links to `/rules` in the client's own
language (whatever the browser's), the page reads right to left in Hebrew, a refusal's
`rule_url` lands on its rule, and the rules and problem pages pass the accessibility audit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page, expect

from tests.web.client import as_player, sign_up
from tests.web.helpers import audit

if TYPE_CHECKING:
    from tests.web.conftest import WebServer


def test_the_client_links_to_the_rules_in_its_language(page: Page, web_server: WebServer) -> None:
    as_player(page, sign_up(web_server, "Reader"))
    page.goto(web_server.url("/"))
    link = page.locator("header nav a#rules-link")
    expect(link).to_have_text("Rules")
    expect(link).to_have_attribute("href", "/rules?lang=en")
    page.select_option("#language", "ro")
    expect(link).to_have_text("Reguli")
    expect(link).to_have_attribute("href", "/rules?lang=ro")
    link.click()
    page.wait_for_url("**/rules?lang=ro")
    expect(page.locator("html")).to_have_attribute("lang", "ro")
    expect(page.locator("h1")).to_contain_text("Pasiența rusească")
    # Back to the game from the rules' own navigation.
    page.locator("header nav a[href='/']").click()
    page.wait_for_url(web_server.url("/"))


def test_a_rule_url_lands_on_its_rule(page: Page, web_server: WebServer) -> None:
    page.goto(web_server.url("/rules?lang=he#rule-group_too_large"))
    expect(page.locator("html")).to_have_attribute("dir", "rtl")
    rule = page.locator("#rule-group_too_large")
    expect(rule).to_be_in_viewport()
    expect(rule).to_contain_text("מגבלת הקבוצה")
    # The problem pages that a rule's text links to.
    page.goto(web_server.url("/rules?lang=en#refusals"))
    page.locator("#refusals ~ p a[href^='/problems/illegal-move']").first.click()
    page.wait_for_url("**/problems/illegal-move?lang=en")
    expect(page.locator("h1")).to_have_text("Illegal move")


@pytest.mark.parametrize("language", ["en", "ro", "he"])
def test_the_rules_and_problem_pages_pass_an_accessibility_audit(
    page: Page, web_server: WebServer, language: str
) -> None:
    for path in ("/rules", "/problems", "/problems/validation-error"):
        page.goto(web_server.url(f"{path}?lang={language}"))
        expect(page.locator("html")).to_have_attribute("lang", language)
        audit(page, f"{path} ({language})")
