/**
 * The pieces view: a prefixed token given in pieces put back together. A piece
 * starting with an issuer's prefix (`ghp_`, `sk-`, `AKIA` …) that ends its line,
 * or is followed only by punctuation (`", "`, `+`, `\`), continues with the next
 * line's first run that reads as generated, when that run ends its line (or with
 * the run right after the punctuation), whatever label comes before it:
 * `part 2:`, `(2/2)`, `second half —`, `Teil 2:`, `第二部分：` are words, numbers
 * and punctuation, and a token's body is none of them. The view is the pieces
 * alone, so the rules see the token whole (or cut, which the prefixed rules also
 * know), and a hit redacts from the first piece to the last, labels between
 * them included.
 */
import { PROVIDER_RULES, WHOLE_TOKEN_RULES } from "../rules/providers";
import { looksGenerated } from "../rules/values";
import { ruleKeywords } from "../scan";
import { ViewWriter, type DerivedView } from "./view";

/** The keywords that are issuers' prefixes: the rules anchored at them. */
const PREFIXES = [...new Set(PROVIDER_RULES.filter((rule) => rule.keywordReach === 0).flatMap((rule) => rule.keywords))];
const LONGEST_PREFIX = Math.max(...PREFIXES.map((prefix) => prefix.length));
/** Each prefix's whole-token expressions, sticky, to tell when the pieces joined so far make a whole token. */
const WHOLE = new Map(PREFIXES.map((prefix) => [prefix, WHOLE_TOKEN_RULES.filter((rule) => rule.keywords.includes(prefix)).map((rule) => new RegExp(rule.pattern.source, "y"))]));
/** How far into the next line a label may reach before the piece. */
const LABEL_REACH = 32;
/** A piece this short could be anything; a token given in more pieces than this is not being quoted. */
const SHORTEST_PIECE = 6;
const MOST_PIECES = 8;
/** A body of lower-case words (`sk-learn`, `sk-image-gen`): a name, not a token cut after its prefix. */
const LOWER_CASE_WORDS = /^[a-z]{4,}(?:[-_.][a-z]+)*$/;
/** Between two pieces on one line: a closing quote, `,`, `+`, a backslash, brackets, spaces; this many at most. */
const WIDEST_GAP = 8;

/** The characters of a token's body, as the prefixed rules' alphabets have them. */
function isRunChar(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95 || code === 45 || code === 46;
}

/** Punctuation that joins pieces or closes one: quotes, `,`, `+`, `\`, `)`, `]`, `;`, `&`, `|`, `` ` ``, spaces. */
function isGapChar(code: number): boolean {
  return code === 0x20 || code === 0x09 || isJoiner(code) || code === 0x29 || code === 0x5d || code === 0x3b || code === 0x26 || code === 0x7c;
}

/** What puts two pieces on one line together: a quote (`"ab", "cd"`), `,`, `+`, a backslash. Spaces alone do not. */
function isJoiner(code: number): boolean {
  return code === 0x22 || code === 0x27 || code === 0x60 || code === 0x2c || code === 0x2b || code === 0x5c;
}

/** Where the run of body characters from `at` ends, a trailing `.` (the end of a sentence) left out. */
function runEnd(text: string, at: number): number {
  let end = at;
  while (end < text.length && isRunChar(text.charCodeAt(end))) end++;
  while (end > at && text.charCodeAt(end - 1) === 0x2e) end--;
  return end;
}

/** The length of the line break at `at` (real, or a `\n` escape in JSON text), else 0. */
function lineBreak(text: string, at: number): number {
  const code = text.charCodeAt(at);
  if (code === 0x0a) return 1;
  if (code === 0x0d) return text.charCodeAt(at + 1) === 0x0a ? 2 : 1;
  if (code !== 0x5c) return 0;
  const next = text.charCodeAt(at + 1);
  if (next === 0x6e) return 2;
  return next === 0x72 && text.startsWith("\\n", at + 2) ? 4 : 0;
}

/**
 * Whether the run [start, end) continues `token` (a prefix and the pieces so far): it reads as generated, or
 * completes a token of a fixed length (`AKIA` and 8 characters, then `TFPIQLU3`: a piece of capitals reads as a
 * word); and it is not a token of its own (`GITHUB_TOKEN=ghp_…` on the line under `Bearer ghp_…`).
 */
function isPiece(text: string, start: number, end: number, prefix: string, token: string): boolean {
  if (end - start < SHORTEST_PIECE) return false;
  const run = text.slice(start, end);
  if (!looksGenerated(run) && !isDone(prefix, token + run)) return false;
  const head = run.slice(0, LONGEST_PREFIX).toLowerCase();
  return !PREFIXES.some((other) => head.startsWith(other));
}

/** The label before a piece at `at`: its line up to it, the last 64 characters at most. */
function labelBefore(text: string, at: number): string {
  let start = at;
  while (start > 0 && at - start < 64 && lineBreak(text, start - 1) === 0 && !(text.charCodeAt(start - 2) === 0x5c && lineBreak(text, start - 2) > 0)) start--;
  return text.slice(start, at);
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** What a part number takes in a label: `1`, `1/3`, `first`/`second`, `一`/`二`. */
const PART_NUMBER = 6;

/**
 * Whether two lines' labels are parallel, as labels of one token's pieces are: the same but for a part number
 * (`token part 1:` / `token part 2:`, `first half:` / `second half:`, `第一部分：` / `第二部分：`, or none). The
 * first is compared by its end, as long as the second: the line may begin with other text.
 */
function parallelLabels(first: string, second: string): boolean {
  const tail = first.slice(Math.max(0, first.length - second.length));
  const reversed = (text: string) => [...text].reverse().join("");
  const suffix = commonPrefix(reversed(tail), reversed(second));
  const prefix = commonPrefix(tail.slice(0, tail.length - suffix), second.slice(0, second.length - suffix));
  return Math.max(tail.length, second.length) - suffix - prefix <= PART_NUMBER;
}

/** The piece that continues `token`, whose last piece is [start, from), or null. */
function nextPiece(text: string, start: number, from: number, prefix: string, token: string): [number, number] | null {
  let at = from;
  while (at < text.length && at - from <= WIDEST_GAP && isGapChar(text.charCodeAt(at)) && lineBreak(text, at) === 0) at++;
  const breakLength = lineBreak(text, at);
  if (breakLength === 0) {
    // On the same line, the next piece comes right after the punctuation.
    let joined = false;
    for (let i = from; i < at; i++) joined ||= isJoiner(text.charCodeAt(i));
    if (!joined || at - from > WIDEST_GAP) return null;
    const end = runEnd(text, at);
    return isPiece(text, at, end, prefix, token) ? [at, end] : null;
  }
  // On the next line (a blank line between is read past), after a label of words, numbers and punctuation, in any script.
  let lineStart = at + breakLength;
  const blank = blankLine(text, lineStart);
  if (blank > 0) lineStart += blank;
  for (at = lineStart; at < text.length && at - lineStart < LABEL_REACH && lineBreak(text, at) === 0; ) {
    if (!isRunChar(text.charCodeAt(at))) {
      at++;
      continue;
    }
    const end = runEnd(text, at);
    if (!isPiece(text, at, end, prefix, token)) {
      at = Math.max(end, at + 1);
      continue;
    }
    // A piece that completes a token of fixed length needs no parallel label: the lengths adding up say it is one.
    if (isDone(prefix, token + text.slice(at, end))) return [at, end];
    return endsLine(text, end) && parallelLabels(labelBefore(text, start), text.slice(lineStart, at)) ? [at, end] : null;
  }
  return null;
}

/** The length of a blank line starting at `at` (spaces, then its break), else 0. */
function blankLine(text: string, at: number): number {
  let i = at;
  while (i < text.length && (text.charCodeAt(i) === 0x20 || text.charCodeAt(i) === 0x09)) i++;
  const breakLength = lineBreak(text, i);
  return breakLength > 0 ? i - at + breakLength : 0;
}

/** Whether nothing but punctuation follows `at` on its line: a label comes before a piece, a log line's fields after it. */
function endsLine(text: string, at: number): boolean {
  for (let i = at; i < text.length && lineBreak(text, i) === 0; i++) if (isRunChar(text.charCodeAt(i)) || i - at > WIDEST_GAP) return false;
  return true;
}

/** Whether `token` is one whole token of the issuer its prefix names. */
function isWhole(prefix: string, token: string): boolean {
  return WHOLE.get(prefix)!.some((pattern) => {
    pattern.lastIndex = 0;
    return pattern.exec(token)?.[0].length === token.length;
  });
}

/**
 * Whether no further piece belongs to `token`: it is whole, and one more character would spoil it. Whole alone is
 * not done where the issuer's shape is open-ended (`xoxb-` and ten characters is whole).
 */
function isDone(prefix: string, token: string): boolean {
  return isWhole(prefix, token) && !isWhole(prefix, `${token}0`);
}

export function piecesViews(text: string): DerivedView[] {
  const keywords = ruleKeywords(text);
  const starts = PREFIXES.flatMap((prefix) => (keywords.get(prefix) ?? []).map((start) => [start, prefix] as const)).sort((a, b) => a[0] - b[0]);
  const views: DerivedView[] = [];
  let covered = 0;
  for (const [start, prefix] of starts) {
    if (start < covered || (start > 0 && isRunChar(text.charCodeAt(start - 1)))) continue;
    const end = runEnd(text, start + prefix.length);
    // `sk-learn` on one line and a hash on the next are not one token.
    if (LOWER_CASE_WORDS.test(text.slice(start + prefix.length, end))) continue;
    const pieces: [number, number][] = [[start, end]];
    let token = text.slice(start, end);
    while (pieces.length < MOST_PIECES && !isDone(prefix, token)) {
      const [lastStart, lastEnd] = pieces[pieces.length - 1]!;
      const next = nextPiece(text, lastStart, lastEnd, prefix, token);
      if (next === null) break;
      pieces.push(next);
      token += text.slice(next[0], next[1]);
    }
    if (pieces.length < 2) continue;
    const writer = new ViewWriter();
    for (const [from, to] of pieces) writer.copy(text, from, to);
    views.push(writer.view());
    covered = pieces[pieces.length - 1]![1];
  }
  return views;
}
