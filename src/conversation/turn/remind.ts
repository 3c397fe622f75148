import { ok, type Result } from "../../core/problem";
import { digestOf, renderStapled, stapledNotes, type ResolvedMention, type StapledKind } from "../../reminders/stapled";
import type { SecretHit } from "../../protect";
import { checkAttachable } from "./pull";
import { textOf } from "../../protocol/messages";
import { withAppendix, withoutAppendix } from "../../core/reminder";
import { doneNote, interruptedNote, loopNote, renderCorrective, timeline, type CorrectiveKind, type TimelineMessage } from "../../reminders/correctives";
import { Correctives } from "../../protocol/methods";
import type { Admitted } from "./admit";
import type { Identified } from "./identify";
import type { Loaded } from "./load";
import type { Offered } from "./offer-tools";
import type { Pulled } from "./pull";
import type { Staged } from "./stage";

export interface Reminder {
  /** `hook`: a block an `assembled` hook added (docs/hooks.md). */
  kind: "persona" | CorrectiveKind | StapledKind | "hook";
  text: string;
  /** Why a corrective note fired (the evidence's and the event's reason). */
  reason?: string;
}

export interface Reminded {
  /**
   * Notes stapled to the user's message, first in its appendix, in this order; class 0 like the message. On a
   * continuation (no user message) the corrective notes ride on this turn's last tool result instead, in `admitted`.
   */
  reminders: Reminder[];
  /** Stapled state notes (uploads, mentions, mounts, …), last in the appendix, after the context markers, in the registry's order. */
  stapled: Reminder[];
  /** Secrets taken out of what the stapled notes show (a mentioned item's), by where they were: the evidence's. */
  stapledHits: (SecretHit & { id: string })[];
}

/** How many stored messages the corrective notes read back: the recent calls, not the whole history. */
export const CORRECTIVE_WINDOW = 200;
/** The runtime's own tools that only read: they never count as acting on a task. */
const READ_ONLY_RUNTIME = new Set(["search_tools", "search_history", "read_skill", "list_contexts", "read_context"]);

/**
 * The notes the runtime staples to the user's message: who took over the conversation, then the corrective notes the
 * agent turns on (docs/reminders.md) — a loop, tasks claimed done without action, interrupted work — in that order.
 */
export async function remind(d: Loaded & Pulled & Admitted & Identified & Offered): Promise<Result<Staged<Reminded & Partial<Admitted>>>> {
  const reminders: Reminder[] = d.personaNote ? [{ kind: "persona", text: d.personaNote }] : [];
  // A continuation that brings no result of its own has nothing a note could ride on: none is noted (nor recorded),
  // and the calls stay new until a turn that can carry it, the next that brings a result or the user's next message.
  const carried = !d.continuation || d.admitted.messages.some((m) => m.role === "tool");
  if (d.agent.correctives && carried) reminders.push(...correctives(d, Correctives.parse(d.agent.correctives)));
  if (d.continuation) return ok({ out: { reminders, stapled: [], stapledHits: [], ...onLastResult(d, reminders) }, decided: { kinds: reminders.map((r) => r.kind) } });
  const mentions = await resolveMentions(d);
  if (!mentions.ok) return mentions;
  const agent = d.agent.id;
  // A list note (mounts, don't-mention) appears when the list differs from the one last noted for this agent here.
  const lastDigest = (kind: "mounts" | "dont_mention") => {
    const reason = d.scope.db.events.lastReminderReason(kind, (r) => digestOf(r, agent) !== null);
    return reason === null ? null : digestOf(reason, agent);
  };
  const notes = stapledNotes({
    message: true,
    uploads: d.body.uploads ?? [],
    mentions: mentions.value,
    mounts: { agent, list: d.toolbox.mounts ?? [], lastDigest: lastDigest("mounts") },
    dontMention: { agent, list: d.agent.dontMention ?? [], lastDigest: lastDigest("dont_mention") },
    images: { count: d.body.images?.length ?? 0, seen: d.agent.seesImages },
    nonce: d.nonce,
  });
  const stapled = notes.map((n): Reminder => ({ kind: n.kind, reason: n.reason, text: renderStapled(n, d.nonce) }));
  return ok({ out: { reminders, stapled, stapledHits: notes.flatMap((n) => n.hits ?? []) }, decided: { kinds: [...reminders, ...stapled].map((r) => r.kind) } });
}

/** Each mentioned item, read through its provider's `get` (the hub's `item`); a provider no app registered refuses the turn, as an attachment would. */
async function resolveMentions(d: Loaded): Promise<Result<ResolvedMention[]>> {
  const resolved: ResolvedMention[] = [];
  for (const m of d.body.mentions ?? []) {
    const checked = await checkAttachable(d.scope.apps, m);
    if (!checked.ok) return checked;
    const item = await d.scope.apps.item(m.context, m.itemId);
    resolved.push(item.ok ? { ...m, item: item.value } : { ...m, error: item.problem.detail });
  }
  return ok(resolved);
}

/**
 * A continuation's corrective notes (the model goes on with its tools, as in the gateway's steps): appended to this
 * turn's last tool result and stored with it, so the next turns read the same bytes (the prefix stays stable).
 */
function onLastResult(d: Admitted, notes: readonly Reminder[]): Partial<Admitted> {
  const at = d.admitted.messages.findLastIndex((m) => m.role === "tool");
  const last = d.admitted.messages[at];
  if (notes.length === 0 || !last || last.role !== "tool") return {};
  const text = withAppendix(textOf(last), notes.map((n) => n.text));
  const messages = d.admitted.messages.map((m, i) => (i === at ? { ...last, content: text } : m));
  return { admitted: { ...d.admitted, messages } };
}

/**
 * The corrective notes that newly hold. On a user message, over the calls since the last one (minus what a
 * continuation after it noted already); on a continuation, over the calls no turn has read yet, loops and claimed-done
 * only (interrupted work needs a new message).
 */
function correctives(d: Loaded & Pulled & Admitted & Offered, settings: Correctives): Reminder[] {
  const store = d.scope.db;
  const fromSeq = Math.max(0, store.messages.lastSeq() - CORRECTIVE_WINDOW + 1);
  const lastUser = store.messages.lastUserSeq();
  // New: on a message, what came since the user's last one; on a continuation, what no turn has read yet (its own
  // results, and calls appended with POST …/messages since the last turn).
  const newAfter = d.continuation ? store.messages.lastTurnSeq() : lastUser;
  const messages: TimelineMessage[] = [
    ...store.messages.list(Number.MAX_SAFE_INTEGER, fromSeq).map(({ seq, message }) => entry(message, seq > newAfter)),
    ...d.admitted.messages.map((message) => entry(message, true)),
  ];
  const calls = timeline(messages);
  const offered = new Map(d.offer.offered.map((t) => [t.name, t]));
  const taskTool = settings.taskTool;
  const isTaskTool = (tool: string) => taskTool !== undefined && (tool === taskTool || [taskTool, `${d.agent.app}:${taskTool}`].includes(offered.get(tool)?.qualified ?? ""));
  const readOnly = (tool: string) => offered.get(tool)?.annotations?.readOnlyHint === true || (offered.get(tool)?.source === "runtime" && READ_ONLY_RUNTIME.has(tool));
  const acting = (tool: string) => !isTaskTool(tool) && !readOnly(tool);
  const knownToAct = (tool: string) => offered.get(tool)?.annotations?.readOnlyHint === false || offered.get(tool)?.annotations?.destructiveHint === true;
  const denied = d.decisions.denials.flatMap((m) => (m.role === "tool" ? [{ id: m.tool_call_id, name: d.openCalls.calls.get(m.tool_call_id) ?? "tool" }] : []));
  const noted = d.continuation ? new Set<string>() : store.events.continuationReminders(lastUser);
  const notes = [
    settings.loopRepeats > 0 ? loopNote(calls, settings, fromSeq > 1, d.nonce, { acts: knownToAct, canonical: d.scope.cache.results.of }) : null,
    doneNote(calls, settings, acting, isTaskTool, d.nonce),
    settings.interrupted && !d.continuation ? interruptedNote({ unanswered: d.unanswered, denied, answering: d.options.interruptedRun !== undefined }, calls, d.nonce) : null,
  ];
  return notes.flatMap((n) => (n && !noted.has(`${n.kind}\u0000${n.reason}`) ? [{ kind: n.kind, reason: n.reason, text: renderCorrective(n, d.nonce) }] : []));
}

function entry(message: Parameters<typeof textOf>[0], fresh: boolean): TimelineMessage {
  return {
    role: message.role,
    // A result a continuation's note rides on is compared without it: the same result stays the same.
    content: message.role === "tool" ? withoutAppendix(textOf(message)) : textOf(message),
    ...(message.role === "assistant" && message.tool_calls ? { toolCalls: message.tool_calls } : {}),
    ...(message.role === "tool" ? { toolCallId: message.tool_call_id } : {}),
    fresh,
  };
}
