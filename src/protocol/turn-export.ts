/**
 * A turn's evidence in the draft Agent Context standard's vocabulary (GET /v1/conversations/{id}/turns/{turnId}/export,
 * docs/telemetry.md): src/telemetry/agent-context.ts builds it.
 */
import * as z from "zod";
import { ContextEnvelope } from "./evidence";
import { UsageReport } from "./frontend";
import { ChatMessage } from "./messages";

const Ref = z.object({ item_ref: z.string(), reason: z.string() });

export const TurnExport = z.object({
  schema_version: z.literal("agent-context/draft"),
  context_envelope: z.object({
    context_id: z.string(),
    scope: z.literal("turn"),
    lifecycle: z.literal("injected"),
    created_at: z.string(),
    producer: z.literal("context-runtime"),
    runtime_refs: z.object({ conversation_id: z.string(), turn_id: z.string(), agent_id: z.string() }),
  }),
  context_surface: z.object({
    surface_id: z.string(),
    scope: z.literal("turn"),
    available_item_refs: z.array(z.object({ item_id: z.string(), context_kind: z.string(), source_refs: z.array(z.object({ uri: z.string(), item_id: z.string().optional(), digest: z.string().optional() })) })),
  }),
  context_selection: z.object({ selected_item_refs: z.array(Ref), omitted_item_refs: z.array(Ref), removed_item_refs: z.array(Ref) }),
  context_budget: z.object({
    target: z.literal("model"),
    max_tokens: z.number().nullable(),
    actual_tokens: z.number(),
    truncation_records: z.array(z.object({ item_ref: z.string(), kind: z.string(), priority: z.number(), tokens: z.number() })),
  }),
  context_assembly: z.object({
    target: z.literal("model"),
    ordered_blocks: z.array(z.object({ context_kind: z.string(), item_ref: z.string().optional(), token_estimate: z.number(), injection_point: z.string() })),
  }),
  context_injection: z.array(z.object({ item_ref: z.string(), injection_point: z.literal("user_message_appendix"), target: z.literal("model"), marker: z.string() })),
  context_compaction: z
    .object({ compaction_id: z.string(), trigger: z.string(), method: z.string(), coverage: z.unknown().nullable(), loss_notes: z.array(z.string()), reinjected_item_refs: z.array(z.string()) })
    .nullable(),
  missing_context: z.array(z.object({ missing_id: z.string(), severity: z.literal("low"), reason: z.string(), status: z.literal("open") })),
  /** What the model read, exactly: `sha256` is of `JSON.stringify({ messages, tools })` (tools absent when none). */
  model_input: z.object({ format: z.literal("openai.chat"), messages: z.array(ChatMessage), tools: z.array(z.unknown()).optional(), sha256: z.string() }),
  /** The upstream's reported usage for the turn (the gateway's calls, a frontend's report). */
  usage: z.array(UsageReport),
  evidence: ContextEnvelope,
});
export type TurnExport = z.infer<typeof TurnExport>;
