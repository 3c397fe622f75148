/**
 * Subagents in gateway mode (docs/tools.md, "Subagents"): when a turn of the gateway's loop started subagents (the
 * model called `delegate`), the gateway runs each child itself, within the parent's request, before the parent's next
 * step: the child's turns against the same upstream model, up to the step limit, its own tool calls run by the
 * runtime (its own subagents too, the same way), and its final answer closes the parent's call. The parent's model
 * then reads that answer as the call's result, and nothing of the child's steps: they are not streamed to the client.
 */
import { env as workerEnv } from "cloudflare:workers";
import type { Conversation } from "../conversation/conversation";
import type { ModelUsage } from "../conversation/gateway-store";
import { conversationStub } from "../conversation/stub";
import { hubStub } from "../hub/stub";
import type { Env } from "../platform/env";
import type { Owner } from "../protocol/owner";
import type { TurnResult } from "../protocol/frontend";
import { TurnBody } from "../protocol/http";
import { upstreamConfig, type UpstreamConfig } from "../platform/config";
import { failWith, ok, type Result } from "../core/problem";
import { modelClient } from "../model";
import { fromProblem, gatewayError, upstreamError, type GatewayError } from "./errors";
import { stepUsage } from "./upstream";

/** What a gateway request's subagents run with: its owner, upstream, settings and step limit (a LoopContext has them). */
interface ChildRun {
  owner: Owner;
  config: UpstreamConfig;
  upstreamModel: string;
  params: Record<string, unknown>;
  maxSteps: number;
}

type Delegated = NonNullable<NonNullable<TurnResult["envelope"]["tools"]>["delegated"]>[number];

/**
 * The one hook the gateway's loop calls after each turn it takes: a turn that started no subagent comes back as it
 * is; otherwise every child runs to its final answer, then the parent continues and its next input (with the
 * children's answers as the calls' results) is returned.
 */
export async function settleDelegations(ctx: ChildRun & { stub: DurableObjectStub<Conversation>; agent: string; run: string }, turn: TurnResult): Promise<Result<TurnResult, GatewayError>> {
  if (!turn.envelope.tools?.delegated?.length) return ok(turn);
  const run: ChildRun = { owner: ctx.owner, config: ctx.config, upstreamModel: ctx.upstreamModel, params: ctx.params, maxSteps: ctx.maxSteps };
  return settle(run, ctx.stub, ctx.agent, turn, ctx.run);
}

/** `gatewayRun`: the parent's run, when `stub` is the parent's: its next turn is refused once a newer request interrupted it. */
async function settle(run: ChildRun, stub: DurableObjectStub<Conversation>, agent: string, turn: TurnResult, gatewayRun?: string): Promise<Result<TurnResult, GatewayError>> {
  const delegated = turn.envelope.tools?.delegated ?? [];
  if (delegated.length === 0) return ok(turn);
  for (const child of delegated) {
    const done = await runChild(run, child);
    if (!done.ok) return done;
  }
  // Marked as the gateway's (`{}` without its run): its spans are the request's, not a trace of their own.
  const next = await stub.turn(run.owner, { turnId: crypto.randomUUID(), agent }, gatewayRun === undefined ? {} : { run: gatewayRun });
  return next.ok ? ok(next.value) : failWith(fromProblem(next.problem));
}

const STEP_LIMIT_NOTE = "[the subagent reached its step limit before its final answer]";

/** One child, from its first turn (taken when the call started it) to its final answer, which closes the parent's call. */
async function runChild(run: ChildRun, child: Delegated): Promise<Result<true, GatewayError>> {
  const stub = conversationStub(workerEnv as unknown as Env, run.owner, child.childConversationId);
  const first = await stub.pastTurn(run.owner, child.turnId);
  if (!first.ok) return failWith(fromProblem(first.problem));
  let turn: TurnResult = first.value;
  const usage: ModelUsage[] = [];
  const texts: string[] = [];
  const failed = async (error: GatewayError) => {
    if (usage.length) await stub.gatewayRecord(run.owner, { usage });
    return failWith(error);
  };
  // The child's own agent may name its upstream and its model; else the parent's request's.
  const childAgent = await hubStub(workerEnv as unknown as Env, run.owner).agent(child.agent);
  const named = childAgent?.upstream === undefined ? null : upstreamConfig(workerEnv as unknown as Env, childAgent.upstream);
  const config = named ?? run.config;
  const model = childAgent?.model ?? named?.model ?? run.upstreamModel;
  let answer: string | null = null;
  for (let step = 1; answer === null; step++) {
    const tools = turn.tools ?? [];
    const { parallel_tool_calls, ...params } = run.params;
    const body = {
      model,
      messages: turn.messages,
      ...(tools.length ? { tools, ...(parallel_tool_calls === undefined ? {} : { parallel_tool_calls }) } : {}),
      ...params,
    };
    const read = await modelClient(config).complete(body);
    if (!read.ok) return failed(upstreamError(read.problem));
    const step_ = read.value;
    usage.push(...stepUsage(step_, turn.turnId, step));
    if (step_.content) texts.push(step_.content);
    if (step_.toolCalls.length === 0) {
      answer = step_.content ?? step_.refusal ?? "";
      break;
    }
    // The child's tool calls: its next turn runs them (and starts its own subagents, run here the same way).
    const reply = { role: "assistant", content: step_.content ?? null, tool_calls: step_.toolCalls };
    const parsed = TurnBody.safeParse({ turnId: crypto.randomUUID(), agent: child.agent, reply });
    if (!parsed.success) return failed(gatewayError(502, `the upstream model's reply cannot be stored: ${parsed.error.issues[0]?.message}`, "upstream_invalid"));
    // A child's steps are not checked by output hooks (docs/hooks.md, "Not built"): its turn must not refuse them either.
    const next = await stub.turn(run.owner, parsed.data, { outputReviewed: true });
    if (!next.ok) return failed(fromProblem(next.problem));
    const settled = await settle(run, stub, child.agent, next.value);
    if (!settled.ok) return failed(settled.problem);
    turn = settled.value;
    if (step >= run.maxSteps) answer = texts.length ? `${texts.join("\n\n")}\n\n${STEP_LIMIT_NOTE}` : STEP_LIMIT_NOTE;
  }
  if (usage.length) await stub.gatewayRecord(run.owner, { usage });
  const done = await stub.completeDelegation(run.owner, { role: "assistant", content: answer });
  return done.ok ? ok(true) : failWith(fromProblem(done.problem));
}
