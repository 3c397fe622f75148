/**
 * A turn's evidence in the draft Agent Context standard's vocabulary (limecloud/agentcontext v0.1.1; docs/telemetry.md,
 * "Export"): its envelope, surface, selection, budget, assembly, injection, compaction and missing context as that
 * draft names them, with the exact model input the turn produced and its SHA-256, so a replay can be checked byte for
 * byte. The runtime's own record rides along whole (`evidence`): the mapping adds names, it drops nothing.
 */
import { sha256Hex } from "../core/version";
import type { PastTurn } from "../protocol/frontend";
import type { TurnExport } from "../protocol/turn-export";

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
    model_input: { format: "openai.chat", messages: turn.messages, ...(turn.tools ? { tools: turn.tools } : {}), sha256: await sha256Hex(modelInputText(turn)) },
    usage: turn.reportedUsage,
    evidence: e,
  };
}
