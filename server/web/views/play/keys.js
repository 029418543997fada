// The play view's keyboard input. On the table: Enter or Space picks up the focused card, then
// Enter on a column (any of its cards or its empty place) or a foundation puts it there; Escape
// puts it back; F sends the focused card to its foundation (tap), D places it as a double tap;
// arrows move between cards. Anywhere on the page: U (or Ctrl+Z) undoes, H asks for a hint,
// N opens New game (not in a race, which has neither). Letters are read by where they are on the
// keyboard when the layout has no Latin letters (Hebrew).
import { locate } from "../../lib/board.js";
import { short } from "../../lib/cards.js";
import { t } from "../../lib/i18n.js";

// `view` is the play view (view.js): its game, table and selection, and its actions.
export class KeyboardInput {
  constructor(view) {
    this.view = view;
  }

  tableKey(event) {
    const { view } = this;
    if (!view.game || view.game.status !== "active" || event.altKey || event.metaKey) return;
    if (view.locked()) return;
    const node = event.target.closest("[data-place]");
    if (!node) return;
    const card = node.dataset.card || null;
    const key = letter(event);
    if (key === "Enter" || key === " ") {
      event.preventDefault();
      if (view.selected) {
        const from = locate(view.game, view.selected);
        const place = node.dataset.place;
        const chosen = view.selected;
        if (card === chosen || !from || place === from.place) {
          view.select(card === chosen || !card ? null : card);
          if (card === chosen) view.say(t("play.putBack", { card: short(chosen) }));
          return;
        }
        view.selected = null;
        view.targets = [];
        view.move(chosen, place);
      } else if (card) {
        view.select(card);
      }
    } else if (key === "Escape" && view.selected) {
      event.preventDefault();
      const chosen = view.selected;
      view.select(null);
      view.say(t("play.putBack", { card: short(chosen) }));
    } else if (key === "f" && card && !event.ctrlKey) {
      event.preventDefault();
      view.tap(card);
    } else if (key === "d" && card && !event.ctrlKey) {
      event.preventDefault();
      view.doubleTap(card);
    } else if (key.startsWith("Arrow")) {
      event.preventDefault();
      this.moveFocus(node, key);
    }
  }

  // Arrow keys: left and right between columns (and foundations), up and down within one.
  moveFocus(node, key) {
    const { view } = this;
    // the table reads left to right in every language (t1 … t7, SPEC 1.9)
    const columns = [...view.table.querySelectorAll(".column")];
    const foundations = [...view.table.querySelectorAll(".foundation")];
    const stops = (column) => [...column.querySelectorAll(".card.up")].concat(
      column.querySelector(".card") ? [] : [column.querySelector(".slot")]);
    const inFoundations = node.classList.contains("foundation");
    let next = null;
    if (key === "ArrowLeft" || key === "ArrowRight") {
      const step = key === "ArrowRight" ? 1 : -1;
      if (inFoundations) {
        next = foundations[foundations.indexOf(node) + step];
      } else {
        const column = columns[columns.indexOf(node.closest(".column")) + step];
        if (column) next = stops(column).at(-1);
      }
    } else if (inFoundations) {
      if (key === "ArrowDown") next = stops(columns[0]).at(-1);
    } else {
      const column = node.closest(".column");
      const list = stops(column);
      const index = list.indexOf(node);
      if (key === "ArrowUp") next = index > 0 ? list[index - 1] : foundations[0];
      else next = list[index + 1];
    }
    if (next) next.focus();
  }

  globalKey(event) {
    const { view } = this;
    if (document.querySelector("dialog[open]") || event.altKey) return;
    const target = event.target;
    if (target instanceof HTMLInputElement || target instanceof HTMLSelectElement
      || target instanceof HTMLTextAreaElement) return;
    const key = letter(event);
    if ((event.ctrlKey || event.metaKey) && key === "z") {
      event.preventDefault();
      view.undo();
    } else if (event.ctrlKey || event.metaKey) {
      return;
    } else if (key === "u") {
      view.undo();
    } else if (key === "h" && !view.race) {
      view.askHint();
    } else if (key === "n" && !view.race) {
      event.preventDefault();
      view.newGame();
    }
  }
}

// The letter of a key: the Latin letter it types (AZERTY, QWERTZ, Dvorak…), else, for a layout
// without Latin letters (Hebrew), the letter at its place on a US keyboard; other keys as they
// are ("Enter", "ArrowLeft"…).
function letter(event) {
  if (/^[a-z]$/i.test(event.key)) return event.key.toLowerCase();
  if (event.key.length === 1 && /^Key[A-Z]$/.test(event.code || "")) {
    return event.code.slice(3).toLowerCase();
  }
  return event.key;
}
