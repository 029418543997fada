// The page's words in English, Romanian and Hebrew (right to left). The server's own messages
// (a refused move's explanation) come in the same language: every API call sends it as
// Accept-Language. Each view module adds its own words with define().
import { configure } from "./api.js";

export const LANGUAGES = ["en", "ro", "he"];
const STORE = "solitaire.language";
const strings = { en: {}, ro: {}, he: {} };
let current = "en";

export function define(table) {
  for (const language of LANGUAGES) Object.assign(strings[language], table[language] || {});
}

// The text of `key` with `{name}` replaced from `vars`; English when a language lacks it.
export function t(key, vars = {}) {
  const text = strings[current][key] ?? strings.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => (name in vars ? String(vars[name]) : `{${name}}`));
}

export function language() {
  return current;
}

export function pickLanguage() {
  const stored = localStorage.getItem(STORE);
  if (LANGUAGES.includes(stored)) return stored;
  for (const tag of navigator.languages || []) {
    const primary = tag.toLowerCase().split("-")[0];
    if (primary === "iw") return "he";
    if (LANGUAGES.includes(primary)) return primary;
  }
  return "en";
}

export function setLanguage(next) {
  current = LANGUAGES.includes(next) ? next : "en";
  localStorage.setItem(STORE, current);
  document.documentElement.lang = current;
  document.documentElement.dir = current === "he" ? "rtl" : "ltr";
  configure({ language: current });
  translate(document);
  document.title = t("brand");
}

// Fills every element marked data-i18n (text) or data-i18n-label (aria-label).
export function translate(root) {
  for (const element of root.querySelectorAll("[data-i18n]")) {
    element.textContent = t(element.dataset.i18n);
  }
  for (const element of root.querySelectorAll("[data-i18n-label]")) {
    element.setAttribute("aria-label", t(element.dataset.i18nLabel));
  }
}

define({
  en: {
    brand: "Russian Solitaire",
    skip: "Skip to the content",
    nav: "Main",
    "nav.play": "Play",
    "nav.races": "Races",
    "nav.watch": "Watch",
    "nav.boards": "Leaderboards",
    "nav.stats": "My statistics",
    "nav.account": "Account",
    "nav.rules": "Rules",
    language: "Language",
    loading: "Loading…",
    close: "Close",
    cancel: "Cancel",
    ok: "OK",
    error: "Something went wrong: {detail}",
    "card.name": "{rank} of {suit}",
    "card.down": "face-down card",
    "rank.A": "ace", "rank.2": "2", "rank.3": "3", "rank.4": "4", "rank.5": "5", "rank.6": "6",
    "rank.7": "7", "rank.8": "8", "rank.9": "9", "rank.T": "10", "rank.J": "jack",
    "rank.Q": "queen", "rank.K": "king",
    "suit.S": "spades", "suit.H": "hearts", "suit.D": "diamonds", "suit.C": "clubs",
    "place.f": "foundation",
    "place.t": "column {n}",
    "move.undo": "undo",
    "column.label": "Column {n}, {count} cards",
    "column.empty": "Column {n}, empty",
    "foundation.label": "{suit} foundation, {count} cards",
    "foundation.top": "{suit} foundation, top card {card}",
    "rule.classic": "Classic",
    "rule.relaxed": "Relaxed",
    "status.active": "in progress",
    "status.won": "won",
    "status.abandoned": "abandoned",
  },
  ro: {
    brand: "Pasiență rusească",
    skip: "Sari la conținut",
    nav: "Meniu",
    "nav.play": "Joacă",
    "nav.races": "Curse",
    "nav.watch": "Urmărește",
    "nav.boards": "Clasamente",
    "nav.stats": "Statisticile mele",
    "nav.account": "Cont",
    "nav.rules": "Reguli",
    language: "Limba",
    loading: "Se încarcă…",
    close: "Închide",
    cancel: "Renunță",
    ok: "OK",
    error: "Ceva n-a mers: {detail}",
    "card.name": "{rank} de {suit}",
    "card.down": "carte cu fața în jos",
    "rank.A": "as", "rank.J": "valet", "rank.Q": "damă", "rank.K": "popă",
    "suit.S": "pică", "suit.H": "inimă roșie", "suit.D": "caro", "suit.C": "treflă",
    "place.f": "fundație",
    "place.t": "coloana {n}",
    "move.undo": "anulare",
    "column.label": "Coloana {n}, {count} cărți",
    "column.empty": "Coloana {n}, goală",
    "foundation.label": "Fundația de {suit}, {count} cărți",
    "foundation.top": "Fundația de {suit}, deasupra {card}",
    "rule.classic": "Clasic",
    "rule.relaxed": "Relaxat",
    "status.active": "în desfășurare",
    "status.won": "câștigat",
    "status.abandoned": "abandonat",
  },
  he: {
    brand: "סוליטר רוסי",
    skip: "דלג לתוכן",
    nav: "ראשי",
    "nav.play": "שחק",
    "nav.races": "מרוצים",
    "nav.watch": "צפייה",
    "nav.boards": "טבלאות מובילים",
    "nav.stats": "הסטטיסטיקה שלי",
    "nav.account": "חשבון",
    "nav.rules": "חוקים",
    language: "שפה",
    loading: "טוען…",
    close: "סגור",
    cancel: "ביטול",
    ok: "אישור",
    error: "משהו השתבש: {detail}",
    "card.name": "{rank} {suit}",
    "card.down": "קלף הפוך",
    "rank.A": "אס", "rank.J": "נסיך", "rank.Q": "מלכה", "rank.K": "מלך",
    "suit.S": "עלה", "suit.H": "לב", "suit.D": "יהלום", "suit.C": "תלתן",
    "place.f": "יסוד",
    "place.t": "טור {n}",
    "move.undo": "ביטול מהלך",
    "column.label": "טור {n}, {count} קלפים",
    "column.empty": "טור {n}, ריק",
    "foundation.label": "יסוד {suit}, {count} קלפים",
    "foundation.top": "יסוד {suit}, קלף עליון {card}",
    "rule.classic": "קלאסי",
    "rule.relaxed": "מקל",
    "status.active": "בתהליך",
    "status.won": "ניצחון",
    "status.abandoned": "ננטש",
  },
});
