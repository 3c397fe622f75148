import type { Toolbox, ToolSpec } from "../protocol/tools";
import { splitQualified } from "../protocol/names";

/** What model APIs accept as a function name (OpenAI and Anthropic alike): no colon, no dot, at most 64 characters. */
export const MODEL_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The name the model calls an app's tool by: `app__tool` for `app:tool`. A name that would not be a valid function name
 * as is (a dot, a `__` of its own that could collide, more than 64 characters) is shortened and given a hash of the
 * qualified name, so it stays unique and the same on every turn. Runtime tools (`search_tools`, …) never contain `__`.
 */
export function modelToolName(qualified: string): string {
  const { app, name } = splitQualified(qualified);
  const plain = `${app}__${name}`;
  if (plain.length <= 64 && !app.includes("__") && !name.includes("__") && MODEL_TOOL_NAME.test(plain)) return plain;
  return `${plain.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 56)}_${fnv1a(qualified)}`;
}

/** FNV-1a, 32 bits, as 7 base-36 digits: deterministic and synchronous (Web Crypto's digests are async). */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36).padStart(7, "0");
}

const byModelNames = new WeakMap<Toolbox, Map<string, ToolSpec>>();

/** The agent's bound and catalog tools by the name the model calls them: built once per toolbox, read by every step of a call's run. */
export function toolsByModelName(toolbox: Toolbox): Map<string, ToolSpec> {
  let map = byModelNames.get(toolbox);
  if (!map) byModelNames.set(toolbox, (map = new Map([...toolbox.bound, ...toolbox.catalog].map((t) => [modelToolName(t.name), t]))));
  return map;
}
