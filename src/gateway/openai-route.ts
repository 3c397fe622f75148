import { Hono } from "hono";
import type { ApiEnv } from "../api/auth";
import { conversationStub } from "../env";
import { TurnBody } from "../protocol/http";
import { ConversationId } from "../protocol/methods";
import { QualifiedName } from "../protocol/names";
import { ChatCompletionRequest, PASSED_THROUGH, type ChatCompletion, type ChatCompletionChunk } from "../protocol/gateway-openai";
import { maxSteps, upstreamConfig } from "./config";
import { newPart } from "./diff";
import { errorResponse, fromProblem, gatewayError, type GatewayError } from "./errors";
import { runLoop, upstreamBody, type LoopAnswer, type LoopContext } from "./loop";
import { openUpstream } from "./upstream";

/**
 * The model gateway, OpenAI Chat Completions side (docs/gateway.md): `POST /v1/chat/completions` with `model` naming the
 * agent and `X-Conversation-Id` the conversation. Every failure answers in OpenAI's error shape.
 */
export const gatewayOpenAI = new Hono<ApiEnv>();

const CONVERSATION_HEADER = "X-Conversation-Id";

gatewayOpenAI.post("/chat/completions", async (c) => {
  const config = upstreamConfig(c.env);
  if (!config) return errorResponse(gatewayError(503, "the model gateway has no upstream: the deployment sets UPSTREAM_URL (and UPSTREAM_MODEL, UPSTREAM_KEY)", "upstream_not_configured"));
  const parsed = await readRequest(c.req.raw);
  if (!parsed.ok) return errorResponse(parsed.error);
  const request = parsed.value;

  // `model` is the agent, `app:agent`, optionally with the upstream model after an `@`.
  const at = request.model.indexOf("@");
  const agent = QualifiedName.safeParse(at === -1 ? request.model : request.model.slice(0, at));
  if (!agent.success) return errorResponse(gatewayError(400, "`model` names the agent as 'app:agent' (optionally 'app:agent@upstream-model')", "invalid_model", { param: "model" }));
  const upstreamModel = at === -1 ? config.model : request.model.slice(at + 1);
  if (!upstreamModel) return errorResponse(gatewayError(400, "no upstream model: name it in `model` as 'app:agent@upstream-model', or set UPSTREAM_MODEL", "invalid_model", { param: "model" }));

  // The conversation: the one named, else a new one for this agent.
  const owner = c.var.owner;
  const named = c.req.header(CONVERSATION_HEADER);
  let conversationId: string;
  let cursor = null;
  // Checked before a new conversation is made, so a refused request leaves none behind.
  const early = named === undefined ? await newPart(request.messages, null) : null;
  if (early && !early.ok) return errorResponse(early.error);
  if (named !== undefined) {
    const id = ConversationId.safeParse(named);
    const found = id.success ? await conversationStub(c.env, owner, id.data).gatewayCursor(owner) : null;
    if (!id.success || !found?.ok) return errorResponse(gatewayError(404, `no conversation '${named}'`, "conversation_not_found", { param: CONVERSATION_HEADER }));
    conversationId = id.data;
    cursor = found.value.cursor;
  } else {
    conversationId = crypto.randomUUID();
    const created = await conversationStub(c.env, owner, conversationId).create(owner, conversationId, agent.data);
    if (!created.ok) return errorResponse(modelProblem(fromProblem(created.problem)));
  }
  const stub = conversationStub(c.env, owner, conversationId);
  const headers: Record<string, string> = { [CONVERSATION_HEADER]: conversationId };

  const diffed = early ?? (await newPart(request.messages, cursor));
  if (!diffed.ok) return errorResponse(diffed.error, headers);
  const part = diffed.value;
  const body = TurnBody.safeParse(
    part.kind === "retry"
      ? { agent: agent.data }
      : { agent: agent.data, ...(part.message === undefined ? {} : { message: part.message }), ...(part.images ? { images: part.images } : {}), ...(part.toolResults ? { toolResults: part.toolResults } : {}) },
  );
  if (!body.success) {
    const issue = body.error.issues[0]!;
    return errorResponse(gatewayError(400, `messages: ${issue.message} (${issue.path.join(".")})`, "invalid_message", { param: "messages" }), headers);
  }
  const turn = await stub.turn(owner, body.data);
  if (!turn.ok) return errorResponse(modelProblem(fromProblem(turn.problem)), headers);
  headers["X-Turn-Id"] = turn.value.turnId;
  // Consumed, and awaiting the model's answer: from here a failure leaves a conversation a retry continues.
  await stub.gatewayRecord(owner, { cursor: part.consumed });

  const stream = request.stream === true;
  const params: Record<string, unknown> = {};
  for (const key of PASSED_THROUGH) if (request[key] != null) params[key] = request[key];
  const ctx: LoopContext = {
    stub,
    owner,
    agent: agent.data,
    config,
    upstreamModel,
    params,
    toolChoice: request.tool_choice ?? undefined,
    clientTools: request.tools ?? [],
    stream,
    maxSteps: maxSteps(c.env),
    consumed: part.consumed.consumed,
  };
  const opened = await openUpstream(config, upstreamBody(ctx, turn.value, 1));
  if (!opened.ok) return errorResponse(opened.error, headers);
  const id = `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`;
  const created = Math.floor(Date.now() / 1000);

  if (!stream) {
    const answer = await runLoop(ctx, { turn: turn.value, response: opened.value }, null);
    if (!answer.ok) return errorResponse(answer.error, headers);
    headers["X-Gateway-Steps"] = String(answer.value.steps);
    return new Response(JSON.stringify(completion(id, created, request.model, answer.value)), { status: 200, headers: { "Content-Type": "application/json", ...headers } });
  }

  // Streamed: text goes out as it comes; the client's tool calls, the finish reason and usage when the run ends.
  const includeUsage = request.stream_options?.include_usage === true;
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const encoder = new TextEncoder();
  let open = true;
  const send = async (data: unknown) => {
    if (!open) return;
    // A client gone away does not stop the run: the answer is still stored, so the conversation stays whole.
    await writer.write(encoder.encode(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`)).catch(() => (open = false));
  };
  const chunk = (delta: ChatCompletionChunk["choices"][number]["delta"], finish: ChatCompletionChunk["choices"][number]["finish_reason"] = null): ChatCompletionChunk => ({
    id,
    object: "chat.completion.chunk",
    created,
    model: request.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const run = (async () => {
    await send(chunk({ role: "assistant", content: "", refusal: null }));
    const answer = await runLoop(ctx, { turn: turn.value, response: opened.value }, async (d) => send(chunk(d)));
    if (!answer.ok) {
      // The SDKs raise an APIError for an event carrying `error`; no [DONE] follows.
      await send(answer.error.body);
    } else {
      for (const [index, call] of answer.value.toolCalls.entries()) await send(chunk({ tool_calls: [{ index, ...call }] }));
      await send(chunk({}, answer.value.finishReason));
      if (includeUsage) await send({ id, object: "chat.completion.chunk", created, model: request.model, choices: [], usage: answer.value.usage });
      await send("[DONE]");
    }
    if (open) await writer.close().catch(() => undefined);
  })().catch(async (error: unknown) => {
    console.error("gateway stream failed", error instanceof Error ? error.message : String(error));
    await send(gatewayError(500, "the gateway failed while streaming", "internal_error").body);
    await writer.close().catch(() => undefined);
  });
  c.executionCtx.waitUntil(run);
  return new Response(readable, { status: 200, headers: { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache", ...headers } });
});

function completion(id: string, created: number, model: string, answer: LoopAnswer): ChatCompletion {
  const message = { role: "assistant" as const, content: answer.content, refusal: answer.refusal, ...(answer.toolCalls.length ? { tool_calls: answer.toolCalls } : {}) };
  return { id, object: "chat.completion", created, model, choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finishReason }], usage: answer.usage };
}

/** An unknown agent is an unknown `model` to an OpenAI client. */
function modelProblem(error: GatewayError): GatewayError {
  if (error.body.error.code === "not-found" && /agent/.test(error.body.error.message)) {
    return gatewayError(404, error.body.error.message, "model_not_found", { param: "model" });
  }
  return error;
}

async function readRequest(raw: Request): Promise<{ ok: true; value: ChatCompletionRequest } | { ok: false; error: GatewayError }> {
  let json: unknown;
  try {
    json = JSON.parse(await raw.text());
  } catch {
    return { ok: false, error: gatewayError(400, "the body is not valid JSON", "invalid_json") };
  }
  const parsed = ChatCompletionRequest.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  const param = issue.path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
  return { ok: false, error: gatewayError(400, `${param || "body"}: ${issue.message}`, "invalid_request", { param: param || null }) };
}
