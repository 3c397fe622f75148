/**
 * Text from outside the runtime is data. `neutralize` makes sure such text can
 * never produce the runtime's own structure: a runtime tag (`<system_reminder>`
 * and the fences), a marker or note (`[Context updated: …]`, `[REDACTED:…]`,
 * `[… N tokens trimmed …]`, `[written 3 days ago]` …), or the conversation's
 * nonce, which the runtime's own tags carry.
 *
 * Detection runs on a folded view (see folded-view.ts): invisible characters
 * dropped, NFKC, look-alike letters mapped to their ASCII prototype, escapes
 * and entities decoded, spacing and separators ignored, and every opening
 * bracket (`<`, `[`, `‹`, `〈`, `【`, `⟦`, … — Unicode's opening punctuation)
 * read as one. So no list of look-alikes is kept: whatever a reader would
 * take for a runtime opener followed by a runtime word is escaped. The escape
 * is in the original text: the opening bracket (whatever form it took) becomes
 * `(`, and the bracket that closes it `)`, so `<system_reminder>` reads
 * `(system_reminder)` — visibly a mention, never the runtime's tag.
 */
import { foldText } from "./folded-view";

/** Tags the runtime itself writes; content may mention them, escaped. */
export const RUNTIME_TAGS = ["system_reminder", "context_fence", "memory_fence", "task_state", "persona_switch", "tool_output", "summary_fence"] as const;

/** The words that open the runtime's notes, as the folded view spells them (lower case, no spaces or separators). */
const NOTE_WORDS = ["(?:context|resource)(?:updated|removed)?:", "redacted:", "noresult:", "notrun:", "toolresult(?:summarised|cleared|notshown)", "imagenolongervisible", "written"];
/** The runtime's tags as their words: `system_reminder` is `system` and `reminder`, which a reader joins across a `/` or `:` too. */
const TAG_PARTS = RUNTIME_TAGS.map((t) => t.split("_"));
/** Between a tag's words, in the folded view: at most two characters that are neither letters, digits nor brackets. */
const FOLDED_JOIN = "[^a-z0-9<>]{0,2}";
/** An opener, then a runtime tag (optionally a closing one), a note word, or a trimming note's words after a few characters. */
const FORGERY = new RegExp(`<(?:/?(?:${TAG_PARTS.map((p) => p.join(FOLDED_JOIN)).join("|")})|${NOTE_WORDS.join("|")}|[^>]{0,32}?tokenstrimmed)`, "g");

/** What the folded view drops between characters in plain ASCII text: whitespace and the separators `_ . \ -`. */
const SEP = String.raw`[\s_.\\-]*`;
/** A folded word's pattern respelled for plain ASCII text: separators allowed after each character. */
const spelled = (word: string) => word.replace(/\(\?:/g, "\u0001").replace(/\\d|[a-z:]/g, (c) => `${c}${SEP}`).replace(/\u0001/g, "(?:");
/**
 * FORGERY as it reads in plain ASCII text, where folding only lower-cases, drops separators and reads `[` as `<`
 * and `]` as `>`: so the common text needs no folding at all.
 */
const PLAIN_FORGERY = new RegExp(
  `[<[]${SEP}(?:(?:/${SEP})?(?:${TAG_PARTS.map((p) => p.map(spelled).join(`(?:[^a-zA-Z0-9<>[\\]\\s_.\\\\-]${SEP}){0,2}`)).join("|")})|${NOTE_WORDS.map(spelled).join("|")}|(?:[^>\\]\\s_.\\\\-]${SEP}){0,32}?${spelled("tokenstrimmed")})`,
  "gi",
);
/** The nonce as a reader finds it: its characters in order, with anything but letters and digits between them. */
const nonceIn = (nonce: string, between: string, flags: string) => new RegExp([...nonce].join(between), flags);
/** How far after an opener the bracket that closes it is looked for, in folded characters. */
const CLOSER_REACH = 240;
/**
 * What folding may read differently from itself: the escapes it decodes (folded-view.ts) and anything beyond ASCII.
 * Only around these is text folded.
 */
const SUSPICIOUS = /&(?:#|lt|gt|lsqb|rsqb|lbrack|rbrack|sol|bsol|amp|quot|apos|colon|lowbar|nbsp|num|percnt)|\\[ux/]|%[0-7][0-9a-f]|[^\x00-\x7f]/gi;
/** Characters counted either side of a suspicious one: more than an opener, a runtime word and a trimming note's gap hold (at most 40). */
const REACH = 48;
/** Windows this close are folded as one. */
const MERGE_GAP = 128;
/** One suspicious character in this many: the whole text is folded at once. */
const DENSE = 128;

export function neutralize(content: string, nonce?: string | null): string {
  // An escaped opener can leave an outer one reading as a note's (`[… 1[… 9 tokens trimmed …] …]`): repeat until nothing changes.
  let text = content;
  for (let round = 0; round < 4; round++) {
    const next = neutralizeOnce(text, nonce);
    if (next === text) break;
    text = next;
  }
  return text;
}

type Replacement = { start: number; end: number; text: string };

/**
 * Plain ASCII text is matched as it is; around each suspicious character a window is folded and matched. A
 * forgery with a suspicious character in it lies inside that character's window (windows reach further than any
 * forgery is long, and merge), and one without lies in plain text.
 */
function neutralizeOnce(content: string, nonce: string | null | undefined): string {
  const replacements: Replacement[] = [];
  const windows = suspiciousWindows(content);
  for (const [from, to] of windows) foldedForgeries(replacements, content, from, to, nonce);
  if (windows[0]?.[0] === 0 && windows[0][1] === content.length) return replaceSpans(content, replacements);
  PLAIN_FORGERY.lastIndex = 0;
  for (let m = PLAIN_FORGERY.exec(content); m !== null; m = PLAIN_FORGERY.exec(content)) {
    escapeMatch(replacements, m, content);
  }
  if (nonce) {
    const spread = nonceIn(nonce, "[^a-zA-Z0-9]*", "gi");
    for (let m = spread.exec(content); m !== null; m = spread.exec(content)) replacements.push({ start: m.index, end: m.index + m[0].length, text: "(nonce)" });
  }
  return replaceSpans(content, replacements);
}

/** Escapes every opener in the match (a trimming note's words may follow several), and the bracket that closes it on its line. */
function escapeMatch(replacements: Replacement[], m: RegExpExecArray, content: string): void {
  for (let at = m.index; at < m.index + m[0].length; at++) {
    const code = content.charCodeAt(at);
    if (code === 0x3c || code === 0x5b) replacements.push({ start: at, end: at + 1, text: "(" });
  }
  const line = content.indexOf("\n", m.index);
  const close = /[>\]]/g;
  close.lastIndex = m.index + m[0].length;
  const closer = close.exec(content);
  if (closer && closer.index - m.index < CLOSER_REACH && (line === -1 || closer.index < line) && !/[<[]/.test(content.slice(m.index + m[0].length, closer.index))) {
    replacements.push({ start: closer.index, end: closer.index + 1, text: ")" });
  }
}

function foldedForgeries(replacements: Replacement[], content: string, from: number, to: number, nonce: string | null | undefined): void {
  const view = foldText(content.slice(from, to), { compact: true, decodeEscapes: true, brackets: true });
  FORGERY.lastIndex = 0;
  for (let m = FORGERY.exec(view.text); m !== null; m = FORGERY.exec(view.text)) {
    // Every opener in the match: a trimming note's words may follow several (`[… 1[… 9 tokens trimmed`).
    for (let at = m.index; at < m.index + m[0].length; at++) {
      if (view.text.charCodeAt(at) === 0x3c) replacements.push({ start: from + view.starts[at]!, end: from + view.ends[at]!, text: "(" });
    }
    const closer = closingBracket(view.text, m.index + m[0].length);
    if (closer !== -1 && !lineBreakBetween(content, from + view.ends[m.index]!, from + view.starts[closer]!)) {
      replacements.push({ start: from + view.starts[closer]!, end: from + view.ends[closer]!, text: ")" });
    }
  }
  if (nonce) {
    const spread = nonceIn(nonce, "[^a-z0-9]*", "g");
    for (let m = spread.exec(view.text); m !== null; m = spread.exec(view.text)) {
      replacements.push({ start: from + view.starts[m.index]!, end: from + view.ends[m.index + m[0].length - 1]!, text: "(nonce)" });
    }
  }
}

const isSeparator = (code: number) => code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0x5f || code === 0x2e || code === 0x2d || code === 0x5c;

/**
 * Windows around the suspicious characters, REACH counted characters (separators not counted) either side, merged
 * when they overlap or nearly touch (folding a short gap costs less than another window). Linear: a suspicious
 * character inside a window moves its end on by as many counted characters as it lies past the previous one.
 */
function suspiciousWindows(content: string): [number, number][] {
  const windows: [number, number][] = [];
  let previous = -1;
  let seen = 0;
  SUSPICIOUS.lastIndex = 0;
  for (let m = SUSPICIOUS.exec(content); m !== null; m = SUSPICIOUS.exec(content)) {
    // Dense (other scripts, escaped JSON): one window, the whole text, costs least.
    if (++seen > content.length / DENSE) return [[0, content.length]];
    const last = windows.at(-1);
    if (last && m.index < last[1]) {
      last[1] = advance(content, last[1], counted(content, previous, m.index));
    } else {
      const start = reach(content, m.index, -1);
      const end = reach(content, m.index, 1);
      if (last && start <= last[1] + MERGE_GAP) last[1] = end;
      else windows.push([start, end]);
    }
    previous = m.index;
  }
  return windows;
}

/** Counted characters in (from, to]. */
function counted(content: string, from: number, to: number): number {
  let n = 0;
  for (let at = from + 1; at <= to; at++) if (!isSeparator(content.charCodeAt(at))) n++;
  return n;
}

/** Where `from` moves to past `n` more counted characters (or the end). */
function advance(content: string, from: number, n: number): number {
  let at = from;
  for (let left = n; at < content.length && left > 0; at++) if (!isSeparator(content.charCodeAt(at))) left--;
  return at;
}

function reach(content: string, from: number, direction: 1 | -1): number {
  let counted = 0;
  let at = from;
  if (direction === 1) {
    for (at = from + 1; at < content.length && counted < REACH; at++) if (!isSeparator(content.charCodeAt(at))) counted++;
  } else {
    while (at > 0 && counted < REACH) if (!isSeparator(content.charCodeAt(--at))) counted++;
  }
  return at;
}

/** The first closing bracket after `from`, unless another opener comes first. */
function closingBracket(folded: string, from: number): number {
  const limit = Math.min(folded.length, from + CLOSER_REACH);
  for (let i = from; i < limit; i++) {
    const c = folded.charCodeAt(i);
    if (c === 0x3e /* > */) return i;
    if (c === 0x3c /* < */) return -1;
  }
  return -1;
}

function lineBreakBetween(text: string, from: number, to: number): boolean {
  const at = text.indexOf("\n", from);
  return at !== -1 && at < to;
}

/** Applies non-overlapping replacements (overlaps: the earlier one wins). */
function replaceSpans(text: string, replacements: { start: number; end: number; text: string }[]): string {
  if (replacements.length === 0) return text;
  replacements.sort((a, b) => a.start - b.start);
  const parts: string[] = [];
  let cursor = 0;
  for (const r of replacements) {
    if (r.start < cursor) continue;
    parts.push(text.slice(cursor, r.start), r.text);
    cursor = r.end;
  }
  parts.push(text.slice(cursor));
  return parts.join("");
}

/** Brackets other than round ones, and quotation marks left alone: a title's brackets become round ones. */
const TITLE_BRACKET = /[[\]<>\p{Ps}\p{Pe}\p{Pi}\p{Pf}]/gu;
const QUOTES = new Set(["\u201c", "\u201d", "\u2018", "\u2019", "\u201a", "\u201b", "\u201e", "\u201f", "(", ")", "{", "}"]);
const OPENING = /[[<\p{Ps}\p{Pi}]/u;

/** A title sits inside a one-line marker: one line, no brackets but round ones, neutralised, bounded. */
export function markerTitle(title: string, maxChars = 200, nonce?: string | null): string {
  const oneLine = title
    .replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ")
    .replace(TITLE_BRACKET, (c) => (QUOTES.has(c) ? c : OPENING.test(c) ? "(" : ")"))
    .trim();
  return neutralize(oneLine, nonce).slice(0, maxChars);
}
