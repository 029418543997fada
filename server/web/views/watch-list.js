// #/watch: something to watch. The games in play that anyone may watch
// (GET /api/v1/live/games: most recently active first, paged; not a daily game before its day
// ends, nor a race's game before its race ends), each opening the spectator view (#/watch/ID),
// and the open and running races (views/race.js shows one). Read again every few seconds.
import { get, query } from "../lib/api.js";
import { formatTime } from "../lib/format.js";
import { define, t } from "../lib/i18n.js";
import { playerName } from "../lib/players.js";
import { raceList } from "../lib/races.js";
import { el, problemText } from "../lib/ui.js";

define({
  en: {
    "live.title": "Watch",
    "live.intro": "Games being played right now, and the races: open one to follow it live.",
    "live.games": "Games in play",
    "live.games.empty": "Nobody is playing a game you may watch right now.",
    "live.game": "{name}'s game",
    "live.game.label": "Watch {name}'s game",
    "live.facts": "{moves} moves · score {score} · {time}",
    "live.races.open": "Open races",
    "live.races.running": "Races in progress",
    "live.more": "More",
    "live.refresh": "Refresh",
  },
  ro: {
    "live.title": "Urmărește",
    "live.intro": "Jocurile care se joacă acum și cursele: deschide unul ca să-l urmărești în direct.",
    "live.games": "Jocuri în desfășurare",
    "live.games.empty": "Nimeni nu joacă acum un joc pe care îl poți urmări.",
    "live.game": "Jocul lui {name}",
    "live.game.label": "Urmărește jocul lui {name}",
    "live.facts": "{moves} mutări · scor {score} · {time}",
    "live.races.open": "Curse deschise",
    "live.races.running": "Curse în desfășurare",
    "live.more": "Mai multe",
    "live.refresh": "Reîmprospătează",
  },
  he: {
    "live.title": "צפייה",
    "live.intro": "משחקים שמשוחקים עכשיו, והמרוצים: פתחו אחד כדי לעקוב אחריו בשידור חי.",
    "live.games": "משחקים בעיצומם",
    "live.games.empty": "אף אחד לא משחק עכשיו משחק שאפשר לצפות בו.",
    "live.game": "המשחק של {name}",
    "live.game.label": "צפייה במשחק של {name}",
    "live.facts": "{moves} מהלכים · ניקוד {score} · {time}",
    "live.races.open": "מרוצים פתוחים",
    "live.races.running": "מרוצים בעיצומם",
    "live.more": "עוד",
    "live.refresh": "רענון",
  },
});

const REFRESH_MS = 8000;

function gameItem(game) {
  const name = playerName(game.player);
  return el("li", { class: "race-item live-game", "data-game": game.id },
    el("div", { class: "race-item-head" },
      el("a", { href: `#/watch/${game.id}`, class: "watch-game",
        "aria-label": t("live.game.label", { name }), text: t("live.game", { name }) }),
      el("span", { class: "tag", text: t(`rule.${game.rule}`) })),
    el("p", { class: "race-facts", text: t("live.facts", {
      moves: game.moves, score: game.score, time: formatTime(game.elapsed_ms) }) }));
}

export async function mount(root, params) {
  document.title = `${t("live.title")} — ${t("brand")}`;
  let alive = true;
  const here = () => alive && params.current();

  const games = el("ul", { class: "race-list", id: "live-games-list" });
  const gamesEmpty = el("p", { class: "empty", id: "live-games-empty", hidden: true,
    text: t("live.games.empty") });
  const gamesMore = el("button", { type: "button", class: "more", id: "live-games-more",
    hidden: true, text: t("live.more") });
  const gamesProblem = el("p", { class: "problem", id: "live-games-error", role: "alert" });
  const open = raceList({ status: "open", id: "live-races-open" });
  const running = raceList({ status: "running", id: "live-races-running" });
  const section = (id, title, nodes) => el("section", { class: "race-section",
    "aria-labelledby": `${id}-title` }, el("h3", { id: `${id}-title`, text: title }), ...nodes);

  root.replaceChildren(el("section", { class: "view-races view-live",
    "aria-labelledby": "live-title" },
  el("div", { class: "races-head" },
    el("h2", { id: "live-title", text: t("live.title") }),
    el("button", { type: "button", id: "live-refresh", class: "small", text: t("live.refresh"),
      onclick: () => refresh() })),
  el("p", { class: "intro", text: t("live.intro") }),
  section("live-games", t("live.games"), [gamesProblem, games, gamesEmpty, gamesMore]),
  section("live-races-running", t("live.races.running"), running.nodes),
  section("live-races-open", t("live.races.open"), open.nodes)));

  let cursor = null;
  let turn = 0;
  let pages = 1;
  async function loadGames(after) {
    const mine = ++turn;
    gamesMore.disabled = true;
    try {
      const answer = await get(`/live/games${query({ limit: 20, after })}`);
      if (mine !== turn) return;
      gamesProblem.textContent = "";
      const items = answer.games.map(gameItem);
      if (after) {
        games.append(...items);
      } else {
        const focused = document.activeElement && games.contains(document.activeElement)
          ? document.activeElement.closest("[data-game]")?.dataset.game : null;
        games.replaceChildren(...items);
        if (focused) games.querySelector(`[data-game="${focused}"] a`)?.focus();
      }
      cursor = answer.next;
      games.hidden = games.children.length === 0;
      gamesEmpty.hidden = !games.hidden;
      gamesMore.hidden = cursor === null || cursor === undefined;
    } catch (error) {
      if (mine === turn) gamesProblem.textContent = problemText(error);
    } finally {
      if (mine === turn) gamesMore.disabled = false;
    }
  }
  gamesMore.addEventListener("click", () => {
    pages += 1;
    loadGames(cursor);
  });

  function refresh() {
    return Promise.all([pages === 1 ? loadGames(null) : null, open.refresh(), running.refresh()]);
  }

  await Promise.all([loadGames(null), open.load(), running.load()]);
  const timer = setInterval(() => {
    if (here() && document.visibilityState === "visible") refresh();
  }, REFRESH_MS);
  return () => {
    alive = false;
    turn += 1;
    clearInterval(timer);
    open.stop();
    running.stop();
  };
}
