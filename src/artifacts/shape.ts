/**
 * What an artifact looks like without its payload: the keys a step can ask
 * for, and a structural one-liner for when the producer gave no summary. Pure.
 */
import { isPlainObject } from "../core/json-pointer";
import { ARTIFACT_LIMITS } from "../protocol/artifact-limits";
import { wellFormed } from "../protocol/text";

const encoder = new TextEncoder();
/** Distinct keys counted at most; a list with more is reported as having at least this many. */
const KEY_COUNT_CAP = 10_000;

/**
 * The keys a step can ask for: an object's own keys, or for a list, the union
 * of its object items' keys (first seen first). Bounded by count and bytes;
 * `total` says how many there are in all.
 */
export function schemaKeysOf(data: unknown): { keys: string[]; total: number } {
  const all = new Set<string>();
  const add = (o: Record<string, unknown>) => {
    for (const key of Object.keys(o)) {
      if (all.size >= KEY_COUNT_CAP) return;
      all.add(key);
    }
  };
  if (isPlainObject(data)) add(data);
  else if (Array.isArray(data)) for (const item of data) if (isPlainObject(item)) add(item);
  const keys: string[] = [];
  let bytes = 2; // the brackets of the JSON array
  for (const key of all) {
    if (keys.length >= ARTIFACT_LIMITS.schemaKeys) break;
    const cost = encoder.encode(JSON.stringify(key)).length + 1;
    if (bytes + cost > ARTIFACT_LIMITS.schemaKeysBytes) break;
    keys.push(key);
    bytes += cost;
  }
  return { keys, total: all.size };
}

/** True when objects and arrays nest deeper than `max` (a bare `{}` is depth 1). Iterative, so any depth is safe. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(2)} MB`;
}

/** A key as it reads in a one-liner: bare when it is a plain word, else quoted (so it stays on one line). */
export function displayKey(key: string): string {
  return /^[\p{L}\p{N}_$.-]{1,48}$/u.test(key) ? key : JSON.stringify(key.length > 48 ? `${key.slice(0, 47)}…` : key);
}

function keyList(keys: readonly string[], max: number): string {
  const shown = keys.slice(0, max).map(displayKey).join(", ");
  return keys.length > max ? `${shown}, +${keys.length - max}` : shown;
}

/** A value's shape in a few words: `40 × {title, url, snippet}`, `5 strings`, `number`. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string") return `text, ${value.length} chars`;
  if (typeof value !== "object") return typeof value;
  if (!Array.isArray(value)) return `{${keyList(Object.keys(value), 6)}}`;
  if (value.length === 0) return "empty list";
  if (value.every(isPlainObject)) {
    const union = new Set<string>();
    for (const item of value) for (const key of Object.keys(item)) union.add(key);
    return `${value.length} × {${keyList([...union], 6)}}`;
  }
  const kinds = new Set(value.map((v) => (v === null ? "null" : Array.isArray(v) ? "list" : typeof v)));
  if (kinds.size === 1) {
    const [kind] = kinds;
    return `${value.length} ${kind === "string" ? "strings" : kind === "number" ? "numbers" : kind === "boolean" ? "booleans" : kind === "list" ? "lists" : "items"}`;
  }
  return `${value.length} items`;
}

/** The summary a producer did not give: type, size, and the shape with keys and item counts. */
export function structuralSummary(type: string, data: unknown, sizeBytes: number): string {
  let shape: string;
  if (isPlainObject(data)) {
    const keys = Object.keys(data);
    const parts = keys.slice(0, 8).map((k) => `${displayKey(k)} (${describeValue(data[k])})`);
    if (keys.length > 8) parts.push(`+${keys.length - 8} more keys`);
    shape = keys.length === 0 ? "empty object" : `object: ${parts.join(", ")}`;
  } else if (Array.isArray(data)) {
    shape = data.length === 0 ? "empty list" : `list of ${describeValue(data)}`;
  } else {
    shape = describeValue(data);
  }
  return cut(`${type}, ${formatBytes(sizeBytes)}: ${shape}`, ARTIFACT_LIMITS.summaryChars);
}

/** At most `max` characters, with an ellipsis when cut, never splitting a surrogate pair. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return wellFormed(text);
  let end = max - 1;
  if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? "")) end -= 1;
  return wellFormed(`${text.slice(0, end)}…`);
}
