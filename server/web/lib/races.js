// Races as the pages show them (SPEC 2.6.1), shared by the Races page (views/races.js), the
// Watch page (views/watch-list.js), one race (views/race.js) and a race game (views/play/):
// one race in a list, a list of races read page by page, and the text of a refused race request.
//
// The server words a race's refusals (409 problems with a `rule`) in English only: in Romanian
// and Hebrew the page says the same from the rule (`refusalText`); in English it shows the
// server's own words.
import { get, query } from "./api.js";
import { formatDate, formatTime } from "./format.js";
import { define, language, t } from "./i18n.js";
import { playerName } from "./players.js";
import { player } from "./session.js";
import { el, problemText } from "./ui.js";

define({
  en: {
    "races.minutes": "{n} min",
    "races.empty.open": "No open race right now: create one!",
    "races.empty.running": "No race is running.",
    "races.empty.finished": "No race has finished yet.",
    "races.more": "More",
    "races.of": "{name}'s race",
    "races.players": "{count} of {seats} players",
    "races.deal.winnable": "winnable deal",
    "races.deal.any": "any deal",
    "races.created": "created {date}",
    "races.startsIn": "starts in {seconds} s",
    "races.endsIn": "ends in {time}",
    "races.wonBy": "first: {names}",
    "races.ended": "ended {date}",
    "races.join": "Join",
    "races.join.label": "Join {name}'s race",
    "races.seated": "You are in",
    "races.state.open": "open",
    "races.state.starting": "starting",
    "races.state.running": "running",
    "races.state.finished": "finished",
    "races.state.cancelled": "cancelled",
  },
  ro: {
    "races.refused.race_full": "Toate locurile acestei curse sunt ocupate.",
    "races.refused.race_started": "Cursa a început deja.",
    "races.refused.already_seated": "Ai deja un loc în această cursă.",
    "races.refused.not_seated": "Nu ai un loc în această cursă.",
    "races.refused.too_few_players": "O cursă pornește cu cel puțin doi jucători.",
    "races.refused.race_not_started": "Cursa nu a început încă: așteaptă numărătoarea inversă.",
    "races.refused.race_over": "Cursa s-a încheiat: limita de timp a trecut.",
    "races.refused.race_no_hints": "Într-o cursă nu există indicii.",
    "races.refused.creator": "Doar creatorul cursei o poate porni.",
    "races.minutes": "{n} min",
    "races.empty.open": "Nicio cursă deschisă acum: creează una!",
    "races.empty.running": "Nicio cursă nu este în desfășurare.",
    "races.empty.finished": "Nicio cursă nu s-a încheiat încă.",
    "races.more": "Mai multe",
    "races.of": "Cursa lui {name}",
    "races.players": "{count} din {seats} jucători",
    "races.deal.winnable": "împărțire câștigabilă",
    "races.deal.any": "orice împărțire",
    "races.created": "creată {date}",
    "races.startsIn": "pornește în {seconds} s",
    "races.endsIn": "se încheie în {time}",
    "races.wonBy": "primul loc: {names}",
    "races.ended": "încheiată {date}",
    "races.join": "Intră",
    "races.join.label": "Intră în cursa lui {name}",
    "races.seated": "Ești înscris",
    "races.state.open": "deschisă",
    "races.state.starting": "pornește",
    "races.state.running": "în desfășurare",
    "races.state.finished": "încheiată",
    "races.state.cancelled": "anulată",
  },
  he: {
    "races.minutes": "{n} דק׳",
    "races.empty.open": "אין כרגע מרוץ פתוח: צרו אחד!",
    "races.empty.running": "אין מרוץ בעיצומו.",
    "races.empty.finished": "עוד לא הסתיים אף מרוץ.",
    "races.more": "עוד",
    "races.of": "המרוץ של {name}",
    "races.players": "{count} מתוך {seats} שחקנים",
    "races.deal.winnable": "חלוקה פתירה",
    "races.deal.any": "כל חלוקה",
    "races.created": "נוצר {date}",
    "races.startsIn": "מתחיל בעוד {seconds} שניות",
    "races.endsIn": "מסתיים בעוד {time}",
    "races.wonBy": "מקום ראשון: {names}",
    "races.ended": "הסתיים {date}",
    "races.join": "הצטרפו",
    "races.join.label": "הצטרפו למרוץ של {name}",
    "races.seated": "אתם רשומים",
    "races.state.open": "פתוח",
    "races.state.starting": "מתחיל",
    "races.state.running": "בעיצומו",
    "races.state.finished": "הסתיים",
    "races.state.cancelled": "בוטל",
    "races.refused.race_full": "כל המקומות במרוץ הזה תפוסים.",
    "races.refused.race_started": "המרוץ הזה כבר התחיל.",
    "races.refused.already_seated": "כבר יש לכם מקום במרוץ הזה.",
    "races.refused.not_seated": "אין לכם מקום במרוץ הזה.",
    "races.refused.too_few_players": "מרוץ מתחיל עם שני שחקנים לפחות.",
    "races.refused.race_not_started": "המרוץ עוד לא התחיל: חכו לספירה לאחור.",
    "races.refused.race_over": "המרוץ נגמר: מגבלת הזמן עברה.",
    "races.refused.race_no_hints": "אין רמזים במרוץ.",
    "races.refused.creator": "רק מי שיצר את המרוץ יכול להתחיל אותו.",
  },
});

// The text of a refused race request: the server's words in English; in another language the
// same from the problem's `rule` when the page knows it (the server answers in English only).
export function refusalText(error) {
  const problem = (error && error.problem) || {};
  if (language() !== "en") {
    let key = null;
    if (error.status === 409 && problem.rule) key = `races.refused.${problem.rule}`;
    else if (error.status === 403) key = "races.refused.creator";
    if (key && t(key) !== key) return t(key);
  }
  return problemText(error);
}

// What a race is doing, as of its document's `now` (the server's clock).
function when(race) {
  const now = Date.parse(race.now);
  if (race.status === "open") return t("races.created", { date: formatDate(race.created_at) });
  if (race.status === "finished") {
    const first = (race.standings || []).filter((entry) => entry.place === 1)
      .map((entry) => playerName(entry.player));
    const ended = t("races.ended", { date: formatDate(race.ended_at) });
    return first.length ? `${t("races.wonBy", { names: first.join(", ") })} · ${ended}` : ended;
  }
  if (race.status === "cancelled" || !race.starts_at) return "";
  const starts = Date.parse(race.starts_at);
  if (now < starts) return t("races.startsIn", { seconds: Math.ceil((starts - now) / 1000) });
  const left = Math.max(0, starts + race.time_limit_s * 1000 - now);
  return t("races.endsIn", { time: formatTime(Math.ceil(left / 1000) * 1000) });
}

// One race in a list: its link, its rule and state, its players and terms; a Join button when
// `join` is given, the race is open with a seat left and this browser's player is not in it.
export function raceItem(race, { join = null } = {}) {
  const me = player();
  const seated = Boolean(me && race.players.some((p) => p.id === me.id));
  const name = playerName(race.creator);
  const open = race.status === "open";
  const canJoin = join && open && !seated && race.players.length < race.seats;
  const facts = [
    t("races.players", { count: race.players.length, seats: race.seats }),
    t("races.minutes", { n: Math.round(race.time_limit_s / 60) }),
    t(race.winnable ? "races.deal.winnable" : "races.deal.any"),
    when(race),
  ].filter(Boolean);
  return el("li", { class: "race-item", "data-race": race.id, "data-status": race.status },
    el("div", { class: "race-item-head" },
      el("a", { href: `#/race/${race.id}`, class: "race-link", text: t("races.of", { name }) }),
      el("span", { class: "tag", text: t(`rule.${race.rule}`) }),
      el("span", { class: "tag state", "data-state": race.status,
        text: t(`races.state.${race.status}`) }),
      canJoin ? el("button", { type: "button", class: "primary join", id: `race-join-${race.id}`,
        "aria-label": t("races.join.label", { name }), text: t("races.join"),
        onclick: () => join(race) }) : null,
      seated && open ? el("span", { class: "seated", text: t("races.seated") }) : null),
    el("p", { class: "race-names" }, race.players.map(playerName).join(", ")),
    el("p", { class: "race-facts", text: facts.join(" · ") }));
}

// A list of races (a section's `ul`), with its empty note and More button, read page by page
// from GET /api/v1/races?status=… . `refresh()` reads its first page again, leaving the focus
// where it was; `more()` adds the next page.
export function raceList({ status, id, join = null, limit = 10 }) {
  const list = el("ul", { class: "race-list", id: `${id}-list` });
  const empty = el("p", { class: "empty", id: `${id}-empty`, hidden: true,
    text: t(`races.empty.${status}`) });
  const moreButton = el("button", { type: "button", class: "more", id: `${id}-more`, hidden: true,
    text: t("races.more") });
  const problem = el("p", { class: "problem", id: `${id}-error`, role: "alert" });
  let cursor = null;
  let turn = 0;
  let pages = 1;

  async function load(after, replace) {
    const mine = ++turn;
    moreButton.disabled = true;
    try {
      const answer = await get(`/races${query({ status, limit, after })}`);
      if (mine !== turn) return;
      problem.textContent = "";
      const items = answer.races.map((race) => raceItem(race, { join }));
      if (replace) {
        const focused = document.activeElement && list.contains(document.activeElement)
          ? document.activeElement.id : null;
        list.replaceChildren(...items);
        if (focused) document.getElementById(focused)?.focus();
      } else {
        list.append(...items);
      }
      cursor = answer.next;
      list.hidden = list.children.length === 0;
      empty.hidden = !list.hidden;
      moreButton.hidden = cursor === null || cursor === undefined;
    } catch (error) {
      if (mine === turn) problem.textContent = problemText(error);
    } finally {
      if (mine === turn) moreButton.disabled = false;
    }
  }

  moreButton.addEventListener("click", () => {
    pages += 1;
    load(cursor, false);
  });
  return {
    nodes: [problem, list, empty, moreButton],
    // once more pages are shown, a refresh would take them away: only the first is read again
    refresh: () => (pages === 1 ? load(null, true) : Promise.resolve()),
    load: () => load(null, true),
    stop: () => {
      turn += 1;
    },
  };
}
