/**
 * Keep-alives on the gateway's streamed answers (docs/gateway.md "Streaming"): while the runtime runs an app's tool
 * between two upstream calls, or waits on a slow upstream, a stream sends `: keep-alive` comments
 * (`/v1/chat/completions`) or `event: ping` events (`/v1/messages`) every GATEWAY_KEEPALIVE_MS of silence, always
 * between whole events; the official SDKs (openai, @anthropic-ai/sdk) read such a stream as if they were not there.
 * The interval is made short here (the env is the Worker's, as support/gateway-fake-anthropic.ts switches
 * UPSTREAM_API), the app's tool slow, and the upstream is the OpenAI-compatible fake.
 */
import Anthropic from "@anthropic-ai/sdk";
import { env } from "cloudflare:workers";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_KEEPALIVE_MS, keepAliveMs } from "../../src/platform/config";
import type { Env } from "../../src/platform/env";
import { AnthropicStreamEvent } from "../../src/protocol/gateway-anthropic";
import { ChatCompletionChunk } from "../../src/protocol/gateway-openai";
import { installFakeUpstream, upstream } from "./support/gateway-fake-upstream";
import { apiKey, BASE, freshIdentity, Frontend, worker } from "./support/runtime";
import { ToolApp } from "./support/tool-app";

installFakeUpstream();

const LOOKUP = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };
const KEEPALIVE_MS = 25;
/** How long the app takes to answer a tool call: many keep-alive intervals, well within TOOL_DEADLINE_MS (1000 in tests). */
const TOOL_MS = 300;

const vars = env as unknown as Record<string, string | undefined>;
let before: string | undefined;
/** Milliseconds the fake upstream waits before answering its n-th call (1-based), when set. */
let upstreamDelay: (n: number) => number = () => 0;

beforeEach(() => {
  before = vars.GATEWAY_KEEPALIVE_MS;
  vars.GATEWAY_KEEPALIVE_MS = String(KEEPALIVE_MS);
  upstreamDelay = () => 0;
  // Registered after installFakeUpstream's: wraps its fake (which its afterEach takes away again).
  const fake = globalThis.fetch;
  let calls = 0;
  globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.hostname === "upstream.test") {
      const wait = upstreamDelay(++calls);
      if (wait) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    return fake(input, init);
  };
});
afterEach(() => {
  vars.GATEWAY_KEEPALIVE_MS = before;
});

async function setup(toolMs = TOOL_MS) {
  const id = freshIdentity();
  let app: ToolApp | undefined;
  app = await ToolApp.connect(
    id,
    "notes",
    {
      tools: [{ name: "lookup", description: "Look a word up in the user's notes.", inputSchema: LOOKUP }],
      agents: [{ agentId: "assistant", name: "Notes Assistant", systemPrompt: "You are the Notes Assistant.", tools: ["lookup"] }],
    },
    (params, callId, method) => {
      if (method !== "tools/call") return { result: {} };
      const text = `notes about ${(params.arguments as { q: string }).q}: buy lemons`;
      setTimeout(() => app!.ws.send(JSON.stringify({ jsonrpc: "2.0", id: callId, result: { content: [{ type: "text", text }] } })), toolMs);
      return null;
    },
  );
  const key = await apiKey(id);
  const frontend = new Frontend(key);
  const chat = (body: Record<string, unknown>) => frontend.request("POST", "/v1/chat/completions", { model: "notes:assistant", ...body });
  const messages = (body: Record<string, unknown>) => frontend.request("POST", "/v1/messages", { model: "notes:assistant", max_tokens: 1024, ...body }, { "anthropic-version": "2023-06-01" });
  // The official clients, over the Worker: their own SSE parsers read the stream; `seen` keeps what they were sent.
  const seen: Promise<string>[] = [];
  const through = async (input: string | URL | Request, init?: RequestInit) => {
    const res = await worker().fetch(new Request(input, init));
    if (!res.body) return res;
    const [sdk, copy] = res.body.tee();
    seen.push(new Response(copy).text());
    return new Response(sdk, res);
  };
  const openai = new OpenAI({ apiKey: key, baseURL: `${BASE}/v1`, fetch: through, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey: key, baseURL: BASE, fetch: through, maxRetries: 0 });
  return { app, chat, messages, openai, anthropic, seen };
}

/** The stream's blocks, as the server framed them (an event or a comment, each ended by a blank line). */
async function blocksOf(res: Response): Promise<string[]> {
  expect(res.status).toBe(200);
  expect(res.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
  const text = await res.text();
  expect(text.endsWith("\n\n")).toBe(true);
  return text.slice(0, -2).split("\n\n");
}

const TWO_STEPS = () => [{ text: "Let me look.", toolCalls: [{ name: "notes__lookup", arguments: { q: "lemons" } }] }, { text: "You need lemons." }];

describe("keep-alives on streamed answers (GATEWAY_KEEPALIVE_MS)", () => {
  it("reads the interval from GATEWAY_KEEPALIVE_MS: 0 turns them off, anything unusable is the 10 s default", () => {
    const of = (value?: string) => keepAliveMs({ GATEWAY_KEEPALIVE_MS: value } as unknown as Env);
    expect(DEFAULT_KEEPALIVE_MS).toBe(10_000);
    expect(of(undefined)).toBe(10_000);
    expect(of("")).toBe(10_000);
    expect(of("15000")).toBe(15_000);
    expect(of(" 50 ")).toBe(50);
    expect(of("0")).toBe(0);
    for (const bad of ["-1", "5", "2.5", "ten", "300001"]) expect(of(bad)).toBe(10_000);
  });

  it("/v1/chat/completions: `: keep-alive` comments while the app's tool runs, only between whole events, none after [DONE]", async () => {
    const { chat, app } = await setup();
    upstream.script = TWO_STEPS();
    const blocks = await blocksOf(await chat({ messages: [{ role: "user", content: "Do I need lemons?" }], stream: true, stream_options: { include_usage: true } }));
    expect(app.calls.filter((c) => c.method === "tools/call")).toHaveLength(1);
    // Every block is a whole chunk, [DONE], or a keep-alive comment: a keep-alive never lands inside an event.
    const kinds = blocks.map((b) => {
      if (b === ": keep-alive") return "keep-alive";
      expect(b.startsWith("data: ")).toBe(true);
      expect(b.includes("\n")).toBe(false);
      if (b === "data: [DONE]") return "done";
      ChatCompletionChunk.strict().parse(JSON.parse(b.slice(6)));
      return "chunk";
    });
    expect(kinds[0]).toBe("chunk");
    expect(kinds.at(-1)).toBe("done");
    // The tool ran for TOOL_MS between the first step's text and the second's: several keep-alives there.
    const textAt = (i: number) => (kinds[i] === "chunk" ? ((JSON.parse(blocks[i]!.slice(6)) as ChatCompletionChunk).choices[0]?.delta.content ?? "") : "");
    let text = "";
    let between = 0;
    for (const [i, kind] of kinds.entries()) {
      if (kind === "keep-alive" && text === "Let me look.") between++;
      text += textAt(i);
    }
    expect(text).toBe("Let me look.\n\nYou need lemons.");
    expect(between).toBeGreaterThanOrEqual(2);
  });

  it("/v1/messages: `event: ping` events while the app's tool runs, each a whole event, none after message_stop", async () => {
    const { messages } = await setup();
    upstream.script = TWO_STEPS();
    const blocks = await blocksOf(await messages({ messages: [{ role: "user", content: "Do I need lemons?" }], stream: true }));
    const events = blocks.map((b) => {
      const [head, data, ...rest] = b.split("\n");
      expect(rest).toEqual([]);
      expect(head).toMatch(/^event: [a-z_]+$/);
      const event = AnthropicStreamEvent.parse(JSON.parse(data!.replace(/^data: /, "")));
      expect(head).toBe(`event: ${event.type}`);
      return event;
    });
    expect(blocks.filter((b) => b === 'event: ping\ndata: {"type":"ping"}').length).toBe(events.filter((e) => e.type === "ping").length);
    expect(events.slice(0, 2).map((e) => e.type)).toEqual(["message_start", "ping"]);
    expect(events.at(-1)!.type).toBe("message_stop");
    let text = "";
    let between = 0;
    for (const e of events) {
      if (e.type === "ping" && text === "Let me look.") between++;
      if (e.type === "content_block_delta" && e.delta.type === "text_delta") text += e.delta.text;
    }
    expect(text).toBe("Let me look.\n\nYou need lemons.");
    expect(between).toBeGreaterThanOrEqual(2);
  });

  it("keeps a stream alive while a slow upstream has not answered its next call yet", async () => {
    const { chat } = await setup(0);
    upstreamDelay = (n) => (n === 2 ? TOOL_MS : 0);
    upstream.script = TWO_STEPS();
    const blocks = await blocksOf(await chat({ messages: [{ role: "user", content: "Do I need lemons?" }], stream: true }));
    expect(blocks.filter((b) => b === ": keep-alive").length).toBeGreaterThanOrEqual(2);
    expect(blocks.at(-1)).toBe("data: [DONE]");
  });

  it("sends none when GATEWAY_KEEPALIVE_MS is 0 (the initial ping of /v1/messages stays)", async () => {
    vars.GATEWAY_KEEPALIVE_MS = "0";
    const { chat, messages } = await setup();
    upstream.script = TWO_STEPS();
    const openaiBlocks = await blocksOf(await chat({ messages: [{ role: "user", content: "Do I need lemons?" }], stream: true }));
    expect(openaiBlocks.filter((b) => b.startsWith(":"))).toEqual([]);
    upstream.script = TWO_STEPS();
    const anthropicBlocks = await blocksOf(await messages({ messages: [{ role: "user", content: "Do I need lemons?" }], stream: true }));
    expect(anthropicBlocks.filter((b) => b.startsWith("event: ping"))).toHaveLength(1);
  });

  it("the openai SDK's stream parser skips the keep-alive comments: chunks, text and usage as without them", async () => {
    const { openai, seen } = await setup();
    upstream.script = TWO_STEPS();
    const stream = await openai.chat.completions.create({ model: "notes:assistant", messages: [{ role: "user", content: "Do I need lemons?" }], stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    for (const chunk of chunks) ChatCompletionChunk.strict().parse(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Let me look.\n\nYou need lemons.");
    expect(chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => c.choices[0]!.finish_reason)).toEqual(["stop"]);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 300, completion_tokens: 14 });

    // The SDK's own stream helper, which puts the answer together from the chunks.
    upstream.script = TWO_STEPS();
    const helper = openai.chat.completions.stream({ model: "notes:assistant", messages: [{ role: "user", content: "Do I need lemons?" }] });
    const final = await helper.finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe("Let me look.\n\nYou need lemons.");
    for (const text of await Promise.all(seen)) expect(text.split("\n\n").filter((b) => b === ": keep-alive").length).toBeGreaterThanOrEqual(2);
    expect(seen).toHaveLength(2);
  });

  it("the @anthropic-ai/sdk stream parser skips the pings: the raw events and MessageStream's final message as without them", async () => {
    const { anthropic, seen } = await setup();
    upstream.script = TWO_STEPS();
    const raw = await anthropic.messages.create({ model: "notes:assistant", max_tokens: 1024, messages: [{ role: "user", content: "Do I need lemons?" }], stream: true });
    const types: string[] = [];
    for await (const event of raw) types.push(event.type);
    expect(types).not.toContain("ping");
    expect(types[0]).toBe("message_start");
    expect(types.at(-1)).toBe("message_stop");

    upstream.script = TWO_STEPS();
    const stream = anthropic.messages.stream({ model: "notes:assistant", max_tokens: 1024, messages: [{ role: "user", content: "Do I need lemons?" }] });
    let streamed = "";
    stream.on("text", (t) => (streamed += t));
    const message = await stream.finalMessage();
    expect(streamed).toBe("Let me look.\n\nYou need lemons.");
    expect(message.content).toEqual([{ type: "text", text: "Let me look.\n\nYou need lemons.", citations: null }]);
    expect(message.stop_reason).toBe("end_turn");
    for (const text of await Promise.all(seen)) expect(text.split("\n\n").filter((b) => b.startsWith("event: ping\n")).length).toBeGreaterThanOrEqual(3);
    expect(seen).toHaveLength(2);
    // The fake's third and fourth calls (its n-th reports 100·n prompt tokens, 64 from its cache); an OpenAI-compatible
    // upstream reports no cache writes.
    expect(message.usage).toEqual({ input_tokens: 300 + 400 - 128, output_tokens: 14, cache_read_input_tokens: 128, cache_creation_input_tokens: 0 });
  });
});
