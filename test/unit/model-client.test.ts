/**
 * The one model client (src/model/): both APIs, whole and streamed, through a local fetch stand-in given to the
 * client; the same StepAnswer, usage and errors from either, and one deadline and cancel for every caller.
 */
import { describe, expect, it } from "vitest";
import { modelClient, type ModelClient, type StepAnswer } from "../../src/model";
import type { UpstreamConfig } from "../../src/platform/config";

const OPENAI: UpstreamConfig = { url: "https://openai.test/v1/chat/completions", model: "gpt-x", key: "sk-test" };
const ANTHROPIC: UpstreamConfig = { url: "https://anthropic.test/v1/messages", model: "claude-x", key: "ak-test", api: "anthropic" };

interface Sent {
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  signal: AbortSignal;
}

/** A fetch stand-in that records each request and answers with `answer`. */
function standIn(answer: () => Response | Promise<Response>): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const f = (async (url: string | URL | Request, init?: RequestInit) => {
    sent.push({ url: String(url), headers: init!.headers as Record<string, string>, body: JSON.parse(String(init!.body)) as Record<string, unknown>, signal: init!.signal! });
    return answer();
  }) as typeof fetch;
  return { fetch: f, sent };
}

const sse = (events: unknown[], { done = true, named = false } = {}) =>
  new Response(
    events.map((e) => `${named ? `event: ${(e as { type: string }).type}\n` : ""}data: ${JSON.stringify(e)}\n\n`).join("") + (done ? "data: [DONE]\n\n" : ""),
    { headers: { "Content-Type": "text/event-stream" } },
  );

const request = { model: "m", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }], max_tokens: 50 };

const client = (config: UpstreamConfig, answer: () => Response | Promise<Response>): { client: ModelClient; sent: Sent[] } => {
  const fake = standIn(answer);
  return { client: modelClient(config, { fetch: fake.fetch }), sent: fake.sent };
};

async function streamed(c: ModelClient): Promise<{ answer: unknown; texts: string[] }> {
  const opened = await c.stream(request);
  if (!opened.ok) return { answer: opened, texts: [] };
  const texts: string[] = [];
  return { answer: await opened.value.read((d) => void texts.push(d.content ?? d.refusal ?? "")), texts };
}

const hello: StepAnswer = {
  content: "Hello!",
  refusal: null,
  toolCalls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }],
  finishReason: "tool_calls",
  usage: { promptTokens: 12, completionTokens: 5, cachedTokens: 4, reasoningTokens: null, cacheWriteTokens: null },
  model: "gpt-x",
};

describe("an OpenAI-compatible upstream", () => {
  const completion = () =>
    Response.json({
      model: "gpt-x",
      choices: [{ message: { content: "Hello!", tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }] }, finish_reason: "tool_calls" }],
      usage: { prompt_tokens: 12, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 4 } },
    });

  it("posts the request as it is, with the bearer key, and reads the whole answer", async () => {
    const { client: c, sent } = client(OPENAI, completion);
    expect(await c.complete(request)).toEqual({ ok: true, value: hello });
    expect(sent[0]).toMatchObject({ url: OPENAI.url, headers: { "Content-Type": "application/json", Accept: "application/json", Authorization: "Bearer sk-test" }, body: request });
  });

  it("streams: asks for usage, sends text as it comes, puts tool calls together", async () => {
    const chunks = [
      { model: "gpt-x", choices: [{ delta: { content: "Hel" } }] },
      { choices: [{ delta: { content: "lo!", tool_calls: [{ index: 0, id: "call_1", function: { name: "lookup", arguments: '{"q"' } }] } }] },
      { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: ':"x"}' } }] }, finish_reason: "tool_calls" }] },
      { choices: [], usage: { prompt_tokens: 12, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 4 } } },
    ];
    const { client: c, sent } = client(OPENAI, () => sse(chunks));
    const { answer, texts } = await streamed(c);
    expect(answer).toEqual({ ok: true, value: hello });
    expect(texts).toEqual(["Hel", "lo!"]);
    expect(sent[0]!.headers.Accept).toBe("text/event-stream");
    expect(JSON.stringify(sent[0]!.body)).toBe(JSON.stringify({ ...request, stream: true, stream_options: { include_usage: true } }));
    // Ended before its finish reason: broken, nothing of it an answer.
    expect((await streamed(client(OPENAI, () => sse(chunks.slice(0, 2), { done: false })).client)).answer).toEqual({ ok: false, problem: { kind: "broken", message: "it ended before the answer finished" } });
    expect((await streamed(client(OPENAI, () => sse([{ error: { message: "overloaded" } }])).client)).answer).toEqual({ ok: false, problem: { kind: "failed", message: "overloaded" } });
  });
});

describe("an Anthropic upstream", () => {
  const message = () =>
    Response.json({
      type: "message",
      model: "claude-x",
      content: [{ type: "text", text: "Hello!" }, { type: "tool_use", id: "toolu_1", name: "lookup", input: { q: "x" } }],
      stop_reason: "tool_use",
      usage: { input_tokens: 2, output_tokens: 5, cache_read_input_tokens: 10, cache_creation_input_tokens: 3 },
    });
  const claude: StepAnswer = {
    ...hello,
    toolCalls: [{ id: "toolu_1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }],
    usage: { promptTokens: 15, completionTokens: 5, cachedTokens: 10, reasoningTokens: null, cacheWriteTokens: 3 },
    model: "claude-x",
  };

  it("posts a Messages request with its key and version, and reads the answer into the same StepAnswer", async () => {
    const { client: c, sent } = client(ANTHROPIC, message);
    expect(await c.complete(request)).toEqual({ ok: true, value: claude });
    expect(sent[0]!.headers).toEqual({ "Content-Type": "application/json", Accept: "application/json", "anthropic-version": "2023-06-01", "x-api-key": "ak-test" });
    expect(sent[0]!.body).toMatchObject({ model: "m", max_tokens: 50, system: [{ type: "text", text: "Be brief." }], messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }] });
    expect(sent[0]!.body).not.toHaveProperty("stream");
  });

  it("streams its events into the same StepAnswer", async () => {
    const events = [
      { type: "message_start", message: { model: "claude-x", usage: { input_tokens: 2, cache_read_input_tokens: 10, cache_creation_input_tokens: 3 } } },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lo!" } },
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "lookup" } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"q":"x"}' } },
      { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 5 } },
      { type: "message_stop" },
    ];
    const { client: c, sent } = client(ANTHROPIC, () => sse(events, { done: false, named: true }));
    const { answer, texts } = await streamed(c);
    expect(answer).toEqual({ ok: true, value: claude });
    expect(texts).toEqual(["Hel", "lo!"]);
    expect(sent[0]!.body).toMatchObject({ stream: true });
    expect(sent[0]!.body).not.toHaveProperty("stream_options");
  });
});

describe("errors, the same for both APIs", () => {
  it("an error status with the upstream's message, type, code, param and Retry-After", async () => {
    const limited = () => Response.json({ error: { message: "slow down", type: "rate_limit_error", code: "rate_limited", param: null } }, { status: 429, headers: { "Retry-After": "7" } });
    const overloaded = () => Response.json({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, { status: 529 });
    expect(await client(OPENAI, limited).client.complete(request)).toEqual({
      ok: false,
      problem: { kind: "status", status: 429, message: "slow down", type: "rate_limit_error", code: "rate_limited", param: null, retryAfter: "7", body: expect.stringContaining("slow down") },
    });
    expect(await client(ANTHROPIC, overloaded).client.stream(request)).toMatchObject({ ok: false, problem: { kind: "status", status: 529, message: "Overloaded", type: "overloaded_error" } });
    expect(await client(OPENAI, () => new Response("<html>bad gateway</html>", { status: 502 })).client.complete(request)).toMatchObject({ ok: false, problem: { kind: "status", status: 502, message: "<html>bad gateway</html>" } });
  });

  it("an upstream that cannot be reached, or answers something else", async () => {
    const unreachable = (() => Promise.reject(new TypeError("fetch failed"))) as unknown as typeof fetch;
    for (const config of [OPENAI, ANTHROPIC]) {
      expect(await modelClient(config, { fetch: unreachable }).complete(request)).toEqual({ ok: false, problem: { kind: "unreachable", message: "fetch failed" } });
      expect(await client(config, () => new Response("not json")).client.complete(request)).toEqual({ ok: false, problem: { kind: "not-json", status: 200 } });
    }
    expect(await client(OPENAI, () => Response.json({ choices: [] })).client.complete(request)).toMatchObject({ ok: false, problem: { kind: "invalid", status: 200, message: "not a chat completion", issue: expect.stringMatching(/^choices: /) } });
    expect(await client(ANTHROPIC, () => Response.json({ choices: [] })).client.complete(request)).toMatchObject({ ok: false, problem: { kind: "invalid", message: "not an Anthropic message: no `content`" } });
  });

  it("a deadline ends the call, even a fetch that ignores its signal, and aborts the request", async () => {
    let signal: AbortSignal | undefined;
    const never = ((_url: string, init: RequestInit) => {
      signal = init.signal!;
      return new Promise<Response>(() => {});
    }) as unknown as typeof fetch;
    for (const config of [OPENAI, ANTHROPIC]) {
      const started = Date.now();
      expect(await modelClient(config, { fetch: never }).complete(request, { deadlineMs: 40 })).toEqual({ ok: false, problem: { kind: "timeout", ms: 40 } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(35);
      expect(signal?.aborted).toBe(true);
    }
  });

  it("a deadline covers a stream that stalls after it started", async () => {
    const stalled = () => new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n')) }));
    const opened = await client(OPENAI, stalled).client.stream(request, { deadlineMs: 50 });
    expect(opened.ok).toBe(true);
    const texts: string[] = [];
    expect(await (opened as { ok: true; value: { read: (f: (d: { content?: string }) => void) => Promise<unknown> } }).value.read((d) => void texts.push(d.content!))).toEqual({ ok: false, problem: { kind: "timeout", ms: 50 } });
    expect(texts).toEqual(["Hi"]);
  });

  it("the caller's signal cancels the call; an aborted one sends nothing", async () => {
    const never = standIn(() => new Promise<Response>(() => {}));
    const controller = new AbortController();
    const pending = modelClient(ANTHROPIC, { fetch: never.fetch }).complete(request, { signal: controller.signal });
    controller.abort();
    expect(await pending).toEqual({ ok: false, problem: { kind: "cancelled" } });
    expect(never.sent[0]!.signal.aborted).toBe(true);
    const idle = standIn(() => Response.json({}));
    expect(await modelClient(OPENAI, { fetch: idle.fetch }).complete(request, { signal: AbortSignal.abort() })).toEqual({ ok: false, problem: { kind: "cancelled" } });
    expect(idle.sent).toHaveLength(0);
  });
});
