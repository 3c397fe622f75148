/**
 * Finding where to cut a text so the part kept fits a token budget, as
 * `countTokens` counts it. Cuts never fall inside a redaction marker (which
 * would leave half a `[REDACTED:…]` for the model to puzzle over) or between
 * the halves of a surrogate pair, and prefer a line break when one is near.
 * Free text cut to a budget keeps its head alone, or its head and its tail
 * with a marker saying how much was left out between them (logs keep their
 * first lines and their last, where the error usually is).
 */
import { countTokens } from "../core/tokens";
import { REDACTION_MARKER } from "./redact";

export type Span = readonly [start: number, end: number];

export function markerSpans(text: string): Span[] {
  return [...text.matchAll(REDACTION_MARKER)].map((match) => [match.index, match.index + match[0].length] as const);
}

/** Moves a cut out of a marker or a surrogate pair: backwards when `towardStart`, else forwards. */
export function safeCut(text: string, at: number, spans: readonly Span[], towardStart: boolean): number {
  let cut = at;
  for (const [start, end] of spans) {
    if (start < cut && cut < end) cut = towardStart ? start : end;
  }
  const code = text.charCodeAt(cut - 1);
  if (cut > 0 && cut < text.length && code >= 0xd800 && code <= 0xdbff) cut += towardStart ? -1 : 1;
  return cut;
}

/**
 * The longest length in [0, maxLength] whose `measure` fits the budget, found by galloping, then narrowing the bracket
 * by interpolation (a count grows about linearly with length) every other step and by halves between, so a 1 MB text is
 * counted a handful of times, never whole just to learn that it does not fit.
 */
function longestFitting(maxLength: number, budget: number, measure: (length: number) => number): number {
  if (budget <= 0) return 0;
  let fits = 0;
  let fitsCount = 0;
  let over = Math.min(maxLength, budget * 4 + 16);
  let overCount = measure(over);
  while (overCount <= budget) {
    if (over === maxLength) return maxLength;
    [fits, fitsCount] = [over, overCount];
    over = Math.min(maxLength, over * 2);
    overCount = measure(over);
  }
  for (let step = 0; over - fits > 1; step++) {
    const guess = fits + Math.round(((over - fits) * (budget - fitsCount)) / Math.max(1, overCount - fitsCount));
    const mid = step % 2 === 0 ? Math.min(over - 1, Math.max(fits + 1, guess)) : (fits + over) >>> 1;
    const count = measure(mid);
    if (count <= budget) [fits, fitsCount] = [mid, count];
    else [over, overCount] = [mid, count];
  }
  return fits;
}

/** A line break this close to the cut (as a share of what is kept) is worth giving the rest up for. */
const LINE_SNAP_SHARE = 1 / 4;

/** End index of the longest prefix of `text` that fits `budget` tokens. */
export function prefixWithin(text: string, budget: number, spans: readonly Span[]): number {
  let cut = safeCut(text, longestFitting(text.length, budget, (length) => countTokens(text.slice(0, length))), spans, true);
  if (cut < text.length) {
    const lineEnd = text.lastIndexOf("\n", cut);
    if (lineEnd > 0 && cut - lineEnd <= cut * LINE_SNAP_SHARE) cut = safeCut(text, lineEnd, spans, true);
  }
  while (cut > 0 && countTokens(text.slice(0, cut)) > budget) cut = safeCut(text, cut - 1, spans, true);
  return cut;
}

/** Start index of the longest suffix of `text`, starting no earlier than `from`, that fits `budget` tokens. */
function suffixWithin(text: string, budget: number, spans: readonly Span[], from: number): number {
  const available = text.length - from;
  let cut = safeCut(text, text.length - longestFitting(available, budget, (length) => countTokens(text.slice(text.length - length))), spans, false);
  if (cut > from) {
    const lineStart = text.indexOf("\n", cut - 1) + 1;
    if (lineStart > 0 && lineStart < text.length && lineStart - cut <= (text.length - cut) * LINE_SNAP_SHARE) cut = safeCut(text, lineStart, spans, false);
  }
  while (cut < text.length && countTokens(text.slice(cut)) > budget) cut = safeCut(text, cut + 1, spans, false);
  return Math.max(cut, from);
}

function trimmedMarker(tokens: number): string {
  return `[… ${tokens} tokens trimmed …]`;
}

/** The first tokens of `text`, then a marker; at most `budget` tokens in all. */
export function trimHead(text: string, budget: number, originalTokens: number): string {
  const spans = markerSpans(text);
  let room = budget - countTokens(`\n${trimmedMarker(originalTokens)}`);
  while (room > 0) {
    const head = text.slice(0, prefixWithin(text, room, spans));
    const out = `${head}\n${trimmedMarker(Math.max(0, originalTokens - countTokens(head)))}`;
    const excess = countTokens(out) - budget;
    if (excess <= 0) return out;
    room -= excess;
  }
  // Not even the marker fits: the most text that does, unmarked.
  return text.slice(0, prefixWithin(text, budget, spans));
}

/** The first and last tokens of `text` around a marker; at most `budget` tokens in all. */
export function trimHeadTail(text: string, budget: number, originalTokens: number): string {
  const spans = markerSpans(text);
  let room = budget - countTokens(`\n${trimmedMarker(originalTokens)}\n`);
  while (room > 0) {
    const headEnd = prefixWithin(text, Math.ceil(room / 2), spans);
    const head = text.slice(0, headEnd);
    const tail = text.slice(suffixWithin(text, room - countTokens(head), spans, headEnd));
    const left = Math.max(0, originalTokens - countTokens(head) - countTokens(tail));
    const out = `${head}\n${trimmedMarker(left)}\n${tail}`;
    const excess = countTokens(out) - budget;
    if (excess <= 0) return out;
    room -= excess;
  }
  return text.slice(0, prefixWithin(text, budget, spans));
}
