import type { ContextEnvelope, MissingContext, SurfaceItem, TurnUsage } from "./evidence";
import { diffLedger, type LedgerChange, type LedgerEntry, type Observation } from "./ledger";
import { LIMITS } from "./limits";
import type { ChatMessage } from "./messages";
import { neutralize } from "./neutralize";
import { renderChange, renderReminder, withReminder } from "./reminder";
import { countTokens, MESSAGE_OVERHEAD_TOKENS } from "./tokens";

export interface TurnInput {
  turnId: string;
  conversationId: string;
  now: Date;
  systemPrompt: string;
  history: readonly ChatMessage[];
  userText: string;
  ledger: readonly LedgerEntry[];
  /** Attached contexts first, then session resources, in the order they should appear. */
  observations: readonly (Observation & { ref?: string; itemId?: string })[];
  appendixLimitChars?: number;
}

export interface TurnAssembly {
  userMessage: Extract<ChatMessage, { role: "user" }>;
  messages: ChatMessage[];
  ledger: { upserts: LedgerEntry[]; deletes: { kind: LedgerEntry["kind"]; key: string }[] };
  envelope: ContextEnvelope;
  usage: TurnUsage;
  missing: MissingContext[];
}

/**
 * Assemble one turn: diff what was observed against the ledger, render the
 * changes into the reminder appendix of the new user message, and say what the
 * ledger becomes. Pure: storage and provider calls are the caller's.
 */
export function assembleTurn(input: TurnInput): TurnAssembly {
  const limit = input.appendixLimitChars ?? LIMITS.appendixChars;
  const diff = diffLedger(input.ledger, input.observations);

  const parts: string[] = [];
  const upserts: LedgerEntry[] = [];
  const deletes: TurnAssembly["ledger"]["deletes"] = [];
  const envelope = emptyEnvelope(input, limit);
  const blockTokens: ContextEnvelope["assembly"]["blocks"] = [];
  let used = 0;

  for (const change of diff.changes) {
    const rendered = renderChange(change);
    if (change.change !== "removed" && used + rendered.length > limit) {
      // Left for a later turn: the ledger is untouched, so it is injected once it fits.
      envelope.selection.omitted.push({ id: change.key, reason: "budget" });
      continue;
    }
    used += rendered.length;
    parts.push(rendered);
    envelope.injection.push({ id: change.key, kind: change.kind, target: "user_message_appendix", marker: change.change });
    if (change.change === "removed") {
      deletes.push({ kind: change.kind, key: change.key });
      envelope.selection.removed.push({ id: change.key, reason: change.reason });
    } else {
      upserts.push(ledgerEntry(change));
      envelope.selection.selected.push({ id: change.key, reason: change.change });
      blockTokens.push({ kind: change.kind, id: change.key, tokens: countTokens(rendered), target: "user_message_appendix" });
    }
  }
  for (const key of diff.unchanged) envelope.selection.omitted.push({ id: key, reason: "unchanged" });
  for (const key of diff.empty) envelope.selection.omitted.push({ id: key, reason: "empty" });
  const missing = diff.missing.map((m): MissingContext => ({ id: m.key, reason: m.reason, detail: m.detail, severity: "warning" }));
  for (const m of missing) envelope.selection.omitted.push({ id: m.id, reason: "missing" });
  envelope.missing = missing;
  envelope.budget.appendixChars.used = used;

  const reminder = renderReminder(parts);
  const userMessage = { role: "user" as const, content: withReminder(neutralize(input.userText), reminder) };
  const system = { role: "system" as const, content: input.systemPrompt };
  const messages: ChatMessage[] = [system, ...input.history, userMessage];

  const usage = measure(system, input.history, input.userText, reminder);
  envelope.assembly.blocks = [
    { kind: "system_prompt", tokens: usage.system, target: "system_prompt" },
    { kind: "session_history", tokens: usage.history, target: "message_history" },
    { kind: "user_message", tokens: usage.message, target: "user_message" },
    ...blockTokens,
  ];
  return { userMessage, messages, ledger: { upserts, deletes }, envelope, usage, missing };
}

function ledgerEntry(change: Extract<LedgerChange, { change: "first" | "updated" }>): LedgerEntry {
  return { key: change.key, kind: change.kind, title: change.title, version: change.version };
}

function emptyEnvelope(input: TurnInput, limit: number): ContextEnvelope {
  return {
    standard: "agent-context/draft",
    turnId: input.turnId,
    conversationId: input.conversationId,
    createdAt: input.now.toISOString(),
    surface: { items: input.observations.map(surfaceItem) },
    selection: { selected: [], omitted: [], removed: [] },
    budget: { appendixChars: { limit, used: 0 } },
    assembly: { blocks: [] },
    injection: [],
    missing: [],
  };
}

function surfaceItem(obs: TurnInput["observations"][number]): SurfaceItem {
  const source: SurfaceItem["source"] = { ref: obs.ref ?? obs.key };
  if (obs.itemId !== undefined) source.itemId = obs.itemId;
  if (obs.status === "present") source.digest = obs.version;
  return { id: obs.key, kind: obs.kind === "context" ? "runtime_state" : "external_resource", source };
}

export function messageTokens(message: ChatMessage): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + countTokens(message.content ?? "");
  if (message.role === "assistant" && message.tool_calls) {
    for (const call of message.tool_calls) tokens += countTokens(call.function.name) + countTokens(call.function.arguments);
  }
  return tokens;
}

function measure(system: ChatMessage, history: readonly ChatMessage[], userText: string, reminder: string): TurnUsage {
  const usage = {
    system: messageTokens(system),
    history: history.reduce((sum, m) => sum + messageTokens(m), 0),
    message: MESSAGE_OVERHEAD_TOKENS + countTokens(userText),
    contexts: countTokens(reminder),
  };
  return { ...usage, total: usage.system + usage.history + usage.message + usage.contexts };
}
