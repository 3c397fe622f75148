import { describe, expect, it } from "vitest";
import { textOf } from "../../src/protocol/messages";
import type { AgentInfo, ContextEvent, StoredMessage, TurnResult } from "../../src/protocol/frontend";
import { freshIdentity, Frontend } from "./support/runtime";
import { ToolApp } from "./support/tool-app";

const TOOLS = [
  { name: "list_events", description: "List the events of a day.", inputSchema: { type: "object", properties: { date: { type: "string" } } }, annotations: { readOnlyHint: true } },
  { name: "delete_event", description: "Delete an event by id.", inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] }, annotations: { destructiveHint: true } },
  { name: "share_event", description: "Share an event with someone.", inputSchema: { type: "object", properties: { id: { type: "string" }, with: { type: "string" } } } },
];
const GUARD = {
  rules: [
    { annotations: { destructiveHint: true }, verdict: "deny", reason: "deleting needs the user's own click" },
    { tool: "calendar:share_*", arguments: [{ path: "/with", pattern: "@(?:elsewhere|evil)\\.net$" }], verdict: "deny", reason: "never" },
  ],
};

async function setup(guard: unknown, extra: Record<string, unknown> = {}) {
  const id = freshIdentity();
  const agent = { agentId: "planner", name: "Planner", systemPrompt: "You plan the user's week.", tools: ["list_events", "delete_event", "share_event"], guard, ...extra };
  const helper = { agentId: "helper", name: "Helper", systemPrompt: "You help." };
  const app = await ToolApp.connect(id, "calendar", { tools: TOOLS, agents: [agent, helper] }, (params) => ({ result: { content: [{ type: "text", text: `${String(params.name)} ran` }] } }));
  const frontend = await Frontend.for(id);
  const { id: conversation } = await frontend.json<{ id: string }>("POST", "/v1/conversations", {});
  const path = `/v1/conversations/${conversation}`;
  return {
    app,
    frontend,
    path,
    turn: (body: Record<string, unknown>) => frontend.turn(conversation, { agent: "calendar:planner", ...body }),
    events: async () => (await frontend.json<{ events: ContextEvent[] }>("GET", `${path}/events?limit=500`)).events,
  };
}

let next = 0;
function reply(...calls: [name: string, args: unknown][]) {
  return { role: "assistant", content: null, tool_calls: calls.map(([name, args]) => ({ id: `g_${++next}`, type: "function", function: { name, arguments: JSON.stringify(args) } })) };
}
const toolsCalled = (app: ToolApp) => app.calls.filter((c) => c.method === "tools/call").map((c) => c.name);
const results = (turn: TurnResult) => new Map(turn.messages.flatMap((m) => (m.role === "tool" ? [[m.tool_call_id, textOf(m)] as const] : [])));

describe("the rule guard", () => {
  it("rejects an agent whose guard holds a pattern that could backtrack without end", async () => {
    const id = freshIdentity();
    const agent = { agentId: "planner", name: "Planner", systemPrompt: "x", guard: { rules: [{ arguments: [{ path: "/q", pattern: "(a+)+$" }], verdict: "deny", reason: "r" }] } };
    await expect(ToolApp.connect(id, "calendar", { tools: TOOLS, agents: [agent] }, () => null)).rejects.toThrow();
  });

  it("denies a destructive call before it runs (the app never gets it), lets a read-only call run, and the model reads the denial", async () => {
    const s = await setup(GUARD);
    const { agents } = await s.frontend.json<{ agents: AgentInfo[] }>("GET", "/v1/agents");
    expect(agents.find((a) => a.id === "calendar:planner")!.guard).toEqual(GUARD);
    await s.turn({ message: "Clear Friday." });
    const model = reply(["calendar__delete_event", { id: "e1" }], ["calendar__list_events", { date: "2026-11-27" }]);
    const turn = await s.turn({ reply: model });

    expect(toolsCalled(s.app)).toEqual(["list_events"]);
    const read = results(turn);
    expect(read.get(model.tool_calls[0]!.id)).toBe("[not run: the guard denied this tool call] Its reason: deleting needs the user's own click");
    expect(read.get(model.tool_calls[1]!.id)).toBe("list_events ran");
    const ran = turn.envelope.tools!.ran!;
    expect(ran.find((r) => r.toolCallId === model.tool_calls[0]!.id)).toMatchObject({ tool: "calendar__delete_event", servedBy: "calendar:delete_event", outcome: "denied", reason: "deleting needs the user's own click" });
    expect(ran.find((r) => r.toolCallId === model.tool_calls[1]!.id)).toMatchObject({ outcome: "ok" });
    const denied = (await s.events()).filter((e) => e.type === "tool.call.denied");
    expect(denied.map((e) => [e.subject, e.data])).toEqual([[model.tool_calls[0]!.id, { tool: "calendar__delete_event", servedBy: "calendar:delete_event", by: "guard", reason: "deleting needs the user's own click" }]]);
    // The next turn's model reads the denial with its call.
    const after = await s.turn({});
    expect(JSON.stringify(after.messages)).toContain("[not run: the guard denied this tool call] Its reason: deleting needs the user's own click");
  });

  it("denies by an argument pattern; other arguments pass", async () => {
    const s = await setup(GUARD);
    await s.turn({ message: "Share it." });
    const model = reply(["calendar__share_event", { id: "e1", with: "ana@example.com" }], ["calendar__share_event", { id: "e1", with: "eve@elsewhere.net" }]);
    const turn = await s.turn({ reply: model });
    expect(s.app.calls.filter((c) => c.method === "tools/call").map((c) => c.arguments)).toEqual([{ id: "e1", with: "ana@example.com" }]);
    expect(results(turn).get(model.tool_calls[1]!.id)).toBe("[not run: the guard denied this tool call] Its reason: never");
  });

  it("denies on POST …/tools/run too, with the evidence and the event", async () => {
    const s = await setup(GUARD);
    await s.turn({ message: "Clear Friday." });
    const model = reply(["calendar__delete_event", { id: "e9" }]);
    await s.frontend.json("POST", `${s.path}/messages`, { messages: [model] });
    const run = await s.frontend.json<{ ran: { outcome: string; reason?: string }[]; appended: number }>("POST", `${s.path}/tools/run`, {});
    expect(run).toMatchObject({ ran: [{ outcome: "denied", reason: "deleting needs the user's own click" }], appended: 1 });
    expect(toolsCalled(s.app)).toEqual([]);
    const { messages } = await s.frontend.json<{ messages: StoredMessage[] }>("GET", `${s.path}/messages`);
    expect(messages.at(-1)!.message).toEqual({ role: "tool", tool_call_id: model.tool_calls[0]!.id, content: "[not run: the guard denied this tool call] Its reason: deleting needs the user's own click" });
    expect((await s.events()).filter((e) => e.type === "tool.call.denied").map((e) => e.data.reason)).toEqual(["deleting needs the user's own click"]);
  });

  it("guards the runtime's own tools too: a denied delegate starts no subagent", async () => {
    const s = await setup({ rules: [{ tool: "delegate", verdict: "deny", reason: "no subagents today" }] }, { subagents: ["helper"] });
    await s.turn({ message: "Ask the helper." });
    const model = reply(["delegate", { agent: "calendar:helper", task: "Find a slot." }]);
    const turn = await s.turn({ reply: model });
    expect(results(turn).get(model.tool_calls[0]!.id)).toBe("[not run: the guard denied this tool call] Its reason: no subagents today");
    expect(turn.envelope.tools!.ran).toEqual([{ toolCallId: model.tool_calls[0]!.id, tool: "delegate", servedBy: "delegate", outcome: "denied", ms: 0, reason: "no subagents today", deniedBy: "guard" }]);
    expect((await s.events()).filter((e) => e.type === "tool.call.denied").map((e) => e.data)).toEqual([{ tool: "delegate", servedBy: "delegate", by: "guard", reason: "no subagents today" }]);
  });
});
