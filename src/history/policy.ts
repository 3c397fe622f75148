/**
 * Applying the compaction policy (its schema is `src/protocol/policies.ts`): when and how far history is
 * compacted. Compaction starts when what the model would read passes `trigger` of the usable window (the model's window minus
 * what is reserved for its answer) and shrinks it to `target`, so it does not
 * run again on the next turn. The defaults are what the field settled on.
 */
import { CompactionPolicy, type CompactionLimits } from "../protocol/policies";

export const DEFAULT_COMPACTION_POLICY: CompactionPolicy = CompactionPolicy.parse({});

/** The policy with the window a request's model has, where it names one; checked as a whole again. */
export function withModelWindow(policy: CompactionPolicy, window: { contextWindow?: number | undefined; outputReserve?: number | undefined }) {
  return CompactionPolicy.safeParse({
    ...policy,
    ...(window.contextWindow === undefined ? {} : { contextWindow: window.contextWindow }),
    ...(window.outputReserve === undefined ? {} : { outputReserve: window.outputReserve }),
  });
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
    summaryTokens: Math.max(64, Math.min(policy.summaryTokens, Math.floor(target / 3))),
  };
}
