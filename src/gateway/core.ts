import type { Context } from "hono";
import type { ApiEnv } from "../http/env";
import type { GatewayCursor } from "../conversation/gateway-store";
import { conversationStub } from "../conversation/stub";
import { hubStub } from "../hub/stub";
import type { ChatRequestMessage, ClientTool } from "../protocol/gateway-openai";
import { TurnBody } from "../protocol/http";
import { ConversationId } from "../protocol/methods";
import { QualifiedName } from "../protocol/names";
import { keepAliveMs, maxSteps, otlpTarget, upstreamConfig, upstreamUrlVar } from "../platform/config";
import { continuationChains, newPart, readHistory } from "./diff";
import { fromProblem, gatewayError, type GatewayError } from "./errors";
import { failWith, ok, type Result } from "../core/problem";
import { callStep, type HeldAnswer, type LoopContext } from "./loop";
import type { PendingAnswer } from "./upstream";
import { RunTrace } from "./trace";
import type { TurnResult } from "../protocol/frontend";

/**
 * The gateway core both wire formats share (docs/gateway.md): a request read from either API becomes a GatewayRequest
 * (the client's messages in chat form, the upstream settings in OpenAI's names), and `startRun` does the rest up to the
 * first upstream call: the agent, the conversation, the diff rule, the turn, the cursor. The route then reads the run
 * with `runLoop` and answers in its own format.
 */

export const CONVERSATION_HEADER = "X-Conversation-Id";
/** On a request without X-Conversation-Id whose history more than one conversation has consumed: the others, best first. */
export const ALSO_MATCHED_HEADER = "X-Conversation-Also-Matched";
/** The turn that took the request's new part (step 1's). */
export const TURN_HEADER = "X-Turn-Id";
/**
 * Every step's turn, in order, comma-separated (the first is X-Turn-Id's): on an answer read whole. A streamed answer's
 * headers go out before its steps run: it carries X-Turn-Id only, whose turn lists them all in `gatewaySteps` (docs/gateway.md).
 */
export const TURN_IDS_HEADER = "X-Turn-Ids";

export interface GatewayRequest {
  /** `model` as the client sent it: `app:agent`, optionally `@upstream-model`. */
  model: string;
  /** The client's messages in chat form (system messages, if any, are left out by the diff). */
  messages: readonly ChatRequestMessage[];
  stream: boolean;
  /** Settings passed to every upstream call, in the upstream's (OpenAI's) names. */
  params: Record<string, unknown>;
  toolChoice: unknown;
  clientTools: ClientTool[];
  /** The answer as the client holds it, in chat form (the cursor hashes it to recognise it when it is resent). */
  held: (answer: HeldAnswer) => ChatRequestMessage;
  /** Where message `i` of `messages` (system messages aside) is in the client's own request, for errors' `param`. */
  where?: (index: number) => string;
}

export interface StartedRun {
  ctx: LoopContext;
  first: { turn: TurnResult; answer: PendingAnswer };
  /** X-Conversation-Id and X-Turn-Id, for every answer from here. */
  headers: Record<string, string>;
}

/**
 * Runs the request's turn and opens its first upstream call; every failure comes back as a GatewayError, whose
 * headers carry X-Conversation-Id and X-Turn-Id once they are known.
 */
export async function startRun(c: Context<ApiEnv>, request: GatewayRequest): Promise<Result<StartedRun, GatewayError>> {
  const requestStart = Date.now();
  const headers: Record<string, string> = {};
  let trace: RunTrace | null = null;
  const failed = (error: GatewayError) => {
    trace?.end({ error: error.body.error.code ?? String(error.status) });
    return failWith({ ...error, headers: { ...headers, ...error.headers } });
  };

  // `model` is the agent, `app:agent`, optionally with the upstream model after an `@`.
  const at = request.model.indexOf("@");
  const agent = QualifiedName.safeParse(at === -1 ? request.model : request.model.slice(0, at));
  if (!agent.success) return failed(gatewayError(400, "`model` names the agent as 'app:agent' (optionally 'app:agent@upstream-model')", "invalid_model", { param: "model" }));
  // The upstream: the agent's named one, else the deployment's; the model: the request's, else the agent's, else the
  // upstream's own.
  const owner = c.var.owner;
  const agentInfo = await hubStub(c.env, owner).agent(agent.data);
  const config = upstreamConfig(c.env, agentInfo?.upstream);
  if (!config) {
    return failed(gatewayError(503, `the model gateway has no upstream for this agent: the deployment sets ${upstreamUrlVar(agentInfo?.upstream)} (with its model and key)`, "upstream_not_configured"));
  }
  const upstreamModel = at === -1 ? (agentInfo?.model ?? config.model) : request.model.slice(at + 1);
  if (!upstreamModel) return failed(gatewayError(400, "no upstream model: name it in `model` as 'app:agent@upstream-model', give the agent a `model`, or set UPSTREAM_MODEL", "invalid_model", { param: "model" }));

  // The conversation: the one named; else the one whose consumed history this request's extends (a client that can
  // set only a base URL and key resends its history); else a new one, made with the turn, so a refused request leaves
  // none behind.
  const history = await readHistory(request.messages);
  const named = c.req.header(CONVERSATION_HEADER);
  let conversationId: string | null = null;
  let cursor: GatewayCursor | null = null;
  if (named !== undefined) {
    const id = ConversationId.safeParse(named);
    const found = id.success ? await conversationStub(c.env, owner, id.data).gatewayCursor(owner) : null;
    if (!id.success || !found?.ok) return failed(gatewayError(404, `no conversation '${named}'`, "conversation_not_found", { param: CONVERSATION_HEADER }));
    conversationId = id.data;
    cursor = found.value.cursor;
  } else {
    const chains = continuationChains(history);
    const [match, ...others] = chains.length ? await hubStub(c.env, owner).gatewayConversations(agent.data, chains) : [];
    if (match !== undefined) {
      const found = await conversationStub(c.env, owner, match).gatewayCursor(owner);
      if (!found.ok) return failed(fromProblem(found.problem));
      conversationId = match;
      cursor = found.value.cursor;
      if (others.length) headers[ALSO_MATCHED_HEADER] = others.join(", ");
    }
  }
  if (conversationId !== null) headers[CONVERSATION_HEADER] = conversationId;

  const diffed = await newPart(history, cursor, request.where);
  if (!diffed.ok) return failed(diffed.problem);
  const part = diffed.value;
  const body = TurnBody.safeParse(
    part.kind === "retry"
      ? { agent: agent.data }
      : { agent: agent.data, ...(part.message === undefined ? {} : { message: part.message }), ...(part.images ? { images: part.images } : {}), ...(part.toolResults ? { toolResults: part.toolResults } : {}) },
  );
  if (!body.success) {
    const issue = body.error.issues[0]!;
    return failed(gatewayError(400, `messages: ${issue.message} (${issue.path.join(".")})`, "invalid_message", { param: "messages" }));
  }
  // Consumed, and awaiting the model's answer, with the turn: from here a failure leaves a conversation a retry
  // continues. Another request that took this part meanwhile makes this one a 409.
  const run = crypto.randomUUID();
  const id = conversationId ?? crypto.randomUUID();
  const stub = conversationStub(c.env, owner, id);
  const target = otlpTarget(c.env);
  if (target) {
    const run = { agent: agent.data, model: upstreamModel, provider: config.api ?? "openai", server: new URL(config.url).host, tenant: owner.tenant, start: requestStart };
    trace = new RunTrace(target, (work) => c.executionCtx.waitUntil(work), run);
  }
  const turnStart = Date.now();
  const turn =
    conversationId === null ? await stub.gatewayStart(owner, id, body.data, part.consumed, run) : await stub.gatewayTurn(owner, body.data, { expected: cursor, next: part.consumed }, run);
  if (!turn.ok) return failed(modelProblem(fromProblem(turn.problem)));
  trace?.turn(turn.value, turnStart, Date.now());
  headers[CONVERSATION_HEADER] = id;
  headers[TURN_HEADER] = turn.value.turnId;

  const ctx: LoopContext = {
    stub,
    owner,
    agent: agent.data,
    config,
    upstreamModel,
    params: request.params,
    toolChoice: request.toolChoice,
    clientTools: request.clientTools,
    stream: request.stream,
    maxSteps: maxSteps(c.env),
    run,
    consumed: part.consumed.consumed,
    chain: part.consumed.chain,
    held: request.held,
    trace,
  };
  const opened = await callStep(ctx, turn.value, 1);
  if (!opened.ok) {
    await stub.gatewayRecord(owner, { run, end: true, steps: [turn.value.turnId] });
    return failed(opened.problem);
  }
  return ok({ ctx, first: { turn: turn.value, answer: opened.value }, headers });
}

/** An unknown agent is an unknown `model` to a client. */
function modelProblem(error: GatewayError): GatewayError {
  if (error.body.error.code === "not-found" && /agent/.test(error.body.error.message)) {
    return gatewayError(404, error.body.error.message, "model_not_found", { param: "model" });
  }
  return error;
}

/**
 * A streamed answer: `produce` writes the events (already framed as SSE text, one whole event per `send`) and runs
 * after the response is returned, under waitUntil. A client gone away does not stop the run: the answer is still
 * stored, so the conversation stays whole. If `produce` throws, `crashed` is the last event sent. After
 * GATEWAY_KEEPALIVE_MS of silence (the runtime running tools between upstream calls, a slow upstream) `keepAlive` is
 * sent, and again after each such stretch: always between two events, never before the first or after the last.
 */
export function sseResponse(
  c: Context<ApiEnv>,
  headers: Record<string, string>,
  produce: (send: (event: string) => Promise<void>) => Promise<void>,
  crashed: string,
  keepAlive: string,
): Response {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const encoder = new TextEncoder();
  const every = keepAliveMs(c.env);
  let open = true;
  let ended = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const write = async (text: string) => {
    if (!open) return;
    await writer.write(encoder.encode(text)).catch(() => (open = false));
  };
  // Each write is one whole event and writes go out in order, so a keep-alive never lands inside an event.
  const rearm = () => {
    clearTimeout(timer);
    timer = open && !ended && every > 0 ? setTimeout(() => void write(keepAlive).then(rearm), every) : undefined;
  };
  const send = async (event: string) => {
    clearTimeout(timer);
    await write(event);
    rearm();
  };
  const end = async (last?: string) => {
    ended = true;
    clearTimeout(timer);
    if (last !== undefined) await write(last);
    if (open) await writer.close().catch(() => undefined);
  };
  const run = (async () => {
    await produce(send);
    await end();
  })().catch(async (error: unknown) => {
    console.error("gateway stream failed", error instanceof Error ? error.message : String(error));
    await end(crashed);
  });
  c.executionCtx.waitUntil(run);
  return new Response(readable, { status: 200, headers: { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache", ...headers } });
}

/** A zod issue's path as a `param`: `messages[2].content`. */
export function paramOf(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
}
