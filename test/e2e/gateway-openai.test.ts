/**
 * The model gateway end to end: the official `openai` client, unmodified, with `baseURL` at a real `wrangler dev`
 * whose upstream (UPSTREAM_URL) is the local fake model of test/e2e/fake-openai.ts. The fake records what it was
 * sent, so each test asserts the upstream read the runtime's assembled input, not the client's raw history.
 *
 * This file starts its own `wrangler dev` (the shared one has no upstream configured).
 */
import OpenAI, { RateLimitError, APIError } from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startLocalRuntime } from "../../scripts/local-runtime";
import { mintToken } from "../../src/http/auth";
import { ContextApp, ContextClient } from "../../src/sdk";
import { startFakeOpenAI, type FakeOpenAI, type ScriptedReply } from "./fake-openai";

const SECRET = `e2e-gateway-${crypto.randomUUID()}`;
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

/** A tenant with a notes app (an editor context and a search tool), and the `openai` client pointed at the runtime. */
async function setup() {
  const tenant = `gw-${crypto.randomUUID().slice(0, 8)}`;
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
  const openai = (conversation?: string) => new OpenAI({ apiKey, baseURL: `${runtime.url}/v1`, maxRetries: 0, ...(conversation ? { defaultHeaders: { "X-Conversation-Id": conversation } } : {}) });
  const client = new ContextClient({ url: runtime.url, apiKey });
  const from = fake.requests.length;
  return { openai, client, sent: () => fake.requests.slice(from), setOpen: (note: string) => (open = note) };
}

const MODEL = "notes:assistant";
const OPEN_URL: ChatCompletionTool = { type: "function", function: { name: "open_url", description: "Open a URL in the user's browser.", parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"] } } };
const content = (m: unknown) => String((m as { content: unknown }).content).replace(/ nonce="[a-z0-9]{12}"/g, "");

describe("the gateway with the official openai client", () => {
  it("runs a multi-turn conversation with contexts injected, streaming and not, the client resending its whole history", async () => {
    const { openai, client, sent, setOpen } = await setup();
    script = [{ text: "You are on the Q4 plan." }, { text: "Now on groceries." }];
    const history: ChatCompletionMessageParam[] = [{ role: "system", content: "Talk like a pirate." }, { role: "user", content: "What am I on?" }];
    const { data: first, response } = await openai().chat.completions.create({ model: MODEL, messages: history }).withResponse();
    const conversation = response.headers.get("x-conversation-id")!;
    expect(conversation).toBeTruthy();
    expect(first.choices[0]!.message).toMatchObject({ role: "assistant", content: "You are on the Q4 plan." });
    expect(first.choices[0]!.finish_reason).toBe("stop");
    expect(first.model).toBe(MODEL);

    setOpen("groceries");
    history.push(first.choices[0]!.message, { role: "user", content: "And now?" });
    let text = "";
    for await (const chunk of await openai(conversation).chat.completions.create({ model: MODEL, messages: history, stream: true })) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("Now on groceries.");

    const [r1, r2] = sent();
    expect(fake.headers.at(-1)!.authorization).toBe("Bearer sk-upstream-e2e");
    expect(r1!.model).toBe("fake-gpt");
    expect(r1!.messages).toHaveLength(2);
    expect(content(r1!.messages[0])).toContain("You are the Notes Assistant.");
    expect(JSON.stringify([r1, r2])).not.toContain("pirate");
    expect(content(r1!.messages[1])).toBe("What am I on?\n\n<system_reminder>\n[Context: Editor]\nOpen note: Q4 plan\n</system_reminder>");
    expect(r2!.stream).toBe(true);
    expect(r2!.messages.slice(0, 2)).toEqual(r1!.messages);
    expect(r2!.messages[2]).toEqual({ role: "assistant", content: "You are on the Q4 plan." });
    expect(content(r2!.messages[3])).toBe("And now?\n\n<system_reminder>\n[Context updated: Editor]\nOpen note: groceries\n</system_reminder>");

    const { messages } = await client.messages(conversation);
    expect(messages.map((m) => m.message.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  for (const stream of [false, true]) {
    it(`runs the app's tool itself, parallel calls included${stream ? ", streamed" : ""}`, async () => {
      const { openai, client, sent } = await setup();
      script = [{ toolCalls: [{ name: "notes__search", arguments: { q: "lemons" } }, { name: "notes__search", arguments: { q: "plan" } }] }, { text: "Lemons, and the plan says rest." }];
      const params = { model: MODEL, messages: [{ role: "user" as const, content: "Check lemons and the plan" }] };
      let answer: string | null;
      let conversation = "";
      if (stream) {
        const runner = openai().chat.completions.stream(params);
        const done = await runner.finalChatCompletion();
        answer = done.choices[0]!.message.content;
        expect(done.choices[0]!.finish_reason).toBe("stop");
        conversation = await latestConversation(openai);
      } else {
        const { data, response } = await openai().chat.completions.create(params).withResponse();
        answer = data.choices[0]!.message.content;
        conversation = response.headers.get("x-conversation-id")!;
        expect(data.usage!.prompt_tokens).toBe(sent().reduce((n, r) => n + Math.ceil(JSON.stringify(r.messages).length / 4), 0));
      }
      const { messages } = await client.messages(conversation);
      expect(messages.map((m) => m.message.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
      expect(answer).toBe("Lemons, and the plan says rest.");
      const [, second] = sent();
      expect(second!.messages.slice(-2)).toEqual([
        { role: "tool", tool_call_id: expect.any(String), content: NOTES.lemons },
        { role: "tool", tool_call_id: expect.any(String), content: NOTES.plan },
      ]);
    });
  }

  it("returns parallel calls to the client's own tools (the SDK's stream helper puts them together by index) and continues with their results", async () => {
    const { openai, sent } = await setup();
    script = [
      { text: "Opening both.", toolCalls: [{ name: "open_url", arguments: { url: "https://a.example" } }, { name: "open_url", arguments: { url: "https://b.example" } }] },
      { text: "Both are open." },
    ];
    const history: ChatCompletionMessageParam[] = [{ role: "user", content: "Open a and b" }];
    const runner = openai().chat.completions.stream({ model: MODEL, messages: history, tools: [OPEN_URL] });
    const first = await runner.finalChatCompletion();
    const message = first.choices[0]!.message;
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    expect(message.content).toBe("Opening both.");
    expect(message.tool_calls!.map((c) => c.type === "function" && [c.function.name, JSON.parse(c.function.arguments).url])).toEqual([
      ["open_url", "https://a.example"],
      ["open_url", "https://b.example"],
    ]);
    expect(sent()[0]!.tools!.map((t) => (t as { function: { name: string } }).function.name)).toEqual(["notes__search", "open_url"]);

    // The client runs them and sends only the new messages (its results), on the same conversation.
    const id = await latestConversation(openai);
    const results: ChatCompletionMessageParam[] = message.tool_calls!.map((c) => ({ role: "tool", tool_call_id: c.id, content: "opened" }));
    const second = await openai(id).chat.completions.create({ model: MODEL, messages: results, tools: [OPEN_URL] });
    expect(second.choices[0]!.message.content).toBe("Both are open.");
    expect(sent()[1]!.messages.slice(-3)).toMatchObject([{ role: "assistant", tool_calls: [{}, {}] }, { role: "tool", content: "opened" }, { role: "tool", content: "opened" }]);
  });

  it("holds a conversation for a client that sets only baseURL and the key: five turns with tool steps, the whole history resent each time, one conversation, nothing stored twice", async () => {
    const { openai, client, sent } = await setup();
    script = [
      { text: "You are on the Q4 plan." },
      { toolCalls: [{ name: "search", arguments: { q: "lemons" } }] },
      { text: "Your list has oat milk and lemons." },
      { toolCalls: [{ name: "open_url", arguments: { url: "https://shop.example" } }] },
      { text: "The shop is open." },
      { text: "You are welcome." },
      { text: "Bye!" },
    ];
    // No X-Conversation-Id, ever: a chat UI with nothing but a base URL and a key.
    const ui = openai();
    const history: ChatCompletionMessageParam[] = [{ role: "system", content: "Be brief." }];
    const ids = new Set<string | null>();
    const ask = async (stream: boolean) => {
      if (!stream) {
        const { data, response } = await ui.chat.completions.create({ model: MODEL, messages: history, tools: [OPEN_URL] }).withResponse();
        ids.add(response.headers.get("x-conversation-id"));
        history.push(data.choices[0]!.message);
        return data.choices[0]!.message;
      }
      const { data, response } = await ui.chat.completions.create({ model: MODEL, messages: history, tools: [OPEN_URL], stream: true }).withResponse();
      ids.add(response.headers.get("x-conversation-id"));
      const message: ChatCompletionMessageParam & { role: "assistant"; content: string | null } = { role: "assistant", content: null };
      for await (const chunk of data) if (chunk.choices[0]?.delta.content) message.content = (message.content ?? "") + chunk.choices[0].delta.content;
      history.push(message);
      return message;
    };
    const said = ["What am I on?", "What is on my lemons note?", "Open the shop", "Thanks", "Bye"];
    history.push({ role: "user", content: said[0]! });
    expect((await ask(false)).content).toBe("You are on the Q4 plan.");
    history.push({ role: "user", content: said[1]! });
    expect((await ask(true)).content).toBe("Your list has oat milk and lemons.");
    history.push({ role: "user", content: said[2]! });
    const call = (await ask(false)) as { tool_calls?: { id: string; function: { name: string } }[] };
    expect(call.tool_calls!.map((c) => c.function.name)).toEqual(["open_url"]);
    history.push({ role: "tool", tool_call_id: call.tool_calls![0]!.id, content: "opened" });
    expect((await ask(true)).content).toBe("The shop is open.");
    history.push({ role: "user", content: said[3]! });
    expect((await ask(false)).content).toBe("You are welcome.");
    history.push({ role: "user", content: said[4]! });
    expect((await ask(true)).content).toBe("Bye!");

    expect(ids.size).toBe(1);
    const [conversation] = [...ids];
    expect(conversation).toBeTruthy();
    expect(((await ui.get("/conversations")) as { conversations: { id: string }[] }).conversations.map((c) => c.id)).toEqual([conversation]);
    const { messages } = await client.messages(conversation!);
    const stored = messages.map((m) => m.message);
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant", "user", "assistant", "user", "assistant"]);
    expect(stored.filter((m) => m.role === "user").map((m) => content(m).split("\n")[0])).toEqual(said);
    // Each upstream call read the one before it as its prefix: the history as stored, never a message twice.
    const calls = sent();
    expect(calls).toHaveLength(7);
    for (const [i, r] of calls.entries()) if (i > 0) expect(r.messages.slice(0, calls[i - 1]!.messages.length)).toEqual(calls[i - 1]!.messages);
  });

  it("passes an upstream error on as the SDK's own error class, and a later request goes on", async () => {
    const { openai } = await setup();
    script = [{ error: { status: 429, message: "Rate limit reached for fake-gpt", type: "rate_limit_error" } }];
    const failing = openai().chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }] });
    await expect(failing).rejects.toBeInstanceOf(RateLimitError);
    const error = (await failing.catch((e: unknown) => e)) as APIError;
    expect(error.status).toBe(429);
    expect(error.message).toContain("Rate limit reached for fake-gpt");

    // A bad request is refused before any model call, in the same shape.
    const bad = await openai().chat.completions.create({ model: "no-agent", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(APIError);
    expect((bad as APIError).status).toBe(400);
    expect((bad as APIError).param).toBe("model");
  });
});

/** The caller's newest conversation, for a streamed answer whose headers the stream helper keeps to itself. */
async function latestConversation(openai: (c?: string) => OpenAI): Promise<string> {
  const page = (await openai().get("/conversations")) as { conversations: { id: string }[] };
  return page.conversations[0]!.id;
}
