/**
 * The one token count the runtime uses: an upper bound on what OpenAI's o200k tokenizer counts, pure and synchronous,
 * so a budget it enforces holds for the model on any text (see docs/tokens.md). The exact tokenizer would add
 * ~1.2 MB gzipped to the Worker and ~300 ms and ~45 MB of heap to every isolate that counts; this bound carries
 * ~190 KiB gzipped of the vocabulary instead (src/core/o200k-vocabulary.ts).
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

/** o200k's pre-tokenizer, as tiktoken and gpt-tokenizer write it (its tests hold the hand-found pieces to it). */
export const PIECE =
  /[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

export function countTokens(text: string): number {
  vocabulary ??= load();
  let tokens = 0;
  for (let at = 0; at < text.length; ) {
    const end = asciiPiece(text, at);
    if (end > 0) {
      // One character of ASCII is one byte, so one token: the commonest piece, spared the rest.
      tokens += end - at === 1 ? 1 : asciiBound(text, at, end);
      at = end;
      continue;
    }
    PIECE.lastIndex = at;
    const m = PIECE.exec(text);
    if (m === null) break;
    tokens += pieceBound(m[0]);
    at = PIECE.lastIndex;
  }
  return tokens;
}

/**
 * The count as o200k's pattern alone splits the text, every piece bounded through the string cache: what `countTokens`
 * finds faster, kept as the measure its tests hold it to.
 */
export function countTokensByPattern(text: string): number {
  vocabulary ??= load();
  let tokens = 0;
  PIECE.lastIndex = 0;
  for (let m = PIECE.exec(text); m !== null; m = PIECE.exec(text)) tokens += pieceBound(m[0]);
  return tokens;
}

/** What `asciiPiece` tells apart among ASCII characters; FOREIGN is any other character, END past the text. */
const Kind: Readonly<Record<"UPPER" | "LOWER" | "DIGIT" | "SPACE" | "NEWLINE" | "OTHER" | "FOREIGN" | "END", number>> = { UPPER: 0, LOWER: 1, DIGIT: 2, SPACE: 3, NEWLINE: 4, OTHER: 5, FOREIGN: 6, END: 7 };
const KIND = Uint8Array.from({ length: 128 }, (_, c) => {
  const char = String.fromCharCode(c);
  if (/[\r\n]/.test(char)) return Kind.NEWLINE;
  if (/\s/u.test(char)) return Kind.SPACE;
  return /\p{Lu}/u.test(char) ? Kind.UPPER : /\p{Ll}/u.test(char) ? Kind.LOWER : /\p{N}/u.test(char) ? Kind.DIGIT : Kind.OTHER;
});

function kindAt(text: string, i: number): number {
  if (i >= text.length) return Kind.END;
  const c = text.charCodeAt(i);
  return c < 0x80 ? KIND[c]! : Kind.FOREIGN;
}

/**
 * Where the piece `PIECE` matches at `at` ends, found by hand when every character that decides it is ASCII (A–Z, a–z
 * and 0–9 are its only letters and digits, and no letter is both upper and lower case, so no alternative backtracks
 * far); 0 when one is not, and the pattern itself must decide. A piece depends only on the text from `at` on, so the
 * pieces are the pattern's, whichever finds each.
 */
export function asciiPiece(text: string, at: number): number {
  const first = kindAt(text, at);
  if (first === Kind.FOREIGN) return 0;
  let i = at;
  // [^\r\n\p{L}\p{N}]? before letters
  if (first === Kind.SPACE || first === Kind.OTHER) {
    const second = kindAt(text, at + 1);
    if (second === Kind.FOREIGN) return 0;
    if (second === Kind.UPPER || second === Kind.LOWER) i++;
  }
  const letter = kindAt(text, i);
  if (letter === Kind.UPPER || letter === Kind.LOWER) {
    // [\p{Lu}…]*[\p{Ll}…]+ or [\p{Lu}…]+[\p{Ll}…]*, then a contraction
    let k = letter;
    while (k === Kind.UPPER) k = kindAt(text, ++i);
    while (k === Kind.LOWER) k = kindAt(text, ++i);
    if (k === Kind.FOREIGN) return 0;
    if (text.charCodeAt(i) !== 0x27) return i;
    const a = text.charCodeAt(i + 1) | 0x20;
    const b = text.charCodeAt(i + 2) | 0x20;
    if (a === 0x73 || a === 0x64 || a === 0x6d || a === 0x74) return i + 2; // 's 'd 'm 't
    return (a === 0x6c && b === 0x6c) || ((a === 0x76 || a === 0x72) && b === 0x65) ? i + 3 : i; // 'll 've 're
  }
  if (first === Kind.DIGIT) {
    // \p{N}{1,3}
    let k = first;
    while (k === Kind.DIGIT && i - at < 3) k = kindAt(text, ++i);
    return k === Kind.FOREIGN && i - at < 3 ? 0 : i;
  }
  if (first === Kind.OTHER || (text.charCodeAt(at) === 0x20 && kindAt(text, at + 1) === Kind.OTHER)) {
    // ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
    if (first !== Kind.OTHER) i++;
    let k = Kind.OTHER;
    while (k === Kind.OTHER) k = kindAt(text, ++i);
    if (k === Kind.FOREIGN) return 0;
    for (let c = text.charCodeAt(i); c === 0x0a || c === 0x0d || c === 0x2f; c = text.charCodeAt(++i));
    return i;
  }
  // White space: \s*[\r\n]+ to the last line break in the run, else \s+(?!\S) short of the last, else \s+.
  let lastBreak = -1;
  let k = first;
  for (; k === Kind.SPACE || k === Kind.NEWLINE; k = kindAt(text, ++i)) if (k === Kind.NEWLINE) lastBreak = i;
  if (k === Kind.FOREIGN) return 0;
  return lastBreak >= 0 ? lastBreak + 1 : k === Kind.END || i - at === 1 ? i : i - 1;
}

/**
 * Bounds of recent ASCII pieces of up to 64 bytes, by a hash of their bytes: slot i holds the piece's hash, its length,
 * its bound and, at 64 * i, its bytes. Text repeats its words, and this spares making a string of each piece.
 */
const CACHED = 4096;
const cachedHash = new Int32Array(CACHED);
const cachedLength = new Int32Array(CACHED); // 0: the slot is empty
const cachedBound = new Int32Array(CACHED);
const cachedBytes = new Uint8Array(CACHED * 64);

/** `pieceBound` of the ASCII piece `text[from..to)`, found in the cache of recent ASCII pieces, or else worked out and kept there. */
function asciiBound(text: string, from: number, to: number): number {
  const n = to - from;
  if (bytes.length < n) bytes = new Uint8Array(n * 3);
  let h = 0x811c9dc5;
  for (let i = 0; i < n; i++) h = Math.imul(h ^ (bytes[i] = text.charCodeAt(from + i)), 0x01000193);
  if (n > 64) return find(0, n) >= 0 ? 1 : replayed(n);
  const slot = (h ^ (h >>> 12)) & (CACHED - 1);
  if (cachedLength[slot] === n && cachedHash[slot] === h) {
    let i = 0;
    for (const at = slot * 64; i < n && cachedBytes[at + i] === bytes[i]; i++);
    if (i === n) return cachedBound[slot]!;
  }
  const bound = find(0, n) >= 0 ? 1 : replayed(n);
  cachedHash[slot] = h;
  cachedLength[slot] = n;
  cachedBound[slot] = bound;
  cachedBytes.set(bytes.subarray(0, n), slot * 64);
  return bound;
}

/** Bounds of recent pieces of up to 64 UTF-16 units: text repeats its words. Emptied when full. */
const recent = new Map<string, number>();

function pieceBound(piece: string): number {
  if (piece.length > 64) return bounded(piece);
  let bound = recent.get(piece);
  if (bound === undefined) {
    if (recent.size >= 8192) recent.clear();
    recent.set(piece, (bound = bounded(piece)));
  }
  return bound;
}

function bounded(piece: string): number {
  const n = utf8(piece);
  // o200k looks the piece itself up as text, and one with a lone surrogate (written here as U+FFFD) is never found.
  return !replaced && find(0, n) >= 0 ? 1 : replayed(n);
}

/** The bound of the `n` bytes in `bytes`, a piece that is not a token. */
function replayed(n: number): number {
  const units = merge(n);
  // Merging ran to its end, with no two parts side by side forming a token we carry: no part can stay apart but as is.
  return units === 1 || finished ? units : partsBound(n, units);
}

/** Part boundaries, in bytes, `starts[0..units]` after `merge`. */
let starts = new Int32Array(0);
/** Whether the last `merge` ran to its end, leaving no two parts side by side that form a carried token. */
let finished = false;
const NOT_MERGED = 1 << 30;
/** The parts, a list by the byte each starts at. */
let next = new Int32Array(0);
let previous = new Int32Array(0);
/** A tournament over the neighbouring pairs, by where the first part starts: the lowest order, the leftmost token of that order, and whether another token ties with it. */
let lowest = new Int32Array(0);
let leftmost = new Int32Array(0);
let tied = new Uint8Array(0);
let leaves = 0;

/**
 * Replays o200k's merges on the `n` bytes for as long as the next one is certain: the lowest order among neighbouring
 * pairs is an exact rank, or a bucket in which every such pair is the same token (o200k merges the leftmost of equals).
 * Leaves the parts in `starts`; returns how many. O(n log n).
 */
function merge(n: number): number {
  if (next.length <= n) (next = new Int32Array(2 * n + 1)), (previous = new Int32Array(2 * n + 1)), (starts = new Int32Array(2 * n + 1));
  for (leaves = 1; leaves < n; leaves *= 2);
  if (lowest.length < 2 * leaves) (lowest = new Int32Array(2 * leaves)), (leftmost = new Int32Array(2 * leaves)), (tied = new Uint8Array(2 * leaves));
  for (let i = 0; i < leaves; i++) {
    next[i] = i + 1;
    previous[i] = i - 1;
    leaf(i, i + 1 < n ? find(i, i + 2) : -1);
  }
  for (let node = leaves - 1; node >= 1; node--) play(node);
  let units = n;
  // Until nothing carried merges, or the lowest bucket holds two different tokens: which merges first is not known.
  while (lowest[1]! < NOT_MERGED && tied[1] === 0) {
    let at = 1;
    while (at < leaves) at = lowest[2 * at] === lowest[1] ? 2 * at : 2 * at + 1;
    const part = at - leaves;
    const gone = next[part]!;
    next[part] = next[gone]!;
    if (next[part]! < n) previous[next[part]!] = part;
    units--;
    update(gone, -1);
    update(part, next[part]! < n ? find(part, next[next[part]!]!) : -1);
    if (previous[part]! >= 0) update(previous[part]!, find(previous[part]!, next[part]!));
  }
  finished = lowest[1] === NOT_MERGED;
  for (let i = 0, at = 0; i <= units; i++, at = next[at]!) {
    starts[i] = at;
    if (at < n && leftmost[leaves + at]! >= 0) finished = false; // two parts form a carried token whose rank is not known
  }
  return units;
}

function leaf(at: number, token: number): void {
  lowest[leaves + at] = token < 0 ? NOT_MERGED : vocabulary!.order[token]!;
  leftmost[leaves + at] = token;
  tied[leaves + at] = 0;
}

function update(at: number, token: number): void {
  leaf(at, token);
  for (let node = (leaves + at) >> 1; node >= 1; node >>= 1) play(node);
}

function play(node: number): void {
  const [left, right] = [2 * node, 2 * node + 1];
  const winner = lowest[right]! < lowest[left]! ? right : left;
  lowest[node] = lowest[winner]!;
  leftmost[node] = leftmost[winner]!;
  tied[node] = lowest[left] === lowest[right] && lowest[left]! < NOT_MERGED ? tied[left]! | tied[right]! | (leftmost[left] === leftmost[right] ? 0 : 1) : tied[winner]!;
}

/** How many units `partsBound` follows a part across; a longer part may sit next to anything. */
const SPAN = 6;
const WIDTH = SPAN + 2; // per end: [0] the best of all, [1..SPAN] ending in a part of that many units, [SPAN + 1] a longer one
let best = new Int32Array(0);
/** Bit k of `carried[a]`: units a to a + k form a carried token (k up to 2 * SPAN). */
let carried = new Int32Array(0);

/**
 * The most parts the `units` parts in `starts` (all `n` bytes when nothing was merged) can be joined into, when no two
 * neighbours together form a carried token (they would have merged) and no part of two units or more is a run known
 * not to be a token: one of three bytes or less that is not carried (all are), or one that cuts a character and is not
 * carried (all of those are too). A dynamic program over where the last part ends and how many units it spans: linear.
 */
function partsBound(n: number, units: number): number {
  if (best.length < (units + 1) * WIDTH) (best = new Int32Array((units + 1) * WIDTH * 2)), (carried = new Int32Array((units + 1) * 2));
  const { prefixes } = vocabulary!;
  for (let a = 0; a < units; a++) {
    let mask = 0;
    let h = 0x811c9dc5;
    for (let k = 1, i = starts[a]!; k <= 2 * SPAN && a + k <= units; ) {
      h = Math.imul(h ^ bytes[i++]!, 0x01000193);
      if (i === starts[a + k]) {
        if (k > 1 && lookup(h, starts[a]!, i) >= 0) mask |= 1 << k;
        k++;
      }
      if ((prefixes[h >>> 16]! & (1 << ((h >>> 11) & 31))) === 0) break; // no carried token goes on from here
    }
    carried[a] = mask;
  }
  const NONE = -1 << 30;
  best.fill(NONE, 0, (units + 1) * WIDTH);
  best[0] = 0;
  let longest = NONE; // the best of all over the ends SPAN + 1 units or more back
  for (let end = 1; end <= units; end++) {
    let top = NONE;
    for (let span = 1; span <= SPAN && span <= end; span++) {
      const start = end - span;
      if (span > 1 && (carried[start]! & (1 << span)) === 0 && isNot(n, starts[start]!, starts[end]!)) continue;
      let before = start === 0 ? 0 : NONE;
      for (let prior = 1; prior <= SPAN + 1 && start > 0; prior++) {
        const value = best[start * WIDTH + prior]!;
        // A prior part of SPAN units or fewer may not form a carried token with this one.
        if (value > before && (prior > SPAN || (carried[start - prior]! & (1 << (prior + span))) === 0)) before = value;
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

/** Whether `bytes[from..to)`, not carried, is known not to be a token: it is short, or cuts a character. */
function isNot(n: number, from: number, to: number): boolean {
  return to - from <= 3 || (bytes[from]! & 0xc0) === 0x80 || (to < n && (bytes[to]! & 0xc0) === 0x80);
}

let bytes = new Uint8Array(256);
/** Whether the last `utf8` wrote a lone surrogate as U+FFFD. */
let replaced = false;

/** Writes `piece` as UTF-8 into `bytes` (a lone surrogate as U+FFFD, as encoders do); returns the length. */
function utf8(piece: string): number {
  if (bytes.length < piece.length * 3) bytes = new Uint8Array(piece.length * 3);
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
 * an open-addressing hash table of token index + 1 by bytes, the two-byte tokens by their bytes, and a bit per hash
 * of every carried token's proper prefixes (a bit unset: no carried token starts with those bytes). Built on the first
 * count.
 */
let vocabulary: { text: Uint8Array; at: Int32Array; order: Int32Array; slots: Int32Array; pairs: Int32Array; prefixes: Int32Array } | undefined;
const SLOTS = 1 << 18;

/** The index of the token `bytes[from..to)`, or -1 if it is not carried. */
function find(from: number, to: number): number {
  const { pairs, prefixes } = vocabulary!;
  if (to - from === 2) return pairs[(bytes[from]! << 8) | bytes[from + 1]!]!;
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) {
    if (i > from && (prefixes[h >>> 16]! & (1 << ((h >>> 11) & 31))) === 0) return -1; // no carried token starts so
    h = Math.imul(h ^ bytes[i]!, 0x01000193);
  }
  return lookup(h, from, to);
}

/** `find` with the FNV-1a hash of the bytes already taken (the table is by it). */
function lookup(h: number, from: number, to: number): number {
  const { text, at, slots } = vocabulary!;
  let slot = (h ^ (h >>> 14)) & (SLOTS - 1);
  for (let token = slots[slot]! - 1; token >= 0; slot = (slot + 1) & (SLOTS - 1), token = slots[slot]! - 1) {
    let i = at[token]!;
    if (at[token + 1]! - i !== to - from) continue;
    let j = from;
    while (j < to && text[i] === bytes[j]) i++, j++;
    if (j === to) return token;
  }
  return -1;
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
  const pairs = new Int32Array(1 << 16).fill(-1);
  const prefixes = new Int32Array(1 << 16);
  let tokens = 0;
  let size = 0; // bytes of `text` written: the token being read is what lies past at[tokens]
  const add = (o: number) => {
    at[tokens + 1] = size;
    order[tokens] = o;
    let h = 0x811c9dc5;
    for (let i = at[tokens]!; i < size; i++) {
      if (i > at[tokens]!) prefixes[h >>> 16]! |= 1 << ((h >>> 11) & 31);
      h = Math.imul(h ^ text[i]!, 0x01000193);
    }
    if (size - at[tokens]! === 2) pairs[(text[size - 2]! << 8) | text[size - 1]!] = tokens;
    let slot = (h ^ (h >>> 14)) & (SLOTS - 1);
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
  return { text, at: at.subarray(0, tokens + 1), order, slots, pairs, prefixes };
}

/** Per-message framing the chat formats add (role, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
