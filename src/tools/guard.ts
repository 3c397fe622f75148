/**
 * The rule guard (docs/tools.md, "The guard"): an agent's rules, checked before any tool the runtime serves runs.
 * Pure: it reads only the call (its tool's names, annotations and arguments) and the rules, never the model's
 * reasoning. The first rule that matches gives the verdict; no match allows.
 */
import { lookup } from "../core/json-pointer";
import { parseJsonPointer } from "../protocol/json-pointer";
import { GUARD_VALUE_CHARS, patternProblem, type ToolAnnotations } from "../protocol/methods";

export { GUARD_PATTERN_CHARS, GUARD_VALUE_CHARS, patternProblem } from "../protocol/methods";

export interface GuardRule {
  /** A glob on the model-facing (`calendar__delete_event`) or qualified (`calendar:delete_event`) name: `*` any run of characters, `?` one. */
  tool?: string;
  annotations?: { destructiveHint?: boolean; readOnlyHint?: boolean; openWorldHint?: boolean };
  arguments?: { path: string; pattern: string }[];
  verdict: "deny" | "allow";
  reason: string;
}

export interface GuardConfig {
  rules: GuardRule[];
}

/** What the guard sees of one call. */
export interface GuardedCall {
  /** The name the model called. */
  name: string;
  /** `app:tool` for an app's tool; the runtime tool's name for the runtime's own. */
  qualified: string;
  annotations?: ToolAnnotations;
  /** The parsed arguments, or null when they are not a JSON object. */
  arguments: Record<string, unknown> | null;
}

export type GuardVerdict = { verdict: "allow"; rule: number | null } | { verdict: "deny"; rule: number; reason: string };

/** A glob as a regular expression: `*` any run of characters, `?` one, the rest literal. */
function globRegex(glob: string): RegExp {
  const body = [...glob].map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("");
  return new RegExp(`^${body}$`, "su");
}

const globs = new Map<string, RegExp>();
const patterns = new Map<string, RegExp>();

function cached(map: Map<string, RegExp>, key: string, make: () => RegExp): RegExp {
  let re = map.get(key);
  if (!re) {
    if (map.size > 1_000) map.clear();
    re = make();
    map.set(key, re);
  }
  return re;
}

/** The text a pattern is tested on: a string as it is, any other value as JSON. */
function valueText(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value) ?? "");
}

function matchesRule(rule: GuardRule, call: GuardedCall): boolean {
  if (rule.tool !== undefined) {
    const re = cached(globs, rule.tool, () => globRegex(rule.tool!));
    if (!re.test(call.name) && !re.test(call.qualified)) return false;
  }
  if (rule.annotations) {
    for (const [hint, wanted] of Object.entries(rule.annotations) as [keyof GuardRule["annotations"] & string, boolean | undefined][]) {
      // A hint the tool does not declare is false.
      if (wanted !== undefined && (call.annotations?.[hint] ?? false) !== wanted) return false;
    }
  }
  for (const arg of rule.arguments ?? []) {
    if (call.arguments === null) return false;
    const tokens = parseJsonPointer(arg.path);
    if (tokens === null) return false;
    const found = lookup(call.arguments, tokens);
    if (!found.found) return false;
    const text = valueText(found.value);
    // A value too long to test within bounds matches a deny rule (the guard fails closed) and never an allow rule.
    if (text.length > GUARD_VALUE_CHARS) {
      if (rule.verdict === "allow") return false;
      continue;
    }
    if (patternProblem(arg.pattern) !== null) return rule.verdict === "deny";
    if (!cached(patterns, arg.pattern, () => new RegExp(arg.pattern, "u")).test(text)) return false;
  }
  return true;
}

/** The verdict on one call: the first matching rule's, or allow when none matches. */
export function evaluateGuard(config: GuardConfig | undefined, call: GuardedCall): GuardVerdict {
  for (const [i, rule] of (config?.rules ?? []).entries()) {
    if (!matchesRule(rule, call)) continue;
    return rule.verdict === "deny" ? { verdict: "deny", rule: i, reason: rule.reason } : { verdict: "allow", rule: i };
  }
  return { verdict: "allow", rule: null };
}
