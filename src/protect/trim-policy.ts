/**
 * How a tool's result is cut down to size before the model reads it. Every
 * result gets the default (head and tail, 800 tokens); an agent can name
 * another policy per tool.
 */
import { z } from "zod";
import { parseJsonPointer } from "../core/json-pointer";

export const TrimStrategy = z.enum(["head", "head_tail", "fields", "summary"]);
export type TrimStrategy = z.infer<typeof TrimStrategy>;

/** A field is a top-level key (`answer`) or a JSON Pointer (`/data/items/0/title`). */
const Field = z
  .string()
  .min(1)
  .max(1024)
  .refine((field) => !field.startsWith("/") || parseJsonPointer(field) !== null, "a field is a top-level key or a JSON Pointer with ~0 and ~1 escapes only");

export const TrimPolicy = z
  .object({
    strategy: TrimStrategy.default("head_tail"),
    /**
     * The result as the model reads it never counts more tokens than this. At most
     * 100,000, so a stored result stays far below SQLite's 2 MB row limit whatever its script.
     */
    maxTokens: z.number().int().min(1).max(100_000).default(800),
    /** For `fields`: what to keep of a JSON result. */
    fields: z.array(Field).min(1).max(256).optional(),
  })
  .refine((policy) => policy.strategy !== "fields" || policy.fields !== undefined, { message: "the fields strategy needs fields", path: ["fields"] });
export type TrimPolicy = z.output<typeof TrimPolicy>;
/** A policy as an agent writes it: defaults fill what it leaves out. */
export type TrimPolicyInput = z.input<typeof TrimPolicy>;

export const DEFAULT_TRIM_POLICY: TrimPolicy = TrimPolicy.parse({});

/** What trimming did, for the evidence record. `keptTokens` counts the result as stored, markers included. */
export const TrimReport = z.object({
  strategy: TrimStrategy,
  originalTokens: z.number().int().nonnegative(),
  keptTokens: z.number().int().nonnegative(),
});
export type TrimReport = z.infer<typeof TrimReport>;

/** The policy for one tool: its override when there is one (defaults filling the gaps), else the default. */
export function resolveTrimPolicy(toolName: string, overrides?: Readonly<Record<string, TrimPolicyInput>>): TrimPolicy {
  if (overrides === undefined || !Object.hasOwn(overrides, toolName)) return DEFAULT_TRIM_POLICY;
  return TrimPolicy.parse(overrides[toolName]);
}
