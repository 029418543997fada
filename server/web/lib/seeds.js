// Deals neither side can choose (SPEC 1.8.2), checked in the page: a server-dealt game's code is
// RU2-<rule>-<n>, n the first 16 bytes (big-endian) of HMAC-SHA256(server seed, message), the
// message `client_seed:nonce` (then `:candidate` for a winnable-only game; a race's client seeds
// sorted and joined by newlines). Once the server seed is revealed (the player rotated their
// pair, or the race finished), the page recomputes the code from it (HMAC with WebCrypto, or a
// small HMAC of its own over lib/deal.js's SHA-256 where the page has no SubtleCrypto), checks
// the seed against the hash that was published first, the code's SHA-256 against the
// commitment, and deals the code here (the RU2 shuffle of SPEC 1.8.1, ported from
// server/engine/codes.py) to compare with the replay's cards. The same checks as
// `python -m server.verify`, and the same vectors (tests/data/seeds.json) test both.
import { sha256, sha256Hex } from "./deal.js";

const HEX64 = /^[0-9a-f]{64}$/;
const RANKS = "A23456789TJQK";
const SUITS = "SHDC";
const WORD = 1n << 64n;
const SEED_LETTERS = 28; // four groups of 7
export const CLIENT_SEED_MAX = 64;

const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

function fromHex(text) {
  if (typeof text !== "string" || !HEX64.test(text)) return null;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i += 1) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

// Why `seed` is not a client seed (1 to 64 printable ASCII characters), or null.
export function clientSeedProblem(seed) {
  if (typeof seed !== "string") return "type";
  if (seed.length < 1 || seed.length > CLIENT_SEED_MAX) return "length";
  if (!/^[ -~]+$/.test(seed)) return "ascii";
  return null;
}

// The HMAC's message of a solo game: `client_seed:nonce`, then `:candidate` when winnable.
export function gameMessage(clientSeed, nonce, candidate = null) {
  const text = `${clientSeed}:${nonce}`;
  return candidate === null || candidate === undefined ? text : `${text}:${candidate}`;
}

// A race's: the racers' client seeds sorted by code point (printable ASCII: as Python sorts
// them) and joined by a newline, then `:candidate` when winnable.
export function raceMessage(clientSeeds, candidate = null) {
  const sorted = [...clientSeeds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const text = sorted.join("\n");
  return candidate === null || candidate === undefined ? text : `${text}:${candidate}`;
}

function ascii(text) {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code > 0x7f) throw new RangeError("the message is not ASCII");
    out[i] = code;
  }
  return out;
}

// HMAC-SHA256 (RFC 2104) over lib/deal.js's SHA-256, for a page without SubtleCrypto.
export function hmacFallback(key, message) {
  const block = new Uint8Array(64);
  block.set(key.length > 64 ? sha256(key) : key);
  const inner = new Uint8Array(64 + message.length);
  const outer = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i += 1) {
    inner[i] = block[i] ^ 0x36;
    outer[i] = block[i] ^ 0x5c;
  }
  inner.set(message, 64);
  outer.set(sha256(inner), 64);
  return sha256(outer);
}

// HMAC-SHA256(key, message) as bytes: WebCrypto where the page has it.
export async function hmacSha256(key, message) {
  const subtle = globalThis.crypto && globalThis.crypto.subtle;
  if (!subtle) return hmacFallback(key, message);
  const imported = await subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false,
    ["sign"]);
  return new Uint8Array(await subtle.sign("HMAC", imported, message));
}

// n: the first 16 bytes, big-endian, of HMAC-SHA256(server seed, message as ASCII), a BigInt.
export async function seedNumber(serverSeedHex, message) {
  const key = fromHex(serverSeedHex);
  if (!key) throw new RangeError("a server seed is 32 bytes as lower-case hex");
  const digest = await hmacSha256(key, ascii(message));
  let n = 0n;
  for (const byte of digest.subarray(0, 16)) n = (n << 8n) | BigInt(byte);
  return n;
}

// The printed RU2 code of `n` (0 <= n < 2**128) under the rule letter C or R.
export function ru2Code(ruleLetter, n) {
  const letters = [];
  let rest = n;
  for (let i = 0; i < SEED_LETTERS; i += 1) {
    letters.push(String.fromCharCode(65 + Number(rest % 26n)));
    rest /= 26n;
  }
  const text = letters.reverse().join("");
  const groups = [0, 7, 14, 21].map((start) => text.slice(start, start + 7));
  return `RU2-${ruleLetter}-${groups.join("-")}`;
}

// The seed of a printed RU2 code, a BigInt (null for anything else).
export function ru2Seed(code) {
  const match = /^RU2-[CR]-([A-Z]{7})-([A-Z]{7})-([A-Z]{7})-([A-Z]{7})$/.exec(code || "");
  if (!match) return null;
  let n = 0n;
  for (const ch of match.slice(1).join("")) n = n * 26n + BigInt(ch.charCodeAt(0) - 65);
  return n < 1n << 128n ? n : null;
}

// The RU2 shuffle (SPEC 1.8.1): block k of the word stream is SHA-256("RU2" ‖ n as 16 bytes
// big-endian ‖ k as 4 bytes big-endian), read as four big-endian 64-bit words; Fisher–Yates
// from 51 down to 1 with bound = i + 1, skipping words x >= 2**64 - (2**64 mod bound).
export function ru2Deck(n) {
  const input = new Uint8Array(3 + 16 + 4);
  input.set([0x52, 0x55, 0x32]); // "RU2"
  let rest = n;
  for (let i = 18; i >= 3; i -= 1) {
    input[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  const counter = new DataView(input.buffer, 19, 4);
  let block = 0;
  let words = [];
  const next = () => {
    if (words.length === 0) {
      counter.setUint32(0, block);
      block += 1;
      const digest = new DataView(sha256(input).buffer);
      words = [0, 8, 16, 24].map((offset) => digest.getBigUint64(offset));
    }
    return words.shift();
  };
  const deck = Array.from({ length: 52 }, (_, i) => i);
  for (let i = 51; i >= 1; i -= 1) {
    const bound = BigInt(i + 1);
    const limit = WORD - (WORD % bound);
    let x = next();
    while (x >= limit) x = next();
    const j = Number(x % bound);
    [deck[i], deck[j]] = [deck[j], deck[i]];
  }
  return deck;
}

const cardText = (index) => RANKS[index % 13] + SUITS[Math.floor(index / 13)];

// The deal of an RU2 seed as a replay's `deal` shows it: 7 columns, each bottom first.
export function ru2Deal(n) {
  const deck = ru2Deck(n).map(cardText);
  const columns = [];
  let start = 0;
  for (const size of [1, 6, 7, 8, 9, 10, 11]) {
    columns.push(deck.slice(start, start + size));
    start += size;
  }
  return columns;
}

// The code `seed` (a game's or a race's `seed` member) deals under `ruleLetter`, from the
// server seed `serverSeedHex`: {message, code}.
export async function seededCode(serverSeedHex, seed, ruleLetter) {
  const message = Array.isArray(seed.client_seeds)
    ? raceMessage(seed.client_seeds, seed.candidate)
    : gameMessage(seed.client_seed, seed.nonce, seed.candidate);
  return { message, code: ru2Code(ruleLetter, await seedNumber(serverSeedHex, message)) };
}

// Whether `serverSeedHex` is the seed committed to by `hash`.
export async function seedMatches(serverSeedHex, hash) {
  const key = fromHex(serverSeedHex);
  return Boolean(key) && toHex(sha256(key)) === hash;
}

// Checks that a finished game's replay was dealt from its seed. Resolves with null when the
// game has no seed (a chosen, daily or older game), else {state: "verified" | "failed" |
// "pending", reason, race, message, code}: pending "seed" (the pair not yet rotated, or the
// race not finished) or "code" (still secret); failed "seed" (not the committed seed), "code"
// (the HMAC gives another code), "commitment" or "cards". `commitment`: the one the page saw
// while the game was played, if it kept it. Never rejects.
export async function checkSeed(replay, commitment = null) {
  const seed = replay && replay.seed;
  if (!seed || typeof seed !== "object") return null;
  const race = Array.isArray(seed.client_seeds);
  const out = { state: "verified", reason: null, race, message: null, code: null };
  const failed = (reason) => ({ ...out, state: "failed", reason });
  try {
    if (!seed.server_seed) return { ...out, state: "pending", reason: "seed" };
    if (!replay.code) return { ...out, state: "pending", reason: "code" };
    if (!(await seedMatches(seed.server_seed, seed.server_seed_hash))) return failed("seed");
    if (!race && clientSeedProblem(seed.client_seed)) return failed("code");
    const letter = replay.code.startsWith("RU2-R-") ? "R" : "C";
    const made = await seededCode(seed.server_seed, seed, letter);
    out.message = made.message;
    out.code = made.code;
    if (made.code !== replay.code) return failed("code");
    const hash = await sha256Hex(made.code);
    if (hash !== replay.deal_commitment || (commitment && hash !== commitment)) {
      return failed("commitment");
    }
    if (Array.isArray(replay.deal)
      && JSON.stringify(replay.deal) !== JSON.stringify(ru2Deal(ru2Seed(made.code)))) {
      return failed("cards");
    }
    return out;
  } catch {
    return failed("code");
  }
}

// A vector of tests/data/seeds.json checked: {code, commitment, ok} (tests drive this).
export async function checkVector(vector) {
  const seed = vector.client_seeds
    ? { client_seeds: vector.client_seeds, candidate: vector.candidate }
    : { client_seed: vector.client_seed, nonce: vector.nonce, candidate: vector.candidate };
  const { message, code } = await seededCode(vector.server_seed, seed, vector.rule);
  const n = (await seedNumber(vector.server_seed, message)).toString();
  const commitment = await sha256Hex(code);
  const seedOk = await seedMatches(vector.server_seed, vector.server_seed_hash);
  return {
    message, n, code, commitment, seedOk,
    ok: seedOk && message === vector.message && n === vector.n && code === vector.code
      && commitment === vector.deal_commitment,
  };
}
