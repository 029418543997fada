// #/account: this browser's player as an account (SPEC 2.2, 2.2.2). A guest creates a password
// (and can then sign in on other devices by name and password); an account changes it (which
// ends its other sessions). The sessions of the account (one per device or app) are listed, and
// any other one can be ended; Sign out ends this one and forgets its token. The player's data is
// downloaded as one JSON file (GET /api/v1/me/export), and the account deleted after a question
// that asks for the password when one is set (DELETE /api/v1/me). Without a player here, the
// view offers to sign in or to start as a new player (the welcome window of lib/session.js).
import { del, download, get, put } from "../lib/api.js";
import { formatDate } from "../lib/format.js";
import { define, t } from "../lib/i18n.js";
import { deviceLabel, ensurePlayer, forget, player, remember } from "../lib/session.js";
import { dialog, el, fieldProblemText, problemText, toast } from "../lib/ui.js";

define({
  en: {
    "account.title": "Account",
    "account.none": "No player is signed in in this browser.",
    "account.none.help": "Sign in with the name and password of your account, or start as a new player (a guest: add a password later to keep it).",
    "account.signIn": "Sign in",
    "account.new": "Start as a new player",
    "account.name": "Name",
    "account.since": "Playing since",
    "account.kind": "Kind",
    "account.kind.guest": "Guest (no password)",
    "account.kind.account": "Account with a password",
    "account.stats": "My statistics",
    "account.guest.note": "This player lives only in this browser. Create a password to sign in on your other devices, and to keep your games and statistics if this browser forgets them.",
    "account.devices.note": "On another device, open this site, choose “I already have an account: sign in”, and give your name and this password.",
    "account.password.create": "Create a password",
    "account.password.change": "Change the password",
    "account.password.current": "Current password",
    "account.password.new": "New password",
    "account.password.repeat": "The new password again",
    "account.password.help": "10 to 256 characters, and not your name.",
    "account.password.help.change": "10 to 256 characters, and not your name. Your other devices and apps are signed out.",
    "account.password.differ": "The two new passwords differ.",
    "account.password.save.create": "Create the password",
    "account.password.save.change": "Change the password",
    "account.password.created": "Your password is set: sign in with it on your other devices.",
    "account.password.changed": "Your password is changed; your other devices are signed out.",
    "account.sessions": "Devices and apps",
    "account.sessions.caption": "Where this account is signed in",
    "account.sessions.device": "Device or app",
    "account.sessions.created": "Signed in",
    "account.sessions.used": "Last used",
    "account.sessions.scopes": "Access",
    "account.sessions.action": "Action",
    "account.sessions.here": "This device",
    "account.sessions.app": "App: {name}",
    "account.sessions.end": "End",
    "account.sessions.end.label": "End the session “{label}” (last used {date})",
    "account.sessions.ended": "The session “{label}” is ended.",
    "account.scopes.all": "Everything",
    "scope.play": "play",
    "scope.race": "races",
    "scope.account": "account",
    "scope.read": "hidden games",
    "account.signOut.title": "Sign out",
    "account.signOut.text": "Sign out of this browser. Your games and statistics stay with your account.",
    "account.signOut.guest": "You have no password yet: once you sign out, nobody can sign in as this player again. Create a password first to keep it.",
    "account.signOut": "Sign out",
    "account.signOut.confirm.title": "Sign out without a password?",
    "account.signOut.confirm.yes": "Sign out anyway",
    "account.signedOut": "You are signed out.",
    "account.export.title": "Your data",
    "account.export.text": "Download everything the server holds about you (profile, settings, sessions, games with their replays, races, statistics) as one JSON file.",
    "account.export": "Download my data",
    "account.export.busy": "Preparing…",
    "account.exported": "Your data is downloaded as {file}.",
    "account.delete.title": "Delete the account",
    "account.delete.text": "Your name, password, sessions, settings and seeds are erased at once, and your name is free for anyone to take. Your games stay in races and deal records, played by “deleted player”, and leave every leaderboard.",
    "account.delete": "Delete my account…",
    "account.delete.confirm.title": "Delete your account for good?",
    "account.delete.confirm.text": "This cannot be undone: “{name}” and everything kept with it are erased, on every device.",
    "account.delete.password": "Your password",
    "account.delete.yes": "Delete for good",
    "account.deleted": "Your account is deleted.",
  },
  ro: {
    "account.title": "Cont",
    "account.none": "Niciun jucător nu este conectat în acest browser.",
    "account.none.help": "Conectează-te cu numele și parola contului tău sau începe ca jucător nou (un oaspete: adaugă mai târziu o parolă ca să-l păstrezi).",
    "account.signIn": "Conectează-te",
    "account.new": "Începe ca jucător nou",
    "account.name": "Nume",
    "account.since": "Joacă din",
    "account.kind": "Tip",
    "account.kind.guest": "Oaspete (fără parolă)",
    "account.kind.account": "Cont cu parolă",
    "account.stats": "Statisticile mele",
    "account.guest.note": "Acest jucător există doar în acest browser. Creează o parolă ca să te conectezi pe celelalte dispozitive și să-ți păstrezi jocurile și statisticile dacă browserul le uită.",
    "account.devices.note": "Pe alt dispozitiv, deschide acest site, alege „Am deja un cont: Conectează-te” și dă numele tău și această parolă.",
    "account.password.create": "Creează o parolă",
    "account.password.change": "Schimbă parola",
    "account.password.current": "Parola actuală",
    "account.password.new": "Parola nouă",
    "account.password.repeat": "Parola nouă, încă o dată",
    "account.password.help": "Între 10 și 256 de caractere, și nu numele tău.",
    "account.password.help.change": "Între 10 și 256 de caractere, și nu numele tău. Celelalte dispozitive și aplicații sunt deconectate.",
    "account.password.differ": "Cele două parole noi diferă.",
    "account.password.save.create": "Creează parola",
    "account.password.save.change": "Schimbă parola",
    "account.password.created": "Parola ta este setată: conectează-te cu ea pe celelalte dispozitive.",
    "account.password.changed": "Parola ta este schimbată; celelalte dispozitive sunt deconectate.",
    "account.sessions": "Dispozitive și aplicații",
    "account.sessions.caption": "Unde este conectat acest cont",
    "account.sessions.device": "Dispozitiv sau aplicație",
    "account.sessions.created": "Conectat la",
    "account.sessions.used": "Folosit ultima dată",
    "account.sessions.scopes": "Acces",
    "account.sessions.action": "Acțiune",
    "account.sessions.here": "Acest dispozitiv",
    "account.sessions.app": "Aplicația {name}",
    "account.sessions.end": "Încheie",
    "account.sessions.end.label": "Încheie sesiunea „{label}” (folosită ultima dată {date})",
    "account.sessions.ended": "Sesiunea „{label}” este încheiată.",
    "account.scopes.all": "Tot",
    "scope.play": "joc",
    "scope.race": "curse",
    "scope.account": "cont",
    "scope.read": "jocuri ascunse",
    "account.signOut.title": "Deconectare",
    "account.signOut.text": "Deconectează-te din acest browser. Jocurile și statisticile rămân în contul tău.",
    "account.signOut.guest": "Încă nu ai o parolă: după deconectare, nimeni nu se mai poate conecta ca acest jucător. Creează întâi o parolă ca să-l păstrezi.",
    "account.signOut": "Deconectează-te",
    "account.signOut.confirm.title": "Te deconectezi fără parolă?",
    "account.signOut.confirm.yes": "Deconectează-te oricum",
    "account.signedOut": "Te-ai deconectat.",
    "account.export.title": "Datele tale",
    "account.export.text": "Descarcă tot ce păstrează serverul despre tine (profil, setări, sesiuni, jocuri cu reluările lor, curse, statistici) într-un singur fișier JSON.",
    "account.export": "Descarcă datele mele",
    "account.export.busy": "Se pregătește…",
    "account.exported": "Datele tale sunt descărcate ca {file}.",
    "account.delete.title": "Șterge contul",
    "account.delete.text": "Numele, parola, sesiunile, setările și semințele tale sunt șterse imediat, iar numele tău poate fi luat de oricine. Jocurile rămân în curse și în istoricul împărțirilor, jucate de „jucător șters”, și ies din toate clasamentele.",
    "account.delete": "Șterge-mi contul…",
    "account.delete.confirm.title": "Îți ștergi contul definitiv?",
    "account.delete.confirm.text": "Nu se poate anula: „{name}” și tot ce este păstrat cu el sunt șterse, pe toate dispozitivele.",
    "account.delete.password": "Parola ta",
    "account.delete.yes": "Șterge definitiv",
    "account.deleted": "Contul tău este șters.",
  },
  he: {
    "account.title": "חשבון",
    "account.none": "אף שחקן אינו מחובר בדפדפן הזה.",
    "account.none.help": "התחברו עם השם והסיסמה של החשבון שלכם, או התחילו כשחקן חדש (אורח: אפשר להוסיף סיסמה מאוחר יותר כדי לשמור עליו).",
    "account.signIn": "התחברות",
    "account.new": "להתחיל כשחקן חדש",
    "account.name": "שם",
    "account.since": "משחק/ת מאז",
    "account.kind": "סוג",
    "account.kind.guest": "אורח (בלי סיסמה)",
    "account.kind.account": "חשבון עם סיסמה",
    "account.stats": "הסטטיסטיקה שלי",
    "account.guest.note": "השחקן הזה קיים רק בדפדפן הזה. צרו סיסמה כדי להתחבר במכשירים האחרים שלכם, וכדי לשמור את המשחקים והסטטיסטיקה אם הדפדפן ישכח אותם.",
    "account.devices.note": "במכשיר אחר, פתחו את האתר, בחרו „כבר יש לי חשבון: התחברות”, והזינו את השם שלכם ואת הסיסמה הזו.",
    "account.password.create": "יצירת סיסמה",
    "account.password.change": "שינוי הסיסמה",
    "account.password.current": "הסיסמה הנוכחית",
    "account.password.new": "סיסמה חדשה",
    "account.password.repeat": "הסיסמה החדשה שוב",
    "account.password.help": "בין 10 ל־256 תווים, ולא השם שלכם.",
    "account.password.help.change": "בין 10 ל־256 תווים, ולא השם שלכם. המכשירים והיישומים האחרים שלכם ינותקו.",
    "account.password.differ": "שתי הסיסמאות החדשות שונות.",
    "account.password.save.create": "יצירת הסיסמה",
    "account.password.save.change": "שינוי הסיסמה",
    "account.password.created": "הסיסמה שלכם נקבעה: התחברו איתה במכשירים האחרים.",
    "account.password.changed": "הסיסמה שלכם שונתה; המכשירים האחרים נותקו.",
    "account.sessions": "מכשירים ויישומים",
    "account.sessions.caption": "היכן החשבון הזה מחובר",
    "account.sessions.device": "מכשיר או יישום",
    "account.sessions.created": "התחברות",
    "account.sessions.used": "שימוש אחרון",
    "account.sessions.scopes": "גישה",
    "account.sessions.action": "פעולה",
    "account.sessions.here": "המכשיר הזה",
    "account.sessions.app": "יישום: {name}",
    "account.sessions.end": "ניתוק",
    "account.sessions.end.label": "ניתוק ההתחברות „{label}” (שימוש אחרון {date})",
    "account.sessions.ended": "ההתחברות „{label}” נותקה.",
    "account.scopes.all": "הכול",
    "scope.play": "משחק",
    "scope.race": "מרוצים",
    "scope.account": "חשבון",
    "scope.read": "משחקים מוסתרים",
    "account.signOut.title": "התנתקות",
    "account.signOut.text": "התנתקו מהדפדפן הזה. המשחקים והסטטיסטיקה נשארים בחשבון שלכם.",
    "account.signOut.guest": "עדיין אין לכם סיסמה: אחרי ההתנתקות אף אחד לא יוכל להתחבר שוב כשחקן הזה. צרו קודם סיסמה כדי לשמור עליו.",
    "account.signOut": "התנתקות",
    "account.signOut.confirm.title": "להתנתק בלי סיסמה?",
    "account.signOut.confirm.yes": "להתנתק בכל זאת",
    "account.signedOut": "התנתקתם.",
    "account.export.title": "הנתונים שלכם",
    "account.export.text": "הורידו את כל מה שהשרת שומר עליכם (פרופיל, הגדרות, התחברויות, משחקים עם השידורים החוזרים שלהם, מרוצים, סטטיסטיקה) כקובץ JSON אחד.",
    "account.export": "הורדת הנתונים שלי",
    "account.export.busy": "מכין…",
    "account.exported": "הנתונים שלכם הורדו בשם {file}.",
    "account.delete.title": "מחיקת החשבון",
    "account.delete.text": "השם, הסיסמה, ההתחברויות, ההגדרות והזרעים שלכם נמחקים מיד, והשם שלכם פנוי לכל אחד. המשחקים נשארים במרוצים וברשומות החלוקות, כמשחקים של „שחקן שנמחק”, ויוצאים מכל טבלאות המובילים.",
    "account.delete": "מחיקת החשבון שלי…",
    "account.delete.confirm.title": "למחוק את החשבון לצמיתות?",
    "account.delete.confirm.text": "אי אפשר לבטל: „{name}” וכל מה שנשמר איתו נמחקים, בכל המכשירים.",
    "account.delete.password": "הסיסמה שלכם",
    "account.delete.yes": "למחוק לצמיתות",
    "account.deleted": "החשבון שלכם נמחק.",
  },
});

const SCOPES = ["play", "race", "account", "read"];
const DIALOGS = "#account-delete-dialog, #account-sign-out-confirm";

function pair(label, value, id) {
  return el("div", { class: "pair" }, el("dt", { text: label }), el("dd", { id }, value));
}

function scopesText(scopes) {
  if (SCOPES.every((scope) => scopes.includes(scope))) return t("account.scopes.all");
  return scopes.map((scope) => t(`scope.${scope}`)).join(", ");
}

// A session's name as the list shows it: its app's, else its label (a User-Agent, as the server
// labels a sign-up's session, as the device it names: "Chrome on Linux").
function sessionLabel(session) {
  if (session.app) return t("account.sessions.app", { name: session.app.name });
  if (/^Mozilla\//.test(session.label)) return deviceLabel(session.label) || session.label;
  return session.label;
}

export async function mount(root, params) {
  document.title = `${t("account.title")} — ${t("brand")}`;
  let alive = true;
  const here = () => alive && params.current();
  const title = el("h2", { id: "account-title", text: t("account.title") });
  const status = el("p", { id: "account-status", class: "status", role: "status" });
  const problem = el("p", { id: "account-error", class: "problem", role: "alert" });
  const body = el("div", { class: "account-body" });
  root.replaceChildren(el("section", { class: "view-account", "aria-labelledby": "account-title" },
    title, status, problem, body));

  function say(text) {
    status.textContent = text;
  }

  // --- without a player -------------------------------------------------------------------------

  function drawSignedOut() {
    const ask = async (mode) => {
      await ensurePlayer({ mode });
      if (here()) await draw();
    };
    body.replaceChildren(el("div", { class: "account-none", id: "account-none" },
      el("p", { class: "empty", text: t("account.none") }),
      el("p", { class: "help", text: t("account.none.help") }),
      el("div", { class: "actions" },
        el("button", { type: "button", class: "primary", id: "account-sign-in",
          text: t("account.signIn"), onclick: () => ask("sign-in") }),
        el("button", { type: "button", id: "account-new", text: t("account.new"),
          onclick: () => ask("name") }))));
  }

  // --- with one -----------------------------------------------------------------------------------

  async function draw() {
    problem.textContent = "";
    const me = player();
    if (!me) {
      drawSignedOut();
      return;
    }
    let profile;
    let sessions;
    try {
      [profile, { sessions }] = await Promise.all([get("/me"), get("/me/sessions")]);
    } catch (error) {
      if (!here()) return;
      if (error.status === 401) drawSignedOut(); // the welcome window asks (lib/session.js)
      else problem.textContent = problemText(error);
      return;
    }
    if (!here() || player() !== me) return;
    if (profile.name !== me.name) remember({ ...me, name: profile.name });
    body.replaceChildren(
      profileSection(profile),
      passwordSection(profile),
      sessionsSection(sessions),
      signOutSection(profile),
      exportSection(profile),
      deleteSection(profile));
  }

  function profileSection(profile) {
    return el("section", { class: "account-part", "aria-labelledby": "account-profile-title" },
      el("h3", { id: "account-profile-title", class: "visually-hidden", text: profile.name }),
      el("dl", { class: "account-info" },
        pair(t("account.name"), el("bdi", { text: profile.name }), "account-name"),
        pair(t("account.since"), formatDate(profile.created_at), "account-since"),
        pair(t("account.kind"), t(profile.has_password ? "account.kind.account"
          : "account.kind.guest"), "account-kind")),
      el("p", { class: "note", id: profile.has_password ? "account-devices-note" : "account-guest-note",
        text: t(profile.has_password ? "account.devices.note" : "account.guest.note") }),
      el("p", {}, el("a", { href: "#/me", text: t("account.stats") })));
  }

  function passwordInput(id, autocomplete, describedBy = null) {
    return el("input", { id, type: "password", name: id, required: true,
      autocomplete, "aria-describedby": describedBy });
  }

  function passwordSection(profile) {
    const change = profile.has_password;
    const current = change ? passwordInput("account-current-password", "current-password") : null;
    const next = passwordInput("account-new-password", "new-password", "account-password-help");
    const repeat = passwordInput("account-repeat-password", "new-password");
    const error = el("p", { id: "account-password-error", class: "problem", role: "alert" });
    const save = el("button", { type: "submit", class: "primary", id: "account-password-save",
      text: t(change ? "account.password.save.change" : "account.password.save.create") });
    // a hidden name field, so that a password manager keeps the password with its name
    const username = el("input", { type: "text", name: "username", autocomplete: "username",
      value: profile.name, hidden: true, readonly: true, tabindex: "-1", "aria-hidden": "true" });
    const form = el("form", { class: "account-form", id: "account-password-form" },
      username,
      current ? el("label", { for: current.id, text: t("account.password.current") }) : null,
      current,
      el("label", { for: next.id, text: t("account.password.new") }), next,
      el("p", { class: "help", id: "account-password-help",
        text: t(change ? "account.password.help.change" : "account.password.help") }),
      el("label", { for: repeat.id, text: t("account.password.repeat") }), repeat,
      error,
      el("div", { class: "actions" }, save));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (save.disabled) return;
      error.textContent = "";
      if (next.value !== repeat.value) {
        error.textContent = t("account.password.differ");
        repeat.focus();
        return;
      }
      const sent = { password: next.value };
      if (current) sent.current_password = current.value;
      save.disabled = true;
      try {
        await put("/me/password", sent);
        if (!here()) return;
        await draw();
        say(t(change ? "account.password.changed" : "account.password.created"));
      } catch (refusal) {
        if (!here()) return;
        save.disabled = false;
        error.textContent = fieldProblemText(refusal);
        const field = refusal.problem && refusal.problem.errors && refusal.problem.errors[0]
          ? refusal.problem.errors[0].field : null;
        if (current && (refusal.status === 403 || field === "current_password")) current.focus();
        else next.focus();
      }
    });
    return el("section", { class: "account-part", "aria-labelledby": "account-password-title" },
      el("h3", { id: "account-password-title",
        text: t(change ? "account.password.change" : "account.password.create") }),
      form);
  }

  function sessionsSection(sessions) {
    const error = el("p", { id: "account-sessions-error", class: "problem", role: "alert" });
    const tbody = el("tbody");
    const table = el("table", { id: "account-sessions", class: "account-sessions" },
      el("caption", { text: t("account.sessions.caption") }),
      el("thead", {}, el("tr", {},
        ["device", "created", "used", "scopes", "action"].map((key) =>
          el("th", { scope: "col", class: `col-${key}`, text: t(`account.sessions.${key}`) })))),
      tbody);

    async function refresh() {
      try {
        const answer = await get("/me/sessions");
        if (here()) fill(answer.sessions);
      } catch (refusal) {
        if (here()) error.textContent = problemText(refusal);
      }
    }

    async function end(session, button) {
      button.disabled = true;
      error.textContent = "";
      try {
        await del(`/me/sessions/${encodeURIComponent(session.id)}`);
        if (!here()) return;
        say(t("account.sessions.ended", { label: sessionLabel(session) }));
      } catch (refusal) {
        if (!here()) return;
        if (refusal.status !== 404) error.textContent = problemText(refusal); // 404: ended already
      }
      await refresh();
      table.focus();
    }

    function fill(list) {
      tbody.replaceChildren(...list.map((session) => {
        const label = sessionLabel(session);
        const used = formatDate(session.last_used_at);
        const action = session.current
          ? el("strong", { class: "here", text: t("account.sessions.here") })
          : el("button", { type: "button", class: "small end-session",
            "aria-label": t("account.sessions.end.label", { label, date: used }),
            text: t("account.sessions.end") });
        if (!session.current) action.addEventListener("click", () => end(session, action));
        return el("tr", { "data-session": session.id, "data-current": session.current ? "true"
          : "false" },
          el("th", { scope: "row", class: "col-device" }, el("bdi", { text: label })),
          el("td", { class: "col-created", "data-label": t("account.sessions.created"),
            text: formatDate(session.created_at) }),
          el("td", { class: "col-used", "data-label": t("account.sessions.used"), text: used }),
          el("td", { class: "col-scopes", "data-label": t("account.sessions.scopes"),
            text: scopesText(session.scopes || []) }),
          el("td", { class: "col-action" }, action));
      }));
    }

    table.setAttribute("tabindex", "-1");
    fill(sessions);
    return el("section", { class: "account-part", "aria-labelledby": "account-sessions-title" },
      el("h3", { id: "account-sessions-title", text: t("account.sessions") }),
      error,
      el("div", { class: "table-wrap" }, table));
  }

  // Signed out, or deleted: this browser forgets its player and the view says so.
  async function leftHere(message) {
    forget();
    if (!here()) return;
    await draw();
    say(message);
    toast(message);
  }

  function signOutSection(profile) {
    const error = el("p", { id: "account-sign-out-error", class: "problem", role: "alert" });
    const button = el("button", { type: "button", id: "account-sign-out",
      text: t("account.signOut") });
    button.addEventListener("click", async () => {
      error.textContent = "";
      if (!profile.has_password) {
        const sure = await dialog({
          title: t("account.signOut.confirm.title"),
          body: el("p", { text: t("account.signOut.guest") }),
          buttons: [{ label: t("account.signOut.confirm.yes"), value: true, primary: true },
            { label: t("cancel"), value: false }],
          id: "account-sign-out-confirm",
        });
        if (!sure || !here()) return;
      }
      button.disabled = true;
      try {
        await del("/me/sessions/current");
      } catch (refusal) {
        if (!here()) return;
        if (refusal.status !== 401) { // 401: ended already; the welcome window asks
          button.disabled = false;
          error.textContent = problemText(refusal);
          return;
        }
      }
      await leftHere(t("account.signedOut"));
    });
    return el("section", { class: "account-part", "aria-labelledby": "account-sign-out-title" },
      el("h3", { id: "account-sign-out-title", text: t("account.signOut.title") }),
      el("p", { text: t(profile.has_password ? "account.signOut.text" : "account.signOut.guest") }),
      error,
      el("div", { class: "actions" }, button));
  }

  function exportSection(profile) {
    const error = el("p", { id: "account-export-error", class: "problem", role: "alert" });
    const button = el("button", { type: "button", id: "account-export", text: t("account.export") });
    button.addEventListener("click", async () => {
      error.textContent = "";
      button.disabled = true;
      button.textContent = t("account.export.busy");
      try {
        const { blob, filename } = await download("/me/export", `solitaire-${profile.id}.json`);
        if (!here()) return;
        const address = URL.createObjectURL(blob);
        const link = el("a", { href: address, download: filename, hidden: true });
        document.body.append(link);
        link.click();
        link.remove();
        setTimeout(() => URL.revokeObjectURL(address), 10000);
        say(t("account.exported", { file: filename }));
      } catch (refusal) {
        if (here()) error.textContent = problemText(refusal);
      } finally {
        button.disabled = false;
        button.textContent = t("account.export");
      }
    });
    return el("section", { class: "account-part", "aria-labelledby": "account-export-title" },
      el("h3", { id: "account-export-title", text: t("account.export.title") }),
      el("p", { text: t("account.export.text") }),
      error,
      el("div", { class: "actions" }, button));
  }

  function deleteSection(profile) {
    const button = el("button", { type: "button", id: "account-delete", class: "danger",
      text: t("account.delete"), onclick: () => deleteDialog(profile) });
    return el("section", { class: "account-part account-danger",
      "aria-labelledby": "account-delete-title" },
      el("h3", { id: "account-delete-title", text: t("account.delete.title") }),
      el("p", { text: t("account.delete.text") }),
      el("div", { class: "actions" }, button));
  }

  // The question before deleting: the password when one is set, then DELETE /api/v1/me.
  function deleteDialog(profile) {
    const box = el("dialog", { class: "dialog", id: "account-delete-dialog",
      "aria-labelledby": "account-delete-dialog-title" });
    const password = profile.has_password
      ? passwordInput("account-delete-password", "current-password") : null;
    const error = el("p", { id: "account-delete-error", class: "problem", role: "alert" });
    const confirm = el("button", { type: "submit", class: "danger", id: "account-delete-confirm",
      text: t("account.delete.yes") });
    const cancel = el("button", { type: "button", id: "account-delete-cancel", text: t("cancel"),
      onclick: () => box.close() });
    const form = el("form", {},
      el("p", { text: t("account.delete.confirm.text", { name: profile.name }) }),
      el("p", { class: "note", text: t("account.delete.text") }),
      password ? el("label", { for: password.id, text: t("account.delete.password") }) : null,
      password,
      error,
      el("div", { class: "actions" }, confirm, cancel));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (box.dataset.busy) return;
      box.dataset.busy = "1";
      confirm.disabled = true;
      error.textContent = "";
      try {
        await del("/me", password ? { password: password.value } : undefined);
        delete box.dataset.busy;
        box.close();
        await leftHere(t("account.deleted"));
      } catch (refusal) {
        delete box.dataset.busy;
        confirm.disabled = false;
        error.textContent = fieldProblemText(refusal);
        if (password) {
          password.select();
          password.focus();
        }
      }
    });
    box.append(el("h2", { id: "account-delete-dialog-title",
      text: t("account.delete.confirm.title") }), form);
    box.addEventListener("cancel", (event) => {
      if (box.dataset.busy) event.preventDefault();
    });
    box.addEventListener("close", () => box.remove());
    document.body.append(box);
    box.showModal();
    (password || cancel).focus();
  }

  await draw();
  return () => {
    alive = false;
    for (const box of document.querySelectorAll(DIALOGS)) box.close();
  };
}
