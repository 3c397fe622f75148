/**
 * Walking parsed JSON with an RFC 6901 JSON Pointer (its syntax, parse and format, is `src/protocol/json-pointer.ts`).
 * Pure; no prototype lookups (only own keys count).
 */

import { formatJsonPointer } from "../protocol/json-pointer";

export type Lookup = { found: true; value: unknown } | { found: false; reason: string };

const INDEX = /^(0|[1-9][0-9]*)$/;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The value `tokens` names in `doc`, or why there is none (which step failed). */
export function lookup(doc: unknown, tokens: readonly string[]): Lookup {
  let current = doc;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const at = formatJsonPointer(tokens.slice(0, i)) || "the root";
    if (Array.isArray(current)) {
      if (!INDEX.test(token)) return { found: false, reason: `${at} is a list; '${token}' is not an index` };
      const index = Number(token);
      if (index >= current.length) return { found: false, reason: `${at} has ${current.length} items` };
      current = current[index];
    } else if (isPlainObject(current)) {
      if (!Object.hasOwn(current, token)) return { found: false, reason: `${at} has no key '${token}'` };
      current = current[token];
    } else {
      return { found: false, reason: `${at} is ${current === null ? "null" : typeof current}, not an object or list` };
    }
  }
  return { found: true, value: current };
}
