/**
 * The history's wire shapes: a conversation's compaction status (GET …/compaction) and the messages for a
 * model request (GET …/context). What keeps the history is `src/history/contract.ts`.
 */
import * as z from "zod";
import { CompactionEvidence, SummaryTrust } from "./evidence";
import { ChatMessage } from "./messages";
import { CompactionLimits, CompactionPolicy } from "./policies";

export const CompactionStatus = z.object({
  policy: CompactionPolicy,
  /** Null until the policy (or a turn) names the model's window. */
  limits: CompactionLimits.nullable(),
  /** What the model would read now, before any new message: system, summary and the stored messages after it. */
  tokens: z.number(),
  messageCount: z.number(),
  shouldCompact: z.boolean(),
  /**
   * The latest compaction, or null; `coveredThroughSeq` is the last message out of the model's view once it ran
   * (summarised, or hidden by a clear, by it or an earlier one), `summarised` whether it wrote a summary itself
   * (a compaction may only clear tool results).
   */
  latest: z
    .object({ id: z.number(), reason: CompactionEvidence.shape.reason, coveredThroughSeq: z.number().nullable(), summarised: z.boolean(), at: z.string() })
    .nullable(),
  /** The summary the model reads now, or null (none yet, or a clear hid it): the messages it stands for and who wrote it. */
  summary: z
    .object({ fromSeq: z.number(), throughSeq: z.number(), summariser: z.string(), trust: SummaryTrust, compactionId: z.number() })
    .nullable(),
});
export type CompactionStatus = z.infer<typeof CompactionStatus>;

export const RequestMessages = z.object({
  messages: z.array(ChatMessage),
  tokens: z.number(),
  /** History `maxTokens` could not hold, given up whole groups at a time, oldest first: with `tokens`, the whole. */
  truncated: z.object({ messages: z.number(), tokens: z.number() }),
});
export type RequestMessages = z.infer<typeof RequestMessages>;
