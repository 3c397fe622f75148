import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { bearer, frontendOwner } from "../http/auth";
import type { ApiEnv } from "../http/env";
import { serverTiming } from "../http/frontend";
import { MessagesRequest, type AnthropicMessage, type AnthropicStreamEvent } from "../protocol/gateway-anthropic";
import { LIMITS } from "../protocol/limits";
import { anthropicError, anthropicUsage, contentBlocks, gatewayRequest, stopReason } from "./anthropic-format";
import { sseResponse, startRun, TURN_IDS_HEADER } from "./core";
import { gatewayError, type GatewayError } from "./errors";
import { runLoop } from "./loop";
import { gatewayBody } from "./request-body";

/**
 * The model gateway, Anthropic Messages side (docs/gateway.md): `POST /v1/messages` with `model` naming the agent and
 * `X-Conversation-Id` the conversation, on the same core as `/v1/chat/completions`. The key comes as `x-api-key` (what
 * `@anthropic-ai/sdk` sends) or `Authorization: Bearer`; every failure, authentication included, answers in Anthropic's
 * error shape. Mounted ahead of the frontend API's bearer-only authentication (src/worker.ts).
 */
export const gatewayAnthropic = new Hono<ApiEnv>();

/** A failure in Anthropic's shape; every answer carries a `request-id`, a refusal before the request was read too. */
function failure(error: GatewayError, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(anthropicError(error)), { status: error.status, headers: { "Content-Type": "application/json", "request-id": requestId(), ...headers, ...error.headers } });
}

const requestId = () => `req_${crypto.randomUUID().replaceAll("-", "")}`;

/** A frontend API key, as `x-api-key` or a bearer token. */
const anthropicKey = createMiddleware<ApiEnv>(async (c, next) => {
  const owner = await frontendOwner(c.env, c.req.header("x-api-key")?.trim() || bearer(c.req.header("Authorization")));
  if (!owner) return failure(gatewayError(401, "send a frontend API key as 'x-api-key: <key>' or 'Authorization: Bearer <key>'", "unauthorized"));
  c.set("owner", owner);
  await next();
});

gatewayAnthropic.use("/messages", serverTiming);
gatewayAnthropic.use("/messages", anthropicKey);
gatewayAnthropic.use(
  "/messages",
  bodyLimit({ maxSize: LIMITS.httpBodyBytes, onError: () => failure(gatewayError(413, `bodies are limited to ${LIMITS.httpBodyBytes} bytes`, "payload_too_large")) }),
);

const messagesBody = gatewayBody(
  MessagesRequest,
  (path) => path.map(String).join("."),
  (error) => failure(error),
);

gatewayAnthropic.post("/messages", messagesBody, async (c) => {
  const rid = requestId();
  const request = c.req.valid("json");
  const translated = gatewayRequest(request);
  if (!translated.ok) return failure(translated.problem, { "request-id": rid });

  const started = await startRun(c, translated.value);
  if (!started.ok) return failure(started.problem, { "request-id": rid });
  const { ctx, first } = started.value;
  const headers: Record<string, string> = { ...started.value.headers, "request-id": rid };
  const id = `msg_${crypto.randomUUID().replaceAll("-", "")}`;

  if (!translated.value.stream) {
    const answer = await runLoop(ctx, first, null);
    if (!answer.ok) return failure(answer.problem, headers);
    headers["X-Gateway-Steps"] = String(answer.value.steps);
    headers[TURN_IDS_HEADER] = answer.value.turnIds.join(", ");
    const message: AnthropicMessage = {
      id,
      type: "message",
      role: "assistant",
      model: request.model,
      content: contentBlocks(answer.value),
      stop_reason: stopReason(answer.value),
      stop_sequence: null,
      usage: anthropicUsage(answer.value.usage, answer.value.cacheWriteTokens),
    };
    return new Response(JSON.stringify(message), { status: 200, headers: { "Content-Type": "application/json", ...headers } });
  }

  // Streamed: message_start, the text as one block as it comes (every step's), then each client tool call as a
  // tool_use block with its whole input in one input_json_delta, message_delta (stop reason, usage), message_stop.
  // While nothing else is sent (the runtime's tools running, a slow upstream), a `ping` every GATEWAY_KEEPALIVE_MS.
  const event = (e: AnthropicStreamEvent) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
  return sseResponse(
    c,
    headers,
    async (send) => {
      const zero = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
      await send(event({ type: "message_start", message: { id, type: "message", role: "assistant", model: request.model, content: [], stop_reason: null, stop_sequence: null, usage: zero } }));
      await send(event({ type: "ping" }));
      let textOpen = false;
      const answer = await runLoop(ctx, first, async (d) => {
        const text = d.content ?? d.refusal;
        if (!text) return;
        if (!textOpen) {
          textOpen = true;
          await send(event({ type: "content_block_start", index: 0, content_block: { type: "text", text: "", citations: null } }));
        }
        await send(event({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }));
      });
      if (!answer.ok) {
        // The SDK raises an APIError for an `error` event; no message_stop follows.
        await send(event({ type: "error", error: anthropicError(answer.problem).error }));
        return;
      }
      if (textOpen) await send(event({ type: "content_block_stop", index: 0 }));
      let index = textOpen ? 1 : 0;
      for (const block of contentBlocks(answer.value)) {
        if (block.type !== "tool_use") continue;
        await send(event({ type: "content_block_start", index, content_block: { ...block, input: {} } }));
        await send(event({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } }));
        await send(event({ type: "content_block_stop", index }));
        index += 1;
      }
      await send(event({ type: "message_delta", delta: { stop_reason: stopReason(answer.value), stop_sequence: null }, usage: anthropicUsage(answer.value.usage, answer.value.cacheWriteTokens) }));
      await send(event({ type: "message_stop" }));
    },
    event({ type: "error", error: { type: "api_error", message: "the gateway failed while streaming" } }),
    // Anthropic's own keep-alive: the SDK's stream reader skips `ping` events.
    event({ type: "ping" }),
  );
});
