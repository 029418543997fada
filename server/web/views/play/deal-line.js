// The play view's deal line: the deal's code (copied on request), or until when it is hidden;
// for a secret deal the commitment on request, and once the deal is revealed the outcome of its
// check (lib/deal.js), run once per game. Below it, once a game dealt from the player's seed
// pair (or a race's seeds) has ended, "Dealt from your seed": the page recomputes the code from
// the revealed server seed (lib/seeds.js), or says that the check waits for the rotation.
import { get } from "../../lib/api.js";
import { checkDeal, checkText, codeText, secretDeal, seenCommitment } from "../../lib/deal.js";
import { define, t } from "../../lib/i18n.js";
import { checkSeed } from "../../lib/seeds.js";
import { el, toast } from "../../lib/ui.js";

const CHECK_GLYPH = { verified: "✓", failed: "✗", error: "?" };

define({
  en: {
    "seed.line": "Dealt from your seed:",
    "seed.line.race": "Dealt from the racers' seeds:",
    "seed.checking": "checking…",
    "seed.verified": "verified: the revealed server seed matches the hash published before the client seed was chosen, and gives this game's code, commitment and cards.",
    "seed.pending.seed": "pending until you rotate your seed",
    "seed.pending.race": "pending until the race ends",
    "seed.pending.code": "pending until the deal is revealed",
    "seed.failed.seed": "not the server seed committed to",
    "seed.failed.code": "the seed does not deal this code",
    "seed.failed.commitment": "the code does not match its commitment",
    "seed.failed.cards": "the code does not deal these cards",
    "seed.error": "could not be checked",
  },
  ro: {
    "seed.line": "Împărțit din sămânța ta:",
    "seed.line.race": "Împărțit din semințele concurenților:",
    "seed.checking": "se verifică…",
    "seed.verified": "verificat: sămânța dezvăluită a serverului se potrivește cu hash-ul publicat înainte de alegerea seminței de client și dă codul, angajamentul și cărțile acestui joc.",
    "seed.pending.seed": "în așteptare până îți rotești sămânța",
    "seed.pending.race": "în așteptare până se termină cursa",
    "seed.pending.code": "în așteptare până este dezvăluită împărțirea",
    "seed.failed.seed": "nu este sămânța serverului la care s-a angajat",
    "seed.failed.code": "sămânța nu dă acest cod",
    "seed.failed.commitment": "codul nu se potrivește cu angajamentul său",
    "seed.failed.cards": "codul nu împarte aceste cărți",
    "seed.error": "nu a putut fi verificat",
  },
  he: {
    "seed.line": "חולק מהזרע שלך:",
    "seed.line.race": "חולק מזרעי המתחרים:",
    "seed.checking": "בודק…",
    "seed.verified": "אומת: זרע השרת שנחשף מתאים ל־hash שפורסם לפני שנבחר זרע הלקוח, ונותן את הקוד, ההתחייבות והקלפים של המשחק הזה.",
    "seed.pending.seed": "ממתין עד שתחליף את הזרע שלך",
    "seed.pending.race": "ממתין עד סוף המרוץ",
    "seed.pending.code": "ממתין עד שהחלוקה תיחשף",
    "seed.failed.seed": "אינו זרע השרת שהשרת התחייב אליו",
    "seed.failed.code": "הזרע אינו נותן את הקוד הזה",
    "seed.failed.commitment": "הקוד אינו מתאים להתחייבות שלו",
    "seed.failed.cards": "הקוד אינו מחלק את הקלפים האלה",
    "seed.error": "לא ניתן היה לבדוק",
  },
});

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
    // "Dealt from your seed", below the bar once a seeded game has ended
    this.seedLine = el("p", { id: "seed-line", class: "seed-line", role: "status",
      hidden: true });
    this.seedChecks = new Map(); // game id → {key, check} of its seed
    this.seedRound = 0; // one more with each rotation of the player's seeds
    this.seedShown = null;
  }

  // The player rotated their seeds: a finished game's seed may be revealed now.
  seedsRotated() {
    this.seedRound += 1;
    if (this.game) this.drawSeed(this.game);
  }

  // "Dealt from your seed" of a finished game dealt from a seed pair or a race's seeds: checked
  // in the page from its replay, again when its code is revealed and after each rotation.
  drawSeed(game) {
    if (game.status === "active" || !(game.seed || game.race_id)) {
      this.paintSeed(null);
      return;
    }
    const key = JSON.stringify([game.code, this.seedRound]);
    let entry = this.seedChecks.get(game.id);
    if (!entry || entry.key !== key) {
      entry = { key, check: { state: "checking", race: Boolean(game.race_id) } };
      this.seedChecks.set(game.id, entry);
      const done = entry;
      get(`/games/${encodeURIComponent(game.id)}/replay`)
        .then((replay) => checkSeed(replay, seenCommitment(game.id)))
        .catch(() => ({ state: "error", race: Boolean(game.race_id) }))
        .then((check) => {
          done.check = check;
          if (this.seedChecks.get(game.id) === done && this.shows(game)
            && this.game && this.game.id === game.id) this.paintSeed(check);
        });
    }
    this.paintSeed(entry.check);
  }

  paintSeed(check) {
    const shown = JSON.stringify(check);
    if (shown === this.seedShown) return;
    this.seedShown = shown;
    const line = this.seedLine;
    if (!check) {
      line.hidden = true;
      delete line.dataset.state;
      line.replaceChildren();
      return;
    }
    line.hidden = false;
    line.dataset.state = check.state;
    if (check.reason) line.dataset.reason = check.reason;
    else delete line.dataset.reason;
    const label = el("span", { class: "label", text: t(check.race ? "seed.line.race" : "seed.line") });
    let rest;
    if (check.state === "verified") {
      rest = [el("span", { class: "glyph", "aria-hidden": "true", text: "✓" }),
        el("span", { class: "visually-hidden", text: t("seed.verified") })];
      line.title = t("seed.verified");
    } else if (check.state === "failed") {
      const why = t(`seed.failed.${check.reason}`);
      rest = [el("span", { class: "glyph", "aria-hidden": "true", text: "✗" }), ` (${why})`];
      line.title = why;
    } else {
      const reason = check.state === "pending" && check.reason === "seed" && check.race
        ? "race" : check.reason;
      const text = check.state === "pending" ? t(`seed.pending.${reason}`)
        : t(check.state === "checking" ? "seed.checking" : "seed.error");
      rest = [el("span", { class: "wait", text })];
      line.title = text;
    }
    line.replaceChildren(label, " ", ...rest);
  }

  // The deal line: the code, or until when it is hidden; the commitment on request; once a
  // secret deal is revealed, the outcome of its check.
  draw(game) {
    this.game = game;
    this.drawSeed(game);
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
