/**
 * A frontend loop with the official `openai` client, against `wrangler dev` and a local fake OpenAI-compatible
 * server (test/e2e/fake-openai.ts): take a turn, send `turn.messages` to the model as they are, append what the
 * client returned verbatim, take the next turn. The fake records what the model was sent, so each step asserts the
 * model read exactly the runtime's assembled input.
 *
 * Today the frontend runs the tools and sends their results in the next turn's `toolResults`. `modelStep` is one
 * model call; a test of the runtime running app tools itself can reuse it and the fake.
 */
import OpenAI from "openai";
import type { ChatCompletionMessage, ChatCompletionMessageFunctionToolCall, ChatCompletionTool } from "openai/resources/chat/completions";
import { afterEach, describe, expect, it } from "vitest";
import type { ContextClient, TurnResult } from "../../src/sdk";
import { startFakeOpenAI, type FakeOpenAI, type Script } from "./fake-openai";
import { freshIdentity, frontend, startApp } from "./support";

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
  const params = { model: MODEL, messages: turn.messages, ...(tools ? { tools } : {}) };
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
  await client.appendMessages(conversation, [message]);
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
