// #/me and #/player/ID: a player's statistics per rule and their games, newest first. A game
// whose deal is still secret shows it as hidden (SPEC 2.3 "Fair play").
import { get, query } from "../lib/api.js";
import { codeOrHidden } from "../lib/deal.js";
import { formatDate, formatRating, formatTime } from "../lib/format.js";
import { define, language, t } from "../lib/i18n.js";
import { player } from "../lib/session.js";
import { el, problemText } from "../lib/ui.js";

define({
  en: {
    "stats.title": "Statistics",
    "stats.title.player": "Statistics of {name}",
    "stats.none": "You have not played yet in this browser.",
    "stats.start": "Start a game",
    "stats.you": "(you)",
    "stats.table": "Statistics per rule",
    "stats.measure": "Statistic",
    "stats.played": "Games played",
    "stats.won": "Games won",
    "stats.win_rate": "Win rate",
    "stats.best_score": "Best score",
    "stats.best_ranked_score": "Best ranked score",
    "stats.best_time": "Best time",
    "stats.fewest_moves": "Fewest moves",
    "stats.current_streak": "Current winning streak",
    "stats.longest_streak": "Longest winning streak",
    "stats.clean_wins": "Clean wins (no hint)",
    "stats.daily_streak": "Daily deal streak (days)",
    "stats.race_rating": "Race rating",
    "stats.races": "Races",
    "stats.race": "Race",
    "stats.games": "Games",
    "stats.date": "Date",
    "stats.rule": "Rule",
    "stats.code": "Deal",
    "stats.status": "Status",
    "stats.score": "Score",
    "stats.moves": "Moves",
    "stats.time": "Time",
    "stats.links": "Links",
    "stats.replay": "Replay",
    "stats.watch": "Watch",
    "stats.continue": "Continue",
    "stats.link.label": "{action}: game {code} of {date}",
    "stats.link.label.hidden": "{action}: game of {date} (deal hidden)",
    "stats.more": "More",
    "stats.no_games": "No games yet.",
    "stats.boards": "See the leaderboards",
  },
  ro: {
    "stats.title": "Statistici",
    "stats.title.player": "Statisticile lui {name}",
    "stats.none": "Încă nu ai jucat în acest browser.",
    "stats.start": "Începe un joc",
    "stats.you": "(tu)",
    "stats.table": "Statistici pe reguli",
    "stats.measure": "Statistică",
    "stats.played": "Jocuri jucate",
    "stats.won": "Jocuri câștigate",
    "stats.win_rate": "Procent de câștig",
    "stats.best_score": "Cel mai bun punctaj",
    "stats.best_ranked_score": "Cel mai bun punctaj de clasament",
    "stats.best_time": "Cel mai bun timp",
    "stats.fewest_moves": "Cele mai puține mutări",
    "stats.current_streak": "Serie curentă de victorii",
    "stats.longest_streak": "Cea mai lungă serie de victorii",
    "stats.clean_wins": "Victorii curate (fără indiciu)",
    "stats.daily_streak": "Serie la jocul zilei (zile)",
    "stats.race_rating": "Rating la curse",
    "stats.races": "Curse",
    "stats.race": "Cursa",
    "stats.games": "Jocuri",
    "stats.date": "Data",
    "stats.rule": "Regula",
    "stats.code": "Împărțire",
    "stats.status": "Stare",
    "stats.score": "Punctaj",
    "stats.moves": "Mutări",
    "stats.time": "Timp",
    "stats.links": "Legături",
    "stats.replay": "Reluare",
    "stats.watch": "Urmărește",
    "stats.continue": "Continuă",
    "stats.link.label": "{action}: jocul {code} din {date}",
    "stats.link.label.hidden": "{action}: jocul din {date} (împărțire ascunsă)",
    "stats.more": "Mai multe",
    "stats.no_games": "Niciun joc încă.",
    "stats.boards": "Vezi clasamentele",
  },
  he: {
    "stats.title": "סטטיסטיקה",
    "stats.title.player": "הסטטיסטיקה של {name}",
    "stats.none": "עדיין לא שיחקת בדפדפן הזה.",
    "stats.start": "התחל משחק",
    "stats.you": "(את/ה)",
    "stats.table": "סטטיסטיקה לפי חוק",
    "stats.measure": "נתון",
    "stats.played": "משחקים ששוחקו",
    "stats.won": "ניצחונות",
    "stats.win_rate": "אחוז ניצחונות",
    "stats.best_score": "הניקוד הטוב ביותר",
    "stats.best_ranked_score": "הניקוד לדירוג הטוב ביותר",
    "stats.best_time": "הזמן הטוב ביותר",
    "stats.fewest_moves": "הכי מעט מהלכים",
    "stats.current_streak": "רצף ניצחונות נוכחי",
    "stats.longest_streak": "רצף הניצחונות הארוך ביותר",
    "stats.clean_wins": "ניצחונות נקיים (בלי רמז)",
    "stats.daily_streak": "רצף חלוקות יומיות (ימים)",
    "stats.race_rating": "דירוג מרוצים",
    "stats.races": "מרוצים",
    "stats.race": "המרוץ",
    "stats.games": "משחקים",
    "stats.date": "תאריך",
    "stats.rule": "חוק",
    "stats.code": "חלוקה",
    "stats.status": "מצב",
    "stats.score": "ניקוד",
    "stats.moves": "מהלכים",
    "stats.time": "זמן",
    "stats.links": "קישורים",
    "stats.replay": "שידור חוזר",
    "stats.watch": "צפייה",
    "stats.continue": "המשך",
    "stats.link.label": "{action}: משחק {code} מתאריך {date}",
    "stats.link.label.hidden": "{action}: משחק מתאריך {date} (חלוקה מוסתרת)",
    "stats.more": "עוד",
    "stats.no_games": "אין עדיין משחקים.",
    "stats.boards": "לטבלאות המובילים",
  },
});

const RULES = ["classic", "relaxed"];
const DASH = "—";

function percent(rate) {
  if (rate === null || rate === undefined) return DASH;
  return new Intl.NumberFormat(language(), { style: "percent", maximumFractionDigits: 1 })
    .format(rate);
}

const plain = (value) => (value === null || value === undefined ? DASH : String(value));
const time = (ms) => (ms === null || ms === undefined ? DASH : formatTime(ms));

// The rows of the statistics table: [key in the API, label key, format].
const MEASURES = [
  ["played", "stats.played", plain],
  ["won", "stats.won", plain],
  ["win_rate", "stats.win_rate", percent],
  ["best_score", "stats.best_score", plain],
  ["best_ranked_score", "stats.best_ranked_score", plain],
  ["best_time_ms", "stats.best_time", time],
  ["fewest_moves", "stats.fewest_moves", plain],
  ["current_streak", "stats.current_streak", plain],
  ["longest_streak", "stats.longest_streak", plain],
  ["clean_wins", "stats.clean_wins", plain],
  ["daily_streak", "stats.daily_streak", plain],
  // races (SPEC 2.6.1): the rule's race rating (its ordinal) and how many races made it
  ["race_rating", "stats.race_rating", (race) => (race ? formatRating(race.ordinal) : DASH),
    (rules) => rules.race],
  ["races", "stats.races", (race) => (race ? String(race.races) : DASH), (rules) => rules.race],
];

function statsTable(rules) {
  return el("div", { class: "table-wrap stats-wrap" },
    el("table", { class: "stats-table", id: "stats-table" },
      el("caption", { text: t("stats.table") }),
      el("thead", {}, el("tr", {},
        el("th", { scope: "col", text: t("stats.measure") }),
        RULES.map((rule) => el("th", { scope: "col", class: "num", text: t(`rule.${rule}`) })))),
      el("tbody", {}, MEASURES.map(([key, label, format, pick = (of) => of[key]]) =>
        el("tr", { "data-stat": key },
          el("th", { scope: "row", text: t(label) }),
          RULES.map((rule) => el("td", { class: "num", "data-rule": rule,
            text: format(rules && rules[rule] ? pick(rules[rule]) ?? null : null) })))))));
}

export async function mount(root, params = {}) {
  document.title = `${t("stats.title")} — ${t("brand")}`;
  const me = player();
  const id = params.id || (me ? me.id : null);
  const section = el("section", { class: "view-stats", "aria-labelledby": "stats-title" });
  root.replaceChildren(section);

  if (!id) {
    section.append(
      el("h2", { id: "stats-title", text: t("stats.title") }),
      el("p", { class: "empty", id: "stats-none", text: t("stats.none") }),
      el("p", {}, el("a", { href: "#/", class: "button primary", text: t("stats.start") })));
    return null;
  }

  const title = el("h2", { id: "stats-title", text: t("stats.title") });
  const problem = el("p", { id: "stats-error", class: "problem", role: "alert" });
  section.append(title, problem);
  let alive = true;

  let profile;
  let stats;
  try {
    [profile, stats] = await Promise.all([
      get(`/players/${encodeURIComponent(id)}`),
      get(`/players/${encodeURIComponent(id)}/stats`),
    ]);
  } catch (error) {
    if (alive) problem.textContent = problemText(error);
    return () => { alive = false; };
  }
  const own = Boolean(me && me.id === profile.id);
  title.replaceChildren(t("stats.title.player", { name: profile.name }));
  if (own) title.append(" ", el("span", { class: "you", text: t("stats.you") }));
  document.title = `${t("stats.title.player", { name: profile.name })} — ${t("brand")}`;

  const gamesBody = el("tbody");
  const gamesTable = el("table", { class: "games-table", id: "games-table" },
    el("caption", { text: t("stats.games") }),
    el("thead", {}, el("tr", {},
      ["date", "rule", "code", "status", "score", "moves", "time", "links"].map((key) =>
        el("th", { scope: "col", class: `col-${key}`, text: t(`stats.${key}`) })))),
    gamesBody);
  const gamesWrap = el("div", { class: "table-wrap" }, gamesTable);
  const noGames = el("p", { class: "empty", id: "stats-no-games", hidden: true,
    text: t("stats.no_games") });
  const more = el("button", { type: "button", id: "stats-more", class: "more", hidden: true,
    text: t("stats.more") });
  const gamesProblem = el("p", { id: "stats-games-error", class: "problem", role: "alert" });

  section.append(
    statsTable(stats.rules),
    el("h3", { id: "stats-games-title", text: t("stats.games") }),
    gamesProblem, gamesWrap, noGames, more,
    el("p", { class: "stats-boards" }, el("a", { href: "#/boards", text: t("stats.boards") })));

  function link(action, href, game, date) {
    return el("a", { href, class: `${action}-link`,
      "aria-label": t(game.code ? "stats.link.label" : "stats.link.label.hidden",
        { action: t(`stats.${action}`), code: game.code, date }),
      text: t(`stats.${action}`) });
  }

  function row(game) {
    const date = formatDate(game.created_at);
    const finished = game.status === "won" || game.status === "abandoned";
    const links = [];
    // a race game's replay opens when its race ends (its code is revealed then)
    const replayable = finished && !(game.race_id && !game.code);
    if (replayable) links.push(link("replay", `#/replay/${game.id}`, game, date));
    if (game.race_id) {
      // a race game: followed in its race (hidden from others until the race ends)
      links.push(el("a", { href: `#/race/${game.race_id}`, class: "race-link",
        text: t("stats.race") }));
    } else if (game.status === "active") {
      links.push(link("watch", `#/watch/${game.id}`, game, date));
      if (me && game.player && game.player.id === me.id) {
        links.push(link("continue", `#/play/${game.id}`, game, date));
      }
    }
    return el("tr", { "data-game": game.id, "data-status": game.status },
      el("td", { class: "col-date", text: date }),
      el("td", { class: "col-rule", text: t(`rule.${game.rule}`) }),
      el("td", { class: "col-code code", "data-hidden": game.code ? null : "true",
        text: codeOrHidden(game.code) }),
      el("td", { class: `col-status status-${game.status}`, text: t(`status.${game.status}`) }),
      el("td", { class: "col-score num", "data-label": t("stats.score"), text: plain(game.score) }),
      el("td", { class: "col-moves num", "data-label": t("stats.moves"), text: plain(game.moves) }),
      el("td", { class: "col-time num", "data-label": t("stats.time"), text: time(game.elapsed_ms) }),
      el("td", { class: "col-links" }, links));
  }

  let cursor = null;
  async function load(after) {
    more.disabled = true;
    gamesProblem.textContent = "";
    try {
      const page = await get(`/players/${encodeURIComponent(id)}/games${query({ limit: 20, after })}`);
      if (!alive) return;
      gamesBody.append(...page.games.map(row));
      cursor = page.next;
      const none = gamesBody.children.length === 0;
      gamesWrap.hidden = none;
      noGames.hidden = !none;
      more.hidden = cursor === null || cursor === undefined;
    } catch (error) {
      if (alive) gamesProblem.textContent = problemText(error);
    } finally {
      more.disabled = false;
    }
  }
  more.addEventListener("click", () => load(cursor));
  await load(null);
  return () => {
    alive = false;
  };
}
