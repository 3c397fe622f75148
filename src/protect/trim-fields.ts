/**
 * The `fields` strategy: keep only the named parts of a JSON result. A plain
 * name is a top-level key (of the object, or of each object in a top-level
 * array); a JSON Pointer keeps that one value at its place, so
 * `["/answer", "/data/items/0/title"]` keeps
 * `{"answer":…,"data":{"items":[{"title":…}]}}`. Missing paths are skipped.
 */
import { lookup } from "../core/json-pointer";
import { parseJsonPointer } from "../protocol/json-pointer";

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
export function projectFields(root: unknown, fields: readonly string[]): unknown {
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
