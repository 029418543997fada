// The web client: a page of plain JavaScript modules on the public API and WebSocket only.
// Views by the address's hash: #/ (play), #/play/ID, #/races, #/race/ID, #/watch (what to
// watch), #/watch/ID, #/boards, #/me, #/player/ID, #/replay/ID, #/account. When the player of
// this browser changes under a view (its session ended, and the welcome window gave another),
// the view is drawn again.
import { pickLanguage, setLanguage, t } from "./lib/i18n.js";
import { PLAYER_CHANGED, player } from "./lib/session.js";
import { el, problemText } from "./lib/ui.js";

const VIEWS = [
  [/^\/?$/, "./views/play/view.js", () => ({})],
  [/^\/play\/([\w-]+)$/, "./views/play/view.js", (m) => ({ id: m[1] })],
  [/^\/boards$/, "./views/leaderboards.js", () => ({})],
  [/^\/me$/, "./views/stats.js", () => ({ id: null })],
  [/^\/player\/([\w-]+)$/, "./views/stats.js", (m) => ({ id: m[1] })],
  [/^\/replay\/([\w-]+)$/, "./views/replay.js", (m) => ({ id: m[1] })],
  [/^\/watch\/([\w-]+)$/, "./views/watch-game.js", (m) => ({ id: m[1] })],
  [/^\/watch$/, "./views/watch-list.js", () => ({})],
  [/^\/races$/, "./views/races.js", () => ({})],
  [/^\/race\/([\w-]+)$/, "./views/race.js", (m) => ({ id: m[1] })],
  [/^\/account$/, "./views/account.js", () => ({})],
];

let leave = null;
let shown = 0;

async function route() {
  const path = decodeURIComponent(location.hash.replace(/^#/, "")).split("?")[0];
  const found = VIEWS.find(([pattern]) => pattern.test(path));
  const root = document.getElementById("view");
  const turn = ++shown;
  if (leave) {
    leave();
    leave = null;
  }
  document.querySelectorAll("header nav a").forEach((link) => {
    const href = link.getAttribute("href");
    // one race belongs with the races
    const here = href === `#${path || "/"}` || (href === "#/races" && path.startsWith("/race/"));
    if (here) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  });
  if (!found) {
    root.replaceChildren(el("p", { class: "problem", text: t("error", { detail: path }) }));
    return;
  }
  const [pattern, module, params] = found;
  root.setAttribute("aria-busy", "true");
  try {
    const view = await import(module);
    if (turn !== shown) return;
    // `current` tells a view, after each wait, whether it still has the page
    const current = () => turn === shown;
    const cleanup = (await view.mount(root, { ...params(path.match(pattern)), current })) || null;
    if (turn !== shown) {
      // another view was asked for while this one was loading: it has the page now
      if (cleanup) cleanup();
      return;
    }
    leave = cleanup;
    root.setAttribute("aria-busy", "false");
  } catch (error) {
    console.error(error);
    if (turn === shown) {
      root.replaceChildren(el("p", { class: "problem", role: "alert",
        text: t("error", { detail: problemText(error) }) }));
      root.setAttribute("aria-busy", "false");
    }
  }
}

// The rules page (/rules, served by the server) in the client's language.
function linkRules() {
  document.getElementById("rules-link").href = `/rules?lang=${document.documentElement.lang}`;
}

function start() {
  setLanguage(pickLanguage());
  linkRules();
  player();
  const select = document.getElementById("language");
  select.value = document.documentElement.lang;
  select.addEventListener("change", () => {
    setLanguage(select.value);
    linkRules();
    route();
  });
  document.querySelector(".skip").addEventListener("click", (event) => {
    event.preventDefault();
    document.getElementById("view").focus();
  });
  window.addEventListener("hashchange", route);
  window.addEventListener(PLAYER_CHANGED, route);
  route();
}

start();
