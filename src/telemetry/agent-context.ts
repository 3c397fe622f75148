/**
 * A turn's evidence in the draft Agent Context standard's vocabulary (limecloud/agentcontext v0.1.1; docs/telemetry.md,
 * "Export"): its envelope, surface, selection, budget, assembly, injection, compaction and missing context as that
 * draft names them, with the exact model input the turn produced and its SHA-256, so a replay can be checked byte for
 * byte. The runtime's own record rides along whole (`evidence`): the mapping adds names, it drops nothing.
 */
import * as z from "zod";
import { ContextEnvelope } from "../protocol/evidence";
import { PastTurn, UsageReport } from "../protocol/frontend";
import { ChatMessage } from "../protocol/messages";

/** The draft's `context_kind` for each block the runtime assembles. */
const CONTEXT_KIND = {
  system_prompt: "system_prompt",
  tools: "runtime_state",
  session_history: "session_history",
  user_message: "user_message",
  context: "runtime_state",
  resource: "external_resource",
  memory: "durable_memory",
  task_state: "working_memory",
} as const;

/** The draft's `injection_point` for each place a block lands. */
const INJECTION_POINT = {
  system_prompt: "system_prompt",
  tool_definitions: "runtime_metadata",
  message_history: "message_history",
  user_message: "message_history",
  user_message_appendix: "user_message_appendix",
} as const;

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

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The exact model input as one string: what `model_input.sha256` hashes. */
export function modelInputText(turn: Pick<PastTurn, "messages" | "tools">): string {
  return JSON.stringify(turn.tools ? { messages: turn.messages, tools: turn.tools } : { messages: turn.messages });
}

export async function turnExport(turn: PastTurn): Promise<TurnExport> {
  const e = turn.envelope;
  const compaction = e.compaction;
  return {
    schema_version: "agent-context/draft",
    context_envelope: {
      context_id: turn.turnId,
      scope: "turn",
      lifecycle: "injected",
      created_at: turn.createdAt,
      producer: "context-runtime",
      runtime_refs: { conversation_id: turn.conversationId, turn_id: turn.turnId, agent_id: turn.agent.id },
    },
    context_surface: {
      surface_id: `${turn.turnId}/surface`,
      scope: "turn",
      available_item_refs: e.surface.items.map((i) => ({
        item_id: i.id,
        context_kind: i.kind,
        source_refs: [{ uri: i.source.ref, ...(i.source.itemId === undefined ? {} : { item_id: i.source.itemId }), ...(i.source.digest === undefined ? {} : { digest: i.source.digest }) }],
      })),
    },
    context_selection: {
      selected_item_refs: e.selection.selected.map((s) => ({ item_ref: s.id, reason: s.reason })),
      omitted_item_refs: e.selection.omitted.map((s) => ({ item_ref: s.id, reason: s.reason })),
      removed_item_refs: e.selection.removed.map((s) => ({ item_ref: s.id, reason: s.reason })),
    },
    context_budget: {
      target: "model",
      max_tokens: e.budget.maxTokens,
      actual_tokens: e.budget.usedTokens,
      truncation_records: e.budget.truncations.map((t) => ({ item_ref: t.id, kind: t.kind, priority: t.priority, tokens: t.tokens })),
    },
    context_assembly: {
      target: "model",
      ordered_blocks: e.assembly.blocks.map((b) => ({ context_kind: CONTEXT_KIND[b.kind], ...(b.id === undefined ? {} : { item_ref: b.id }), token_estimate: b.tokens, injection_point: INJECTION_POINT[b.target] })),
    },
    context_injection: e.injection.map((i) => ({ item_ref: i.id, injection_point: i.target, target: "model", marker: i.marker })),
    context_compaction: compaction
      ? {
          compaction_id: String(compaction.id),
          trigger: compaction.reason,
          method: compaction.summary ? (compaction.summary.summariser === "digest" ? "structured_digest" : "abstractive_summary") : "provider_context_editing",
          coverage: compaction.summary?.coverage ?? null,
          loss_notes: [...(compaction.summary?.loss ?? [])],
          reinjected_item_refs: compaction.reinjected,
        }
      : null,
    missing_context: e.missing.map((m) => ({ missing_id: m.id, severity: "low", reason: m.reason, status: "open" })),
    model_input: { format: "openai.chat", messages: turn.messages, ...(turn.tools ? { tools: turn.tools } : {}), sha256: await sha256(modelInputText(turn)) },
    usage: turn.reportedUsage,
    evidence: e,
  };
}
