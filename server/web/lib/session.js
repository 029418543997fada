// The player of this browser, kept in localStorage with its session's token: a guest signed up
// with a name, or an account signed in with its name and password (SPEC 2.2). When the server
// says that the session has ended (a 401 to a call that carried its token, or the live socket
// closed with 4401: signed out or ended on another device, a password changed, the account
// deleted), the token is forgotten and the welcome window asks again: sign in, or a new guest;
// then the page is drawn again for the player it gives (the "solitaire:player" event).
import { configure, post } from "./api.js";
import { t, define } from "./i18n.js";
import { el, fieldProblemText } from "./ui.js";

const STORE = "solitaire.player";
export const PLAYER_CHANGED = "solitaire:player";

define({
  en: {
    "welcome.title": "Welcome to Russian Solitaire",
    "welcome.text": "Choose a name for the leaderboards. It is kept in this browser.",
    "welcome.name": "Your name",
    "welcome.start": "Start playing",
    "welcome.ended": "You are no longer signed in here: you signed out, or this device was signed out from another one. Sign in again, or start as a new player.",
    "welcome.have": "I already have an account:",
    "welcome.signIn": "Sign in",
    "signIn.title": "Sign in",
    "signIn.text": "Sign in with the name and password of your account, as on your other devices.",
    "signIn.name": "Name",
    "signIn.password": "Password",
    "signIn.submit": "Sign in",
    "signIn.new": "New here?",
    "signIn.back": "Choose a name instead",
    "signIn.busy": "Signing in…",
  },
  ro: {
    "welcome.title": "Bun venit la Pasiența rusească",
    "welcome.text": "Alege un nume pentru clasamente. Este păstrat în acest browser.",
    "welcome.name": "Numele tău",
    "welcome.start": "Începe jocul",
    "welcome.ended": "Nu mai ești conectat aici: te-ai deconectat sau acest dispozitiv a fost deconectat de pe altul. Conectează-te din nou sau începe ca jucător nou.",
    "welcome.have": "Am deja un cont:",
    "welcome.signIn": "Conectează-te",
    "signIn.title": "Conectare",
    "signIn.text": "Conectează-te cu numele și parola contului tău, ca pe celelalte dispozitive.",
    "signIn.name": "Nume",
    "signIn.password": "Parolă",
    "signIn.submit": "Conectează-te",
    "signIn.new": "Ești nou aici?",
    "signIn.back": "Alege mai bine un nume",
    "signIn.busy": "Se conectează…",
  },
  he: {
    "welcome.title": "ברוכים הבאים לסוליטר רוסי",
    "welcome.text": "בחרו שם לטבלאות המובילים. הוא נשמר בדפדפן הזה.",
    "welcome.name": "השם שלך",
    "welcome.start": "התחל לשחק",
    "welcome.ended": "אינך מחובר/ת כאן יותר: התנתקת, או שהמכשיר הזה נותק ממכשיר אחר. התחברו שוב, או התחילו כשחקן חדש.",
    "welcome.have": "כבר יש לי חשבון:",
    "welcome.signIn": "התחברות",
    "signIn.title": "התחברות",
    "signIn.text": "התחברו עם השם והסיסמה של החשבון שלכם, כמו במכשירים האחרים.",
    "signIn.name": "שם",
    "signIn.password": "סיסמה",
    "signIn.submit": "התחברות",
    "signIn.new": "חדשים כאן?",
    "signIn.back": "לבחור שם במקום",
    "signIn.busy": "מתחבר…",
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
  try {
    localStorage.removeItem(STORE);
  } catch {
    // storage is off: nothing was kept
  }
  configure({ token: null });
}

// Keeps `next` ({id, name, token}) as this browser's player.
export function remember(next) {
  current = { id: next.id, name: next.name, token: next.token };
  configure({ token: current.token });
  try {
    localStorage.setItem(STORE, JSON.stringify(current));
  } catch {
    // storage is full or off: the player lasts as long as the page
  }
  return current;
}

// The player, asking (and signing up or in) when this browser has none. Views that ask at the
// same time share one window. `mode`: which form the window opens with, "name" (a new guest) or
// "sign-in"; `ended`: say that the session here has ended.
let asking = null;

export function ensurePlayer({ mode = "name", ended = false } = {}) {
  if (player()) return Promise.resolve(current);
  if (!asking) asking = welcome(mode, ended).finally(() => { asking = null; });
  return asking;
}

// The server refused `token` (401) or closed its socket with 4401: when it is still this
// browser's, it is forgotten, the welcome window asks again, and the page is drawn anew.
export function sessionEnded(token) {
  const me = player();
  if (!me || (token && me.token !== token)) return;
  forget();
  ensurePlayer({ ended: true }).then(() => window.dispatchEvent(new CustomEvent(PLAYER_CHANGED)));
}

configure({ unauthorized: sessionEnded });

// The label of a session signed in here: "Chrome on Linux" (the sessions list shows it), from
// `agent` (a User-Agent, this browser's by default); null when it names neither a browser nor a
// system.
export function deviceLabel(agent = navigator.userAgent || "") {
  const browsers = [[/Edg\//, "Edge"], [/OPR\//, "Opera"], [/Firefox\//, "Firefox"],
    [/Chrom(e|ium)\//, "Chrome"], [/Safari\//, "Safari"]];
  const systems = [[/Android/, "Android"], [/iPhone|iPad|iPod/, "iOS"], [/CrOS/, "ChromeOS"],
    [/Windows/, "Windows"], [/Mac OS X|Macintosh/, "macOS"], [/Linux/, "Linux"]];
  const browser = (browsers.find(([pattern]) => pattern.test(agent)) || [null, null])[1];
  const system = (systems.find(([pattern]) => pattern.test(agent)) || [null, null])[1];
  if (!browser && !system) return null;
  return system ? `${browser || "Browser"} on ${system}` : browser;
}

// The welcome window: choose a name (a new guest), or sign in to an account. It cannot be
// dismissed: it resolves with the player once the server has one.
function welcome(mode, ended) {
  return new Promise((resolve) => {
    const title = el("h2", { id: "welcome-title" });
    const box = el("dialog", { class: "dialog", id: "welcome", "aria-labelledby": "welcome-title" });
    const note = ended ? el("p", { class: "note", id: "welcome-ended", text: t("welcome.ended") })
      : null;
    box.addEventListener("cancel", (event) => event.preventDefault());
    const done = (created) => {
      box.close();
      box.remove();
      resolve(remember(created));
    };

    function show(which) {
      const form = which === "sign-in" ? signInForm() : nameForm();
      title.textContent = t(which === "sign-in" ? "signIn.title" : "welcome.title");
      box.replaceChildren(title, ...(note ? [note] : []), form);
      box.dataset.mode = which;
      form.querySelector("input").focus();
    }

    function nameForm() {
      const input = el("input", {
        id: "player-name", name: "name", required: true, maxlength: "64", autocomplete: "nickname",
      });
      const problem = el("p", { class: "problem", role: "alert" });
      const submit = el("button", { type: "submit", class: "primary", text: t("welcome.start") });
      const form = el("form", { class: "welcome" },
        el("p", { text: t("welcome.text") }),
        el("label", { for: "player-name", text: t("welcome.name") }),
        input,
        problem,
        el("div", { class: "actions" }, submit),
        el("p", { class: "switch" }, `${t("welcome.have")} `,
          el("button", { type: "button", id: "welcome-sign-in", class: "link",
            text: t("welcome.signIn"), onclick: () => show("sign-in") })));
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        const name = input.value.trim();
        if (!name || submit.disabled) return;
        submit.disabled = true;
        problem.textContent = "";
        try {
          const created = await post("/players", { name });
          done({ id: created.id, name: created.name, token: created.token });
        } catch (error) {
          problem.textContent = fieldProblemText(error);
          submit.disabled = false;
          input.focus();
        }
      });
      return form;
    }

    function signInForm() {
      const name = el("input", {
        id: "sign-in-name", name: "username", required: true, maxlength: "64",
        autocomplete: "username",
      });
      const password = el("input", {
        id: "sign-in-password", name: "password", type: "password", required: true,
        maxlength: "256", autocomplete: "current-password",
      });
      const problem = el("p", { class: "problem", role: "alert", id: "sign-in-error" });
      const submit = el("button", { type: "submit", class: "primary", id: "sign-in-submit",
        text: t("signIn.submit") });
      const form = el("form", { class: "welcome sign-in" },
        el("p", { text: t("signIn.text") }),
        el("label", { for: "sign-in-name", text: t("signIn.name") }), name,
        el("label", { for: "sign-in-password", text: t("signIn.password") }), password,
        problem,
        el("div", { class: "actions" }, submit),
        el("p", { class: "switch" }, `${t("signIn.new")} `,
          el("button", { type: "button", id: "welcome-new", class: "link",
            text: t("signIn.back"), onclick: () => show("name") })));
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        if (!name.value.trim() || !password.value || submit.disabled) return;
        submit.disabled = true;
        submit.textContent = t("signIn.busy");
        problem.textContent = "";
        try {
          const signed = await post("/sessions", {
            name: name.value.trim(), password: password.value, label: deviceLabel() || "Browser",
          });
          done({ id: signed.player.id, name: signed.player.name, token: signed.token });
        } catch (error) {
          problem.textContent = fieldProblemText(error);
          submit.disabled = false;
          submit.textContent = t("signIn.submit");
          password.select();
          password.focus();
        }
      });
      return form;
    }

    document.body.append(box);
    box.showModal();
    show(mode);
  });
}
