// #/boards: the leaderboards. The global boards of a rule (by score, time or moves, over a
// period), the board of one deal (a code), the daily deal of a day, and the assisted boards.
// The choices are kept in the address (#/boards?rule=…&by=…), so a board can be shared.
// A board by score ranks by the ranked score (SPEC 1.5), shown beside the game's score. A code
// still secret (a daily deal until its day ends) is shown as hidden. "Race rating" shows the
// race board instead (GET /api/v1/leaderboards/races: players by the ordinal of their OpenSkill
// rating of the rule, SPEC 2.6.1).
import { get, query } from "../lib/api.js";
import { CODE_MAX_LENGTH, CODE_PATTERN, codeOrHidden, sha256Hex } from "../lib/deal.js";
import { formatDate, formatRating, formatTime } from "../lib/format.js";
import { define, t } from "../lib/i18n.js";
import { playerLink } from "../lib/players.js";
import { player } from "../lib/session.js";
import { el, problemText } from "../lib/ui.js";

define({
  en: {
    "boards.title": "Leaderboards",
    "boards.controls": "Choose a leaderboard",
    "boards.rule": "Rule",
    "boards.by": "Rank by",
    "boards.by.score": "Score",
    "boards.by.time": "Time",
    "boards.by.moves": "Moves",
    "boards.by.rating": "Race rating",
    "boards.caption.races": "Race ratings: {rule}",
    "boards.ordinal": "Rating",
    "boards.mu": "Skill (μ)",
    "boards.sigma": "Uncertainty (σ)",
    "boards.races": "Races",
    "boards.empty.races": "No race has finished yet. Race someone and you will be here!",
    "boards.period": "Period",
    "boards.period.day": "Today",
    "boards.period.week": "This week",
    "boards.period.month": "This month",
    "boards.period.all": "All time",
    "boards.daily": "Daily deal",
    "boards.date": "Day (UTC)",
    "boards.daily.deal": "Daily deal of {date}",
    "boards.daily.hidden": "hidden until the day ends (UTC)",
    "boards.daily.commitment": "Commitment (SHA-256 of the code):",
    "boards.daily.matches": "the code matches its commitment",
    "boards.daily.differs": "the code does not match its commitment",
    "boards.code": "Deal code",
    "boards.code.help": "Optional: the board of one deal, e.g. RU1-C-AAAAABB or an RU2 code.",
    "boards.code.invalid":
      "A deal code looks like RU1-C-AAAAABB (RU1, C for classic or R for relaxed, 7 letters) or RU2-C- followed by four groups of 7 letters joined by dashes.",
    "boards.assisted": "Assisted games (a hint was used)",
    "boards.show": "Show",
    "boards.caption": "Leaderboard: {rule}, by {by}, {period}",
    "boards.caption.daily": "Daily deal of {date} ({code}): by {by}, {period}",
    "boards.caption.code": "Deal {code}: by {by}, {period}",
    "boards.caption.assisted": "{caption} (assisted games)",
    "boards.rank": "Rank",
    "boards.player": "Player",
    "boards.ranked": "Ranked score",
    "boards.score": "Score",
    "boards.time": "Time",
    "boards.moves": "Moves",
    "boards.deal": "Deal",
    "boards.finished": "Finished",
    "boards.replay": "Replay",
    "boards.replay.later": "After today",
    "boards.replay.label": "Replay of the game of {name}, rank {rank}",
    "boards.more": "More",
    "boards.empty": "No games yet. Play one and it will be here!",
    "boards.loading": "Loading the leaderboard…",
  },
  ro: {
    "boards.title": "Clasamente",
    "boards.controls": "Alege un clasament",
    "boards.rule": "Regula",
    "boards.by": "Ordonat după",
    "boards.by.score": "Punctaj",
    "boards.by.time": "Timp",
    "boards.by.moves": "Mutări",
    "boards.by.rating": "Rating la curse",
    "boards.caption.races": "Rating la curse: {rule}",
    "boards.ordinal": "Rating",
    "boards.mu": "Pricepere (μ)",
    "boards.sigma": "Incertitudine (σ)",
    "boards.races": "Curse",
    "boards.empty.races": "Nicio cursă nu s-a încheiat încă. Întrece-te cu cineva și vei apărea aici!",
    "boards.period": "Perioada",
    "boards.period.day": "Azi",
    "boards.period.week": "Săptămâna aceasta",
    "boards.period.month": "Luna aceasta",
    "boards.period.all": "Dintotdeauna",
    "boards.daily": "Jocul zilei",
    "boards.date": "Ziua (UTC)",
    "boards.daily.deal": "Jocul zilei {date}",
    "boards.daily.hidden": "ascuns până la sfârșitul zilei (UTC)",
    "boards.daily.commitment": "Angajament (SHA-256 al codului):",
    "boards.daily.matches": "codul se potrivește cu angajamentul",
    "boards.daily.differs": "codul nu se potrivește cu angajamentul",
    "boards.code": "Codul împărțirii",
    "boards.code.help": "Opțional: clasamentul unei singure împărțiri, de ex. RU1-C-AAAAABB sau un cod RU2.",
    "boards.code.invalid":
      "Un cod arată ca RU1-C-AAAAABB (RU1, C pentru clasic sau R pentru relaxat, 7 litere) sau RU2-C- urmat de patru grupuri de 7 litere unite prin cratime.",
    "boards.assisted": "Jocuri asistate (cu indiciu)",
    "boards.show": "Arată",
    "boards.caption": "Clasament: {rule}, după {by}, {period}",
    "boards.caption.daily": "Jocul zilei {date} ({code}): după {by}, {period}",
    "boards.caption.code": "Împărțirea {code}: după {by}, {period}",
    "boards.caption.assisted": "{caption} (jocuri asistate)",
    "boards.rank": "Locul",
    "boards.player": "Jucător",
    "boards.ranked": "Punctaj de clasament",
    "boards.score": "Punctaj",
    "boards.time": "Timp",
    "boards.moves": "Mutări",
    "boards.deal": "Împărțire",
    "boards.finished": "Terminat",
    "boards.replay": "Reluare",
    "boards.replay.later": "După ziua de azi",
    "boards.replay.label": "Reluarea jocului lui {name}, locul {rank}",
    "boards.more": "Mai multe",
    "boards.empty": "Niciun joc încă. Joacă unul și va apărea aici!",
    "boards.loading": "Se încarcă clasamentul…",
  },
  he: {
    "boards.title": "טבלאות מובילים",
    "boards.controls": "בחירת טבלה",
    "boards.rule": "חוק",
    "boards.by": "דירוג לפי",
    "boards.by.score": "ניקוד",
    "boards.by.time": "זמן",
    "boards.by.moves": "מהלכים",
    "boards.by.rating": "דירוג מרוצים",
    "boards.caption.races": "דירוג מרוצים: {rule}",
    "boards.ordinal": "דירוג",
    "boards.mu": "מיומנות (μ)",
    "boards.sigma": "אי־ודאות (σ)",
    "boards.races": "מרוצים",
    "boards.empty.races": "עוד לא הסתיים אף מרוץ. התחרו במישהו ותופיעו כאן!",
    "boards.period": "תקופה",
    "boards.period.day": "היום",
    "boards.period.week": "השבוע",
    "boards.period.month": "החודש",
    "boards.period.all": "כל הזמנים",
    "boards.daily": "חלוקה יומית",
    "boards.date": "יום (UTC)",
    "boards.daily.deal": "החלוקה היומית של {date}",
    "boards.daily.hidden": "מוסתרת עד סוף היום (UTC)",
    "boards.daily.commitment": "התחייבות (SHA-256 של הקוד):",
    "boards.daily.matches": "הקוד מתאים להתחייבות",
    "boards.daily.differs": "הקוד אינו מתאים להתחייבות",
    "boards.code": "קוד חלוקה",
    "boards.code.help": "רשות: הטבלה של חלוקה אחת, למשל RU1-C-AAAAABB או קוד RU2.",
    "boards.code.invalid":
      "קוד חלוקה נראה כמו RU1-C-AAAAABB (‏RU1, ‏C לקלאסי או R למקל, 7 אותיות) או RU2-C- ואחריו ארבע קבוצות של 7 אותיות מחוברות במקפים.",
    "boards.assisted": "משחקים בעזרת רמז",
    "boards.show": "הצג",
    "boards.caption": "טבלת מובילים: {rule}, לפי {by}, {period}",
    "boards.caption.daily": "החלוקה היומית של {date} ({code}): לפי {by}, {period}",
    "boards.caption.code": "חלוקה {code}: לפי {by}, {period}",
    "boards.caption.assisted": "{caption} (משחקים בעזרת רמז)",
    "boards.rank": "מקום",
    "boards.player": "שחקן",
    "boards.ranked": "ניקוד לדירוג",
    "boards.score": "ניקוד",
    "boards.time": "זמן",
    "boards.moves": "מהלכים",
    "boards.deal": "חלוקה",
    "boards.finished": "הסתיים",
    "boards.replay": "שידור חוזר",
    "boards.replay.later": "אחרי היום",
    "boards.replay.label": "שידור חוזר של המשחק של {name}, מקום {rank}",
    "boards.more": "עוד",
    "boards.empty": "אין עדיין משחקים. שחקו אחד והוא יופיע כאן!",
    "boards.loading": "טוען את הטבלה…",
  },
});

const RULES = ["classic", "relaxed"];
const BY = ["score", "time", "moves", "rating"]; // rating: the race board
const COLUMNS = ["rank", "player", "ranked", "score", "time", "moves", "deal", "finished", "replay"];
const RATING_COLUMNS = ["rank", "player", "ordinal", "mu", "sigma", "races"];
const PERIODS = ["day", "week", "month", "all"];
const DATE = /^\d{4}-\d{2}-\d{2}$/;

// The choices in the address: #/boards?rule=relaxed&by=time&period=week&daily=1&assisted=1
// (daily=1 is today's daily deal, daily=YYYY-MM-DD that of a day)
function choicesFromAddress() {
  const search = new URLSearchParams(location.hash.split("?")[1] || "");
  const pick = (name, allowed, fallback) =>
    allowed.includes(search.get(name)) ? search.get(name) : fallback;
  return {
    rule: pick("rule", RULES, "classic"),
    by: pick("by", BY, "score"),
    period: pick("period", PERIODS, "all"),
    daily: search.get("daily") === "1" || DATE.test(search.get("daily") || ""),
    date: DATE.test(search.get("daily") || "") ? search.get("daily") : "",
    code: (search.get("code") || "").trim().toUpperCase(),
    assisted: search.get("assisted") === "1",
  };
}

function select(id, label, values, labelOf, chosen) {
  const control = el("select", { id, name: id.replace("boards-", "") },
    values.map((value) => el("option", { value, text: labelOf(value) })));
  control.value = chosen;
  return el("div", { class: "field" }, el("label", { for: id, text: label }), control);
}

export async function mount(root) {
  document.title = `${t("boards.title")} — ${t("brand")}`;
  const choices = choicesFromAddress();
  let turn = 0; // answers to an older request are dropped
  let cursor = null; // `next` of the last page
  let board = null; // the query of the board shown (without `after`)
  const dailyDeals = {}; // "rule date" → the answer of /daily

  const form = el("form", { class: "boards-controls", "aria-labelledby": "boards-controls-title" },
    el("h3", { id: "boards-controls-title", class: "visually-hidden", text: t("boards.controls") }),
    select("boards-rule", t("boards.rule"), RULES, (r) => t(`rule.${r}`), choices.rule),
    select("boards-by", t("boards.by"), BY, (b) => t(`boards.by.${b}`), choices.by),
    select("boards-period", t("boards.period"), PERIODS, (p) => t(`boards.period.${p}`),
      choices.period),
    el("div", { class: "field field-code" },
      el("label", { for: "boards-code", text: t("boards.code") }),
      el("input", { id: "boards-code", name: "code", type: "text", value: choices.code,
        autocomplete: "off", spellcheck: "false", autocapitalize: "characters",
        maxlength: String(CODE_MAX_LENGTH), placeholder: "RU1-C-AAAAABB",
        "aria-describedby": "boards-code-help" }),
      el("small", { id: "boards-code-help", class: "help", text: t("boards.code.help") })),
    el("div", { class: "field field-check" },
      el("input", { id: "boards-daily", name: "daily", type: "checkbox", checked: choices.daily }),
      el("label", { for: "boards-daily", text: t("boards.daily") })),
    el("div", { class: "field field-date" },
      el("label", { for: "boards-date", text: t("boards.date") }),
      el("input", { id: "boards-date", name: "date", type: "date", value: choices.date })),
    el("div", { class: "field field-check" },
      el("input", { id: "boards-assisted", name: "assisted", type: "checkbox",
        checked: choices.assisted }),
      el("label", { for: "boards-assisted", text: t("boards.assisted") })),
    el("div", { class: "field field-submit" },
      el("button", { type: "submit", id: "boards-show", text: t("boards.show") })));

  const problem = el("p", { id: "boards-error", class: "problem", role: "alert" });
  const dailyInfo = el("div", { id: "boards-daily-deal", class: "daily-deal", hidden: true });
  const caption = el("caption", { id: "boards-caption" });
  const body = el("tbody");
  const head = el("thead");
  const numeric = ["ordinal", "mu", "sigma", "races"]; // the race board's numbers
  const heading = (columns) => head.replaceChildren(el("tr", {}, columns.map((key) =>
    el("th", { scope: "col", class: numeric.includes(key) ? `col-${key} num` : `col-${key}`,
      text: t(`boards.${key}`) }))));
  heading(choices.by === "rating" ? RATING_COLUMNS : COLUMNS);
  const table = el("table", { class: "board-table", id: "boards-table" }, caption, head, body);
  const wrap = el("div", { class: "table-wrap" }, table);
  const empty = el("p", { id: "boards-empty", class: "empty", hidden: true, text: t("boards.empty") });
  const more = el("button", { type: "button", id: "boards-more", class: "more", hidden: true,
    text: t("boards.more") });
  const status = el("p", { id: "boards-status", class: "visually-hidden", role: "status" });

  root.replaceChildren(el("section", { class: "view-boards", "aria-labelledby": "boards-title" },
    el("h2", { id: "boards-title", text: t("boards.title") }),
    form, problem, dailyInfo, wrap, empty, more, status));

  const control = (name) => form.querySelector(`#boards-${name}`);

  function read() {
    return {
      rule: control("rule").value,
      by: control("by").value,
      period: control("period").value,
      daily: control("daily").checked,
      date: control("date").value,
      code: control("code").value.trim().toUpperCase(),
      assisted: control("assisted").checked,
    };
  }

  function remember(c) {
    if (c.by === "rating") {
      const rule = c.rule === "classic" ? null : c.rule;
      history.replaceState(history.state, "", `#/boards${query({ rule, by: "rating" })}`);
      return;
    }
    const address = query({
      rule: c.rule === "classic" ? null : c.rule,
      by: c.by === "score" ? null : c.by,
      period: c.period === "all" ? null : c.period,
      daily: c.daily ? c.date || 1 : null,
      code: c.daily ? null : c.code,
      assisted: c.assisted ? 1 : null,
    });
    history.replaceState(history.state, "", `#/boards${address}`);
  }

  function syncControls() {
    const daily = control("daily").checked;
    const rating = control("by").value === "rating"; // the race board has a rule only
    control("code").disabled = daily;
    control("date").disabled = !daily;
    control("date").closest(".field").hidden = !daily || rating;
    for (const name of ["period", "code", "daily", "assisted"]) {
      control(name).closest(".field").hidden = rating;
    }
  }

  // A player on the race board: the ordinal (mu − 3 sigma) ranks.
  function ratingRow(entry) {
    const number = (value) => formatRating(value);
    return el("tr", { "data-player": entry.player ? entry.player.id : null },
      el("td", { class: "col-rank", "data-label": t("boards.rank"), text: String(entry.rank) }),
      el("th", { scope: "row", class: "col-player" }, playerLink(entry.player)),
      el("td", { class: "col-ordinal num", "data-label": t("boards.ordinal"),
        text: number(entry.ordinal) }),
      el("td", { class: "col-mu num", "data-label": t("boards.mu"), text: number(entry.mu) }),
      el("td", { class: "col-sigma num", "data-label": t("boards.sigma"),
        text: number(entry.sigma) }),
      el("td", { class: "col-races num", "data-label": t("boards.races"),
        text: String(entry.races) }));
  }

  // Today's daily board: until the day ends (UTC) only a game's own player may see it.
  function row(entry, today) {
    const me = player();
    const hidden = today && !(me && entry.player && entry.player.id === me.id);
    return el("tr", { "data-game": entry.game_id, "data-status": entry.status },
      el("td", { class: "col-rank", "data-label": t("boards.rank"), text: String(entry.rank) }),
      el("th", { scope: "row", class: "col-player" }, playerLink(entry.player)),
      el("td", { class: "col-ranked num", "data-label": t("boards.ranked"),
        text: entry.ranked_score === null || entry.ranked_score === undefined
          ? "—" : String(entry.ranked_score) }),
      el("td", { class: "col-score num", "data-label": t("boards.score"),
        text: String(entry.score) }),
      el("td", { class: "col-time num", "data-label": t("boards.time"),
        text: entry.time_ms === null || entry.time_ms === undefined
          ? "—" : formatTime(entry.time_ms) }),
      el("td", { class: "col-moves num", "data-label": t("boards.moves"),
        text: String(entry.moves) }),
      el("td", { class: "col-deal code", "data-label": t("boards.deal"),
        "data-hidden": entry.code ? null : "true", text: codeOrHidden(entry.code) }),
      el("td", { class: "col-finished", "data-label": t("boards.finished") },
        formatDate(entry.finished_at),
        // a board by score ranks abandoned games too (after won ones at equal ranked score)
        entry.status && entry.status !== "won"
          ? el("span", { class: "entry-status", text: ` (${t(`status.${entry.status}`)})` })
          : null),
      el("td", { class: "col-replay" }, hidden
        ? el("span", { class: "replay-later", text: t("boards.replay.later") })
        : el("a", { href: `#/replay/${entry.game_id}`, class: "replay-link",
          "aria-label": t("boards.replay.label", { name, rank: entry.rank }),
          text: t("boards.replay") })));
  }

  function captionOf(answer, c, daily) {
    const by = t(`boards.by.${answer.by || c.by}`).toLowerCase();
    const period = t(`boards.period.${answer.period || c.period}`).toLowerCase();
    let text;
    if (daily) {
      const code = daily.code || t("boards.daily.hidden");
      text = t("boards.caption.daily", { date: daily.date, code, by, period });
    } else if (answer.code) text = t("boards.caption.code", { code: answer.code, by, period });
    else text = t("boards.caption", { rule: t(`rule.${answer.rule || c.rule}`), by, period });
    return c.assisted ? t("boards.caption.assisted", { caption: text }) : text;
  }

  // The daily deal of a rule and day (today when `date` is empty), asked once.
  async function dailyDeal(rule, date) {
    const key = `${rule} ${date}`;
    if (!dailyDeals[key]) dailyDeals[key] = await get(`/daily${query({ rule, date })}`);
    const deal = dailyDeals[key];
    if (!date) {
      // today, as the server counts days (UTC): no later day to choose
      dailyDeals[`${rule} ${deal.date}`] = deal;
      control("date").max = deal.date;
      control("date").value = deal.date;
    }
    return deal;
  }

  // The daily deal above its board: its code once its day is over (checked here against its
  // commitment), else hidden; its commitment.
  async function showDaily(daily) {
    dailyInfo.hidden = daily === null;
    if (daily === null) {
      dailyInfo.replaceChildren();
      return;
    }
    const mark = el("span", { id: "boards-daily-check", class: "daily-check" });
    dailyInfo.replaceChildren(
      el("p", {},
        el("strong", { text: `${t("boards.daily.deal", { date: daily.date })}, ${
          t(`rule.${daily.rule}`)}: ` }),
        daily.code
          ? el("span", { id: "boards-daily-code", class: "code", text: daily.code })
          : el("span", { id: "boards-daily-code", "data-hidden": "true",
            text: t("boards.daily.hidden") }),
        " ", mark),
      el("p", { class: "commitment" }, `${t("boards.daily.commitment")} `,
        el("code", { id: "boards-daily-commitment", class: "hex", dir: "ltr",
          text: daily.deal_commitment })));
    if (daily.code) {
      const matches = await sha256Hex(daily.code) === daily.deal_commitment;
      mark.dataset.state = matches ? "verified" : "failed";
      mark.replaceChildren(el("span", { "aria-hidden": "true", text: matches ? "✓ " : "✗ " }),
        t(matches ? "boards.daily.matches" : "boards.daily.differs"));
    }
  }

  async function load(fresh) {
    const mine = ++turn;
    problem.textContent = "";
    more.disabled = true;
    table.setAttribute("aria-busy", "true");
    if (fresh) status.textContent = t("boards.loading");
    try {
      let daily = null;
      if (fresh && read().by === "rating") {
        const c = read();
        control("code").setAttribute("aria-invalid", "false");
        remember(c);
        board = { c, daily: null, rating: true, params: { rule: c.rule } };
      } else if (fresh) {
        const c = read();
        const badCode = !c.daily && c.code !== "" && !CODE_PATTERN.test(c.code);
        control("code").setAttribute("aria-invalid", badCode ? "true" : "false");
        if (badCode) throw new Error(t("boards.code.invalid"));
        remember(c);
        if (c.daily) daily = await dailyDeal(c.rule, c.date);
        board = {
          c,
          daily,
          rating: false,
          // the daily board is addressed by its date and rule; its code is secret on its day
          params: {
            rule: c.rule,
            by: c.by,
            period: c.period,
            code: daily ? null : c.code || null,
            daily: daily ? daily.date : null,
            assisted: c.assisted ? "true" : null,
          },
        };
      }
      const path = board.rating ? "/leaderboards/races" : "/leaderboards";
      const answer = await get(`${path}${query({ ...board.params,
        after: fresh ? null : cursor })}`);
      if (mine !== turn) return;
      if (fresh) {
        body.replaceChildren();
        heading(board.rating ? RATING_COLUMNS : COLUMNS);
        table.dataset.board = board.rating ? "races" : "games";
        caption.textContent = board.rating
          ? t("boards.caption.races", { rule: t(`rule.${answer.rule || board.c.rule}`) })
          : captionOf(answer, board.c, board.daily);
        empty.textContent = t(board.rating ? "boards.empty.races" : "boards.empty");
        await showDaily(board.daily);
        if (mine !== turn) return;
      }
      // a daily deal whose code is still hidden is today's
      const today = board.daily !== null && !board.daily.code;
      body.append(...answer.entries.map((entry) =>
        (board.rating ? ratingRow(entry) : row(entry, today))));
      cursor = answer.next;
      const none = body.children.length === 0;
      wrap.hidden = none;
      empty.hidden = !none;
      more.hidden = cursor === null || cursor === undefined;
      status.textContent = none ? empty.textContent : caption.textContent;
    } catch (error) {
      if (mine !== turn) return;
      problem.textContent = error.problem ? problemText(error) : error.message;
      status.textContent = "";
      if (fresh) {
        dailyInfo.hidden = true;
        body.replaceChildren();
        wrap.hidden = true;
        empty.hidden = true;
        more.hidden = true;
      }
    } finally {
      if (mine === turn) {
        more.disabled = false;
        table.removeAttribute("aria-busy");
      }
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    load(true);
  });
  form.addEventListener("change", (event) => {
    syncControls();
    if (event.target.id !== "boards-code") load(true); // a code is shown on Enter or "Show"
  });
  more.addEventListener("click", () => load(false));

  syncControls();
  await load(true);
  return () => {
    turn += 1;
  };
}
