// Draws a table (the `tableau` and `foundations` of a game, as the API gives them) into an
// element. The same drawing serves play, replays and watching; `interactive` makes every card
// that can be picked up a button (keyboard and screen readers), and nothing else.
import { SUITS, SYMBOL, cardName, face, isRed } from "./cards.js";
import { t } from "./i18n.js";

function make(tag, className, attributes = {}) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  return element;
}

export function cardElement(card, { interactive = false, place = null } = {}) {
  if (card === null) {
    return make("div", "card down", { role: "img", "aria-label": t("card.down") });
  }
  const element = make(interactive ? "button" : "div", `card up ${isRed(card) ? "red" : "black"}`);
  if (interactive) element.type = "button";
  else element.setAttribute("role", "img");
  element.dataset.card = card;
  if (place) element.dataset.place = place;
  element.setAttribute("aria-label", cardName(card));
  const corner = make("span", "corner", { "aria-hidden": "true" });
  corner.textContent = face(card) + SYMBOL[card[1]];
  const center = make("span", "center", { "aria-hidden": "true" });
  center.textContent = SYMBOL[card[1]];
  element.append(corner, center);
  return element;
}

// Draws `state` into `root`; returns nothing. Options:
//   interactive: cards and places are buttons;
//   targets: places ("t3", "f") to highlight as legal destinations;
//   selected: a card to mark as picked up;
//   hint: {card, place} to mark.
export function renderBoard(root, state, options = {}) {
  const { interactive = false, targets = [], selected = null, hint = null } = options;
  const focused = document.activeElement && root.contains(document.activeElement)
    ? focusKeys(document.activeElement) : null;
  const board = make("div", "board");

  const foundations = make("div", "foundations", { role: "group", "aria-label": t("place.f") });
  state.foundations.forEach((pile, index) => {
    const suit = SUITS[index];
    const top = pile.length ? pile[pile.length - 1] : null;
    const element = make(interactive ? "button" : "div", "pile foundation");
    if (interactive) element.type = "button";
    else element.setAttribute("role", "group");
    element.dataset.place = "f";
    element.dataset.suit = suit;
    if (top) element.dataset.card = top;
    element.setAttribute("aria-label", top
      ? t("foundation.top", { suit: t(`suit.${suit}`), card: cardName(top) })
      : t("foundation.label", { suit: t(`suit.${suit}`), count: 0 }));
    const mark = make("span", `pile-mark ${suit === "H" || suit === "D" ? "red" : "black"}`,
      { "aria-hidden": "true" });
    mark.textContent = SYMBOL[suit];
    element.append(mark);
    if (top) {
      const card = cardElement(top);
      card.setAttribute("aria-hidden", "true");
      card.removeAttribute("role");
      element.append(card);
    }
    element.dataset.count = String(pile.length);
    if (targets.includes("f") && selected && selected[1] === suit) element.classList.add("target");
    if (top && selected === top) element.classList.add("selected");
    if (hint && hint.place === "f" && hint.card[1] === suit) element.classList.add("hint-place");
    if (hint && top === hint.card) element.classList.add("hint-card");
    foundations.append(element);
  });

  const tableau = make("div", "tableau");
  state.tableau.forEach((column, index) => {
    const place = `t${index + 1}`;
    const element = make("div", "column", { role: "group" });
    element.dataset.place = place;
    element.setAttribute("aria-label", column.length
      ? t("column.label", { n: index + 1, count: column.length })
      : t("column.empty", { n: index + 1 }));
    const slot = make(interactive ? "button" : "div", "slot");
    if (interactive) {
      slot.type = "button";
      slot.setAttribute("aria-label", t("place.t", { n: index + 1 }));
      if (column.length) slot.tabIndex = -1; // under the cards: the cards are the stops
    } else {
      slot.setAttribute("aria-hidden", "true");
    }
    slot.dataset.place = place;
    element.append(slot);
    let down = 0;
    let up = 0;
    column.forEach((card, position) => {
      const cardNode = cardElement(card, { interactive: interactive && card !== null, place });
      cardNode.style.setProperty("--down", String(down));
      cardNode.style.setProperty("--up", String(up));
      if (card === null) down += 1;
      else up += 1;
      if (position === column.length - 1) cardNode.classList.add("last");
      if (card && card === selected) cardNode.classList.add("selected");
      if (card && hint && card === hint.card) cardNode.classList.add("hint-card");
      element.append(cardNode);
    });
    element.style.setProperty("--down", String(down));
    element.style.setProperty("--up", String(Math.max(0, up - 1)));
    if (targets.includes(place)) element.classList.add("target");
    if (hint && hint.place === place) element.classList.add("hint-place");
    tableau.append(element);
  });

  board.append(foundations, tableau);
  root.replaceChildren(board);
  if (focused) {
    const again = focused.map((selector) => root.querySelector(selector)).find(Boolean) || root;
    again.focus({ preventScroll: true });
  }
}

// Where the focus goes once the table is drawn anew, best first: the same control (the card
// where it is now, or the foundation it went to), else the last control of the column it was
// in, else the table itself (focusable when it is the play table).
function focusKeys(element) {
  const keys = [];
  const card = element.dataset.card;
  if (card && element.tagName === "BUTTON" && element.classList.contains("card")) {
    keys.push(`button.card[data-card="${card}"]`, `.foundation[data-card="${card}"]`);
  }
  if (element.classList.contains("foundation")) {
    keys.push(`.foundation[data-suit="${element.dataset.suit}"]`);
  }
  const place = element.dataset.place;
  if (place && place !== "f") {
    keys.push(`.column[data-place="${place}"] button.card:last-of-type`,
      `.column[data-place="${place}"] .slot`);
  }
  return keys;
}

// Which column holds `card`, and is it the last card there?
export function locate(state, card) {
  for (let index = 0; index < state.tableau.length; index += 1) {
    const column = state.tableau[index];
    const position = column.indexOf(card);
    if (position >= 0) {
      return { place: `t${index + 1}`, position, last: position === column.length - 1,
        group: column.slice(position) };
    }
  }
  for (const pile of state.foundations) {
    if (pile.length && pile[pile.length - 1] === card) {
      return { place: "f", position: pile.length - 1, last: true, group: [card] };
    }
  }
  return null;
}
