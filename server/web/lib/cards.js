// Card text (SPEC 1.9): rank `A 2 … 9 T J Q K` then suit `S H D C`. Display only: the client
// never decides whether a move is legal; the server does.
import { t } from "./i18n.js";

export const SUITS = ["S", "H", "D", "C"]; // the foundations' fixed order
export const SYMBOL = { S: "♠", H: "♥", D: "♦", C: "♣" };
const FACE = { A: "A", T: "10", J: "J", Q: "Q", K: "K" };

export function isRed(card) {
  return card[1] === "H" || card[1] === "D";
}

export function face(card) {
  const rank = card[0];
  return FACE[rank] || rank;
}

// "7♥", for text that names a card.
export function short(card) {
  return face(card) + SYMBOL[card[1]];
}

// "7 of hearts", in the page's language, for screen readers.
export function cardName(card) {
  return t("card.name", { rank: t(`rank.${card[0]}`), suit: t(`suit.${card[1]}`) });
}

// "7H-t5" → "7♥ → column 5"
export function moveText(move) {
  if (!move) return "";
  if (move === "undo") return t("move.undo");
  const [card, place] = move.split("-");
  const where = place === "f" ? t("place.f") : t("place.t", { n: place.slice(1) });
  const arrow = document.documentElement.dir === "rtl" ? "←" : "→";
  return `${short(card)} ${arrow} ${where}`;
}
