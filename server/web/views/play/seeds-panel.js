// The seeds panel of the Settings window (SPEC 1.8.2): the player's current seed pair (its
// server seed's hash, the client seed, the next game's nonce), the next pair's server seed hash
// (shown before the player chooses the client seed that goes with it), a field for that next
// client seed and Rotate (PUT /api/v1/me/seeds: the current pair ends and its server seed is
// revealed), and the last pair revealed, its seed checked against its hash here in the page.
// A rotation is announced to the page (SEEDS_ROTATED), so that a finished game's "Dealt from
// your seed" line checks again.
import { get, put } from "../../lib/api.js";
import { define, t } from "../../lib/i18n.js";
import { CLIENT_SEED_MAX, clientSeedProblem, seedMatches } from "../../lib/seeds.js";
import { el, fieldProblemText, toast } from "../../lib/ui.js";

export const SEEDS_ROTATED = "solitaire:seeds-rotated";

define({
  en: {
    "seeds.title": "Your seeds",
    "seeds.about": "Your random and winnable-only games are dealt from the HMAC of a server seed (committed to by its hash before you chose your client seed) over your client seed and the game's nonce: neither you nor the server can choose a deal. Rotating reveals the server seed, so that you can check every game it dealt.",
    "seeds.current": "Current pair",
    "seeds.hash": "Server seed hash (SHA-256)",
    "seeds.client": "Client seed",
    "seeds.nonce": "Next game's nonce",
    "seeds.next": "Next server seed hash",
    "seeds.new": "Your next client seed",
    "seeds.new.help": "1 to 64 printable ASCII characters. It goes with the next server seed, whose hash is shown above: rotating ends the current pair and reveals its server seed.",
    "seeds.rotate": "Rotate seeds",
    "seeds.rotated": "Seeds rotated: the previous server seed is revealed.",
    "seeds.inPlay": "Finish or give up the game in play first: its deal would be revealed with the seed.",
    "seeds.problem.type": "A client seed is text.",
    "seeds.problem.length": "A client seed has 1 to 64 characters.",
    "seeds.problem.ascii": "A client seed has printable ASCII characters only (space to ~).",
    "seeds.previous": "Previous pair (revealed)",
    "seeds.previous.none": "No pair has been revealed yet.",
    "seeds.serverSeed": "Server seed",
    "seeds.games": "Games dealt",
    "seeds.matches": "✓ matches its hash",
    "seeds.differs": "✗ does not match its hash",
    "seeds.loading": "Loading…",
  },
  ro: {
    "seeds.title": "Semințele tale",
    "seeds.about": "Jocurile tale aleatorii și cele doar câștigabile sunt împărțite din HMAC-ul unei semințe a serverului (angajată prin hash-ul ei înainte să-ți alegi sămânța de client) peste sămânța ta de client și nonce-ul jocului: nici tu, nici serverul nu puteți alege o împărțire. Rotirea dezvăluie sămânța serverului, ca să poți verifica fiecare joc împărțit din ea.",
    "seeds.current": "Perechea curentă",
    "seeds.hash": "Hash-ul seminței serverului (SHA-256)",
    "seeds.client": "Sămânța de client",
    "seeds.nonce": "Nonce-ul jocului următor",
    "seeds.next": "Hash-ul următoarei semințe a serverului",
    "seeds.new": "Următoarea ta sămânță de client",
    "seeds.new.help": "Între 1 și 64 de caractere ASCII tipăribile. Merge cu următoarea sămânță a serverului, al cărei hash e arătat mai sus: rotirea încheie perechea curentă și îi dezvăluie sămânța serverului.",
    "seeds.rotate": "Rotește semințele",
    "seeds.rotated": "Semințele au fost rotite: sămânța anterioară a serverului este dezvăluită.",
    "seeds.inPlay": "Termină sau abandonează mai întâi jocul în curs: împărțirea lui ar fi dezvăluită odată cu sămânța.",
    "seeds.problem.type": "O sămânță de client este un text.",
    "seeds.problem.length": "O sămânță de client are între 1 și 64 de caractere.",
    "seeds.problem.ascii": "O sămânță de client are doar caractere ASCII tipăribile (de la spațiu la ~).",
    "seeds.previous": "Perechea anterioară (dezvăluită)",
    "seeds.previous.none": "Nicio pereche nu a fost dezvăluită încă.",
    "seeds.serverSeed": "Sămânța serverului",
    "seeds.games": "Jocuri împărțite",
    "seeds.matches": "✓ se potrivește cu hash-ul ei",
    "seeds.differs": "✗ nu se potrivește cu hash-ul ei",
    "seeds.loading": "Se încarcă…",
  },
  he: {
    "seeds.title": "הזרעים שלך",
    "seeds.about": "המשחקים האקראיים והמשחקים הניתנים לניצחון שלך מחולקים מ־HMAC של זרע שרת (שהשרת התחייב אליו ב־hash שלו לפני שבחרת את זרע הלקוח שלך) על זרע הלקוח שלך וה־nonce של המשחק: לא אתה ולא השרת יכולים לבחור חלוקה. החלפת הזרעים חושפת את זרע השרת, כדי שתוכל לבדוק כל משחק שחולק ממנו.",
    "seeds.current": "הזוג הנוכחי",
    "seeds.hash": "ה־hash של זרע השרת (SHA-256)",
    "seeds.client": "זרע הלקוח",
    "seeds.nonce": "ה־nonce של המשחק הבא",
    "seeds.next": "ה־hash של זרע השרת הבא",
    "seeds.new": "זרע הלקוח הבא שלך",
    "seeds.new.help": "1 עד 64 תווי ASCII מודפסים. הוא הולך עם זרע השרת הבא, שה־hash שלו מוצג למעלה: ההחלפה מסיימת את הזוג הנוכחי וחושפת את זרע השרת שלו.",
    "seeds.rotate": "החלפת זרעים",
    "seeds.rotated": "הזרעים הוחלפו: זרע השרת הקודם נחשף.",
    "seeds.inPlay": "סיימו או ותרו קודם על המשחק הפעיל: החלוקה שלו הייתה נחשפת יחד עם הזרע.",
    "seeds.problem.type": "זרע לקוח הוא טקסט.",
    "seeds.problem.length": "זרע לקוח הוא בן 1 עד 64 תווים.",
    "seeds.problem.ascii": "זרע לקוח מכיל תווי ASCII מודפסים בלבד (מרווח עד ~).",
    "seeds.previous": "הזוג הקודם (חשוף)",
    "seeds.previous.none": "עוד לא נחשף אף זוג.",
    "seeds.serverSeed": "זרע השרת",
    "seeds.games": "משחקים שחולקו",
    "seeds.matches": "✓ מתאים ל־hash שלו",
    "seeds.differs": "✗ אינו מתאים ל־hash שלו",
    "seeds.loading": "טוען…",
  },
});

// A random proposal for the next client seed: 16 hex digits.
function proposal() {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const hex = (id) => el("code", { id, class: "hex", dir: "ltr", text: "…" });

function pair(label, value) {
  return el("div", { class: "pair" }, el("dt", { text: t(label) }), el("dd", {}, value));
}

// The panel, for the play view `view` (its game in play, if dealt from the current pair, keeps
// the pair from rotating: its seed would reveal its deal).
export function seedsPanel(view) {
  const hash = hex("seeds-hash");
  const client = el("code", { id: "seeds-client", class: "hex", dir: "ltr", text: "…" });
  const nonce = el("span", { id: "seeds-nonce", text: "…" });
  const next = hex("seeds-next-hash");
  const input = el("input", { id: "seeds-client-seed", type: "text", name: "client_seed",
    autocomplete: "off", spellcheck: "false", dir: "ltr", maxlength: String(CLIENT_SEED_MAX),
    value: proposal(), "aria-describedby": "seeds-client-seed-help seeds-in-play" });
  const inPlay = el("p", { id: "seeds-in-play", class: "note", hidden: true,
    text: t("seeds.inPlay") });
  const rotate = el("button", { type: "submit", id: "seeds-rotate", text: t("seeds.rotate") });
  const problem = el("p", { id: "seeds-problem", class: "problem", role: "alert" });
  const done = el("p", { id: "seeds-status", class: "seeds-status", role: "status" });
  const previous = el("div", { id: "seeds-previous", "aria-live": "polite" },
    el("p", { text: t("seeds.loading") }));
  const form = el("form", { id: "seeds-form" },
    el("label", { for: "seeds-client-seed", text: t("seeds.new") }), input,
    el("p", { id: "seeds-client-seed-help", class: "help", text: t("seeds.new.help") }),
    inPlay, el("div", { class: "actions" }, rotate));
  const section = el("section", { id: "seeds", class: "seeds", "aria-labelledby": "seeds-title" },
    el("h3", { id: "seeds-title", text: t("seeds.title") }),
    el("p", { class: "about", text: t("seeds.about") }),
    el("h4", { text: t("seeds.current") }),
    el("dl", { id: "seeds-current" },
      pair("seeds.hash", hash), pair("seeds.client", client), pair("seeds.nonce", nonce),
      pair("seeds.next", next)),
    form, done, problem,
    el("h4", { text: t("seeds.previous") }), previous);
  let current = null;

  function drawCurrent(seeds) {
    current = seeds;
    hash.textContent = seeds.server_seed_hash;
    client.textContent = seeds.client_seed;
    nonce.textContent = String(seeds.nonce);
    next.textContent = seeds.next_server_seed_hash;
    const game = view.game;
    const blocked = Boolean(game && game.status === "active" && game.seed
      && game.seed.server_seed_hash === seeds.server_seed_hash);
    inPlay.hidden = !blocked;
    rotate.disabled = blocked;
  }

  async function drawPrevious(ended) {
    if (!ended) {
      previous.replaceChildren(el("p", { id: "seeds-previous-none",
        text: t("seeds.previous.none") }));
      return;
    }
    const matches = await seedMatches(ended.server_seed, ended.server_seed_hash);
    previous.replaceChildren(el("dl", {},
      pair("seeds.serverSeed", el("code", { id: "seeds-previous-seed", class: "hex", dir: "ltr",
        text: ended.server_seed })),
      pair("seeds.hash", el("span", {},
        el("code", { id: "seeds-previous-hash", class: "hex", dir: "ltr",
          text: ended.server_seed_hash }), " ",
        el("span", { id: "seeds-previous-check", class: "seed-match",
          "data-state": matches ? "verified" : "failed",
          text: t(matches ? "seeds.matches" : "seeds.differs") }))),
      pair("seeds.client", el("code", { class: "hex", dir: "ltr", text: ended.client_seed })),
      pair("seeds.games", el("span", { id: "seeds-previous-games",
        text: String(ended.nonces) }))));
  }

  async function load() {
    try {
      const [seeds, history] = await Promise.all([
        get("/me/seeds"), get("/me/seeds/history?limit=1"),
      ]);
      if (!section.isConnected) return;
      drawCurrent(seeds);
      await drawPrevious(history.seeds[0] || null);
      section.dataset.ready = "true";
    } catch (error) {
      problem.textContent = fieldProblemText(error);
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.textContent = "";
    done.textContent = "";
    const wanted = input.value;
    const why = clientSeedProblem(wanted);
    if (why) {
      problem.textContent = t(`seeds.problem.${why}`);
      input.setAttribute("aria-invalid", "true");
      input.focus();
      return;
    }
    input.removeAttribute("aria-invalid");
    if (!current) return;
    rotate.disabled = true;
    try {
      const answer = await put("/me/seeds", { client_seed: wanted });
      drawCurrent(answer);
      await drawPrevious(answer.previous);
      input.value = proposal();
      done.textContent = t("seeds.rotated");
      toast(t("seeds.rotated"));
      window.dispatchEvent(new CustomEvent(SEEDS_ROTATED));
    } catch (error) {
      problem.textContent = fieldProblemText(error);
      if (current) drawCurrent(current);
    }
  });

  load();
  return section;
}
