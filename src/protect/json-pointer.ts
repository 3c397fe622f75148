/** JSON Pointer (RFC 6901): `/a/b~1c/0` names `value.a["b/c"][0]`; `~0` is `~`, `~1` is `/`. */

export function parseJsonPointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new Error(`not a JSON Pointer (must start with "/"): ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split("/")
    .map((token) => {
      if (/~[^01]|~$/.test(token)) throw new Error(`invalid escape in JSON Pointer ${JSON.stringify(pointer)}`);
      return token.replace(/~1/g, "/").replace(/~0/g, "~");
    });
}

export function formatJsonPointer(tokens: readonly (string | number)[]): string {
  return tokens.map((token) => `/${String(token).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

export type PointerLookup = { found: true; value: unknown } | { found: false };

/** Own properties only, so `/constructor` or `/__proto__` never reach the prototype. */
export function resolveJsonPointer(root: unknown, tokens: readonly string[]): PointerLookup {
  let current: unknown = root;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      if (!/^(?:0|[1-9]\d*)$/.test(token) || Number(token) >= current.length) return { found: false };
      current = current[Number(token)];
    } else if (current !== null && typeof current === "object" && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}
