// The game view: play one of this browser's player's games against the server.
//
// The server decides everything (SPEC 1.7): a drop sends the move, a click on a column's last
// card sends a tap, a double click a double tap, and the answer is drawn as it comes. The page
// never decides whether a move is legal and never moves a card on its own.
//
// Pointer: drag a face-up card (with every card on top of it) or a foundation's top card and
// drop it on a column or a foundation. Keyboard: Enter or Space picks up the focused card, then
// Enter on a column (any of its cards or its empty place) or a foundation puts it there; Escape
// puts it back; F sends the focused card to its foundation (tap), D places it as a double tap;
// arrows move between cards; U (or Ctrl+Z) undoes, H asks for a hint, N opens New game.
//
// The deal: a code the player gave is shown from the start; a deal the server chose is secret
// until the game ends (a daily deal's until its UTC day ends): the bar says so and shows its
// commitment on request, then the revealed code with the outcome of the check (deal.js).
//
// The same view plays a race game inside the race view (race.js, SPEC 2.6.1): `race` is then
// the race's clock. The table is locked during the countdown and after the deadline (the
// server's clock decides, not the browser's), there is no New game and no Hint (a race has
// none), the clock runs from the race's start, and nothing is kept for the Play page.
import { get, newKey, patch, post } from "../../lib/api.js";
import { locate, renderBoard, cardElement } from "../../lib/board.js";
import { formatTime, moveText, short } from "../../lib/cards.js";
import {
  CODE_MAX_LENGTH, checkDeal, checkText, codeText, rememberDeal, secretDeal,
} from "../../lib/deal.js";
import { define, t } from "../../lib/i18n.js";
import { refusalText } from "../../lib/races.js";
import { ensurePlayer, forget } from "../../lib/session.js";
import { dialog, el, fieldProblemText, problemText, toast } from "../../lib/ui.js";

const CURRENT = "solitaire.game";
const DEFAULTS = {
  double_click: true, placement_help: true, interactive_rules: true, auto_placement: false,
};
const SETTINGS = Object.keys(DEFAULTS);
const DOUBLE_CLICK_MS = 350;
const DRAG_THRESHOLD = 6;
const DIALOGS = "#new-game-dialog, #settings-dialog, #won-dialog, #hint-confirm, #give-up-confirm";
const CHECK_GLYPH = { verified: "✓", failed: "✗", error: "?" };

define({
  en: {
    "play.title": "Play",
    "play.time": "Time", "play.moves": "Moves", "play.score": "Score", "play.code": "Deal",
    "play.new": "New game", "play.undo": "Undo", "play.hint": "Hint", "play.settings": "Settings",
    "play.giveUp": "Give up",
    "play.watchLink": "Spectator link",
    "play.table": "Card table",
    "play.keys": "Keys: Enter picks up a card and puts it down, Escape puts it back, F sends a card to its foundation, D places it, arrows move between cards, U undoes, H gives a hint, N deals a new game.",
    "play.keys.race": "Keys: Enter picks up a card and puts it down, Escape puts it back, F sends a card to its foundation, D places it, arrows move between cards, U undoes.",
    "play.refused": "That move is not allowed.",
    "play.picked": "{card} picked up: choose a column or the foundation (Escape puts it back).",
    "play.putBack": "{card} put back.",
    "play.moved": "{move}",
    "play.notYours": "This game belongs to someone else: watching it instead.",
    "play.hint.confirm": "A hint makes this game assisted: it will be ranked only with other assisted games. Ask anyway?",
    "play.hint.ask": "Ask for a hint",
    "play.hint.move": "Hint: {move} (a winning line of {length} moves).",
    "play.hint.unwinnable": "No winning line from here: undo some moves or deal a new game.",
    "play.hint.unknown": "The solver could not decide in time. Try again after a move.",
    "play.hint.over": "The game is over.",
    "play.hint.thinking": "Looking for a winning line…",
    "giveUp.title": "Give up this game?",
    "giveUp.text": "It will count as abandoned, and its deal will be revealed.",
    "giveUp.text.daily": "It will count as abandoned. Its deal is revealed when the day ends (UTC).",
    "giveUp.text.chosen": "It will count as abandoned.",
    "giveUp.text.race": "You leave the race: your game ends as abandoned, and it is placed by the cards on its foundations. The deal is revealed when the race ends.",
    "race.play.won": "You cleared the deal: {moves} moves, {time}.",
    "race.play.abandoned": "You gave up.",
    "race.play.timedOut": "Time is up.",
    "race.play.wait": "The other racers are still playing.",
    "giveUp.done": "Game abandoned.",
    "new.title": "New game",
    "new.rule": "Rule",
    "new.classic": "Classic (same suit)",
    "new.relaxed": "Relaxed (mixed suits)",
    "new.code": "Deal code (optional)",
    "new.code.help": "An RU1 or RU2 code, e.g. RU1-C-AAAAABB. Without one the server deals a secret deal.",
    "new.winnable": "Winnable deals only",
    "new.deal": "Deal",
    "new.daily": "Today's deal",
    "new.abandons": "The game in progress will count as abandoned.",
    "settings.title": "Settings",
    "settings.double_click": "Double click",
    "settings.double_click.help": "A double click (double tap) places a card where the server finds room.",
    "settings.placement_help": "Placement help",
    "settings.placement_help.help": "Shows where a card can go while you drag it.",
    "settings.interactive_rules": "Interactive rules",
    "settings.interactive_rules.help": "Explains which rule a refused move breaks.",
    "settings.auto_placement": "Auto placement",
    "settings.auto_placement.help": "Releasing a card anywhere else places it automatically.",
    "won.title": "You won!",
    "won.text": "Score {score}, {moves} moves, time {time}.",
    "won.deal": "Deal:",
    "won.replay": "Watch the replay",
    "won.new": "New game",
    "won.banner": "Won: {score} points in {moves} moves, {time}.",
    "won.replayLink": "Replay",
    "abandoned.banner": "This game was abandoned.",
  },
  ro: {
    "play.title": "Joacă",
    "play.time": "Timp", "play.moves": "Mutări", "play.score": "Scor", "play.code": "Împărțire",
    "play.new": "Joc nou", "play.undo": "Anulează", "play.hint": "Indiciu", "play.settings": "Setări",
    "play.giveUp": "Abandonează",
    "play.watchLink": "Legătură pentru spectatori",
    "play.table": "Masa de joc",
    "play.keys": "Taste: Enter ridică o carte și o pune jos, Escape o pune înapoi, F o trimite la fundație, D o așază, săgețile mută între cărți, U anulează, H dă un indiciu, N împarte un joc nou.",
    "play.keys.race": "Taste: Enter ridică o carte și o pune jos, Escape o pune înapoi, F o trimite la fundație, D o așază, săgețile mută între cărți, U anulează.",
    "play.refused": "Mutarea nu este permisă.",
    "play.picked": "{card} ridicată: alege o coloană sau fundația (Escape o pune înapoi).",
    "play.putBack": "{card} pusă înapoi.",
    "play.moved": "{move}",
    "play.notYours": "Jocul este al altcuiva: îl urmărești.",
    "play.hint.confirm": "Un indiciu face jocul asistat: va fi clasat doar cu alte jocuri asistate. Ceri totuși?",
    "play.hint.ask": "Cere un indiciu",
    "play.hint.move": "Indiciu: {move} (o linie câștigătoare de {length} mutări).",
    "play.hint.unwinnable": "Nu mai există o linie câștigătoare: anulează mutări sau împarte un joc nou.",
    "play.hint.unknown": "Rezolvitorul nu a decis la timp. Încearcă din nou după o mutare.",
    "play.hint.over": "Jocul s-a terminat.",
    "play.hint.thinking": "Se caută o linie câștigătoare…",
    "giveUp.title": "Abandonezi jocul?",
    "giveUp.text": "Va fi socotit abandonat, iar împărțirea lui va fi dezvăluită.",
    "giveUp.text.daily": "Va fi socotit abandonat. Împărțirea lui este dezvăluită la sfârșitul zilei (UTC).",
    "giveUp.text.chosen": "Va fi socotit abandonat.",
    "giveUp.text.race": "Ieși din cursă: jocul tău se încheie abandonat și este clasat după cărțile din fundații. Împărțirea este dezvăluită la sfârșitul cursei.",
    "race.play.won": "Ai terminat împărțirea: {moves} mutări, {time}.",
    "race.play.abandoned": "Ai abandonat.",
    "race.play.timedOut": "Timpul a expirat.",
    "race.play.wait": "Ceilalți concurenți încă joacă.",
    "giveUp.done": "Joc abandonat.",
    "new.title": "Joc nou",
    "new.rule": "Regula",
    "new.classic": "Clasic (aceeași culoare)",
    "new.relaxed": "Relaxat (culori amestecate)",
    "new.code": "Codul împărțirii (opțional)",
    "new.code.help": "Un cod RU1 sau RU2, de ex. RU1-C-AAAAABB. Fără cod, serverul împarte o împărțire secretă.",
    "new.winnable": "Doar împărțiri câștigabile",
    "new.deal": "Împarte",
    "new.daily": "Împărțirea zilei",
    "new.abandons": "Jocul în desfășurare va fi socotit abandonat.",
    "settings.title": "Setări",
    "settings.double_click": "Dublu clic",
    "settings.double_click.help": "Un dublu clic așază cartea acolo unde serverul găsește loc.",
    "settings.placement_help": "Ajutor la plasare",
    "settings.placement_help.help": "Arată unde poate merge o carte cât timp o tragi.",
    "settings.interactive_rules": "Reguli interactive",
    "settings.interactive_rules.help": "Explică ce regulă încalcă o mutare refuzată.",
    "settings.auto_placement": "Plasare automată",
    "settings.auto_placement.help": "O carte eliberată în altă parte este așezată automat.",
    "won.title": "Ai câștigat!",
    "won.text": "Scor {score}, {moves} mutări, timp {time}.",
    "won.deal": "Împărțirea:",
    "won.replay": "Vezi reluarea",
    "won.new": "Joc nou",
    "won.banner": "Câștigat: {score} puncte în {moves} mutări, {time}.",
    "won.replayLink": "Reluare",
    "abandoned.banner": "Jocul a fost abandonat.",
  },
  he: {
    "play.title": "משחק",
    "play.time": "זמן", "play.moves": "מהלכים", "play.score": "ניקוד", "play.code": "חלוקה",
    "play.new": "משחק חדש", "play.undo": "בטל", "play.hint": "רמז", "play.settings": "הגדרות",
    "play.giveUp": "ויתור",
    "play.watchLink": "קישור לצופים",
    "play.table": "שולחן הקלפים",
    "play.keys": "מקשים: Enter מרים קלף ומניח אותו, Escape מחזיר אותו, F שולח קלף ליסוד, D מניח אותו, החצים עוברים בין קלפים, U מבטל, H נותן רמז, N מחלק משחק חדש.",
    "play.keys.race": "מקשים: Enter מרים קלף ומניח אותו, Escape מחזיר אותו, F שולח קלף ליסוד, D מניח אותו, החצים עוברים בין קלפים, U מבטל.",
    "play.refused": "המהלך אינו מותר.",
    "play.picked": "{card} הורם: בחרו טור או יסוד (Escape מחזיר אותו).",
    "play.putBack": "{card} הוחזר.",
    "play.moved": "{move}",
    "play.notYours": "המשחק שייך למישהו אחר: צופים בו.",
    "play.hint.confirm": "רמז הופך את המשחק למשחק בסיוע: הוא ידורג רק עם משחקים בסיוע. לבקש בכל זאת?",
    "play.hint.ask": "בקש רמז",
    "play.hint.move": "רמז: {move} (קו ניצחון של {length} מהלכים).",
    "play.hint.unwinnable": "אין מכאן קו ניצחון: בטלו מהלכים או חלקו משחק חדש.",
    "play.hint.unknown": "הפותר לא הכריע בזמן. נסו שוב אחרי מהלך.",
    "play.hint.over": "המשחק הסתיים.",
    "play.hint.thinking": "מחפש קו ניצחון…",
    "giveUp.title": "לוותר על המשחק?",
    "giveUp.text": "הוא ייחשב כנטוש, והחלוקה שלו תיחשף.",
    "giveUp.text.daily": "הוא ייחשב כנטוש. החלוקה שלו נחשפת בסוף היום (UTC).",
    "giveUp.text.chosen": "הוא ייחשב כנטוש.",
    "giveUp.text.race": "אתם יוצאים מהמרוץ: המשחק שלכם מסתיים כנטוש, ומדורג לפי הקלפים שביסודות. החלוקה נחשפת בסוף המרוץ.",
    "race.play.won": "סיימתם את החלוקה: {moves} מהלכים, {time}.",
    "race.play.abandoned": "ויתרתם.",
    "race.play.timedOut": "הזמן נגמר.",
    "race.play.wait": "שאר המתחרים עדיין משחקים.",
    "giveUp.done": "המשחק ננטש.",
    "new.title": "משחק חדש",
    "new.rule": "חוק",
    "new.classic": "קלאסי (אותה משפחה)",
    "new.relaxed": "מקל (משפחות מעורבות)",
    "new.code": "קוד חלוקה (לא חובה)",
    "new.code.help": "קוד RU1 או RU2, למשל RU1-C-AAAAABB. בלי קוד השרת מחלק חלוקה סודית.",
    "new.winnable": "רק חלוקות פתירות",
    "new.deal": "חלק",
    "new.daily": "החלוקה היומית",
    "new.abandons": "המשחק הנוכחי ייחשב כנטוש.",
    "settings.title": "הגדרות",
    "settings.double_click": "לחיצה כפולה",
    "settings.double_click.help": "לחיצה כפולה מניחה קלף היכן שהשרת מוצא מקום.",
    "settings.placement_help": "עזרה בהנחה",
    "settings.placement_help.help": "מראה לאן קלף יכול ללכת בזמן הגרירה.",
    "settings.interactive_rules": "חוקים אינטראקטיביים",
    "settings.interactive_rules.help": "מסביר איזה חוק מהלך שנדחה מפר.",
    "settings.auto_placement": "הנחה אוטומטית",
    "settings.auto_placement.help": "קלף שמשוחרר במקום אחר מונח אוטומטית.",
    "won.title": "ניצחת!",
    "won.text": "ניקוד {score}, {moves} מהלכים, זמן {time}.",
    "won.deal": "החלוקה:",
    "won.replay": "צפו בהילוך החוזר",
    "won.new": "משחק חדש",
    "won.banner": "ניצחון: {score} נקודות ב־{moves} מהלכים, {time}.",
    "won.replayLink": "הילוך חוזר",
    "abandoned.banner": "המשחק ננטש.",
  },
});

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
    this.press = null;
    this.drag = null;
    this.lastClick = null;
    this.pendingTap = null;
    this.receivedAt = performance.now();
    this.announcedWin = null;
    this.listeners = [];
    this.checks = new Map(); // game id → the check of its revealed deal (deal.js)
    this.dealShown = null; // what the deal line shows, so that a redraw leaves it alone
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
    this.listen(this.table, "pointerdown", (event) => this.pointerDown(event));
    this.listen(window, "pointermove", (event) => this.pointerMove(event));
    this.listen(window, "pointerup", (event) => this.pointerUp(event));
    this.listen(window, "pointercancel", () => this.cancelPress());
    this.listen(this.table, "keydown", (event) => this.tableKey(event));
    this.listen(document, "keydown", (event) => this.globalKey(event));
    this.listen(this.table, "contextmenu", (event) => event.preventDefault());
    this.clock = setInterval(() => this.tick(), 1000);
  }

  leave() {
    this.gone = true;
    for (const box of document.querySelectorAll(DIALOGS)) box.close();
    clearInterval(this.clock);
    this.cancelTap();
    this.endDrag();
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
        el("dd", { id: "game-deal" }, this.codeOut, this.checkOut, this.copyButton,
          this.commitmentButton)));
    this.message = el("p", { id: "message", class: "message", role: "status",
      "aria-live": "polite" });
    this.banner = el("div", { id: "banner", class: "banner", hidden: true });
    this.table = el("div", { id: "table", class: "table", role: "region", tabindex: "-1",
      "aria-label": t("play.table"), "aria-describedby": "keys-help" });
    // a race game may not be watched until the race ends: no spectator link
    this.watchLink = racing ? null
      : el("a", { id: "watch-link", class: "watch-link", text: t("play.watchLink") });
    this.root.replaceChildren(el("section", { class: racing ? "view-play race-play" : "view-play" },
      this.bar, this.details, this.message, this.banner, this.table,
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
    if (this.locked()) this.endDrag();
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
    if (this.drag) this.markDrag();
    this.table.dataset.status = game.status;
    this.bar.querySelector("#game-moves").textContent = String(game.moves);
    this.bar.querySelector("#game-score").textContent = String(game.score);
    this.drawDeal();
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

  // The deal line: the code, or until when it is hidden; the commitment on request; once a
  // secret deal is revealed, the outcome of its check.
  drawDeal() {
    const game = this.game;
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
      if (!this.left && this.game && this.game.id === game.id) this.drawDeal();
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
    if (this.pendingTap) this.flushTap();
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
      const yes = await dialog({
        title: t("play.hint"),
        body: el("p", { text: t("play.hint.confirm") }),
        buttons: [{ label: t("play.hint.ask"), value: true, primary: true },
          { label: t("cancel"), value: false }],
        id: "hint-confirm",
      });
      if (!yes || this.left) return;
      sessionStorage.setItem(key, "1");
    }
    if (this.left) return;
    this.say(t("play.hint.thinking"));
    this.flushTap();
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
    let text = "giveUp.text.chosen";
    if (game.race_id) text = "giveUp.text.race";
    else if (game.daily) text = "giveUp.text.daily";
    else if (secretDeal(game)) text = "giveUp.text";
    const yes = await dialog({
      title: t("giveUp.title"),
      body: el("p", { text: t(text) }),
      buttons: [{ label: t("play.giveUp"), value: true, primary: true },
        { label: t("cancel"), value: false }],
      id: "give-up-confirm",
    });
    if (!yes || this.left || this.game.id !== game.id) return;
    this.flushTap();
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

  // --- pointer: taps, double taps, drag and drop --------------------------------------------

  pointerDown(event) {
    if (event.button !== 0 || !this.game || this.game.status !== "active" || this.locked()) return;
    const node = event.target.closest("[data-card]");
    if (!node || !this.table.contains(node) || node.classList.contains("down")) return;
    const card = node.dataset.card;
    const from = locate(this.game, card);
    if (!from) return;
    event.preventDefault();
    this.press = { card, from, x: event.clientX, y: event.clientY };
  }

  pointerMove(event) {
    const press = this.press;
    if (!press) return;
    if (!this.drag) {
      if (Math.hypot(event.clientX - press.x, event.clientY - press.y) < DRAG_THRESHOLD) return;
      this.startDrag(press);
      if (!this.drag) {
        this.press = null;
        return;
      }
    }
    this.drag.ghost.style.left = `${event.clientX - this.drag.dx}px`;
    this.drag.ghost.style.top = `${event.clientY - this.drag.dy}px`;
  }

  pointerUp(event) {
    const press = this.press;
    if (!press) return;
    this.press = null;
    if (this.drag) {
      this.drop();
      return;
    }
    this.clicked(press.card, press.from);
  }

  cancelPress() {
    this.press = null;
    if (this.drag) {
      this.endDrag();
      this.draw();
    }
  }

  clicked(card, from) {
    if (this.selected) this.select(null);
    const now = performance.now();
    const again = this.lastClick && this.lastClick.card === card
      && now - this.lastClick.time < DOUBLE_CLICK_MS;
    if (this.settings.auto_placement) {
      // every click places the card; the second click of a double click adds nothing
      if (again) {
        this.lastClick = null;
        return;
      }
      this.lastClick = { card, time: now };
      this.doubleTap(card);
      return;
    }
    if (!this.settings.double_click) {
      if (from.place !== "f" && from.last) this.tap(card);
      return;
    }
    if (again) {
      this.cancelTap();
      this.lastClick = null;
      this.doubleTap(card);
      return;
    }
    this.flushTap();
    this.lastClick = { card, time: now };
    if (from.place !== "f" && from.last) {
      // a single click is a tap once it is clear that no second click follows
      const run = () => {
        this.pendingTap = null;
        this.lastClick = null;
        this.tap(card);
      };
      this.pendingTap = { run, timer: setTimeout(run, DOUBLE_CLICK_MS) };
    }
  }

  // A tap still waiting to see whether a second click follows is sent now.
  flushTap() {
    if (!this.pendingTap) return;
    clearTimeout(this.pendingTap.timer);
    this.pendingTap.run();
  }

  cancelTap() {
    if (this.pendingTap) clearTimeout(this.pendingTap.timer);
    this.pendingTap = null;
  }

  startDrag(press) {
    const { card, from } = press;
    if (this.pendingTap && this.lastClick && this.lastClick.card === card) this.cancelTap();
    else this.flushTap();
    this.lastClick = null;
    if (this.selected) this.select(null);
    const node = from.place === "f"
      ? this.table.querySelector(`.foundation[data-card="${card}"] .card`)
      : this.table.querySelector(`.column .card[data-card="${card}"]`);
    if (!node) return;
    const rect = node.getBoundingClientRect();
    const ghost = el("div", { class: "drag-ghost", "aria-hidden": "true" });
    ghost.style.setProperty("--card-w", `${rect.width}px`);
    ghost.style.left = `${rect.left}px`;
    ghost.style.top = `${rect.top}px`;
    from.group.forEach((name, index) => {
      const copy = cardElement(name);
      copy.style.setProperty("--down", "0");
      copy.style.setProperty("--up", String(index));
      ghost.append(copy);
    });
    document.body.append(ghost);
    this.drag = { card, from, ghost, targets: [], dx: press.x - rect.left, dy: press.y - rect.top };
    this.markDrag();
    this.fetchTargets(card).then((targets) => {
      if (!this.drag || this.drag.card !== card) return;
      this.drag.targets = targets;
      this.markDrag();
    });
  }

  // Hides the dragged cards in the table and lights the places they may go.
  markDrag() {
    const { card, from, targets } = this.drag;
    for (const name of from.group) {
      const original = from.place === "f"
        ? this.table.querySelector(`.foundation[data-card="${name}"] .card`)
        : this.table.querySelector(`.column .card[data-card="${name}"]`);
      if (original) original.classList.add("lifted");
    }
    for (const place of targets) {
      const zone = place === "f"
        ? this.table.querySelector(`.foundation[data-suit="${card[1]}"]`)
        : this.table.querySelector(`.column[data-place="${place}"]`);
      if (zone) zone.classList.add("target");
    }
  }

  // The place under the dragged card: the zone its top card overlaps most.
  dropPlace() {
    const base = this.drag.ghost.firstElementChild.getBoundingClientRect();
    let best = null;
    let bestArea = 0;
    for (const zone of this.table.querySelectorAll(".column, .foundation")) {
      const box = zone.getBoundingClientRect();
      const width = Math.min(base.right, box.right) - Math.max(base.left, box.left);
      const height = Math.min(base.bottom, box.bottom) - Math.max(base.top, box.top);
      const area = width > 0 && height > 0 ? width * height : 0;
      if (area > bestArea) {
        bestArea = area;
        best = zone.dataset.place;
      }
    }
    return best;
  }

  drop() {
    const { card, from } = this.drag;
    const place = this.dropPlace();
    this.endDrag();
    this.lastClick = null;
    if (place && place !== from.place) {
      this.draw();
      this.move(card, place);
    } else if (this.settings.auto_placement) {
      this.draw();
      this.doubleTap(card);
    } else {
      this.draw();
    }
  }

  endDrag() {
    if (!this.drag) return;
    this.drag.ghost.remove();
    for (const node of this.table.querySelectorAll(".lifted")) node.classList.remove("lifted");
    for (const zone of this.table.querySelectorAll(".target")) zone.classList.remove("target");
    this.drag = null;
  }

  // --- keyboard ----------------------------------------------------------------------------

  tableKey(event) {
    if (!this.game || this.game.status !== "active" || event.altKey || event.metaKey) return;
    if (this.locked()) return;
    const node = event.target.closest("[data-place]");
    if (!node) return;
    const card = node.dataset.card || null;
    const key = letter(event);
    if (key === "Enter" || key === " ") {
      event.preventDefault();
      if (this.selected) {
        const from = locate(this.game, this.selected);
        const place = node.dataset.place;
        const chosen = this.selected;
        if (card === chosen || !from || place === from.place) {
          this.select(card === chosen || !card ? null : card);
          if (card === chosen) this.say(t("play.putBack", { card: short(chosen) }));
          return;
        }
        this.selected = null;
        this.targets = [];
        this.move(chosen, place);
      } else if (card) {
        this.select(card);
      }
    } else if (key === "Escape" && this.selected) {
      event.preventDefault();
      const chosen = this.selected;
      this.select(null);
      this.say(t("play.putBack", { card: short(chosen) }));
    } else if (key === "f" && card && !event.ctrlKey) {
      event.preventDefault();
      this.tap(card);
    } else if (key === "d" && card && !event.ctrlKey) {
      event.preventDefault();
      this.doubleTap(card);
    } else if (key.startsWith("Arrow")) {
      event.preventDefault();
      this.moveFocus(node, key);
    }
  }

  // Arrow keys: left and right between columns (and foundations), up and down within one.
  moveFocus(node, key) {
    // the table reads left to right in every language (t1 … t7, SPEC 1.9)
    const columns = [...this.table.querySelectorAll(".column")];
    const foundations = [...this.table.querySelectorAll(".foundation")];
    const stops = (column) => [...column.querySelectorAll(".card.up")].concat(
      column.querySelector(".card") ? [] : [column.querySelector(".slot")]);
    const inFoundations = node.classList.contains("foundation");
    let next = null;
    if (key === "ArrowLeft" || key === "ArrowRight") {
      const step = key === "ArrowRight" ? 1 : -1;
      if (inFoundations) {
        next = foundations[foundations.indexOf(node) + step];
      } else {
        const column = columns[columns.indexOf(node.closest(".column")) + step];
        if (column) next = stops(column).at(-1);
      }
    } else if (inFoundations) {
      if (key === "ArrowDown") next = stops(columns[0]).at(-1);
    } else {
      const column = node.closest(".column");
      const list = stops(column);
      const index = list.indexOf(node);
      if (key === "ArrowUp") next = index > 0 ? list[index - 1] : foundations[0];
      else next = list[index + 1];
    }
    if (next) next.focus();
  }

  globalKey(event) {
    if (document.querySelector("dialog[open]") || event.altKey) return;
    const target = event.target;
    if (target instanceof HTMLInputElement || target instanceof HTMLSelectElement
      || target instanceof HTMLTextAreaElement) return;
    const key = letter(event);
    if ((event.ctrlKey || event.metaKey) && key === "z") {
      event.preventDefault();
      this.undo();
    } else if (event.ctrlKey || event.metaKey) {
      return;
    } else if (key === "u") {
      this.undo();
    } else if (key === "h" && !this.race) {
      this.askHint();
    } else if (key === "n" && !this.race) {
      event.preventDefault();
      this.newGame();
    }
  }

  // --- dialogs -----------------------------------------------------------------------------

  async newGame() {
    const rule = this.game ? this.game.rule : "classic";
    const radio = (value, label) => el("label", { class: "choice" },
      el("input", { type: "radio", name: "rule", value, checked: value === rule }), t(label));
    const code = el("input", { id: "deal-code", name: "code", autocomplete: "off",
      spellcheck: "false", autocapitalize: "characters", placeholder: "RU1-C-AAAAABB",
      maxlength: String(CODE_MAX_LENGTH), "aria-describedby": "deal-code-help" });
    const winnable = el("input", { id: "winnable", type: "checkbox", name: "winnable" });
    const problem = el("p", { class: "problem", role: "alert" });
    const inPlay = this.game && this.game.status === "active" && this.game.moves > 0;
    const box = el("dialog", { class: "dialog", id: "new-game-dialog",
      "aria-labelledby": "new-game-title" });
    const form = el("form", {},
      el("fieldset", {}, el("legend", { text: t("new.rule") }),
        radio("classic", "new.classic"), radio("relaxed", "new.relaxed")),
      el("label", { for: "deal-code", text: t("new.code") }), code,
      el("p", { id: "deal-code-help", class: "help", text: t("new.code.help") }),
      el("label", { class: "choice" }, winnable, t("new.winnable")),
      inPlay ? el("p", { class: "note", text: t("new.abandons") }) : null,
      problem,
      el("div", { class: "actions" },
        el("button", { type: "submit", class: "primary", id: "deal", text: t("new.deal") }),
        el("button", { type: "button", id: "daily", text: t("new.daily"),
          onclick: () => deal({ daily: true, rule: chosenRule() }) }),
        el("button", { type: "button", text: t("cancel"), onclick: () => box.close() })));
    const chosenRule = () => form.querySelector("input[name=rule]:checked").value;
    const deal = async (body) => {
      if (box.dataset.busy) return; // one game per press, however often it is pressed
      box.dataset.busy = "1"; // and the window stays until the answer comes
      for (const button of form.querySelectorAll("button")) button.disabled = true;
      problem.textContent = "";
      try {
        const game = await post("/games", body);
        if (this.left) return;
        const previous = this.game;
        delete box.dataset.busy;
        box.close();
        if (previous && previous.status === "active" && previous.moves > 0) {
          post(`/games/${previous.id}/abandon`).catch(() => {});
        }
        this.show(game);
        this.say("");
        this.table.querySelector(".card.up")?.focus();
      } catch (error) {
        problem.textContent = fieldProblemText(error);
      } finally {
        delete box.dataset.busy;
        for (const button of form.querySelectorAll("button")) button.disabled = false;
      }
    };
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = code.value.trim();
      deal(text ? { code: text } : { rule: chosenRule(), winnable: winnable.checked });
    });
    box.append(el("h2", { id: "new-game-title", text: t("new.title") }), form);
    box.addEventListener("cancel", (event) => {
      if (box.dataset.busy) event.preventDefault();
    });
    box.addEventListener("close", () => box.remove());
    document.body.append(box);
    box.showModal();
  }

  openSettings() {
    const box = el("dialog", { class: "dialog", id: "settings-dialog",
      "aria-labelledby": "settings-title" });
    const problem = el("p", { class: "problem", role: "alert" });
    const rows = SETTINGS.map((name) => {
      const input = el("input", { type: "checkbox", id: `setting-${name}`, name,
        checked: this.settings[name], "aria-describedby": `setting-${name}-help` });
      input.addEventListener("change", async () => {
        problem.textContent = "";
        const before = this.settings[name];
        this.settings[name] = input.checked; // takes effect at once; the server keeps it
        try {
          const stored = await patch(`/players/${this.me.id}/settings`, { [name]: input.checked });
          for (const key of SETTINGS) this.settings[key] = stored[key];
        } catch (error) {
          this.settings[name] = before;
          input.checked = before;
          problem.textContent = problemText(error);
        }
      });
      return el("div", { class: "setting" },
        el("label", { class: "choice", for: `setting-${name}` }, input, t(`settings.${name}`)),
        el("p", { class: "help", id: `setting-${name}-help`, text: t(`settings.${name}.help`) }));
    });
    box.append(el("h2", { id: "settings-title", text: t("settings.title") }), ...rows, problem,
      el("div", { class: "actions" },
        el("button", { type: "button", class: "primary", text: t("close"),
          onclick: () => box.close() })));
    box.addEventListener("close", () => box.remove());
    document.body.append(box);
    box.showModal();
  }

  async celebrate() {
    const game = this.game;
    const choice = await dialog({
      title: t("won.title"),
      body: [
        el("p", { text: t("won.text", { score: game.score, moves: game.moves,
          time: formatTime(game.elapsed_ms) }) }),
        el("p", { id: "won-deal" }, `${t("won.deal")} `,
          el("span", { class: "deal-code", dir: "ltr", text: codeText(game) })),
      ],
      buttons: [
        { label: t("won.replay"), value: "replay", primary: true },
        { label: t("won.new"), value: "new" },
        { label: t("close"), value: "close" },
      ],
      id: "won-dialog",
    });
    if (this.left) return;
    if (choice === "replay") location.hash = `#/replay/${game.id}`;
    else if (choice === "new") this.newGame();
  }
}

// The letter of a key: the Latin letter it types (AZERTY, QWERTZ, Dvorak…), else, for a layout
// without Latin letters (Hebrew), the letter at its place on a US keyboard; other keys as they
// are ("Enter", "ArrowLeft"…).
function letter(event) {
  if (/^[a-z]$/i.test(event.key)) return event.key.toLowerCase();
  if (event.key.length === 1 && /^Key[A-Z]$/.test(event.code || "")) {
    return event.code.slice(3).toLowerCase();
  }
  return event.key;
}
