/**
 * Runs the rules over a text and turns their matches into non-overlapping
 * spans. Each rule runs only when one of its keywords occurs in the text,
 * found in a single pass over the lower-cased text.
 */
import type { ResolvedRedactionPolicy } from "./redaction-policy";
import { SECRET_RULES } from "./rules";
import { secretSpan, type SecretRule } from "./secret-rule";

export interface SecretSpan {
  readonly rule: string;
  readonly priority: number;
  readonly start: number;
  readonly end: number;
}

/** Longest first, so at any position the regex reports the longest keyword there. */
const ALL_KEYWORDS = [...new Set(SECRET_RULES.flatMap((rule) => rule.keywords))].sort((a, b) => b.length - a.length);
const KEYWORD_PATTERN = new RegExp(ALL_KEYWORDS.map((keyword) => keyword.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
/** Each keyword with the keywords inside it, which a match of the longer one also proves present. */
const CONTAINED = new Map(ALL_KEYWORDS.map((keyword) => [keyword, ALL_KEYWORDS.filter((other) => keyword.includes(other))]));

function presentKeywords(text: string): Set<string> {
  const lower = text.toLowerCase();
  const pattern = KEYWORD_PATTERN;
  pattern.lastIndex = 0;
  const seen = new Set<string>();
  for (let match = pattern.exec(lower); match !== null && seen.size < ALL_KEYWORDS.length; match = pattern.exec(lower)) {
    for (const keyword of CONTAINED.get(match[0]) ?? []) seen.add(keyword);
    // Step one character, not past the match, so keywords overlapping this one are found too.
    pattern.lastIndex = match.index + 1;
  }
  return seen;
}

function enabled(rule: SecretRule, policy: ResolvedRedactionPolicy): boolean {
  return rule.pii === undefined || policy.pii[rule.pii];
}

/** No rule accepts a match this short (`password=` needs six characters after it, a card thirteen digits). */
const SHORTEST_SECRET_TEXT = 8;

export function findSecretSpans(text: string, policy: ResolvedRedactionPolicy): SecretSpan[] {
  if (text.length < SHORTEST_SECRET_TEXT) return [];
  const keywords = presentKeywords(text);
  const spans: SecretSpan[] = [];
  for (const rule of SECRET_RULES) {
    if (!enabled(rule, policy)) continue;
    if (rule.keywords.length > 0 && !rule.keywords.some((keyword) => keywords.has(keyword))) continue;
    // The rules' own expressions, reset: scanning is synchronous and accept() never scans, so none is in use.
    const pattern = rule.pattern;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const { start, end } = secretSpan(match);
      const secret = text.slice(start, end);
      if (end > start && (rule.accept?.(secret, match, text) ?? true)) {
        spans.push({ rule: rule.id, priority: rule.priority, start, end });
      } else {
        // A rejected match may hide an accepted one inside it (`"key": "password=…"`): look again from its value.
        pattern.lastIndex = Math.max(match.index + 1, start);
      }
      if (match[0].length === 0) pattern.lastIndex++;
    }
  }
  return spans;
}

/**
 * Overlapping spans become one span covering all of them, so no part of a
 * secret that one rule saw and another cut short survives. It is named after
 * the highest-priority rule among them, the longest on a tie.
 */
export function mergeOverlaps(spans: readonly SecretSpan[]): SecretSpan[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: SecretSpan[] = [];
  for (const span of sorted) {
    const last = merged[merged.length - 1];
    if (last === undefined || span.start >= last.end) {
      merged.push(span);
      continue;
    }
    const winner = outranks(span, last) ? span : last;
    merged[merged.length - 1] = { rule: winner.rule, priority: winner.priority, start: last.start, end: Math.max(last.end, span.end) };
  }
  return merged;
}

function outranks(a: SecretSpan, b: SecretSpan): boolean {
  return a.priority > b.priority || (a.priority === b.priority && a.end - a.start > b.end - b.start);
}
