/**
 * The inspector's what-if (docs/inspector.md): a stored turn's model input fitted again under another budget, window
 * or compaction policy, storing nothing. It works on what the model read then (the replay of the turn): the compaction
 * it would plan is the real planner's over that view, a summary counted at the planner's estimate (no summariser runs),
 * and the budget gives up whole blocks in the runtime's order (history, then memory, then contexts and task state; the
 * system prompt, the tools and the user's words never). Apps are not asked again: the contexts are those the turn read.
 */
import { messageTokens } from "../core/assemble";
import { dropOrder, fitBudget, PRIORITY, type BudgetItem } from "../core/budget";
import { groupMessages } from "../core/groups";
import { fail, ok, type Result } from "../core/problem";
import { withoutAppendix } from "../core/reminder";
import { countTokens, MESSAGE_OVERHEAD_TOKENS } from "../core/tokens";
import { planCompaction, viewGroups, type CompactionPlan } from "../history/plan";
import { compactionLimits } from "../history/policy";
import { renderStub, renderSummary } from "../history/view";
import type { BudgetKind, Priority, Truncation } from "../protocol/evidence";
import type { WhatIfAnswer, WhatIfBody, WhatIfLayer } from "../protocol/what-if";
import type { PastTurn } from "../protocol/frontend";
import { textOf, type ChatMessage } from "../protocol/messages";
import { CompactionPolicy, type CompactionLimits } from "../protocol/policies";

/** The appendix the runtime stapled to the user's words, by the tag each block opens with. */
const APPENDIX_BLOCK = /\n\n(?=<(persona_switch|memory_fence|task_state|system_reminder)[ >])/;
const LAYER_OF_TAG: Record<string, WhatIfLayer["kind"]> = { persona_switch: "persona", memory_fence: "memory", task_state: "task_state", system_reminder: "contexts" };

/** What a class of appendix block is worth to the budget: the same classes `assembleTurn` gives them. */
const APPENDIX_PRIORITY: Partial<Record<WhatIfLayer["kind"], { priority: Priority; kind: BudgetKind }>> = {
  persona: { priority: PRIORITY.identity, kind: "user_message" },
  notes: { priority: PRIORITY.identity, kind: "user_message" },
  memory: { priority: PRIORITY.memory, kind: "memory" },
  task_state: { priority: PRIORITY.current, kind: "task_state" },
  contexts: { priority: PRIORITY.current, kind: "context" },
};

interface Piece {
  id: string;
  layer: WhatIfLayer["kind"];
  tokens: number;
  messages: number;
  item: Omit<BudgetItem, "id" | "tokens"> | null;
}

/**
 * `turn`: the stored turn, replayed. `policy`: the conversation's compaction policy now. `nonce`: the conversation's,
 * for the stubs and summary fence it measures.
 */
export function whatIf(turn: PastTurn, policy: CompactionPolicy, body: WhatIfBody, nonce: string | null): Result<WhatIfAnswer> {
  const checked = CompactionPolicy.safeParse({ ...policy, ...(body.compaction ?? {}), ...(body.contextWindow === undefined ? {} : { contextWindow: body.contextWindow }) });
  if (!checked.success) {
    const issues = checked.error.issues.map((i) => ({ path: `compaction.${i.path.join(".")}`, message: i.message }));
    return fail("invalid-request", `compaction: ${issues[0]!.message}`, issues);
  }
  const next = checked.data;
  const limits = compactionLimits(next);
  const maxTokens = limits === null ? (body.maxTokens ?? null) : Math.min(body.maxTokens ?? limits.usable, limits.usable);

  const pieces = piecesOf(turn);
  const before = layersOf(pieces);
  const beforeTokens = turn.usage.total;
  const planned = limits === null ? null : planOver(turn, pieces, limits, next, nonce);
  const compacted = planned ? applyPlan(pieces, planned) : pieces;

  let kept = compacted;
  let truncations: Truncation[] = [];
  let fits = true;
  if (maxTokens !== null) {
    const items = compacted.flatMap((p) => (p.item ? [{ ...p.item, id: p.id, tokens: p.tokens }] : []));
    // What the pieces do not count (seams between the words and the appendix blocks) is as fixed as the system prompt.
    const unseen = turn.usage.total - sum(pieces.map((p) => p.tokens));
    const fixed = sum(compacted.filter((p) => !p.item).map((p) => p.tokens)) + unseen;
    const fit = fitBudget(items, maxTokens - fixed);
    const given = fit.ok ? new Set(fit.truncations.map((t) => t.id)) : new Set(dropOrder(items).map((i) => i.id));
    truncations = fit.ok ? fit.truncations : dropOrder(items).map(({ id, kind, priority, tokens }) => ({ id, kind, priority, tokens }));
    fits = fit.ok;
    kept = compacted.filter((p) => !given.has(p.id));
  }
  // The runtime's count of the whole input, less what the what-if takes out (pieces are counted apart, seams and all).
  const afterTokens = turn.usage.total - (sum(pieces.map((p) => p.tokens)) - sum(kept.map((p) => p.tokens)));
  return ok({
    turnId: turn.turnId,
    policy: next,
    limits,
    maxTokens,
    before: { tokens: beforeTokens, layers: before },
    after: { tokens: afterTokens, layers: layersOf(kept) },
    compaction: planned
      ? {
          before: planned.before,
          after: planned.after,
          clearedResults: planned.clear.length,
          summarisedGroups: planned.summarise?.groups ?? 0,
          summarisedMessages: planned.summarise?.messages ?? 0,
          summaryEstimate: planned.summarise?.summaryEstimate ?? 0,
          reachesTarget: planned.reachesTarget,
        }
      : null,
    truncations,
    fits,
    difference: afterTokens - beforeTokens,
  });
}

/**
 * The turn's model input cut into what a budget gives up whole: the system prompt with the tools, the summary, each
 * history group, the user's words, and each block of the appendix. Their tokens add up to the turn's total.
 */
function piecesOf(turn: PastTurn): Piece[] {
  const [system, ...rest] = turn.messages;
  const own = turn.usage.message > 0 ? rest.pop()! : null;
  const pieces: Piece[] = [
    { id: "system_prompt", layer: "system_prompt", tokens: messageTokens(system!), messages: 1, item: null },
    ...(turn.usage.tools ? [{ id: "tools", layer: "tools" as const, tokens: turn.usage.tools, messages: 0, item: null }] : []),
  ];
  const summary = turn.envelope.history?.summaryThroughSeq != null && rest[0] !== undefined && textOf(rest[0]).includes("<summary_fence") ? rest.shift()! : null;
  const groups = groupMessages(rest);
  // On a continuation the last user message and the tool work after it are this turn's: never history.
  const lastUser = own ? groups.length : groups.findLastIndex((g) => g.kind === "user");
  if (summary) pieces.push({ id: "summary", layer: "summary", tokens: messageTokens(summary), messages: 1, item: { kind: "history", priority: PRIORITY.history, age: groups.length } });
  groups.forEach((g, i) => {
    const tokens = sum(g.messages.map(messageTokens));
    const current = i >= lastUser;
    const item = i === lastUser ? null : { kind: current ? ("tool_results" as const) : ("history" as const), priority: current ? PRIORITY.current : PRIORITY.history, age: i };
    pieces.push({ id: `history:${g.start}`, layer: current && i !== lastUser ? "tool_results" : i === lastUser ? "user_message" : "session_history", tokens, messages: g.messages.length, item });
  });
  if (own) pieces.push(...userPieces(own, turn.usage.message, groups.length));
  return pieces;
}

/** The user's words (with their images), then each appendix block, each with the seam before it. */
function userPieces(message: ChatMessage, wordsTokens: number, age: number): Piece[] {
  const text = textOf(message);
  const words = withoutAppendix(text);
  const blocks = text.slice(words.length).split(APPENDIX_BLOCK).filter((b, i) => i % 2 === 0 && b.trim() !== "");
  const pieces: Piece[] = [{ id: "user_message", layer: "user_message", tokens: wordsTokens, messages: 1, item: null }];
  blocks.forEach((block, i) => {
    const trimmed = block.replace(/^\n\n/, "");
    const tag = /^<([a-z_]+)/.exec(trimmed)?.[1] ?? "";
    // After the context markers come the stapled notes: system_reminder blocks with a kind.
    const layer = tag === "system_reminder" && /^<system_reminder[^>]* kind="/.test(trimmed) ? "notes" : (LAYER_OF_TAG[tag] ?? "notes");
    const value = APPENDIX_PRIORITY[layer]!;
    pieces.push({ id: `${layer}:${i}`, layer, tokens: countTokens(trimmed) + 1, messages: 0, item: value.priority === PRIORITY.identity ? null : { ...value, age: age + i } });
  });
  return pieces;
}

/** The compaction the real planner would make of this view under `policy`; null when it would make none. */
function planOver(turn: PastTurn, pieces: readonly Piece[], limits: CompactionLimits, policy: CompactionPolicy, nonce: string | null): CompactionPlan | null {
  const [, ...rest] = turn.messages;
  if (turn.usage.message > 0) rest.pop();
  const summary = pieces.find((p) => p.layer === "summary");
  if (summary) rest.shift();
  // Seqs here are positions in the view (from 1): the plan only names messages by them.
  const seqs = rest.map((_, i) => i + 1);
  const names = new Map(rest.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []).map((c) => [c.id, c.function.name] as const) : [])));
  const historical = new Set(pieces.filter((p) => p.item?.priority === PRIORITY.history).map((p) => p.id));
  const firstCurrent = groupMessages(rest).find((g) => !historical.has(`history:${g.start}`))?.start;
  const fixedTokens = sum(pieces.filter((p) => p.layer !== "session_history" && p.layer !== "tool_results" && !(p.layer === "user_message" && p.id !== "user_message")).map((p) => p.tokens));
  return planCompaction({
    groups: viewGroups(rest, seqs),
    cleared: new Set(rest.flatMap((m, i) => (m.role === "tool" && textOf(m).startsWith("[tool result cleared") ? [i + 1] : []))),
    fixedTokens,
    summaryTokens: summary?.tokens ?? 0,
    summaryOverheadTokens: messageTokens(renderSummary({ fromSeq: 1, throughSeq: rest.length, text: "", summariser: "digest", trust: "external", loss: [] }, nonce)),
    stubTokens: (seq) => {
      const m = rest[seq - 1]!;
      const tool = m.role === "tool" ? (names.get(m.tool_call_id) ?? "a tool") : "a tool";
      return MESSAGE_OVERHEAD_TOKENS + countTokens(renderStub({ tool, tokens: messageTokens(m), content: textOf(m), pointer: `r2://results/${turn.conversationId}/${seq}` }, nonce));
    },
    limits,
    policy,
    protectFromSeq: firstCurrent === undefined ? undefined : firstCurrent + 1,
  });
}

/** The pieces once the plan is applied: results it clears count their stubs, groups it summarises become the summary. */
function applyPlan(pieces: readonly Piece[], plan: CompactionPlan): Piece[] {
  const saved = new Map<string, number>();
  const groupOf = (seq: number) => pieces.filter((p) => p.id.startsWith("history:") && Number(p.id.slice(8)) < seq).at(-1)?.id;
  for (const c of plan.clear) {
    const id = groupOf(c.seq);
    if (id) saved.set(id, (saved.get(id) ?? 0) + c.saved);
  }
  const through = plan.summarise?.throughSeq ?? 0;
  const out: Piece[] = [];
  for (const p of pieces) {
    const start = p.id.startsWith("history:") ? Number(p.id.slice(8)) + 1 : null;
    if (plan.summarise && p.layer === "summary") continue;
    if (start !== null && start <= through) continue;
    out.push({ ...p, tokens: p.tokens - (saved.get(p.id) ?? 0) });
  }
  if (plan.summarise) {
    const at = out.findIndex((p) => p.id.startsWith("history:") || p.id === "user_message");
    out.splice(at === -1 ? out.length : at, 0, { id: "summary", layer: "summary", tokens: plan.summarise.summaryEstimate, messages: 1, item: { kind: "history", priority: PRIORITY.history, age: Number.MAX_SAFE_INTEGER } });
  }
  return out;
}

/** Pieces summed by layer, in the order the model reads them. */
function layersOf(pieces: readonly Piece[]): WhatIfLayer[] {
  const layers: WhatIfLayer[] = [];
  for (const p of pieces) {
    const last = layers.at(-1);
    if (last?.kind === p.layer) {
      last.tokens += p.tokens;
      if (last.messages !== undefined) last.messages += p.messages;
    } else {
      layers.push({ kind: p.layer, tokens: p.tokens, ...(p.layer === "session_history" || p.layer === "tool_results" ? { messages: p.messages } : {}) });
    }
  }
  return layers;
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
