// The play view's deal line: the deal's code (copied on request), or until when it is hidden;
// for a secret deal the commitment on request, and once the deal is revealed the outcome of its
// check (lib/deal.js), run once per game.
import { checkDeal, checkText, codeText, secretDeal } from "../../lib/deal.js";
import { t } from "../../lib/i18n.js";
import { el, toast } from "../../lib/ui.js";

const CHECK_GLYPH = { verified: "✓", failed: "✗", error: "?" };

export class DealLine {
  // shows(game): whether the view still shows `game` (a check that ends later is drawn then).
  constructor(shows) {
    this.shows = shows;
    this.game = null; // the game drawn last
    this.checks = new Map(); // game id → the check of its revealed deal
    this.dealShown = null; // what the line shows, so that a redraw leaves it alone
    this.codeOut = el("span", { id: "game-code", class: "deal-code", text: "—" });
    this.checkOut = el("span", { id: "deal-check", class: "deal-check", role: "status" });
    this.copyButton = el("button", { type: "button", id: "deal-copy", class: "small",
      "aria-label": t("deal.copy.label"), title: t("deal.copy.label"), text: t("deal.copy"),
      hidden: true, onclick: () => this.copyCode() });
    this.commitmentButton = el("button", { type: "button", id: "deal-commitment-toggle",
      class: "small", "aria-expanded": "false", "aria-controls": "deal-details",
      text: t("deal.commitment"), hidden: true, onclick: () => this.toggleDetails() });
    this.detailsAbout = el("p", { class: "about" });
    this.commitmentOut = el("code", { id: "deal-commitment", class: "hex", dir: "ltr" });
    this.hashOut = el("code", { id: "deal-hash", class: "hex", dir: "ltr" });
    this.hashPair = el("div", { class: "pair", hidden: true },
      el("dt", { text: t("deal.hash") }), el("dd", {}, this.hashOut));
    this.verdictOut = el("p", { id: "deal-verdict", class: "verdict" });
    this.details = el("div", { id: "deal-details", class: "deal-details", hidden: true },
      this.detailsAbout,
      el("dl", {},
        el("div", { class: "pair" },
          el("dt", { text: t("deal.commitment.hex") }), el("dd", {}, this.commitmentOut)),
        this.hashPair),
      this.verdictOut);
    // the line's own nodes, for the game bar, and the commitment's details, below it
    this.line = [this.codeOut, this.checkOut, this.copyButton, this.commitmentButton];
  }

  // The deal line: the code, or until when it is hidden; the commitment on request; once a
  // secret deal is revealed, the outcome of its check.
  draw(game) {
    this.game = game;
    const hidden = game.code === null || game.code === undefined;
    const secret = secretDeal(game);
    const check = secret && !hidden && game.status !== "active" ? this.checkOf(game) : null;
    const shown = JSON.stringify([game.id, game.code, game.daily, secret, check && check.state]);
    if (shown === this.dealShown) return;
    this.dealShown = shown;
    this.codeOut.textContent = codeText(game);
    this.codeOut.dataset.hidden = hidden ? "true" : "false";
    this.codeOut.title = t(`rule.${game.rule}`);
    this.copyButton.hidden = hidden;
    this.commitmentButton.hidden = !secret;
    if (!secret) this.toggleDetails(false);
    this.detailsAbout.textContent =
      t(hidden ? "deal.commitment.about" : "deal.commitment.revealed");
    this.commitmentOut.textContent = (check && check.commitment) || game.deal_commitment || "";
    this.hashPair.hidden = !(check && check.hash);
    this.hashOut.textContent = check && check.hash ? check.hash : "";
    this.verdictOut.textContent = checkText(check);
    if (check) this.verdictOut.dataset.state = check.state;
    else delete this.verdictOut.dataset.state;
    if (!check) {
      delete this.checkOut.dataset.state;
      this.checkOut.removeAttribute("title");
      this.checkOut.replaceChildren();
      return;
    }
    this.checkOut.dataset.state = check.state;
    this.checkOut.title = checkText(check);
    const glyph = CHECK_GLYPH[check.state];
    this.checkOut.replaceChildren(
      glyph ? el("span", { class: "glyph", "aria-hidden": "true", text: glyph }) : "",
      el("span", { class: "short", text: t(`deal.check.${check.state}`) }),
      check.state === "checking" ? "" : el("span", { class: "visually-hidden",
        text: ` (${checkText(check)})` }));
  }

  // The check of a finished game's revealed deal: run once, then drawn when it is done.
  checkOf(game) {
    const known = this.checks.get(game.id);
    if (known && known.code === game.code) return known;
    const checking = { state: "checking", code: game.code };
    this.checks.set(game.id, checking);
    checkDeal(game).then((check) => {
      this.checks.set(game.id, { ...check, code: game.code });
      if (this.shows(game)) this.draw(this.game);
    });
    return checking;
  }

  toggleDetails(open = this.details.hidden) {
    this.details.hidden = !open;
    this.commitmentButton.setAttribute("aria-expanded", open ? "true" : "false");
  }

  async copyCode() {
    const code = this.game && this.game.code;
    if (!code) return; // a secret deal cannot be shared until it is revealed
    try {
      await navigator.clipboard.writeText(code);
      toast(t("deal.copied", { code }));
    } catch {
      // no clipboard here (plain http, or refused): the code is selected for the keyboard
      getSelection().selectAllChildren(this.codeOut);
      toast(t("deal.copy.failed"), "error");
    }
  }
}
