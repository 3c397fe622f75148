import { describe, expect, it } from "vitest";
import { UNANSWERED_RESULT } from "../../src/conversation/turn/index";
import type { ContextEvent, StoredMessage } from "../../src/protocol/frontend";
import { assertNoSecrets } from "../../src/protect";
import { freshIdentity, Frontend } from "./support/runtime";
import { TestApp } from "./support/test-app";

const call = (id: string, name: string, args = "{}") => ({ id, type: "function", function: { name, arguments: args } });
// Fake credentials in documented formats: never real.
const GITHUB_TOKEN = "ghp_R8x2Lq9TzV4mN7bK1cW5yH3jP6dF0sA2gE8u";
const AWS_KEY_ID = "AKIAZ7QX3N5W2B4R6T8Y";

async function setup(extra: Record<string, unknown> = {}) {
  const id = freshIdentity();
  let pulls = 0;
  const app = await TestApp.connect(id, "notes", { editor: { name: "Editor", current: () => (pulls++, { content: "line 1", title: "Editor" }) } });
  const agent = await app.createAgent("assistant", ["notes:editor"], "You are the assistant.", extra);
  const frontend = await Frontend.for(id);
  const conversation = await frontend.conversation();
  const path = `/v1/conversations/${conversation}`;
  const stored = async () => (await frontend.json<{ messages: StoredMessage[] }>("GET", `${path}/messages`)).messages.map((m) => m.message);
  const events = async () => (await frontend.json<{ events: ContextEvent[] }>("GET", `${path}/events?limit=500`)).events;
  return { agent, frontend, conversation, path, stored, events, pulls: () => pulls };
}

describe("tool results pass through the envelope", () => {
  it("routes parallel results to their calls and stores them in the calls' order", async () => {
    const { agent, frontend, conversation, path, stored } = await setup();
    await frontend.turn(conversation, { agent, message: "look both up" });
    const res = await frontend.request("POST", `${path}/messages`, {
      messages: [
        { role: "assistant", content: null, tool_calls: [call("c1", "search"), call("c2", "fetch")] },
        { role: "tool", tool_call_id: "c2", content: "fetched page" },
        { role: "tool", tool_call_id: "c1", content: "3 hits" },
      ],
    });
    expect(res.status).toBe(201);
    expect((await stored()).slice(1)).toEqual([
      { role: "assistant", content: null, tool_calls: [call("c1", "search"), call("c2", "fetch")] },
      { role: "tool", tool_call_id: "c1", content: "3 hits" },
      { role: "tool", tool_call_id: "c2", content: "fetched page" },
    ]);
  });

  it("refuses a result for an unknown call and stores nothing", async () => {
    const { agent, frontend, conversation, path, stored } = await setup();
    await frontend.turn(conversation, { agent, message: "hi" });
    const before = await stored();
    const res = await frontend.request("POST", `${path}/messages`, {
      messages: [{ role: "assistant", content: null, tool_calls: [call("c1", "search")] }, { role: "tool", tool_call_id: "nope", content: "x" }],
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ issues: [{ path: "messages.1.tool_call_id" }] });
    expect(await stored()).toEqual(before);
    const turn = await frontend.request("POST", `${path}/turns`, { agent, toolResults: [{ tool_call_id: "ghost", content: "x" }] });
    expect(turn.status).toBe(400);
    expect(await stored()).toEqual(before);
  });

  it("closes a call left without a result when the next turn begins, and says so in the evidence", async () => {
    const { agent, frontend, conversation, path, stored, events } = await setup();
    await frontend.turn(conversation, { agent, message: "search" });
    await frontend.json("POST", `${path}/messages`, { messages: [{ role: "assistant", content: null, tool_calls: [call("c1", "search"), call("c2", "fetch")] }] });
    await frontend.json("POST", `${path}/messages`, { messages: [{ role: "tool", tool_call_id: "c1", content: "3 hits" }] });
    const next = await frontend.turn(conversation, { agent, message: "never mind" });
    expect(next.envelope.tools?.unanswered).toEqual([{ id: "c2", name: "fetch" }]);
    expect(next.messages.slice(-2, -1)).toEqual([{ role: "tool", tool_call_id: "c2", content: UNANSWERED_RESULT }]);
    expect((await stored()).filter((m) => m.role === "tool").map((m) => m.role === "tool" && m.tool_call_id)).toEqual(["c1", "c2"]);
    expect((await events()).filter((e) => e.type === "tool.call.unanswered").map((e) => e.subject)).toEqual(["c2"]);
  });

  it("redacts secrets before anything is stored: messages, events and evidence keep the rule and a keyed hash only", async () => {
    const { agent, frontend, conversation, path, stored, events } = await setup();
    await frontend.turn(conversation, { agent, message: "deploy" });
    await frontend.json("POST", `${path}/messages`, { messages: [{ role: "assistant", content: null, tool_calls: [call("c1", "shell")] }] });
    const output = `$ env\nGITHUB_TOKEN=${GITHUB_TOKEN}\nAWS_ACCESS_KEY_ID=${AWS_KEY_ID}\nPATH=/usr/bin`;
    const turn = await frontend.turn(conversation, { agent, toolResults: [{ tool_call_id: "c1", content: output }] });
    const everything = JSON.stringify([turn, await stored(), await events()]);
    expect(everything).not.toContain(GITHUB_TOKEN);
    expect(everything).not.toContain(AWS_KEY_ID);
    expect(() => assertNoSecrets(turn.messages)).not.toThrow();
    const result = turn.envelope.tools!.results[0]!;
    expect(result.redactions.map((r) => r.rule).sort()).toEqual(expect.arrayContaining([expect.stringMatching(/github/), expect.stringMatching(/aws/)]));
    for (const r of result.redactions) expect(r.hash).toMatch(/^[0-9a-f]{16}$/);
    expect(String(turn.messages.at(-1)!.content)).toContain("PATH=/usr/bin");
  });

  it("trims a long result to the default budget, or as the agent's policy for that tool says", async () => {
    const { agent, frontend, conversation, path, stored } = await setup({ resultPolicies: { lookup: { strategy: "fields", fields: ["/answer"], maxTokens: 100 } } });
    await frontend.turn(conversation, { agent, message: "go" });
    await frontend.json("POST", `${path}/messages`, { messages: [{ role: "assistant", content: null, tool_calls: [call("c1", "logs"), call("c2", "lookup")] }] });
    const logs = Array.from({ length: 2000 }, (_, i) => `2026-11-23T10:00:${String(i % 60).padStart(2, "0")}Z INFO request ${i} ok`).join("\n");
    const lookup = JSON.stringify({ answer: 42, debug: "x".repeat(20000) });
    const turn = await frontend.turn(conversation, { agent, toolResults: [{ tool_call_id: "c1", content: logs }, { tool_call_id: "c2", content: lookup }] });
    const [trimmedLogs, trimmedLookup] = turn.envelope.tools!.results.map((r) => r.trimmed);
    expect(trimmedLogs).toMatchObject({ strategy: "head_tail" });
    expect(trimmedLogs!.keptTokens).toBeLessThanOrEqual(800);
    expect(trimmedLookup).toMatchObject({ strategy: "fields" });
    const tools = (await stored()).filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(tools[0]).toMatch(/\[… \d+ tokens trimmed …\]/);
    expect(tools[0]!.length).toBeLessThan(logs.length / 4);
    expect(JSON.parse(tools[1]!)).toEqual({ answer: 42 });
  });

  it("continues after tool results without a new user message, pulling no contexts", async () => {
    const { agent, frontend, conversation, path, pulls } = await setup();
    await frontend.turn(conversation, { agent, message: "search" });
    await frontend.json("POST", `${path}/messages`, { messages: [{ role: "assistant", content: null, tool_calls: [call("c1", "search")] }] });
    const before = pulls();
    const turn = await frontend.turn(conversation, { agent, toolResults: [{ tool_call_id: "c1", content: "3 hits" }] });
    expect(pulls()).toBe(before);
    expect(turn.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "c1", content: "3 hits" });
    expect(turn.envelope.injection).toEqual([]);
  });
});

describe("what the envelope refuses and how it orders", () => {
  it("refuses an assistant message while calls are open, and a call id used twice", async () => {
    const { agent, frontend, conversation, path, stored } = await setup();
    await frontend.turn(conversation, { agent, message: "go" });
    await frontend.json("POST", `${path}/messages`, { messages: [{ role: "assistant", content: null, tool_calls: [call("c1", "search")] }] });
    const before = await stored();
    const between = await frontend.request("POST", `${path}/messages`, { messages: [{ role: "assistant", content: "I could not wait" }] });
    expect(between.status).toBe(400);
    expect(await between.json()).toMatchObject({ detail: expect.stringContaining("'c1'") });
    const twice = await frontend.request("POST", `${path}/messages`, {
      messages: [{ role: "tool", tool_call_id: "c1", content: "done" }, { role: "assistant", content: null, tool_calls: [call("c2", "a"), call("c2", "b")] }],
    });
    expect(twice.status).toBe(400);
    expect(await stored()).toEqual(before);
  });

  it("puts stand-ins for unanswered calls in their calls' order among the results", async () => {
    const { agent, frontend, conversation, path, stored } = await setup();
    await frontend.turn(conversation, { agent, message: "go" });
    await frontend.json("POST", `${path}/messages`, { messages: [{ role: "assistant", content: null, tool_calls: [call("c1", "a"), call("c2", "b"), call("c3", "c")] }] });
    await frontend.turn(conversation, { agent, message: "moving on", toolResults: [{ tool_call_id: "c2", content: "two" }] });
    const tools = (await stored()).filter((m) => m.role === "tool");
    expect(tools).toEqual([
      { role: "tool", tool_call_id: "c1", content: UNANSWERED_RESULT },
      { role: "tool", tool_call_id: "c2", content: "two" },
      { role: "tool", tool_call_id: "c3", content: UNANSWERED_RESULT },
    ]);
  });

  it("replays a continuation exactly, even when its budget left earlier tool work out", async () => {
    const { agent, frontend, conversation, path } = await setup();
    await frontend.turn(conversation, { agent, message: "look it up" });
    await frontend.json("POST", `${path}/messages`, {
      messages: [{ role: "assistant", content: null, tool_calls: [call("c1", "search")] }, { role: "tool", tool_call_id: "c1", content: "hits ".repeat(300) }],
    });
    await frontend.json("POST", `${path}/messages`, { messages: [{ role: "assistant", content: null, tool_calls: [call("c2", "fetch")] }] });
    const roomy = await frontend.turn(conversation, { agent, toolResults: [{ tool_call_id: "c2", content: "short" }], turnId: "probe" });
    const body = { turnId: "tight", agent, toolResults: [{ tool_call_id: "c3", content: "short" }], budget: { maxTokens: roomy.usage.total - 200 } };
    await frontend.json("POST", `${path}/messages`, { messages: [{ role: "assistant", content: null, tool_calls: [call("c3", "fetch")] }] });
    const first = await frontend.turn(conversation, body);
    expect(first.envelope.budget.truncations.length).toBeGreaterThan(0);
    expect(first.messages.filter((m) => m.role === "user")).toHaveLength(1);
    const again = await frontend.turn(conversation, body);
    expect(again.replayed).toBe(true);
    expect(JSON.stringify(again.messages)).toBe(JSON.stringify(first.messages));
  });

  it("makes text with lone surrogates well-formed on the way in, so a replay reads the same", async () => {
    const { agent, frontend, conversation } = await setup();
    const body = { turnId: "odd", agent, message: "hi \ud800 there" };
    const first = await frontend.turn(conversation, body);
    expect(String(first.messages.at(-1)!.content).startsWith("hi \ufffd there")).toBe(true);
    const again = await frontend.turn(conversation, body);
    expect(JSON.stringify(again.messages)).toBe(JSON.stringify(first.messages));
  });
});

describe("turn budgets", () => {
  it("gives up the oldest history to fit, records it, replays the same view, and refuses a budget too small for class 0", async () => {
    const { agent, frontend, conversation, path } = await setup();
    for (let i = 0; i < 6; i++) {
      await frontend.turn(conversation, { agent, message: `question ${i} ${"words ".repeat(40)}` });
      await frontend.json("POST", `${path}/messages`, { messages: [{ role: "assistant", content: `answer ${i} ${"more ".repeat(40)}` }] });
    }
    const body = { turnId: "tight", agent, message: "last question", budget: { maxTokens: 300 } };
    const tight = await frontend.turn(conversation, body);
    expect(tight.usage.total).toBeLessThanOrEqual(300);
    expect(tight.envelope.budget).toMatchObject({ maxTokens: 300, usedTokens: tight.usage.total });
    expect(tight.envelope.budget.truncations.length).toBeGreaterThan(0);
    expect(tight.envelope.budget.truncations.every((t) => t.kind === "history")).toBe(true);
    expect(tight.messages[0]!.role).toBe("system");
    expect(String(tight.messages.at(-1)!.content).startsWith("last question")).toBe(true);
    const again = await frontend.turn(conversation, body);
    expect(again.messages).toEqual(tight.messages);
    const tooSmall = await frontend.request("POST", `${path}/turns`, { agent, message: "x ".repeat(200), budget: { maxTokens: 64 } });
    expect(tooSmall.status).toBe(422);
  });
});
