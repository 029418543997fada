// Times, dates and ratings as the pages write them, in the page's language.
import { language } from "./i18n.js";

// A duration in milliseconds as "m:ss" (or "h:mm:ss").
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
