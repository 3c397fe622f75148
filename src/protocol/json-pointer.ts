/**
 * RFC 6901 JSON Pointer syntax: `""` is the whole document, `/a/0/b` walks object keys and array indexes,
 * `~1` stands for `/` and `~0` for `~`. Walking parsed JSON with one is `src/core/json-pointer.ts`.
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
