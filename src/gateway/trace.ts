/**
 * One gateway request's trace (docs/telemetry.md), recorded as the run goes and exported when it ends: the request is
 * the `invoke_agent` root; each upstream call a `chat` span under it, with the usage that call reported; each step's
 * turn a `context.turn` span with its evidence's spans (src/telemetry/spans.ts); the runtime's calls run outside a turn
 * (`tools/run`) `execute_tool` spans. Only made when OTEL_EXPORTER_OTLP_ENDPOINT is set; the export runs under
 * `waitUntil`, after the answer.
 */
import type { OtlpTarget } from "../platform/config";
import type { Result } from "../core/problem";
import type { StepAnswer } from "../model";
import type { ToolRunResult } from "../protocol/tools";
import { exportSpans, newSpanId, newTraceId, type Span } from "../telemetry/otlp";
import { toolSpan, turnSpans, type TracedTurn } from "../telemetry/spans";

export class RunTrace {
  private readonly traceId = newTraceId();
  private readonly rootId = newSpanId();
  private readonly spans: Span[] = [];
  private readonly turnIds: string[] = [];
  private conversationId: string | null = null;
  private agentName: string | null = null;

  constructor(
    private readonly target: OtlpTarget,
    private readonly waitUntil: (work: Promise<unknown>) => void,
    private readonly run: { agent: string; model: string; provider: string; server: string; tenant: string; start: number },
  ) {}

  /** A step's turn, taken between `start` and `end`. */
  turn(turn: TracedTurn, start: number, end: number): void {
    this.turnIds.push(turn.turnId);
    this.conversationId ??= turn.conversationId;
    this.agentName ??= turn.agent.name;
    this.spans.push(...turnSpans(turn, { traceId: this.traceId, parentSpanId: this.rootId, start, end }, false));
  }

  /** One upstream call, from its opening to the end of its answer (or its failure). */
  chat(turnId: string, step: number, start: number, answer: Result<StepAnswer, { body: { error: { code: string | null } } }>): void {
    const usage = answer.ok ? answer.value.usage : null;
    this.spans.push({
      traceId: this.traceId,
      spanId: newSpanId(),
      parentSpanId: this.rootId,
      name: `chat ${this.run.model}`,
      kind: "client",
      start,
      end: Date.now(),
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": this.run.provider,
        "gen_ai.request.model": this.run.model,
        "gen_ai.response.model": answer.ok ? (answer.value.model ?? undefined) : undefined,
        "gen_ai.response.finish_reasons": answer.ok ? [answer.value.finishReason] : undefined,
        "gen_ai.usage.input_tokens": usage?.promptTokens,
        "gen_ai.usage.output_tokens": usage?.completionTokens,
        "gen_ai.usage.cache_read.input_tokens": usage?.cachedTokens ?? undefined,
        "gen_ai.usage.cache_creation.input_tokens": usage?.cacheWriteTokens ?? undefined,
        "gen_ai.conversation.id": this.conversationId ?? undefined,
        "server.address": this.run.server,
        "context.turn.id": turnId,
        "context.gateway.step": step,
      },
      ...(answer.ok ? {} : { error: answer.problem.body.error.code ?? "upstream_error" }),
    });
  }

  /** The runtime's calls run outside a turn (a reply that also called the client's tools, or the step limit). */
  toolsRun(result: ToolRunResult, start: number): void {
    let at = start;
    for (const ran of result.ran) {
      this.spans.push({ ...toolSpan(this.traceId, ran, { start: at, end: at + ran.ms }), parentSpanId: this.rootId });
      at += ran.ms;
    }
  }

  /** The request ended: the root span, and the export after the answer. */
  end(outcome: { steps: number; usage?: { prompt_tokens: number; completion_tokens: number } } | { error: string }): void {
    const failed = "error" in outcome;
    this.spans.push({
      traceId: this.traceId,
      spanId: this.rootId,
      name: `invoke_agent ${this.agentName ?? this.run.agent}`,
      kind: "internal",
      start: this.run.start,
      end: Date.now(),
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.id": this.run.agent,
        "gen_ai.agent.name": this.agentName ?? undefined,
        "gen_ai.conversation.id": this.conversationId ?? undefined,
        "gen_ai.provider.name": this.run.provider,
        "gen_ai.request.model": this.run.model,
        "gen_ai.usage.input_tokens": failed ? undefined : outcome.usage?.prompt_tokens,
        "gen_ai.usage.output_tokens": failed ? undefined : outcome.usage?.completion_tokens,
        "context.tenant": this.run.tenant,
        "context.gateway.steps": failed ? undefined : outcome.steps,
        "context.turn.ids": this.turnIds,
      },
      ...(failed ? { error: outcome.error } : {}),
    });
    this.waitUntil(exportSpans(this.target, this.spans));
  }
}
