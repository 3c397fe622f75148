/**
 * The model gateway with an Anthropic upstream (`UPSTREAM_API=anthropic`, docs/gateway.md "An Anthropic upstream"):
 * both client formats through the Worker, with a fake Messages API at https://upstream.test/v1/messages
 * (support/gateway-fake-anthropic.ts) that records exactly what it was sent: the converted request, its cache
 * breakpoints (and that they stay on the same blocks from one call to the next, so the prefix is cacheable), the
 * answer read back, whole and streamed, its usage, and its errors.
 */
import { describe, expect, it } from "vitest";
import { AnthropicMessage, AnthropicStreamEvent } from "../../src/protocol/gateway-anthropic";
import { ChatCompletion, type OpenAIError } from "../../src/protocol/gateway-openai";
import type { ContextEvent, StoredMessage } from "../../src/protocol/frontend";
import { anthropicUpstream as upstream, installFakeAnthropic, type AnthropicUpstreamRequest } from "./support/gateway-fake-anthropic";
import { freshIdentity, Frontend, withoutNonce } from "./support/runtime";
import { ToolApp } from "./support/tool-app";

installFakeAnthropic();

const LOOKUP = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };
const CLIENT_TOOL = { type: "function", function: { name: "open_in_browser", description: "Open a URL in the user's browser.", parameters: { type: "object", properties: { url: { type: "string" } } } } };
const EPHEMERAL = { type: "ephemeral" };

async function setup() {
  const id = freshIdentity();
  const app = await ToolApp.connect(
    id,
    "notes",
    {
      contexts: [{ id: "editor", name: "Editor", description: "The open note", methods: ["current"] }],
      tools: [{ name: "lookup", description: "Look a word up in the user's notes.", inputSchema: LOOKUP }],
      agents: [{ agentId: "assistant", name: "Notes Assistant", systemPrompt: "You are the Notes Assistant.", attachedContexts: ["notes:editor"], tools: ["lookup"] }],
    },
    (params, _id, method) => {
      if (method === "contexts/current") return { result: { title: "Editor", content: "Open note: Q4 plan" } };
      if (method === "tools/call") return { result: { content: [{ type: "text", text: `notes about ${(params.arguments as { q: string }).q}: buy lemons` }] } };
      return { result: {} };
    },
  );
  const frontend = await Frontend.for(id);
  const chat = (body: Record<string, unknown>, conversation?: string) =>
    frontend.request("POST", "/v1/chat/completions", { model: "notes:assistant", ...body }, conversation ? { "X-Conversation-Id": conversation } : {});
  const messages = (body: Record<string, unknown>, conversation?: string) =>
    frontend.request("POST", "/v1/messages", { model: "notes:assistant", max_tokens: 1024, ...body }, { "anthropic-version": "2023-06-01", ...(conversation ? { "X-Conversation-Id": conversation } : {}) });
  const stored = async (conversation: string) =>
    (await frontend.json<{ messages: StoredMessage[] }>("GET", `/v1/conversations/${conversation}/messages`)).messages.map((m) => m.message);
  const events = async (conversation: string) => (await frontend.json<{ events: ContextEvent[] }>("GET", `/v1/conversations/${conversation}/events?limit=500`)).events;
  return { app, chat, messages, stored, events };
}

async function completionOf(res: Response): Promise<ChatCompletion> {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return ChatCompletion.strict().parse(JSON.parse(text));
}

/** A request as the upstream read it, with every `cache_control` taken out: what the cache keys on. */
function bare<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (k, v: unknown) => (k === "cache_control" ? undefined : v))) as T;
}

/** Where the request's breakpoints are: "tools[i]", "system[i]", "messages[i].content[j]". */
function breakpoints(r: AnthropicUpstreamRequest): string[] {
  const at: string[] = [];
  r.tools?.forEach((t, i) => t.cache_control && at.push(`tools[${i}]`));
  r.system?.forEach((b, i) => b.cache_control && at.push(`system[${i}]`));
  r.messages.forEach((m, i) => m.content.forEach((b, j) => b.cache_control && at.push(`messages[${i}].content[${j}]`)));
  for (const s of [...(r.tools ?? []), ...(r.system ?? []), ...r.messages.flatMap((m) => m.content)]) if (s.cache_control) expect(s.cache_control).toEqual(EPHEMERAL);
  return at;
}

describe("an Anthropic upstream (UPSTREAM_API=anthropic)", () => {
  it("converts the turn's input to a Messages request, runs the app's tools between two upstream calls, and keeps the breakpoints on a stable prefix across turns", async () => {
    const { app, chat, stored, events } = await setup();
    upstream.script = [
      { text: "Let me look.", toolCalls: [{ name: "notes__lookup", input: { q: "lemons" }, id: "toolu_a" }, { name: "notes__lookup", input: { q: "eggs" }, id: "toolu_b" }] },
      { text: "You need lemons." },
      { text: "Eggs too." },
    ];
    const res = await chat({ messages: [{ role: "user", content: "Do I need lemons?" }] });
    const completion = await completionOf(res);
    const conversation = res.headers.get("X-Conversation-Id")!;
    expect(completion.choices[0]!.message.content).toBe("Let me look.\n\nYou need lemons.");
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    expect(res.headers.get("X-Gateway-Steps")).toBe("2");
    expect(app.calls.filter((c) => c.method === "tools/call").map((c) => c.arguments)).toEqual([{ q: "lemons" }, { q: "eggs" }]);

    // Where it went and how: the Messages API, the key as x-api-key, no bearer token.
    expect(upstream.paths).toEqual(["/v1/messages", "/v1/messages"]);
    expect(upstream.headers[0]).toEqual({ "x-api-key": "upstream-test-key", "anthropic-version": "2023-06-01", authorization: null });

    const [r1, r2] = upstream.requests;
    expect(r1!.model).toBe("fake-upstream");
    expect(r1!.max_tokens).toBe(4096); // the documented default: the client gave none
    expect(r1!.stream).toBeUndefined();
    expect(r1!.system).toHaveLength(1);
    expect(r1!.system![0]!.text).toContain("You are the Notes Assistant.");
    expect(r1!.tools).toEqual([{ name: "notes__lookup", description: expect.stringContaining("Look a word up"), input_schema: LOOKUP, cache_control: EPHEMERAL }]);
    expect(r1!.messages).toHaveLength(1);
    expect(r1!.messages[0]!.role).toBe("user");
    expect(withoutNonce(r1!.messages[0]!.content[0]!.text!)).toMatch(/^Do I need lemons\?\n\n<system_reminder>/);
    // Tools, system, and the request's last block (a first turn has no history before its message).
    expect(breakpoints(r1!)).toEqual(["tools[0]", "system[0]", "messages[0].content[0]"]);

    // The second call: the reply's text and tool_use blocks (input parsed), the two results merged into one user turn.
    expect(bare(r2!.messages)).toEqual([
      bare(r1!.messages[0]),
      { role: "assistant", content: [{ type: "text", text: "Let me look." }, { type: "tool_use", id: "toolu_a", name: "notes__lookup", input: { q: "lemons" } }, { type: "tool_use", id: "toolu_b", name: "notes__lookup", input: { q: "eggs" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_a", content: "notes about lemons: buy lemons" }, { type: "tool_result", tool_use_id: "toolu_b", content: "notes about eggs: buy lemons" }] },
    ]);
    expect(r2!.tools).toEqual(r1!.tools);
    expect(r2!.system).toEqual(r1!.system);
    expect(breakpoints(r2!)).toEqual(["tools[0]", "system[0]", "messages[2].content[1]"]);

    // The next turn: the history the previous turn sent is a prefix of this one, the history's breakpoint at its end.
    const next = await chat({ messages: [{ role: "user", content: "And eggs?" }] }, conversation);
    expect((await completionOf(next)).choices[0]!.message.content).toBe("Eggs too.");
    const r3 = upstream.requests[2]!;
    expect(r3.tools).toEqual(r1!.tools);
    expect(r3.system).toEqual(r1!.system);
    expect(bare(r3.messages.slice(0, 3))).toEqual(bare(r2!.messages));
    expect(bare(r3.messages[3])).toEqual({ role: "assistant", content: [{ type: "text", text: "You need lemons." }] });
    expect(withoutNonce(r3.messages[4]!.content[0]!.text!)).toMatch(/^And eggs\?/);
    expect(breakpoints(r3)).toEqual(["tools[0]", "system[0]", "messages[3].content[0]", "messages[4].content[0]"]);

    expect((await stored(conversation)).map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "assistant", "user", "assistant"]);
    // Usage: prompt = input + cache reads + cache writes; cached = cache reads.
    expect(completion.usage).toEqual({ prompt_tokens: 60 + 1070, completion_tokens: 14, total_tokens: 1144, prompt_tokens_details: { cached_tokens: 1000 } });
    const usage = (await events(conversation)).filter((e) => e.type === "model.usage");
    expect(usage.map((e) => e.data)).toMatchObject([
      { promptTokens: 60, completionTokens: 7, cachedTokens: 0, cacheWriteTokens: 50, model: "claude-fake-2026", step: 1 },
      { promptTokens: 1070, completionTokens: 7, cachedTokens: 1000, cacheWriteTokens: 50, step: 2 },
      { promptTokens: 2080, completionTokens: 7, cachedTokens: 2000, cacheWriteTokens: 50, step: 1 },
    ]);
  });

  it("maps the client's settings and tools, and returns calls to the client's tools", async () => {
    const { chat, stored } = await setup();
    upstream.script = [{ toolCalls: [{ name: "open_in_browser", input: { url: "https://example.com/trip" }, id: "toolu_c" }] }, { text: "Opened." }];
    const res = await chat({
      messages: [{ role: "user", content: "Open my trip" }],
      tools: [CLIENT_TOOL],
      tool_choice: "required",
      parallel_tool_calls: false,
      max_tokens: 300,
      temperature: 0.3,
      stop: "END",
      user: "user-42",
      seed: 7,
      presence_penalty: 0.5,
    });
    const completion = await completionOf(res);
    expect(completion.choices[0]!.finish_reason).toBe("tool_calls");
    expect(completion.choices[0]!.message.tool_calls).toEqual([{ id: "toolu_c", type: "function", function: { name: "open_in_browser", arguments: '{"url":"https://example.com/trip"}' } }]);
    const r1 = upstream.requests[0]!;
    expect(r1).toMatchObject({ max_tokens: 300, temperature: 0.3, stop_sequences: ["END"], metadata: { user_id: "user-42" }, tool_choice: { type: "any", disable_parallel_tool_use: true } });
    for (const dropped of ["seed", "presence_penalty", "stop", "user", "parallel_tool_calls", "stream_options", "max_completion_tokens"]) expect(r1[dropped]).toBeUndefined();
    expect(r1.tools!.map((t) => [t.name, t.cache_control ?? null])).toEqual([["notes__lookup", null], ["open_in_browser", EPHEMERAL]]);
    expect(r1.tools![1]!.input_schema).toEqual(CLIENT_TOOL.function.parameters);

    // The client's result: a tool_result block after the stored tool_use, the breakpoints where they were.
    const conversation = res.headers.get("X-Conversation-Id")!;
    const done = await completionOf(await chat({ messages: [{ role: "tool", tool_call_id: "toolu_c", content: "opened" }], tools: [CLIENT_TOOL] }, conversation));
    expect(done.choices[0]!.message.content).toBe("Opened.");
    const r2 = upstream.requests[1]!;
    expect(bare(r2.messages.slice(1))).toEqual([
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_c", name: "open_in_browser", input: { url: "https://example.com/trip" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_c", content: "opened" }] },
    ]);
    expect(bare(r2.messages[0])).toEqual(bare(r1.messages[0]));
    expect(r2.tool_choice).toBeUndefined();
    expect(breakpoints(r2)).toEqual(["tools[1]", "system[0]", "messages[2].content[0]"]);
    expect((await stored(conversation)).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });

  it("streams: text deltas as they come, tool_use input put together from input_json_delta, usage from message_start and message_delta", async () => {
    const { app, messages, events } = await setup();
    upstream.script = [{ text: "Let me look.", toolCalls: [{ name: "notes__lookup", input: { q: "lemons" } }] }, { text: "You need lemons, a dozen." }];
    const res = await messages({ messages: [{ role: "user", content: "Do I need lemons?" }], stream: true });
    expect(res.status).toBe(200);
    const sse = (await res.text())
      .split("\n\n")
      .filter((e) => e.trim())
      .map((e) => AnthropicStreamEvent.parse(JSON.parse(e.split("\n")[1]!.slice(6))));
    const text = sse.flatMap((e) => (e.type === "content_block_delta" && e.delta.type === "text_delta" ? [e.delta.text] : [])).join("");
    expect(text).toBe("Let me look.\n\nYou need lemons, a dozen.");
    expect(sse.filter((e) => e.type === "content_block_delta").length).toBeGreaterThan(3);
    const delta = sse.find((e) => e.type === "message_delta");
    expect(delta).toMatchObject({ delta: { stop_reason: "end_turn" }, usage: { input_tokens: 60 + 1070 - 1000 - 100, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000, output_tokens: 14 } });
    expect(sse.at(-1)!.type).toBe("message_stop");
    expect(app.calls.filter((c) => c.method === "tools/call").map((c) => c.arguments)).toEqual([{ q: "lemons" }]);
    expect(upstream.requests.map((r) => r.stream)).toEqual([true, true]);
    expect(upstream.requests[0]!.stream_options).toBeUndefined();
    expect(upstream.requests[1]!.messages[1]!.content.at(-1)).toMatchObject({ type: "tool_use", name: "notes__lookup", input: { q: "lemons" } });
    const usage = (await events(res.headers.get("X-Conversation-Id")!)).filter((e) => e.type === "model.usage");
    expect(usage.map((e) => e.data)).toMatchObject([{ promptTokens: 60, cachedTokens: 0 }, { promptTokens: 1070, cachedTokens: 1000 }]);
  });

  it("passes the upstream's errors on as the gateway does for any upstream: a refused request as it is, a refused key and failures as 502", async () => {
    const { chat, messages, stored } = await setup();
    upstream.script = [{ error: { status: 429, type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit" } }];
    const limited = await chat({ messages: [{ role: "user", content: "hi" }] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("Retry-After")).toBe("7");
    expect((await limited.json()) as OpenAIError).toMatchObject({ error: { type: "rate_limit_error", message: expect.stringContaining("rate limit") } });

    upstream.script = [{ error: { status: 401, type: "authentication_error", message: "invalid x-api-key" } }];
    const refused = await messages({ messages: [{ role: "user", content: "hi" }] });
    expect(refused.status).toBe(502);
    expect(await refused.json()).toMatchObject({ type: "error", error: { type: "api_error", message: expect.stringContaining("invalid x-api-key"), details: { error_code: "upstream_auth" } } });

    upstream.script = [{ error: { status: 529, type: "overloaded_error", message: "Overloaded" } }];
    const overloaded = await chat({ messages: [{ role: "user", content: "hi" }] });
    expect(overloaded.status).toBe(502);
    expect((await overloaded.json()) as OpenAIError).toMatchObject({ error: { type: "server_error", code: "upstream_error", message: expect.stringContaining("Overloaded") } });

    // Mid-stream: an `error` event is an error event to the client, and nothing of the half answer is stored.
    upstream.script = [{ text: "This answer will not finish.", streamErrorAfter: 2 }];
    const broken = await messages({ messages: [{ role: "user", content: "tell me" }], stream: true });
    const body = await broken.text();
    expect(body).toContain("event: error");
    expect(body).toContain("Overloaded");
    expect(body).not.toContain("message_stop");
    expect((await stored(broken.headers.get("X-Conversation-Id")!)).map((m) => m.role)).toEqual(["user"]);

    // A dropped connection: the stream broke off.
    upstream.script = [{ text: "This answer will not finish either.", breakAfter: 2 }];
    const dropped = await chat({ messages: [{ role: "user", content: "tell me" }], stream: true });
    expect(await dropped.text()).toContain("upstream_stream_broken");
  });

  it("answers the Anthropic route whole, from a whole upstream message", async () => {
    const { messages } = await setup();
    upstream.script = [{ text: "Hello." }];
    const res = await messages({ messages: [{ role: "user", content: "hi" }], stop_sequences: ["STOP"], temperature: 0.5 });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const message = AnthropicMessage.parse(JSON.parse(text));
    expect(message.content).toEqual([{ type: "text", text: "Hello.", citations: null }]);
    expect(message.usage).toEqual({ input_tokens: 10, output_tokens: 7, cache_creation_input_tokens: 50, cache_read_input_tokens: 0 });
    expect(upstream.requests[0]).toMatchObject({ max_tokens: 1024, stop_sequences: ["STOP"], temperature: 0.5 });
  });

  it("reports the calls' cache writes in the Messages route's usage, summed and apart from input_tokens; the Chat Completions route keeps them in prompt_tokens", async () => {
    const { chat, messages } = await setup();
    upstream.script = [{ text: "Let me look.", toolCalls: [{ name: "notes__lookup", input: { q: "lemons" } }] }, { text: "You need lemons." }];
    const res = await messages({ messages: [{ role: "user", content: "Do I need lemons?" }] });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    // usageOfCall(1) and (2): input 10 + 20, cache reads 0 + 1000, cache writes 50 + 50.
    expect(AnthropicMessage.parse(JSON.parse(text)).usage).toEqual({ input_tokens: 30, output_tokens: 14, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000 });

    // usageOfCall(3): input 30, cache reads 2000, cache writes 50; OpenAI's usage has no field for the writes.
    upstream.script = [{ text: "Hello." }];
    const completion = await completionOf(await chat({ messages: [{ role: "user", content: "hi" }] }));
    expect(completion.usage).toEqual({ prompt_tokens: 2080, completion_tokens: 7, total_tokens: 2087, prompt_tokens_details: { cached_tokens: 2000 } });
  });
});
