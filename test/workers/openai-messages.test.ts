/**
 * What model SDKs hand over is appended as it is: the official `openai` client's `choices[0].message` (refusal and
 * annotations keys, a refusal-only reply), tool messages with content parts, and a reply's calls with their results
 * in one request. The next turn's model input (`messages`) shows exactly what was stored.
 */
import { describe, expect, it } from "vitest";
import type { StoredMessage, TurnResult } from "../../src/protocol/frontend";
import { freshIdentity, Frontend } from "./support/runtime";
import { TestApp } from "./support/test-app";

const SYSTEM = "You are the assistant.";

async function setup() {
  const id = freshIdentity();
  // No attached contexts: the model input is the system prompt, the history and the user's words, nothing else.
  const app = await TestApp.connect(id, "notes", {});
  const agent = await app.createAgent("assistant", [], SYSTEM);
  const frontend = await Frontend.for(id);
  const conversation = await frontend.conversation();
  const append = (messages: unknown[]) => frontend.request("POST", `/v1/conversations/${conversation}/messages`, { messages });
  const turn = (body: Record<string, unknown>) => frontend.turn(conversation, { agent, ...body });
  const stored = async () => (await frontend.json<{ messages: StoredMessage[] }>("GET", `/v1/conversations/${conversation}/messages`)).messages.map((m) => m.message);
  return { append, turn, stored };
}

/** `completion.choices[0].message` as openai 6 returns it. */
const openaiMessage = (over: Record<string, unknown> = {}) => ({ role: "assistant", content: "Hello.", refusal: null, annotations: [], ...over });
const call = (id: string, q: string) => ({ id, type: "function", function: { name: "search_notes", arguments: JSON.stringify({ q }) } });

/** The model input after its system message (the agent's prompt and the runtime's notes). */
const afterSystem = (t: TurnResult) => {
  expect(t.messages[0]).toMatchObject({ role: "system" });
  expect(String(t.messages[0]!.content).startsWith(`${SYSTEM}\n`)).toBe(true);
  return t.messages.slice(1);
};

describe("appending what the openai client returns", () => {
  it("takes choices[0].message verbatim: refusal, annotations, audio and function_call are not stored", async () => {
    const { append, turn, stored } = await setup();
    await turn({ message: "hi" });
    const message = openaiMessage({
      content: "Hello! See https://docs.example.",
      annotations: [{ type: "url_citation", url_citation: { url: "https://docs.example", title: "Docs", start_index: 11, end_index: 31 } }],
      audio: null,
      function_call: null,
    });
    expect((await append([message])).status).toBe(201);
    expect(await stored()).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "Hello! See https://docs.example." },
    ]);
    expect(afterSystem(await turn({ message: "thanks" }))).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "Hello! See https://docs.example." },
      { role: "user", content: "thanks" },
    ]);
  });

  it("stores a refusal-only reply's refusal as what the model said", async () => {
    const { append, turn } = await setup();
    await turn({ message: "do something bad" });
    expect((await append([openaiMessage({ content: null, refusal: "I can't help with that." })])).status).toBe(201);
    expect(afterSystem(await turn({ message: "ok, something else" }))).toEqual([
      { role: "user", content: "do something bad" },
      { role: "assistant", content: "I can't help with that." },
      { role: "user", content: "ok, something else" },
    ]);
  });

  it("takes a reply's tool calls and their results (content parts, a name key) in one request, results in call order", async () => {
    const { append, turn } = await setup();
    await turn({ message: "search twice" });
    const calls = [call("call_a", "x"), call("call_b", "y")];
    const res = await append([
      openaiMessage({ content: null, tool_calls: calls }),
      { role: "tool", tool_call_id: "call_b", name: "search_notes", content: [{ type: "text", text: "1 hit" }] },
      { role: "tool", tool_call_id: "call_a", content: [{ type: "text", text: "2 hits" }, { type: "text", text: "more below" }] },
    ]);
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ appended: 3 });
    expect(afterSystem(await turn({ message: "and now?" }))).toEqual([
      { role: "user", content: "search twice" },
      { role: "assistant", content: null, tool_calls: calls },
      { role: "tool", tool_call_id: "call_a", content: "2 hits\nmore below" },
      { role: "tool", tool_call_id: "call_b", content: "1 hit" },
      { role: "user", content: "and now?" },
    ]);
  });

  it("takes a turn's toolResults as content parts, with a tool message's keys", async () => {
    const { append, turn } = await setup();
    await turn({ message: "search" });
    expect((await append([openaiMessage({ content: null, tool_calls: [call("call_1", "x")] })])).status).toBe(201);
    const next = await turn({ toolResults: [{ role: "tool", tool_call_id: "call_1", name: "search_notes", content: [{ type: "text", text: "3 hits" }] }] });
    expect(afterSystem(next)).toEqual([
      { role: "user", content: "search" },
      { role: "assistant", content: null, tool_calls: [call("call_1", "x")] },
      { role: "tool", tool_call_id: "call_1", content: "3 hits" },
    ]);
  });

  it("resumes a history kept as the openai client handed it over", async () => {
    const id = freshIdentity();
    const app = await TestApp.connect(id, "notes", {});
    const agent = await app.createAgent("assistant", [], SYSTEM);
    const frontend = await Frontend.for(id);
    const conversation = await frontend.conversation();
    const res = await frontend.request("PUT", `/v1/conversations/${conversation}/messages`, {
      messages: [
        { role: "user", content: "search" },
        openaiMessage({ content: null, tool_calls: [call("call_1", "x")] }),
        { role: "tool", tool_call_id: "call_1", name: "search_notes", content: [{ type: "text", text: "3 hits" }] },
        openaiMessage({ content: null, refusal: "I won't summarise those." }),
      ],
    });
    expect(res.status).toBe(201);
    expect(afterSystem(await frontend.turn(conversation, { agent, message: "fine" }))).toEqual([
      { role: "user", content: "search" },
      { role: "assistant", content: null, tool_calls: [call("call_1", "x")] },
      { role: "tool", tool_call_id: "call_1", content: "3 hits" },
      { role: "assistant", content: "I won't summarise those." },
      { role: "user", content: "fine" },
    ]);
  });

  it("still refuses a result for no open call and a custom tool call", async () => {
    const { append, turn } = await setup();
    await turn({ message: "hi" });
    expect((await append([{ role: "tool", tool_call_id: "nope", content: [{ type: "text", text: "x" }] }])).status).toBe(400);
    const custom = await append([openaiMessage({ content: null, tool_calls: [{ id: "c", type: "custom", custom: { name: "x", input: "y" } }] })]);
    expect(custom.status).toBe(400);
    expect(await custom.text()).toContain("only function tool calls");
  });
});
