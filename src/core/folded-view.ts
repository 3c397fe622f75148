/**
 * A folded view of a text, for detection: what a reader (or a model) would take
 * the text to say once invisible characters, compatibility forms, look-alike
 * letters and escapes are seen through. Each folded character remembers the
 * span of the original it came from, so a match found in the view is acted on
 * in the original text. The view is never shown to anyone.
 */
import confusables from "unhomoglyph/data.json";

export interface FoldOptions {
  /** Drop whitespace and the separators `_ - . \` too, so `s y s t e m_reminder` reads `systemreminder`. */
  compact?: boolean;
  /** Decode HTML entities, `\uXXXX`, `\u{…}`, `\xXX`, `\/` and `%XX` before folding. */
  decodeEscapes?: boolean;
  /** Read every opening bracket (Unicode Ps and Pi, `<` and its look-alikes) as `<` and every closing one as `>`; `(` `{` and quotation marks stay themselves. */
  brackets?: boolean;
  /** Keep letter case (by default the view is lower-cased). */
  keepCase?: boolean;
}

export interface FoldedView {
  readonly text: string;
  /** Where in the original the character behind each folded character starts. */
  readonly starts: Uint32Array;
  /** Where it ends (exclusive). */
  readonly ends: Uint32Array;
}

/** Unicode's confusables table (UTS #39): a look-alike code point → its prototype. */
const SKELETON = confusables as Record<string, string>;
/** Invisible in rendering, or a mark on a letter: zero-width and joiner characters, soft hyphen, bidi controls, variation selectors, CGJ, accents. */
const INVISIBLE = /^[\p{Default_Ignorable_Code_Point}\p{M}]$/u;
/**
 * Latin small capitals and the like, which the confusables table leaves as they are but a reader (and a model)
 * reads as the letter.
 */
const SMALL_CAPITALS: Record<string, string> = Object.fromEntries(
  [..."ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘꞯʀꜱᴛᴜᴠᴡʏᴢ"].map((c, i) => [c, "abcdefghijklmnopqrstuvwyz"[i]!]),
);
const OPENER = /^[\p{Ps}\p{Pi}]$/u;
const CLOSER = /^[\p{Pe}\p{Pf}]$/u;
/** Brackets and quotes that never read as a tag or marker opener: round and curly brackets, quotation marks (CJK corner brackets among them). */
const PLAIN = new Set(["(", ")", "{", "}", "\u201c", "\u201d", "\u2018", "\u2019", "\u201a", "\u201b", "\u201e", "\u201f", "「", "」", "『", "』"]);
const NAMED_ENTITIES: Record<string, string> = { lt: "<", gt: ">", lsqb: "[", rsqb: "]", lbrack: "[", rbrack: "]", sol: "/", bsol: "\\", amp: "&", quot: '"', apos: "'", colon: ":", lowbar: "_", nbsp: " ", num: "#", percnt: "%" };
const ENTITY = /&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});?/y;
// Case-insensitive: `\U0073` is no JavaScript escape, but a reader takes it for one.
const BACKSLASH_ESCAPE = /\\(u\{[0-9a-f]{1,6}\}|u[0-9a-f]{4}|x[0-9a-f]{2}|\/)/iy;
const PERCENT_ESCAPE = /%([0-7][0-9a-fA-F])/y;

/** Folded forms already computed, one table per combination of options (non-ASCII text repeats its characters). */
const foldedCaches = new Map<number, Map<string, string>>();

/**
 * The folded form of one decoded code point: Unicode tag characters (invisible, but read as ASCII by models) as the
 * ASCII they encode; compatibility decomposition, so accents come apart from letters and `≮` from `<`; invisible
 * characters and marks dropped; brackets, skeleton, case.
 */
function foldCodePoint(c: string, options: FoldOptions): string {
  const flags = (options.brackets ? 1 : 0) | (options.keepCase ? 2 : 0) | (options.compact ? 4 : 0);
  let cache = foldedCaches.get(flags);
  if (cache === undefined) foldedCaches.set(flags, (cache = new Map()));
  const known = cache.get(c);
  if (known !== undefined) return known;
  let out = "";
  const point = c.codePointAt(0)!;
  const decoded = point >= 0xe0020 && point <= 0xe007e ? String.fromCharCode(point - 0xe0000) : c;
  for (const n of decoded.normalize("NFKD")) {
    if (INVISIBLE.test(n)) continue;
    let folded = n;
    if (options.brackets && !PLAIN.has(n) && (n === "<" || n === "[" || OPENER.test(n))) folded = "<";
    else if (options.brackets && !PLAIN.has(n) && (n === ">" || n === "]" || CLOSER.test(n))) folded = ">";
    else if (n.charCodeAt(0) >= 0x80) folded = SMALL_CAPITALS[n] ?? SKELETON[n] ?? n;
    if (options.brackets && (folded === "[" || folded === "<")) folded = "<";
    if (options.brackets && (folded === "]" || folded === ">")) folded = ">";
    if (!options.keepCase) folded = folded.toLowerCase();
    if (options.compact) folded = folded.replace(/[\s_.\\-]+/g, "");
    out += folded;
  }
  if (cache.size > 8192) cache.clear();
  cache.set(c, out);
  return out;
}

const UNKNOWN = -1;
const DROPPED = -2;
const LONGER = -3;
/** Per combination of options, each BMP code unit's single folded code unit, or UNKNOWN, DROPPED, LONGER. */
const bmpTables = new Map<number, Int32Array>();

function bmpTable(options: FoldOptions): Int32Array {
  const flags = (options.brackets ? 1 : 0) | (options.keepCase ? 2 : 0) | (options.compact ? 4 : 0);
  let table = bmpTables.get(flags);
  if (table === undefined) bmpTables.set(flags, (table = new Int32Array(0x10000).fill(UNKNOWN)));
  return table;
}

/** The code point an escape at `at` stands for, and where the escape ends; null when there is none. */
function decodeEscapeAt(text: string, at: number): { char: string; end: number } | null {
  const code = text.charCodeAt(at);
  if (code === 0x26 /* & */) {
    ENTITY.lastIndex = at;
    const m = ENTITY.exec(text);
    if (!m) return null;
    const body = m[1]!;
    let char: string | undefined;
    if (body[0] === "#") {
      const value = body[1] === "x" || body[1] === "X" ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      char = value <= 0x10ffff ? String.fromCodePoint(value) : undefined;
    } else char = NAMED_ENTITIES[body.toLowerCase()];
    return char === undefined ? null : { char, end: ENTITY.lastIndex };
  }
  if (code === 0x5c /* \ */) {
    BACKSLASH_ESCAPE.lastIndex = at;
    const m = BACKSLASH_ESCAPE.exec(text);
    if (!m) return null;
    const body = m[1]!;
    if (body === "/") return { char: "/", end: BACKSLASH_ESCAPE.lastIndex };
    const hex = body.replace(/^[ux]\{?|\}$/gi, "");
    const value = parseInt(hex, 16);
    return value <= 0x10ffff ? { char: String.fromCodePoint(value), end: BACKSLASH_ESCAPE.lastIndex } : null;
  }
  if (code === 0x25 /* % */) {
    PERCENT_ESCAPE.lastIndex = at;
    const m = PERCENT_ESCAPE.exec(text);
    return m ? { char: String.fromCharCode(parseInt(m[1]!, 16)), end: PERCENT_ESCAPE.lastIndex } : null;
  }
  return null;
}

const isCompactDropped = (code: number) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d || code === 0x0c || code === 0x0b || code === 0x5f || code === 0x2e || code === 0x2d || code === 0x5c;

/** Per combination of options, each ASCII character's folded code, or DROPPED: the common case is one lookup. */
const asciiTables = new Map<number, Int32Array>();

function asciiTable(options: FoldOptions): Int32Array {
  const flags = (options.brackets ? 1 : 0) | (options.keepCase ? 2 : 0) | (options.compact ? 4 : 0);
  let table = asciiTables.get(flags);
  if (table === undefined) {
    table = new Int32Array(0x80);
    for (let code = 0; code < 0x80; code++) {
      let folded = code;
      if (options.brackets && code === 0x5b) folded = 0x3c;
      else if (options.brackets && code === 0x5d) folded = 0x3e;
      else if (!options.keepCase && code >= 0x41 && code <= 0x5a) folded = code + 32;
      table[code] = options.compact && isCompactDropped(code) ? DROPPED : folded;
    }
    asciiTables.set(flags, table);
  }
  return table;
}

/** The folded characters and their origins, grown as needed (compatibility forms may expand). */
class ViewBuilder {
  out: Uint16Array;
  starts: Uint32Array;
  ends: Uint32Array;
  length = 0;

  constructor(capacity: number) {
    this.out = new Uint16Array(capacity);
    this.starts = new Uint32Array(capacity);
    this.ends = new Uint32Array(capacity);
  }

  push(code: number, start: number, end: number): void {
    if (this.length === this.out.length) this.grow();
    this.out[this.length] = code;
    this.starts[this.length] = start;
    this.ends[this.length++] = end;
  }

  pushAll(folded: string, start: number, end: number): void {
    for (let k = 0; k < folded.length; k++) this.push(folded.charCodeAt(k), start, end);
  }

  view(): FoldedView {
    const chunks: string[] = [];
    for (let at = 0; at < this.length; at += 8192) chunks.push(String.fromCharCode.apply(null, this.out.subarray(at, Math.min(this.length, at + 8192)) as unknown as number[]));
    return { text: chunks.join(""), starts: this.starts.subarray(0, this.length), ends: this.ends.subarray(0, this.length) };
  }

  private grow(): void {
    const size = this.out.length * 2;
    const out = new Uint16Array(size);
    const starts = new Uint32Array(size);
    const ends = new Uint32Array(size);
    out.set(this.out);
    starts.set(this.starts);
    ends.set(this.ends);
    this.out = out;
    this.starts = starts;
    this.ends = ends;
  }
}

export function foldText(text: string, options: FoldOptions = {}): FoldedView {
  const view = new ViewBuilder(text.length + 16);
  const decodeEscapes = options.decodeEscapes ?? false;
  const ascii = asciiTable(options);
  for (let i = 0; i < text.length; ) {
    const code = text.charCodeAt(i);
    if (decodeEscapes && (code === 0x26 || code === 0x5c || code === 0x25)) {
      const escape = decodeEscapeAt(text, i);
      if (escape) {
        view.pushAll(foldCodePoint(escape.char, options), i, escape.end);
        i = escape.end;
        continue;
      }
    }
    if (code < 0x80) {
      const folded = ascii[code]!;
      if (folded !== DROPPED) view.push(folded, i, i + 1);
      i++;
      continue;
    }
    // A character of the Basic Multilingual Plane that folds to at most one: from a table filled as it is met.
    const single = code < 0xd800 || code > 0xdfff ? bmpTable(options) : null;
    if (single) {
      let folded = single[code]!;
      if (folded === UNKNOWN) {
        const f = foldCodePoint(String.fromCharCode(code), options);
        folded = single[code] = f.length === 0 ? DROPPED : f.length === 1 ? f.charCodeAt(0) : LONGER;
      }
      if (folded === LONGER) view.pushAll(foldCodePoint(String.fromCharCode(code), options), i, i + 1);
      else if (folded !== DROPPED) view.push(folded, i, i + 1);
      i++;
      continue;
    }
    const point = text.codePointAt(i)!;
    const width = point > 0xffff ? 2 : 1;
    view.pushAll(foldCodePoint(String.fromCodePoint(point), options), i, i + width);
    i += width;
  }
  return view.view();
}
