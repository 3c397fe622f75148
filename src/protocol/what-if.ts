/**
 * The what-if of a past turn (POST /v1/conversations/{id}/turns/{turnId}/what-if, docs/inspector.md): what may change,
 * and what the turn would read then. Nothing is stored; src/conversation/inspect.ts computes it.
 */
import * as z from "zod";
import { Truncation } from "./evidence";
import { CompactionLimits, CompactionPolicy } from "./policies";

/** POST …/turns/{turnId}/what-if: what to change; what is not named stays as the conversation has it. */
export const WhatIfBody = z
  .object({
    /** The model input's budget in tokens. */
    maxTokens: z.number().int().min(1).max(10_000_000).optional(),
    /** The model's window: the policy's `contextWindow`. */
    contextWindow: z.number().int().min(1_024).max(10_000_000).optional(),
    /** Fields of the compaction policy (its schema), over the conversation's. */
    compaction: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type WhatIfBody = z.infer<typeof WhatIfBody>;

/** One layer of a model input: what it is and its tokens (history layers: how many messages). */
export const WhatIfLayer = z.object({
  kind: z.enum(["system_prompt", "tools", "summary", "session_history", "tool_results", "user_message", "persona", "memory", "task_state", "contexts", "notes"]),
  tokens: z.number(),
  messages: z.number().optional(),
});
export type WhatIfLayer = z.infer<typeof WhatIfLayer>;

/** The answer of POST …/what-if. */
export const WhatIfAnswer = z.object({
  turnId: z.string(),
  /** The policy the what-if ran under (the conversation's, with the body's changes), and its thresholds. */
  policy: CompactionPolicy,
  limits: CompactionLimits.nullable(),
  /** The bound the fit used: the budget, the window's usable part, whichever is smaller; null when neither. */
  maxTokens: z.number().nullable(),
  before: z.object({ tokens: z.number(), layers: z.array(WhatIfLayer) }),
  after: z.object({ tokens: z.number(), layers: z.array(WhatIfLayer) }),
  /** What compaction would do to this view under the policy (null when it would do nothing or has no window). */
  compaction: z
    .object({ before: z.number(), after: z.number(), clearedResults: z.number(), summarisedGroups: z.number(), summarisedMessages: z.number(), summaryEstimate: z.number(), reachesTarget: z.boolean() })
    .nullable(),
  /** What the budget gave up, in the order it gave it up. */
  truncations: z.array(Truncation),
  /** False when even the system prompt, the tools and the user's words do not fit: `after` is then what is left. */
  fits: z.boolean(),
  /** after − before, in tokens. */
  difference: z.number(),
});
export type WhatIfAnswer = z.infer<typeof WhatIfAnswer>;
