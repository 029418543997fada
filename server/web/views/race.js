// #/race/ID: one race (SPEC 2.6.1), live over the WebSocket (`watch_race` on /api/v1/live:
// the whole race document on every change; watched again after a reconnection).
//
// - Open: the players, Join, Leave, and Start for its creator; the server's refusals shown.
// - Starting: the countdown, by the server's clock (the document's `now`), never the
//   browser's: the page keeps the offset between the two from each document it receives.
// - Running: the racer's own table (the play view, views/play/, through the same actions as a solo
//   game; locked until `starts_at` and after the deadline), and everyone's standings: foundation
//   cards, ranked score, moves, time, status, place. Never a card: a racer's game is not asked
//   for by anyone but its racer, and a spectator sees the standings only.
// - Finished: the results (places, times, rating changes from each entry's `rating.before` and
//   `rating.after` ordinals), the revealed code checked against the commitment first seen, and
//   the replays.
import { get, post } from "../lib/api.js";
import { sha256Hex } from "../lib/deal.js";
import { formatDate, formatRating, formatTime } from "../lib/format.js";
import { define, t } from "../lib/i18n.js";
import { playerLink, playerName } from "../lib/players.js";
import { refusalText } from "../lib/races.js";
import { seedMatches, seededCode } from "../lib/seeds.js";
import { ensurePlayer, player } from "../lib/session.js";
import { LiveSocket } from "../lib/socket.js";
import { el, problemText } from "../lib/ui.js";
import { PlayView } from "./play/view.js";

define({
  en: {
    "race.title": "Race",
    "race.heading": "{name}'s race ({rule})",
    "race.state.open": "Waiting for players",
    "race.state.starting": "Starting",
    "race.state.running": "Running",
    "race.state.finished": "Finished",
    "race.state.cancelled": "Cancelled",
    "race.clock.open": "Waiting for players: {count} of {seats}",
    "race.clock.starting": "Starts in {seconds}",
    "race.clock.running": "Time left {time}",
    "race.clock.deadline": "Time is up: the results are on their way…",
    "race.clock.finished": "The race is over",
    "race.clock.cancelled": "This race was cancelled.",
    "race.say.countdown": "The race starts in {seconds} seconds.",
    "race.say.go": "Go! The race has started.",
    "race.say.over": "The race is over.",
    "race.say.place": "The race is over: you placed {place} of {count}.",
    "race.say.joined": "{name} joined the race.",
    "race.rule": "Rule",
    "race.seats": "Seats",
    "race.limit": "Time limit",
    "race.minutes": "{n} min",
    "race.deal": "Deal",
    "race.deal.winnable": "winnable (certified by the solver)",
    "race.deal.any": "any deal",
    "race.listed": "Listed",
    "race.listed.public": "public",
    "race.listed.private": "private (by its link only)",
    "race.created": "Created",
    "race.code": "Deal code",
    "race.code.hidden": "hidden until the race ends",
    "race.commitment": "Commitment (SHA-256 of the deal code)",
    "race.commitment.pending": "fixed when the race starts, from every racer's seed",
    "race.seed-hash": "Server seed (its SHA-256, committed at the race's creation)",
    "race.seed.differs": "the revealed seeds do not give this code",
    "race.code.matches": "matches the commitment",
    "race.code.differs": "does not match the commitment",
    "race.players": "Players",
    "race.creator": "creator",
    "race.you": "you",
    "race.join": "Join the race",
    "race.leave": "Leave the race",
    "race.start": "Start now",
    "race.start.help": "The race starts by itself when every seat is taken; its creator may start it earlier with at least two players.",
    "race.share": "Link to this race:",
    "race.full": "Every seat is taken.",
    "race.standings": "Standings",
    "race.standings.live": "Standings (places are provisional until the end)",
    "race.results": "Results",
    "race.place": "Place",
    "race.player": "Player",
    "race.status": "Status",
    "race.cards": "Foundation cards",
    "race.ranked": "Ranked score",
    "race.moves": "Moves",
    "race.time": "Time",
    "race.rating": "Rating",
    "race.replay": "Replay",
    "race.replay.label": "Replay of {name}'s game",
    "race.timedOut": "time is up",
    "race.rating.label": "Rating {before} → {after} ({change})",
    "race.spectating": "You are watching this race: every racer's cards stay hidden until it ends, then their replays open here.",
    "race.yourTable": "Your table",
    "race.connection.connecting": "Connecting…",
    "race.connection.live": "Live",
    "race.connection.reconnecting": "Reconnecting in {seconds} s…",
    "race.connection.ended": "Ended",
    "race.all": "All races",
  },
  ro: {
    "race.title": "Cursă",
    "race.heading": "Cursa lui {name} ({rule})",
    "race.state.open": "Se așteaptă jucători",
    "race.state.starting": "Pornește",
    "race.state.running": "În desfășurare",
    "race.state.finished": "Încheiată",
    "race.state.cancelled": "Anulată",
    "race.clock.open": "Se așteaptă jucători: {count} din {seats}",
    "race.clock.starting": "Pornește în {seconds}",
    "race.clock.running": "Timp rămas {time}",
    "race.clock.deadline": "Timpul a expirat: rezultatele sosesc…",
    "race.clock.finished": "Cursa s-a încheiat",
    "race.clock.cancelled": "Cursa a fost anulată.",
    "race.say.countdown": "Cursa pornește în {seconds} secunde.",
    "race.say.go": "Start! Cursa a început.",
    "race.say.over": "Cursa s-a încheiat.",
    "race.say.place": "Cursa s-a încheiat: ai ieșit pe locul {place} din {count}.",
    "race.say.joined": "{name} a intrat în cursă.",
    "race.rule": "Regula",
    "race.seats": "Locuri",
    "race.limit": "Limită de timp",
    "race.minutes": "{n} min",
    "race.deal": "Împărțire",
    "race.deal.winnable": "câștigabilă (certificată de rezolvitor)",
    "race.deal.any": "oarecare",
    "race.listed": "Listare",
    "race.listed.public": "publică",
    "race.listed.private": "privată (doar prin legătura ei)",
    "race.created": "Creată",
    "race.code": "Codul împărțirii",
    "race.code.hidden": "ascuns până la sfârșitul cursei",
    "race.commitment": "Angajament (SHA-256 al codului împărțirii)",
    "race.commitment.pending": "fixat la pornirea cursei, din sămânța fiecărui jucător",
    "race.seed-hash": "Sămânța serverului (SHA-256 al ei, angajat la crearea cursei)",
    "race.seed.differs": "semințele dezvăluite nu dau acest cod",
    "race.code.matches": "se potrivește cu angajamentul",
    "race.code.differs": "nu se potrivește cu angajamentul",
    "race.players": "Jucători",
    "race.creator": "creator",
    "race.you": "tu",
    "race.join": "Intră în cursă",
    "race.leave": "Ieși din cursă",
    "race.start": "Pornește acum",
    "race.start.help": "Cursa pornește singură când toate locurile sunt ocupate; creatorul ei o poate porni mai devreme, cu cel puțin doi jucători.",
    "race.share": "Legătura către această cursă:",
    "race.full": "Toate locurile sunt ocupate.",
    "race.standings": "Clasament",
    "race.standings.live": "Clasament (locurile sunt provizorii până la final)",
    "race.results": "Rezultate",
    "race.place": "Locul",
    "race.player": "Jucător",
    "race.status": "Stare",
    "race.cards": "Cărți în fundații",
    "race.ranked": "Punctaj de clasament",
    "race.moves": "Mutări",
    "race.time": "Timp",
    "race.rating": "Rating",
    "race.replay": "Reluare",
    "race.replay.label": "Reluarea jocului lui {name}",
    "race.timedOut": "timp expirat",
    "race.rating.label": "Rating {before} → {after} ({change})",
    "race.spectating": "Urmărești această cursă: cărțile concurenților rămân ascunse până la final, apoi reluările lor se deschid aici.",
    "race.yourTable": "Masa ta",
    "race.connection.connecting": "Se conectează…",
    "race.connection.live": "În direct",
    "race.connection.reconnecting": "Reconectare în {seconds} s…",
    "race.connection.ended": "Încheiat",
    "race.all": "Toate cursele",
  },
  he: {
    "race.title": "מרוץ",
    "race.heading": "המרוץ של {name} ({rule})",
    "race.state.open": "ממתין לשחקנים",
    "race.state.starting": "מתחיל",
    "race.state.running": "בעיצומו",
    "race.state.finished": "הסתיים",
    "race.state.cancelled": "בוטל",
    "race.clock.open": "ממתין לשחקנים: {count} מתוך {seats}",
    "race.clock.starting": "מתחיל בעוד {seconds}",
    "race.clock.running": "זמן שנותר {time}",
    "race.clock.deadline": "הזמן נגמר: התוצאות בדרך…",
    "race.clock.finished": "המרוץ הסתיים",
    "race.clock.cancelled": "המרוץ בוטל.",
    "race.say.countdown": "המרוץ מתחיל בעוד {seconds} שניות.",
    "race.say.go": "צאו! המרוץ התחיל.",
    "race.say.over": "המרוץ הסתיים.",
    "race.say.place": "המרוץ הסתיים: הגעתם למקום {place} מתוך {count}.",
    "race.say.joined": "{name} הצטרף למרוץ.",
    "race.rule": "חוק",
    "race.seats": "מקומות",
    "race.limit": "מגבלת זמן",
    "race.minutes": "{n} דק׳",
    "race.deal": "חלוקה",
    "race.deal.winnable": "פתירה (מאושרת בידי הפותר)",
    "race.deal.any": "כל חלוקה",
    "race.listed": "רישום",
    "race.listed.public": "ציבורי",
    "race.listed.private": "פרטי (רק דרך הקישור)",
    "race.created": "נוצר",
    "race.code": "קוד החלוקה",
    "race.code.hidden": "מוסתר עד סוף המרוץ",
    "race.commitment": "התחייבות (SHA-256 של קוד החלוקה)",
    "race.commitment.pending": "נקבעת כשהמרוץ מתחיל, מהזרע של כל משתתף",
    "race.seed-hash": "זרע השרת (ה-SHA-256 שלו, התחייבות מרגע יצירת המרוץ)",
    "race.seed.differs": "הזרעים שנחשפו אינם נותנים את הקוד הזה",
    "race.code.matches": "מתאים להתחייבות",
    "race.code.differs": "אינו מתאים להתחייבות",
    "race.players": "שחקנים",
    "race.creator": "יוצר",
    "race.you": "את/ה",
    "race.join": "הצטרפו למרוץ",
    "race.leave": "עזבו את המרוץ",
    "race.start": "התחילו עכשיו",
    "race.start.help": "המרוץ מתחיל מעצמו כשכל המקומות תפוסים; היוצר יכול להתחיל אותו קודם, עם שני שחקנים לפחות.",
    "race.share": "קישור למרוץ הזה:",
    "race.full": "כל המקומות תפוסים.",
    "race.standings": "דירוג",
    "race.standings.live": "דירוג (המקומות זמניים עד הסוף)",
    "race.results": "תוצאות",
    "race.place": "מקום",
    "race.player": "שחקן",
    "race.status": "מצב",
    "race.cards": "קלפים ביסודות",
    "race.ranked": "ניקוד לדירוג",
    "race.moves": "מהלכים",
    "race.time": "זמן",
    "race.rating": "דירוג כוח",
    "race.replay": "שידור חוזר",
    "race.replay.label": "שידור חוזר של המשחק של {name}",
    "race.timedOut": "הזמן נגמר",
    "race.rating.label": "דירוג כוח {before} ← {after} ({change})",
    "race.spectating": "אתם צופים במרוץ הזה: הקלפים של המתחרים מוסתרים עד סופו, ואז השידורים החוזרים שלהם נפתחים כאן.",
    "race.yourTable": "השולחן שלך",
    "race.connection.connecting": "מתחבר…",
    "race.connection.live": "בשידור חי",
    "race.connection.reconnecting": "מתחבר מחדש בעוד {seconds} שניות…",
    "race.connection.ended": "הסתיים",
    "race.all": "כל המרוצים",
  },
});

const WATCH_ID = 1;
const TICK_MS = 250;

function pair(label, value, id) {
  return el("div", { class: "pair" }, el("dt", { text: label }), el("dd", { id }, value));
}

export async function mount(root, params) {
  const raceId = params.id;
  let race = await get(`/races/${encodeURIComponent(raceId)}`);
  if (!params.current()) return null;

  let alive = true;
  const here = () => alive && params.current();
  let receivedAt = performance.now(); // when `race` arrived
  let serverAt = Date.parse(race.now); // the server's clock then
  // The commitment as first seen, for the end: fixed when the countdown begins (SPEC 1.8.2),
  // null while the race is open.
  let firstCommitment = race.deal_commitment;
  let playView = null; // the racer's own table, once it is drawn
  let mountedView = null; // the same, from the moment it is asked for
  let mounting = null;
  let lockedBefore = null; // whether the racer's table was locked at the last tick
  let phaseBefore = null; // the race's phase at the last tick
  let busy = false;
  let checkedCode = null;

  const serverNow = () => serverAt + (performance.now() - receivedAt);
  const startsMs = () => (race.starts_at ? Date.parse(race.starts_at) : null);
  const deadlineMs = () => (race.starts_at ? startsMs() + race.time_limit_s * 1000 : null);
  const over = () => race.status === "finished" || race.status === "cancelled";
  const mine = () => {
    const me = player();
    return me && race.players.some((p) => p.id === me.id) ? me : null;
  };

  // --- the page ------------------------------------------------------------------------------

  const title = el("h2", { id: "race-title" });
  const state = el("p", { id: "race-state", class: "race-state" });
  const connection = el("p", { id: "race-connection", class: "connection", role: "status",
    "data-state": "connecting", text: t("race.connection.connecting") });
  const clock = el("p", { id: "race-clock", class: "race-clock" });
  const announce = el("p", { id: "race-announce", class: "visually-hidden", role: "status",
    "aria-live": "polite" });
  const problem = el("p", { id: "race-error", class: "problem", role: "alert" });

  const codeOut = el("span", { id: "race-code", class: "code" });
  const codeCheck = el("span", { id: "race-code-check", class: "code-check" });
  const info = el("dl", { class: "race-info" },
    pair(t("race.rule"), "", "race-rule"),
    pair(t("race.seats"), "", "race-seats"),
    pair(t("race.limit"), "", "race-limit"),
    pair(t("race.deal"), "", "race-deal"),
    pair(t("race.listed"), "", "race-listed"),
    pair(t("race.created"), "", "race-created"),
    el("div", { class: "pair pair-code" }, el("dt", { text: t("race.code") }),
      el("dd", {}, codeOut, " ", codeCheck)),
    el("div", { class: "pair pair-seed" }, el("dt", { text: t("race.seed-hash") }),
      el("dd", {}, el("code", { id: "race-seed-hash", class: "hex", dir: "ltr",
        text: race.server_seed_hash || "—" }))),
    el("div", { class: "pair pair-commitment" }, el("dt", { text: t("race.commitment") }),
      el("dd", {}, el("code", { id: "race-commitment", class: "hex", dir: "ltr",
        text: firstCommitment || t("race.commitment.pending") }))));

  const playersList = el("ul", { id: "race-players", class: "race-players" });
  const joinButton = el("button", { type: "button", id: "race-join", class: "primary",
    text: t("race.join"), onclick: () => act("join") });
  const leaveButton = el("button", { type: "button", id: "race-leave", text: t("race.leave"),
    onclick: () => act("leave") });
  const startButton = el("button", { type: "button", id: "race-start", class: "primary",
    text: t("race.start"), "aria-describedby": "race-start-help", onclick: () => act("start") });
  const fullNote = el("p", { id: "race-full", class: "note", text: t("race.full") });
  const address = `${location.origin}${location.pathname}#/race/${raceId}`;
  const lobby = el("section", { id: "race-lobby", class: "race-lobby",
    "aria-labelledby": "race-players-title" },
    el("h3", { id: "race-players-title", text: t("race.players") }),
    playersList,
    el("div", { class: "actions" }, joinButton, startButton, leaveButton),
    fullNote,
    el("p", { id: "race-start-help", class: "help", text: t("race.start.help") }),
    el("p", { class: "share" }, `${t("race.share")} `,
      el("a", { id: "race-link", href: `#/race/${raceId}`, dir: "ltr", text: address })));

  const caption = el("caption", { id: "race-standings-caption" });
  const head = el("thead");
  const body = el("tbody");
  const standings = el("table", { id: "race-standings", class: "race-standings" },
    caption, head, body);
  const standingsWrap = el("div", { class: "table-wrap", id: "race-standings-wrap" }, standings);
  const spectating = el("p", { id: "race-spectating", class: "notice",
    text: t("race.spectating") });
  const tableTitle = el("h3", { id: "race-table-title", class: "visually-hidden",
    text: t("race.yourTable") });
  const playRoot = el("div", { id: "race-table", class: "race-table" });
  const tableSection = el("section", { class: "race-own", "aria-labelledby": "race-table-title",
    hidden: true }, tableTitle, playRoot);

  root.replaceChildren(el("section", { class: "view-race", "aria-labelledby": "race-title" },
    el("div", { class: "race-head" }, title, state, connection),
    clock, announce, problem, lobby, standingsWrap, spectating, tableSection, info,
    el("p", { class: "footer-links" }, el("a", { href: "#/races", text: t("race.all") }))));

  // The racer's own table: the play view, with the race's clock.
  const link = {
    locked: () => {
      if (over() || !race.starts_at) return true;
      const now = serverNow();
      return now < startsMs() || now >= deadlineMs();
    },
    late: () => race.status === "finished" || (race.starts_at !== null
      && race.status !== "cancelled" && serverNow() >= deadlineMs()),
    elapsed: () => {
      if (!race.starts_at) return 0;
      return Math.min(Math.max(0, serverNow() - startsMs()), race.time_limit_s * 1000);
    },
    ended: () => race.status === "finished",
  };

  function mountTable() {
    const me = mine();
    const gameId = me && race.games[me.id];
    if (!gameId || playView || mounting) return;
    tableSection.hidden = false;
    const view = new PlayView(playRoot, here, link);
    mounting = view.start(gameId).then(() => {
      if (!here()) return;
      playView = view;
      lockedBefore = link.locked();
      if (race.status === "finished") view.raceChanged({ ended: true });
    }).catch((error) => {
      if (here()) problem.textContent = problemText(error);
    }).finally(() => {
      mounting = null;
    });
    mountedView = view;
  }

  function say(text) {
    announce.textContent = text;
  }

  function setConnection(name, text) {
    connection.dataset.state = name;
    connection.textContent = text;
  }

  // --- drawing ---------------------------------------------------------------------------------

  function drawInfo() {
    const name = playerName(race.creator);
    title.textContent = t("race.heading", { name, rule: t(`rule.${race.rule}`) });
    document.title = `${title.textContent} — ${t("brand")}`;
    const value = (id) => info.querySelector(`#${id}`);
    value("race-rule").textContent = t(`rule.${race.rule}`);
    value("race-seats").textContent = `${race.players.length} / ${race.seats}`;
    value("race-limit").textContent = t("race.minutes", { n: Math.round(race.time_limit_s / 60) });
    value("race-deal").textContent = t(race.winnable ? "race.deal.winnable" : "race.deal.any");
    value("race-listed").textContent =
      t(race.public ? "race.listed.public" : "race.listed.private");
    value("race-created").textContent = formatDate(race.created_at);
    if (!firstCommitment && race.deal_commitment) {
      firstCommitment = race.deal_commitment;
      info.querySelector("#race-commitment").textContent = firstCommitment;
    }
    codeOut.textContent = race.code || t("race.code.hidden");
    codeOut.dataset.hidden = race.code ? "false" : "true";
    if (race.code && checkedCode !== race.code) {
      checkedCode = race.code;
      // the revealed code against the commitment shown from the start, here in the page
      // and, for a race dealt from seeds, the revealed server seed against its hash and the
      // HMAC over the racers' client seeds against the code (SPEC 1.8.2)
      const seeded = async () => {
        if (!race.server_seed_hash) return true; // a race made before seeds
        if (!race.server_seed || !(await seedMatches(race.server_seed, race.server_seed_hash))) {
          return false;
        }
        const letter = race.code.startsWith("RU2-R-") ? "R" : "C";
        const made = await seededCode(race.server_seed, race, letter);
        return made.code === race.code;
      };
      Promise.all([sha256Hex(race.code), seeded().catch(() => false)]).then(([hash, fromSeeds]) => {
        if (!here()) return;
        const committed = hash === firstCommitment && race.deal_commitment === firstCommitment;
        const matches = committed && fromSeeds;
        codeCheck.dataset.state = matches ? "verified" : "failed";
        const says = committed ? "race.seed.differs" : "race.code.differs";
        codeCheck.replaceChildren(el("span", { "aria-hidden": "true", text: matches ? "✓ " : "✗ " }),
          t(matches ? "race.code.matches" : says));
      });
    }
  }

  function drawLobby() {
    const open = race.status === "open";
    lobby.hidden = !open;
    if (!open) return;
    const me = player();
    const seated = Boolean(mine());
    playersList.replaceChildren(...race.players.map((p) => {
      const marks = [];
      if (p.id && race.creator && p.id === race.creator.id) marks.push(t("race.creator"));
      if (me && p.id === me.id) marks.push(t("race.you"));
      return el("li", { "data-player": p.id },
        playerLink(p),
        marks.length ? el("span", { class: "marks", text: ` (${marks.join(", ")})` }) : null);
    }));
    const full = race.players.length >= race.seats;
    joinButton.hidden = seated || full;
    leaveButton.hidden = !seated;
    startButton.hidden = !(me && race.creator && race.creator.id === me.id);
    fullNote.hidden = seated || !full;
    for (const button of [joinButton, leaveButton, startButton]) button.disabled = busy;
  }

  function drawStandings() {
    const rows = race.standings || [];
    standingsWrap.hidden = rows.length === 0;
    const finished = race.status === "finished";
    spectating.hidden = !(race.status !== "open" && !over() && !mine()) || rows.length === 0;
    if (!rows.length) return;
    caption.textContent = t(finished ? "race.results" : "race.standings.live");
    standings.dataset.final = finished ? "true" : "false";
    const columns = ["place", "player", "status", "cards", "ranked", "moves", "time"];
    if (finished) columns.push("rating", "replay");
    const numeric = ["place", "cards", "ranked", "moves", "time", "rating"];
    head.replaceChildren(el("tr", {}, columns.map((key) => el("th", { scope: "col",
      class: numeric.includes(key) ? `col-${key} num` : `col-${key}`, text: t(`race.${key}`) }))));
    const me = player();
    body.replaceChildren(...rows.map((entry) => standingRow(entry, columns, me)));
    drawTimes();
  }

  function standingRow(entry, columns, me) {
    const you = Boolean(me && entry.player.id === me.id);
    const name = playerName(entry.player);
    const timedOut = entry.status === "abandoned" && entry.finished_at && race.starts_at
      && Date.parse(entry.finished_at) >= deadlineMs();
    const status = timedOut ? t("race.timedOut") : t(`status.${entry.status}`);
    const cells = {
      place: el("td", { class: "col-place num", "data-label": t("race.place"),
        text: String(entry.place) }),
      player: el("th", { scope: "row", class: "col-player" },
        playerLink(entry.player),
        you ? el("span", { class: "marks", text: ` (${t("race.you")})` }) : null),
      status: el("td", { class: `col-status status-${entry.status}`,
        "data-label": t("race.status"), text: status }),
      cards: el("td", { class: "col-cards num", "data-label": t("race.cards"),
        text: String(entry.foundation_cards) }),
      ranked: el("td", { class: "col-ranked num", "data-label": t("race.ranked"),
        text: String(entry.ranked_score) }),
      moves: el("td", { class: "col-moves num", "data-label": t("race.moves"),
        text: String(entry.moves) }),
      time: el("td", { class: "col-time num", "data-label": t("race.time"),
        "data-elapsed": String(entry.elapsed_ms), "data-active": entry.status === "active"
          ? "true" : "false", text: formatTime(entry.elapsed_ms) }),
      rating: ratingCell(entry),
      replay: el("td", { class: "col-replay" }, entry.player.id && race.games[entry.player.id]
        ? el("a", { href: `#/replay/${race.games[entry.player.id]}`, class: "replay-link",
          "aria-label": t("race.replay.label", { name }), text: t("race.replay") })
        : "—"),
    };
    return el("tr", { "data-player": entry.player.id, "data-status": entry.status,
      "data-place": String(entry.place), class: you ? "you" : null },
    columns.map((key) => cells[key]));
  }

  function ratingCell(entry) {
    const cell = el("td", { class: "col-rating num", "data-label": t("race.rating") });
    const rating = entry.rating;
    if (!rating) {
      cell.textContent = "—";
      return cell;
    }
    const before = formatRating(rating.before.ordinal);
    const after = formatRating(rating.after.ordinal);
    const change = formatRating(rating.after.ordinal - rating.before.ordinal, { sign: true });
    const delta = rating.after.ordinal - rating.before.ordinal;
    cell.dataset.before = String(rating.before.ordinal);
    cell.dataset.after = String(rating.after.ordinal);
    cell.setAttribute("aria-label", t("race.rating.label", { before, after, change }));
    cell.append(
      el("span", { class: "rating-values", dir: "ltr", "aria-hidden": "true" },
        `${before} → ${after} `,
        el("span", { class: "rating-change", "data-sign": delta > 0 ? "up" : delta < 0
          ? "down" : "same", text: `(${change})` })));
    return cell;
  }

  // The clock, the times of the racers still playing, the lock of the racer's own table.
  function drawTimes() {
    const now = serverNow();
    const starts = startsMs();
    let text = "";
    if (race.status === "open") {
      text = t("race.clock.open", { count: race.players.length, seats: race.seats });
    } else if (race.status === "cancelled") {
      text = t("race.clock.cancelled");
    } else if (race.status === "finished") {
      text = t("race.clock.finished");
    } else if (now < starts) {
      text = t("race.clock.starting", { seconds: Math.ceil((starts - now) / 1000) });
    } else if (now < deadlineMs()) {
      text = t("race.clock.running", { time: formatTime(Math.ceil((deadlineMs() - now) / 1000)
        * 1000) });
    } else {
      text = t("race.clock.deadline");
    }
    if (clock.textContent !== text) clock.textContent = text;
    let phase = race.status;
    if (phase === "starting" && now >= starts) phase = "running";
    if (phaseBefore === "starting" && phase === "running") say(t("race.say.go"));
    phaseBefore = phase;
    clock.dataset.phase = phase;
    state.dataset.state = phase;
    state.textContent = t(`race.state.${phase}`);
    if (starts !== null) {
      const elapsed = Math.min(Math.max(0, now - starts), race.time_limit_s * 1000);
      for (const cell of body.querySelectorAll('.col-time[data-active="true"]')) {
        cell.textContent = formatTime(elapsed);
      }
    }
    const locked = link.locked();
    if (playView && locked !== lockedBefore) {
      lockedBefore = locked;
      playView.raceChanged();
    }
  }

  function draw(before) {
    drawInfo();
    drawLobby();
    drawStandings();
    drawTimes();
    if (race.status !== "open" && race.status !== "cancelled") mountTable();
    // what changed, read out; a refusal of the race as it was is no longer news
    if (before && before.status !== race.status) {
      problem.textContent = "";
      if (race.status === "starting") {
        const seconds = Math.max(0, Math.ceil((startsMs() - serverNow()) / 1000));
        say(t("race.say.countdown", { seconds }));
      } else if (race.status === "finished") {
        const me = player();
        const entry = me && race.standings.find((s) => s.player.id === me.id);
        say(entry ? t("race.say.place", { place: entry.place, count: race.standings.length })
          : t("race.say.over"));
        if (playView) playView.raceChanged({ ended: true });
      }
    } else if (before && race.status === "open" && race.players.length > before.players.length) {
      say(t("race.say.joined", { name: playerName(race.players.at(-1)) }));
    }
    if (over() && socket.connected) {
      // nothing more will happen to this race
      socket.close();
      setConnection("ended", t("race.connection.ended"));
    }
  }

  // A newer document of the race (from an answer or the socket); an older one is dropped.
  function show(next) {
    if (!here() || next.id !== raceId) return;
    const at = Date.parse(next.now);
    if (at < serverAt) return;
    const before = race;
    race = next;
    serverAt = at;
    receivedAt = performance.now();
    draw(before);
  }

  async function act(what) {
    if (busy) return;
    problem.textContent = "";
    busy = true;
    drawLobby();
    try {
      if (what === "join") await ensurePlayer();
      const answer = await post(`/races/${encodeURIComponent(raceId)}/${what}`);
      busy = false;
      show(answer);
      if (what === "join") (startButton.hidden ? leaveButton : startButton).focus();
      if (what === "leave" && !joinButton.hidden) joinButton.focus();
    } catch (error) {
      if (here()) problem.textContent = refusalText(error);
    } finally {
      busy = false;
      if (here()) drawLobby();
    }
  }

  // --- the socket ------------------------------------------------------------------------------

  const socket = new LiveSocket({
    active: here,
    finished: over,
    hello: () => socket.send({ type: "watch_race", race_id: raceId, id: WATCH_ID }),
    message: (message) => {
      if (message.type === "watching_race" || message.type === "race") {
        if (message.type === "watching_race") {
          socket.watching();
          setConnection("live", t("race.connection.live"));
        }
        show(message.race);
      } else if (message.type === "error" && message.id === WATCH_ID) {
        problem.textContent = problemText({ problem: message.problem || {} });
      }
    },
    state: (name, seconds) => {
      if (name === "connecting") setConnection(name, t("race.connection.connecting"));
      else if (name === "ended") setConnection(name, t("race.connection.ended"));
      else setConnection(name, t("race.connection.reconnecting", { seconds: seconds ?? 0 }));
    },
  });

  draw(null);
  if (over()) setConnection("ended", t("race.connection.ended"));
  else socket.start();
  const ticker = setInterval(() => {
    if (here()) drawTimes();
  }, TICK_MS);

  return () => {
    alive = false;
    clearInterval(ticker);
    if (mountedView) mountedView.leave();
    socket.close();
  };
}
