// The play view's dialogs: New game (a rule, a deal code, winnable deals only, today's deal),
// Settings (the four play settings, kept on the server per player, and the player's seeds:
// seeds-panel.js), the won game's dialog, and the questions asked before a hint and before
// giving up.
import { patch, post } from "../../lib/api.js";
import { CODE_MAX_LENGTH, codeText, secretDeal } from "../../lib/deal.js";
import { formatTime } from "../../lib/format.js";
import { t } from "../../lib/i18n.js";
import { dialog, el, fieldProblemText, problemText } from "../../lib/ui.js";
import { seedsPanel } from "./seeds-panel.js";

// Every dialog of the play view, closed when the view leaves the page.
const DIALOGS = "#new-game-dialog, #settings-dialog, #won-dialog, #hint-confirm, #give-up-confirm";

export function closeDialogs() {
  for (const box of document.querySelectorAll(DIALOGS)) box.close();
}

// New game, for the play view `view`: the game it deals is shown there (the game in play, if any
// move was made, is given up first).
export function newGameDialog(view) {
  const rule = view.game ? view.game.rule : "classic";
  const radio = (value, label) => el("label", { class: "choice" },
    el("input", { type: "radio", name: "rule", value, checked: value === rule }), t(label));
  const code = el("input", { id: "deal-code", name: "code", autocomplete: "off",
    spellcheck: "false", autocapitalize: "characters", placeholder: "RU1-C-AAAAABB",
    maxlength: String(CODE_MAX_LENGTH), "aria-describedby": "deal-code-help" });
  const winnable = el("input", { id: "winnable", type: "checkbox", name: "winnable" });
  const problem = el("p", { class: "problem", role: "alert" });
  const inPlay = view.game && view.game.status === "active" && view.game.moves > 0;
  const box = el("dialog", { class: "dialog", id: "new-game-dialog",
    "aria-labelledby": "new-game-title" });
  const form = el("form", {},
    el("fieldset", {}, el("legend", { text: t("new.rule") }),
      radio("classic", "new.classic"), radio("relaxed", "new.relaxed")),
    el("label", { for: "deal-code", text: t("new.code") }), code,
    el("p", { id: "deal-code-help", class: "help", text: t("new.code.help") }),
    el("label", { class: "choice" }, winnable, t("new.winnable")),
    inPlay ? el("p", { class: "note", text: t("new.abandons") }) : null,
    problem,
    el("div", { class: "actions" },
      el("button", { type: "submit", class: "primary", id: "deal", text: t("new.deal") }),
      el("button", { type: "button", id: "daily", text: t("new.daily"),
        onclick: () => deal({ daily: true, rule: chosenRule() }) }),
      el("button", { type: "button", text: t("cancel"), onclick: () => box.close() })));
  const chosenRule = () => form.querySelector("input[name=rule]:checked").value;
  const deal = async (body) => {
    if (box.dataset.busy) return; // one game per press, however often it is pressed
    box.dataset.busy = "1"; // and the window stays until the answer comes
    for (const button of form.querySelectorAll("button")) button.disabled = true;
    problem.textContent = "";
    try {
      const game = await post("/games", body);
      if (view.left) return;
      const previous = view.game;
      delete box.dataset.busy;
      box.close();
      if (previous && previous.status === "active" && previous.moves > 0) {
        post(`/games/${previous.id}/abandon`).catch(() => {});
      }
      view.show(game);
      view.say("");
      view.table.querySelector(".card.up")?.focus();
    } catch (error) {
      problem.textContent = fieldProblemText(error);
    } finally {
      delete box.dataset.busy;
      for (const button of form.querySelectorAll("button")) button.disabled = false;
    }
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = code.value.trim();
    deal(text ? { code: text } : { rule: chosenRule(), winnable: winnable.checked });
  });
  box.append(el("h2", { id: "new-game-title", text: t("new.title") }), form);
  box.addEventListener("cancel", (event) => {
    if (box.dataset.busy) event.preventDefault();
  });
  box.addEventListener("close", () => box.remove());
  document.body.append(box);
  box.showModal();
}

// Settings, for the play view `view`: each change takes effect at once and is kept on the server.
export function settingsDialog(view) {
  const names = Object.keys(view.settings);
  const box = el("dialog", { class: "dialog", id: "settings-dialog",
    "aria-labelledby": "settings-title" });
  const problem = el("p", { class: "problem", role: "alert" });
  const rows = names.map((name) => {
    const input = el("input", { type: "checkbox", id: `setting-${name}`, name,
      checked: view.settings[name], "aria-describedby": `setting-${name}-help` });
    input.addEventListener("change", async () => {
      problem.textContent = "";
      const before = view.settings[name];
      view.settings[name] = input.checked; // takes effect at once; the server keeps it
      try {
        const stored = await patch(`/players/${view.me.id}/settings`, { [name]: input.checked });
        for (const key of names) view.settings[key] = stored[key];
      } catch (error) {
        view.settings[name] = before;
        input.checked = before;
        problem.textContent = problemText(error);
      }
    });
    return el("div", { class: "setting" },
      el("label", { class: "choice", for: `setting-${name}` }, input, t(`settings.${name}`)),
      el("p", { class: "help", id: `setting-${name}-help`, text: t(`settings.${name}.help`) }));
  });
  box.append(el("h2", { id: "settings-title", text: t("settings.title") }), ...rows, problem,
    seedsPanel(view),
    el("div", { class: "actions" },
      el("button", { type: "button", class: "primary", text: t("close"),
        onclick: () => box.close() })));
  box.addEventListener("close", () => box.remove());
  document.body.append(box);
  box.showModal();
}

// The won game's dialog; resolves with "replay", "new" or "close" (null when dismissed).
export function wonDialog(game) {
  return dialog({
    title: t("won.title"),
    body: [
      el("p", { text: t("won.text", { score: game.score, moves: game.moves,
        time: formatTime(game.elapsed_ms) }) }),
      el("p", { id: "won-deal" }, `${t("won.deal")} `,
        el("span", { class: "deal-code", dir: "ltr", text: codeText(game) })),
    ],
    buttons: [
      { label: t("won.replay"), value: "replay", primary: true },
      { label: t("won.new"), value: "new" },
      { label: t("close"), value: "close" },
    ],
    id: "won-dialog",
  });
}

// Whether to ask for a hint, which makes the game assisted.
export function confirmHint() {
  return dialog({
    title: t("play.hint"),
    body: el("p", { text: t("play.hint.confirm") }),
    buttons: [{ label: t("play.hint.ask"), value: true, primary: true },
      { label: t("cancel"), value: false }],
    id: "hint-confirm",
  });
}

// Whether to give `game` up, saying what follows: for a race game, a daily deal, a secret deal,
// or a deal the player chose.
export function confirmGiveUp(game) {
  let text = "giveUp.text.chosen";
  if (game.race_id) text = "giveUp.text.race";
  else if (game.daily) text = "giveUp.text.daily";
  else if (secretDeal(game)) text = "giveUp.text";
  return dialog({
    title: t("giveUp.title"),
    body: el("p", { text: t(text) }),
    buttons: [{ label: t("play.giveUp"), value: true, primary: true },
      { label: t("cancel"), value: false }],
    id: "give-up-confirm",
  });
}
