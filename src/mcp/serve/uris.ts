/**
 * Contexts as MCP resources (docs/mcp.md, "Resources"): `ctx://app/provider` is a provider's current state
 * (`getCurrent`), `ctx://app/provider/<id>` one of its items (`getById`), the id percent-encoded so any id makes one
 * path segment. App and provider names are the registry's (letters, digits, '.', '_', '-'), so they need no encoding.
 */
import { Name } from "../../protocol/names";
import { LIMITS } from "../../protocol/limits";

export const CONTEXT_URI_PREFIX = "ctx://";

export interface ContextAddress {
  /** `app:provider`. */
  ref: string;
  itemId?: string;
}

export function contextUri(ref: string, itemId?: string): string {
  const [app, provider] = ref.split(":", 2);
  return `${CONTEXT_URI_PREFIX}${app}/${provider}${itemId === undefined ? "" : `/${encodeURIComponent(itemId)}`}`;
}

/** The template a client fills with an item id from `resources/list` (RFC 6570, level 1). */
export function itemTemplate(ref: string): string {
  return `${contextUri(ref)}/{id}`;
}

/** The context a URI names, or null for one this server never issues. */
export function parseContextUri(uri: string): ContextAddress | null {
  if (!uri.startsWith(CONTEXT_URI_PREFIX)) return null;
  const [app, provider, encoded, ...rest] = uri.slice(CONTEXT_URI_PREFIX.length).split("/");
  if (rest.length > 0 || !Name.safeParse(app).success || !Name.safeParse(provider).success) return null;
  const ref = `${app}:${provider}`;
  if (encoded === undefined) return { ref };
  let itemId: string;
  try {
    itemId = decodeURIComponent(encoded);
  } catch {
    return null;
  }
  return itemId.length === 0 || itemId.length > LIMITS.itemIdChars ? null : { ref, itemId };
}
