/**
 * A fake OpenAI-compatible upstream for the gateway's workerd tests: it answers for https://upstream.test in place of
 * the network (the test swaps the isolate's `fetch`, which the Worker and its Durable Objects share here), from a
 * script of replies, and records exactly what it was sent. `installFakeUpstream()` in a test file's top level.
 */
import { afterEach, beforeEach, expect } from "vitest";

export interface ScriptedReply {
  text?: string;
  refusal?: string;
  toolCalls?: { name: string; arguments?: Record<string, unknown>; id?: string }[];
  error?: { status: number; message: string; type?: string };
  /** Network failure: fetch rejects. */
  unreachable?: true;
  /** Streamed: the connection drops after this many text pieces. */
  breakAfter?: number;
  finishReason?: string;
}

export interface UpstreamRequest {
  model: string;
  messages: { role: string; content: string | null | { type: string; text?: string; image_url?: { url: string } }[]; tool_calls?: unknown[]; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  stream?: boolean;
  [key: string]: unknown;
}

export const upstream = { requests: [] as UpstreamRequest[], auth: [] as (string | null)[], script: [] as ScriptedReply[] };

export function installFakeUpstream(): void {
  const realFetch = globalThis.fetch;
  beforeEach(() => {
    upstream.requests = [];
    upstream.auth = [];
    upstream.script = [];
    globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      if (new URL(request.url).hostname !== "upstream.test") return realFetch(input, init);
      return answer(request);
    };
  });
  afterEach(() => {
    globalThis.fetch = realFetch;
  });
}

let callCount = 0;

async function answer(request: Request): Promise<Response> {
  expect(new URL(request.url).pathname).toBe("/v1/chat/completions");
  const body = (await request.json()) as UpstreamRequest;
  upstream.requests.push(body);
  upstream.auth.push(request.headers.get("Authorization"));
  const reply = upstream.script.shift();
  if (!reply) return Response.json({ error: { message: "the script has no reply", type: "server_error" } }, { status: 500 });
  if (reply.unreachable) throw new TypeError("Network connection lost.");
  if (reply.error) return Response.json({ error: { message: reply.error.message, type: reply.error.type ?? "invalid_request_error", param: null, code: null } }, { status: reply.error.status, headers: { "Retry-After": "7" } });
  const calls = (reply.toolCalls ?? []).map((c) => ({ id: c.id ?? `call_${++callCount}`, type: "function", function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) } }));
  const content = reply.text ?? null;
  const refusal = reply.refusal ?? null;
  const finish_reason = reply.finishReason ?? (calls.length ? "tool_calls" : "stop");
  const usage = { prompt_tokens: 100 * upstream.requests.length, completion_tokens: 7, total_tokens: 100 * upstream.requests.length + 7, prompt_tokens_details: { cached_tokens: 64 } };
  const base = { id: "chatcmpl-up", created: 1, model: "fake-upstream-2026" };
  if (!body.stream) {
    return Response.json({ ...base, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content, refusal, ...(calls.length ? { tool_calls: calls } : {}) }, finish_reason }], usage });
  }
  const events: string[] = [];
  const send = (delta: Record<string, unknown>, finish: string | null = null, extra = {}) =>
    events.push(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`);
  send({ role: "assistant", content: "" });
  for (const piece of (content ?? "").match(/.{1,5}/gs) ?? []) send({ content: piece });
  for (const piece of (refusal ?? "").match(/.{1,5}/gs) ?? []) send({ refusal: piece });
  for (const [index, call] of calls.entries()) {
    send({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] });
    send({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] });
  }
  send({}, finish_reason);
  events.push(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [], usage })}\n\n`, "data: [DONE]\n\n");
  const cut = reply.breakAfter === undefined ? null : 1 + reply.breakAfter;
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
