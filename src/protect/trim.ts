/**
 * Trimming a tool result to its token budget, and the envelope every tool
 * result passes: redact first, then trim, so a secret cut in two by a trim
 * can never survive as a fragment and a redaction marker is never split.
 * A result within its budget passes unchanged, whatever the strategy.
 * Free text is cut by token-cut.ts; the `fields` and `summary` strategies are here.
 */
import { lookup } from "../core/json-pointer";
import { countTokens } from "../core/tokens";
import { parseJsonPointer } from "../protocol/json-pointer";
import { TrimPolicy, type TrimPolicyInput, type TrimReport, type TrimStrategy } from "../protocol/policies";
import { redact, type RedactionPolicy, type SecretHit } from "./redact";
import { prefixWithin, trimHead, trimHeadTail } from "./token-cut";

export interface ProtectedToolResult {
  /** What the model may read: redacted, then trimmed. */
  content: string;
  /** Offsets in the original content; `value` is the raw secret, to hash for the audit trail and drop. */
  hits: SecretHit[];
  trimmed: TrimReport | null;
}

export function protectToolResult(content: string, opts: { policy?: TrimPolicy; redaction?: RedactionPolicy } = {}): ProtectedToolResult {
  const redacted = redact(content, opts.redaction);
  const { text, trimmed } = trimText(redacted.text, opts.policy);
  return { content: text, hits: redacted.hits, trimmed };
}

/**
 * Which trim policy a tool's result gets: the agent's override for that tool (defaults filling its gaps), else
 * the default (head and tail, 800 tokens). The policy's schema is `src/protocol/policies.ts`.
 */
const DEFAULT_TRIM_POLICY: TrimPolicy = TrimPolicy.parse({});

/** The policy for one tool: its override when there is one (defaults filling the gaps), else the default. */
export function resolveTrimPolicy(toolName: string, overrides?: Readonly<Record<string, TrimPolicyInput>>): TrimPolicy {
  if (overrides === undefined || !Object.hasOwn(overrides, toolName)) return DEFAULT_TRIM_POLICY;
  return TrimPolicy.parse(overrides[toolName]);
}

export interface TrimResult {
  text: string;
  trimmed: TrimReport | null;
}

export function trimText(text: string, policy: TrimPolicy = DEFAULT_TRIM_POLICY): TrimResult {
  const budget = policy.maxTokens;
  // countTokens charges at most a token per UTF-8 byte, and a UTF-16 unit is at most 3 bytes: a text this short fits.
  if (text.length * 3 <= budget) return { text, trimmed: null };
  const originalTokens = countTokens(text);
  if (originalTokens <= budget) return { text, trimmed: null };
  const { strategy, out } = applyStrategy(text, policy, originalTokens);
  return { text: out, trimmed: { strategy, originalTokens, keptTokens: countTokens(out) } };
}

function applyStrategy(text: string, policy: TrimPolicy, originalTokens: number): { strategy: TrimStrategy; out: string } {
  const budget = policy.maxTokens;
  switch (policy.strategy) {
    case "head":
      return { strategy: "head", out: trimHead(text, budget, originalTokens) };
    case "head_tail":
      return { strategy: "head_tail", out: trimHeadTail(text, budget, originalTokens) };
    case "summary": {
      const summary = structuralSummary(text, originalTokens);
      return { strategy: "summary", out: summary.slice(0, prefixWithin(summary, budget, [])) };
    }
    case "fields": {
      const projected = projectJson(text, policy.fields ?? []);
      if (projected === null) return { strategy: "head_tail", out: trimHeadTail(text, budget, originalTokens) };
      const out = countTokens(projected) <= budget ? projected : trimHeadTail(projected, budget, originalTokens);
      return { strategy: "fields", out };
    }
  }
}

/** Compact JSON of just the fields, or null when the text is not a JSON object or array. */
function projectJson(text: string, fields: readonly string[]): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const projection = projectFields(parsed, fields);
  return projection === null ? null : JSON.stringify(projection);
}

/**
 * The `fields` strategy: keep only the named parts of a JSON result. A plain
 * name is a top-level key (of the object, or of each object in a top-level
 * array); a JSON Pointer keeps that one value at its place, so
 * `["/answer", "/data/items/0/title"]` keeps
 * `{"answer":…,"data":{"items":[{"title":…}]}}`. Missing paths are skipped.
 */
type Container = Record<string, unknown> | unknown[];

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/** Containers without a prototype, so a `__proto__` field is kept as a key. */
const emptyLike = (source: unknown): Container => (Array.isArray(source) ? [] : (Object.create(null) as Record<string, unknown>));

function pickKeys(source: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const picked = Object.create(null) as Record<string, unknown>;
  for (const key of keys) if (Object.hasOwn(source, key)) picked[key] = source[key];
  return picked;
}

/** Copies the value at `tokens` in `source` to the same place under `target`, creating containers of the source's kinds. */
function copyAt(source: unknown, target: Container, tokens: readonly string[], value: unknown): void {
  let from = source;
  let to = target;
  for (const [i, token] of tokens.entries()) {
    const key: string | number = Array.isArray(from) ? Number(token) : token;
    from = Array.isArray(from) ? from[key as number] : (from as Record<string, unknown>)[token];
    const slot = to as Record<string | number, unknown>;
    if (i === tokens.length - 1) {
      slot[key] = value;
      return;
    }
    const existing = slot[key];
    if (existing === undefined || existing === null || typeof existing !== "object") slot[key] = emptyLike(from);
    to = slot[key] as Container;
  }
}

/** The projection of `root` on `fields`, or null when `root` is not an object or array. */
function projectFields(root: unknown, fields: readonly string[]): unknown {
  if (root === null || typeof root !== "object") return null;
  const keys = fields.filter((field) => !field.startsWith("/"));
  const pointers = fields.flatMap((field) => (field.startsWith("/") ? [parseJsonPointer(field)].filter((tokens) => tokens !== null) : []));
  const out = emptyLike(root);
  if (Array.isArray(root)) {
    if (keys.length > 0) root.forEach((item, index) => ((out as unknown[])[index] = isObject(item) ? pickKeys(item, keys) : item));
  } else {
    Object.assign(out, pickKeys(root as Record<string, unknown>, keys));
  }
  for (const tokens of pointers) {
    const found = lookup(root, tokens);
    if (!found.found) continue;
    if (tokens.length === 0) return found.value;
    copyAt(root, out, tokens, found.value);
  }
  return out;
}

/**
 * The `summary` strategy: instead of the result, what it is — its type, its
 * size, its top-level keys, how many items an array holds and what keys its
 * first items have — for tools whose output the model only needs to know exists.
 */
const LISTED_KEYS = 40;
const SAMPLED_ITEMS = 3;

const typeOf = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value);

function keyList(keys: readonly string[]): string {
  const shown = keys.slice(0, LISTED_KEYS).map((key) => JSON.stringify(key)).join(", ");
  return keys.length > LISTED_KEYS ? `${shown}, … (${keys.length - LISTED_KEYS} more)` : shown;
}

function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}

function structuralSummary(text: string, originalTokens: number): string {
  const lines = [`[Tool result summarised: ${originalTokens} tokens, not shown]`];
  let parsed: unknown;
  let isJson = true;
  try {
    parsed = JSON.parse(text);
  } catch {
    isJson = false;
  }
  lines.push(`type: ${isJson ? `JSON ${typeOf(parsed)}` : "text"}`, `bytes: ${utf8Bytes(text)}`);
  if (!isJson) {
    lines.push(`lines: ${text.split("\n").length}`);
  } else if (Array.isArray(parsed)) {
    lines.push(`items: ${parsed.length}`);
    const itemKeys = [...new Set(parsed.slice(0, SAMPLED_ITEMS).flatMap((item) => (typeOf(item) === "object" ? Object.keys(item as object) : [])))];
    if (itemKeys.length > 0) lines.push(`keys of the first items: ${keyList(itemKeys)}`);
  } else if (typeOf(parsed) === "object") {
    const keys = Object.keys(parsed as object);
    lines.push(`keys (${keys.length}): ${keyList(keys)}`);
    const arrays = Object.entries(parsed as Record<string, unknown>).filter(([, value]) => Array.isArray(value));
    if (arrays.length > 0) lines.push(`arrays: ${arrays.slice(0, LISTED_KEYS).map(([key, value]) => `${JSON.stringify(key)} (${(value as unknown[]).length} items)`).join(", ")}`);
  }
  return lines.join("\n");
}
