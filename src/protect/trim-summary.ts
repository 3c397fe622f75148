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

export function structuralSummary(text: string, originalTokens: number): string {
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
