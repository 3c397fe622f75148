/**
 * RFC 6901 JSON Pointers over parsed JSON: `""` is the whole document, `/a/0/b`
 * walks object keys and array indexes, `~1` stands for `/` and `~0` for `~`.
 * Pure; no prototype lookups (only own keys count).
 */

/** The reference tokens of a pointer, unescaped, or null when it is not a valid pointer. */
export function parseJsonPointer(text: string): string[] | null {
  if (text === "") return [];
  if (!text.startsWith("/")) return null;
  const tokens: string[] = [];
  for (const raw of text.slice(1).split("/")) {
    // `~` must be followed by 0 or 1.
    if (/~(?![01])/.test(raw)) return null;
    // RFC 6901 §4: `~1` first, then `~0`, so `~01` becomes `~1` and not `/`.
    tokens.push(raw.replace(/~1/g, "/").replace(/~0/g, "~"));
  }
  return tokens;
}

export function formatJsonPointer(tokens: readonly (string | number)[]): string {
  return tokens.map((t) => `/${String(t).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

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
