// #/races: the races (SPEC 2.6.1). Create one (rule, seats, a winnable deal or any, the time
// limit, listed or by its link only), join an open one, and find the running and finished ones;
// the server's refusals are shown as it words them (lib/races.js). The lists come from
// GET /api/v1/races and are read again every few seconds; one race is followed live in its own
// view (views/race.js).
import { post } from "../lib/api.js";
import { define, t } from "../lib/i18n.js";
import { raceList, refusalText } from "../lib/races.js";
import { ensurePlayer } from "../lib/session.js";
import { el, fieldProblemText } from "../lib/ui.js";

define({
  en: {
    "races.title": "Races",
    "races.intro": "Race other players on the same secret deal: everyone sees everyone's progress, nobody sees another's cards until the race ends.",
    "races.create": "Create a race",
    "races.rule": "Rule",
    "races.seats": "Seats",
    "races.limit": "Time limit",
    "races.winnable": "Winnable deal only",
    "races.winnable.help": "A deal the solver has proved winnable.",
    "races.public": "List it publicly",
    "races.public.help": "Unlisted races are joined by their link only.",
    "races.submit": "Create the race",
    "races.creating": "Dealing…",
    "races.open": "Open races",
    "races.running": "Races in progress",
    "races.finished": "Finished races",
    "races.refresh": "Refresh",
  },
  ro: {
    "races.title": "Curse",
    "races.intro": "Întrece-te cu alți jucători pe aceeași împărțire secretă: toți văd progresul tuturor, nimeni nu vede cărțile altuia până la sfârșitul cursei.",
    "races.create": "Creează o cursă",
    "races.rule": "Regula",
    "races.seats": "Locuri",
    "races.limit": "Limită de timp",
    "races.winnable": "Doar împărțire câștigabilă",
    "races.winnable.help": "O împărțire despre care rezolvitorul a dovedit că poate fi câștigată.",
    "races.public": "Listează-o public",
    "races.public.help": "La cursele nelistate se intră doar prin legătura lor.",
    "races.submit": "Creează cursa",
    "races.creating": "Se împarte…",
    "races.open": "Curse deschise",
    "races.running": "Curse în desfășurare",
    "races.finished": "Curse încheiate",
    "races.refresh": "Reîmprospătează",
  },
  he: {
    "races.title": "מרוצים",
    "races.intro": "התחרו בשחקנים אחרים על אותה חלוקה סודית: כולם רואים את ההתקדמות של כולם, אף אחד לא רואה את הקלפים של האחר עד סוף המרוץ.",
    "races.create": "יצירת מרוץ",
    "races.rule": "חוק",
    "races.seats": "מקומות",
    "races.limit": "מגבלת זמן",
    "races.winnable": "רק חלוקה פתירה",
    "races.winnable.help": "חלוקה שהפותר הוכיח שאפשר לנצח בה.",
    "races.public": "לפרסם ברשימה",
    "races.public.help": "למרוץ שאינו ברשימה מצטרפים רק דרך הקישור שלו.",
    "races.submit": "צרו את המרוץ",
    "races.creating": "מחלק…",
    "races.open": "מרוצים פתוחים",
    "races.running": "מרוצים בעיצומם",
    "races.finished": "מרוצים שהסתיימו",
    "races.refresh": "רענון",
  },
});

const RULES = ["classic", "relaxed"];
const SEATS = [2, 3, 4, 5, 6, 7, 8];
const MINUTES = [1, 2, 3, 5, 10, 15, 20, 30, 45, 60];
const REFRESH_MS = 8000;
const LISTS = ["open", "running", "finished"];

function field(id, label, control, help = null) {
  return el("div", { class: "field" },
    el("label", { for: id, text: label }), control,
    help ? el("small", { id: `${id}-help`, class: "help", text: help }) : null);
}

function check(id, label, checked, help) {
  return el("div", { class: "field field-check" },
    el("input", { id, name: id.replace("race-", ""), type: "checkbox", checked,
      "aria-describedby": `${id}-help` }),
    el("label", { for: id, text: label }),
    el("small", { id: `${id}-help`, class: "help", text: help }));
}

export async function mount(root, params) {
  document.title = `${t("races.title")} — ${t("brand")}`;
  let alive = true;
  const here = () => alive && params.current();

  const rule = el("select", { id: "race-rule", name: "rule" },
    RULES.map((value) => el("option", { value, text: t(`rule.${value}`) })));
  const seats = el("select", { id: "race-seats", name: "seats" },
    SEATS.map((value) => el("option", { value: String(value), text: String(value) })));
  seats.value = "4";
  const limit = el("select", { id: "race-limit", name: "time_limit" },
    MINUTES.map((value) => el("option", { value: String(value * 60),
      text: t("races.minutes", { n: value }) })));
  limit.value = "600";
  const submit = el("button", { type: "submit", class: "primary", id: "race-create",
    text: t("races.submit") });
  const createProblem = el("p", { id: "race-create-error", class: "problem", role: "alert" });
  const form = el("form", { class: "race-form", id: "race-form",
    "aria-labelledby": "race-form-title" },
  el("h3", { id: "race-form-title", text: t("races.create") }),
  el("div", { class: "fields" },
    field("race-rule", t("races.rule"), rule),
    field("race-seats", t("races.seats"), seats),
    field("race-limit", t("races.limit"), limit),
    check("race-winnable", t("races.winnable"), true, t("races.winnable.help")),
    check("race-public", t("races.public"), true, t("races.public.help")),
    el("div", { class: "field field-submit" }, submit)),
  createProblem);

  const joinProblem = el("p", { id: "races-error", class: "problem", role: "alert" });
  async function join(race) {
    joinProblem.textContent = "";
    try {
      await ensurePlayer();
      await post(`/races/${encodeURIComponent(race.id)}/join`);
      if (here()) location.hash = `#/race/${race.id}`;
    } catch (error) {
      if (!here()) return;
      joinProblem.textContent = refusalText(error);
      refresh();
    }
  }

  const lists = Object.fromEntries(LISTS.map((status) => [status,
    raceList({ status, id: `races-${status}`, join: status === "open" ? join : null,
      limit: status === "finished" ? 10 : 20 })]));
  const section = (status) => el("section", { class: "race-section",
    "aria-labelledby": `races-${status}-title` },
  el("h3", { id: `races-${status}-title`, text: t(`races.${status}`) }),
  ...lists[status].nodes);
  const refreshButton = el("button", { type: "button", id: "races-refresh", class: "small",
    text: t("races.refresh"), onclick: () => refresh() });

  root.replaceChildren(el("section", { class: "view-races", "aria-labelledby": "races-title" },
    el("div", { class: "races-head" },
      el("h2", { id: "races-title", text: t("races.title") }), refreshButton),
    el("p", { class: "intro", text: t("races.intro") }),
    form, joinProblem, section("open"), section("running"), section("finished")));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (submit.disabled) return;
    createProblem.textContent = "";
    submit.disabled = true;
    submit.textContent = t("races.creating");
    try {
      await ensurePlayer();
      const race = await post("/races", {
        rule: rule.value,
        seats: Number(seats.value),
        time_limit_s: Number(limit.value),
        winnable: form.querySelector("#race-winnable").checked,
        public: form.querySelector("#race-public").checked,
      });
      if (here()) location.hash = `#/race/${race.id}`;
    } catch (error) {
      if (here()) createProblem.textContent = fieldProblemText(error);
    } finally {
      submit.disabled = false;
      submit.textContent = t("races.submit");
    }
  });

  function refresh() {
    return Promise.all([lists.open.refresh(), lists.running.refresh()]);
  }

  await Promise.all(LISTS.map((status) => lists[status].load()));
  const timer = setInterval(() => {
    if (here() && document.visibilityState === "visible") refresh();
  }, REFRESH_MS);
  return () => {
    alive = false;
    clearInterval(timer);
    for (const list of Object.values(lists)) list.stop();
  };
}
