/**
 * Anthropic Messages ↔ the gateway core: a Messages request becomes a GatewayRequest (its messages in chat form, which
 * the diff rule reads; its tools and settings in the upstream's names), and the run's answer becomes a `message`, its
 * stop reason and usage. Pure functions: anthropic-route.ts does the HTTP.
 */
import type { AnthropicError, AnthropicMessageParam, AnthropicStopReason, AnthropicUsage, ContentBlock, MessagesRequest } from "../protocol/gateway-anthropic";
import type { ChatRequestMessage, ClientTool, CompletionUsage } from "../protocol/gateway-openai";
import type { GatewayRequest } from "./core";
import { failWith, ok, type Result } from "../core/problem";
import { gatewayError, type GatewayError } from "./errors";
import type { HeldAnswer, LoopAnswer } from "./loop";

/** A tool_result the client marks `is_error` reads so to the model: the runtime's results carry no error flag either. */
export const CLIENT_TOOL_ERROR_PREFIX = "[the tool reported an error] ";

/**
 * The client's messages in chat form, with where each came from (`messages.3`): a user message's `tool_result` blocks
 * become `tool` messages (in their order), its text and images a user message; an assistant message's text and
 * `tool_use` blocks one assistant message (thinking and server-tool blocks dropped: the gateway never produces them).
 * Text blocks are joined by a blank line. Images are taken by URL only.
 */
export function chatMessages(messages: readonly AnthropicMessageParam[]): Result<{ messages: ChatRequestMessage[]; origin: string[] }, GatewayError> {
  const out: ChatRequestMessage[] = [];
  const origin: string[] = [];
  const bad = (where: string, message: string) => failWith(gatewayError(400, `${where}: ${message}`, "invalid_message", { param: where }));
  for (const [i, m] of messages.entries()) {
    const at = `messages.${i}`;
    if (m.role === "assistant") {
      const held = assistantMessage(m.content);
      if (!held.ok) return bad(`${at}.content.${held.problem.index}`, held.problem.message);
      out.push(held.value);
      origin.push(at);
      continue;
    }
    if (typeof m.content === "string") {
      out.push({ role: "user", content: m.content });
      origin.push(at);
      continue;
    }
    let texts: string[] = [];
    let images: { type: "image_url"; image_url: { url: string } }[] = [];
    const flush = () => {
      if (!texts.length && !images.length) return;
      out.push({ role: "user", content: [...(texts.length ? [{ type: "text", text: texts.join("\n\n") }] : []), ...images] });
      origin.push(at);
      texts = [];
      images = [];
    };
    for (const [j, block] of m.content.entries()) {
      const where = `${at}.content.${j}`;
      const b = block as Record<string, unknown>;
      if (block.type === "text") {
        if (typeof b.text !== "string") return bad(where, "a text block needs `text`");
        texts.push(b.text);
      } else if (block.type === "image") {
        const source = b.source as { type?: unknown; url?: unknown } | undefined;
        if (source?.type !== "url" || typeof source.url !== "string") {
          return bad(where, "images are taken by https URL only (`source: {type: \"url\", url}`): base64 and file sources are not supported by the gateway");
        }
        images.push({ type: "image_url", image_url: { url: source.url } });
      } else if (block.type === "tool_result") {
        flush();
        if (typeof b.tool_use_id !== "string" || !b.tool_use_id) return bad(where, "a tool_result needs its `tool_use_id`");
        const text = resultText(b.content);
        if (text === null) return bad(`${where}.content`, "a tool result is text, or text blocks (images in results are not supported by the gateway)");
        out.push({ role: "tool", tool_call_id: b.tool_use_id, content: b.is_error === true ? CLIENT_TOOL_ERROR_PREFIX + text : text });
        origin.push(at);
      } else {
        return bad(where, `content blocks of type '${block.type}' are not supported in user messages: text, image (by URL) and tool_result are`);
      }
    }
    flush();
  }
  return ok({ messages: out, origin });
}

function resultText(content: unknown): string | null {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  const texts: string[] = [];
  for (const part of content as { type?: unknown; text?: unknown }[]) {
    if (part?.type !== "text" || typeof part.text !== "string") return null;
    texts.push(part.text);
  }
  return texts.join("\n\n");
}

/** An assistant message in chat form, or which block is wrong and why. */
function assistantMessage(content: AnthropicMessageParam["content"]): Result<ChatRequestMessage, { index: number; message: string }> {
  if (typeof content === "string") return ok({ role: "assistant", content });
  const texts: string[] = [];
  const calls: { id: string; type: "function"; function: { name: string; arguments: string } }[] = [];
  for (const [j, block] of content.entries()) {
    const b = block as Record<string, unknown>;
    if (block.type === "text" && typeof b.text === "string") texts.push(b.text);
    else if (block.type === "tool_use") {
      if (typeof b.id !== "string" || typeof b.name !== "string") return failWith({ index: j, message: "a tool_use block needs `id` and `name`" });
      calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
    }
    // thinking, redacted_thinking, server tools' blocks: never produced by the gateway, not part of what it compares
  }
  return ok({ role: "assistant", content: texts.length ? texts.join("\n\n") : null, ...(calls.length ? { tool_calls: calls } : {}) });
}

/** The run's answer as content blocks: the text (every step's, joined), then the client's tool calls with their input parsed. */
export function contentBlocks(answer: HeldAnswer): ContentBlock[] {
  // A refusal reads as text (as it streams, after the content): Anthropic's answer has no refusal field.
  const text = (answer.content ?? "") + (answer.refusal ?? "");
  return [...(text ? [{ type: "text" as const, text, citations: null }] : []), ...answer.toolCalls.map((c) => ({ type: "tool_use" as const, id: c.id, name: c.function.name, input: toolInput(c.function.arguments) }))];
}

/** A call's arguments as the `input` object Anthropic clients expect (arguments that are not a JSON object: `{}`). */
export function toolInput(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args || "{}");
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The answer as the client holds it: its content blocks, resent as the assistant message, in chat form. */
export function anthropicHeld(answer: HeldAnswer): ChatRequestMessage {
  const held = assistantMessage(contentBlocks(answer));
  return held.ok ? held.value : { role: "assistant", content: null };
}

/** The request in the core's terms. */
export function gatewayRequest(request: MessagesRequest): Result<GatewayRequest, GatewayError> {
  const chat = chatMessages(request.messages);
  if (!chat.ok) return chat;
  const clientTools: ClientTool[] = (request.tools ?? []).map((t) => ({
    type: "function",
    function: { name: t.name, ...(t.description === undefined ? {} : { description: t.description }), parameters: t.input_schema },
  }));
  const params: Record<string, unknown> = { max_tokens: request.max_tokens };
  if (request.temperature !== undefined) params.temperature = request.temperature;
  if (request.top_p !== undefined) params.top_p = request.top_p;
  if (request.stop_sequences?.length) params.stop = request.stop_sequences;
  if (typeof request.metadata?.user_id === "string") params.user = request.metadata.user_id;
  const choice = request.tool_choice;
  let toolChoice: unknown;
  if (choice) {
    toolChoice = choice.type === "auto" ? "auto" : choice.type === "any" ? "required" : choice.type === "none" ? "none" : { type: "function", function: { name: choice.name } };
    if ("disable_parallel_tool_use" in choice && choice.disable_parallel_tool_use === true) params.parallel_tool_calls = false;
  }
  const origin = chat.value.origin;
  return ok({
    model: request.model,
    messages: chat.value.messages,
    stream: request.stream === true,
    params,
    toolChoice,
    clientTools,
    held: anthropicHeld,
    where: (i) => origin[i] ?? "messages",
  });
}

/** Why the answer stopped, in Anthropic's terms; the step limit is `pause_turn` (resend to continue). */
export function stopReason(answer: LoopAnswer): AnthropicStopReason {
  if (answer.stepLimit) return "pause_turn";
  switch (answer.finishReason) {
    case "tool_calls":
      return "tool_use";
    case "length":
      return "max_tokens";
    case "content_filter":
      return "refusal";
    default:
      return answer.refusal && !answer.content ? "refusal" : "end_turn";
  }
}

/**
 * The request's usage in Anthropic's terms, every upstream call added up: `input_tokens` leaves out what was read from
 * the cache (`cache_read_input_tokens`) and what was written to it (`cache_creation_input_tokens`), as Anthropic counts.
 * Cache writes are only known from an Anthropic upstream (`LoopAnswer.cacheWriteTokens`); otherwise they are 0.
 */
export function anthropicUsage(usage: CompletionUsage, cacheWriteTokens = 0): AnthropicUsage {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input_tokens: Math.max(usage.prompt_tokens - cached - cacheWriteTokens, 0),
    output_tokens: usage.completion_tokens,
    cache_creation_input_tokens: cacheWriteTokens,
    cache_read_input_tokens: cached,
  };
}

/** Anthropic's error type for a status (https://docs.anthropic.com/en/api/errors). */
function errorType(status: number): string {
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 504:
      return "timeout_error";
    case 529:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

/** A gateway failure in Anthropic's shape; the gateway's own code rides in `details.error_code` (the SDK's `errorCode`). */
export function anthropicError(error: GatewayError): AnthropicError {
  const code = error.body.error.code;
  return { type: "error", error: { type: errorType(error.status), message: error.body.error.message, ...(code ? { details: { error_code: code } } : {}) } };
}
