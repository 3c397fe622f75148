import type { AppendableMessage } from "../protocol/messages";
import { neutralize } from "../core/neutralize";
import { admitJsonText, admitText, type SecretHit, auditRecords, type AuditRecord, protectToolResult, resolveTrimPolicy } from "../protect";
import { fail, ok, type Result } from "../core/problem";
import type { TrimPolicy } from "../protocol/policies";
import type { ConversationDb } from "./store";

export interface ToolResultReport {
  toolCallId: string;
  tool: string;
  redactions: AuditRecord[];
  trimmed: ReturnType<typeof protectToolResult>["trimmed"];
}

export interface AdmittedMessages {
  /** What is stored: results routed to their calls, in their calls' order, past the trust boundary and trimmed. */
  messages: AppendableMessage[];
  reports: ToolResultReport[];
  /** Secrets redacted from the model's own messages (text and tool-call arguments; `path` names where). */
  assistantRedactions: AuditRecord[];
}

/**
 * The envelope every tool result passes before it is stored: it must answer
 * a call that is open (in the conversation or earlier in the batch), results
 * of parallel calls are put in their calls' order, and each passes the trust
 * boundary (neutralised, redacted), then is trimmed, so the raw output never
 * lands. The model's own messages pass the boundary too, arguments included.
 * `open` maps open call ids to tool names, in the order the calls were made. A
 * call still waiting for the user's approval takes no result until the user
 * decides. Results in `runtimeWritten` (denials) were written by the runtime
 * around already neutralised text: they are only redacted and trimmed.
 */
export async function admitMessages(
  open: ReadonlyMap<string, string>,
  incoming: readonly AppendableMessage[],
  options: {
    policies: Record<string, TrimPolicy>;
    auditKey: CryptoKey;
    nonce: string | null;
    awaitingApproval?: ReadonlySet<string>;
    runtimeWritten?: ReadonlySet<string>;
  },
): Promise<Result<AdmittedMessages>> {
  const calls = new Map(open);
  for (const [i, m] of incoming.entries()) {
    if (m.role === "assistant") {
      // An assistant message after unanswered calls would stand between them and their results.
      if (calls.size > 0) {
        return fail("invalid-request", `messages.${i}: tool calls ${[...calls.keys()].map((id) => `'${id}'`).join(", ")} are still open; send their results first`, [
          { path: `messages.${i}`, message: "calls are still waiting for results" },
        ]);
      }
      for (const [k, call] of (m.tool_calls ?? []).entries()) {
        if (calls.has(call.id)) {
          return fail("invalid-request", `messages.${i}.tool_calls.${k}: the call id '${call.id}' is used twice`, [{ path: `messages.${i}.tool_calls.${k}.id`, message: "duplicate call id" }]);
        }
        calls.set(call.id, call.function.name);
      }
    } else if (options.awaitingApproval?.has(m.tool_call_id)) {
      return fail("conflict", `messages.${i}: tool call '${m.tool_call_id}' is waiting for the user's approval; record their decision before its result`, [
        { path: `messages.${i}.tool_call_id`, message: "waiting for approval" },
      ]);
    } else if (!calls.delete(m.tool_call_id)) {
      return fail("invalid-request", `messages.${i}: no open tool call '${m.tool_call_id}' to answer`, [
        { path: `messages.${i}.tool_call_id`, message: "unknown or already answered" },
      ]);
    }
  }

  const order = new Map([...open.keys(), ...incoming.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : []))].map((id, i) => [id, i]));
  const names = new Map([...open, ...incoming.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []).map((c) => [c.id, c.function.name] as const) : []))]);
  const messages: AppendableMessage[] = [];
  const reports: ToolResultReport[] = [];
  const assistantHits: SecretHit[] = [];
  for (const run of inCallOrder(incoming, order)) {
    if (run.role !== "tool") {
      messages.push(admitAssistant(run, options.nonce, assistantHits, messages.length));
      continue;
    }
    const tool = names.get(run.tool_call_id) ?? "";
    const content = options.runtimeWritten?.has(run.tool_call_id) ? run.content : neutralize(run.content, options.nonce);
    const protectedResult = protectToolResult(content, { policy: resolveTrimPolicy(tool, options.policies) });
    messages.push({ role: "tool", tool_call_id: run.tool_call_id, content: protectedResult.content });
    reports.push({ toolCallId: run.tool_call_id, tool, redactions: await auditRecords(protectedResult.hits, options.auditKey), trimmed: protectedResult.trimmed });
  }
  return ok({ messages, reports, assistantRedactions: await auditRecords(assistantHits, options.auditKey) });
}

/** The model's reply past the boundary: its text, and each call's arguments (kept valid JSON). */
function admitAssistant(message: Extract<AppendableMessage, { role: "assistant" }>, nonce: string | null, hits: SecretHit[], index: number): AppendableMessage {
  const at = (path: string) => (hit: SecretHit) => hits.push({ ...hit, path: `/${index}/${path}${hit.path ?? ""}` });
  const content = message.content === null || message.content === undefined ? message.content : admitText(message.content, { nonce });
  if (content && typeof content === "object") content.hits.forEach(at("content"));
  const calls = message.tool_calls?.map((call, k) => {
    const args = admitJsonText(call.function.arguments, { nonce });
    args.hits.forEach(at(`tool_calls/${k}/function/arguments`));
    return { ...call, function: { ...call.function, arguments: args.text } };
  });
  return { ...message, ...(content && typeof content === "object" ? { content: content.text } : {}), ...(calls ? { tool_calls: calls } : {}) };
}

/** Consecutive tool results sorted by the order of their calls; everything else stays where it is. */
export function inCallOrder(messages: readonly AppendableMessage[], order: ReadonlyMap<string, number>): AppendableMessage[] {
  const out: AppendableMessage[] = [];
  let run: Extract<AppendableMessage, { role: "tool" }>[] = [];
  const flush = () => {
    out.push(...run.sort((a, b) => (order.get(a.tool_call_id) ?? 0) - (order.get(b.tool_call_id) ?? 0)));
    run = [];
  };
  for (const m of messages) {
    if (m.role === "tool") run.push(m);
    else {
      flush();
      out.push(m);
    }
  }
  flush();
  return out;
}

/** Appends admitted messages and records what protecting each tool result did (rules and keyed hashes, never values). */
export function storeAdmitted(store: ConversationDb, turnId: string | null, admitted: AdmittedMessages, at: string, seqs: number[] = []): number {
  for (const m of admitted.messages) seqs.push(store.messages.append(turnId, m, at));
  for (const r of admitted.reports) {
    if (r.redactions.length) store.events.add(turnId, "tool.result.redacted", r.toolCallId, { tool: r.tool, redactions: r.redactions }, at);
    if (r.trimmed) store.events.add(turnId, "tool.result.trimmed", r.toolCallId, { tool: r.tool, ...r.trimmed }, at);
  }
  if (admitted.assistantRedactions.length) store.events.add(turnId, "message.redacted", null, { role: "assistant", redactions: admitted.assistantRedactions }, at);
  const lastSeq = seqs.at(-1) ?? 0;
  if (admitted.messages.length) store.events.add(turnId, "messages.appended", null, { count: admitted.messages.length, lastSeq }, at);
  return lastSeq;
}
