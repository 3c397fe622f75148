/**
 * Runs the rules over a text and turns their matches into spans. Each rule
 * runs only when one of its keywords occurs in the text, found by one
 * case-insensitive pass of a keyword automaton; a rule whose matches start at
 * (or a few characters before) a keyword is tried only there, so a 1 MB log
 * with one token in it pays for one attempt, not a scan; hex- and
 * digit-shaped rules run only around the runs the shared pass found.
 */
import { SECRET_RULES } from "./rules";
import { secretGroups, secretSpan, type ResolvedRedactionPolicy, type SecretRule } from "./rules/rule";
import { charCodes, rememberLast } from "./char-codes";
import { KeywordFinder } from "./keyword-finder";
import { textRuns } from "./text-runs";

export interface SecretSpan {
  readonly rule: string;
  readonly priority: number;
  readonly start: number;
  readonly end: number;
}

const KEYWORDS = new KeywordFinder([...new Set(SECRET_RULES.flatMap((rule) => rule.keywords))]);
const remembered = rememberLast((text: string) => KEYWORDS.find(charCodes(text)));
/** Where each rule keyword starts in a text; the last text's are kept, so a view that asks again (view/pieces.ts) shares the pass. */
export const ruleKeywords = remembered.of;
/** Drops the remembered text, which may hold the secrets just redacted. */
export const forgetRuleKeywords = remembered.forget;

function enabled(rule: SecretRule, policy: ResolvedRedactionPolicy): boolean {
  return rule.pii === undefined || policy.pii[rule.pii];
}

/** No rule accepts a match this short (`password=` needs six characters after it, a card thirteen digits). */
const SHORTEST_SECRET_TEXT = 8;

export function findSecretSpans(text: string, policy: ResolvedRedactionPolicy): SecretSpan[] {
  if (text.length < SHORTEST_SECRET_TEXT) return [];
  const keywords = ruleKeywords(text);
  const spans: SecretSpan[] = [];
  for (const rule of SECRET_RULES) {
    if (!enabled(rule, policy)) continue;
    if (rule.keywords.length > 0 && !rule.keywords.some((keyword) => keywords.has(keyword))) continue;
    if (rule.keywordReach !== undefined) runRuleNear(rule, text, keywordStarts(rule, keywords), spans);
    else if (rule.runAnchor !== undefined) {
      for (const [from, to] of runWindows(text, rule.runAnchor)) runRule(rule, text.slice(from, to), from, spans);
    } else runRule(rule, text, 0, spans);
  }
  return spans;
}

/** Where the rule's keywords start, in order, perhaps twice. */
function keywordStarts(rule: SecretRule, keywords: Map<string, number[]>): Uint32Array {
  const lists = rule.keywords.map((keyword) => keywords.get(keyword) ?? []);
  if (lists.length === 1) return Uint32Array.from(lists[0]!);
  const starts = new Uint32Array(lists.reduce((total, list) => total + list.length, 0));
  let at = 0;
  for (const list of lists) for (const start of list) starts[at++] = start;
  return starts.sort();
}

/** Each rule's expression, sticky: tried only near where one of its keywords starts. */
const STICKY = new Map(SECRET_RULES.filter((rule) => rule.keywordReach !== undefined).map((rule) => [rule, new RegExp(rule.pattern.source, `${rule.pattern.flags.replace("g", "")}y`)]));
const SECRET_GROUPS = new Map(SECRET_RULES.map((rule) => [rule, secretGroups(rule.pattern)]));

/**
 * Runs a rule whose matches start at most `keywordReach` characters before one of its keywords only there,
 * trying each place once, in order, as a scan of the whole text would meet them.
 */
function runRuleNear(rule: SecretRule, text: string, keywordStarts: Uint32Array, spans: SecretSpan[]): void {
  const pattern = STICKY.get(rule)!;
  const groups = SECRET_GROUPS.get(rule)!;
  const reach = rule.keywordReach!;
  let from = 0;
  for (const keywordStart of keywordStarts) {
    for (let at = Math.max(from, keywordStart - reach); at <= keywordStart; at++) {
      if (at < from) continue;
      from = at + 1;
      pattern.lastIndex = at;
      const match = pattern.exec(text);
      if (match === null) continue;
      const { start, end } = secretSpan(match, groups);
      if (end > start && (rule.accept?.(text.slice(start, end), match, text) ?? true)) {
        spans.push({ rule: rule.id, priority: rule.priority, start, end });
        from = match.index + Math.max(match[0].length, 1);
        break;
      }
      // A rejected match may hide an accepted one inside it (`"key": "password=…"`): look again from its value.
      from = Math.max(from, start);
    }
  }
}

/**
 * Around each long hex run, room for a prefix (`key-`, `SK`) and a suffix (`-us12`, `-xxxxxxxx-xxxxxxxx`);
 * around each stretch of digits, room for `ssn: ` and for the characters the lookarounds check.
 */
function runWindows(text: string, anchor: "hex" | "digits"): [number, number][] {
  const windows: [number, number][] = [];
  const [before, after] = anchor === "hex" ? [16, 24] : [8, 4];
  for (const [start, end] of textRuns(text)[anchor]) {
    const from = Math.max(0, start - before);
    const to = Math.min(text.length, end + after);
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
