/**
 * A frontend loop with the official `openai` client, against `wrangler dev` and a local fake OpenAI-compatible
 * server (test/e2e/fake-openai.ts): take a turn, send `turn.messages` to the model as they are, append what the
 * client returned verbatim, take the next turn. The fake records what the model was sent, so each step asserts the
 * model read exactly the runtime's assembled input.
 *
 * The first block has the frontend run its own tools and send their results in the next turn's `toolResults`. The
 * second has an app (the SDK's ContextApp on a real socket) serve the tools: the frontend passes `turn.tools` to the
 * model beside `turn.messages`, and sends a reply with tool calls back verbatim as the next turn's `reply`; the runtime
 * runs the calls on the app and answers with the next model input, results in place: one request per tool use.
 */
import OpenAI from "openai";
import type { ChatCompletionMessage, ChatCompletionMessageFunctionToolCall, ChatCompletionTool } from "openai/resources/chat/completions";
import { afterEach, describe, expect, it } from "vitest";
import { ContextClient, type ContextApp, type ContextAppOptions, type TurnResult } from "../../src/sdk";
import { startFakeOpenAI, type FakeOpenAI, type Script } from "./fake-openai";
import { apiKey, freshIdentity, frontend, runtimeUrl, sleep, startApp, type Identity } from "./support";

const MODEL = "fake-gpt";
const SEARCH_NOTES: ChatCompletionTool = {
  type: "function",
  function: { name: "search_notes", description: "Search the user's notes", parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } },
};
const NOTES: Record<string, string> = { lemons: "Groceries: - oat milk - lemons - coffee beans" };

const servers: FakeOpenAI[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A tenant with a notes app and its agent, a conversation, and an `openai` client pointed at a fake model playing `script`. */
async function setup(script: Script) {
  const fake = await startFakeOpenAI(script);
  servers.push(fake);
  const id = freshIdentity();
  const app = await startApp(id, { name: "notes", contexts: [] });
  const { agentId: agent } = await app.createAgent({ agentId: "assistant", name: "Notes Assistant", systemPrompt: "You are the Notes Assistant.", attachedContexts: [] });
  const client = await frontend(id);
  const { id: conversation } = await client.createConversation({ agent });
  const openai = new OpenAI({ apiKey: "sk-fake", baseURL: fake.url, maxRetries: 0 });
  return { fake, agent, client, conversation, step: (turn: TurnResult, options?: StepOptions) => modelStep({ openai, client, conversation }, turn, options) };
}

interface StepOptions {
  stream?: boolean;
  tools?: ChatCompletionTool[];
}

/**
 * One model step as a frontend runs it: the turn's model input goes to the model as it is, and the model's message
 * is appended to the conversation as the client handed it over (streamed: accumulated from its deltas first).
 */
async function modelStep(
  { openai, client, conversation }: { openai: OpenAI; client: ContextClient; conversation: string },
  turn: TurnResult,
  { stream = false, tools }: StepOptions = {},
): Promise<ChatCompletionMessage> {
  const message = await complete(openai, { model: MODEL, messages: turn.messages, ...(tools ? { tools } : {}) }, stream);
  await client.appendMessages(conversation, [message]);
  return message;
}

/** One model call with the official client: its `choices[0].message`, or, streamed, the message assembled from its deltas. */
async function complete(openai: OpenAI, params: { model: string; messages: TurnResult["messages"]; tools?: ChatCompletionTool[] }, stream: boolean): Promise<ChatCompletionMessage> {
  let message: ChatCompletionMessage;
  if (stream) {
    message = { role: "assistant", content: null, refusal: null };
    const calls: ChatCompletionMessageFunctionToolCall[] = [];
    for await (const chunk of await openai.chat.completions.create({ ...params, stream: true })) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) message.content = (message.content ?? "") + delta.content;
      if (delta?.refusal) message.refusal = (message.refusal ?? "") + delta.refusal;
      for (const d of delta?.tool_calls ?? []) {
        const call = (calls[d.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
        if (d.id) call.id = d.id;
        call.function.name += d.function?.name ?? "";
        call.function.arguments += d.function?.arguments ?? "";
      }
    }
    if (calls.length) message.tool_calls = calls;
  } else {
    message = (await openai.chat.completions.create(params)).choices[0]!.message;
  }
  return message;
}

/** What the frontend's own tool returns for a call. */
function runTool(call: ChatCompletionMessageFunctionToolCall): string {
  const { q } = JSON.parse(call.function.arguments) as { q: string };
  return NOTES[q] ?? "no notes match";
}

describe("a frontend loop with the official openai client", () => {
  it("sends each turn's messages to the model as they are, and the reply, appended verbatim, is in the next turn's history", async () => {
    const { fake, agent, client, conversation, step } = await setup([{ text: "Hello Alice! How can I help?" }, { text: "I said hello." }]);
    const first = await client.turn(conversation, { agent, message: "Hi, I'm Alice." });
    const reply = await step(first);
    expect(fake.requests[0]).toMatchObject({ model: MODEL });
    expect(fake.requests[0]!.messages).toEqual(first.messages);
    // Verbatim means with the SDK's own keys: the runtime takes them and stores only what the model reads.
    expect(reply).toEqual({ role: "assistant", content: "Hello Alice! How can I help?", refusal: null, annotations: [] });

    const second = await client.turn(conversation, { agent, message: "What did you say?" });
    expect(second.messages).toEqual([
      ...first.messages,
      { role: "assistant", content: "Hello Alice! How can I help?" },
      { role: "user", content: "What did you say?" },
    ]);
    await step(second);
    expect(fake.requests[1]!.messages).toEqual(second.messages);
    const { messages } = await client.messages(conversation);
    expect(messages.map((m) => m.message)).toEqual([
      { role: "user", content: "Hi, I'm Alice." },
      { role: "assistant", content: "Hello Alice! How can I help?" },
      { role: "user", content: "What did you say?" },
      { role: "assistant", content: "I said hello." },
    ]);
  });

  for (const stream of [false, true]) {
    it(`runs a tool call round${stream ? ", streamed" : ""}: the frontend supplies the result in the next turn's toolResults`, async () => {
      const { fake, agent, client, conversation, step } = await setup([
        { toolCalls: [{ name: "search_notes", arguments: { q: "lemons" } }] },
        { text: "Yes: lemons are on your groceries list." },
      ]);
      const ask = await client.turn(conversation, { agent, message: "Do I need lemons?" });
      const reply = await step(ask, { stream, tools: [SEARCH_NOTES] });
      expect(fake.requests[0]!.messages).toEqual(ask.messages);
      expect(fake.requests[0]!.tools).toEqual([SEARCH_NOTES]);
      expect(fake.requests[0]!.stream ?? false).toBe(stream);
      const call = { id: "call_1", type: "function" as const, function: { name: "search_notes", arguments: '{"q":"lemons"}' } };
      expect(reply.tool_calls).toEqual([call]);
      expect(reply.content).toBeNull();

      const results = reply.tool_calls!.map((c) => ({ tool_call_id: c.id, content: runTool(c as ChatCompletionMessageFunctionToolCall) }));
      const resumed = await client.turn(conversation, { agent, toolResults: results });
      expect(resumed.messages).toEqual([
        ...ask.messages,
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: "call_1", content: NOTES.lemons },
      ]);
      const answer = await step(resumed, { stream, tools: [SEARCH_NOTES] });
      expect(fake.requests[1]!.messages).toEqual(resumed.messages);
      expect(answer.content).toBe("Yes: lemons are on your groceries list.");

      const next = await client.turn(conversation, { agent, message: "Thanks!" });
      expect(next.messages.slice(-2)).toEqual([
        { role: "assistant", content: "Yes: lemons are on your groceries list." },
        { role: "user", content: "Thanks!" },
      ]);
      expect(fake.requests).toHaveLength(2);
    });
  }

  it("stores a refusal the client returns as what the model said", async () => {
    const { agent, client, conversation, step } = await setup([{ refusal: "I can't help with that." }]);
    await step(await client.turn(conversation, { agent, message: "Do something bad." }));
    const next = await client.turn(conversation, { agent, message: "Fine." });
    expect(next.messages.slice(-2)).toEqual([
      { role: "assistant", content: "I can't help with that." },
      { role: "user", content: "Fine." },
    ]);
  });
});

// ── Tools an app serves, run by the runtime ───────────────────────────────────

type AppTools = NonNullable<ContextAppOptions["tools"]>;

const EVENT_SCHEMA = {
  type: "object",
  properties: { title: { type: "string" }, date: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" } },
  required: ["title", "date"],
  additionalProperties: false,
};
const LOG_SCHEMA = { type: "object", properties: { days: { type: "integer", minimum: 1 } }, required: ["days"] };
const ID_SCHEMA = { type: "object", properties: { id: { type: "string" } }, required: ["id"] };
/** A GitHub token as a tool might leak it: `ghp_` and 36 letters and digits. */
const SECRET = `ghp_${"a1B2c3D4e5".repeat(4).slice(0, 36)}`;

/** What the handlers saw: each call's arguments and call info, in the order they started. */
interface HandlerCall {
  tool: string;
  args: Record<string, unknown>;
  conversationId: string;
  toolCallId: string;
}

/** Resolves once `n` callers have arrived; a caller left alone for 5 s fails: the calls did not run side by side. */
function barrier(n: number): () => Promise<void> {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return async () => {
    if (++arrived === n) release();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const alone = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`only ${arrived} of ${n} parallel calls started`)), 5_000)));
    await Promise.race([all, alone]).finally(() => clearTimeout(timer));
  };
}

/**
 * A tenant with a `calendar` app serving `tools` (each handler call recorded), a `planner` agent of the app's binding
 * `bind` (and `catalog`), a conversation, an `openai` client on a fake model playing `script`, and a ContextClient
 * whose every request is counted.
 */
async function setupTools(script: Script, tools: AppTools, agent: { tools: string[]; catalog?: string[] }) {
  const fake = await startFakeOpenAI(script);
  servers.push(fake);
  const id = freshIdentity();
  const calls: HandlerCall[] = [];
  const recorded = tools.map((t) => ({
    ...t,
    handler: (args: Record<string, unknown>, call: { conversationId: string; toolCallId: string }) => {
      calls.push({ tool: t.name, args, ...call });
      return t.handler(args, call);
    },
  }));
  const app = await startApp(id, { name: "calendar", contexts: [], tools: recorded });
  const { agentId } = await app.createAgent({ agentId: "planner", name: "Planner", systemPrompt: "You plan the user's week.", attachedContexts: [], ...agent });
  const { client, requests } = await countingClient(id);
  const { id: conversation } = await client.createConversation({ agent: agentId });
  requests.length = 0;
  const openai = new OpenAI({ apiKey: "sk-fake", baseURL: fake.url, maxRetries: 0 });
  return { id, fake, app, agent: agentId, client, requests, conversation, openai, calls };
}

/** A ContextClient that records `METHOD /path` of every request it sends. */
async function countingClient(id: Identity): Promise<{ client: ContextClient; requests: string[] }> {
  const requests: string[] = [];
  const client = new ContextClient({
    url: runtimeUrl(),
    apiKey: await apiKey(id),
    fetch: (input, init) => {
      requests.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname.replace(/^\/v1\/conversations\/[^/]+/, "…")}`);
      return fetch(input, init);
    },
  });
  return { client, requests };
}

interface Loop {
  /** The model input of each step, as the runtime answered it. */
  turns: TurnResult[];
  /** The model's message of each step, as the client returned it. */
  replies: ChatCompletionMessage[];
  /** The runtime requests the frontend sent after each reply with tool calls, before the next model call. */
  requestsPerToolUse: number[];
}

/**
 * The frontend's loop: take a turn, give the model `turn.messages` and `turn.tools` as they are, and while it answers
 * with tool calls send its message back verbatim as the next turn's `reply`; stop at a reply without calls. Each step
 * checks the model was sent exactly the runtime's messages and tools.
 */
async function frontendLoop(
  s: Pick<Awaited<ReturnType<typeof setupTools>>, "openai" | "client" | "conversation" | "agent" | "fake" | "requests">,
  message: string,
  { stream = false, maxSteps = 6 } = {},
): Promise<Loop> {
  const loop: Loop = { turns: [], replies: [], requestsPerToolUse: [] };
  let turn = await s.client.turn(s.conversation, { agent: s.agent, message });
  for (let step = 0; step < maxSteps; step++) {
    loop.turns.push(turn);
    const reply = await complete(s.openai, { model: MODEL, messages: turn.messages, tools: turn.tools }, stream);
    const sent = s.fake.requests.at(-1)!;
    expect(sent.messages).toEqual(turn.messages);
    expect(sent.tools).toEqual(turn.tools);
    expect(sent.stream ?? false).toBe(stream);
    loop.replies.push(reply);
    if (!reply.tool_calls?.length) return loop;
    const before = s.requests.length;
    turn = await s.client.turn(s.conversation, { agent: s.agent, reply });
    loop.requestsPerToolUse.push(s.requests.length - before);
  }
  throw new Error(`the model was still calling tools after ${maxSteps} steps`);
}

const fn = (name: string, description: string, parameters: Record<string, unknown>) => ({ type: "function", function: { name, description, parameters } });

describe("tools an app serves, run by the runtime, with the official openai client", () => {
  for (const stream of [false, true]) {
    it(`runs parallel calls on the app in one request per tool use, redacted and trimmed, paired with their calls${stream ? " (streamed)" : ""}`, async () => {
      const together = barrier(2);
      const log = Array.from({ length: 4_000 }, (_, i) => `2026-11-${String(1 + (i % 28)).padStart(2, "0")}T09:00:00Z sync ok item=${i} etag=${(i * 7919).toString(16)}`).join("\n");
      const s = await setupTools(
        [
          {
            toolCalls: [
              { name: "calendar__create_event", arguments: { title: "Lunch with Ana", date: "2026-11-20" } },
              { name: "calendar__export_log", arguments: { days: 7 } },
            ],
          },
          { text: "Lunch with Ana is on your calendar for 20 November." },
        ],
        [
          {
            name: "create_event",
            description: "Create an event in the user's calendar",
            inputSchema: EVENT_SCHEMA,
            handler: async (args) => {
              await together();
              return `Created "${String(args.title)}" on ${String(args.date)} (evt_1). Sync token: ${SECRET}`;
            },
          },
          {
            name: "export_log",
            description: "Export the calendar's sync log",
            inputSchema: LOG_SCHEMA,
            handler: async () => {
              await together();
              return `${log}\nEND OF LOG`;
            },
          },
        ],
        { tools: ["create_event", "export_log"] },
      );

      const loop = await frontendLoop(s, "Put lunch with Ana on the 20th and check the sync log.", { stream });
      expect(loop.turns).toHaveLength(2);
      const [ask, resumed] = loop.turns as [TurnResult, TurnResult];
      expect(ask.tools).toEqual([fn("calendar__create_event", "Create an event in the user's calendar", EVENT_SCHEMA), fn("calendar__export_log", "Export the calendar's sync log", LOG_SCHEMA)]);

      // The handlers ran side by side (the barrier), with the parsed arguments and the model's call ids.
      expect(s.calls).toEqual(
        expect.arrayContaining([
          { tool: "create_event", args: { title: "Lunch with Ana", date: "2026-11-20" }, conversationId: s.conversation, toolCallId: "call_1" },
          { tool: "export_log", args: { days: 7 }, conversationId: s.conversation, toolCallId: "call_2" },
        ]),
      );
      expect(s.calls).toHaveLength(2);

      // One runtime request from the model's reply to its next input.
      expect(loop.requestsPerToolUse).toEqual([1]);
      const calls = [
        { id: "call_1", type: "function", function: { name: "calendar__create_event", arguments: '{"title":"Lunch with Ana","date":"2026-11-20"}' } },
        { id: "call_2", type: "function", function: { name: "calendar__export_log", arguments: '{"days":7}' } },
      ];
      expect(loop.replies[0]!.tool_calls).toEqual(calls);
      expect(resumed.messages.slice(0, ask.messages.length)).toEqual(ask.messages);
      const added = resumed.messages.slice(ask.messages.length);
      expect(added.slice(0, 2)).toEqual([
        { role: "assistant", content: null, tool_calls: calls },
        { role: "tool", tool_call_id: "call_1", content: `Created "Lunch with Ana" on 2026-11-20 (evt_1). Sync token: [REDACTED:github-token]` },
      ]);
      expect(added).toHaveLength(3);
      const trimmed = added[2] as { role: string; tool_call_id: string; content: string };
      expect(trimmed).toMatchObject({ role: "tool", tool_call_id: "call_2" });
      expect(trimmed.content).toMatch(/\n\[… \d+ tokens trimmed …\]\n/);
      expect(trimmed.content.length).toBeLessThan(log.length / 10);
      expect(trimmed.content.startsWith("2026-11-01T09:00:00Z sync ok item=0 ")).toBe(true);
      expect(trimmed.content.endsWith("END OF LOG")).toBe(true);
      expect(resumed.tools).toEqual(ask.tools);
      expect(resumed.envelope.tools?.ran).toEqual([
        expect.objectContaining({ toolCallId: "call_1", tool: "calendar__create_event", servedBy: "calendar:create_event", outcome: "ok" }),
        expect.objectContaining({ toolCallId: "call_2", tool: "calendar__export_log", servedBy: "calendar:export_log", outcome: "ok" }),
      ]);

      // The final answer goes back with the user's next message; nothing else was sent (no append, no tools/run).
      const final = loop.replies.at(-1)!;
      expect(final.content).toBe("Lunch with Ana is on your calendar for 20 November.");
      const next = await s.client.turn(s.conversation, { agent: s.agent, reply: final, message: "Thanks!" });
      expect(next.messages.slice(0, resumed.messages.length)).toEqual(resumed.messages);
      expect(next.messages.slice(resumed.messages.length)).toEqual([
        { role: "assistant", content: "Lunch with Ana is on your calendar for 20 November." },
        { role: "user", content: "Thanks!" },
      ]);
      expect(s.requests).toEqual(["POST …/turns", "POST …/turns", "POST …/turns"]);
      const stored = JSON.stringify((await s.client.messages(s.conversation)).messages);
      expect(stored).not.toContain(SECRET);
      expect(stored).not.toContain("item=2000 ");
      expect(s.fake.requests).toHaveLength(2);
    });
  }

  it("loads a catalog tool search_tools finds at the end of the tool list, and the model calls it next", async () => {
    const s = await setupTools(
      [
        { toolCalls: [{ name: "search_tools", arguments: { query: "delete an event", limit: 1 } }] },
        { toolCalls: [{ name: "calendar__delete_event", arguments: { id: "evt_42" } }] },
        { text: "Deleted the dentist appointment." },
      ],
      [
        { name: "create_event", description: "Create an event in the user's calendar", inputSchema: EVENT_SCHEMA, handler: () => "created" },
        { name: "delete_event", description: "Delete an event from the user's calendar by its id", inputSchema: ID_SCHEMA, handler: (args) => `deleted ${String(args.id)}` },
        { name: "list_events", description: "List the events between two dates", inputSchema: { type: "object", properties: { from: { type: "string" }, to: { type: "string" } } }, handler: () => "[]" },
        { name: "find_free_slots", description: "Find free time slots for a meeting", inputSchema: { type: "object", properties: { minutes: { type: "integer" } } }, handler: () => "[]" },
      ],
      { tools: ["create_event"], catalog: ["calendar:*"] },
    );
    const loop = await frontendLoop(s, "Delete my dentist appointment (evt_42).");
    expect(loop.turns).toHaveLength(3);
    const [ask, found, done] = loop.turns as [TurnResult, TurnResult, TurnResult];
    expect(ask.tools!.map((t) => t.function.name)).toEqual(["calendar__create_event", "search_tools"]);
    // Loading only appends: the list the model read before is a prefix of the new one.
    expect(found.tools).toEqual([...ask.tools!, fn("calendar__delete_event", "Delete an event from the user's calendar by its id", ID_SCHEMA)]);
    const searched = found.messages.at(-1) as { role: string; tool_call_id: string; content: string };
    expect(searched).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(searched.content).toContain("- calendar__delete_event: Delete an event from the user's calendar by its id");
    expect(found.envelope.tools?.loaded).toEqual([{ name: "calendar:delete_event", query: "delete an event", toolCallId: "call_1" }]);

    expect(s.calls).toEqual([{ tool: "delete_event", args: { id: "evt_42" }, conversationId: s.conversation, toolCallId: "call_2" }]);
    expect(done.messages.slice(-2)).toEqual([
      { role: "assistant", content: null, tool_calls: [{ id: "call_2", type: "function", function: { name: "calendar__delete_event", arguments: '{"id":"evt_42"}' } }] },
      { role: "tool", tool_call_id: "call_2", content: "deleted evt_42" },
    ]);
    expect(done.tools).toEqual(found.tools);
    expect(loop.requestsPerToolUse).toEqual([1, 1]);

    // It stays loaded for the rest of the conversation.
    const later = await s.client.turn(s.conversation, { agent: s.agent, reply: loop.replies.at(-1)!, message: "And tomorrow's?" });
    expect(later.tools).toEqual(found.tools);
  });

  it("takes the frontend's own tools' results in the same request, and answers bad arguments without calling the app", async () => {
    const s = await setupTools(
      [
        {
          toolCalls: [
            { name: "search_notes", arguments: { q: "lemons" } },
            { name: "calendar__create_event", arguments: { title: 5, date: "tomorrow" } },
            { name: "calendar__create_event", arguments: { title: "Buy lemons", date: "2026-11-21" } },
          ],
        },
        { text: "Added 'Buy lemons' for the 21st." },
      ],
      [{ name: "create_event", description: "Create an event in the user's calendar", inputSchema: EVENT_SCHEMA, handler: (args) => `created ${String(args.title)}` }],
      { tools: ["create_event"] },
    );
    // The frontend offers its own tool beside the runtime's list.
    const ask = await s.client.turn(s.conversation, { agent: s.agent, message: "Remind me to buy lemons if my notes say so." });
    const tools = [...(ask.tools as ChatCompletionTool[]), SEARCH_NOTES];
    const reply = await complete(s.openai, { model: MODEL, messages: ask.messages, tools }, false);
    expect(s.fake.requests[0]!.tools).toEqual(tools);
    const own = reply.tool_calls!.filter((c) => c.type === "function" && c.function.name === "search_notes") as ChatCompletionMessageFunctionToolCall[];
    const before = s.requests.length;
    const resumed = await s.client.turn(s.conversation, { agent: s.agent, reply, toolResults: own.map((c) => ({ tool_call_id: c.id, content: runTool(c) })) });
    expect(s.requests.length - before).toBe(1);
    expect(resumed.messages.slice(ask.messages.length + 1)).toEqual([
      { role: "tool", tool_call_id: "call_1", content: NOTES.lemons },
      {
        role: "tool",
        tool_call_id: "call_2",
        content: "[tool error: the arguments do not match calendar__create_event's schema: arguments.title: expected string, got number\narguments.date: String does not match pattern. Fix them and call it again]",
      },
      { role: "tool", tool_call_id: "call_3", content: "created Buy lemons" },
    ]);
    expect(s.calls.map((c) => c.toolCallId)).toEqual(["call_3"]);
    await complete(s.openai, { model: MODEL, messages: resumed.messages, tools }, false);
    expect(s.fake.requests[1]!.messages).toEqual(resumed.messages);
  });

  it("gives the model a readable result when a handler throws", async () => {
    const s = await setupTools(
      [{ toolCalls: [{ name: "calendar__create_event", arguments: { title: "Standup", date: "2026-11-21" } }] }, { text: "Your calendar is read-only, so I could not add it." }],
      [
        {
          name: "create_event",
          description: "Create an event in the user's calendar",
          inputSchema: EVENT_SCHEMA,
          handler: () => {
            throw new Error("the calendar 'Work' is read-only");
          },
        },
      ],
      { tools: ["create_event"] },
    );
    const loop = await frontendLoop(s, "Add standup on the 21st.");
    const result = loop.turns[1]!.messages.at(-1) as { role: string; tool_call_id: string; content: string };
    expect(result).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(result.content).toBe("[tool error: calendar__create_event reported a failure: the calendar 'Work' is read-only]");
    expect(loop.turns[1]!.envelope.tools?.ran).toEqual([expect.objectContaining({ toolCallId: "call_1", outcome: "tool_error" })]);
    expect(s.calls).toHaveLength(1);
  });

  it("gives the model a readable 'not connected' result, without waiting, when the app is gone before the call", async () => {
    const s = await setupTools(
      [{ toolCalls: [{ name: "calendar__create_event", arguments: { title: "Standup", date: "2026-11-21" } }] }, { text: "The calendar app is not connected." }],
      [{ name: "create_event", description: "Create an event in the user's calendar", inputSchema: EVENT_SCHEMA, handler: () => "created" }],
      { tools: ["create_event"] },
    );
    const ask = await s.client.turn(s.conversation, { agent: s.agent, message: "Add standup on the 21st." });
    const reply = await complete(s.openai, { model: MODEL, messages: ask.messages, tools: ask.tools }, false);
    await s.app.close();
    await sleep(200);
    const started = Date.now();
    const resumed = await s.client.turn(s.conversation, { agent: s.agent, reply });
    expect(Date.now() - started).toBeLessThan(5_000);
    const result = resumed.messages.at(-1) as { role: string; tool_call_id: string; content: string };
    expect(result).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(result.content).toContain("not connected");
    expect(resumed.envelope.tools?.ran).toEqual([expect.objectContaining({ toolCallId: "call_1", outcome: "offline" })]);
    expect(s.calls).toEqual([]);
    await complete(s.openai, { model: MODEL, messages: resumed.messages, tools: resumed.tools }, false);
    expect(s.fake.requests[1]!.messages).toEqual(resumed.messages);
  });

  it("gives the model a readable result, long before the tool deadline, when the app drops while its handler runs", async () => {
    let app: ContextApp | null = null;
    const s = await setupTools(
      [{ toolCalls: [{ name: "calendar__create_event", arguments: { title: "Standup", date: "2026-11-21" } }] }, { text: "The calendar app went away." }],
      [
        {
          name: "create_event",
          description: "Create an event in the user's calendar",
          inputSchema: EVENT_SCHEMA,
          handler: () => {
            void app!.close();
            return new Promise(() => {}); // never answers
          },
        },
      ],
      { tools: ["create_event"] },
    );
    app = s.app;
    const ask = await s.client.turn(s.conversation, { agent: s.agent, message: "Add standup on the 21st." });
    const reply = await complete(s.openai, { model: MODEL, messages: ask.messages, tools: ask.tools }, false);
    const started = Date.now();
    const resumed = await s.client.turn(s.conversation, { agent: s.agent, reply });
    expect(Date.now() - started).toBeLessThan(10_000); // TOOL_DEADLINE_MS is 30 s
    const result = resumed.messages.at(-1) as { role: string; tool_call_id: string; content: string };
    expect(result).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(result.content).toBe("[tool error: the app 'calendar' disconnected while running calendar__create_event; it may have run, so check before calling it again]");
    expect(resumed.envelope.tools?.ran).toEqual([expect.objectContaining({ toolCallId: "call_1", outcome: "disconnected" })]);
    expect(s.calls).toHaveLength(1);
  });
});
