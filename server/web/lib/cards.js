// Card text (SPEC 1.9): rank `A 2 … 9 T J Q K` then suit `S H D C`. Display only: the client
// never decides whether a move is legal; the server does.
import { language, t } from "./i18n.js";

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

export function formatTime(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = String(seconds % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

// An ISO 8601 time as a date and time in the page's language ("—" when there is none).
export function formatDate(iso) {
  if (!iso) return "—";
  try {
    return new Intl.DateTimeFormat(language(), { dateStyle: "medium", timeStyle: "short" })
      .format(new Date(iso));
  } catch {
    return iso;
  }
}

// A race rating's number (an OpenSkill ordinal, mu or sigma) with one decimal, in the page's
// language; `sign` writes a change's + or −.
export function formatRating(value, { sign = false } = {}) {
  return new Intl.NumberFormat(language(), {
    minimumFractionDigits: 1, maximumFractionDigits: 1, signDisplay: sign ? "exceptZero" : "auto",
  }).format(value);
}
