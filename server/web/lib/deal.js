// A game's deal as the page shows it (SPEC 1.8, 2.3 "Fair play"). A deal the player chose has
// its code from the start. A deal the server chose (random, winnable-only, daily, a race's) is
// secret: its `code` is null until the game ends (the daily deal's until its UTC day ends, a
// race's until the race ends), and the game carries instead its `deal_commitment`, the SHA-256
// of the code's text. Once the code is revealed the page checks it: its SHA-256, computed here,
// must be the commitment the page saw while the game was played, and it must deal the cards
// that were played (the server replays the game's actions on it through
// POST /api/v1/replays/verify, and the page rebuilds the last table from the revealed deal and
// compares it with the one it showed).
import { get, post } from "./api.js";
import { define, t } from "./i18n.js";
import { buildPositions, visible } from "./positions.js";
import { problemText } from "./ui.js";

define({
  en: {
    "deal.hidden": "Deal hidden until the game ends",
    "deal.hidden.daily": "Deal hidden until the day ends (UTC)",
    "deal.hidden.race": "Deal hidden until the race ends",
    "deal.hidden.short": "hidden",
    "deal.commitment": "Commitment",
    "deal.commitment.title": "Commitment to the deal",
    "deal.commitment.hex": "Commitment (SHA-256 of the deal code)",
    "deal.commitment.about": "The server keeps this deal secret while the game is played, and has committed to it with the SHA-256 of its code, below. When the code is revealed, this page checks that it matches.",
    "deal.commitment.revealed": "The deal was kept secret while the game was played. The SHA-256 of its code must be the commitment shown from the start.",
    "deal.hash": "SHA-256 of the revealed code",
    "deal.copy": "Copy",
    "deal.copy.label": "Copy the deal code",
    "deal.copied": "Deal code {code} copied.",
    "deal.copy.failed": "The code could not be copied: it is selected, copy it with the keyboard.",
    "deal.check.checking": "Checking…",
    "deal.check.verified": "Verified",
    "deal.check.failed": "Not verified",
    "deal.check.error": "Not checked",
    "deal.check.checking.long": "Checking the revealed deal against its commitment…",
    "deal.check.verified.long": "Verified: the code matches the commitment shown when the game was dealt, and deals the cards that were played.",
    "deal.check.commitment.long": "Not verified: the code does not match the commitment shown when the game was dealt.",
    "deal.check.cards.long": "Not verified: the code does not deal the cards that were played.",
    "deal.check.error.long": "The deal could not be checked: {detail}",
    "deal.matches": "matches the commitment",
    "deal.differs": "does not match the commitment",
  },
  ro: {
    "deal.hidden": "Împărțire ascunsă până la sfârșitul jocului",
    "deal.hidden.daily": "Împărțire ascunsă până la sfârșitul zilei (UTC)",
    "deal.hidden.race": "Împărțire ascunsă până la sfârșitul cursei",
    "deal.hidden.short": "ascunsă",
    "deal.commitment": "Angajament",
    "deal.commitment.title": "Angajamentul pentru împărțire",
    "deal.commitment.hex": "Angajament (SHA-256 al codului împărțirii)",
    "deal.commitment.about": "Serverul ține împărțirea secretă cât timp se joacă, și s-a angajat la ea prin SHA-256 al codului ei, mai jos. Când codul este dezvăluit, pagina verifică dacă se potrivește.",
    "deal.commitment.revealed": "Împărțirea a fost ținută secretă cât timp s-a jucat. SHA-256 al codului ei trebuie să fie angajamentul arătat de la început.",
    "deal.hash": "SHA-256 al codului dezvăluit",
    "deal.copy": "Copiază",
    "deal.copy.label": "Copiază codul împărțirii",
    "deal.copied": "Codul {code} a fost copiat.",
    "deal.copy.failed": "Codul nu a putut fi copiat: este selectat, copiază-l de la tastatură.",
    "deal.check.checking": "Se verifică…",
    "deal.check.verified": "Verificat",
    "deal.check.failed": "Verificare eșuată",
    "deal.check.error": "Neverificat",
    "deal.check.checking.long": "Se verifică împărțirea dezvăluită față de angajament…",
    "deal.check.verified.long": "Verificat: codul se potrivește cu angajamentul arătat la împărțire și împarte cărțile care au fost jucate.",
    "deal.check.commitment.long": "Verificare eșuată: codul nu se potrivește cu angajamentul arătat la împărțire.",
    "deal.check.cards.long": "Verificare eșuată: codul nu împarte cărțile care au fost jucate.",
    "deal.check.error.long": "Împărțirea nu a putut fi verificată: {detail}",
    "deal.matches": "se potrivește cu angajamentul",
    "deal.differs": "nu se potrivește cu angajamentul",
  },
  he: {
    "deal.hidden": "החלוקה מוסתרת עד סוף המשחק",
    "deal.hidden.daily": "החלוקה מוסתרת עד סוף היום (UTC)",
    "deal.hidden.race": "החלוקה מוסתרת עד סוף המרוץ",
    "deal.hidden.short": "מוסתרת",
    "deal.commitment": "התחייבות",
    "deal.commitment.title": "ההתחייבות לחלוקה",
    "deal.commitment.hex": "התחייבות (SHA-256 של קוד החלוקה)",
    "deal.commitment.about": "השרת שומר את החלוקה בסוד בזמן המשחק, והתחייב אליה ב־SHA-256 של הקוד שלה, שלהלן. כשהקוד נחשף, הדף בודק שהוא מתאים.",
    "deal.commitment.revealed": "החלוקה נשמרה בסוד בזמן המשחק. ה־SHA-256 של הקוד שלה חייב להיות ההתחייבות שהוצגה מההתחלה.",
    "deal.hash": "SHA-256 של הקוד שנחשף",
    "deal.copy": "העתק",
    "deal.copy.label": "העתקת קוד החלוקה",
    "deal.copied": "קוד החלוקה {code} הועתק.",
    "deal.copy.failed": "לא ניתן היה להעתיק את הקוד: הוא מסומן, העתיקו אותו במקלדת.",
    "deal.check.checking": "בודק…",
    "deal.check.verified": "אומת",
    "deal.check.failed": "לא אומת",
    "deal.check.error": "לא נבדק",
    "deal.check.checking.long": "בודק את החלוקה שנחשפה מול ההתחייבות…",
    "deal.check.verified.long": "אומת: הקוד מתאים להתחייבות שהוצגה בחלוקה, ומחלק את הקלפים ששוחקו.",
    "deal.check.commitment.long": "לא אומת: הקוד אינו מתאים להתחייבות שהוצגה בחלוקה.",
    "deal.check.cards.long": "לא אומת: הקוד אינו מחלק את הקלפים ששוחקו.",
    "deal.check.error.long": "לא ניתן היה לבדוק את החלוקה: {detail}",
    "deal.matches": "מתאים להתחייבות",
    "deal.differs": "אינו מתאים להתחייבות",
  },
});

// RU1 (SPEC 1.8) and RU2 (1.8.1) codes, upper case; the server has the last word.
export const CODE_PATTERN = /^(RU1-[CR]-[A-Z]{7}|RU2-[CR]-[A-Z]{7}(-[A-Z]{7}){3})$/;
export const CODE_MAX_LENGTH = 64; // as the API allows

// The code as a list shows it: the code, or "hidden".
export function codeOrHidden(code) {
  return code === null || code === undefined ? t("deal.hidden.short") : code;
}

// The code as the game bar shows it: the code, or until when it is hidden.
export function codeText(game) {
  if (game.code !== null && game.code !== undefined) return game.code;
  if (game.race_id) return t("deal.hidden.race"); // a race's deal: until the race ends
  return t(game.daily ? "deal.hidden.daily" : "deal.hidden");
}

// Whether the server chose this deal in secret: a server-dealt game with an RU2 code (games
// dealt before secret deals existed had public RU1 codes; a chosen game's code is the player's
// own, from the start).
export function secretDeal(game) {
  const code = game.code;
  return !game.chosen && (code === null || code === undefined || code.startsWith("RU2-"));
}

// --- the commitments this browser saw --------------------------------------------------------

const SEEN = "solitaire.commitments";
const SEEN_MAX = 100;

function seenAll() {
  try {
    const stored = JSON.parse(localStorage.getItem(SEEN) || "{}");
    return stored && typeof stored === "object" ? stored : {};
  } catch {
    return {};
  }
}

// Keeps the commitment of a secret deal as first seen (and, at the deal, its face-up cards), so
// that the check at the end compares the code with what the server showed while the game was
// played, not with what it says afterwards.
export function rememberDeal(game) {
  if (game.code !== null || !game.deal_commitment) return;
  const all = seenAll();
  if (all[game.id]) return;
  all[game.id] = { commitment: game.deal_commitment };
  if (game.version === 0) all[game.id].up = game.tableau.map((column) => column.at(-1) ?? null);
  const ids = Object.keys(all);
  for (const old of ids.slice(0, Math.max(0, ids.length - SEEN_MAX))) delete all[old];
  try {
    localStorage.setItem(SEEN, JSON.stringify(all));
  } catch {
    // storage is full or off: the check compares with the game's own commitment then
  }
}

function seen(id) {
  return seenAll()[id] || null;
}

// The commitment of game `id` as this browser first saw it, or null.
export function seenCommitment(id) {
  const first = seen(id);
  return first ? first.commitment : null;
}

// --- SHA-256 ---------------------------------------------------------------------------------

// Lower-case hex SHA-256 of a text's UTF-8 bytes: SubtleCrypto where the page has it (a secure
// context: https, or this machine), else sha256() below.
export async function sha256Hex(text) {
  const bytes = new TextEncoder().encode(text);
  const subtle = globalThis.crypto && globalThis.crypto.subtle;
  const digest = subtle ? new Uint8Array(await subtle.digest("SHA-256", bytes)) : sha256(bytes);
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

const K = Uint32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

// SHA-256 (FIPS 180-4) of a Uint8Array, for a page without SubtleCrypto (plain http).
export function sha256(bytes) {
  const blocks = Math.ceil((bytes.length + 9) / 64);
  const data = new Uint8Array(blocks * 64);
  data.set(bytes);
  data[bytes.length] = 0x80;
  const words = new DataView(data.buffer);
  words.setUint32(data.length - 8, Math.floor(bytes.length / 0x20000000));
  words.setUint32(data.length - 4, (bytes.length * 8) >>> 0);
  const h = Uint32Array.from([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let offset = 0; offset < data.length; offset += 64) {
    for (let i = 0; i < 16; i += 1) w[i] = words.getUint32(offset + 4 * i);
    for (let i = 16; i < 64; i += 1) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    let [a, b, c, d, e, f, g, k] = h;
    for (let i = 0; i < 64; i += 1) {
      const t1 = (k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i])
        >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
  }
  const out = new Uint8Array(32);
  const view = new DataView(out.buffer);
  h.forEach((word, i) => view.setUint32(4 * i, word));
  return out;
}

// --- the check -------------------------------------------------------------------------------

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// Checks the revealed deal of a finished secret game. Resolves with
// {state: "verified" | "failed" | "error", reason: "commitment" | "cards" | null, detail,
//  commitment, hash}; never rejects.
export async function checkDeal(game) {
  const first = seen(game.id);
  const commitment = first ? first.commitment : game.deal_commitment;
  const result = { state: "verified", reason: null, detail: "", commitment, hash: null };
  const failed = (reason, detail = "") => ({ ...result, state: "failed", reason, detail });
  try {
    // The code's own SHA-256, here in the page, against the commitment seen from the start.
    result.hash = await sha256Hex(game.code);
    if (result.hash !== commitment || game.deal_commitment !== commitment) {
      return failed("commitment");
    }
    // The revealed replay: the same code and commitment, and its actions replay on that deal
    // to this game's result (the server checks the document and the commitment again).
    const id = encodeURIComponent(game.id);
    const replay = await get(`/games/${id}/replay`);
    if (replay.code !== game.code || replay.deal_commitment !== commitment) {
      return failed("commitment");
    }
    const verdict = await post("/replays/verify", replay, { retry: true });
    if (!verdict.valid) {
      return failed(verdict.rule === "commitment_mismatch" ? "commitment" : "cards",
        verdict.reason || verdict.rule || "");
    }
    if (verdict.status !== game.status || verdict.score !== game.score
      || verdict.moves !== game.moves || !Array.isArray(replay.deal)) {
      return failed("cards");
    }
    // The cards this page showed: the face-up cards of the deal as dealt, and the last table,
    // rebuilt from the revealed deal and the actions.
    if (first && first.up && !same(replay.deal.map((column) => column.at(-1) ?? null), first.up)) {
      return failed("cards");
    }
    const { positions, broken } = buildPositions(replay.deal, replay.actions || []);
    const last = visible(positions[positions.length - 1]);
    if (broken || !same(last.tableau, game.tableau) || !same(last.foundations, game.foundations)) {
      return failed("cards");
    }
    return result;
  } catch (error) {
    return { ...result, state: "error", detail: problemText(error) };
  }
}

// The long text of a check's outcome, in the page's language.
export function checkText(check) {
  if (!check) return "";
  if (check.state === "checking") return t("deal.check.checking.long");
  if (check.state === "verified") return t("deal.check.verified.long");
  if (check.state === "failed") return t(`deal.check.${check.reason}.long`);
  return t("deal.check.error.long", { detail: check.detail });
}
