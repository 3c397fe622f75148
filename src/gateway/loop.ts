import type { Conversation } from "../conversation/conversation";
import type { ModelUsage } from "../conversation/gateway-store";
import type { Owner } from "../protocol/owner";
import type { TurnResult } from "../protocol/frontend";
import type { ChatRequestMessage, ClientTool, CompletionUsage, FinishReason, OutToolCall } from "../protocol/gateway-openai";
import { AppendableMessage } from "../protocol/messages";
import { TurnBody } from "../protocol/http";
import type { UpstreamConfig } from "../platform/config";
import { failWith, ok, type Result } from "../core/problem";
import type { StepAnswer } from "../model";
import { gatewayError, fromProblem, type GatewayError } from "./errors";
import { chainLink, messageHash } from "./diff";
import { callUpstream, stepUsage, type PendingAnswer } from "./upstream";
import { settleDelegations } from "./subagents";
import { LIMITS } from "../protocol/limits";
import type { RunTrace } from "./trace";

/** One gateway request's run: what it was asked, and where it goes. */
export interface LoopContext {
  stub: DurableObjectStub<Conversation>;
  owner: Owner;
  agent: string;
  config: UpstreamConfig;
  upstreamModel: string;
  /** Sampling and output settings passed through as the client gave them. */
  params: Record<string, unknown>;
  toolChoice: unknown;
  clientTools: ClientTool[];
  stream: boolean;
  maxSteps: number;
  /** This request's run: its writes are refused once a newer request interrupts it. */
  run: string;
  /** The client messages the conversation consumed before this request's answer, and their chain (null: none kept). */
  consumed: number;
  chain: string | null;
  /** The answer as the client holds it, in chat form: the cursor keeps its hash. */
  held: (answer: HeldAnswer) => ChatRequestMessage;
  /** The request's trace, when spans are exported (src/gateway/trace.ts). */
  trace: RunTrace | null;
}

/** What the client gets back of the run, before its wire format. */
export interface HeldAnswer {
  content: string | null;
  refusal: string | null;
  toolCalls: OutToolCall[];
}

/** The answer as an OpenAI client holds it (`choices[0].message`). */
export function openAIHeld(answer: HeldAnswer): ChatRequestMessage {
  return { role: "assistant", content: answer.content, refusal: answer.refusal, ...(answer.toolCalls.length ? { tool_calls: answer.toolCalls } : {}) };
}

/** What goes back to the client: one assistant message for all the upstream calls the request took. */
export interface LoopAnswer {
  content: string | null;
  refusal: string | null;
  toolCalls: OutToolCall[];
  finishReason: FinishReason;
  usage: CompletionUsage;
  /** Prompt tokens the upstream calls wrote to its cache (part of `usage.prompt_tokens`); absent when no call reported any (only an Anthropic upstream does). */
  cacheWriteTokens?: number;
  steps: number;
  /** Every step's turn, in order: the first took the request's new part. */
  turnIds: string[];
  /** The run stopped at GATEWAY_MAX_STEPS with the runtime's calls run: the same history resent continues it. */
  stepLimit: boolean;
}

/** The model's text as it streams, separators between steps included. */
export type TextSink = (delta: { content?: string; refusal?: string }) => Promise<void>;

/**
 * The upstream request for a turn: the runtime's assembled input and tools, then the client's own tools (a client tool
 * named like one of the runtime's is left out: the runtime's answers that name), and the client's settings. A
 * `tool_choice` that forces a call holds for the first step only, or every step would call a tool again.
 */
export function upstreamBody(ctx: LoopContext, turn: TurnResult, step: number): Record<string, unknown> {
  const runtime = turn.tools ?? [];
  const taken = new Set(runtime.map((t) => t.function.name));
  const tools = [...runtime, ...ctx.clientTools.filter((t) => !taken.has(t.function.name))];
  const forced = ctx.toolChoice !== undefined && ctx.toolChoice !== "auto" && ctx.toolChoice !== "none";
  const choice = ctx.toolChoice !== undefined && (step === 1 || !forced) ? { tool_choice: ctx.toolChoice } : {};
  const { parallel_tool_calls, ...params } = ctx.params;
  return {
    model: ctx.upstreamModel,
    messages: turn.messages,
    ...(tools.length ? { tools, ...choice, ...(parallel_tool_calls === undefined ? {} : { parallel_tool_calls }) } : {}),
    ...params,
  };
}

/** The step's upstream call, streamed when the client's request is (the client adds `stream` and `stream_options`). */
export async function callStep(ctx: LoopContext, turn: TurnResult, step: number): Promise<Result<PendingAnswer, GatewayError>> {
  const start = Date.now();
  const opened = await callUpstream(ctx.config, upstreamBody(ctx, turn, step), ctx.stream);
  const { trace } = ctx;
  if (!trace) return opened;
  if (!opened.ok) {
    trace.chat(turn.turnId, step, start, opened);
    return opened;
  }
  return ok(async (onText) => {
    const answer = await opened.value(onText);
    trace.chat(turn.turnId, step, start, answer);
    return answer;
  });
}

const FINISH: Record<string, FinishReason> = { stop: "stop", length: "length", tool_calls: "tool_calls", content_filter: "content_filter", function_call: "tool_calls" };

/**
 * Runs the model until it answers or calls the client's tools, within `maxSteps` upstream calls: each step reads the
 * turn's input; calls to the tools the runtime serves go back as the next turn's `reply` (the runtime runs them and
 * assembles the next input). The final message is stored (appended); a reply that mixes the runtime's calls and the
 * client's is stored whole, the runtime's calls run (`tools/run`) and only the client's go back. At the step limit the
 * runtime's calls are run and stored the same way and the model's text goes back with finish_reason "length".
 * A failure on the way stores nothing of the failed step: the conversation then awaits an answer, and a retry continues.
 */
export async function runLoop(ctx: LoopContext, first: { turn: TurnResult; answer: PendingAnswer }, sink: TextSink | null): Promise<Result<LoopAnswer, GatewayError>> {
  const usage: ModelUsage[] = [];
  const texts: string[] = [];
  let refusal: string | null = null;
  let turn = first.turn;
  let pending = first.answer;
  const clientNames = (t: TurnResult) => {
    const taken = new Set((t.tools ?? []).map((x) => x.function.name));
    return new Set(ctx.clientTools.map((x) => x.function.name).filter((n) => !taken.has(n)));
  };
  const turnIds = [turn.turnId];
  const fail = async (error: GatewayError): Promise<Result<LoopAnswer, GatewayError>> => {
    // A failed run ends: a retry (or a new message) starts its own.
    await ctx.stub.gatewayRecord(ctx.owner, { usage, run: ctx.run, end: true, steps: turnIds });
    ctx.trace?.end({ error: error.body.error.code ?? String(error.status) });
    return failWith(error);
  };
  for (let step = 1; ; step++) {
    let startedStep = false;
    const onText: TextSink = async (d) => {
      if (d.content !== undefined) {
        const separated = !startedStep && texts.length > 0 ? `\n\n${d.content}` : d.content;
        startedStep = true;
        await sink?.({ content: separated });
      }
      if (d.refusal !== undefined) await sink?.({ refusal: d.refusal });
    };
    const read = await readAccepted(ctx, turn, pending, step, onText, usage);
    if (!read.ok) return fail(read.problem);
    const answer: StepAnswer = read.value;
    if (answer.content) texts.push(answer.content);
    if (answer.refusal) refusal = (refusal ?? "") + answer.refusal;

    const forClient = clientNames(turn);
    const clientCalls = answer.toolCalls.filter((c) => forClient.has(c.function.name));
    const runtimeCalls = answer.toolCalls.filter((c) => !forClient.has(c.function.name));
    const reply = { role: "assistant", content: answer.content ?? answer.refusal ?? (answer.toolCalls.length ? null : ""), ...(answer.toolCalls.length ? { tool_calls: answer.toolCalls } : {}) };

    if (runtimeCalls.length && !clientCalls.length && step < ctx.maxSteps) {
      // The runtime's tools only: the reply is the next turn's, which runs them and assembles the next input.
      // A turnId of its own: a model that repeats a call exactly (a poll) is not taken for a retry.
      const body = TurnBody.safeParse({ turnId: crypto.randomUUID(), agent: ctx.agent, reply });
      if (!body.success) return fail(gatewayError(502, `the upstream model's reply cannot be stored: ${body.error.issues[0]?.message}`, "upstream_invalid"));
      const turnStart = Date.now();
      const next = await ctx.stub.turn(ctx.owner, body.data, { run: ctx.run, outputReviewed: turn.envelope.hooks?.points.includes("output") === true });
      if (!next.ok) return fail(fromProblem(next.problem));
      ctx.trace?.turn(next.value, turnStart, Date.now());
      turnIds.push(next.value.turnId);
      // Subagents the model's `delegate` calls started run here to their final answers (src/gateway/subagents.ts).
      const settled = await settleDelegations(ctx, next.value);
      if (!settled.ok) return fail(settled.problem);
      if (settled.value.turnId !== next.value.turnId) {
        // The turn after the children's answers: it ran last, for as long as its stages took.
        const end = Date.now();
        ctx.trace?.turn(settled.value, end - (settled.value.envelope.stages ?? []).reduce((n, s) => n + s.ms, 0), end);
        turnIds.push(settled.value.turnId);
      }
      turn = settled.value;
      const opened = await callStep(ctx, turn, step + 1);
      if (!opened.ok) return fail(opened.problem);
      pending = opened.value;
      continue;
    }

    // The answer, the client's calls, or the step limit: the reply is stored as it came.
    const message = AppendableMessage.safeParse(reply);
    if (!message.success) return fail(gatewayError(502, `the upstream model's reply cannot be stored: ${message.error.issues[0]?.message}`, "upstream_invalid"));
    const appended = await ctx.stub.appendMessages(ctx.owner, [message.data], undefined, ctx.run);
    if (!appended.ok) return fail(fromProblem(appended.problem));
    if (runtimeCalls.length) {
      const toolsStart = Date.now();
      const ran = await ctx.stub.runTools(ctx.owner, { agent: ctx.agent }, ctx.run);
      if (!ran.ok) return fail(fromProblem(ran.problem));
      ctx.trace?.toolsRun(ran.value, toolsStart);
    }
    const finishReason: FinishReason = clientCalls.length ? "tool_calls" : runtimeCalls.length ? "length" : (FINISH[answer.finishReason] ?? "stop");
    const content = texts.length ? texts.join("\n\n") : null;
    const stepLimit = !clientCalls.length && runtimeCalls.length > 0;
    const lastHash = await messageHash(ctx.held({ content, refusal, toolCalls: clientCalls }));
    const chain = ctx.chain === null ? null : await chainLink(ctx.chain, lastHash);
    // At the step limit the model owes the rest of its answer: the same history resent (nothing new) continues the turn.
    await ctx.stub.gatewayRecord(ctx.owner, { cursor: { consumed: ctx.consumed + 1, lastHash, awaiting: stepLimit, chain }, usage, run: ctx.run, steps: turnIds });
    const total = totalUsage(usage, answer);
    ctx.trace?.end({ steps: step, usage: total });
    return ok({ content, refusal, toolCalls: clientCalls, finishReason, usage: total, ...totalCacheWrites(usage), steps: step, turnIds, stepLimit });
  }
}

/**
 * One step's answer, as the agent's `output` hooks accept it (docs/hooks.md): when the turn has output hooks, the answer
 * is read whole (a stream is held back, then sent at once), checked, and on a rejection the model is asked again with
 * its answer and the hook's note, at most LIMITS.outputRegenerations times; past that the request fails (422
 * `output_rejected`) and nothing of the step is stored. Every attempt's usage is recorded: each was paid for.
 */
async function readAccepted(ctx: LoopContext, turn: TurnResult, first: PendingAnswer, step: number, onText: TextSink, usage: ModelUsage[]): Promise<Result<StepAnswer, GatewayError>> {
  const checked = turn.envelope.hooks?.points.includes("output") === true;
  let pending = first;
  for (let attempt = 0; ; attempt++) {
    const read = await pending(checked ? () => undefined : onText);
    if (!read.ok) return read;
    const answer = read.value;
    usage.push(...stepUsage(answer, turn.turnId, step));
    if (!checked) return read;
    const review = await ctx.stub.reviewOutput(ctx.owner, { agent: ctx.agent, turnId: turn.turnId, reply: { content: answer.content, tool_calls: answer.toolCalls }, attempt });
    if (!review.ok) return failWith(fromProblem(review.problem));
    if (review.value.verdict === "accept") {
      if (ctx.stream && answer.content) await onText({ content: answer.content });
      if (ctx.stream && answer.refusal) await onText({ refusal: answer.refusal });
      return read;
    }
    if (attempt >= LIMITS.outputRegenerations) {
      return failWith(gatewayError(422, `the model's answer was rejected by hook '${review.value.hook}' ${attempt + 1} times: ${review.value.note}`, "output_rejected"));
    }
    // Asked again on the same input, with what it answered and why that was not accepted (neither is stored).
    const rejected = review.value.rejected;
    const again = { ...turn, messages: [...turn.messages, ...(rejected ? [{ role: "assistant" as const, content: rejected }] : []), { role: "user" as const, content: review.value.reminder! }] };
    const opened = await callStep(ctx, again, step);
    if (!opened.ok) return opened;
    pending = opened.value;
  }
}

/** The upstream calls' usage added up: what this request cost. */
function totalUsage(steps: readonly ModelUsage[], last: StepAnswer): CompletionUsage {
  const prompt = steps.reduce((n, s) => n + s.promptTokens, 0);
  const completion = steps.reduce((n, s) => n + s.completionTokens, 0);
  const cached = steps.some((s) => s.cachedTokens !== null) ? steps.reduce((n, s) => n + (s.cachedTokens ?? 0), 0) : null;
  const reasoning = last.usage?.reasoningTokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...(cached === null ? {} : { prompt_tokens_details: { cached_tokens: cached } }),
    ...(reasoning == null ? {} : { completion_tokens_details: { reasoning_tokens: reasoning } }),
  };
}

/** The prompt tokens the upstream calls wrote to its cache, added up, when any call reported them. */
function totalCacheWrites(steps: readonly ModelUsage[]): { cacheWriteTokens?: number } {
  return steps.some((s) => s.cacheWriteTokens != null) ? { cacheWriteTokens: steps.reduce((n, s) => n + (s.cacheWriteTokens ?? 0), 0) } : {};
}
