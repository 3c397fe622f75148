/**
 * The decoders of the conversation's JSON columns: what each holds, as every migration since 0001 has left it. The
 * protocol's schemas check what comes in at the wire, with today's limits; a stored value passed the limits of its
 * day (some were tightened since: a compaction policy's trigger and target, a trim policy's maxTokens), so these
 * check its shape and keep its values, and fill what an older row leaves out with the protocol's defaults.
 */
import * as z from "zod";
import { CompactionPolicy, TrimPolicy, TrimStrategy } from "../protocol/policies";
import { UsageReport } from "../protocol/frontend";
import type { ImagePart, ToolCall } from "../protocol/messages";

const TRIM_DEFAULTS = TrimPolicy.parse({});
const COMPACTION_DEFAULTS = CompactionPolicy.parse({});

/** conversation.agent_contexts: the agent's attached contexts ('[]' by default, 0001). */
export const AgentContexts = z.array(z.string());

/** conversation.result_policies: the agent's trim policy per tool ('{}' by default, 0002). */
export const ResultPolicies = z.record(
  z.string(),
  z.object({
    strategy: TrimStrategy.default(TRIM_DEFAULTS.strategy),
    maxTokens: z.number().default(TRIM_DEFAULTS.maxTokens),
    fields: z.array(z.string()).optional(),
  }) satisfies z.ZodType<TrimPolicy>,
);

/** conversation.compaction_policy ('{}' by default, 0004; keepImages since 0005): what a row leaves out is the default. */
export const StoredCompactionPolicy = z.object({
  contextWindow: z.number().optional(),
  outputReserve: z.number().default(COMPACTION_DEFAULTS.outputReserve),
  trigger: z.number().default(COMPACTION_DEFAULTS.trigger),
  target: z.number().default(COMPACTION_DEFAULTS.target),
  keepToolResults: z.number().default(COMPACTION_DEFAULTS.keepToolResults),
  tailGroups: z.number().default(COMPACTION_DEFAULTS.tailGroups),
  tailTokens: z.number().default(COMPACTION_DEFAULTS.tailTokens),
  summaryTokens: z.number().default(COMPACTION_DEFAULTS.summaryTokens),
  keepImages: z.number().default(COMPACTION_DEFAULTS.keepImages),
  summariser: CompactionPolicy.shape.summariser,
}) satisfies z.ZodType<CompactionPolicy>;

/**
 * messages.tool_calls: an assistant message's calls. Loose: what the model read is read back whole, every key as
 * stored.
 */
export const ToolCalls = z.array(
  z.looseObject({ id: z.string(), type: z.literal("function"), function: z.looseObject({ name: z.string(), arguments: z.string() }) }) satisfies z.ZodType<ToolCall>,
);

/** messages.images (0005): a user message's images, its text aside. */
export const Images = z.array(
  z.looseObject({
    type: z.literal("image_url"),
    image_url: z.looseObject({ url: z.string(), detail: z.enum(["low", "high", "auto"]).optional() }),
  }) satisfies z.ZodType<ImagePart>,
);

/** turns.history_view ('[]' by default, 0002): the [from, to] seq ranges the turn's model read. */
export const HistoryView = z.array(z.tuple([z.number(), z.number()]));

/** compactions.loss ('[]' by default, 0004): what a summary says it did not keep. */
export const SummaryLoss = z.array(z.string());

/** compactions.summary_state: the summariser's own state, whatever it is (NULL reads as null, as JSON.parse read it). */
export const SummaryState = z.unknown();

/** delegations.child_turn_ids (0014). */
export const ChildTurnIds = z.array(z.string());

/** events.data: each event type's own record. */
export const EventData = z.record(z.string(), z.unknown());

/** A `model.usage` event's data (a frontend's report, or the gateway's with `source` and `step`), every key kept. */
export const UsageData = UsageReport.omit({ at: true }).loose();
