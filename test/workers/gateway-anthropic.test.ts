/**
 * The model gateway's Anthropic side inside workerd: `POST /v1/messages` through the Worker, on the same core as
 * `/v1/chat/completions`, with the fake OpenAI-compatible upstream of support/gateway-fake-upstream.ts recording
 * exactly what it was sent.
 */
import { describe, expect, it } from "vitest";
import { AnthropicError, AnthropicMessage, AnthropicStreamEvent } from "../../src/protocol/gateway-anthropic";
import type { ContextEvent, StoredMessage } from "../../src/protocol/frontend";
import { installFakeUpstream, upstream } from "./support/gateway-fake-upstream";
import { apiKey, BASE, freshIdentity, Frontend, withoutNonce, worker } from "./support/runtime";
import { ToolApp } from "./support/tool-app";

installFakeUpstream();

const LOOKUP = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };
const CLIENT_TOOL = { name: "open_in_browser", description: "Open a URL in the user's browser.", input_schema: { type: "object", properties: { url: { type: "string" } } } };

async function setup() {
  const id = freshIdentity();
  let editor = "Open note: Q4 plan";
  const app = await ToolApp.connect(
    id,
    "notes",
    {
      contexts: [{ id: "editor", name: "Editor", description: "The open note", methods: ["current"] }],
      tools: [{ name: "lookup", description: "Look a word up in the user's notes.", inputSchema: LOOKUP }],
      agents: [{ agentId: "assistant", name: "Notes Assistant", systemPrompt: "You are the Notes Assistant.", attachedContexts: ["notes:editor"], tools: ["lookup"] }],
    },
    (params, _id, method) => {
      if (method === "contexts/current") return { result: { title: "Editor", content: editor } };
      if (method === "tools/call") return { result: { content: [{ type: "text", text: `notes about ${(params.arguments as { q: string }).q}: buy lemons` }] } };
      return { result: {} };
    },
  );
  const frontend = await Frontend.for(id);
  const key = await apiKey(id);
  /** As `@anthropic-ai/sdk` sends it: the key in x-api-key, anthropic-version. */
  const messages = (body: Record<string, unknown> | string, conversation?: string, headers: Record<string, string> = { "x-api-key": key }) =>
    worker().fetch(`${BASE}/v1/messages`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "anthropic-version": "2023-06-01", ...headers, ...(conversation ? { "X-Conversation-Id": conversation } : {}) },
      body: typeof body === "string" ? body : JSON.stringify({ model: "notes:assistant", max_tokens: 1024, ...body }),
    });
  const stored = async (conversation: string) =>
    (await frontend.json<{ messages: StoredMessage[] }>("GET", `/v1/conversations/${conversation}/messages`)).messages.map((m) => m.message);
  const events = async (conversation: string) => (await frontend.json<{ events: ContextEvent[] }>("GET", `/v1/conversations/${conversation}/events?limit=500`)).events;
  return { app, key, messages, stored, events, setEditor: (text: string) => (editor = text) };
}

async function messageOf(res: Response): Promise<AnthropicMessage> {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
  expect(res.headers.get("request-id")).toMatch(/^req_/);
  return AnthropicMessage.strict().parse(JSON.parse(text));
}

async function errorOf(res: Response, status: number): Promise<AnthropicError["error"]> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get("Content-Type")).toBe("application/json");
  return AnthropicError.strict().parse(JSON.parse(text)).error;
}

/** The SSE events of a streamed answer, each checked: `event:` names the type its `data:` carries. */
async function eventsOf(res: Response): Promise<AnthropicStreamEvent[]> {
  expect(res.status).toBe(200);
  expect(res.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((e) => e.trim())
    .map((e) => {
      const [name, data, ...rest] = e.split("\n");
      expect(rest).toEqual([]);
      expect(name).toMatch(/^event: /);
      expect(data).toMatch(/^data: /);
      const event = AnthropicStreamEvent.parse(JSON.parse(data!.slice(6)));
      expect(event.type).toBe(name!.slice(7));
      return event;
    });
}

const userText = (m: { content: unknown } | undefined) => withoutNonce(typeof m?.content === "string" ? m.content : JSON.stringify(m?.content));

describe("POST /v1/messages", () => {
  it("runs a turn: the upstream reads the runtime's assembled input, the answer is an Anthropic message, the conversation named in a header", async () => {
    const { messages, stored, events } = await setup();
    upstream.script = [{ text: "You are working on the Q4 plan." }];
    const res = await messages({
      system: [{ type: "text", text: "You are a pirate." }],
      messages: [{ role: "user", content: [{ type: "text", text: "What am I working on?" }] }],
      max_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 5,
      stop_sequences: ["END"],
      metadata: { user_id: "user-42" },
    });
    const message = await messageOf(res);
    const conversation = res.headers.get("X-Conversation-Id")!;
    expect(conversation).toMatch(/^[0-9a-f-]{36}$/);
    expect(message).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: "message",
      role: "assistant",
      model: "notes:assistant",
      content: [{ type: "text", text: "You are working on the Q4 plan.", citations: null }],
      stop_reason: "end_turn",
      stop_sequence: null,
      // The upstream's 100 prompt tokens, 64 of them from its cache: Anthropic counts input apart from cache reads.
      usage: { input_tokens: 36, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 64 },
    });

    const [sent] = upstream.requests;
    expect(upstream.auth[0]).toBe("Bearer upstream-test-key");
    expect(sent).toMatchObject({ model: "fake-upstream", max_tokens: 300, temperature: 0.2, top_p: 0.9, stop: ["END"], user: "user-42" });
    expect(sent!.top_k).toBeUndefined();
    expect(sent!.stream).toBeUndefined();
    expect(sent!.messages).toHaveLength(2);
    expect(sent!.messages[0]!.role).toBe("system");
    expect(sent!.messages[0]!.content).toContain("You are the Notes Assistant.");
    expect(JSON.stringify(sent!.messages)).not.toContain("pirate");
    expect(userText(sent!.messages[1])).toBe("What am I working on?\n\n<system_reminder>\n[Context: Editor]\nOpen note: Q4 plan\n</system_reminder>");
    expect(sent!.tools!.map((t) => t.function.name)).toEqual(["notes__lookup"]);

    expect(await stored(conversation)).toEqual([
      { role: "user", content: expect.stringMatching(/^What am I working on\?\n\n<system_reminder/) },
      { role: "assistant", content: "You are working on the Q4 plan." },
    ]);
    const usage = (await events(conversation)).filter((e) => e.type === "model.usage");
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ turnId: res.headers.get("X-Turn-Id"), data: { promptTokens: 100, completionTokens: 7, cachedTokens: 64, source: "gateway", step: 1 } });
  });

  it("takes the key as x-api-key or a bearer token, and refuses a missing one in Anthropic's shape", async () => {
    const { messages, key } = await setup();
    upstream.script = [{ text: "Hi." }];
    await messageOf(await messages({ messages: [{ role: "user", content: "hello" }] }, undefined, { Authorization: `Bearer ${key}` }));
    const refused = await messages({ messages: [{ role: "user", content: "hello" }] }, undefined, {});
    // Every answer carries a request id, a refusal of the key too.
    expect(refused.headers.get("request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    expect(await errorOf(refused, 401)).toMatchObject({ type: "authentication_error" });
    expect(await errorOf(await messages({ messages: [{ role: "user", content: "hello" }] }, undefined, { "x-api-key": "sk-ant-not-ours" }), 401)).toMatchObject({ type: "authentication_error" });
    expect(upstream.requests).toHaveLength(1);
  });

  it("takes only the new part: a client resending its whole history (content blocks as the SDK returned them) never duplicates one", async () => {
    const { messages, stored, setEditor } = await setup();
    upstream.script = [{ text: "First answer." }, { text: "Second answer." }, { text: "Third answer." }];
    const first = await messages({ messages: [{ role: "user", content: "one" }] });
    const conversation = first.headers.get("X-Conversation-Id")!;
    const a1 = await messageOf(first);
    setEditor("Open note: groceries");
    const history = [{ role: "user", content: "one" }, { role: "assistant", content: a1.content }, { role: "user", content: [{ type: "text", text: "two", cache_control: { type: "ephemeral" } }] }];
    const a2 = await messageOf(await messages({ system: "be brief", messages: history }, conversation));
    expect(a2.content).toEqual([{ type: "text", text: "Second answer.", citations: null }]);
    // Only the new message.
    await messageOf(await messages({ messages: [{ role: "user", content: "three" }] }, conversation));
    expect((await stored(conversation)).map((m) => [m.role, withoutNonce(String(m.content ?? "")).split("\n")[0]])).toEqual([
      ["user", "one"],
      ["assistant", "First answer."],
      ["user", "two"],
      ["assistant", "Second answer."],
      ["user", "three"],
      ["assistant", "Third answer."],
    ]);
    const [r1, r2, r3] = upstream.requests;
    expect(r2!.messages.slice(0, 2)).toEqual(r1!.messages);
    expect(r2!.messages[2]).toEqual({ role: "assistant", content: "First answer." });
    expect(userText(r2!.messages[3])).toContain("[Context updated: Editor]\nOpen note: groceries");
    expect(r3!.messages.slice(0, 4)).toEqual(r2!.messages);

    // An edited history is refused with 409, the gateway's code in details.error_code.
    const edited = await messages({ messages: [{ role: "user", content: "one" }, { role: "assistant", content: "Something else." }, { role: "user", content: "four" }] }, conversation);
    expect(await errorOf(edited, 409)).toMatchObject({ type: "invalid_request_error", details: { error_code: "history_mismatch" } });
    // A prefill (an assistant message the gateway did not produce, last) does not continue the conversation either.
    const prefill = await messages({ messages: [{ role: "user", content: "five" }, { role: "assistant", content: "Sure:" }] }, conversation);
    expect(await errorOf(prefill, 409)).toMatchObject({ details: { error_code: "history_mismatch" } });
  });

  it("runs an app's tool itself between two upstream calls", async () => {
    const { app, messages, stored } = await setup();
    upstream.script = [{ text: "Let me look.", toolCalls: [{ name: "notes__lookup", arguments: { q: "lemons" } }] }, { text: "You need lemons." }];
    const res = await messages({ messages: [{ role: "user", content: "Do I need lemons?" }] });
    const message = await messageOf(res);
    expect(message.content).toEqual([{ type: "text", text: "Let me look.\n\nYou need lemons.", citations: null }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage).toEqual({ input_tokens: 300 - 128, output_tokens: 14, cache_creation_input_tokens: 0, cache_read_input_tokens: 128 });
    expect(res.headers.get("X-Gateway-Steps")).toBe("2");
    expect(app.calls.filter((c) => c.method === "tools/call")).toMatchObject([{ name: "lookup", arguments: { q: "lemons" } }]);
    const [r1, r2] = upstream.requests;
    expect(r2!.messages.slice(0, 2)).toEqual(r1!.messages);
    expect(r2!.messages.slice(2).map((m) => m.role)).toEqual(["assistant", "tool"]);
    expect(r2!.messages[3]!.content).toBe("notes about lemons: buy lemons");
    expect((await stored(res.headers.get("X-Conversation-Id")!)).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });

  it("returns calls to the client's tools as tool_use blocks, runs the runtime's from the same reply, and continues with the client's tool_result blocks", async () => {
    const { app, messages, stored } = await setup();
    upstream.script = [
      { text: "On it.", toolCalls: [{ name: "notes__lookup", arguments: { q: "trip" }, id: "call_app" }, { name: "open_in_browser", arguments: { url: "https://example.com/trip" }, id: "call_client" }, { name: "open_in_browser", arguments: { url: "https://example.com/map" }, id: "call_client2" }] },
      { text: "Opened them, and your notes say: buy lemons." },
    ];
    const history: unknown[] = [{ role: "user", content: "Open my trip page and the map" }];
    const first = await messages({ messages: history, tools: [CLIENT_TOOL], tool_choice: { type: "any", disable_parallel_tool_use: false } });
    const conversation = first.headers.get("X-Conversation-Id")!;
    const message = await messageOf(first);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([
      { type: "text", text: "On it.", citations: null },
      { type: "tool_use", id: "call_client", name: "open_in_browser", input: { url: "https://example.com/trip" } },
      { type: "tool_use", id: "call_client2", name: "open_in_browser", input: { url: "https://example.com/map" } },
    ]);
    // The client's tool, translated; tool_choice "any" is "required" upstream.
    expect(upstream.requests[0]!.tools).toEqual([expect.objectContaining({ function: expect.objectContaining({ name: "notes__lookup" }) }), { type: "function", function: { name: "open_in_browser", description: CLIENT_TOOL.description, parameters: CLIENT_TOOL.input_schema } }]);
    expect(upstream.requests[0]!.tool_choice).toBe("required");
    expect(app.calls.filter((c) => c.method === "tools/call")).toHaveLength(1);

    // The client runs its tools and resends the whole history with the results (one failed: is_error).
    history.push(
      { role: "assistant", content: message.content },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_client", content: "opened" },
          { type: "tool_result", tool_use_id: "call_client2", content: [{ type: "text", text: "blocked by the browser" }], is_error: true },
        ],
      },
    );
    const second = await messageOf(await messages({ messages: history, tools: [CLIENT_TOOL] }, conversation));
    expect(second).toMatchObject({ stop_reason: "end_turn", content: [{ type: "text", text: "Opened them, and your notes say: buy lemons." }] });
    expect(upstream.requests[1]!.messages.filter((m) => m.role === "tool")).toEqual([
      { role: "tool", tool_call_id: "call_app", content: "notes about trip: buy lemons" },
      { role: "tool", tool_call_id: "call_client", content: "opened" },
      { role: "tool", tool_call_id: "call_client2", content: "[the tool reported an error] blocked by the browser" },
    ]);
    expect((await stored(conversation)).map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "tool", "assistant"]);

    // The history resent once more with the next question: nothing is taken twice.
    upstream.script = [{ text: "Anything else?" }];
    history.push({ role: "assistant", content: second.content }, { role: "user", content: "thanks" });
    await messageOf(await messages({ messages: history, tools: [CLIENT_TOOL] }, conversation));
    expect((await stored(conversation)).map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "tool", "assistant", "user", "assistant"]);
  });

  it("streams the events the SDK parses: message_start, ping, one text block over the steps, tool_use blocks with input_json_delta, message_delta, message_stop", async () => {
    const { messages, stored } = await setup();
    upstream.script = [{ text: "Checking.", toolCalls: [{ name: "notes__lookup", arguments: { q: "plan" } }] }, { text: "Two calls now.", toolCalls: [{ name: "open_in_browser", arguments: { url: "https://a.example" } }, { name: "open_in_browser", arguments: { url: "https://b.example" } }] }];
    const res = await messages({ messages: [{ role: "user", content: "Open both" }], tools: [CLIENT_TOOL], stream: true });
    const events = await eventsOf(res);
    const types = events.map((e) => e.type);
    const deltas = types.filter((t) => t === "content_block_delta").length;
    expect(types).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      ...Array.from({ length: deltas - 2 }, () => "content_block_delta"),
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const start = events[0] as Extract<AnthropicStreamEvent, { type: "message_start" }>;
    expect(start.message).toMatchObject({ id: expect.stringMatching(/^msg_/), role: "assistant", model: "notes:assistant", content: [], stop_reason: null });
    const text = events.flatMap((e) => (e.type === "content_block_delta" && e.delta.type === "text_delta" ? [e.delta.text] : [])).join("");
    expect(text).toBe("Checking.\n\nTwo calls now.");
    const blocks = events.flatMap((e) => (e.type === "content_block_start" ? [[e.index, e.content_block]] : []));
    expect(blocks).toEqual([
      [0, { type: "text", text: "", citations: null }],
      [1, { type: "tool_use", id: expect.any(String), name: "open_in_browser", input: {} }],
      [2, { type: "tool_use", id: expect.any(String), name: "open_in_browser", input: {} }],
    ]);
    const json = events.flatMap((e) => (e.type === "content_block_delta" && e.delta.type === "input_json_delta" ? [[e.index, JSON.parse(e.delta.partial_json)]] : []));
    expect(json).toEqual([
      [1, { url: "https://a.example" }],
      [2, { url: "https://b.example" }],
    ]);
    const delta = events.at(-2) as Extract<AnthropicStreamEvent, { type: "message_delta" }>;
    expect(delta.delta).toEqual({ stop_reason: "tool_use", stop_sequence: null });
    expect(delta.usage).toEqual({ input_tokens: 300 - 128, output_tokens: 14, cache_creation_input_tokens: 0, cache_read_input_tokens: 128 });
    expect(upstream.requests.every((r) => r.stream === true)).toBe(true);
    expect((await stored(res.headers.get("X-Conversation-Id")!)).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });

  it("passes the upstream's errors on in Anthropic's shape, and a retry continues without a duplicate", async () => {
    const { messages, stored } = await setup();
    upstream.script = [{ error: { status: 429, message: "Rate limit reached", type: "rate_limit_error" } }];
    const limited = await messages({ messages: [{ role: "user", content: "hello" }] });
    const conversation = limited.headers.get("X-Conversation-Id")!;
    expect(limited.headers.get("Retry-After")).toBe("7");
    expect(await errorOf(limited, 429)).toEqual({ type: "rate_limit_error", message: "Rate limit reached" });

    upstream.script = [{ error: { status: 503, message: "overloaded", type: "server_error" } }];
    expect(await errorOf(await messages({ messages: [{ role: "user", content: "hello" }] }, conversation), 502)).toMatchObject({ type: "api_error", details: { error_code: "upstream_error" } });

    upstream.script = [{ text: "Hello!" }];
    expect((await messageOf(await messages({ messages: [{ role: "user", content: "hello" }] }, conversation))).content).toEqual([{ type: "text", text: "Hello!", citations: null }]);
    expect(await stored(conversation)).toEqual([
      { role: "user", content: expect.stringMatching(/^hello\n\n<system_reminder/) },
      { role: "assistant", content: "Hello!" },
    ]);
  });

  it("a stream that breaks stores no half reply: the client gets an error event and no message_stop, and a retry answers whole", async () => {
    const { messages, stored } = await setup();
    upstream.script = [{ text: "This answer will be cut in the middle.", breakAfter: 3 }];
    const res = await messages({ messages: [{ role: "user", content: "Tell me" }], stream: true });
    const conversation = res.headers.get("X-Conversation-Id")!;
    const events = await eventsOf(res);
    expect(events.map((e) => e.type)).not.toContain("message_stop");
    expect(events.at(-1)).toMatchObject({ type: "error", error: { type: "api_error" } });
    expect((await stored(conversation)).map((m) => m.role)).toEqual(["user"]);

    upstream.script = [{ text: "Whole answer." }];
    const retry = await eventsOf(await messages({ messages: [{ role: "user", content: "Tell me" }], stream: true }, conversation));
    expect(retry.at(-1)).toEqual({ type: "message_stop" });
    expect((await stored(conversation)).map((m) => [m.role, m.role === "assistant" ? m.content : null])).toEqual([
      ["user", null],
      ["assistant", "Whole answer."],
    ]);
  });

  it("stops at GATEWAY_MAX_STEPS with pause_turn, and the same history resent continues the turn", async () => {
    const { messages, stored } = await setup();
    upstream.script = Array.from({ length: 8 }, (_, i) => ({ toolCalls: [{ name: "notes__lookup", arguments: { q: `w${i}` } }] }));
    const history: unknown[] = [{ role: "user", content: "Look everything up" }];
    const res = await messages({ messages: history });
    const conversation = res.headers.get("X-Conversation-Id")!;
    const paused = await messageOf(res);
    expect(paused).toMatchObject({ stop_reason: "pause_turn", content: [] });
    expect(upstream.requests).toHaveLength(8);

    // As Anthropic documents for pause_turn: send the response back as it is to let the model go on.
    upstream.script = [{ text: "Done looking." }];
    history.push({ role: "assistant", content: paused.content });
    const resumed = await messageOf(await messages({ messages: history }, conversation));
    expect(resumed).toMatchObject({ stop_reason: "end_turn", content: [{ type: "text", text: "Done looking." }] });
    expect(upstream.requests[8]!.messages.at(-1)).toMatchObject({ role: "tool" });
    const roles = (await stored(conversation)).map((m) => m.role);
    expect(roles.filter((r) => r === "user")).toHaveLength(1);
    expect(roles.at(-1)).toBe("assistant");
  });

  it("takes images by URL, and refuses what it cannot honour with 400 in Anthropic's shape", async () => {
    const { messages } = await setup();
    upstream.script = [{ text: "A cat." }];
    await messageOf(
      await messages({
        messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://images.example/cat.png" } }, { type: "text", text: "What is this?" }] }],
      }),
    );
    const parts = upstream.requests[0]!.messages[1]!.content as { type: string; image_url?: { url: string } }[];
    expect(parts.find((p) => p.type === "image_url")?.image_url?.url).toBe("https://images.example/cat.png");

    const cases: [Record<string, unknown>, RegExp][] = [
      [{ max_tokens: undefined, messages: [{ role: "user", content: "x" }] }, /max_tokens/],
      [{ messages: [] }, /messages/],
      [{ messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }, { type: "text", text: "x" }] }] }, /base64/],
      [{ messages: [{ role: "user", content: [{ type: "document", source: { type: "text", data: "x" } }] }] }, /document/],
      [{ messages: [{ role: "user", content: "x" }], tools: [{ type: "web_search_20250305", name: "web_search" }] }, /tools/],
      [{ messages: [{ role: "user", content: "x" }], temperature: 1.5 }, /temperature/],
      [{ messages: [{ role: "user", content: "x" }], mcp_servers: [{ type: "url", url: "https://mcp.example", name: "x" }] }, /MCP/],
      [{ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "x" }] }, /app:agent/],
    ];
    for (const [body, message] of cases) {
      const error = await errorOf(await messages(body), 400);
      expect(error.type, JSON.stringify(body)).toBe("invalid_request_error");
      expect(error.message).toMatch(message);
    }
    expect(await errorOf(await messages("{"), 400)).toMatchObject({ details: { error_code: "invalid_json" } });
    expect(await errorOf(await messages({ model: "notes:nobody", messages: [{ role: "user", content: "x" }] }), 404)).toMatchObject({ type: "not_found_error", details: { error_code: "model_not_found" } });
    expect(await errorOf(await messages({ messages: [{ role: "user", content: "x" }] }, "no-such-conversation"), 404)).toMatchObject({ details: { error_code: "conversation_not_found" } });
    expect(upstream.requests).toHaveLength(1);
  });
});
