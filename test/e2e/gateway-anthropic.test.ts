/**
 * The model gateway's Anthropic side end to end: the official `@anthropic-ai/sdk` client, unmodified, with `baseURL`
 * at a real `wrangler dev` whose upstream (UPSTREAM_URL) is the local fake OpenAI-compatible model of
 * test/e2e/fake-openai.ts. The fake records what it was sent, so each test asserts the upstream read the runtime's
 * assembled input, not the client's raw history.
 *
 * This file starts its own `wrangler dev` (the shared one has no upstream configured).
 */
import Anthropic, { APIError, BadRequestError, RateLimitError } from "@anthropic-ai/sdk";
import type { MessageParam, Tool } from "@anthropic-ai/sdk/resources/messages";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startLocalRuntime } from "../../scripts/local-runtime";
import { mintToken } from "../../src/http/auth";
import { ContextApp, ContextClient } from "../../src/sdk";
import { startFakeOpenAI, type FakeOpenAI, type ScriptedReply } from "./fake-openai";

const SECRET = `e2e-gateway-anthropic-${crypto.randomUUID()}`;
let runtime: { url: string; stop: () => Promise<void> };
let fake: FakeOpenAI;
/** The replies the fake model gives, one per request, set by each test. */
let script: ScriptedReply[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAI(() => script.shift() ?? { error: { status: 500, message: "the test's script ran out", type: "server_error" } });
  runtime = await startLocalRuntime(SECRET, { vars: { UPSTREAM_URL: fake.url, UPSTREAM_MODEL: "fake-gpt", UPSTREAM_KEY: "sk-upstream-e2e" } });
}, 90_000);
afterAll(async () => {
  await runtime?.stop();
  await fake?.close();
});

const apps: ContextApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
  script = [];
});

const NOTES: Record<string, string> = { lemons: "Groceries: oat milk, lemons", plan: "Q4 plan: hire, ship, rest" };

/** A tenant with a notes app (an editor context and a search tool), and the Anthropic client pointed at the runtime. */
async function setup() {
  const tenant = `gwa-${crypto.randomUUID().slice(0, 8)}`;
  let open = "Q4 plan";
  const app = new ContextApp({
    url: runtime.url,
    token: await mintToken(SECRET, { kind: "app", tenant, sub: "alice", app: "notes" }),
    app: { name: "notes", version: "1.0.0" },
    contexts: [{ id: "editor", name: "Editor", description: "The open note", getCurrent: async () => ({ title: "Editor", content: `Open note: ${open}` }) }],
    tools: [
      {
        name: "search",
        description: "Search the user's notes.",
        inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
        handler: async ({ q }) => NOTES[String(q)] ?? "no notes match",
      },
    ],
  });
  apps.push(app);
  await app.connect();
  await app.createAgent({ agentId: "assistant", name: "Notes Assistant", systemPrompt: "You are the Notes Assistant.", attachedContexts: ["notes:editor"], tools: ["search"] });
  const apiKey = await mintToken(SECRET, { kind: "frontend", tenant, sub: "alice" });
  const conversationHeader = (conversation?: string) => (conversation ? { "X-Conversation-Id": conversation } : {});
  /** The SDK as configured by a user: apiKey and baseURL (the SDK appends /v1/messages). */
  const anthropic = (conversation?: string) => new Anthropic({ apiKey, baseURL: runtime.url, maxRetries: 0, defaultHeaders: conversationHeader(conversation) });
  /** The key as `x-api-key`, as Claude Code and older SDK versions send it. */
  const withApiKeyHeader = (conversation?: string) => new Anthropic({ apiKey: null, baseURL: runtime.url, maxRetries: 0, defaultHeaders: { "x-api-key": apiKey, ...conversationHeader(conversation) } });
  const client = new ContextClient({ url: runtime.url, apiKey });
  const from = fake.requests.length;
  return { anthropic, withApiKeyHeader, client, sent: () => fake.requests.slice(from), setOpen: (note: string) => (open = note) };
}

const MODEL = "notes:assistant";
const OPEN_URL: Tool = { name: "open_url", description: "Open a URL in the user's browser.", input_schema: { type: "object", properties: { url: { type: "string" } }, required: ["url"] } };
const content = (m: unknown) => String((m as { content: unknown }).content).replace(/ nonce="[a-z0-9]{12}"/g, "");

describe("the gateway with the official @anthropic-ai/sdk client", () => {
  it("runs a multi-turn conversation with contexts injected, streaming and not, the client resending its whole history", async () => {
    const { anthropic, withApiKeyHeader, client, sent, setOpen } = await setup();
    script = [{ text: "You are on the Q4 plan." }, { text: "Now on groceries." }, { text: "Still groceries." }];
    const history: MessageParam[] = [{ role: "user", content: "What am I on?" }];
    const { data: first, response } = await anthropic().messages.create({ model: MODEL, max_tokens: 512, system: "Talk like a pirate.", messages: history }).withResponse();
    const conversation = response.headers.get("x-conversation-id")!;
    expect(conversation).toBeTruthy();
    expect(first).toMatchObject({ type: "message", role: "assistant", model: MODEL, stop_reason: "end_turn", content: [{ type: "text", text: "You are on the Q4 plan." }] });
    expect(first.usage.input_tokens).toBeGreaterThan(0);
    expect(first.usage.output_tokens).toBeGreaterThan(0);

    // Streamed, with the SDK's helper; the whole history resent.
    setOpen("groceries");
    history.push({ role: "assistant", content: first.content }, { role: "user", content: "And now?" });
    const stream = anthropic(conversation).messages.stream({ model: MODEL, max_tokens: 512, system: "Talk like a pirate.", messages: history });
    let streamed = "";
    stream.on("text", (t) => (streamed += t));
    const second = await stream.finalMessage();
    expect(streamed).toBe("Now on groceries.");
    expect(second).toMatchObject({ stop_reason: "end_turn", content: [{ type: "text", text: "Now on groceries." }] });
    expect(second.usage.output_tokens).toBeGreaterThan(0);

    // Only the new message, with the key as x-api-key.
    const third = await withApiKeyHeader(conversation).messages.create({ model: MODEL, max_tokens: 512, messages: [{ role: "user", content: "Still?" }] });
    expect(third.content).toMatchObject([{ type: "text", text: "Still groceries." }]);

    const [r1, r2, r3] = sent();
    expect(fake.headers.at(-1)!.authorization).toBe("Bearer sk-upstream-e2e");
    expect(r1!.model).toBe("fake-gpt");
    expect(r1!.max_tokens).toBe(512);
    expect(r1!.messages).toHaveLength(2);
    expect(content(r1!.messages[0])).toContain("You are the Notes Assistant.");
    expect(JSON.stringify(sent())).not.toContain("pirate");
    expect(content(r1!.messages[1])).toBe("What am I on?\n\n<system_reminder>\n[Context: Editor]\nOpen note: Q4 plan\n</system_reminder>");
    expect(r2!.stream).toBe(true);
    expect(r2!.messages.slice(0, 2)).toEqual(r1!.messages);
    expect(r2!.messages[2]).toEqual({ role: "assistant", content: "You are on the Q4 plan." });
    expect(content(r2!.messages[3])).toBe("And now?\n\n<system_reminder>\n[Context updated: Editor]\nOpen note: groceries\n</system_reminder>");
    expect(r3!.messages.slice(0, 4)).toEqual(r2!.messages);

    const { messages } = await client.messages(conversation);
    expect(messages.map((m) => m.message.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"]);
  });

  for (const stream of [false, true]) {
    it(`runs the app's tool itself, parallel calls included${stream ? ", streamed" : ""}`, async () => {
      const { anthropic, client, sent } = await setup();
      script = [{ text: "Checking both.", toolCalls: [{ name: "notes__search", arguments: { q: "lemons" } }, { name: "notes__search", arguments: { q: "plan" } }] }, { text: "Lemons, and the plan says rest." }];
      const params = { model: MODEL, max_tokens: 512, messages: [{ role: "user" as const, content: "Check lemons and the plan" }] };
      const { data: answer, response } = stream ? await anthropic().messages.stream(params).withResponse().then(async (r) => ({ data: await r.data.finalMessage(), response: r.response })) : await anthropic().messages.create(params).withResponse();
      expect(answer.stop_reason).toBe("end_turn");
      expect(answer.content).toEqual([expect.objectContaining({ type: "text", text: "Checking both.\n\nLemons, and the plan says rest." })]);
      const conversation = response.headers.get("x-conversation-id")!;
      const { messages } = await client.messages(conversation);
      expect(messages.map((m) => m.message.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
      const [, second] = sent();
      expect(second!.messages.slice(-2)).toEqual([
        { role: "tool", tool_call_id: expect.any(String), content: NOTES.lemons },
        { role: "tool", tool_call_id: expect.any(String), content: NOTES.plan },
      ]);
    });
  }

  it("returns parallel calls to the client's own tools as tool_use blocks (streamed, put together by the SDK) and continues with its tool_result blocks", async () => {
    const { anthropic, sent } = await setup();
    script = [
      { text: "Opening both.", toolCalls: [{ name: "open_url", arguments: { url: "https://a.example" } }, { name: "open_url", arguments: { url: "https://b.example" } }] },
      { text: "Both are open." },
    ];
    const history: MessageParam[] = [{ role: "user", content: "Open a and b" }];
    const stream = anthropic().messages.stream({ model: MODEL, max_tokens: 512, messages: history, tools: [OPEN_URL] });
    const { response } = await stream.withResponse();
    const conversation = response.headers.get("x-conversation-id")!;
    const first = await stream.finalMessage();
    expect(first.stop_reason).toBe("tool_use");
    expect(first.content[0]).toMatchObject({ type: "text", text: "Opening both." });
    const calls = first.content.filter((b) => b.type === "tool_use");
    expect(calls.map((c) => [c.name, c.input])).toEqual([
      ["open_url", { url: "https://a.example" }],
      ["open_url", { url: "https://b.example" }],
    ]);
    expect((sent()[0]!.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual(["notes__search", "open_url"]);

    // The client runs them and resends its whole history with the results, as Anthropic's tool-use loop does.
    history.push({ role: "assistant", content: first.content }, { role: "user", content: calls.map((c) => ({ type: "tool_result" as const, tool_use_id: c.id, content: "opened" })) });
    const second = await anthropic(conversation).messages.create({ model: MODEL, max_tokens: 512, messages: history, tools: [OPEN_URL] });
    expect(second.content).toMatchObject([{ type: "text", text: "Both are open." }]);
    expect(sent()[1]!.messages.slice(-3)).toMatchObject([{ role: "assistant", tool_calls: [{}, {}] }, { role: "tool", content: "opened" }, { role: "tool", content: "opened" }]);
  });

  it("passes an upstream error on as the SDK's own error class, refuses a bad request in the same shape, and a later request goes on", async () => {
    const { anthropic } = await setup();
    script = [{ error: { status: 429, message: "Rate limit reached for fake-gpt", type: "rate_limit_error" } }];
    const failing = anthropic().messages.create({ model: MODEL, max_tokens: 64, messages: [{ role: "user", content: "hi" }] });
    const error = (await failing.catch((e: unknown) => e)) as APIError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.status).toBe(429);
    expect(error.type).toBe("rate_limit_error");
    expect(error.message).toContain("Rate limit reached for fake-gpt");

    const bad = await anthropic().messages.create({ model: "claude-sonnet-4-5", max_tokens: 64, messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequestError);
    expect((bad as APIError).type).toBe("invalid_request_error");
    expect((bad as APIError).errorCode).toBe("invalid_model");

    // Streamed, an error before the first byte is the same error class.
    script = [{ error: { status: 429, message: "Rate limit reached again", type: "rate_limit_error" } }];
    const streamed = await anthropic().messages.stream({ model: MODEL, max_tokens: 64, messages: [{ role: "user", content: "hi" }] }).finalMessage().catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(RateLimitError);

    script = [{ text: "Hello." }];
    const fine = await anthropic().messages.create({ model: MODEL, max_tokens: 64, messages: [{ role: "user", content: "hi" }] });
    expect(fine.content).toMatchObject([{ type: "text", text: "Hello." }]);
  });
});
