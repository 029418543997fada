// #/watch/ID: a spectator's view of a game, live over the WebSocket (`/api/v1/live`). Every
// accepted action on the game is pushed here; face-down cards stay hidden. When the connection
// drops, it reconnects with a growing pause and asks for what it missed (`since`). A secret
// deal's code is null until the game ends (a daily deal's until its day ends): shown as hidden.
import { get } from "../lib/api.js";
import { renderBoard } from "../lib/board.js";
import { moveText } from "../lib/cards.js";
import { codeText } from "../lib/deal.js";
import { formatTime } from "../lib/format.js";
import { define, t } from "../lib/i18n.js";
import { playerLink, playerName } from "../lib/players.js";
import { player } from "../lib/session.js";
import { LiveSocket } from "../lib/socket.js";
import { el } from "../lib/ui.js";

define({
  en: {
    "watch.title": "Watching",
    "watch.title.of": "Watching {name} play",
    "watch.player": "Player",
    "watch.code": "Deal",
    "watch.rule": "Rule",
    "watch.status": "Status",
    "watch.score": "Score",
    "watch.moves": "Moves",
    "watch.time": "Time",
    "watch.last": "Last move",
    "watch.none": "—",
    "watch.abandoned.move": "The game was abandoned",
    "watch.connection": "Connection",
    "watch.connecting": "Connecting…",
    "watch.live": "Live",
    "watch.reconnecting": "Reconnecting…",
    "watch.reconnecting.in": "Reconnecting in {seconds} s…",
    "watch.ended": "The game has ended",
    "watch.closed": "Closed",
    "watch.board": "The table",
    "watch.won": "The game is won!",
    "watch.abandoned": "The game was abandoned.",
    "watch.replay": "Watch the replay",
    "watch.unsupported": "This browser cannot open a live connection.",
  },
  ro: {
    "watch.title": "Urmărire",
    "watch.title.of": "Îl urmărești pe {name}",
    "watch.player": "Jucător",
    "watch.code": "Împărțire",
    "watch.rule": "Regula",
    "watch.status": "Stare",
    "watch.score": "Punctaj",
    "watch.moves": "Mutări",
    "watch.time": "Timp",
    "watch.last": "Ultima mutare",
    "watch.none": "—",
    "watch.abandoned.move": "Jocul a fost abandonat",
    "watch.connection": "Conexiune",
    "watch.connecting": "Se conectează…",
    "watch.live": "În direct",
    "watch.reconnecting": "Se reconectează…",
    "watch.reconnecting.in": "Reconectare în {seconds} s…",
    "watch.ended": "Jocul s-a încheiat",
    "watch.closed": "Închis",
    "watch.board": "Masa",
    "watch.won": "Jocul este câștigat!",
    "watch.abandoned": "Jocul a fost abandonat.",
    "watch.replay": "Vezi reluarea",
    "watch.unsupported": "Acest browser nu poate deschide o conexiune în direct.",
  },
  he: {
    "watch.title": "צפייה",
    "watch.title.of": "צפייה במשחק של {name}",
    "watch.player": "שחקן",
    "watch.code": "חלוקה",
    "watch.rule": "חוק",
    "watch.status": "מצב",
    "watch.score": "ניקוד",
    "watch.moves": "מהלכים",
    "watch.time": "זמן",
    "watch.last": "המהלך האחרון",
    "watch.none": "—",
    "watch.abandoned.move": "המשחק ננטש",
    "watch.connection": "חיבור",
    "watch.connecting": "מתחבר…",
    "watch.live": "בשידור חי",
    "watch.reconnecting": "מתחבר מחדש…",
    "watch.reconnecting.in": "מתחבר מחדש בעוד {seconds} שניות…",
    "watch.ended": "המשחק הסתיים",
    "watch.closed": "סגור",
    "watch.board": "השולחן",
    "watch.won": "המשחק נוצח!",
    "watch.abandoned": "המשחק ננטש.",
    "watch.replay": "לשידור החוזר",
    "watch.unsupported": "הדפדפן הזה לא יכול לפתוח חיבור חי.",
  },
});

const WATCH_ID = 1;

function info(label, id) {
  const value = el("dd", { id });
  return { nodes: el("div", { class: "pair" }, el("dt", { text: label }), value), value };
}

export function mount(root, params) {
  const gameId = params.id;
  document.title = `${t("watch.title")} — ${t("brand")}`;

  const title = el("h2", { id: "watch-title", text: t("watch.title") });
  const state = el("p", { id: "watch-state", class: "connection", role: "status",
    "data-state": "connecting", text: t("watch.connecting") });
  const problem = el("p", { id: "watch-error", class: "problem", role: "alert" });
  const fields = {
    player: info(t("watch.player"), "watch-player"),
    code: info(t("watch.code"), "watch-code"),
    rule: info(t("watch.rule"), "watch-rule"),
    status: info(t("watch.status"), "watch-status"),
    score: info(t("watch.score"), "watch-score"),
    moves: info(t("watch.moves"), "watch-moves"),
    time: info(t("watch.time"), "watch-time"),
  };
  const details = el("dl", { class: "watch-info" },
    Object.values(fields).map((field) => field.nodes));
  const moveOut = el("span", { id: "watch-move", "aria-live": "polite", text: t("watch.none") });
  const lastMove = el("p", { class: "watch-last" },
    el("span", { class: "label", text: `${t("watch.last")}: ` }), moveOut);
  const ended = el("p", { id: "watch-result", class: "notice", hidden: true });
  const boardRoot = el("div", { class: "watch-board", id: "watch-board", role: "region",
    "aria-label": t("watch.board") });

  root.replaceChildren(el("section", { class: "view-watch", "aria-labelledby": "watch-title" },
    el("div", { class: "watch-head" }, title, state),
    problem, details, lastMove, ended, boardRoot));

  let stopped = false; // left: what is still on its way changes nothing
  let tick = null;
  let version = null; // the last version seen, for `since`
  let game = null;
  let arrived = 0; // performance.now() when `game` arrived

  function setState(name, text) {
    state.dataset.state = name;
    state.textContent = text;
  }

  function showTime() {
    if (!game) return;
    let ms = game.elapsed_ms || 0;
    if (game.status === "active" && game.moves > 0) ms += performance.now() - arrived;
    fields.time.value.textContent = formatTime(ms);
  }

  let moveShown = false; // a move from the socket is newer than the one read from the log

  function showMove(move) {
    moveShown = true;
    const text = move === null ? t("watch.abandoned.move") : moveText(move);
    moveOut.textContent = text || t("watch.none");
    if (move) moveOut.dataset.move = move;
    else delete moveOut.dataset.move;
  }

  // The last move before we started watching, from the game's move log.
  async function fetchLastMove() {
    try {
      const log = await get(`/games/${encodeURIComponent(gameId)}/moves`);
      const last = log.moves[log.moves.length - 1];
      if (!moveShown && !stopped && last) showMove(last.move);
    } catch {
      // the move text is a nicety; the board and the counters are what matter
    }
  }

  function show(next) {
    game = next;
    arrived = performance.now();
    const name = playerName(game.player);
    title.textContent = t("watch.title.of", { name });
    document.title = `${t("watch.title.of", { name })} — ${t("brand")}`;
    fields.player.value.replaceChildren(playerLink(game.player));
    fields.code.value.textContent = codeText(game); // hidden while the deal is secret
    fields.code.value.dataset.hidden = game.code ? "false" : "true";
    fields.rule.value.textContent = t(`rule.${game.rule}`);
    fields.status.value.textContent = t(`status.${game.status}`);
    fields.status.value.dataset.status = game.status;
    fields.score.value.textContent = String(game.score);
    fields.moves.value.textContent = String(game.moves);
    showTime();
    renderBoard(boardRoot, game);
    if (game.status === "active") {
      ended.hidden = true;
      ended.replaceChildren();
    } else {
      ended.hidden = false;
      ended.replaceChildren(t(game.status === "won" ? "watch.won" : "watch.abandoned"), " ",
        el("a", { href: `#/replay/${gameId}`, id: "watch-replay", text: t("watch.replay") }));
    }
    clearInterval(tick);
    tick = null;
    if (game.status === "active" && game.moves > 0) tick = setInterval(showTime, 1000);
  }

  function onMessage(message) {
    if (message.game_id && message.game_id !== gameId) return;
    switch (message.type) {
      case "watching":
      case "resync":
        socket.watching();
        problem.textContent = "";
        version = message.version;
        show(message.game);
        setState("live", t("watch.live"));
        if (!moveShown && message.version > 0) fetchLastMove();
        break;
      case "event":
        if (typeof message.version === "number") version = message.version;
        showMove(message.move);
        if (message.game) show(message.game);
        break;
      case "error":
        problem.textContent = message.problem
          ? message.problem.detail || message.problem.title : t("watch.closed");
        if (message.id === WATCH_ID && !game) setState("closed", t("watch.closed"));
        break;
      default:
        break; // authenticated, pong, …
    }
  }

  const socket = new LiveSocket({
    // nothing more will happen to a finished game
    finished: () => Boolean(game && game.status !== "active"),
    hello: () => {
      const me = player();
      if (me && me.token) socket.send({ type: "auth", token: me.token });
      const watch = { type: "watch", game_id: gameId, id: WATCH_ID };
      if (version !== null) watch.since = version;
      socket.send(watch);
    },
    message: onMessage,
    state: (name, seconds) => {
      if (name === "connecting") setState(name, t("watch.connecting"));
      else if (name === "ended") setState(name, t("watch.ended"));
      else if (seconds === null) setState(name, t("watch.reconnecting"));
      else setState(name, t("watch.reconnecting.in", { seconds }));
    },
    unsupported: () => {
      problem.textContent = t("watch.unsupported");
    },
  });
  socket.start();

  return () => {
    stopped = true;
    clearInterval(tick);
    socket.close();
  };
}
