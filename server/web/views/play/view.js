// The game view: play one of this browser's player's games against the server.
//
// The server decides everything (SPEC 1.7): a drop sends the move, a click on a column's last
// card sends a tap, a double click a double tap, and the answer is drawn as it comes. The page
// never decides whether a move is legal and never moves a card on its own.
//
// This module is the view itself: setting up, opening a game, drawing it, and sending the
// player's actions one after another. Its parts are the modules beside it: its words
// (strings.js), pointer input (pointer.js), keyboard input (keys.js), its dialogs (dialogs.js)
// and the deal line (deal-line.js).
//
// The deal: a code the player gave is shown from the start; a deal the server chose is secret
// until the game ends (a daily deal's until its UTC day ends): the bar says so and shows its
// commitment on request, then the revealed code with the outcome of the check (lib/deal.js).
//
// The same view plays a race game inside the race view (views/race.js, SPEC 2.6.1): `race` is
// then the race's clock. The table is locked during the countdown and after the deadline (the
// server's clock decides, not the browser's), there is no New game and no Hint (a race has
// none), the clock runs from the race's start, and nothing is kept for the Play page.
import "./strings.js";
import { get, newKey, post } from "../../lib/api.js";
import { locate, renderBoard } from "../../lib/board.js";
import { moveText, short } from "../../lib/cards.js";
import { rememberDeal } from "../../lib/deal.js";
import { formatTime } from "../../lib/format.js";
import { t } from "../../lib/i18n.js";
import { refusalText } from "../../lib/races.js";
import { ensurePlayer, forget } from "../../lib/session.js";
import { el, problemText, toast } from "../../lib/ui.js";
import { DealLine } from "./deal-line.js";
import {
  closeDialogs, confirmGiveUp, confirmHint, newGameDialog, settingsDialog, wonDialog,
} from "./dialogs.js";
import { KeyboardInput } from "./keys.js";
import { PointerInput } from "./pointer.js";
import { SEEDS_ROTATED } from "./seeds-panel.js";

const CURRENT = "solitaire.game";
const DEFAULTS = {
  double_click: true, placement_help: true, interactive_rules: true, auto_placement: false,
};
const SETTINGS = Object.keys(DEFAULTS);

export async function mount(root, params) {
  const view = new PlayView(root, params.current);
  await view.start(params.id || null);
  return () => view.leave();
}

// `race`, for a race game: {locked(): no action may be sent now (the countdown, or the
// deadline passed), late(): the deadline passed (not even giving up is taken then),
// elapsed(): the race's time so far by the server's clock, ended(): the race is over (its
// games are revealed)}.
export class PlayView {
  constructor(root, current = () => true, race = null) {
    this.root = root;
    this.current = current; // false once another view has the page
    this.race = race;
    this.gone = false;
    this.game = null;
    this.me = null;
    this.settings = { ...DEFAULTS };
    this.queue = Promise.resolve();
    this.selected = null;
    this.targets = [];
    this.hint = null;
    this.receivedAt = performance.now();
    this.announcedWin = null;
    this.listeners = [];
    this.pointer = new PointerInput(this);
    this.keyboard = new KeyboardInput(this);
    this.dealLine = null; // built with the page
  }

  // Left: another view has the page (even while this one is still loading). Answers still on
  // their way change nothing any more.
  get left() {
    return this.gone || !this.current();
  }

  // --- set-up ------------------------------------------------------------------------------

  async start(id) {
    if (!this.race) document.title = `${t("play.title")} · ${t("brand")}`;
    this.build();
    this.me = await ensurePlayer();
    try {
      await this.loadSettings();
    } catch (error) {
      if (![401, 403, 404].includes(error.status)) throw error;
      forget(); // the server no longer knows this browser's player: sign up again
      this.me = await ensurePlayer();
      await this.loadSettings();
    }
    if (this.left) return;
    await this.open(id);
    if (this.left) return;
    const { pointer, keyboard } = this;
    this.listen(this.table, "pointerdown", (event) => pointer.pointerDown(event));
    this.listen(window, "pointermove", (event) => pointer.pointerMove(event));
    this.listen(window, "pointerup", (event) => pointer.pointerUp(event));
    this.listen(window, "pointercancel", () => pointer.cancelPress());
    this.listen(this.table, "keydown", (event) => keyboard.tableKey(event));
    this.listen(document, "keydown", (event) => keyboard.globalKey(event));
    this.listen(this.table, "contextmenu", (event) => event.preventDefault());
    this.listen(window, SEEDS_ROTATED, () => this.dealLine.seedsRotated());
    this.clock = setInterval(() => this.tick(), 1000);
  }

  leave() {
    this.gone = true;
    closeDialogs();
    clearInterval(this.clock);
    this.pointer.cancelTap();
    this.pointer.endDrag();
    for (const [target, type, handler] of this.listeners) target.removeEventListener(type, handler);
    this.listeners = [];
  }

  listen(target, type, handler) {
    target.addEventListener(type, handler);
    this.listeners.push([target, type, handler]);
  }

  build() {
    const figure = (key, id) => el("div", { class: "figure" },
      el("dt", { text: t(key) }), el("dd", { id, text: "—" }));
    // the deal line draws a check that ends later only while this view still shows that game
    this.dealLine = new DealLine((game) => !this.left && this.game && this.game.id === game.id);
    const racing = Boolean(this.race); // a race has no new game and no hint
    this.bar = el("div", { class: "game-bar" },
      el("dl", { class: "figures" },
        figure("play.time", "game-time"), figure("play.moves", "game-moves"),
        figure("play.score", "game-score")),
      el("div", { class: "controls" },
        racing ? null : el("button", { type: "button", id: "new-game", text: t("play.new"),
          "aria-keyshortcuts": "N", onclick: () => this.newGame() }),
        el("button", { type: "button", id: "undo", text: t("play.undo"),
          "aria-keyshortcuts": "U", onclick: () => this.undo() }),
        racing ? null : el("button", { type: "button", id: "hint", text: t("play.hint"),
          "aria-keyshortcuts": "H", onclick: () => this.askHint() }),
        el("button", { type: "button", id: "give-up", text: t("play.giveUp"),
          onclick: () => this.giveUp() }),
        el("button", { type: "button", id: "settings", text: t("play.settings"),
          onclick: () => this.openSettings() })),
      el("dl", { class: "deal-line" },
        el("dt", { text: t("play.code") }),
        el("dd", { id: "game-deal" }, ...this.dealLine.line)));
    this.message = el("p", { id: "message", class: "message", role: "status",
      "aria-live": "polite" });
    this.banner = el("div", { id: "banner", class: "banner", hidden: true });
    this.table = el("div", { id: "table", class: "table", role: "region", tabindex: "-1",
      "aria-label": t("play.table"), "aria-describedby": "keys-help" });
    // a race game may not be watched until the race ends: no spectator link
    this.watchLink = racing ? null
      : el("a", { id: "watch-link", class: "watch-link", text: t("play.watchLink") });
    this.root.replaceChildren(el("section", { class: racing ? "view-play race-play" : "view-play" },
      this.bar, this.dealLine.details, this.dealLine.seedLine, this.message, this.banner,
      this.table,
      el("p", { id: "keys-help", class: "keys-help",
        text: t(racing ? "play.keys.race" : "play.keys") }),
      racing ? null : el("p", { class: "footer-links" }, this.watchLink)));
  }

  async loadSettings() {
    const stored = await get(`/players/${this.me.id}/settings`);
    for (const name of SETTINGS) this.settings[name] = stored[name];
  }

  // Opens game `id` (or the one in play in this browser, or deals a new one).
  async open(id) {
    if (this.race) {
      this.show(await get(`/games/${id}`)); // the racer's own game: nothing else to fall back on
      return;
    }
    const wanted = id || localStorage.getItem(CURRENT);
    if (wanted) {
      try {
        const game = await get(`/games/${wanted}`);
        if (this.left) return;
        if (game.player.id !== this.me.id) {
          if (id) {
            toast(t("play.notYours"));
            location.hash = `#/watch/${id}`;
            return;
          }
        } else if (id || game.status === "active") {
          this.show(game);
          return;
        }
      } catch (error) {
        if (id) throw error;
      }
    }
    const game = await post("/games", { rule: "classic" });
    this.show(game);
  }

  // --- drawing -----------------------------------------------------------------------------

  show(game, move = null) {
    if (this.left) return;
    const changed = !this.game || this.game.id !== game.id;
    this.game = game;
    rememberDeal(game);
    this.receivedAt = performance.now();
    if (changed && !this.race) {
      localStorage.setItem(CURRENT, game.id);
      if (location.hash !== `#/play/${game.id}`) history.replaceState(null, "", `#/play/${game.id}`);
      this.selected = null;
    }
    this.hint = null;
    const picked = this.selected;
    if (picked && (game.status !== "active" || !locate(game, picked))) this.selected = null;
    this.targets = [];
    this.draw();
    if (this.selected) this.select(this.selected, { quiet: true }); // its places have changed
    if (move) this.say(t("play.moved", { move: moveText(move) }));
    if (game.status === "won" && this.announcedWin !== game.id) {
      this.announcedWin = game.id;
      if (move && !this.race) this.celebrate();
    }
  }

  // A race game takes no action during the countdown nor after the deadline.
  locked() {
    return Boolean(this.race && this.race.locked());
  }

  // The race view's word that the race has moved on (started, passed its deadline, ended).
  raceChanged({ ended = false } = {}) {
    if (this.left || !this.game) return;
    if (this.locked() && this.selected) this.selected = null;
    if (this.locked()) this.pointer.endDrag();
    if (ended) this.reload(); // the game is revealed now: its code, its replay
    else this.draw();
  }

  draw() {
    if (this.left) return;
    const game = this.game;
    const active = game.status === "active";
    const playable = active && !this.locked();
    renderBoard(this.table, game, {
      interactive: playable, targets: this.targets, selected: this.selected, hint: this.hint,
    });
    this.table.dataset.version = String(game.version);
    if (this.pointer.drag) this.pointer.markDrag();
    this.table.dataset.status = game.status;
    this.bar.querySelector("#game-moves").textContent = String(game.moves);
    this.bar.querySelector("#game-score").textContent = String(game.score);
    this.dealLine.draw(game);
    this.tick();
    for (const [id, off] of [
      ["#undo", !playable || game.undo_available === 0], ["#hint", !active],
      ["#give-up", !active || Boolean(this.race && this.race.late())],
    ]) {
      const button = this.bar.querySelector(id);
      if (!button) continue; // a race has no hint
      if (off && document.activeElement === button) this.table.focus();
      button.disabled = off;
    }
    this.table.dataset.locked = playable || !active ? "false" : "true";
    if (this.watchLink) this.watchLink.href = `#/watch/${game.id}`;
    this.banner.hidden = active;
    if (this.race) {
      if (!active) this.drawRaceBanner();
    } else if (game.status === "won") {
      this.banner.replaceChildren(
        el("span", { text: t("won.banner", { score: game.score, moves: game.moves,
          time: formatTime(game.elapsed_ms) }) }), " ",
        el("a", { href: `#/replay/${game.id}`, text: t("won.replayLink") }));
    } else if (game.status === "abandoned") {
      this.banner.replaceChildren(el("span", { text: t("abandoned.banner") }));
    }
  }

  // A race game's end: how it ended, and its replay once the race is over.
  drawRaceBanner() {
    const game = this.game;
    const ended = this.race.ended();
    let text = t("race.play.abandoned");
    if (game.status === "won") {
      text = t("race.play.won", { moves: game.moves, time: formatTime(game.elapsed_ms) });
    } else if (game.timed_out) {
      text = t("race.play.timedOut");
    }
    this.banner.replaceChildren(el("span", { text }), " ",
      ended ? el("a", { href: `#/replay/${game.id}`, id: "race-own-replay",
        text: t("won.replayLink") }) : el("span", { text: t("race.play.wait") }));
  }

  tick() {
    if (!this.game) return;
    let ms = this.game.elapsed_ms;
    if (this.race && this.game.status === "active") {
      ms = this.race.elapsed(); // a race game's clock runs from the race's start
    } else if (this.game.status === "active" && this.game.moves > 0) {
      ms += performance.now() - this.receivedAt;
    }
    this.bar.querySelector("#game-time").textContent = formatTime(ms);
  }

  say(text, kind = "info") {
    if (this.left) return;
    this.message.textContent = text;
    this.message.dataset.kind = kind;
  }

  // --- actions -----------------------------------------------------------------------------

  // Sends one action; actions go one after another, in the order the player made them.
  act(body) {
    // a click still waiting to see whether it is a double click was made first: it goes first
    if (this.pointer.pendingTap) this.pointer.flushTap();
    const game = this.game;
    if (!game || game.status !== "active" || this.locked()) return this.queue;
    const key = newKey();
    this.queue = this.queue.catch(() => {}).then(async () => {
      try {
        const answer = await post(`/games/${game.id}/moves`, body, { key });
        if (this.game && this.game.id === answer.game.id) this.show(answer.game, answer.move);
      } catch (error) {
        await this.refused(error, body.card);
      }
    });
    return this.queue;
  }

  async refused(error, card) {
    if (this.left) return;
    const problem = error.problem || {};
    if (error.status === 422 && problem.type === "/problems/illegal-move") {
      this.say(this.settings.interactive_rules ? problem.detail : t("play.refused"), "refusal");
      this.draw();
      if (card) {
        const node = this.table.querySelector(`[data-card="${card}"]`);
        if (node) node.classList.add("refused");
      }
      return;
    }
    // a race's refusal (race_not_started, race_over) in the page's language
    this.say(this.race ? refusalText(error) : problemText(error), "error");
    await this.reload();
  }

  async reload() {
    try {
      this.show(await get(`/games/${this.game.id}`));
    } catch {
      // the message already says what went wrong
    }
  }

  undo() {
    this.select(null);
    return this.act({ action: "undo" });
  }

  tap(card) {
    return this.act({ action: "tap", card });
  }

  doubleTap(card) {
    return this.act({ action: "double_tap", card });
  }

  move(card, to) {
    return this.act({ card, to });
  }

  async askHint() {
    if (!this.game || this.game.status !== "active" || this.race) return;
    const key = `solitaire.assisted.${this.game.id}`;
    if (!sessionStorage.getItem(key)) {
      const yes = await confirmHint();
      if (!yes || this.left) return;
      sessionStorage.setItem(key, "1");
    }
    if (this.left) return;
    this.say(t("play.hint.thinking"));
    this.pointer.flushTap();
    try {
      let answer = null;
      // the actions already made come first; the hint is for the position they lead to
      for (let tries = 0; tries < 3 && !answer; tries += 1) {
        await this.queue;
        const { id, version } = this.game;
        answer = await get(`/games/${id}/hint`);
        if (this.left || this.game.id !== id) return;
        if (this.game.version !== version) answer = null;
      }
      if (!answer) return;
      if (!this.game.assisted) {
        // the first hint made the game assisted: a change with its own version
        const fresh = await get(`/games/${this.game.id}`);
        if (this.left || this.game.id !== fresh.id) return;
        this.show(fresh);
      }
      if (answer.status === "winnable") {
        const [card, place] = answer.move.split("-");
        this.hint = { card, place };
        this.draw();
        this.say(t("play.hint.move", { move: moveText(answer.move), length: answer.line_length }));
      } else {
        this.say(t(`play.hint.${answer.status === "game_over" ? "over" : answer.status}`));
      }
    } catch (error) {
      this.say(problemText(error), "error");
    }
  }

  // Ends the game in play as abandoned (after the actions already made); a secret random deal
  // is then revealed.
  async giveUp() {
    const game = this.game;
    if (!game || game.status !== "active" || (this.race && this.race.late())) return;
    const yes = await confirmGiveUp(game);
    if (!yes || this.left || this.game.id !== game.id) return;
    this.pointer.flushTap();
    this.select(null);
    this.queue = this.queue.catch(() => {}).then(async () => {
      if (this.left || this.game.id !== game.id || this.game.status !== "active") return;
      try {
        const answer = await post(`/games/${game.id}/abandon`);
        if (this.game && this.game.id === answer.id) {
          this.show(answer);
          this.say(t("giveUp.done"));
        }
      } catch (error) {
        this.say(problemText(error), "error");
        await this.reload();
      }
    });
    await this.queue;
  }

  // --- placement help and keyboard selection ----------------------------------------------

  async fetchTargets(card) {
    if (!this.settings.placement_help) return [];
    try {
      const answer = await get(`/games/${this.game.id}/targets?card=${card}`);
      return answer.targets;
    } catch {
      return [];
    }
  }

  async select(card, { quiet = false } = {}) {
    this.selected = card;
    this.targets = [];
    this.draw();
    if (!card) return;
    if (!quiet) this.say(t("play.picked", { card: short(card) }));
    const targets = await this.fetchTargets(card);
    if (this.selected === card) {
      this.targets = targets;
      this.draw();
    }
  }

  // --- dialogs (dialogs.js) -------------------------------------------------------------------

  newGame() {
    newGameDialog(this);
  }

  openSettings() {
    settingsDialog(this);
  }

  async celebrate() {
    const game = this.game;
    const choice = await wonDialog(game);
    if (this.left) return;
    if (choice === "replay") location.hash = `#/replay/${game.id}`;
    else if (choice === "new") this.newGame();
  }
}
