// #/replay/ID: the replay viewer. It shows a finished game position by position, rebuilt here
// from the full deal by applying the server-verified actions in order. This is a viewer of a
// log the server checked, not a rules engine: it never decides whether a move is legal (the
// "Verify" button asks the server to replay and check the document).
import { get, post } from "../lib/api.js";
import { renderBoard } from "../lib/board.js";
import { moveText } from "../lib/cards.js";
import { codeOrHidden, sha256Hex } from "../lib/deal.js";
import { formatTime } from "../lib/format.js";
import { define, t } from "../lib/i18n.js";
import { playerLink, playerName } from "../lib/players.js";
import { buildPositions, visible } from "../lib/positions.js";
import { el, problemText } from "../lib/ui.js";

define({
  en: {
    "replay.title": "Replay",
    "replay.title.of": "Replay: {name}, {code}",
    "replay.player": "Player",
    "replay.code": "Deal",
    "replay.rule": "Rule",
    "replay.result": "Result",
    "replay.result.text": "{status}, {score} points, {moves} moves, {time}",
    "replay.active": "This game is still being played. Its replay opens when the game ends.",
    "replay.hidden": "The deal of this daily game stays secret until the day ends (UTC): its replay opens then.",
    "replay.watch": "Watch it live",
    "replay.controls": "Replay controls",
    "replay.first": "First position (the deal)",
    "replay.back": "Step back",
    "replay.forward": "Step forward",
    "replay.last": "Last position",
    "replay.play": "Play",
    "replay.pause": "Pause",
    "replay.position": "Position in the game",
    "replay.position.text": "Step {step} of {total}",
    "replay.step": "Step",
    "replay.action": "Action",
    "replay.score": "Score",
    "replay.moves": "Moves",
    "replay.deal": "The deal",
    "replay.board": "The table at this step",
    "replay.verify": "Verify with the server",
    "replay.verifying": "Verifying…",
    "replay.valid": "Valid: the actions lead to {status}, {score} points, {moves} moves.",
    "replay.invalid": "Not valid: {reason}",
    "replay.invalid.at": "Not valid at action {n}: {reason}",
    "replay.download": "Download the replay (JSON)",
    "replay.broken": "The replay cannot be shown past action {n} ({move}).",
    "replay.keys": "Keys: arrows step, Home and End jump to the deal and the end.",
  },
  ro: {
    "replay.title": "Reluare",
    "replay.title.of": "Reluare: {name}, {code}",
    "replay.player": "Jucător",
    "replay.code": "Împărțire",
    "replay.rule": "Regula",
    "replay.result": "Rezultat",
    "replay.result.text": "{status}, {score} puncte, {moves} mutări, {time}",
    "replay.active": "Jocul este încă în desfășurare. Reluarea se deschide când jocul se termină.",
    "replay.hidden": "Împărțirea acestui joc al zilei rămâne secretă până la sfârșitul zilei (UTC): reluarea se deschide atunci.",
    "replay.watch": "Urmărește-l în direct",
    "replay.controls": "Comenzile reluării",
    "replay.first": "Prima poziție (împărțirea)",
    "replay.back": "Un pas înapoi",
    "replay.forward": "Un pas înainte",
    "replay.last": "Ultima poziție",
    "replay.play": "Redă",
    "replay.pause": "Pauză",
    "replay.position": "Poziția în joc",
    "replay.position.text": "Pasul {step} din {total}",
    "replay.step": "Pas",
    "replay.action": "Acțiune",
    "replay.score": "Punctaj",
    "replay.moves": "Mutări",
    "replay.deal": "Împărțirea",
    "replay.board": "Masa la acest pas",
    "replay.verify": "Verifică la server",
    "replay.verifying": "Se verifică…",
    "replay.valid": "Valid: acțiunile duc la {status}, {score} puncte, {moves} mutări.",
    "replay.invalid": "Invalid: {reason}",
    "replay.invalid.at": "Invalid la acțiunea {n}: {reason}",
    "replay.download": "Descarcă reluarea (JSON)",
    "replay.broken": "Reluarea nu poate fi arătată după acțiunea {n} ({move}).",
    "replay.keys": "Taste: săgețile fac un pas, Home și End sar la împărțire și la final.",
  },
  he: {
    "replay.title": "שידור חוזר",
    "replay.title.of": "שידור חוזר: {name}, {code}",
    "replay.player": "שחקן",
    "replay.code": "חלוקה",
    "replay.rule": "חוק",
    "replay.result": "תוצאה",
    "replay.result.text": "{status}, {score} נקודות, {moves} מהלכים, {time}",
    "replay.active": "המשחק עדיין מתנהל. השידור החוזר ייפתח כשהמשחק יסתיים.",
    "replay.hidden": "החלוקה של המשחק היומי הזה נשארת סודית עד סוף היום (UTC): השידור החוזר ייפתח אז.",
    "replay.watch": "צפייה בשידור חי",
    "replay.controls": "פקדי השידור החוזר",
    "replay.first": "המצב הראשון (החלוקה)",
    "replay.back": "צעד אחורה",
    "replay.forward": "צעד קדימה",
    "replay.last": "המצב האחרון",
    "replay.play": "הפעל",
    "replay.pause": "השהה",
    "replay.position": "המיקום במשחק",
    "replay.position.text": "צעד {step} מתוך {total}",
    "replay.step": "צעד",
    "replay.action": "פעולה",
    "replay.score": "ניקוד",
    "replay.moves": "מהלכים",
    "replay.deal": "החלוקה",
    "replay.board": "השולחן בצעד הזה",
    "replay.verify": "אימות מול השרת",
    "replay.verifying": "מאמת…",
    "replay.valid": "תקין: הפעולות מובילות ל{status}, {score} נקודות, {moves} מהלכים.",
    "replay.invalid": "לא תקין: {reason}",
    "replay.invalid.at": "לא תקין בפעולה {n}: {reason}",
    "replay.download": "הורדת השידור החוזר (JSON)",
    "replay.broken": "אי אפשר להציג את השידור החוזר אחרי פעולה {n} ({move}).",
    "replay.keys": "מקשים: החצים זזים צעד, Home ו-End קופצים לחלוקה ולסוף.",
  },
});

const AUTOPLAY_MS = 500;

// ---------------------------------------------------------------- the view

function info(label, value, id = null) {
  return el("div", { class: "pair" }, el("dt", { text: label }), el("dd", { id }, value));
}

export async function mount(root, params) {
  const id = params.id;
  document.title = `${t("replay.title")} — ${t("brand")}`;
  const section = el("section", { class: "view-replay", "aria-labelledby": "replay-title" });
  const title = el("h2", { id: "replay-title", text: t("replay.title") });
  const problem = el("p", { id: "replay-error", class: "problem", role: "alert" });
  section.append(title, problem);
  root.replaceChildren(section);

  let doc;
  let log;
  try {
    [doc, log] = await Promise.all([
      get(`/games/${encodeURIComponent(id)}/replay`),
      get(`/games/${encodeURIComponent(id)}/moves`).catch(() => null),
    ]);
  } catch (error) {
    problem.textContent = problemText(error);
    return null;
  }

  const name = playerName(doc.player);
  document.title = `${t("replay.title.of", { name, code: codeOrHidden(doc.code) })} — ${
    t("brand")}`;
  const result = doc.result || {};
  const header = el("dl", { class: "replay-info" },
    info(t("replay.player"), playerLink(doc.player), "replay-player"),
    info(t("replay.code"), codeOrHidden(doc.code), "replay-code"),
    info(t("replay.rule"), t(`rule.${doc.rule}`), "replay-rule"),
    info(t("replay.result"), t("replay.result.text", {
      status: t(`status.${result.status}`),
      score: result.score,
      moves: result.moves,
      time: formatTime(result.elapsed_ms || 0),
    }), "replay-result"));
  header.querySelector("#replay-code").dataset.hidden = doc.code ? "false" : "true";
  section.append(header);

  if (result.status === "active") {
    section.append(el("p", { class: "notice", id: "replay-active" }, t("replay.active"), " ",
      el("a", { href: `#/watch/${id}`, id: "replay-watch", text: t("replay.watch") })));
    return null;
  }
  if (!doc.deal) {
    // a daily game that ended before its day did: its deal is still secret
    section.append(el("p", { class: "notice", id: "replay-hidden" }, t("replay.hidden")));
    return null;
  }
  if (doc.deal_commitment) {
    // the code against its commitment, here in the page (the server checks it too: Verify)
    const mark = el("span", { class: "mark", id: "replay-commitment-check" });
    section.append(el("p", { class: "replay-commitment" }, `${t("deal.commitment.hex")}: `,
      el("code", { class: "hex", id: "replay-commitment", dir: "ltr", text: doc.deal_commitment }),
      " ", mark));
    const matches = await sha256Hex(doc.code) === doc.deal_commitment;
    mark.dataset.state = matches ? "verified" : "failed";
    mark.replaceChildren(el("span", { "aria-hidden": "true", text: matches ? "✓ " : "✗ " }),
      t(matches ? "deal.matches" : "deal.differs"));
  }

  const actions = doc.actions || [];
  const { positions, moves, broken } = buildPositions(doc.deal, actions);
  const total = actions.length;
  const reachable = positions.length - 1; // the last position that could be built
  const scores = positions.map((position, k) => {
    const logged = log && log.moves && log.moves[k - 1];
    return k > 0 && logged && logged.seq === k ? logged.score : position.score;
  });
  if (broken) {
    problem.textContent = t("replay.broken", { n: broken.index + 1, move: broken.move });
    console.warn("replay:", broken.error);
  }

  // Controls: buttons, the slider, the step text.
  // Arrows of the common fonts (DejaVu, Noto); mirrored by pages.css in right-to-left pages.
  const glyphs = { first: "⇤", back: "←", play: "▶", forward: "→", last: "⇥" };
  const button = (action) => el("button", { type: "button", class: `control control-${action}`,
    "data-action": action, "aria-label": t(`replay.${action}`), title: t(`replay.${action}`) },
  el("span", { class: "glyph", "aria-hidden": "true", text: glyphs[action] }));
  const buttons = Object.fromEntries(
    ["first", "back", "play", "forward", "last"].map((action) => [action, button(action)]));
  const slider = el("input", { type: "range", id: "replay-position", min: "0",
    max: String(total), step: "1", value: "0", "aria-label": t("replay.position") });
  const stepText = el("span", { id: "replay-step", dir: "ltr" });
  const moveOut = el("span", { id: "replay-move" });
  const scoreOut = el("span", { id: "replay-score" });
  const movesOut = el("span", { id: "replay-moves" });
  const boardRoot = el("div", { class: "replay-board", id: "replay-board", role: "region",
    "aria-label": t("replay.board") });
  const verifyButton = el("button", { type: "button", id: "replay-verify-button",
    "data-action": "verify", text: t("replay.verify") });
  const verifyOut = el("p", { id: "replay-verify", class: "verify", role: "status" });
  const verifyProblem = el("p", { id: "replay-verify-error", class: "problem", role: "alert" });
  const announce = el("p", { class: "visually-hidden", role: "status", id: "replay-announce" });
  // The document already loaded (with this player's token, so that the player's own daily game
  // downloads on its day too, when the public address still answers 403).
  const file = URL.createObjectURL(new Blob([JSON.stringify(doc, null, 2)],
    { type: "application/json" }));
  const download = el("a", { href: file, download: `replay-${doc.code || doc.game_id}.json`,
    id: "replay-download", text: t("replay.download") });

  section.append(
    el("div", { class: "replay-controls", role: "group", "aria-label": t("replay.controls") },
      el("div", { class: "replay-buttons" }, Object.values(buttons)),
      el("div", { class: "replay-slider" }, slider)),
    el("dl", { class: "replay-now" },
      info(t("replay.step"), stepText),
      info(t("replay.action"), moveOut),
      info(t("replay.score"), scoreOut),
      info(t("replay.moves"), movesOut)),
    boardRoot,
    el("p", { class: "replay-keys help", text: t("replay.keys") }),
    el("div", { class: "replay-tools" }, verifyButton, download),
    verifyProblem, verifyOut, announce);

  let step = 0;
  let timer = null;

  function show(next) {
    step = Math.max(0, Math.min(reachable, next));
    renderBoard(boardRoot, visible(positions[step]));
    stepText.textContent = `${step} / ${total}`;
    const move = step > 0 ? actions[step - 1].move : null;
    moveOut.textContent = move ? moveText(move) : t("replay.deal");
    if (move) moveOut.dataset.move = move;
    else delete moveOut.dataset.move;
    scoreOut.textContent = String(scores[step]);
    movesOut.textContent = String(moves[step]);
    slider.value = String(step);
    const spoken = `${t("replay.position.text", { step, total })}: ${
      move ? moveText(move) : t("replay.deal")}`;
    slider.setAttribute("aria-valuetext", spoken);
    if (!timer) announce.textContent = spoken; // not every half second while playing
    buttons.first.disabled = step === 0;
    buttons.back.disabled = step === 0;
    buttons.forward.disabled = step >= reachable;
    buttons.last.disabled = step >= reachable;
    if (step >= reachable && timer) pause();
  }

  function setPlayButton(playing) {
    const label = t(playing ? "replay.pause" : "replay.play");
    buttons.play.setAttribute("aria-label", label);
    buttons.play.title = label;
    buttons.play.dataset.playing = playing ? "true" : "false";
    buttons.play.firstChild.textContent = playing ? "❚❚" : "▶";
  }

  function pause() {
    clearInterval(timer);
    timer = null;
    setPlayButton(false);
  }

  function play() {
    if (reachable === 0) return;
    if (step >= reachable) show(0);
    setPlayButton(true);
    timer = setInterval(() => show(step + 1), AUTOPLAY_MS);
  }

  const act = {
    first: () => show(0),
    back: () => show(step - 1),
    forward: () => show(step + 1),
    last: () => show(reachable),
    play: () => (timer ? pause() : play()),
  };
  for (const [action, control] of Object.entries(buttons)) {
    control.addEventListener("click", () => {
      if (action !== "play" && timer) pause();
      act[action]();
    });
  }
  slider.addEventListener("input", () => {
    if (timer) pause();
    show(Number(slider.value));
  });

  function onKey(event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target && target.closest && target.closest("input, select, textarea, dialog, [contenteditable]")) {
      return; // the slider and form fields handle their own keys
    }
    if (!section.isConnected) return;
    const rtl = document.documentElement.dir === "rtl";
    const keys = {
      ArrowRight: rtl ? "back" : "forward",
      ArrowLeft: rtl ? "forward" : "back",
      Home: "first",
      End: "last",
    };
    const action = keys[event.key];
    if (!action) return;
    event.preventDefault();
    if (timer) pause();
    act[action]();
  }
  document.addEventListener("keydown", onKey);

  verifyButton.addEventListener("click", async () => {
    verifyButton.disabled = true;
    verifyProblem.textContent = "";
    verifyOut.textContent = t("replay.verifying");
    delete verifyOut.dataset.valid;
    try {
      const answer = await post("/replays/verify", doc, { retry: true });
      verifyOut.dataset.valid = answer.valid ? "true" : "false";
      if (answer.valid) {
        verifyOut.textContent = t("replay.valid", {
          status: t(`status.${answer.status}`), score: answer.score, moves: answer.moves });
      } else {
        const reason = answer.reason || answer.rule || "";
        verifyOut.textContent = answer.failed_index === null || answer.failed_index === undefined
          ? t("replay.invalid", { reason })
          : t("replay.invalid.at", { n: answer.failed_index + 1, reason });
        if (answer.failed_index !== null && answer.failed_index !== undefined) {
          verifyOut.dataset.index = String(answer.failed_index);
        }
      }
    } catch (error) {
      verifyOut.textContent = "";
      verifyProblem.textContent = problemText(error);
    } finally {
      verifyButton.disabled = false;
    }
  });

  show(0);
  return () => {
    clearInterval(timer);
    timer = null;
    document.removeEventListener("keydown", onKey);
    URL.revokeObjectURL(file);
  };
}
