/**
 * Secret and PII redaction for text and parsed JSON. Each secret becomes
 * `[REDACTED:rule]`; the hits say where it was in the original and what it
 * was, so the caller can hash it for the audit trail (and must not keep it).
 */
import { formatJsonPointer } from "../protocol/json-pointer";
import { detectSecretSpans } from "./detect";
import { classifySecretKey, type SecretKeyClass } from "./rules/keys";
import { PRIORITY, resolveRedactionPolicy, type RedactionPolicy, type ResolvedRedactionPolicy } from "./rules/rule";
import { looksLikeAssignedSecret } from "./rules/values";
import { mergeOverlaps, type SecretSpan } from "./scan";

export { RedactionPolicy } from "./rules/rule";

export interface SecretHit {
  rule: string;
  /** Offset and length in the original text (for JSON, in the original string leaf). */
  offset: number;
  length: number;
  /** The raw secret, for hashing; never store or log it. */
  value: string;
  /** JSON Pointer of the leaf, for hits found by `redactJson`. */
  path?: string;
}

function redactionMarker(rule: string): string {
  return `[REDACTED:${rule}]`;
}

/** Matches a marker `redact` writes, so trimming can keep each one whole. */
export const REDACTION_MARKER = /\[REDACTED:[a-z0-9-]+\]/g;

export function redact(text: string, policy?: RedactionPolicy): { text: string; hits: SecretHit[] } {
  return redactSpans(text, detectSecretSpans(text, resolveRedactionPolicy(policy)));
}

function redactSpans(text: string, spans: readonly SecretSpan[]): { text: string; hits: SecretHit[] } {
  const merged = mergeOverlaps(spans);
  if (merged.length === 0) return { text, hits: [] };
  const parts: string[] = [];
  const hits: SecretHit[] = [];
  let cursor = 0;
  for (const span of merged) {
    parts.push(text.slice(cursor, span.start), redactionMarker(span.rule));
    hits.push({ rule: span.rule, offset: span.start, length: span.end - span.start, value: text.slice(span.start, span.end) });
    cursor = span.end;
  }
  parts.push(text.slice(cursor));
  return { text: parts.join(""), hits };
}

/**
 * Redacts every string leaf of a parsed JSON value, and the whole value of a
 * leaf under a secret-looking key (`password`, `api_key`, `clientSecret` …)
 * when it looks like a credential. Returns a new value; the input is not changed.
 */
export function redactJson(value: unknown, policy?: RedactionPolicy): { value: unknown; hits: SecretHit[] } {
  const hits: SecretHit[] = [];
  const redacted = walk(value, [], null, resolveRedactionPolicy(policy), hits);
  return { value: redacted, hits };
}

function walk(value: unknown, path: (string | number)[], keyClass: SecretKeyClass | null, policy: ResolvedRedactionPolicy, hits: SecretHit[]): unknown {
  if (typeof value === "string") return redactLeaf(value, path, keyClass, policy, hits);
  if (typeof value === "number" && keyClass !== null && looksLikeAssignedSecret(String(value), keyClass, true)) {
    hits.push({ rule: "secret-assignment", offset: 0, length: String(value).length, value: String(value), path: formatJsonPointer(path) });
    return redactionMarker("secret-assignment");
  }
  if (Array.isArray(value)) {
    const across = spansAcrossItems(value, policy);
    return value.map((item, index) => (typeof item === "string" ? redactLeaf(item, [...path, index], keyClass, policy, hits, across.get(index)) : walk(item, [...path, index], keyClass, policy, hits)));
  }
  if (value !== null && typeof value === "object") {
    // fromEntries defines own properties, so a `__proto__` key stays a key.
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, walk(child, [...path, key], classifySecretKey(key), policy, hits)]));
  }
  return value;
}

/**
 * A token given as the strings of an array (`["ghp_ab…", "cd…"]`): the array is read as its JSON, so the pieces
 * view puts the pieces together as it does in text, and a secret found across two or more strings is redacted
 * in each, by index. Strings JSON would escape take no part (no token needs an escape), so offsets stay exact.
 */
function spansAcrossItems(items: readonly unknown[], policy: ResolvedRedactionPolicy): Map<number, SecretSpan[]> {
  const found = new Map<number, SecretSpan[]>();
  const strings = items.map((item) => (typeof item === "string" && JSON.stringify(item).length === item.length + 2 ? item : ""));
  if (strings.filter((item) => item !== "").length < 2) return found;
  const starts: number[] = [];
  strings.reduce((start, item) => (starts.push(start), start + item.length + 3), 2);
  for (const span of detectSecretSpans(`["${strings.join('","')}"]`, policy)) {
    strings.forEach((item, index) => {
      const [from, to] = [starts[index]!, starts[index]! + item.length];
      // A span within one string is that string's own detection's to find.
      if (span.start >= from && span.end <= to) return;
      const [start, end] = [Math.max(span.start, from) - from, Math.min(span.end, to) - from];
      if (end > start) found.set(index, [...(found.get(index) ?? []), { ...span, start, end }]);
    });
  }
  return found;
}

function redactLeaf(leaf: string, path: (string | number)[], keyClass: SecretKeyClass | null, policy: ResolvedRedactionPolicy, hits: SecretHit[], across: readonly SecretSpan[] = []): string {
  const spans = [...detectSecretSpans(leaf, policy), ...across];
  if (keyClass !== null && looksLikeAssignedSecret(leaf, keyClass, true)) {
    spans.push({ rule: "secret-assignment", priority: PRIORITY.assignment, start: 0, end: leaf.length });
  }
  const result = redactSpans(leaf, spans);
  const pointer = formatJsonPointer(path);
  for (const hit of result.hits) hits.push({ ...hit, path: pointer });
  return result.text;
}
