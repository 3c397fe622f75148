/**
 * Runs the rules over a text and turns their matches into non-overlapping
 * spans. Each rule runs only when one of its keywords occurs in the text,
 * found in a single pass over the lower-cased text; a rule whose matches
 * start at a keyword is tried only there, so a 1 MB log with one token in it
 * pays for one attempt, not a scan.
 */
import type { ResolvedRedactionPolicy } from "./redaction-policy";
import { SECRET_RULES } from "./rules";
import { secretGroups, secretSpan, type SecretRule } from "./secret-rule";
import { textRuns } from "./text-runs";

export interface SecretSpan {
  readonly rule: string;
  readonly priority: number;
  readonly start: number;
  readonly end: number;
}

/** Longest first, so at any position the regex reports the longest keyword there. */
const ALL_KEYWORDS = [...new Set(SECRET_RULES.flatMap((rule) => rule.keywords))].sort((a, b) => b.length - a.length);
const KEYWORD_PATTERN = new RegExp(ALL_KEYWORDS.map((keyword) => keyword.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
/** Each keyword with the keywords inside it and where: a match of the longer one is a match of each of them. */
const CONTAINED = new Map(
  ALL_KEYWORDS.map((keyword) => [keyword, ALL_KEYWORDS.flatMap((other) => offsetsOf(keyword, other).map((offset) => [other, offset] as const))]),
);

function offsetsOf(text: string, part: string): number[] {
  const offsets: number[] = [];
  for (let at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) offsets.push(at);
  return offsets;
}

/** Where each keyword occurs in the lower-cased text, in one pass. */
function keywordPositions(text: string): Map<string, number[]> {
  const lower = text.toLowerCase();
  const pattern = KEYWORD_PATTERN;
  pattern.lastIndex = 0;
  const positions = new Map<string, number[]>();
  for (let match = pattern.exec(lower); match !== null; match = pattern.exec(lower)) {
    for (const [keyword, offset] of CONTAINED.get(match[0]) ?? []) {
      const list = positions.get(keyword);
      if (list === undefined) positions.set(keyword, [match.index + offset]);
      else list.push(match.index + offset);
    }
    // Step one character, not past the match, so keywords overlapping this one are found too.
    pattern.lastIndex = match.index + 1;
  }
  return positions;
}

function enabled(rule: SecretRule, policy: ResolvedRedactionPolicy): boolean {
  return rule.pii === undefined || policy.pii[rule.pii];
}

/** No rule accepts a match this short (`password=` needs six characters after it, a card thirteen digits). */
const SHORTEST_SECRET_TEXT = 8;

export function findSecretSpans(text: string, policy: ResolvedRedactionPolicy): SecretSpan[] {
  if (text.length < SHORTEST_SECRET_TEXT) return [];
  const keywords = keywordPositions(text);
  const spans: SecretSpan[] = [];
  for (const rule of SECRET_RULES) {
    if (!enabled(rule, policy)) continue;
    if (rule.keywords.length > 0 && !rule.keywords.some((keyword) => keywords.has(keyword))) continue;
    if (rule.startsAtKeyword) runRuleAt(rule, text, startsOf(rule, keywords), spans);
    else if (rule.hexAnchored) {
      for (const [from, to] of hexWindows(text)) runRule(rule, text.slice(from, to), from, spans);
    } else runRule(rule, text, 0, spans);
  }
  return spans;
}

/** Where the rule's keywords start, in order, perhaps twice (a keyword inside a longer one is listed where it was found, so out of order). */
function startsOf(rule: SecretRule, keywords: Map<string, number[]>): Uint32Array {
  const lists = rule.keywords.map((keyword) => keywords.get(keyword) ?? []);
  const starts = new Uint32Array(lists.reduce((total, list) => total + list.length, 0));
  let at = 0;
  for (const list of lists) for (const start of list) starts[at++] = start;
  return starts.sort();
}

/** Each rule's expression, sticky: tried only where one of its keywords starts. */
const STICKY = new Map(SECRET_RULES.filter((rule) => rule.startsAtKeyword).map((rule) => [rule, new RegExp(rule.pattern.source, `${rule.pattern.flags.replace("g", "")}y`)]));
const SECRET_GROUPS = new Map(SECRET_RULES.map((rule) => [rule, secretGroups(rule.pattern)]));

/** Runs a rule whose matches start at its keywords only at those places, as a scan of the whole text would. */
function runRuleAt(rule: SecretRule, text: string, starts: Uint32Array, spans: SecretSpan[]): void {
  const pattern = STICKY.get(rule)!;
  const groups = SECRET_GROUPS.get(rule)!;
  let from = 0;
  for (const at of starts) {
    if (at < from) continue;
    pattern.lastIndex = at;
    const match = pattern.exec(text);
    if (match === null) continue;
    const { start, end } = secretSpan(match, groups);
    if (end > start && (rule.accept?.(text.slice(start, end), match, text) ?? true)) {
      spans.push({ rule: rule.id, priority: rule.priority, start, end });
      from = match.index + Math.max(match[0].length, 1);
    } else from = Math.max(at + 1, start);
  }
}

/** Around each long hex run, room for a prefix (`key-`, `SK`) and a suffix (`-us12`, `-xxxxxxxx-xxxxxxxx`). */
function hexWindows(text: string): [number, number][] {
  const windows: [number, number][] = [];
  for (const [start, end] of textRuns(text).hex) {
    const from = Math.max(0, start - 16);
    const to = Math.min(text.length, end + 24);
    const last = windows[windows.length - 1];
    if (last !== undefined && from <= last[1]) last[1] = to;
    else windows.push([from, to]);
  }
  return windows;
}

/** Runs one rule over `text`, a part of the scanned text starting at `offset`. */
function runRule(rule: SecretRule, text: string, offset: number, spans: SecretSpan[]): void {
  // The rules' own expressions, reset: scanning is synchronous and accept() never scans, so none is in use.
  const pattern = rule.pattern;
  const groups = SECRET_GROUPS.get(rule)!;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const { start, end } = secretSpan(match, groups);
    const secret = text.slice(start, end);
    if (end > start && (rule.accept?.(secret, match, text) ?? true)) {
      spans.push({ rule: rule.id, priority: rule.priority, start: start + offset, end: end + offset });
    } else {
      // A rejected match may hide an accepted one inside it (`"key": "password=…"`): look again from its value.
      pattern.lastIndex = Math.max(match.index + 1, start);
    }
    if (match[0].length === 0) pattern.lastIndex++;
  }
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
