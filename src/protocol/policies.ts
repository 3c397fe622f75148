/**
 * The policies a caller writes on the wire: how a tool's result is trimmed (an agent's `resultPolicies`) and
 * when and how far a conversation's history is compacted (PUT …/compaction-policy). Applying them is
 * `src/protect/trim.ts` and `src/history/policy.ts`.
 */
import * as z from "zod";
import { parseJsonPointer } from "./json-pointer";

export const TrimStrategy = z.enum(["head", "head_tail", "fields", "summary"]);
export type TrimStrategy = z.infer<typeof TrimStrategy>;

/** A field is a top-level key (`answer`) or a JSON Pointer (`/data/items/0/title`). */
const Field = z
  .string()
  .min(1)
  .max(1024)
  .refine((field) => !field.startsWith("/") || parseJsonPointer(field) !== null, "a field is a top-level key or a JSON Pointer with ~0 and ~1 escapes only");

/**
 * How a tool's result is cut down to size before the model reads it. Every result gets the default (head and
 * tail, 800 tokens); an agent can name another policy per tool.
 */
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

/** What trimming did, for the evidence record. `keptTokens` counts the result as stored, markers included. */
export const TrimReport = z.object({
  strategy: TrimStrategy,
  originalTokens: z.number().int().nonnegative(),
  keptTokens: z.number().int().nonnegative(),
});
export type TrimReport = z.infer<typeof TrimReport>;

/**
 * When and how far history is compacted. Compaction starts when what the model
 * would read passes `trigger` of the usable window (the model's window minus
 * what is reserved for its answer) and shrinks it to `target`, so it does not
 * run again on the next turn. The defaults are what the field settled on.
 */
export const CompactionPolicy = z
  .object({
    /** The model's context window, in tokens; without one, nothing is compacted (a turn may still pass it). */
    contextWindow: z.number().int().min(1_024).max(10_000_000).optional(),
    /** Tokens kept free for the model's answer. */
    outputReserve: z.number().int().min(0).max(1_000_000).default(4_096),
    trigger: z.number().min(0.5).max(1).default(0.85),
    target: z.number().min(0.3).lt(1).default(0.7),
    /** The newest tool results are never cleared. */
    keepToolResults: z.number().int().min(0).max(100).default(3),
    /** The newest groups are never summarised: at least `tailGroups`, and as many as fit in `tailTokens`. */
    tailGroups: z.number().int().min(2).max(100).default(2),
    tailTokens: z.number().int().min(0).max(1_000_000).default(20_000),
    /** The summary's own size, in tokens. */
    summaryTokens: z.number().int().min(64).max(32_000).default(4_000),
    /** What a compaction keeps of the history's images: it hides the rest, in the model's view, behind a note that they are no longer visible. */
    keepImages: z.number().int().min(0).max(100).default(3),
    /** `model` needs SUMMARY_MODEL_URL and SUMMARY_MODEL_KEY; it falls back to the digest when the endpoint fails. */
    summariser: z.enum(["digest", "model"]).default("digest"),
  })
  .strict()
  .refine((p) => p.target < p.trigger, { message: "target must be below trigger", path: ["target"] })
  .refine((p) => p.contextWindow === undefined || p.outputReserve < p.contextWindow / 2, {
    message: "outputReserve must be under half the contextWindow",
    path: ["outputReserve"],
  });
export type CompactionPolicy = z.output<typeof CompactionPolicy>;
export type CompactionPolicyInput = z.input<typeof CompactionPolicy>;

/** The policy's thresholds in tokens, for a known window. */
export const CompactionLimits = z.object({
  /** What the model may read: the window minus the output reserve. */
  usable: z.number(),
  trigger: z.number(),
  target: z.number(),
  /** The protected tail never takes more than half the target, so there is always a middle to summarise. */
  tailTokens: z.number(),
  /**
   * Nor the summary more than a third of it: the rest is the messages after it (the protected tail verbatim, older
   * tool results cleared first), and the third holds the user's earlier words (docs/history.md, "The budget").
   */
  summaryTokens: z.number(),
});
export type CompactionLimits = z.infer<typeof CompactionLimits>;
