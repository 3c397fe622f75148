/**
 * Cutting free text to a budget: the head alone, or the head and the tail
 * with a marker saying how much was left out between them (logs keep their
 * first lines and their last, where the error usually is).
 */
import { countTokens } from "../core/tokens";
import { markerSpans, prefixWithin, suffixWithin } from "./token-cut";

export function trimmedMarker(tokens: number): string {
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
