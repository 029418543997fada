// The player of this browser: signed up once (a name), kept in localStorage with its token.
import { configure, post } from "./api.js";
import { t, define } from "./i18n.js";
import { el, fieldProblemText } from "./ui.js";

const STORE = "solitaire.player";

define({
  en: {
    "welcome.title": "Welcome to Russian Solitaire",
    "welcome.text": "Choose a name for the leaderboards. It is kept in this browser.",
    "welcome.name": "Your name",
    "welcome.start": "Start playing",
  },
  ro: {
    "welcome.title": "Bun venit la Pasiența rusească",
    "welcome.text": "Alege un nume pentru clasamente. Este păstrat în acest browser.",
    "welcome.name": "Numele tău",
    "welcome.start": "Începe jocul",
  },
  he: {
    "welcome.title": "ברוכים הבאים לסוליטר רוסי",
    "welcome.text": "בחרו שם לטבלאות המובילים. הוא נשמר בדפדפן הזה.",
    "welcome.name": "השם שלך",
    "welcome.start": "התחל לשחק",
  },
});

let current = null;

export function player() {
  if (current) return current;
  try {
    const stored = JSON.parse(localStorage.getItem(STORE) || "null");
    if (stored && stored.id && stored.token) current = stored;
  } catch {
    current = null;
  }
  configure({ token: current ? current.token : null });
  return current;
}

export function forget() {
  current = null;
  localStorage.removeItem(STORE);
  configure({ token: null });
}

// The player, asking for a name (and signing up) the first time. Views that ask at the same
// time share one sign-up.
let signingUp = null;

export function ensurePlayer() {
  if (player()) return Promise.resolve(current);
  if (!signingUp) signingUp = signUp().finally(() => { signingUp = null; });
  return signingUp;
}

async function signUp() {
  let problem = null;
  for (;;) {
    const name = await askName(problem);
    try {
      const created = await post("/players", { name });
      current = { id: created.id, name: created.name, token: created.token };
      configure({ token: current.token });
      break;
    } catch (error) {
      problem = error;
    }
  }
  try {
    localStorage.setItem(STORE, JSON.stringify(current));
  } catch {
    // storage is full or off: the player lasts as long as the page
  }
  return current;
}

function askName(error = null) {
  return new Promise((resolve) => {
    const input = el("input", {
      id: "player-name", name: "name", required: true, maxlength: "64", autocomplete: "nickname",
    });
    const problem = el("p", { class: "problem", role: "alert" });
    if (error) problem.textContent = fieldProblemText(error);
    const form = el("form", { class: "welcome" },
      el("p", { text: t("welcome.text") }),
      el("label", { for: "player-name", text: t("welcome.name") }),
      input,
      problem,
      el("div", { class: "actions" },
        el("button", { type: "submit", class: "primary", text: t("welcome.start") })));
    const box = el("dialog", { class: "dialog", id: "welcome", "aria-labelledby": "welcome-title" },
      el("h2", { id: "welcome-title", text: t("welcome.title") }), form);
    box.addEventListener("cancel", (event) => event.preventDefault());
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const name = input.value.trim();
      if (!name) return;
      box.close();
      box.remove();
      resolve(name);
    });
    document.body.append(box);
    box.showModal();
    input.focus();
  });
}
