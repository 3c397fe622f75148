/**
 * The model gateway's OpenAI side inside workerd: `POST /v1/chat/completions` through the Worker, with a fake
 * upstream that answers for https://upstream.test in place of the network (the test swaps the isolate's `fetch`, which
 * the Worker and its Durable Objects share here) and records exactly what it was sent.
 */
import { describe, expect, it } from "vitest";
import { ChatCompletion, ChatCompletionChunk, OpenAIError } from "../../src/protocol/gateway-openai";
import type { ContextEvent, StoredMessage } from "../../src/protocol/frontend";
import { freshIdentity, Frontend, withoutNonce } from "./support/runtime";
import { ToolApp } from "./support/tool-app";
import { installFakeUpstream, upstream } from "./support/gateway-fake-upstream";

installFakeUpstream();

// ── the runtime side ─────────────────────────────────────────────────────────

const LOOKUP = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };
const CLIENT_TOOL = { type: "function", function: { name: "open_in_browser", description: "Open a URL in the user's browser.", parameters: { type: "object", properties: { url: { type: "string" } } } } };

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
  const chat = (body: Record<string, unknown>, conversation?: string) =>
    frontend.request("POST", "/v1/chat/completions", { model: "notes:assistant", ...body }, conversation ? { "X-Conversation-Id": conversation } : {});
  const stored = async (conversation: string) =>
    (await frontend.json<{ messages: StoredMessage[] }>("GET", `/v1/conversations/${conversation}/messages`)).messages.map((m) => m.message);
  const events = async (conversation: string) => (await frontend.json<{ events: ContextEvent[] }>("GET", `/v1/conversations/${conversation}/events?limit=500`)).events;
  return { app, frontend, chat, stored, events, setEditor: (text: string) => (editor = text) };
}

async function completionOf(res: Response): Promise<ChatCompletion> {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
  return ChatCompletion.strict().parse(JSON.parse(text));
}

/** The SSE events of a streamed answer, each parsed (the final `[DONE]` kept as the string). */
async function eventsOf(res: Response): Promise<unknown[]> {
  expect(res.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((e) => e.trim())
    .map((e) => {
      expect(e.startsWith("data: ")).toBe(true);
      const data = e.slice(6);
      return data === "[DONE]" ? data : JSON.parse(data);
    });
}

const userText = (m: { content: unknown } | undefined) => withoutNonce(typeof m?.content === "string" ? m.content : "");

describe("POST /v1/chat/completions", () => {
  it("runs a turn: the upstream reads the runtime's assembled input, the answer is stored, the conversation named in a header", async () => {
    const { chat, stored, events } = await setup();
    upstream.script = [{ text: "You are working on the Q4 plan." }];
    const res = await chat({ messages: [{ role: "system", content: "You are a pirate." }, { role: "user", content: "What am I working on?" }], temperature: 0.2, max_tokens: 300 });
    const completion = await completionOf(res);
    const conversation = res.headers.get("X-Conversation-Id")!;
    expect(conversation).toMatch(/^[0-9a-f-]{36}$/);
    expect(completion).toMatchObject({
      object: "chat.completion",
      model: "notes:assistant",
      choices: [{ index: 0, message: { role: "assistant", content: "You are working on the Q4 plan.", refusal: null }, logprobs: null, finish_reason: "stop" }],
      usage: { prompt_tokens: 100, completion_tokens: 7, total_tokens: 107, prompt_tokens_details: { cached_tokens: 64 } },
    });
    expect(completion.id).toMatch(/^chatcmpl-/);

    // What the upstream read: the agent's system message (the client's was not used), the user's words with the context.
    const [sent] = upstream.requests;
    expect(upstream.auth[0]).toBe("Bearer upstream-test-key");
    expect(sent).toMatchObject({ model: "fake-upstream", temperature: 0.2, max_tokens: 300 });
    expect(sent!.stream).toBeUndefined();
    expect(sent!.messages).toHaveLength(2);
    expect(sent!.messages[0]!.role).toBe("system");
    expect(sent!.messages[0]!.content).toContain("You are the Notes Assistant.");
    expect(JSON.stringify(sent!.messages)).not.toContain("pirate");
    expect(userText(sent!.messages[1])).toBe("What am I working on?\n\n<system_reminder>\n[Context: Editor]\nOpen note: Q4 plan\n</system_reminder>");
    expect(sent!.tools!.map((t) => t.function.name)).toEqual(["notes__lookup"]);

    const history = await stored(conversation);
    expect(history.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(history[1]).toEqual({ role: "assistant", content: "You are working on the Q4 plan." });
    // The upstream's real usage is on the turn that built its input.
    const usage = (await events(conversation)).filter((e) => e.type === "model.usage");
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ turnId: res.headers.get("X-Turn-Id"), subject: "fake-upstream-2026", data: { promptTokens: 100, completionTokens: 7, cachedTokens: 64, model: "fake-upstream-2026", source: "gateway", step: 1 } });
  });

  it("calls the upstream model the request names, else the agent's own, else the deployment's", async () => {
    const { app, chat } = await setup();
    await app.request("agents/create", { agentId: "writer", name: "Writer", systemPrompt: "You write.", model: "writer-model-2026" });
    const answer = () => upstream.script.push({ text: "ok" });
    answer();
    await completionOf(await chat({ model: "notes:writer", messages: [{ role: "user", content: "one" }] }));
    answer();
    await completionOf(await chat({ model: "notes:writer@explicit-model", messages: [{ role: "user", content: "two" }] }));
    answer();
    await completionOf(await chat({ messages: [{ role: "user", content: "three" }] }));
    expect(upstream.requests.map((r) => r.model)).toEqual(["writer-model-2026", "explicit-model", "fake-upstream"]);
  });

  it("calls an agent's named upstream with its own model and key, and says which variable a missing one needs", async () => {
    const { app, chat } = await setup();
    await app.request("agents/create", { agentId: "second", name: "Second", systemPrompt: "You help.", upstream: "second" });
    await app.request("agents/create", { agentId: "lost", name: "Lost", systemPrompt: "You help.", upstream: "nowhere" });
    upstream.script.push({ text: "ok" });
    await completionOf(await chat({ model: "notes:second", messages: [{ role: "user", content: "hi" }] }));
    expect([upstream.requests[0]!.model, upstream.auth[0]]).toEqual(["second-model", "Bearer second-test-key"]);
    const lost = await chat({ model: "notes:lost", messages: [{ role: "user", content: "hi" }] });
    expect(lost.status).toBe(503);
    expect(((await lost.json()) as { error: { message: string; code: string } }).error).toMatchObject({ code: "upstream_not_configured", message: expect.stringContaining("UPSTREAM_NOWHERE_URL") });
  });

  it("takes a new message once when two requests carry it at the same moment: the second is refused with 409", async () => {
    const { chat, stored } = await setup();
    upstream.script = [{ text: "First answer." }, { text: "Second answer." }, { text: "spare" }];
    const first = await chat({ messages: [{ role: "user", content: "one" }] });
    const conversation = first.headers.get("X-Conversation-Id")!;
    const a1 = (await completionOf(first)).choices[0]!.message;
    const history = { messages: [{ role: "user", content: "one" }, a1, { role: "user", content: "two" }] };
    const both = await Promise.all([chat(history, conversation), chat(history, conversation)]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    const refused = both.find((r) => r.status === 409)!;
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain("one request at a time per conversation");
    expect((await stored(conversation)).filter((m) => m.role === "user")).toHaveLength(2);
  });

  it("takes only the new part: a client resending its whole history, or sending only the new message, never duplicates one", async () => {
    const { chat, stored, setEditor } = await setup();
    upstream.script = [{ text: "First answer." }, { text: "Second answer." }, { text: "Third answer." }];
    const first = await chat({ messages: [{ role: "user", content: "one" }] });
    const conversation = first.headers.get("X-Conversation-Id")!;
    const a1 = (await completionOf(first)).choices[0]!.message;
    setEditor("Open note: groceries");
    // The whole history, as a chat UI resends it (the SDK's message verbatim, system message on top).
    const second = await chat({ messages: [{ role: "system", content: "be brief" }, { role: "user", content: "one" }, a1, { role: "user", content: "two" }] }, conversation);
    const a2 = (await completionOf(second)).choices[0]!.message;
    expect(a2.content).toBe("Second answer.");
    // Only the new message.
    await completionOf(await chat({ messages: [{ role: "user", content: "three" }] }, conversation));
    expect((await stored(conversation)).map((m) => [m.role, withoutNonce(String(m.content ?? "")).split("\n")[0]])).toEqual([
      ["user", "one"],
      ["assistant", "First answer."],
      ["user", "two"],
      ["assistant", "Second answer."],
      ["user", "three"],
      ["assistant", "Third answer."],
    ]);
    // Each upstream call read the previous one's input as a prefix: the history as stored, the changed context on the new message.
    const [r1, r2, r3] = upstream.requests;
    expect(r2!.messages.slice(0, 2)).toEqual(r1!.messages);
    expect(r2!.messages[2]).toEqual({ role: "assistant", content: "First answer." });
    expect(userText(r2!.messages[3])).toContain("[Context updated: Editor]\nOpen note: groceries");
    expect(r3!.messages.slice(0, 4)).toEqual(r2!.messages);
    expect(userText(r3!.messages[5])).toBe("three");

    // An edited history is refused, in OpenAI's shape.
    const edited = await chat({ messages: [{ role: "user", content: "one" }, { role: "assistant", content: "Something else." }, { role: "user", content: "four" }] }, conversation);
    expect(edited.status).toBe(409);
    expect(OpenAIError.parse(await edited.json()).error).toMatchObject({ type: "invalid_request_error", code: "history_mismatch", param: "messages" });
    // A whole history sent to a new conversation is refused before one is made.
    const stray = await chat({ messages: [{ role: "user", content: "one" }, { role: "assistant", content: "First answer." }, { role: "user", content: "two" }] });
    expect(stray.status).toBe(409);
    expect(stray.headers.get("X-Conversation-Id")).toBeNull();
  });

  it("runs an app's tool itself between two upstream calls, and records each call's usage on its turn", async () => {
    const { app, chat, stored, events, frontend } = await setup();
    upstream.script = [{ text: "Let me look.", toolCalls: [{ name: "notes__lookup", arguments: { q: "lemons" } }] }, { text: "You need lemons." }];
    const res = await chat({ messages: [{ role: "user", content: "Do I need lemons?" }] });
    const completion = await completionOf(res);
    expect(completion.choices[0]).toMatchObject({ message: { content: "Let me look.\n\nYou need lemons." }, finish_reason: "stop" });
    expect(completion.choices[0]!.message.tool_calls).toBeUndefined();
    expect(completion.usage).toMatchObject({ prompt_tokens: 300, completion_tokens: 14, total_tokens: 314, prompt_tokens_details: { cached_tokens: 128 } });
    expect(res.headers.get("X-Gateway-Steps")).toBe("2");
    expect(app.calls.filter((c) => c.method === "tools/call")).toMatchObject([{ name: "lookup", arguments: { q: "lemons" } }]);

    const [r1, r2] = upstream.requests;
    const callId = (r2!.messages[2]!.tool_calls![0] as { id: string }).id;
    expect(r2!.messages.slice(0, 2)).toEqual(r1!.messages);
    expect(r2!.messages.slice(2)).toEqual([
      { role: "assistant", content: "Let me look.", tool_calls: [{ id: callId, type: "function", function: { name: "notes__lookup", arguments: '{"q":"lemons"}' } }] },
      { role: "tool", tool_call_id: callId, content: "notes about lemons: buy lemons" },
    ]);
    const conversation = res.headers.get("X-Conversation-Id")!;
    expect((await stored(conversation)).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    const usage = (await events(conversation)).filter((e) => e.type === "model.usage");
    expect(usage.map((e) => [e.data.step, e.data.promptTokens])).toEqual([
      [1, 100],
      [2, 200],
    ]);
    expect(usage[0]!.turnId).toBe(res.headers.get("X-Turn-Id"));
    expect(usage[1]!.turnId).not.toBe(usage[0]!.turnId);
    // Every step's turn is named, the first first, and each carries its own step's usage.
    expect(res.headers.get("X-Turn-Ids")!.split(", ")).toEqual([usage[0]!.turnId, usage[1]!.turnId]);
    const step2 = await frontend.json<{ reportedUsage: { promptTokens: number; step?: number }[]; gatewaySteps?: string[] }>("GET", `/v1/conversations/${conversation}/turns/${usage[1]!.turnId}`);
    expect(step2.reportedUsage).toMatchObject([{ promptTokens: 200, step: 2 }]);
    expect(step2.gatewaySteps).toBeUndefined();
    const step1 = await frontend.json<{ gatewaySteps?: string[] }>("GET", `/v1/conversations/${conversation}/turns/${usage[0]!.turnId}`);
    expect(step1.gatewaySteps).toEqual([usage[0]!.turnId, usage[1]!.turnId]);
  });

  it("returns calls to the client's own tools, runs the runtime's from the same reply, and continues with the client's results", async () => {
    const { app, chat, stored } = await setup();
    upstream.script = [
      { toolCalls: [{ name: "notes__lookup", arguments: { q: "trip" }, id: "call_app" }, { name: "open_in_browser", arguments: { url: "https://example.com/trip" }, id: "call_client" }] },
      { text: "Opened it, and your notes say: buy lemons." },
    ];
    const messages: unknown[] = [{ role: "user", content: "Open my trip page" }];
    const first = await chat({ messages, tools: [CLIENT_TOOL], parallel_tool_calls: true });
    const conversation = first.headers.get("X-Conversation-Id")!;
    const completion = await completionOf(first);
    expect(completion.choices[0]).toMatchObject({
      finish_reason: "tool_calls",
      message: { content: null, tool_calls: [{ id: "call_client", type: "function", function: { name: "open_in_browser", arguments: '{"url":"https://example.com/trip"}' } }] },
    });
    expect(upstream.requests[0]!.tools!.map((t) => t.function.name)).toEqual(["notes__lookup", "open_in_browser"]);
    expect(upstream.requests[0]!.parallel_tool_calls).toBe(true);
    expect(app.calls.filter((c) => c.method === "tools/call")).toHaveLength(1);

    // The client runs its tool and resends the whole history with the result.
    messages.push(completion.choices[0]!.message, { role: "tool", tool_call_id: "call_client", content: "opened" });
    const second = await completionOf(await chat({ messages, tools: [CLIENT_TOOL] }, conversation));
    expect(second.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: "Opened it, and your notes say: buy lemons." } });
    const results = upstream.requests[1]!.messages.filter((m) => m.role === "tool");
    expect(results).toEqual([
      { role: "tool", tool_call_id: "call_app", content: "notes about trip: buy lemons" },
      { role: "tool", tool_call_id: "call_client", content: "opened" },
    ]);
    expect((await stored(conversation)).map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
  });

  it("streams: chunks with the role first, text deltas, client tool calls by index, the finish reason, usage, then [DONE]", async () => {
    const { chat, stored, frontend } = await setup();
    upstream.script = [{ text: "Checking.", toolCalls: [{ name: "notes__lookup", arguments: { q: "plan" } }] }, { text: "Two calls now.", toolCalls: [{ name: "open_in_browser", arguments: { url: "https://a.example" } }, { name: "open_in_browser", arguments: { url: "https://b.example" } }] }];
    const res = await chat({ messages: [{ role: "user", content: "Open both" }], tools: [CLIENT_TOOL], stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    const events = await eventsOf(res);
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => ChatCompletionChunk.strict().parse(e));
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "", refusal: null });
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe("Checking.\n\nTwo calls now.");
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls.map((c) => [c.index, c.function?.name, c.function?.arguments])).toEqual([
      [0, "open_in_browser", '{"url":"https://a.example"}'],
      [1, "open_in_browser", '{"url":"https://b.example"}'],
    ]);
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finish.map((c) => c.choices[0]!.finish_reason)).toEqual(["tool_calls"]);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 300, completion_tokens: 14 });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(upstream.requests.every((r) => r.stream === true && (r.stream_options as { include_usage: boolean }).include_usage)).toBe(true);
    const history = await stored(res.headers.get("X-Conversation-Id")!);
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(history[3]).toMatchObject({ content: "Two calls now.", tool_calls: [{ function: { name: "open_in_browser" } }, { function: { name: "open_in_browser" } }] });
    // The headers left before step 2 ran: X-Turn-Id's turn names both steps' turns.
    expect(res.headers.get("X-Turn-Ids")).toBeNull();
    const first = res.headers.get("X-Turn-Id")!;
    const turn = await frontend.json<{ gatewaySteps?: string[] }>("GET", `/v1/conversations/${res.headers.get("X-Conversation-Id")}/turns/${first}`);
    expect(turn.gatewaySteps).toHaveLength(2);
    expect(turn.gatewaySteps![0]).toBe(first);
    const second = await frontend.json<{ reportedUsage: { step?: number }[] }>("GET", `/v1/conversations/${res.headers.get("X-Conversation-Id")}/turns/${turn.gatewaySteps![1]}`);
    expect(second.reportedUsage).toMatchObject([{ step: 2 }]);
  });

  it("passes the upstream's errors on in OpenAI's shape (4xx as they are, failures as 502), and a retry continues without a duplicate", async () => {
    const { chat, stored } = await setup();
    upstream.script = [{ error: { status: 429, message: "Rate limit reached", type: "rate_limit_error" } }];
    const limited = await chat({ messages: [{ role: "user", content: "hello" }] });
    const conversation = limited.headers.get("X-Conversation-Id")!;
    expect(limited.status).toBe(429);
    expect(limited.headers.get("Retry-After")).toBe("7");
    expect(OpenAIError.strict().parse(await limited.json()).error).toEqual({ message: "Rate limit reached", type: "rate_limit_error", param: null, code: null });

    upstream.script = [{ error: { status: 503, message: "overloaded", type: "server_error" } }];
    const failed = await chat({ messages: [{ role: "user", content: "hello" }] }, conversation);
    expect(failed.status).toBe(502);
    expect((await failed.json()) as OpenAIError).toMatchObject({ error: { type: "server_error", code: "upstream_error" } });

    upstream.script = [{ unreachable: true }];
    const unreachable = await chat({ messages: [{ role: "user", content: "hello" }] }, conversation);
    expect(unreachable.status).toBe(502);
    expect((await unreachable.json()) as OpenAIError).toMatchObject({ error: { type: "server_error", code: "upstream_unreachable" } });

    upstream.script = [{ text: "Hello!" }];
    expect((await completionOf(await chat({ messages: [{ role: "user", content: "hello" }] }, conversation))).choices[0]!.message.content).toBe("Hello!");
    expect(await stored(conversation)).toEqual([
      { role: "user", content: expect.stringMatching(/^hello\n\n<system_reminder/) },
      { role: "assistant", content: "Hello!" },
    ]);
  });

  it("a stream that breaks stores no half reply: the client gets an error event, and a retry answers whole", async () => {
    const { chat, stored } = await setup();
    upstream.script = [{ text: "This answer will be cut in the middle.", breakAfter: 3 }];
    const res = await chat({ messages: [{ role: "user", content: "Tell me" }], stream: true });
    const conversation = res.headers.get("X-Conversation-Id")!;
    const events = await eventsOf(res);
    expect(events).not.toContain("[DONE]");
    const error = OpenAIError.parse(events.at(-1));
    expect(error.error).toMatchObject({ type: "server_error", code: "upstream_stream_broken" });
    const partial = events.slice(0, -1).map((e) => ChatCompletionChunk.parse(e).choices[0]?.delta.content ?? "").join("");
    expect(partial).toBe("This answer wil");
    expect((await stored(conversation)).map((m) => m.role)).toEqual(["user"]);

    upstream.script = [{ text: "Whole answer." }];
    const retry = await eventsOf(await chat({ messages: [{ role: "user", content: "Tell me" }], stream: true }, conversation));
    expect(retry.at(-1)).toBe("[DONE]");
    expect(userText(upstream.requests[1]!.messages.at(-1))).toMatch(/^Tell me\n\n<system_reminder/);
    expect((await stored(conversation)).map((m) => [m.role, m.role === "assistant" ? m.content : null])).toEqual([
      ["user", null],
      ["assistant", "Whole answer."],
    ]);
  });

  it("stops at GATEWAY_MAX_STEPS (8): the runtime's calls are run and stored, and the answer ends with finish_reason length", async () => {
    const { chat, stored } = await setup();
    upstream.script = Array.from({ length: 8 }, (_, i) => ({ toolCalls: [{ name: "notes__lookup", arguments: { q: `w${i}` } }] }));
    const res = await chat({ messages: [{ role: "user", content: "Look everything up" }] });
    const completion = await completionOf(res);
    expect(completion.choices[0]).toMatchObject({ finish_reason: "length", message: { content: null } });
    expect(upstream.requests).toHaveLength(8);
    const history = await stored(res.headers.get("X-Conversation-Id")!);
    expect(history.map((m) => m.role)).toEqual(["user", ...Array.from({ length: 8 }, () => ["assistant", "tool"]).flat()]);
  });

  it("refuses bad requests with 400 in OpenAI's shape, and names an unknown agent or conversation", async () => {
    const { chat, frontend } = await setup();
    const cases: [Record<string, unknown>, string | null][] = [
      [{ messages: [] }, "messages"],
      [{ messages: [{ role: "user", content: "x" }], n: 2 }, "n"],
      [{ messages: [{ role: "user", content: "x" }], temperature: 9 }, "temperature"],
      [{ model: "gpt-4o", messages: [{ role: "user", content: "x" }] }, "model"],
    ];
    for (const [body, param] of cases) {
      const res = await chat(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get("Content-Type")).toBe("application/json");
      expect(OpenAIError.strict().parse(await res.json()).error).toMatchObject({ type: "invalid_request_error", param });
    }
    const notJson = await frontend.request("POST", "/v1/chat/completions", "{", { "Content-Type": "application/json" });
    expect(notJson.status).toBe(400);
    const unknownAgent = await chat({ model: "notes:nobody", messages: [{ role: "user", content: "x" }] });
    expect(unknownAgent.status).toBe(404);
    expect(((await unknownAgent.json()) as OpenAIError).error).toMatchObject({ code: "model_not_found", param: "model" });
    const unknownConversation = await chat({ messages: [{ role: "user", content: "x" }] }, "no-such-conversation");
    expect(unknownConversation.status).toBe(404);
    expect(((await unknownConversation.json()) as OpenAIError).error.code).toBe("conversation_not_found");
    expect(upstream.requests).toHaveLength(0);
  });
});
