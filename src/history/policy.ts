/**
 * When and how far history is compacted. Compaction starts when what the model
 * would read passes `trigger` of the usable window (the model's window minus
 * what is reserved for its answer) and shrinks it to `target`, so it does not
 * run again on the next turn. The defaults are what the field settled on.
 */
import { z } from "zod";

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
    summaryTokens: z.number().int().min(64).max(32_000).default(2_000),
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

export const DEFAULT_COMPACTION_POLICY: CompactionPolicy = CompactionPolicy.parse({});

/** The policy with the window a request's model has, where it names one; checked as a whole again. */
export function withModelWindow(policy: CompactionPolicy, window: { contextWindow?: number | undefined; outputReserve?: number | undefined }) {
  return CompactionPolicy.safeParse({
    ...policy,
    ...(window.contextWindow === undefined ? {} : { contextWindow: window.contextWindow }),
    ...(window.outputReserve === undefined ? {} : { outputReserve: window.outputReserve }),
  });
}

/** The policy's thresholds in tokens, for a known window. */
export interface CompactionLimits {
  /** What the model may read: the window minus the output reserve. */
  usable: number;
  trigger: number;
  target: number;
  /** The protected tail never takes more than half the target, so there is always a middle to summarise. */
  tailTokens: number;
  /** Nor the summary more than a quarter of it, so a summary leaves room for the conversation it summarises. */
  summaryTokens: number;
}

export function compactionLimits(policy: CompactionPolicy): CompactionLimits | null {
  if (policy.contextWindow === undefined) return null;
  const usable = policy.contextWindow - policy.outputReserve;
  const target = Math.floor(usable * policy.target);
  return {
    usable,
    trigger: Math.floor(usable * policy.trigger),
    target,
    tailTokens: Math.min(policy.tailTokens, Math.floor(target / 2)),
    summaryTokens: Math.max(64, Math.min(policy.summaryTokens, Math.floor(target / 4))),
  };
}
