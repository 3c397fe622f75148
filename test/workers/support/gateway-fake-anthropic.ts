/**
 * A fake Anthropic Messages upstream for the gateway's workerd tests (`UPSTREAM_API=anthropic`): it answers
 * https://upstream.test/v1/messages in place of the network (the test swaps the isolate's `fetch`, which the Worker
 * and its Durable Objects share here), from a script of replies, and records exactly what it was sent (body and
 * headers). `installFakeAnthropic()` in a test file's top level; it also switches the deployment's env to
 * `UPSTREAM_API=anthropic` for that file's tests (the sibling of support/gateway-fake-upstream.ts, which fakes an
 * OpenAI-compatible upstream).
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, expect } from "vitest";

export interface AnthropicScriptedReply {
  text?: string;
  toolCalls?: { name: string; input?: Record<string, unknown>; id?: string }[];
  /** An HTTP error in Anthropic's shape. */
  error?: { status: number; type: string; message: string };
  /** Streamed: an `error` event after this many text pieces. */
  streamErrorAfter?: number;
  /** Streamed: the connection drops after this many text pieces. */
  breakAfter?: number;
  stopReason?: string;
  usage?: { input_tokens: number; output_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number };
}

export interface AnthropicBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  source?: unknown;
  cache_control?: { type: string };
}

export interface AnthropicUpstreamRequest {
  model: string;
  max_tokens: number;
  system?: AnthropicBlock[];
  messages: { role: "user" | "assistant"; content: AnthropicBlock[] }[];
  tools?: { name: string; description?: string; input_schema: unknown; cache_control?: { type: string } }[];
  tool_choice?: Record<string, unknown>;
  stream?: boolean;
  [key: string]: unknown;
}

export const anthropicUpstream = {
  requests: [] as AnthropicUpstreamRequest[],
  headers: [] as Record<string, string | null>[],
  paths: [] as string[],
  script: [] as AnthropicScriptedReply[],
};

/** The default usage of the n-th call (1-based): what it read from the cache grows, what it wrote stays. */
export function usageOfCall(n: number) {
  return { input_tokens: 10 * n, output_tokens: 7, cache_read_input_tokens: 1000 * (n - 1), cache_creation_input_tokens: 50 };
}

export function installFakeAnthropic(): void {
  const realFetch = globalThis.fetch;
  const vars = env as unknown as Record<string, string | undefined>;
  let before: string | undefined;
  beforeEach(() => {
    before = vars.UPSTREAM_API;
    vars.UPSTREAM_API = "anthropic";
    anthropicUpstream.requests = [];
    anthropicUpstream.headers = [];
    anthropicUpstream.paths = [];
    anthropicUpstream.script = [];
    globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      if (new URL(request.url).hostname !== "upstream.test") return realFetch(input, init);
      return answer(request);
    };
  });
  afterEach(() => {
    globalThis.fetch = realFetch;
    vars.UPSTREAM_API = before;
  });
}

let callCount = 0;

async function answer(request: Request): Promise<Response> {
  const path = new URL(request.url).pathname;
  anthropicUpstream.paths.push(path);
  expect(path).toBe("/v1/messages");
  const body = (await request.json()) as AnthropicUpstreamRequest;
  anthropicUpstream.requests.push(body);
  anthropicUpstream.headers.push({ "x-api-key": request.headers.get("x-api-key"), "anthropic-version": request.headers.get("anthropic-version"), authorization: request.headers.get("Authorization") });
  const reply = anthropicUpstream.script.shift();
  if (!reply) return Response.json({ type: "error", error: { type: "api_error", message: "the script has no reply" } }, { status: 500 });
  if (reply.error) return Response.json({ type: "error", error: { type: reply.error.type, message: reply.error.message } }, { status: reply.error.status, headers: { "Retry-After": "7", "request-id": "req_up" } });
  const calls = (reply.toolCalls ?? []).map((c) => ({ type: "tool_use", id: c.id ?? `toolu_${++callCount}`, name: c.name, input: c.input ?? {} }));
  const text = reply.text ?? null;
  const stop_reason = reply.stopReason ?? (calls.length ? "tool_use" : "end_turn");
  const usage = reply.usage ?? usageOfCall(anthropicUpstream.requests.length);
  const content = [...(text === null ? [] : [{ type: "text", text }]), ...calls];
  const base = { id: "msg_up", type: "message", role: "assistant", model: "claude-fake-2026" };
  if (!body.stream) return Response.json({ ...base, content, stop_reason, stop_sequence: null, usage });

  const events: string[] = [];
  const send = (type: string, data: Record<string, unknown>) => events.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send("message_start", { message: { ...base, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  send("ping", {});
  let index = 0;
  let pieces = 0;
  let cut: number | null = null;
  if (text !== null) {
    send("content_block_start", { index, content_block: { type: "text", text: "" } });
    for (const piece of text.match(/.{1,5}/gs) ?? []) {
      if (reply.streamErrorAfter === pieces) send("error", { error: { type: "overloaded_error", message: "Overloaded" } });
      if (reply.breakAfter === pieces) cut = events.length;
      send("content_block_delta", { index, delta: { type: "text_delta", text: piece } });
      pieces++;
    }
    send("content_block_stop", { index });
    index++;
  }
  for (const call of calls) {
    send("content_block_start", { index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } });
    const json = JSON.stringify(call.input);
    send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } });
    for (const piece of json.match(/.{1,7}/gs) ?? []) send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } });
    send("content_block_stop", { index });
    index++;
  }
  send("message_delta", { delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  send("message_stop", {});
  const encoder = new TextEncoder();
  // One event per pull, so what came before a cut is read before the error.
  let next = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (next === cut) return controller.error(new Error("connection reset by peer"));
      if (next === events.length) return controller.close();
      controller.enqueue(encoder.encode(events[next++]!));
    },
  });
  return new Response(stream, { headers: { "Content-Type": "text/event-stream" } });
}
