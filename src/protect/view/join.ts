/**
 * The joined view: a token cut into pieces put back together. It removes
 * - string-literal concatenation: `"ghp_ab" +\n "cd…"`, `'sk-' + 'proj-…'`, PHP's `.`, VB's `&`, SQL's `||`, Lua's `..`,
 *   and adjacent literals (Python, C) on consecutive lines;
 * - line continuations: a backslash at the end of a line (shell, Python, C);
 * - hard wraps: a line break (real or a `\n` escape) between a long token-like run and the next line's text, as
 *   when a terminal, a pretty-printer or a JSON string broke a token.
 * Only windows around such joins are viewed.
 */
import { isEverydayWord } from "../../core/everyday-words";
import { textRuns, type Range } from "../text-runs";
import { ViewWriter, windowsAround, type DerivedView } from "./view";

/** Concatenations and continuations; each alternative starts with a quote or a backslash, so the search skips ordinary text quickly. */
const JOIN = /(["'`])[ \t]*(?:(?:\+|\.\.?|&|\|\|)[ \t]*(?:\r?\n[ \t]*)?|\r?\n[ \t]*(?:(?:\+|\.\.?|&|\|\|)[ \t]*)?)\1|\\\r?\n[ \t]*/g;
/** A line break (real or escaped) and the next line's indentation. */
const BREAK = /(?:\r?\n|(?:\\r)?\\n)[ \t]*/y;
const RADIUS = 512;
/**
 * A hard wrap joins only after this many token characters on its line, with a letter and a digit among them,
 * or after a run of letters only that mixes cases as random text does, so lines of prose and `NAME=value`
 * lines stay apart.
 */
const WRAPPED_RUN = 12;
const WRAPPED_LETTERS = 16;
const WRAPPED_EACH_CASE = 3;

function isTokenChar(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 43 || code === 47 || code === 61 || code === 95 || code === 45 || code === 46;
}

/**
 * Whether the line break at [at, end) cuts a token: a long mixed run before it, and after it the rest of a token
 * (no `=` but its padding, so a next line starting `NAME=value` is not taken for the tail of the previous one, and
 * not a word of ordinary language).
 */
function isHardWrap(text: string, at: number, end: number): boolean {
  // The run before the break first: on most lines it is short, and the line after need not be read.
  if (!wrappedRunBefore(text, at)) return false;
  let tail = end;
  while (tail < text.length && isTokenChar(text.charCodeAt(tail)) && text.charCodeAt(tail) !== 0x3d) tail++;
  // A word of ordinary language ("thanks", "The") begins a line of prose, not the rest of a token.
  const word = text.slice(end, tail);
  if (tail === end || (/^[A-Za-z]+$/.test(word) && isEverydayWord(word.toLowerCase()))) return false;
  while (tail < text.length && tail - end < 256 && text.charCodeAt(tail) === 0x3d) tail++;
  return tail >= text.length || !isTokenChar(text.charCodeAt(tail));
}

/** Whether the run before the line break at `at` reads as a token's: long and mixing letters and digits, or random letters. */
function wrappedRunBefore(text: string, at: number): boolean {
  let letters = 0;
  let digits = 0;
  let start = at;
  // `=` only as padding at the end of the run: within it, it is an assignment.
  while (start > 0 && text.charCodeAt(start - 1) === 0x3d) start--;
  while (start > 0 && at - start < 64 && isTokenChar(text.charCodeAt(start - 1)) && text.charCodeAt(start - 1) !== 0x3d) {
    const code = text.charCodeAt(--start);
    if (code >= 48 && code <= 57) digits++;
    else if ((code | 32) >= 97 && (code | 32) <= 122) letters++;
  }
  const run = at - start;
  return (run >= WRAPPED_RUN && letters > 0 && digits > 0) || (run >= WRAPPED_LETTERS && mixedCaseLetters(text.slice(at - WRAPPED_LETTERS, at)));
}

function mixedCaseLetters(tail: string): boolean {
  if (tail.length < WRAPPED_LETTERS || !/^[A-Za-z]+$/.test(tail)) return false;
  return tail.replace(/[a-z]/g, "").length >= WRAPPED_EACH_CASE && tail.replace(/[A-Z]/g, "").length >= WRAPPED_EACH_CASE;
}

/** Concatenations and continuations, then the hard wraps among the line breaks the shared pass found after a run, in order. */
function findJoins(text: string): Range[] {
  const joins: Range[] = [];
  JOIN.lastIndex = 0;
  for (let match = JOIN.exec(text); match !== null; match = JOIN.exec(text)) joins.push([match.index, match.index + match[0].length]);
  const wraps: Range[] = [];
  for (const at of textRuns(text).breaks) {
    BREAK.lastIndex = at;
    if (BREAK.test(text) && isHardWrap(text, at, BREAK.lastIndex)) wraps.push([at, BREAK.lastIndex]);
  }
  return wraps.length === 0 ? joins : [...joins, ...wraps].sort((a, b) => a[0] - b[0]);
}

export function joinedViews(text: string): DerivedView[] {
  const joins = findJoins(text);
  if (joins.length === 0) return [];
  const views: DerivedView[] = [];
  let next = 0;
  for (const [from, to] of windowsAround(text, joins, RADIUS)) {
    const writer = new ViewWriter();
    let cursor = from;
    for (; next < joins.length && joins[next]![0] < to; next++) {
      const [start, end] = joins[next]!;
      if (start < cursor) continue;
      writer.copy(text, cursor, start);
      cursor = Math.min(end, to);
    }
    writer.copy(text, cursor, to);
    views.push(writer.view());
  }
  return views;
}
