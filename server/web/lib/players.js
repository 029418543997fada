// A player as the pages name them. A deleted player (SPEC 2.2.2) still appears where their games
// stay (a game, its replay, a race's players and standings) as `{"id": null, "name": null}`: it
// is written "deleted player", with no link (there is no page of theirs any more).
import { define, t } from "./i18n.js";
import { el } from "./ui.js";

define({
  en: { "player.deleted": "deleted player" },
  ro: { "player.deleted": "jucător șters" },
  he: { "player.deleted": "שחקן שנמחק" },
});

// Whether `who` ({id, name}) is a deleted player.
export function deleted(who) {
  return Boolean(who) && (who.id === null || who.id === undefined
    || who.name === null || who.name === undefined || who.name === "");
}

// The name of `who`: "deleted player" for a deleted one, "—" for none at all.
export function playerName(who) {
  if (!who) return "—";
  return deleted(who) ? t("player.deleted") : who.name;
}

// `who` as a link to their statistics, or their name alone when they are deleted (or none).
export function playerLink(who, attributes = {}) {
  if (who && !deleted(who)) {
    return el("a", { href: `#/player/${who.id}`, ...attributes, text: who.name });
  }
  return el("span", { ...attributes, class: who ? "deleted-player" : null,
    text: playerName(who) });
}
