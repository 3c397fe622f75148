/**
 * The one token count the runtime uses: a calibrated estimate of OpenAI's o200k
 * tokenizer, pure and synchronous. The exact tokenizer would add ~1.2 MB gzipped
 * to the Worker, ~300 ms of CPU the first time an isolate counts, and ~45 MB of
 * heap (see docs/tokens.md); this estimate runs several times faster and
 * test/unit/tokens.test.ts holds it to between 1.0× and 1.3× the exact count on
 * prose, code, JSON, logs, identifiers, numbers, base64, CJK, other scripts and
 * emoji. It errs high, so a budget it enforces also holds for the model.
 *
 * It splits text the way o200k's pre-tokenizer does (letters apart from digits,
 * digits in threes, punctuation runs, line breaks) and charges each piece what
 * byte-pair merging typically leaves of it.
 */
/** o200k's pieces but the first kind (long key-like runs with a digit), which `countByPattern` finds by scanning. */
const PIECE =
  /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+)|([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[a-z]{1,2})?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*)|(\p{N}{1,3})|( ?[^\s\p{L}\p{N}]+)|(\s*[\r\n]+|\s+)/gu;
const CJK = /^[^\p{L}\p{N}]?[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const LATIN_WORD = /^[^\p{L}]?[\p{Script=Latin}]/u;
const CYRILLIC_OR_GREEK = /^[^\p{L}]?[\p{Script=Cyrillic}\p{Script=Greek}]/u;
/** Characters outside the Basic Multilingual Plane: emoji and rare scripts, several byte tokens each. */
const ASTRAL = /[\u{10000}-\u{10FFFF}]/gu;

export function countTokens(text: string): number {
  return NON_ASCII.test(text) ? countByPattern(text) : countAscii(text);
}

/** Any text, piece by piece as the pattern finds them; also the reference the ASCII scanner is tested against. */
export function countByPattern(text: string): number {
  let tokens = 0;
  let i = 0;
  // As in `countAscii`: a position inside a key run already scanned cannot start a qualifying one (a lookahead in the
  // pattern rescanned the run from every piece in it, quadratic on "a/b/a/b/…").
  let scanned = 0;
  while (i < text.length) {
    if (i >= scanned && isKeyChar(text.charCodeAt(i))) {
      let j = i;
      let digit = false;
      for (; j < text.length && isKeyChar(text.charCodeAt(j)); j++) if (text.charCodeAt(j) >= 0x30 && text.charCodeAt(j) <= 0x39) digit = true;
      if (digit && j - i >= 24) {
        tokens += Math.ceil((j - i) * 0.7);
        i = j;
        continue;
      }
      scanned = j;
    }
    PIECE.lastIndex = i;
    const m = PIECE.exec(text);
    if (m === null) break;
    if (m.index > i) {
      // Characters no piece covers count nothing, as they did when the pattern skipped them; look again from the next piece.
      i = m.index;
      continue;
    }
    i = m.index + Math.max(1, m[0].length);
    const piece = m[0];
    if (m[1] !== undefined) tokens += Math.ceil(piece.length * 0.75);
    else if (m[2] !== undefined) tokens += wordTokens(piece);
    else if (m[4] !== undefined) tokens += symbolTokens(piece);
    else tokens += 1; // a number of up to three digits, or a run of whitespace
  }
  return tokens;
}

const NON_ASCII = /[^\x00-\x7f]/;

function isKeyChar(code: number): boolean {
  return code < 128 && (CLASSES[code]! & KEY_CHAR) !== 0;
}
const UPPER = 1;
const LOWER = 2;
const DIGIT = 4;
const SPACE = 8;
const NEWLINE = 16;
const SYMBOL = 32;
const KEY_CHAR = 64;
const VOWEL = 128;
/** Each ASCII character's classes, for the scanner. */
const CLASSES = Uint8Array.from({ length: 128 }, (_, code) => {
  const c = String.fromCharCode(code);
  let k = /[A-Z]/.test(c) ? UPPER : /[a-z]/.test(c) ? LOWER : /[0-9]/.test(c) ? DIGIT : /[\r\n]/.test(c) ? SPACE | NEWLINE : /\s/.test(c) ? SPACE : SYMBOL;
  if (/[A-Za-z0-9+/=_-]/.test(c)) k |= KEY_CHAR;
  if (/[aeiouy]/i.test(c)) k |= VOWEL;
  return k;
});

/**
 * The pattern's pieces and charges for text that is all ASCII (logs, JSON,
 * code), found by character class: about twice as fast, which counts on every
 * turn's history and on megabytes of tool output.
 */
function countAscii(text: string): number {
  const n = text.length;
  const at = (i: number) => (i < n ? CLASSES[text.charCodeAt(i)]! : 0);
  let tokens = 0;
  let i = 0;
  // Where the last key-character run scanned (and not taken) ends: a position inside it starts a shorter run with no
  // more digits, so it cannot qualify either. Scanning it again from every word in it was quadratic ("a/b/a/b/…").
  let scanned = 0;
  while (i < n) {
    const c = at(i);
    if (c & KEY_CHAR && i >= scanned) {
      let j = i;
      let digit = false;
      for (; at(j) & KEY_CHAR; j++) if (at(j) & DIGIT) digit = true;
      if (digit && j - i >= 24) {
        tokens += Math.ceil((j - i) * 0.7);
        i = j;
        continue;
      }
      scanned = j;
    }
    // A word: one leading non-letter (not a line break), then capitals and lower case, or capitals alone.
    const k = c & (SPACE | SYMBOL) && !(c & NEWLINE) ? i + 1 : i;
    let end = k;
    let seen = 0;
    for (let x = at(end); x & UPPER; x = at(++end)) seen |= x;
    if (at(end) & LOWER) {
      for (let x = at(end); x & LOWER; x = at(++end)) seen |= x;
      if (text.charCodeAt(end) === 0x27 && at(end + 1) & LOWER) {
        const two = at(end + 2) & LOWER;
        seen |= at(end + 1) | (two ? at(end + 2) : 0);
        end += two ? 3 : 2;
      }
    }
    if (end > k) {
      const vowel = (seen & VOWEL) !== 0;
      const letters = end - i;
      tokens += letters >= 3 && !vowel ? Math.ceil(letters / 2) : letters <= 9 ? 1 : Math.ceil(letters / 5);
      i = end;
      continue;
    }
    if (c & DIGIT) {
      let j = i + 1;
      while (j < i + 3 && at(j) & DIGIT) j++;
      tokens += 1;
      i = j;
      continue;
    }
    const s = text.charCodeAt(i) === 0x20 && at(i + 1) & SYMBOL ? i + 1 : i;
    if (at(s) & SYMBOL) {
      let j = s;
      while (at(j) & SYMBOL) j++;
      tokens += Math.ceil((j - i) / 2);
      i = j;
      continue;
    }
    // Whitespace: through its last line break when it has one, else all of it.
    let j = i;
    let afterBreak = -1;
    for (; at(j) & SPACE; j++) if (at(j) & NEWLINE) afterBreak = j + 1;
    tokens += 1;
    i = afterBreak > 0 ? afterBreak : j;
  }
  return tokens;
}

/** A word (with the one non-letter that may lead it). */
function wordTokens(piece: string): number {
  const letters = piece.length;
  let ascii = true;
  let vowel = false;
  for (let i = 0; i < letters; i++) {
    const c = piece.charCodeAt(i) | 0x20;
    if (c > 0x7f) {
      ascii = false;
      break;
    }
    if (c === 0x61 || c === 0x65 || c === 0x69 || c === 0x6f || c === 0x75 || c === 0x79) vowel = true;
  }
  if (ascii || LATIN_WORD.test(piece)) {
    // Random identifiers (base64, keys) have few vowels and merge far less than words.
    if (ascii && letters >= 3 && !vowel) return Math.ceil(letters / 2);
    return letters <= 9 ? 1 : Math.ceil(letters / 5);
  }
  if (CJK.test(piece)) return Math.ceil(letters * 0.75);
  if (CYRILLIC_OR_GREEK.test(piece)) return Math.ceil(letters / 4.5);
  return Math.ceil(letters / 3);
}

/** A run of punctuation and symbols: pairs merge; emoji cost bytes. */
function symbolTokens(piece: string): number {
  const astral = piece.length > 1 ? (piece.match(ASTRAL)?.length ?? 0) : 0;
  return astral > 0 ? astral * 2 + Math.ceil((piece.length - astral * 2) / 2) : Math.ceil(piece.length / 2);
}

/** Per-message framing the chat formats add (role, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
