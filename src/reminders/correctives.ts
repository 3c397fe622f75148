/**
 * Corrective notes (docs/reminders.md): pure functions from the conversation's recent calls to the notes the runtime
 * staples to the user's message. Each kind fires only on what is new since the user's previous message, so a note is
 * said once, not every turn after.
 */
import { markerTitle } from "../core/neutralize";
import { openTag } from "../core/runtime-tag";
import type { Correctives } from "../protocol/methods";
import { findLoops, type Alike, type CallRecord, type Loop, type LoopOptions } from "./loops";

export type CorrectiveKind = "loop" | "done_without_action" | "interrupted";

/** One note: its kind, why it fired (for the evidence and the event), and the text the model reads. */
export interface Corrective {
  kind: CorrectiveKind;
  reason: string;
  text: string;
}

/** One call in the timeline: which assistant message made it, how many user messages came before it, and whether it is new since the last one. */
export interface TimelineCall extends CallRecord {
  id: string;
  message: number;
  userTurn: number;
  fresh: boolean;
}

/** A message of the timeline, as stored or admitted this turn; `fresh` when it came after the user's last message. */
export interface TimelineMessage {
  role: string;
  content: string;
  toolCalls?: readonly { id: string; function: { name: string; arguments: string } }[];
  toolCallId?: string;
  fresh: boolean;
}

/**
 * The calls of a run of messages, in the order made, each with its result (the latest call with that id that has none).
 * A call is as new as its result: one made earlier whose result came fresh is new, whatever route brought the call.
 */
export function timeline(messages: readonly TimelineMessage[]): TimelineCall[] {
  const calls: TimelineCall[] = [];
  let userTurn = 0;
  messages.forEach((m, index) => {
    if (m.role === "user") userTurn++;
    for (const c of m.toolCalls ?? []) calls.push({ id: c.id, name: c.function.name, args: c.function.arguments, result: null, message: index, userTurn, fresh: m.fresh });
    if (m.role === "tool" && m.toolCallId !== undefined) {
      const call = calls.findLast((c) => c.id === m.toolCallId && c.result === null);
      if (call) Object.assign(call, { result: m.content, fresh: m.fresh });
    }
  });
  return calls;
}

const name = (s: string, nonce: string | null | undefined) => markerTitle(s, 80, nonce);

/** How a loop's results differed, as its note says it. */
const ALIKE: Record<Alike, string> = { numbers: "in numbers that went up and down or barely moved", order: "in the order of their lines" };

/**
 * A loop that reached its threshold among the new calls, or that only the new calls showed to be one (a series read
 * as noise once a third reading turned back, though the call that completed it came earlier); one reaching back past
 * the read window is not new, nor one the calls read before already held.
 */
export function loopNote(calls: readonly TimelineCall[], settings: Correctives, truncated: boolean, nonce?: string | null, detector: Partial<Pick<LoopOptions, "acts" | "canonical">> = {}): Corrective | null {
  const options = { repeats: settings.loopRepeats, maxPeriod: settings.loopPeriod, ...detector };
  const found = findLoops(calls, options).filter((l) => !(truncated && l.start === 0));
  const holdsNew = (l: Loop) => calls.slice(l.start, l.end + 1).some((call) => call.fresh);
  const hindsight = found.filter((l) => !calls[l.firedAt]!.fresh && holdsNew(l));
  // The loops the calls read before already held, by their positions here (call ids may repeat): one of them with the
  // same tools over the same calls was noted then, however its readings merge now.
  let held: { start: number; end: number; tools: string }[] = [];
  if (hindsight.length > 0) {
    const at = calls.flatMap((call, i) => (call.fresh ? [] : [i]));
    held = findLoops(at.map((i) => calls[i]!), options).map((l) => ({ start: at[l.start]!, end: at[l.end]!, tools: l.tools.join("\u0000") }));
  }
  const noted = (l: Loop) => held.some((h) => h.tools === l.tools.join("\u0000") && h.start <= l.end && l.start <= h.end);
  const loop = found.find((l) => calls[l.firedAt]!.fresh || (hindsight.includes(l) && !noted(l)));
  if (!loop) return null;
  const tools = loop.tools.map((t) => name(t, nonce));
  const alike = loop.alike ? `results that differed only ${loop.alike.map((kind) => ALIKE[kind]).join(" and ")}` : null;
  const what = loop.period === 1 ? `${tools[0]} was called ${loop.repeats} times in a row with the same arguments and got ${alike ?? "the same result each time"}` : `the calls ${tools.join(" → ")} were made ${loop.repeats} times in a row, with the same arguments and ${alike ?? "the same results"}`;
  return {
    kind: "loop",
    reason: loop.period === 1 ? `${loop.tools[0]} repeated ${loop.repeats} times` : `cycle ${loop.tools.join(" → ")} repeated ${loop.repeats} times`,
    text: `You may be looping: ${what}. Calling again will not change the outcome: try another approach, or tell the user what is in the way.`,
  };
}

function get(value: unknown, key: string): unknown {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
}

/**
 * Tasks marked done in the task tool, among the new calls, with no acting call since each was opened (its first
 * appearance not done, or its reopening); a task that first appears already done was opened at the user's message
 * before it. Calls made in the same message as the marking count.
 */
export function doneNote(calls: readonly TimelineCall[], settings: Correctives, acting: (tool: string) => boolean, isTaskTool: (tool: string) => boolean, nonce?: string | null): Corrective | null {
  const when = settings.doneWhen;
  if (!when) return null;
  const opened = new Map<string, number>();
  const done = new Set<string>();
  const claimed: string[] = [];
  calls.forEach((call, i) => {
    if (!isTaskTool(call.name)) return;
    let args: unknown;
    try {
      args = JSON.parse(call.args || "{}");
    } catch {
      return;
    }
    const items = when.list === undefined ? [args] : get(args, when.list);
    if (!Array.isArray(items)) return;
    items.forEach((item, index) => {
      const k = when.key === undefined ? undefined : get(item, when.key);
      const key = typeof k === "string" || typeof k === "number" ? String(k) : `#${index}`;
      const isDone = get(item, when.field) === when.equals;
      if (!isDone) {
        if (!opened.has(key) || done.has(key)) opened.set(key, i);
        done.delete(key);
        return;
      }
      if (done.has(key)) return;
      done.add(key);
      if (!call.fresh) return;
      // Opened earlier: acting calls after it count. First seen already done: acting calls since the user's message.
      const from = opened.has(key) ? opened.get(key)! + 1 : calls.findIndex((c) => c.userTurn === call.userTurn);
      const acted = calls.some((c, j) => j >= from && (j < i || c.message === call.message) && acting(c.name));
      if (!acted) claimed.push(key);
    });
  });
  if (claimed.length === 0) return null;
  const shown = claimed.slice(0, 3).map((k) => `"${name(k, nonce)}"`);
  const more = claimed.length > 3 ? ` and ${claimed.length - 3} more` : "";
  return {
    kind: "done_without_action",
    reason: `${claimed.length} task(s) marked done with no acting call since opened: ${claimed.slice(0, 3).join(", ")}${more}`,
    text: `${claimed.length === 1 ? "A task was" : "Tasks were"} marked done with no action taken since ${claimed.length === 1 ? "it was" : "they were"} opened: ${shown.join(", ")}${more}. Marking a task done does not do it: take the real action first, or tell the user it is not done.`,
  };
}

/** What a new message cut short: calls with no result (interrupted), calls waiting for approval, and calls the user refused. */
export interface Interruption {
  unanswered: readonly { id: string; name: string; awaitingApproval?: true }[];
  denied: readonly { id: string; name: string }[];
  /** The model was still answering (a gateway answer streaming, or its tools running) when the message came. */
  answering?: boolean;
}

/** Names what was in progress when the user's new message came; a refused call is told apart from an interrupted one. */
export function interruptedNote(cut: Interruption, calls: readonly TimelineCall[], nonce?: string | null): Corrective | null {
  if (cut.unanswered.length === 0 && !cut.answering) return null;
  const describe = (c: { id: string; name: string }) => {
    const args = calls.findLast((k) => k.id === c.id && k.name === c.name)?.args.trim() ?? "";
    return `${name(c.name, nonce)}(${args.length > 60 ? `${name(args, nonce).slice(0, 60)}…` : name(args, nonce)})`;
  };
  const running = cut.unanswered.filter((c) => !c.awaitingApproval);
  const waiting = cut.unanswered.filter((c) => c.awaitingApproval);
  const parts = [
    ...(cut.answering ? ["interrupted while you were answering the previous message: the rest of that answer was cut off and not kept"] : []),
    ...(running.length ? [`interrupted while running, no result came: ${running.map(describe).join(", ")}`] : []),
    ...(waiting.length ? [`interrupted while waiting for the user's approval, never run: ${waiting.map(describe).join(", ")}`] : []),
  ];
  const refused = cut.denied.length ? ` Not interrupted but refused by the user (denied): ${cut.denied.map(describe).join(", ")}; do not run ${cut.denied.length === 1 ? "it" : "them"} again unasked.` : "";
  return {
    kind: "interrupted",
    reason: [
      ...(cut.answering ? ["answering"] : []),
      ...(running.length ? [`running: ${running.map((c) => c.name).join(", ")}`] : []),
      ...(waiting.length ? [`awaiting approval: ${waiting.map((c) => c.name).join(", ")}`] : []),
      ...(cut.denied.length ? [`denied: ${cut.denied.map((c) => c.name).join(", ")}`] : []),
    ].join("; "),
    text: `The user's new message arrived while work was in progress, and it stopped: ${parts.join("; ")}.${refused} Don't drop that work silently: resume it if the message leaves the plan unchanged, or tell the user what was not done.`,
  };
}

/** A note as the model reads it: the runtime's reminder tag with the conversation's nonce, and its kind. */
export function renderCorrective(note: Corrective, nonce: string | null | undefined): string {
  return `${openTag("system_reminder", nonce, `kind="${note.kind}"`)}\n${note.text}\n</system_reminder>`;
}
