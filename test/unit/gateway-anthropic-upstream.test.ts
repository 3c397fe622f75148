/**
 * The pure half of an Anthropic upstream (src/model/anthropic.ts): a step's chat-form body converted to a
 * Messages request with its cache breakpoints, and a Messages answer, whole or streamed, read back into a StepAnswer.
 */
import { describe, expect, it } from "vitest";
import { anthropicRequest, convertMessages, DEFAULT_MAX_TOKENS, EARLIER_NOT_SHOWN, readAnthropicMessage, readAnthropicStream, toolChoiceOf, usageFrom } from "../../src/model/anthropic";
import { upstreamError } from "../../src/gateway/errors";
import type { ModelResult } from "../../src/model";
import { upstreamConfig } from "../../src/platform/config";
import type { Env } from "../../src/platform/env";

const tool = (name: string) => ({ type: "function", function: { name, description: `the ${name} tool`, parameters: { type: "object", properties: { q: { type: "string" } } } } });
const EPHEMERAL = { type: "ephemeral" };

/** A conversation's second turn, mid-way through a round of the runtime's tools. */
const history = [
  { role: "system", content: "You are the Notes Assistant." },
  { role: "user", content: "one" },
  { role: "assistant", content: "First answer." },
  { role: "user", content: [{ type: "text", text: "two" }, { type: "image_url", image_url: { url: "https://img.test/a.png" } }] },
  { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"q":"a"}' } }, { id: "call.2", type: "function", function: { name: "lookup", arguments: "not json" } }] },
  { role: "tool", tool_call_id: "call_1", content: "result a" },
  { role: "tool", tool_call_id: "call.2", content: "" },
];

/** A result as the gateway answers it: a failure in OpenAI's shape, with its status. */
const asGateway = <T>(r: ModelResult<T>) => (r.ok ? r : { ok: false, error: upstreamError(r.problem) });

describe("anthropicRequest", () => {
  it("converts system, user text and images, tool calls as tool_use (input parsed) and consecutive results as one user turn", () => {
    const r = anthropicRequest({ model: "claude-x", messages: history, tools: [tool("lookup"), tool("other")] });
    expect(r.model).toBe("claude-x");
    expect(r.max_tokens).toBe(DEFAULT_MAX_TOKENS);
    expect(r.system).toEqual([{ type: "text", text: "You are the Notes Assistant.", cache_control: EPHEMERAL }]);
    expect(r.tools).toEqual([
      { name: "lookup", description: "the lookup tool", input_schema: { type: "object", properties: { q: { type: "string" } } } },
      { name: "other", description: "the other tool", input_schema: { type: "object", properties: { q: { type: "string" } } }, cache_control: EPHEMERAL },
    ]);
    expect(r.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "one" }] },
      // The end of the history the previous turn sent: the breakpoint before the turn's new user message.
      { role: "assistant", content: [{ type: "text", text: "First answer.", cache_control: EPHEMERAL }] },
      { role: "user", content: [{ type: "text", text: "two" }, { type: "image", source: { type: "url", url: "https://img.test/a.png" } }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "call_1", name: "lookup", input: { q: "a" } },
          { type: "tool_use", id: "call_2", name: "lookup", input: {} },
        ],
      },
      // The request's end: read by the next step and the next turn.
      { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "result a" }, { type: "tool_result", tool_use_id: "call_2", cache_control: EPHEMERAL }] },
    ]);
    expect(r.stream).toBeUndefined();
  });

  it("puts the breakpoints on the same blocks as the conversation grows, never more than four", () => {
    const first = anthropicRequest({ model: "m", messages: history.slice(0, 4), tools: [tool("lookup")] });
    const later = anthropicRequest({ model: "m", messages: [...history, { role: "assistant", content: "Done." }, { role: "user", content: "three" }], tools: [tool("lookup")] });
    const marks = (r: ReturnType<typeof anthropicRequest>) => JSON.stringify(r).split('"cache_control"').length - 1;
    expect(marks(first)).toBe(4);
    expect(marks(later)).toBe(4);
    expect(later.tools).toEqual(first.tools);
    expect(later.system).toEqual(first.system);
    // The history breakpoint is on the last block before "three": the previous turn's answer.
    expect(later.messages.at(-2)).toEqual({ role: "assistant", content: [{ type: "text", text: "Done.", cache_control: EPHEMERAL }] });
    expect(later.messages.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: "three", cache_control: EPHEMERAL }] });
    // Without the breakpoints, the first request's messages are a prefix of the later one's.
    const bare = (v: unknown) => JSON.parse(JSON.stringify(v, (k, x: unknown) => (k === "cache_control" ? undefined : x))) as unknown;
    expect(bare(later.messages.slice(0, first.messages.length))).toEqual(bare(first.messages));
  });

  it("marks a first turn's system and message only, and no tools when there are none", () => {
    const r = anthropicRequest({ model: "m", messages: [{ role: "system", content: "sys" }, { role: "user", content: "hi" }] });
    expect(r.tools).toBeUndefined();
    expect(r.tool_choice).toBeUndefined();
    expect(r.system![0]!.cache_control).toEqual(EPHEMERAL);
    expect(r.messages).toEqual([{ role: "user", content: [{ type: "text", text: "hi", cache_control: EPHEMERAL }] }]);
  });

  it("maps the settings: max_tokens, stop, temperature, top_p, user, stream; drops what Anthropic has no place for", () => {
    const r = anthropicRequest({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      max_completion_tokens: 99,
      stop: ["A", "B"],
      temperature: 0.1,
      top_p: 0.5,
      safety_identifier: "u-1",
      stream: true,
      stream_options: { include_usage: true },
      seed: 1,
      response_format: { type: "json_object" },
      reasoning_effort: "low",
    });
    expect(r).toEqual({ model: "m", max_tokens: 99, stop_sequences: ["A", "B"], temperature: 0.1, top_p: 0.5, metadata: { user_id: "u-1" }, stream: true, messages: [{ role: "user", content: [{ type: "text", text: "hi", cache_control: EPHEMERAL }] }] });
    expect(anthropicRequest({ model: "m", messages: [], max_tokens: 12, stop: "X" })).toMatchObject({ max_tokens: 12, stop_sequences: ["X"] });
  });

  it("leaves out empty text and empty replies, and merges same-role neighbours", () => {
    const { turns } = convertMessages([
      { role: "user", content: "a" },
      { role: "assistant", content: "" },
      { role: "user", content: "b" },
      { role: "assistant", content: "c", tool_calls: [{ id: "t1", function: { name: "f", arguments: "[1]" } }] },
      { role: "tool", tool_call_id: "t1", content: "r" },
      { role: "user", content: "d" },
    ]);
    expect(turns).toEqual([
      { role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
      { role: "assistant", content: [{ type: "text", text: "c" }, { type: "tool_use", id: "t1", name: "f", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "r" }, { type: "text", text: "d" }] },
    ]);
  });
});

describe("an input that starts with the assistant's reply", () => {
  it("gets a fixed user turn first, and the breakpoints still land on the right blocks", () => {
    const r = anthropicRequest({ model: "m", messages: [{ role: "system", content: "sys" }, { role: "assistant", content: "Earlier answer." }, { role: "user", content: "next" }] });
    expect(r.messages).toEqual([
      { role: "user", content: [{ type: "text", text: EARLIER_NOT_SHOWN }] },
      { role: "assistant", content: [{ type: "text", text: "Earlier answer.", cache_control: EPHEMERAL }] },
      { role: "user", content: [{ type: "text", text: "next", cache_control: EPHEMERAL }] },
    ]);
  });
});

describe("toolChoiceOf", () => {
  it("maps OpenAI's choices", () => {
    expect(toolChoiceOf("auto", undefined)).toEqual({ type: "auto" });
    expect(toolChoiceOf("required", undefined)).toEqual({ type: "any" });
    expect(toolChoiceOf("none", false)).toEqual({ type: "none" });
    expect(toolChoiceOf({ type: "function", function: { name: "f" } }, false)).toEqual({ type: "tool", name: "f", disable_parallel_tool_use: true });
    expect(toolChoiceOf({ type: "allowed_tools", allowed_tools: { mode: "required", tools: [] } }, undefined)).toEqual({ type: "any" });
    expect(toolChoiceOf(undefined, false)).toEqual({ type: "auto", disable_parallel_tool_use: true });
    expect(toolChoiceOf(undefined, true)).toBeUndefined();
  });
});

describe("reading the answer", () => {
  it("maps usage: prompt = input + cache reads + cache writes", () => {
    expect(usageFrom({ input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200 })).toEqual({ promptTokens: 1210, completionTokens: 5, cachedTokens: 1000, reasoningTokens: null, cacheWriteTokens: 200 });
    expect(usageFrom({ input_tokens: 10, output_tokens: 5 })).toEqual({ promptTokens: 10, completionTokens: 5, cachedTokens: 0, reasoningTokens: null, cacheWriteTokens: 0 });
  });

  it("reads a whole message: text blocks joined, tool_use as calls, stop reasons mapped", () => {
    const read = readAnthropicMessage({
      type: "message",
      model: "claude-x",
      content: [{ type: "thinking", thinking: "hm", signature: "s" }, { type: "text", text: "Hel" }, { type: "text", text: "lo" }, { type: "tool_use", id: "toolu_1", name: "f", input: { a: 1 } }],
      stop_reason: "tool_use",
      usage: { input_tokens: 3, output_tokens: 4, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    });
    expect(read).toEqual({ ok: true, value: { content: "Hello", refusal: null, toolCalls: [{ id: "toolu_1", type: "function", function: { name: "f", arguments: '{"a":1}' } }], finishReason: "tool_calls", usage: { promptTokens: 3, completionTokens: 4, cachedTokens: 0, reasoningTokens: null, cacheWriteTokens: 0 }, model: "claude-x" } });
    const finish = (stop_reason: string) => (readAnthropicMessage({ type: "message", content: [], stop_reason }) as { ok: true; value: { finishReason: string; content: unknown } }).value;
    expect(["end_turn", "max_tokens", "stop_sequence", "refusal", "pause_turn"].map((s) => finish(s).finishReason)).toEqual(["stop", "length", "stop", "content_filter", "stop"]);
    expect(finish("end_turn").content).toBeNull();
    expect(asGateway(readAnthropicMessage({ choices: [] }))).toMatchObject({ ok: false, error: { status: 502 } });
  });

  async function* from(events: unknown[]): AsyncGenerator<string> {
    for (const e of events) yield JSON.stringify(e);
  }

  const streamed = [
    { type: "message_start", message: { model: "claude-x", usage: { input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 500, cache_creation_input_tokens: 40 } } },
    { type: "ping" },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi " } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "there" } },
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_9", name: "f", input: {} } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "" } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"q": "le' } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: 'mons"}' } },
    { type: "content_block_stop", index: 1 },
    { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_10", name: "g", input: {} } },
    { type: "content_block_stop", index: 2 },
    { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 22 } },
    { type: "message_stop" },
  ];

  it("reads a stream: text deltas as they come, tool input from input_json_delta, usage from message_start and message_delta", async () => {
    const texts: string[] = [];
    const read = await readAnthropicStream(from(streamed), (d) => void texts.push(d.content!));
    expect(texts).toEqual(["Hi ", "there"]);
    expect(read).toEqual({
      ok: true,
      value: {
        content: "Hi there",
        refusal: null,
        toolCalls: [
          { id: "toolu_9", type: "function", function: { name: "f", arguments: '{"q": "lemons"}' } },
          { id: "toolu_10", type: "function", function: { name: "g", arguments: "{}" } },
        ],
        finishReason: "tool_calls",
        usage: { promptTokens: 550, completionTokens: 22, cachedTokens: 500, reasoningTokens: null, cacheWriteTokens: 40 },
        model: "claude-x",
      },
    });
  });

  it("takes a stream that ends before message_stop, or carries an error event, as an error", async () => {
    expect(asGateway(await readAnthropicStream(from(streamed.slice(0, -1)), () => undefined))).toMatchObject({ ok: false, error: { status: 502, body: { error: { code: "upstream_stream_broken" } } } });
    const failed = await readAnthropicStream(from([...streamed.slice(0, 4), { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }]), () => undefined);
    expect(asGateway(failed)).toMatchObject({ ok: false, error: { status: 502, body: { error: { code: "upstream_error", message: expect.stringContaining("Overloaded") } } } });
  });
});

describe("upstreamError", () => {
  const status = (code: number, upstreamCode: string | null) => ({ kind: "status" as const, status: code, message: "boom", type: "api_error", code: upstreamCode, param: null, retryAfter: null, body: "" });
  it("answers an upstream's failure with the gateway's own code, the upstream's kept in the message", () => {
    expect(upstreamError(status(500, "ctl_500")).body.error).toEqual({ message: "the upstream model failed (HTTP 500 [ctl_500]): boom", type: "server_error", param: null, code: "upstream_error" });
    expect(upstreamError(status(529, null)).body.error).toMatchObject({ type: "server_error", code: "upstream_error" });
    expect(upstreamError(status(403, "invalid_key")).body.error).toMatchObject({ type: "server_error", code: "upstream_auth" });
    // What the client asked for and was refused keeps the upstream's own code.
    expect(upstreamError(status(429, "rate_limit_exceeded"))).toMatchObject({ status: 429, body: { error: { code: "rate_limit_exceeded" } } });
  });
});

describe("upstreamConfig", () => {
  const env = (vars: Partial<Env>) => ({ UPSTREAM_MODEL: "m", UPSTREAM_KEY: "k", ...vars }) as Env;
  it("selects the API with UPSTREAM_API (default openai) and builds its URL", () => {
    expect(upstreamConfig(env({ UPSTREAM_URL: "https://api.openai.com/v1" }))).toEqual({ url: "https://api.openai.com/v1/chat/completions", model: "m", key: "k" });
    expect(upstreamConfig(env({ UPSTREAM_URL: "https://api.anthropic.com/", UPSTREAM_API: "anthropic" }))).toEqual({ url: "https://api.anthropic.com/v1/messages", model: "m", key: "k", api: "anthropic" });
    expect(upstreamConfig(env({ UPSTREAM_URL: "https://proxy.test/v1", UPSTREAM_API: " Anthropic " }))!.url).toBe("https://proxy.test/v1/messages");
    expect(upstreamConfig(env({ UPSTREAM_URL: "https://x.test", UPSTREAM_API: "openai" }))!.api).toBeUndefined();
  });
});
