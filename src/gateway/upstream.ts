import type { ModelUsage } from "../conversation/gateway-store";
import { UpstreamChunk, UpstreamCompletion, type UpstreamUsage, type WireToolCall } from "../protocol/gateway-openai";
import type { UpstreamConfig } from "../platform/config";
import { gatewayError, type GatewayError } from "./errors";
import { ANTHROPIC_VERSION, anthropicRequest, readAnthropicMessage, readAnthropicStream } from "./upstream-anthropic";

/** The model's message from one upstream call, its finish reason and its real usage. */
export interface StepAnswer {
  content: string | null;
  refusal: string | null;
  toolCalls: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  finishReason: string;
  /** `cacheWriteTokens`: prompt tokens written to the upstream's cache (an Anthropic upstream reports them; null otherwise). */
  usage: { promptTokens: number; completionTokens: number; cachedTokens: number | null; reasoningTokens: number | null; cacheWriteTokens?: number | null } | null;
  model: string | null;
}

/** A step's usage as the conversation records it (a `model.usage` event on the turn whose input it read); none when the upstream reported none. */
export function stepUsage(answer: StepAnswer, turnId: string, step: number): ModelUsage[] {
  const u = answer.usage;
  if (!u) return [];
  return [{ turnId, step, model: answer.model, promptTokens: u.promptTokens, completionTokens: u.completionTokens, cachedTokens: u.cachedTokens, ...(u.cacheWriteTokens != null ? { cacheWriteTokens: u.cacheWriteTokens } : {}) }];
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: GatewayError };

/** Statuses the client may see as they are: its request was refused for what it asked (not for the deployment's key). */
const PASSED_STATUSES = new Set([400, 404, 408, 409, 413, 422, 429]);

/** The answers of an Anthropic upstream (`UPSTREAM_API=anthropic`): readCompletion and readStream read them as Messages. */
const fromAnthropic = new WeakSet<Response>();

/**
 * Sends one request upstream; a response that is not 2xx becomes an error in OpenAI's shape, with a status the client
 * can act on. `body` is the chat-completions body; for an Anthropic upstream it is converted to a Messages request
 * (src/gateway/upstream-anthropic.ts), and its error shape (`{type: "error", error: {type, message}}`) reads the same.
 */
export async function openUpstream(config: UpstreamConfig, body: Record<string, unknown>, signal?: AbortSignal): Promise<Outcome<Response>> {
  const anthropic = config.api === "anthropic";
  const accept = { Accept: body.stream ? "text/event-stream" : "application/json" };
  const auth: Record<string, string> = anthropic
    ? { "anthropic-version": ANTHROPIC_VERSION, ...(config.key ? { "x-api-key": config.key } : {}) }
    : config.key
      ? { Authorization: `Bearer ${config.key}` }
      : {};
  let res: Response;
  try {
    res = await fetch(config.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...accept, ...auth },
      body: JSON.stringify(anthropic ? anthropicRequest(body) : body),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    return { ok: false, error: gatewayError(502, `the upstream model could not be reached: ${error instanceof Error ? error.message : String(error)}`, "upstream_unreachable") };
  }
  if (res.ok) {
    if (anthropic) fromAnthropic.add(res);
    return { ok: true, value: res };
  }
  const text = await res.text().catch(() => "");
  let upstream: { message?: unknown; type?: unknown; param?: unknown; code?: unknown } = {};
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (parsed && typeof parsed.error === "object" && parsed.error !== null) upstream = parsed.error as typeof upstream;
    else if (parsed && typeof parsed.error === "string") upstream = { message: parsed.error };
  } catch {
    // not JSON: the text itself, shortened, is the message
  }
  const message = typeof upstream.message === "string" ? upstream.message : text.slice(0, 500) || res.statusText || "no message";
  const code = typeof upstream.code === "string" ? upstream.code : null;
  const retryAfter = res.headers.get("Retry-After");
  const headers = retryAfter ? { "Retry-After": retryAfter } : undefined;
  if (PASSED_STATUSES.has(res.status)) {
    const type = typeof upstream.type === "string" ? upstream.type : undefined;
    return { ok: false, error: gatewayError(res.status, message, code, { ...(type ? { type } : {}), param: typeof upstream.param === "string" ? upstream.param : null, ...(headers ? { headers } : {}) }) };
  }
  // The deployment's key refused, or the upstream failing: the client's request was fine, the gateway's upstream was not.
  const why = res.status === 401 || res.status === 403 ? "refused the deployment's key (UPSTREAM_KEY)" : "failed";
  return { ok: false, error: gatewayError(502, `the upstream model ${why} (HTTP ${res.status}): ${message}`, res.status === 401 || res.status === 403 ? "upstream_auth" : (code ?? "upstream_error"), headers ? { headers } : {}) };
}

function usageOf(u: UpstreamUsage | null | undefined): StepAnswer["usage"] {
  if (!u) return null;
  return {
    promptTokens: u.prompt_tokens ?? 0,
    completionTokens: u.completion_tokens ?? 0,
    cachedTokens: u.prompt_tokens_details?.cached_tokens ?? null,
    reasoningTokens: u.completion_tokens_details?.reasoning_tokens ?? null,
    cacheWriteTokens: null,
  };
}

function toolCallsOf(calls: readonly WireToolCall[] | null | undefined): StepAnswer["toolCalls"] {
  return (calls ?? []).map((c) => ({ id: c.id, type: "function" as const, function: { name: c.function.name, arguments: c.function.arguments } }));
}

/** A whole (non-streamed) answer. */
export async function readCompletion(res: Response): Promise<Outcome<StepAnswer>> {
  let json: unknown;
  try {
    json = await res.json();
  } catch {
    return { ok: false, error: gatewayError(502, "the upstream model answered with something that is not JSON", "upstream_invalid") };
  }
  if (fromAnthropic.has(res)) return readAnthropicMessage(json);
  const parsed = UpstreamCompletion.safeParse(json);
  if (!parsed.success) return { ok: false, error: gatewayError(502, "the upstream model's answer is not a chat completion", "upstream_invalid") };
  const choice = parsed.data.choices[0]!;
  const toolCalls = toolCallsOf(choice.message.tool_calls);
  return {
    ok: true,
    value: {
      content: choice.message.content ?? null,
      refusal: choice.message.refusal ?? null,
      toolCalls,
      finishReason: choice.finish_reason ?? (toolCalls.length ? "tool_calls" : "stop"),
      usage: usageOf(parsed.data.usage),
      model: parsed.data.model ?? null,
    },
  };
}

/** Text of an SSE stream, event by event: each event's data lines joined. */
async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let data: string[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += value;
    let newline: number;
    while ((newline = buffer.indexOf("\n")) !== -1) {
      const line = buffer.slice(0, newline).replace(/\r$/, "");
      buffer = buffer.slice(newline + 1);
      if (line === "") {
        if (data.length) yield data.join("\n");
        data = [];
      } else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      // comments (":") and other fields (event:, id:, retry:) carry nothing the gateway reads
    }
  }
  if (data.length) yield data.join("\n");
}

/**
 * A streamed answer, read to its end: text and refusal deltas go to `onText` as they come; tool-call deltas are put
 * together by `index` (by `id` when an upstream leaves the index out, a known compatibility bug). A stream that ends
 * before its finish reason and `[DONE]`, or breaks, or carries an error, is an error: nothing of it is a whole reply.
 */
export async function readStream(res: Response, onText: (delta: { content?: string; refusal?: string }) => Promise<void> | void): Promise<Outcome<StepAnswer>> {
  const broken = (why: string): Outcome<StepAnswer> => ({ ok: false, error: gatewayError(502, `the upstream model's stream broke off: ${why}`, "upstream_stream_broken") });
  if (!res.body) return broken("no body");
  if (fromAnthropic.has(res)) return readAnthropicStream(sseEvents(res.body), onText);
  let content: string | null = null;
  let refusal: string | null = null;
  const calls: { id: string; name: string; arguments: string }[] = [];
  let finishReason: string | null = null;
  let usage: StepAnswer["usage"] = null;
  let model: string | null = null;
  let done = false;
  try {
    for await (const data of sseEvents(res.body)) {
      if (data.trim() === "[DONE]") {
        done = true;
        break;
      }
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        return broken("an event that is not JSON");
      }
      if (json && typeof json === "object" && "error" in json) {
        const e = (json as { error: { message?: unknown } }).error;
        return { ok: false, error: gatewayError(502, `the upstream model failed mid-stream: ${typeof e?.message === "string" ? e.message : JSON.stringify(e)}`, "upstream_error") };
      }
      const chunk = UpstreamChunk.safeParse(json);
      if (!chunk.success) return broken("an event that is not a chat.completion.chunk");
      model ??= chunk.data.model ?? null;
      if (chunk.data.usage) usage = usageOf(chunk.data.usage);
      const choice = chunk.data.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta;
      if (delta?.content) {
        content = (content ?? "") + delta.content;
        await onText({ content: delta.content });
      }
      if (delta?.refusal) {
        refusal = (refusal ?? "") + delta.refusal;
        await onText({ refusal: delta.refusal });
      }
      for (const d of delta?.tool_calls ?? []) {
        let at = d.index ?? -1;
        if (at < 0) at = d.id && !calls.some((c) => c.id === d.id) ? calls.length : Math.max(calls.length - 1, 0);
        const call = (calls[at] ??= { id: "", name: "", arguments: "" });
        if (d.id) call.id = d.id;
        if (d.function?.name) call.name += d.function.name;
        if (d.function?.arguments) call.arguments += d.function.arguments;
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  } catch (error) {
    return broken(error instanceof Error ? error.message : String(error));
  }
  // Some compatible servers end without [DONE]; a finish reason says the answer is whole all the same.
  if (!finishReason) return broken(done ? "it ended without a finish reason" : "it ended before the answer finished");
  const toolCalls = calls.filter(Boolean).map((c, i) => ({ id: c.id || `call_${i}`, type: "function" as const, function: { name: c.name, arguments: c.arguments } }));
  return { ok: true, value: { content, refusal, toolCalls, finishReason, usage, model } };
}
