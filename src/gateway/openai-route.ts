import { Hono } from "hono";
import type { ApiEnv } from "../http/env";
import { frontendRequest } from "../http/frontend";
import { ChatCompletionRequest, PASSED_THROUGH, type ChatCompletion, type ChatCompletionChunk } from "../protocol/gateway-openai";
import { paramOf, sseResponse, startRun, TURN_IDS_HEADER } from "./core";
import { errorResponse, gatewayError } from "./errors";
import { openAIHeld, runLoop, type LoopAnswer } from "./loop";
import { gatewayBody } from "./request-body";

/**
 * The model gateway, OpenAI Chat Completions side (docs/gateway.md): `POST /v1/chat/completions` with `model` naming the
 * agent and `X-Conversation-Id` the conversation. It takes the frontend API's key, and refuses a missing one or an
 * oversized body as the API does (problem+json); every other failure answers in OpenAI's error shape.
 */
export const gatewayOpenAI = new Hono<ApiEnv>();

gatewayOpenAI.use("/chat/completions", ...frontendRequest);

gatewayOpenAI.post("/chat/completions", gatewayBody(ChatCompletionRequest, paramOf, (error) => errorResponse(error)), async (c) => {
  const request = c.req.valid("json");

  const stream = request.stream === true;
  const params: Record<string, unknown> = {};
  for (const key of PASSED_THROUGH) if (request[key] != null) params[key] = request[key];
  const started = await startRun(c, {
    model: request.model,
    messages: request.messages,
    stream,
    params,
    toolChoice: request.tool_choice ?? undefined,
    clientTools: request.tools ?? [],
    held: openAIHeld,
  });
  if (!started.ok) return errorResponse(started.problem);
  const { ctx, first, headers } = started.value;
  const id = `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`;
  const created = Math.floor(Date.now() / 1000);

  if (!stream) {
    const answer = await runLoop(ctx, first, null);
    if (!answer.ok) return errorResponse(answer.problem, headers);
    headers["X-Gateway-Steps"] = String(answer.value.steps);
    headers[TURN_IDS_HEADER] = answer.value.turnIds.join(", ");
    return new Response(JSON.stringify(completion(id, created, request.model, answer.value)), { status: 200, headers: { "Content-Type": "application/json", ...headers } });
  }

  // Streamed: text goes out as it comes; the client's tool calls, the finish reason and usage when the run ends.
  // While nothing else is sent (the runtime's tools running, a slow upstream), a `: keep-alive` comment every
  // GATEWAY_KEEPALIVE_MS.
  const includeUsage = request.stream_options?.include_usage === true;
  const data = (value: unknown) => `data: ${typeof value === "string" ? value : JSON.stringify(value)}\n\n`;
  const chunk = (delta: ChatCompletionChunk["choices"][number]["delta"], finish: ChatCompletionChunk["choices"][number]["finish_reason"] = null): ChatCompletionChunk => ({
    id,
    object: "chat.completion.chunk",
    created,
    model: request.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  return sseResponse(
    c,
    headers,
    async (send) => {
      await send(data(chunk({ role: "assistant", content: "", refusal: null })));
      const answer = await runLoop(ctx, first, async (d) => send(data(chunk(d))));
      if (!answer.ok) {
        // The SDKs raise an APIError for an event carrying `error`; no [DONE] follows.
        await send(data(answer.problem.body));
        return;
      }
      for (const [index, call] of answer.value.toolCalls.entries()) await send(data(chunk({ tool_calls: [{ index, ...call }] })));
      await send(data(chunk({}, answer.value.finishReason)));
      if (includeUsage) await send(data({ id, object: "chat.completion.chunk", created, model: request.model, choices: [], usage: answer.value.usage }));
      await send(data("[DONE]"));
    },
    data(gatewayError(500, "the gateway failed while streaming", "internal_error").body),
    // An SSE comment: the SDKs' parsers drop it (an `event:` line would reach the OpenAI SDK as a chunk).
    ": keep-alive\n\n",
  );
});

function completion(id: string, created: number, model: string, answer: LoopAnswer): ChatCompletion {
  const message = { role: "assistant" as const, content: answer.content, refusal: answer.refusal, ...(answer.toolCalls.length ? { tool_calls: answer.toolCalls } : {}) };
  return { id, object: "chat.completion", created, model, choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finishReason }], usage: answer.usage };
}
