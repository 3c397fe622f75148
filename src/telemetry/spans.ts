/**
 * A turn's spans, built after the fact from its evidence (docs/telemetry.md), in the OpenTelemetry GenAI conventions'
 * names: the turn itself (`invoke_agent`, or `context.turn` inside a gateway request, whose root is the
 * `invoke_agent`), an `execute_tool` span per call the runtime ran, and spans for hook calls, the compaction and each
 * subagent started. The turn's pipeline records each stage's duration, not its clock: child spans are laid out from
 * the turn's start, stage after stage, and inside a stage call after call.
 *
 * Attributes hold names, ids, counts and times, never text: no message, context, tool argument or result, reason or
 * detail reaches a span.
 */
import type { TurnResult } from "../protocol/frontend";
import type { RanToolCall } from "../protocol/evidence";
import type { HookPoint } from "../protocol/hooks";
import { newSpanId, type Span } from "./otlp";

/** What a turn's spans are built from: the turn as answered. */
export type TracedTurn = Pick<TurnResult, "turnId" | "conversationId" | "agent" | "envelope" | "usage">;

/** Where a turn's spans hang: its trace, its parent (none for a root), and the turn's measured start and end. */
export interface SpanPlace {
  traceId: string;
  parentSpanId?: string;
  start: number;
  end: number;
  /** The request's tenant (an id, not a secret): on the turn's span, for filtering by tenant. */
  tenant?: string;
}

/** The stage each hook point runs in (docs/hooks.md): its calls are placed inside that stage's time. */
const HOOK_STAGE: Record<HookPoint, string> = {
  input: "input",
  memory: "recall",
  assembled: "assembled",
  "tool.before": "run",
  "tool.after": "run",
  output: "output",
  compaction: "compact",
  "turn.end": "commit",
};

/** Each stage's start and end, laid out from the turn's start in the order the pipeline ran them. */
function stageTimes(turn: TracedTurn, start: number): Map<string, { start: number; end: number }> {
  const times = new Map<string, { start: number; end: number }>();
  let at = start;
  for (const stage of turn.envelope.stages ?? []) {
    times.set(stage.stage, { start: at, end: at + stage.ms });
    at += stage.ms;
  }
  return times;
}

/** A cursor that hands out consecutive slices of a stage's time. */
function slicer(times: Map<string, { start: number; end: number }>, fallback: number) {
  const next = new Map<string, number>();
  return (stage: string, ms: number) => {
    const at = next.get(stage) ?? times.get(stage)?.start ?? fallback;
    next.set(stage, at + ms);
    return { start: at, end: at + ms };
  };
}

/**
 * The turn's spans: `root` says whether the turn is the trace's `invoke_agent` (a frontend's turn) or a `context.turn`
 * under a gateway request's. The first span returned is the turn's own.
 */
export function turnSpans(turn: TracedTurn, place: SpanPlace, root: boolean): Span[] {
  const { envelope } = turn;
  const turnSpanId = newSpanId();
  const common = { "gen_ai.conversation.id": turn.conversationId, "context.turn.id": turn.turnId };
  const spans: Span[] = [
    {
      traceId: place.traceId,
      spanId: turnSpanId,
      ...(place.parentSpanId ? { parentSpanId: place.parentSpanId } : {}),
      name: root ? `invoke_agent ${turn.agent.name}` : "context.turn",
      kind: "internal",
      start: place.start,
      end: place.end,
      attributes: {
        ...(root ? { "gen_ai.operation.name": "invoke_agent" } : {}),
        "gen_ai.agent.id": turn.agent.id,
        "gen_ai.agent.name": turn.agent.name,
        ...common,
        "context.tenant": place.tenant,
        "context.tokens.total": turn.usage.total,
        "context.tokens.history": turn.usage.history,
        "context.tokens.contexts": turn.usage.contexts,
        "context.selected": envelope.selection.selected.length,
        "context.omitted": envelope.selection.omitted.length,
        "context.missing": envelope.missing.length,
        "context.truncations": envelope.budget.truncations.length,
        "context.reminders": envelope.reminders?.length ?? 0,
      },
    },
  ];
  const times = stageTimes(turn, place.start);
  const slice = slicer(times, place.start);
  const child = (name: string, at: { start: number; end: number }, attributes: Span["attributes"], error?: string): Span => ({
    traceId: place.traceId,
    spanId: newSpanId(),
    parentSpanId: turnSpanId,
    name,
    kind: "internal",
    ...at,
    attributes: { ...attributes, ...common },
    ...(error === undefined ? {} : { error }),
  });

  for (const stage of envelope.stages ?? []) {
    spans.push(child(`context.stage ${stage.stage}`, times.get(stage.stage)!, { "context.stage": stage.stage }));
  }
  for (const call of envelope.hooks?.calls ?? []) {
    spans.push(
      child(
        `context.hook ${call.hook}`,
        slice(HOOK_STAGE[call.point], call.ms),
        { "context.hook.id": call.hook, "context.hook.point": call.point, "context.hook.verdict": call.verdict, "gen_ai.tool.call.id": call.toolCallId },
        call.failed,
      ),
    );
  }
  const delegated = new Map((envelope.tools?.delegated ?? []).map((d) => [d.toolCallId, d]));
  for (const ran of envelope.tools?.ran ?? []) {
    const at = slice("run", ran.ms);
    const made = toolSpan(place.traceId, ran, at);
    const tool = { ...made, parentSpanId: turnSpanId, attributes: { ...made.attributes, ...common } };
    spans.push(tool);
    const sub = delegated.get(ran.toolCallId);
    if (sub) spans.push({ ...subagentSpan(place.traceId, sub, at), parentSpanId: tool.spanId });
  }
  // A subagent whose delegate call the evidence did not time still gets its span, at the run stage's start.
  for (const sub of delegated.values()) {
    if (!envelope.tools?.ran?.some((r) => r.toolCallId === sub.toolCallId)) spans.push({ ...subagentSpan(place.traceId, sub, slice("run", 0)), parentSpanId: turnSpanId });
  }
  const compaction = envelope.compaction;
  if (compaction) {
    spans.push(
      child("context.compaction", times.get("compact") ?? { start: place.start, end: place.start }, {
        "context.compaction.id": compaction.id,
        "context.compaction.reason": compaction.reason,
        "context.compaction.tokens_before": compaction.tokens.before,
        "context.compaction.tokens_after": compaction.tokens.after,
        "context.compaction.cleared": compaction.cleared.length,
        "context.compaction.summariser": compaction.summary?.summariser,
        "context.compaction.reaches_target": compaction.reachesTarget,
      }),
    );
  }
  return spans;
}

/** An `execute_tool` span for one call the runtime ran: how it ended, never its arguments or result. */
export function toolSpan(traceId: string, ran: RanToolCall, at: { start: number; end: number }): Span {
  return {
    traceId,
    spanId: newSpanId(),
    name: `execute_tool ${ran.tool}`,
    kind: "internal",
    ...at,
    attributes: {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": ran.tool,
      "gen_ai.tool.call.id": ran.toolCallId,
      "gen_ai.tool.type": "function",
      "context.tool.served_by": ran.servedBy,
      "context.tool.outcome": ran.outcome,
      "context.tool.denied_by": ran.deniedBy,
    },
    ...(ran.outcome === "ok" ? {} : { error: ran.outcome }),
  };
}

type Delegated = NonNullable<NonNullable<TracedTurn["envelope"]["tools"]>["delegated"]>[number];

/** A subagent the turn started: its own agent, in its own (child) conversation. */
function subagentSpan(traceId: string, sub: Delegated, at: { start: number; end: number }): Span {
  return {
    traceId,
    spanId: newSpanId(),
    name: `invoke_agent ${sub.agent}`,
    kind: "internal",
    ...at,
    attributes: {
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.id": sub.agent,
      "gen_ai.agent.name": sub.agent,
      "gen_ai.conversation.id": sub.childConversationId,
      "gen_ai.tool.call.id": sub.toolCallId,
      "context.turn.id": sub.turnId,
      "context.delegation.depth": sub.depth,
    },
  };
}
