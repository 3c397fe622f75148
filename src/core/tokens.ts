/**
 * The one token count the runtime uses: an upper bound on what OpenAI's o200k tokenizer counts, pure and synchronous,
 * so a budget it enforces holds for the model on any text (see docs/tokens.md). The exact tokenizer would add
 * ~1.2 MB gzipped to the Worker and ~300 ms and ~45 MB of heap to every isolate that counts; this bound carries
 * ~185 KB of the vocabulary instead (src/core/o200k-vocabulary.ts).
 *
 * o200k splits text into pieces with the pattern below. A piece that is a token is one token. Any other is cut into
 * bytes, and the two neighbours that together form the token of lowest rank are merged, again and again, until no two
 * neighbours form a token. So a piece's count is at most:
 * 1. the parts left by replaying those merges for as long as the next one is known for certain (`merge`: every token
 *    of rank below O200K_RANKED is carried, with its rank exact or to within a bucket), since whatever merging follows
 *    only joins parts;
 * 2. and of those, the most that can stay apart when no two neighbours together form a token we carry, and no part is
 *    a run of bytes we know is not a token (`partsBound`).
 */
import { O200K_BROKEN, O200K_BUCKET, O200K_BYTES, O200K_EXACT, O200K_FIRST, O200K_ORDERS, O200K_RANKED, O200K_SORTED } from "./o200k-vocabulary";

/** o200k's pre-tokenizer, as tiktoken and gpt-tokenizer write it. */
const PIECE =
  /[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

export function countTokens(text: string): number {
  vocabulary ??= load();
  let tokens = 0;
  PIECE.lastIndex = 0;
  for (let m = PIECE.exec(text); m !== null; m = PIECE.exec(text)) {
    const piece = m[0];
    // One character of ASCII is one byte, so one token: the commonest piece, spared the rest.
    tokens += piece.length === 1 && piece.charCodeAt(0) < 0x80 ? 1 : pieceBound(piece);
  }
  return tokens;
}

/** The longest piece whose merges are replayed (quadratic in its bytes, as o200k's own); a longer one is bounded from its bytes. */
const REPLAYED = 256;

function pieceBound(piece: string): number {
  const n = utf8(piece);
  // o200k looks the piece itself up as text, and one with a lone surrogate (written here as U+FFFD) is never found.
  if (!replaced && find(0, n) >= 0) return 1;
  const units = n <= REPLAYED ? merge(n) : n;
  return units === 1 ? 1 : partsBound(n, units);
}

/** Part boundaries, in bytes, `starts[0..units]`; `pairs[i]` is the token parts i and i + 1 form together, or -1. */
let starts = new Int32Array(REPLAYED + 1);
let pairs = new Int32Array(REPLAYED);
const NOT_MERGED = 1 << 30;

/**
 * Replays o200k's merges on the `n` bytes for as long as the next one is certain: the lowest order among neighbouring
 * pairs is an exact rank, or a bucket every such pair of which is the same token (o200k merges the leftmost of equals).
 * Leaves the parts in `starts`; returns how many.
 */
function merge(n: number): number {
  const { order } = vocabulary!;
  for (let i = 0; i <= n; i++) starts[i] = i;
  for (let i = 0; i < n - 1; i++) pairs[i] = find(i, i + 2);
  let units = n;
  while (units > 1) {
    let lowest = NOT_MERGED;
    let at = -1;
    let unsure = false; // two different tokens share the lowest bucket: which merges first is not known
    for (let i = 0; i < units - 1; i++) {
      const token = pairs[i]!;
      if (token < 0) continue;
      const o = order[token]!;
      if (o < lowest) (lowest = o), (at = i), (unsure = false);
      else if (o === lowest && token !== pairs[at]) unsure = true;
    }
    if (at < 0 || unsure) break;
    starts.copyWithin(at + 1, at + 2, units + 1);
    pairs.copyWithin(at + 1, at + 2, units - 1);
    units--;
    if (at < units - 1) pairs[at] = find(starts[at]!, starts[at + 2]!);
    if (at > 0) pairs[at - 1] = find(starts[at - 1]!, starts[at + 1]!);
  }
  return units;
}

/** How many units `partsBound` follows a part across; a longer part may sit next to anything. */
const SPAN = 6;
const WIDTH = SPAN + 2; // per end: [0] the best of all, [1..SPAN] ending in a part of that many units, [SPAN + 1] a longer one
let best = new Int32Array(0);

/**
 * The most parts the `units` parts in `starts` (all `n` bytes when nothing was merged) can be joined into, when no two
 * neighbours together form a carried token (they would have merged) and no part of two units or more is a run known
 * not to be a token: one of three bytes or less that is not carried (all are), or one that cuts a character and is not
 * carried (all of those are too). A dynamic program over where the last part ends and how many units it spans: linear.
 */
function partsBound(n: number, units: number): number {
  if (units === n) for (let i = 0; i <= n; i++) starts[i] = i;
  if (best.length < (units + 1) * WIDTH) best = new Int32Array((units + 1) * WIDTH * 2);
  const NONE = -1 << 30;
  best.fill(NONE, 0, (units + 1) * WIDTH);
  best[0] = 0;
  let longest = NONE; // the best of all over the ends SPAN + 1 units or more back
  for (let end = 1; end <= units; end++) {
    let top = NONE;
    for (let span = 1; span <= SPAN && span <= end; span++) {
      const start = end - span;
      if (span > 1 && isNot(n, starts[start]!, starts[end]!)) continue;
      let before = start === 0 ? 0 : NONE;
      for (let prior = 1; prior <= SPAN + 1 && start > 0; prior++) {
        const value = best[start * WIDTH + prior]!;
        // A prior part of SPAN units or fewer may not form a carried token with this one.
        if (value > before && (prior > SPAN || find(starts[start - prior]!, starts[end]!) < 0)) before = value;
      }
      if (before === NONE) continue;
      best[end * WIDTH + span] = before + 1;
      if (before + 1 > top) top = before + 1;
    }
    if (end > SPAN) {
      longest = Math.max(longest, best[(end - SPAN - 1) * WIDTH]!);
      best[end * WIDTH + SPAN + 1] = longest + 1;
      top = Math.max(top, longest + 1);
    }
    best[end * WIDTH] = top;
  }
  return best[units * WIDTH]!;
}

/** Whether `bytes[from..to)` is known not to be a token: not carried, and short or cutting a character. */
function isNot(n: number, from: number, to: number): boolean {
  return find(from, to) < 0 && (to - from <= 3 || (bytes[from]! & 0xc0) === 0x80 || (to < n && (bytes[to]! & 0xc0) === 0x80));
}

let bytes = new Uint8Array(256);
/** Whether the last `utf8` wrote a lone surrogate as U+FFFD. */
let replaced = false;

/** Writes `piece` as UTF-8 into `bytes` (a lone surrogate as U+FFFD, as encoders do); returns the length. */
function utf8(piece: string): number {
  if (bytes.length < piece.length * 3) bytes = new Uint8Array(piece.length * 3);
  if (starts.length <= piece.length * 3) (starts = new Int32Array(piece.length * 3 + 1)), (pairs = new Int32Array(piece.length * 3));
  replaced = false;
  let n = 0;
  for (let i = 0; i < piece.length; i++) {
    let c = piece.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < piece.length && (piece.charCodeAt(i + 1) & 0xfc00) === 0xdc00) c = 0x10000 + ((c - 0xd800) << 10) + (piece.charCodeAt(++i) - 0xdc00);
    else if (c >= 0xd800 && c <= 0xdfff) (c = 0xfffd), (replaced = true);
    if (c < 0x80) bytes[n++] = c;
    else if (c < 0x800) (bytes[n++] = 0xc0 | (c >> 6)), (bytes[n++] = 0x80 | (c & 63));
    else if (c < 0x10000) (bytes[n++] = 0xe0 | (c >> 12)), (bytes[n++] = 0x80 | ((c >> 6) & 63)), (bytes[n++] = 0x80 | (c & 63));
    else (bytes[n++] = 0xf0 | (c >> 18)), (bytes[n++] = 0x80 | ((c >> 12) & 63)), (bytes[n++] = 0x80 | ((c >> 6) & 63)), (bytes[n++] = 0x80 | (c & 63));
  }
  return n;
}

/**
 * The carried tokens: their bytes one after another (`text`, token i at `at[i]`, `at[i + 1] - at[i]` long), their
 * orders (the rank below O200K_EXACT, O200K_EXACT + the bucket below O200K_RANKED, else NOT_MERGED: never replayed),
 * and an open-addressing hash table of token index + 1 by bytes. Built on the first count (~6 ms).
 */
let vocabulary: { text: Uint8Array; at: Int32Array; order: Int32Array; slots: Int32Array } | undefined;
const SLOTS = 1 << 18;

/** The index of the token `bytes[from..to)`, or -1 if it is not carried. */
function find(from: number, to: number): number {
  const { text, at, slots } = vocabulary!;
  let slot = hash(bytes, from, to);
  for (let token = slots[slot]! - 1; token >= 0; slot = (slot + 1) & (SLOTS - 1), token = slots[slot]! - 1) {
    let i = at[token]!;
    if (at[token + 1]! - i !== to - from) continue;
    let j = from;
    while (j < to && text[i] === bytes[j]) i++, j++;
    if (j === to) return token;
  }
  return -1;
}

function hash(from: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ from[i]!, 0x01000193);
  return (h ^ (h >>> 14)) & (SLOTS - 1);
}

function load(): NonNullable<typeof vocabulary> {
  const encoder = new TextEncoder();
  const first = encoder.encode(O200K_FIRST);
  const sorted = encoder.encode(O200K_SORTED);
  const broken = O200K_BROKEN.split(" ");
  const count = O200K_EXACT - 256 + broken.length + O200K_ORDERS.length;
  const text = new Uint8Array(O200K_BYTES);
  const at = new Int32Array(count + 1);
  const order = new Int32Array(count);
  const slots = new Int32Array(SLOTS);
  let tokens = 0;
  let size = 0; // bytes of `text` written: the token being read is what lies past at[tokens]
  const add = (o: number) => {
    at[tokens + 1] = size;
    order[tokens] = o;
    let slot = hash(text, at[tokens]!, size);
    while (slots[slot] !== 0) slot = (slot + 1) & (SLOTS - 1);
    slots[slot] = ++tokens;
  };
  // O200K_FIRST: rank order, empty where the token is in O200K_BROKEN.
  for (let i = 0, rank = 256; i < first.length; i++, rank++) {
    while (first[i] !== 0x7f) text[size++] = first[i++]!;
    if (size > at[tokens]!) add(rank);
  }
  for (const entry of broken) {
    const [rank36, hex] = entry.split(":") as [string, string];
    for (let i = 0; i < hex.length; i += 2) text[size++] = parseInt(hex.slice(i, i + 2), 16);
    const rank = parseInt(rank36, 36);
    add(rank < O200K_EXACT ? rank : rank < O200K_RANKED ? O200K_EXACT + Math.floor((rank - O200K_EXACT) / O200K_BUCKET) : NOT_MERGED);
  }
  // O200K_SORTED: front-coded, a count of bytes shared with the entry before, the rest, U+007F.
  for (let i = 0, entry = 0; i < sorted.length; i++, entry++) {
    const shared = sorted[i++]! - 0x30;
    text.copyWithin(size, at[tokens - 1]!, at[tokens - 1]! + shared);
    size += shared;
    while (sorted[i] !== 0x7f) text[size++] = sorted[i++]!;
    const o = O200K_ORDERS.charCodeAt(entry);
    add(o === 0x7e ? NOT_MERGED : O200K_EXACT + o - 0x41);
  }
  return { text, at: at.subarray(0, tokens + 1), order, slots };
}

/** Per-message framing the chat formats add (role, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
