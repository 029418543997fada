"""The player's seeds in the page (SPEC 1.8.2; issue 22, item 5): the page's own checker
(`server/web/lib/seeds.js`: HMAC-SHA256 with WebCrypto, and without it, the RU2 code, its
SHA-256 commitment, the RU2 shuffle) reproduces every vector of `tests/data/seeds.json` and
`tests/data/deals_ru2.json` and refuses the client seeds to refuse; a game dealt from the
player's seed and played to its end says "Dealt from your seed: pending until you rotate your
seed", the Settings window's seeds panel shows the pair and the next pair's hash, keeps the pair
while its game is in play, rotates to a client seed of the player's, shows the seed revealed,
and the finished game then says "Dealt from your seed: ✓" (in Romanian too)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Page, expect

from server.engine import Rule
from server.engine.seeds import game_message, seeded_code
from tests.conftest import load_data
from tests.web.client import call
from tests.web.driver import Table, some_move
from tests.web.helpers import audit, shot

if TYPE_CHECKING:
    from tests.web.conftest import WebServer

CHECK_TIMEOUT_MS = 15_000

CHECK_VECTORS = """
async ({seeds, deals}) => {
  const s = await import("/web/lib/seeds.js");
  const vectors = [...seeds.games, ...seeds.races];
  const results = [];
  for (const vector of vectors) results.push(await s.checkVector(vector));
  const text = (i) => "A23456789TJQK"[i % 13] + "SHDC"[Math.floor(i / 13)];
  const decks = deals.deals.map((d) => ({
    deck: JSON.stringify(s.ru2Deck(BigInt(d.seed)).map(text)) === JSON.stringify(d.deck),
    code: s.ru2Code(d.code[4], BigInt(d.seed)) === d.code,
    seed: s.ru2Seed(d.code) === BigInt(d.seed),
  }));
  const fallback = [];
  for (const v of seeds.games.slice(0, 6)) {
    const key = Uint8Array.from(v.server_seed.match(/../g).map((h) => parseInt(h, 16)));
    const bytes = new TextEncoder().encode(v.message);
    const mine = s.hmacFallback(key, bytes);
    const theirs = await s.hmacSha256(key, bytes);
    fallback.push(mine.length === 32 && mine.every((b, i) => b === theirs[i]));
  }
  return {
    results,
    decks,
    fallback,
    refused: seeds.refused_client_seeds.map((c) => s.clientSeedProblem(c)),
    accepted: vectors.flatMap((v) => v.client_seeds || [v.client_seed])
      .map((c) => s.clientSeedProblem(c)),
    subtle: Boolean(globalThis.crypto && globalThis.crypto.subtle),
  };
}
"""


def test_the_page_s_checker_reproduces_every_vector(page: Page, web_server: WebServer) -> None:
    page.goto(web_server.url("/"))
    seeds = load_data("seeds.json")
    deals = load_data("deals_ru2.json")
    out: dict[str, Any] = page.evaluate(CHECK_VECTORS, {"seeds": seeds, "deals": deals})
    assert out["subtle"], "the test server is a secure context: WebCrypto is there"
    vectors = seeds["games"] + seeds["races"]
    assert len(out["results"]) == len(vectors) == 99
    for vector, result in zip(vectors, out["results"], strict=True):
        assert result["ok"], (vector, result)
        assert result["code"] == vector["code"]
        assert result["commitment"] == vector["deal_commitment"]
        assert result["n"] == vector["n"] and result["message"] == vector["message"]
    assert all(all(d.values()) for d in out["decks"]), out["decks"]
    assert len(out["decks"]) == len(deals["deals"])
    assert all(out["fallback"]), "the page's own HMAC differs from WebCrypto's"
    assert None not in out["refused"], out["refused"]
    assert set(out["accepted"]) == {None}


def test_a_game_played_to_its_end_is_dealt_from_your_seed_after_the_rotation(
    page: Page, web_server: WebServer
) -> None:
    table = Table(page, web_server.base).sign_up()
    game_id = table.game_id  # a newcomer's first game: random, dealt from their seed pair
    token = table.me["token"]
    seeds = call(web_server, "GET", "/me/seeds", token=token)
    game = call(web_server, "GET", f"/games/{game_id}", token=token)
    assert game["seed"]["server_seed_hash"] == seeds["server_seed_hash"]
    expect(page.locator("#seed-line")).to_be_hidden()

    # While it is in play, the panel shows the pair and will not rotate it.
    page.click("#settings")
    panel = page.locator("#settings-dialog #seeds")
    expect(panel).to_have_attribute("data-ready", "true")
    expect(panel.locator("#seeds-hash")).to_have_text(seeds["server_seed_hash"])
    expect(panel.locator("#seeds-client")).to_have_text(seeds["client_seed"])
    expect(panel.locator("#seeds-nonce")).to_have_text(str(seeds["nonce"]))
    expect(panel.locator("#seeds-next-hash")).to_have_text(seeds["next_server_seed_hash"])
    expect(panel.locator("#seeds-previous-none")).to_have_text("No pair has been revealed yet.")
    expect(panel.locator("#seeds-rotate")).to_be_disabled()
    expect(panel.locator("#seeds-in-play")).to_be_visible()
    audit(page, "settings, the seeds panel")
    page.keyboard.press("Escape")
    page.wait_for_selector("#settings-dialog", state="detached")

    move = some_move(page, table, game_id)
    if move is not None:
        table.play(move)
    table.give_up()
    line = page.locator("#seed-line")
    expect(line).to_have_attribute("data-state", "pending", timeout=CHECK_TIMEOUT_MS)
    expect(line).to_have_text("Dealt from your seed: pending until you rotate your seed")
    audit(page, "play, dealt from your seed: pending")

    # A client seed that is not one is refused in the page; then the rotation.
    page.click("#settings")
    expect(panel).to_have_attribute("data-ready", "true")
    expect(panel.locator("#seeds-rotate")).to_be_enabled()
    expect(panel.locator("#seeds-in-play")).to_be_hidden()
    panel.locator("#seeds-client-seed").fill("tab\there")
    panel.locator("#seeds-rotate").click()
    expect(panel.locator("#seeds-problem")).to_have_text(
        "A client seed has printable ASCII characters only (space to ~)."
    )
    expect(panel.locator("#seeds-client-seed")).to_have_attribute("aria-invalid", "true")
    panel.locator("#seeds-client-seed").fill("my lucky seed")
    panel.locator("#seeds-rotate").click()
    expect(panel.locator("#seeds-status")).to_have_text(
        "Seeds rotated: the previous server seed is revealed."
    )
    expect(panel.locator("#seeds-problem")).to_be_empty()
    expect(panel.locator("#seeds-hash")).to_have_text(seeds["next_server_seed_hash"])
    expect(panel.locator("#seeds-client")).to_have_text("my lucky seed")
    expect(panel.locator("#seeds-nonce")).to_have_text("0")
    revealed = panel.locator("#seeds-previous-seed").inner_text()
    assert hashlib.sha256(bytes.fromhex(revealed)).hexdigest() == seeds["server_seed_hash"]
    expect(panel.locator("#seeds-previous-hash")).to_have_text(seeds["server_seed_hash"])
    expect(panel.locator("#seeds-previous-check")).to_have_text("✓ matches its hash")
    expect(panel.locator("#seeds-previous-games")).to_have_text("1")
    shot(page, "seeds-rotated")
    audit(page, "settings, the seeds panel after a rotation")
    page.keyboard.press("Escape")
    page.wait_for_selector("#settings-dialog", state="detached")

    # The finished game, dealt from that seed: checked in the page.
    expect(line).to_have_attribute("data-state", "verified", timeout=CHECK_TIMEOUT_MS)
    expect(line).to_contain_text("Dealt from your seed: ✓")
    code = table.figure("code")
    rule = game["rule"]
    expected = seeded_code(
        bytes.fromhex(revealed), game_message(seeds["client_seed"], 0), Rule(rule)
    )
    assert code == str(expected)
    shot(page, "dealt-from-your-seed")
    audit(page, "play, dealt from your seed: verified")

    # In Romanian, and again after a reload (the check runs from the replay).
    table.language("ro")
    expect(line).to_have_attribute("data-state", "verified", timeout=CHECK_TIMEOUT_MS)
    expect(line).to_contain_text("Împărțit din sămânța ta: ✓")
    table.language("he")
    expect(line).to_contain_text("חולק מהזרע שלך: ✓", timeout=CHECK_TIMEOUT_MS)
    page.click("#settings")
    expect(panel).to_have_attribute("data-ready", "true")
    expect(panel.locator("#seeds-title")).to_have_text("הזרעים שלך")
    audit(page, "settings, the seeds panel, in Hebrew")


def test_a_chosen_deal_has_no_seed_line(page: Page, web_server: WebServer) -> None:
    table = Table(page, web_server.base).sign_up()
    table.give_up()  # the newcomer's random game
    table.deal("RU1-C-AAAAAFN")
    table.give_up()
    expect(page.locator("#deal-check")).to_be_empty()
    expect(page.locator("#seed-line")).to_be_hidden()
