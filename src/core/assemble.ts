import { dropOrder, fitBudget, PRIORITY, type BudgetItem } from "./budget";
import type { ContextEnvelope, MissingContext, SurfaceItem, Truncation, TurnUsage } from "../protocol/evidence";
import { groupMessages } from "./groups";
import { diffLedger, type LedgerChange, type LedgerEntry, type Observation } from "./ledger";
import { LIMITS } from "../protocol/limits";
import { imagesOf, textOf, type ChatMessage, type ImagePart } from "../protocol/messages";
import { markerTitle } from "./neutralize";
import { fail, ok, type Result } from "./problem";
import { renderChange, renderReminder, withAppendix } from "./reminder";
import { countTokens, MESSAGE_OVERHEAD_TOKENS } from "./tokens";

/** A block of the appendix other than the context markers: memory, task state. */
export interface AppendixSection {
  kind: "memory" | "task_state";
  /** Best first: under a budget the last entries are given up first. */
  entries: readonly { id: string; text: string }[];
  wrap(texts: readonly string[]): string;
}

export interface TurnInput {
  turnId: string;
  conversationId: string;
  now: Date;
  systemPrompt: string;
  /** What the tool list passed beside the messages costs: read every turn like the system prompt, never given up. */
  toolTokens?: number | undefined;
  history: readonly ChatMessage[];
  /** The user's new message, past the trust boundary; absent on a continuation (a turn that only carries tool results). */
  userText?: string | undefined;
  /** Images shared with it. */
  userImages?: readonly ImagePart[] | undefined;
  /** A note that the persona changed, first in the new message's appendix; class 0 like the message. */
  personaNote?: string | undefined;
  /** Stapled state notes (uploads, mentions), last in the new message's appendix, after the context markers; class 0 like the message. */
  stapledNotes?: string | undefined;
  /** Where this turn's own messages (its tool results) begin in `history`: they are class 1, not history. */
  currentFrom?: number;
  ledger: readonly LedgerEntry[];
  /** Attached contexts first, then session resources, in the order they should appear. */
  observations: readonly (Observation & { ref?: string; itemId?: string })[];
  sections?: readonly AppendixSection[];
  /** The model input's budget in tokens; none means unbounded. */
  maxTokens?: number | undefined;
  appendixLimitChars?: number;
  /** The conversation's nonce, carried by the runtime's tags. */
  nonce?: string | null | undefined;
  /** `history` opens with the summary of what came before: under a budget it is the last of the history to go. */
  summaryFirst?: boolean | undefined;
  /**
   * A continuation turn: the model is answering the last user message in `history`. It must be in view (refused
   * otherwise), and a result of its tool work that does not fit is shown as a stand-in rather than dropping its call.
   */
  answersRequest?: boolean | undefined;
}

type UserMessage = Extract<ChatMessage, { role: "user" }>;

export interface TurnAssembly {
  /** The new user message, as stored; null on a continuation. */
  userMessage: UserMessage | null;
  messages: ChatMessage[];
  /** Indexes into the input history of the messages the model reads, in order (a budget may leave some out). */
  historyShown: number[];
  /** Tool results (indexes into the input history, among `historyShown`) the model reads as a stand-in: they did not fit. */
  standIns: { index: number; toolCallId: string; tool: string; tokens: number }[];
  ledger: { upserts: LedgerEntry[]; deletes: { kind: LedgerEntry["kind"]; key: string }[] };
  envelope: ContextEnvelope;
  usage: TurnUsage;
  /** What the model would read with nothing given up: what compaction compares with its trigger. */
  requestedTokens: number;
  missing: MissingContext[];
}

type Change = LedgerChange & { rendered: string };

/**
 * Assemble one turn: diff what was observed against the ledger, render the
 * changes (with memory and task state) into the appendix of the new user
 * message, fit everything to the token budget by priority class, and say what
 * the ledger becomes. Pure: storage and provider calls are the caller's.
 */
export function assembleTurn(input: TurnInput): Result<TurnAssembly> {
  const limit = input.appendixLimitChars ?? LIMITS.appendixChars;
  const envelope = emptyEnvelope(input, limit);
  const continuation = input.userText === undefined;
  const diff = diffLedger(input.ledger, continuation ? input.ledger.map(stillThere) : input.observations);

  // The character limit is a hard cap on the appendix, applied before the token budget.
  const changes: Change[] = [];
  let chars = 0;
  for (const change of diff.changes) {
    const rendered = renderChange(change, input.nonce);
    if (change.change !== "removed" && chars + rendered.length > limit) {
      envelope.selection.omitted.push({ id: change.key, reason: "budget" });
      continue;
    }
    chars += rendered.length;
    changes.push({ ...change, rendered });
  }
  envelope.budget.appendixChars.used = chars;

  const system: ChatMessage = { role: "system", content: input.systemPrompt };
  const groups = groupMessages(input.history);
  const lastUser = groups.findLastIndex((g) => g.kind === "user");
  const answering = continuation && input.answersRequest === true;
  // No model input is without the user's words: a continuation whose request is out of view has nothing to answer.
  if (answering && lastUser === -1) {
    return fail(
      "conflict",
      "this continuation has no user message in view to answer (the history was cleared before these tool calls were made, or holds no user message): send the results with a new message",
    );
  }
  const userText = continuation ? null : input.userText!;
  const personaNote = continuation ? "" : (input.personaNote ?? "");
  const stapled = continuation ? "" : (input.stapledNotes ?? "");
  const sections = input.sections ?? [];

  const toolTokens = input.toolTokens ?? 0;
  const inputTokens = (messages: readonly ChatMessage[]) => usageOf(messages) + toolTokens;
  const items: BudgetItem[] = [{ id: "identity", kind: "identity", priority: PRIORITY.identity, age: 0, tokens: messageTokens(system) + toolTokens }];
  const userMessageTokens = userText === null ? 0 : MESSAGE_OVERHEAD_TOKENS + countTokens(userText) + (input.userImages ?? []).reduce((sum, image) => sum + imageTokens(image), 0);
  if (userText !== null) {
    const tokens = userMessageTokens + (personaNote ? countTokens(personaNote) + 1 : 0) + (stapled ? countTokens(stapled) + 1 : 0);
    items.push({ id: "user_message", kind: "user_message", priority: PRIORITY.identity, age: 0, tokens });
  }
  const currentFrom = input.currentFrom ?? input.history.length;
  // A result of the request's tool work that does not fit gives way to a stand-in, so its call and the request stay in view.
  const standIns = new Map<number, { message: ChatMessage; toolCallId: string; tool: string; tokens: number }>();
  groups.forEach((g, i) => {
    // On a continuation the last user message is the current one, and the tool work after it is this turn's.
    const current = g.start >= currentFrom || (continuation && i > lastUser);
    const priority = continuation && i === lastUser ? PRIORITY.identity : current ? PRIORITY.current : PRIORITY.history;
    const kind = priority === PRIORITY.history ? "history" : g.kind === "user" ? "user_message" : "tool_results";
    let tokens = g.messages.reduce((sum, m) => sum + messageTokens(m), 0);
    // Only a budget can leave a result out: without one, no stand-in is drawn.
    if (answering && current && g.kind === "tool_calls" && input.maxTokens !== undefined) {
      const calls = g.messages[0]!;
      const names = new Map(calls.role === "assistant" ? (calls.tool_calls ?? []).map((c) => [c.id, c.function.name]) : []);
      g.messages.forEach((m, k) => {
        if (m.role !== "tool") return;
        const full = messageTokens(m);
        const tool = names.get(m.tool_call_id) ?? "a tool";
        const message: ChatMessage = { role: "tool", tool_call_id: m.tool_call_id, content: renderNotShown(tool, full, input.nonce) };
        const saved = full - messageTokens(message);
        if (saved <= 0) return;
        standIns.set(g.start + k, { message, toolCallId: m.tool_call_id, tool, tokens: full });
        tokens -= saved;
        // Older than every group of the class: results give way to stand-ins before any call is given up, oldest first.
        items.push({ id: `tool_result:${g.start + k}`, kind: "tool_results", priority, age: i - groups.length + k / g.messages.length, tokens: saved });
      });
    }
    // The summary stands for everything before it, in a fraction of the tokens: the oldest messages after it go first.
    const age = input.summaryFirst && g.start === 0 && priority === PRIORITY.history ? groups.length : i;
    items.push({ id: `history:${g.start}`, kind, priority, age, tokens });
  });
  changes.forEach((c, i) => {
    // Newer than any history group; removed markers are kept last: they are a few tokens and keep the ledger honest.
    const age = c.change === "removed" ? Number.MAX_SAFE_INTEGER : groups.length + i;
    items.push({ id: `${c.kind}:${c.key}`, kind: c.kind, priority: PRIORITY.current, age, tokens: countTokens(c.rendered) + 1 });
  });
  for (const section of sections) {
    const priority = section.kind === "memory" ? PRIORITY.memory : PRIORITY.current;
    const count = section.entries.length;
    // Newer than any history group, and within the section the best is given up last.
    section.entries.forEach((e, i) => items.push({ id: `${section.kind}:${e.id}`, kind: section.kind, priority, age: groups.length + count - i, tokens: countTokens(e.text) + 1 }));
  }

  const render = (kept: ReadonlySet<string>) => {
    const blocks = sections.flatMap((s) => {
      const texts = s.entries.filter((e) => kept.has(`${s.kind}:${e.id}`)).map((e) => e.text);
      return texts.length ? [{ kind: s.kind, text: s.wrap(texts) }] : [];
    });
    const shown = changes.filter((c) => kept.has(`${c.kind}:${c.key}`));
    const reminder = renderReminder(shown.map((c) => c.rendered), input.nonce);
    const text = userText === null ? null : withAppendix(userText, [personaNote, ...blocks.map((b) => b.text), reminder, stapled]);
    const images = input.userImages ?? [];
    const userMessage: UserMessage | null = text === null ? null : { role: "user", content: images.length ? [{ type: "text", text }, ...images] : text };
    const shownGroups = groups.filter((g) => kept.has(`history:${g.start}`));
    const historyShown = shownGroups.flatMap((g) => g.messages.map((_, k) => g.start + k));
    const stoodIn = historyShown.filter((index) => standIns.has(index) && !kept.has(`tool_result:${index}`));
    const standing = new Set(stoodIn);
    const history = historyShown.map((index) => (standing.has(index) ? standIns.get(index)!.message : input.history[index]!));
    const messages = [system, ...history, ...(userMessage ? [userMessage] : [])];
    return { userMessage, messages, shown, blocks, reminder, history, historyShown, stoodIn };
  };

  let truncations: Truncation[] = [];
  let kept = new Set(items.map((i) => i.id));
  let out = render(kept);
  const requestedTokens = inputTokens(out.messages);
  if (input.maxTokens !== undefined) {
    const maxTokens = input.maxTokens;
    const tooSmall = (required: number) =>
      fail<TurnAssembly>("limit-exceeded", `a budget of ${maxTokens} tokens cannot hold the system prompt and the current user message (${required} tokens)`);
    const fit = fitBudget(items, maxTokens, (set) => appendixOverhead(sections, changes, set, input.nonce));
    if (!fit.ok) return tooSmall(fit.required);
    ({ kept, truncations } = fit);
    out = render(kept);
    // Seams and wrappers are estimated; the rendered input is what must fit, so give up more if it does not.
    for (const item of dropOrder(items)) {
      if (inputTokens(out.messages) <= maxTokens) break;
      if (!kept.has(item.id)) continue;
      kept.delete(item.id);
      truncations.push({ id: item.id, kind: item.kind, priority: item.priority, tokens: item.tokens });
      out = render(kept);
    }
    if (inputTokens(out.messages) > maxTokens) return tooSmall(inputTokens(out.messages));
  }

  const upserts: LedgerEntry[] = [];
  const deletes: TurnAssembly["ledger"]["deletes"] = [];
  const blockTokens: ContextEnvelope["assembly"]["blocks"] = [];
  for (const c of changes) {
    if (!kept.has(`${c.kind}:${c.key}`)) {
      // Left for a later turn: the ledger is untouched, so it is injected once it fits.
      envelope.selection.omitted.push({ id: c.key, reason: "budget" });
      continue;
    }
    envelope.injection.push({ id: c.key, kind: c.kind, target: "user_message_appendix", marker: c.change });
    if (c.change === "removed") {
      deletes.push({ kind: c.kind, key: c.key });
      envelope.selection.removed.push({ id: c.key, reason: c.reason });
    } else {
      upserts.push({ key: c.key, kind: c.kind, title: c.title, version: c.version });
      envelope.selection.selected.push({ id: c.key, reason: c.change });
      blockTokens.push({ kind: c.kind, id: c.key, tokens: countTokens(c.rendered), target: "user_message_appendix" });
    }
  }
  for (const key of diff.unchanged) envelope.selection.omitted.push({ id: key, reason: "unchanged" });
  for (const key of diff.empty) envelope.selection.omitted.push({ id: key, reason: "empty" });
  const missing = diff.missing.map((m): MissingContext => ({ id: m.key, reason: m.reason, detail: m.detail, severity: "warning" }));
  for (const m of missing) envelope.selection.omitted.push({ id: m.id, reason: "missing" });
  envelope.missing = missing;

  const sectionTokens = (kind: AppendixSection["kind"]) => out.blocks.filter((b) => b.kind === kind).reduce((sum, b) => sum + countTokens(b.text), 0);
  const usage: TurnUsage = {
    system: messageTokens(system),
    tools: toolTokens,
    history: out.history.reduce((sum, m) => sum + messageTokens(m), 0),
    message: userMessageTokens,
    contexts: countTokens(out.reminder),
    memory: sectionTokens("memory"),
    taskState: sectionTokens("task_state"),
    total: inputTokens(out.messages),
  };
  envelope.budget.maxTokens = input.maxTokens ?? null;
  envelope.budget.usedTokens = usage.total;
  envelope.budget.truncations = truncations;
  envelope.assembly.blocks = [
    { kind: "system_prompt", tokens: usage.system, target: "system_prompt" },
    ...(toolTokens ? [{ kind: "tools" as const, tokens: toolTokens, target: "tool_definitions" as const }] : []),
    { kind: "session_history", tokens: usage.history, target: "message_history" },
    { kind: "user_message", tokens: usage.message, target: "user_message" },
    ...(usage.memory ? [{ kind: "memory" as const, tokens: usage.memory, target: "user_message_appendix" as const }] : []),
    ...(usage.taskState ? [{ kind: "task_state" as const, tokens: usage.taskState, target: "user_message_appendix" as const }] : []),
    ...blockTokens,
  ];
  const ledger = { upserts, deletes };
  const shownStandIns = out.stoodIn.map((index) => {
    const { toolCallId, tool, tokens } = standIns.get(index)!;
    return { index, toolCallId, tool, tokens };
  });
  return ok({ userMessage: out.userMessage, messages: out.messages, historyShown: out.historyShown, standIns: shownStandIns, ledger, envelope, usage, requestedTokens, missing });
}

/**
 * What the model reads in place of a tool result that did not fit this turn's budget: the tool and the result's size.
 * The result itself stays stored; a later turn with room reads it. Deterministic, so a replay renders it again.
 */
export function renderNotShown(tool: string, tokens: number, nonce?: string | null): string {
  return `[tool result not shown: ${markerTitle(tool, 64, nonce)} returned ~${tokens} tokens, more than this turn's budget holds]`;
}

/** On a continuation nothing is pulled: every ledger entry counts as unchanged. */
function stillThere(entry: LedgerEntry): Observation {
  return { key: entry.key, kind: entry.kind, status: "present", title: entry.title, version: entry.version, content: "" };
}

/** Wrappers and seams the kept appendix entries cost beyond their own tokens. */
function appendixOverhead(sections: readonly AppendixSection[], changes: readonly Change[], kept: ReadonlySet<string>, nonce: string | null | undefined): number {
  let tokens = 0;
  for (const s of sections) if (s.entries.some((e) => kept.has(`${s.kind}:${e.id}`))) tokens += countTokens(s.wrap([])) + 2;
  if (changes.some((c) => kept.has(`${c.kind}:${c.key}`))) tokens += countTokens(renderReminder([""], nonce)) + 2;
  return tokens;
}

/** Counted once per message object: a turn measures the same history several times, and stored rows arrive counted. */
const counted = new WeakMap<ChatMessage, number>();

export function messageTokens(message: ChatMessage): number {
  const known = counted.get(message);
  if (known !== undefined) return known;
  let tokens = MESSAGE_OVERHEAD_TOKENS + countTokens(textOf(message)) + imagesOf(message).reduce((sum, image) => sum + imageTokens(image), 0);
  if (message.role === "assistant" && message.tool_calls) {
    for (const call of message.tool_calls) tokens += countTokens(call.function.name) + countTokens(call.function.arguments);
  }
  counted.set(message, tokens);
  return tokens;
}

/**
 * What an image costs a vision model: OpenAI's price for a low-detail image, or
 * for a high-detail 1024×1024 one (the size is unknown here, so the common case).
 */
export function imageTokens(image: ImagePart): number {
  return image.image_url.detail === "low" ? 85 : 765;
}

/** A message read back from storage with the count `messageTokens` gave it when it was stored. */
export function withKnownTokens<M extends ChatMessage>(message: M, tokens: number): M {
  if (tokens > 0) counted.set(message, tokens);
  return message;
}

/** What the model reads, in tokens: the figure every budget is checked against. */
export function usageOf(messages: readonly ChatMessage[]): number {
  return messages.reduce((sum, m) => sum + messageTokens(m), 0);
}

function emptyEnvelope(input: TurnInput, limit: number): ContextEnvelope {
  return {
    standard: "agent-context/draft",
    turnId: input.turnId,
    conversationId: input.conversationId,
    createdAt: input.now.toISOString(),
    surface: { items: input.observations.map(surfaceItem) },
    selection: { selected: [], omitted: [], removed: [] },
    budget: { maxTokens: null, usedTokens: 0, appendixChars: { limit, used: 0 }, truncations: [] },
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
