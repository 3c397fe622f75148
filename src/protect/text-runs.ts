/**
 * One pass over a text that finds what the decoding views and the hex-shaped
 * rules start from: runs of the base64 alphabet, runs of hex digits,
 * sequences of hex bytes written one by one, stretches of digits, line breaks after a run, and the places worth folding
 * (non-ASCII characters and escapes). A regular expression per shape
 * costs about 10 ms per MB on a log (it retries at every character of every
 * short run); this pass is one table lookup per character and does real work
 * only where a run is long enough. The last text's runs are kept, so the
 * views and the rules that ask for the same text share one pass.
 */
import { charCodes, rememberLast } from "./char-codes";

export type Range = readonly [start: number, end: number];

export interface TextRuns {
  /** Base64 runs of at least 16 characters, each with the line breaks it continues across (64- or 76-column wrapping). */
  readonly base64: readonly Range[];
  /** Hex runs of at least 32 digits (with `xxd -p` wrapping). */
  readonly hex: readonly Range[];
  /** Stretches of at least 16 two-digit hex groups with short gaps between them (`67 68 70`, `0x67, 0x68`), to be parsed. */
  readonly hexBytes: readonly Range[];
  /** Stretches of digits (with `-`, or groups separated by one space) at least 9 long: where a card or an SSN can be. */
  readonly digits: readonly Range[];
  /** Line breaks (real, or a `\n` escape) right after a base64 character: where a token may have been wrapped. */
  readonly breaks: readonly number[];
  /** Non-ASCII characters and escapes (`\u0067`, `\x67`, `%67`, `&#103;`), at most one every 128 characters (the folded view's windows are wider). */
  readonly foldable: readonly Range[];
}

const BASE64 = 1;
const HEX = 2;
/** Digits and the dash between their groups. */
const DIGITS = 4;
const CLASS = new Uint8Array(128);
for (const char of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_") CLASS[char.charCodeAt(0)] = BASE64;
for (const char of "0123456789abcdefABCDEF") CLASS[char.charCodeAt(0)]! |= HEX;
for (const char of "0123456789-") CLASS[char.charCodeAt(0)]! |= DIGITS;

const SHORTEST_BASE64 = 16;
const SHORTEST_HEX = 32;
const SHORTEST_DIGITS = 9;
const FEWEST_HEX_BYTES = 16;
/** A line break continues a run only after a full line, as encoders wrap. */
const SHORTEST_WRAPPED_LINE = 32;
/** The most characters between two hex bytes written one by one: `, 0x`. */
const WIDEST_BYTE_GAP = 4;

const remembered = rememberLast((text: string) => closeRuns(findRuns(text, charCodes(text))));
export const textRuns = remembered.of;
/** Drops the remembered text, which may hold the secrets just redacted. */
export const forgetTextRuns = remembered.forget;

/**
 * The index after the line break at `at` when a base64 run continues across it: the line before is full and
 * the line after is all base64 (or padding), as an encoder wraps. Else -1.
 */
function continuation(codes: Uint16Array, at: number, lineLength: number): number {
  if (lineLength < SHORTEST_WRAPPED_LINE) return -1;
  const next = codes[at]! === 0x0d && codes[at + 1]! === 0x0a ? at + 2 : codes[at]! === 0x0a ? at + 1 : -1;
  if (next < 0 || next >= codes.length) return -1;
  let end = next;
  for (let code = codes[end]!; end < codes.length && code < 128 && CLASS[code] !== 0; code = codes[++end]!);
  while (end < codes.length && codes[end]! === 0x3d) end++;
  const after = codes[end]!;
  return end > next && (end === codes.length || after === 0x0a || after === 0x0d) ? next : -1;
}

const isHex = (code: number) => code < 128 && (CLASS[code]! & HEX) !== 0;
const FOLDABLE_SPACING = 128;
const ENTITY = /&#?[A-Za-z0-9]{2,8};/y;

/** Whether the character at `at` (not in the base64 alphabet) starts something the folded view reads differently. */
function isFoldable(text: string, codes: Uint16Array, at: number, code: number): boolean {
  if (code >= 128) return true;
  if (code === 0x5c) {
    const next = codes[at + 1]!;
    const after = codes[at + 2]!;
    return (next === 0x75 && (isHex(after) || after === 0x7b)) || (next === 0x78 && isHex(after));
  }
  if (code === 0x25) return codes[at + 1]! >= 0x30 && codes[at + 1]! <= 0x37 && isHex(codes[at + 2]!);
  ENTITY.lastIndex = at;
  return ENTITY.test(text);
}

const ALL_KINDS = BASE64 | HEX | DIGITS;
/** The classes every character of the last run `runEnd` read belongs to: a number beside it, so both stay simple. */
let runKinds = ALL_KINDS;

/**
 * Where the run of base64 characters from `i` ends. The per-character loops are functions of their own, small
 * and fed only strings and indexes, so they stay optimised whatever else the pass sees.
 */
function runEnd(codes: Uint16Array, i: number): number {
  const length = codes.length;
  let kinds = ALL_KINDS;
  for (; i < length; i++) {
    const code = codes[i]!;
    if (code >= 128) break;
    const kind = CLASS[code]!;
    if (kind === 0) break;
    kinds &= kind;
  }
  runKinds = kinds;
  return i;
}

/** The next character at or after `i` that is base64 or may need a look (non-ASCII, `\`, `%`, `&`). */
function gapEnd(codes: Uint16Array, i: number): number {
  const length = codes.length;
  for (; i < length; i++) {
    const code = codes[i]!;
    if (code >= 128 || CLASS[code] !== 0 || code === 0x5c || code === 0x25 || code === 0x26) break;
  }
  return i;
}

/**
 * Every range goes through here: one place for the engine to learn, so code after the loop (reached once per
 * text) does not find itself without type feedback and throw the optimised loop away on every call.
 */
function pushRange(list: Range[], start: number, end: number): void {
  list.push([start, end]);
}

function findRuns(text: string, codes: Uint16Array) {
  const base64: Range[] = [];
  const hex: Range[] = [];
  const hexBytes: Range[] = [];
  const foldable: Range[] = [];
  const digits: Range[] = [];
  const breaks: number[] = [];
  let nextFoldable = 0;
  let digitsStart = -1;
  let digitsEnd = -2;
  let pairsStart = -1;
  let pairs = 0;
  let lastPairEnd = -WIDEST_BYTE_GAP - 1;
  const length = codes.length;
  for (let i = 0; i < length; ) {
    i = gapEnd(codes, i);
    if (i >= length) break;
    const code = codes[i]!;
    if (code >= 128 || CLASS[code] === 0) {
      if (i >= nextFoldable && isFoldable(text, codes, i, code)) {
        pushRange(foldable, i, i + 1);
        nextFoldable = i + FOLDABLE_SPACING;
      }
      i++;
      continue;
    }
    // A run of the base64 alphabet (hex digits are in it), then across wrapped lines.
    const start = i;
    let lineStart = i;
    let kinds = ALL_KINDS;
    for (;;) {
      i = runEnd(codes, i);
      kinds &= runKinds;
      const after = i < length ? codes[i]! : 0;
      const escape = after === 0x5c ? codes[i + 1]! : 0;
      const lineBreak = after === 0x0a || after === 0x0d || escape === 0x6e || escape === 0x72;
      if (lineBreak) breaks.push(i);
      const next = lineBreak && after !== 0x5c ? continuation(codes, i, i - lineStart) : -1;
      if (next < 0) break;
      i = lineStart = next;
    }
    const run = i - start;
    if ((kinds & DIGITS) !== 0) {
      // Digit groups one space apart are one stretch (`4111 1111 1111 1111`).
      if (start - digitsEnd > 1) {
        if (digitsEnd - digitsStart >= SHORTEST_DIGITS) pushRange(digits, digitsStart, digitsEnd);
        digitsStart = start;
      }
      digitsEnd = i;
    }
    if (run >= SHORTEST_BASE64) {
      let end = i;
      while (end < length && end - i < 2 && codes[end]! === 0x3d) end++;
      pushRange(base64, start, end);
      if (run >= SHORTEST_HEX) hexRuns(codes, start, i, hex);
    } else {
      // One byte written as hex (`67`, `0x67`): count it into the sequence it continues.
      const at = run === 4 && codes[start]! === 0x30 && (codes[start + 1]! | 32) === 0x78 ? start + 2 : start;
      if (i - at === 2 && isHex(codes[at]!) && isHex(codes[at + 1]!)) {
        if (start - lastPairEnd <= WIDEST_BYTE_GAP) pairs++;
        else {
          if (pairs >= FEWEST_HEX_BYTES) pushRange(hexBytes, pairsStart, lastPairEnd);
          pairs = 1;
          pairsStart = start;
        }
        lastPairEnd = i;
      }
    }
  }
  // Nothing but the return after the loop: code there would have no type feedback when the engine optimises the
  // running loop, and would throw that code away at the end of every text. The caller closes the open stretches.
  return { runs: { base64, hex, hexBytes, digits, breaks, foldable }, open: [pairs, pairsStart, lastPairEnd, digitsStart, digitsEnd] as const };
}

/** The runs with the stretches still open when the text ended closed. */
function closeRuns(found: ReturnType<typeof findRuns>): TextRuns {
  const [pairs, pairsStart, lastPairEnd, digitsStart, digitsEnd] = found.open;
  if (pairs >= FEWEST_HEX_BYTES) pushRange(found.runs.hexBytes, pairsStart, lastPairEnd);
  if (digitsEnd - digitsStart >= SHORTEST_DIGITS) pushRange(found.runs.digits, digitsStart, digitsEnd);
  return found.runs;
}

/** The hex runs of at least 32 digits inside the base64 run [start, end), across its line breaks when a line ends in hex. */
function hexRuns(codes: Uint16Array, start: number, end: number, hex: Range[]): void {
  let runStart = -1;
  for (let i = start; i <= end; i++) {
    const code = i < end ? codes[i]! : 0;
    if (isHex(code)) {
      if (runStart < 0) runStart = i;
      continue;
    }
    const lineBreak = code === 0x0a || code === 0x0d;
    if (runStart >= 0 && lineBreak && i + 1 < end) continue;
    if (runStart >= 0 && i - runStart >= SHORTEST_HEX) pushRange(hex, runStart, i);
    runStart = -1;
  }
}
