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
const NOTE_WORDS = [
  "(?:context|resource)(?:updated|removed)?:",
  "redacted:",
  "noresult:",
  "notrun:",
  "toolresult(?:summarised|cleared)",
  "imagenolongervisible",
  "written(?:yesterday|\\d)",
];
const TAG_WORDS = RUNTIME_TAGS.map((t) => t.replace(/_/g, ""));
/** An opener, then a runtime tag (optionally a closing one), a note word, or a trimming note's words after a few non-letters. */
const FORGERY = new RegExp(`<(?:/?(?:${TAG_WORDS.join("|")})|${NOTE_WORDS.join("|")}|[^a-z>]{0,24}tokenstrimmed)`, "g");
/** How far after an opener the bracket that closes it is looked for, in folded characters. */
const CLOSER_REACH = 240;

/** Characters without which an ASCII text cannot hold an opener, an escape of one, or a spaced-out nonce. */
const MAY_HOLD_OPENER = /[<[&\\%]|[^\x00-\x7f]/;

export function neutralize(content: string, nonce?: string | null): string {
  if (!MAY_HOLD_OPENER.test(content) && !(nonce && content.replace(/[\s_.\\-]+/g, "").toLowerCase().includes(nonce))) return content;
  // An escaped opener can leave an outer one reading as a note's (`[… 1[… 9 tokens trimmed …] …]`): repeat until nothing changes.
  let text = content;
  for (let round = 0; round < 4; round++) {
    const next = neutralizeOnce(text, nonce);
    if (next === text) break;
    text = next;
  }
  return text;
}

function neutralizeOnce(content: string, nonce: string | null | undefined): string {
  const view = foldText(content, { compact: true, decodeEscapes: true, brackets: true });
  const replacements: { start: number; end: number; text: string }[] = [];
  FORGERY.lastIndex = 0;
  for (let m = FORGERY.exec(view.text); m !== null; m = FORGERY.exec(view.text)) {
    // Every opener in the match: a trimming note's words may follow several (`[… 1[… 9 tokens trimmed`).
    for (let at = m.index; at < m.index + m[0].length; at++) {
      if (view.text.charCodeAt(at) === 0x3c) replacements.push({ start: view.starts[at]!, end: view.ends[at]!, text: "(" });
    }
    const closer = closingBracket(view.text, m.index + m[0].length);
    if (closer !== -1 && !lineBreakBetween(content, view.ends[m.index]!, view.starts[closer]!)) {
      replacements.push({ start: view.starts[closer]!, end: view.ends[closer]!, text: ")" });
    }
  }
  if (nonce) {
    for (let at = view.text.indexOf(nonce); at !== -1; at = view.text.indexOf(nonce, at + nonce.length)) {
      replacements.push({ start: view.starts[at]!, end: view.ends[at + nonce.length - 1]!, text: "(nonce)" });
    }
  }
  return replaceSpans(content, replacements);
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
