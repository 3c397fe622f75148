/**
 * Trimming a tool result to its token budget, and the envelope every tool
 * result passes: redact first, then trim, so a secret cut in two by a trim
 * can never survive as a fragment and a redaction marker is never split.
 * A result within its budget passes unchanged, whatever the strategy.
 */
import { countTokens } from "../core/tokens";
import { redact, type RedactionPolicy, type SecretHit } from "./redact";
import { projectFields } from "./trim-fields";
import { trimHead, trimHeadTail } from "./trim-head-tail";
import type { TrimPolicy, TrimReport, TrimStrategy } from "../protocol/policies";
import { DEFAULT_TRIM_POLICY } from "./trim-policy";
import { structuralSummary } from "./trim-summary";
import { prefixWithin } from "./token-cut";

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
