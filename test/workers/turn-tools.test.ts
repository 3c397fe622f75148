import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { conversationStub } from "../../src/conversation/stub";
import { pairingProblems } from "../../src/core/groups";
import { textOf, type ChatMessage } from "../../src/protocol/messages";
import type { StoredMessage, TurnResult } from "../../src/protocol/frontend";
import { expectProblem, freshIdentity, Frontend } from "./support/runtime";
import { ToolApp, type ToolAnswer } from "./support/tool-app";

const EVENT_SCHEMA = {
  type: "object",
  properties: { title: { type: "string" }, date: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" } },
  required: ["title", "date"],
  additionalProperties: false,
};
/** A window small enough for a few turns to fill: a forced compaction then summarises. */
const SMALL_WINDOW = { contextWindow: 6_000, outputReserve: 1_000 };
const FILLER = "the planning notes go on about rooms, times and people. ".repeat(40);
const TOKEN = `ghp_${"a1B2c3D4e5".repeat(3)}abcdef`;

const TOOLS = [
  { name: "create_event", description: "Create an event on the user's calendar.", inputSchema: EVENT_SCHEMA, annotations: { destructiveHint: false } },
  { name: "list_events", description: "List the events of a day.", inputSchema: { type: "object", properties: { date: { type: "string" } } } },
  { name: "delete_event", description: "Delete an event by id.", inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] }, annotations: { destructiveHint: true } },
  { name: "find_free_slot", description: "Find a free slot for a meeting of a given length.", inputSchema: { type: "object", properties: { minutes: { type: "integer" } } } },
];
const SKILLS = [{ name: "scheduling", description: "How to schedule meetings well.", manual: "# Scheduling\nPrefer mornings.", references: [{ name: "rooms.md", content: "Room A, Room B" }] }];

/** The calendar app: answers tools/call with `answer`, and a drafts provider for browsing. */
const calendarAnswer =
  (tool: (name: string, args: Record<string, unknown>) => ReturnType<ToolAnswer>): ToolAnswer =>
  (params, _id, method) => {
    if (method === "contexts/list") return { result: { items: [{ id: "d1", title: "Offsite plan", summary: "Draft agenda" }] } };
    if (method === "contexts/get") return { result: params.id === "d1" ? { title: "Offsite plan", content: "Day 1: arrive. Day 2: hike." } : null };
    return tool(String(params.name), params.arguments as Record<string, unknown>);
  };
const text = (t: string) => ({ result: { content: [{ type: "text", text: t }] } });

async function setup(options: { agent?: Record<string, unknown>; answer?: (name: string, args: Record<string, unknown>) => ReturnType<ToolAnswer>; compaction?: Record<string, unknown> } = {}) {
  const id = freshIdentity();
  const agent = { agentId: "planner", name: "Planner", systemPrompt: "You plan the user's week.", tools: ["create_event", "list_events"], ...options.agent };
  const init = {
    contexts: [{ id: "drafts", name: "Drafts", description: "The user's drafts", methods: ["list", "get"] }],
    tools: TOOLS,
    skills: SKILLS,
    agents: [agent],
  };
  const app = await ToolApp.connect(id, "calendar", init, calendarAnswer(options.answer ?? ((name, args) => text(`${name} ok: ${JSON.stringify(args)}`))));
  const frontend = await Frontend.for(id);
  const { id: conversation } = await frontend.json<{ id: string }>("POST", "/v1/conversations", options.compaction ? { compaction: options.compaction } : {});
  const path = `/v1/conversations/${conversation}`;
  return { id, app, init, frontend, conversation, path, agent: "calendar:planner", turn: (body: Record<string, unknown>) => frontend.turn(conversation, { agent: "calendar:planner", ...body }) };
}

/** Turns with long messages until a summary covers message `seq`: the turn that reads it. */
async function untilSummarised(turn: (body: Record<string, unknown>) => Promise<TurnResult>, seq: number): Promise<TurnResult> {
  for (let i = 0; i < 20; i++) {
    const next = await turn({ message: `more ${i}: ${FILLER}` });
    if ((next.envelope.history?.summaryThroughSeq ?? 0) >= seq) return next;
  }
  throw new Error(`no summary covered message ${seq}`);
}

let nextCall = 0;
/** An assistant message exactly as the openai client returns one. */
function reply(...calls: [name: string, args: unknown][]) {
  return {
    role: "assistant",
    content: null,
    refusal: null,
    annotations: [],
    tool_calls: calls.map(([name, args]) => ({ id: `call_${++nextCall}`, type: "function", function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) } })),
  };
}
const callIds = (r: ReturnType<typeof reply>) => r.tool_calls.map((c) => c.id);
const toolsCalled = (app: ToolApp) => app.calls.filter((c) => c.method === "tools/call");
/** The results the model reads after the reply, by call id. */
function results(turn: TurnResult): Map<string, string> {
  return new Map(turn.messages.flatMap((m) => (m.role === "tool" ? [[m.tool_call_id, textOf(m)] as const] : [])));
}
const systemOf = (turn: TurnResult) => turn.messages[0]!.content as string;

describe("tools apps serve, on a turn", () => {
  it("offers the agent's tools in OpenAI function format, in a fixed order, counted in usage and the evidence", async () => {
    const s = await setup({ agent: { tools: ["list_events", "calendar:create_event"], catalog: ["calendar:*"], skills: ["calendar:*"], browseContexts: true } });
    const turn = await s.turn({ message: "What's on Friday?" });
    expect(turn.tools!.map((t) => t.function.name)).toEqual(["calendar__list_events", "calendar__create_event", "search_tools", "read_skill", "list_contexts", "read_context"]);
    expect(turn.tools![1]).toEqual({ type: "function", function: { name: "calendar__create_event", description: "Create an event on the user's calendar.", parameters: EVENT_SCHEMA } });
    const offered = turn.envelope.tools!.offered!;
    expect(offered.map((o) => [o.name, o.qualified, o.source])).toEqual([
      ["calendar__list_events", "calendar:list_events", "bound"],
      ["calendar__create_event", "calendar:create_event", "bound"],
      ["search_tools", null, "runtime"],
      ["read_skill", null, "runtime"],
      ["list_contexts", null, "runtime"],
      ["read_context", null, "runtime"],
    ]);
    // A frontend reads the apps' hints here, to ask the user before a destructive call.
    expect(offered[1]!.annotations).toEqual({ destructiveHint: false });
    expect(offered[2]!.annotations).toBeUndefined();
    expect(turn.usage.tools).toBe(offered.reduce((sum, o) => sum + o.tokens, 0));
    expect(turn.usage.tools).toBeGreaterThan(100);
    expect(turn.envelope.assembly.blocks).toContainEqual({ kind: "tools", tokens: turn.usage.tools, target: "tool_definitions" });
    const system = systemOf(turn);
    expect(system).toContain("Tools: call a tool by its exact name");
    expect(system).toContain("More tools: your list holds only some of the tools");
    expect(system).toContain("- calendar:scheduling: How to schedule meetings well.");
    // The catalog's other tools stay out of the prompt.
    expect(JSON.stringify(turn.tools)).not.toContain("find_free_slot");
  });

  it("runs the model's call on the app in the same request, and the model reads the protected result, paired with its call", async () => {
    const s = await setup({
      agent: { resultPolicies: { list_events: { strategy: "head", maxTokens: 200 } } },
      answer: (name, args) => (name === "list_events" ? text(Array.from({ length: 400 }, (_, i) => `event ${i} on ${String(args.date)}`).join("\n")) : text(`created ${String(args.title)}; calendar token ${TOKEN}`)),
    });
    await s.turn({ message: "Book lunch with Ana on Thursday and show me Friday." });
    const model = reply(["calendar__create_event", { title: "Lunch with Ana", date: "2026-11-26" }], ["calendar__list_events", { date: "2026-11-27" }]);
    const turn = await s.turn({ reply: model });

    expect(toolsCalled(s.app).map((c) => [c.name, c.arguments, c.toolCallId])).toEqual([
      ["create_event", { title: "Lunch with Ana", date: "2026-11-26" }, model.tool_calls[0]!.id],
      ["list_events", { date: "2026-11-27" }, model.tool_calls[1]!.id],
    ]);
    const tail = turn.messages.slice(-3);
    expect(tail[0]).toEqual({ role: "assistant", content: null, tool_calls: model.tool_calls });
    expect(tail.slice(1).map((m) => (m as { tool_call_id: string }).tool_call_id)).toEqual(callIds(model));
    const read = results(turn);
    expect(read.get(model.tool_calls[0]!.id)).toBe("created Lunch with Ana; calendar token [REDACTED:github-token]");
    const listed = read.get(model.tool_calls[1]!.id)!;
    expect(listed.startsWith("event 0 on 2026-11-27")).toBe(true);
    expect(listed).not.toContain("event 399");
    expect(pairingProblems(turn.messages.slice(1))).toEqual([]);
    expect(turn.envelope.tools!.ran!.map((r) => [r.tool, r.servedBy, r.outcome])).toEqual([
      ["calendar__create_event", "calendar:create_event", "ok"],
      ["calendar__list_events", "calendar:list_events", "ok"],
    ]);
    expect(turn.envelope.tools!.results.find((r) => r.toolCallId === model.tool_calls[0]!.id)!.redactions).toHaveLength(1);
    expect(turn.envelope.tools!.results.find((r) => r.toolCallId === model.tool_calls[1]!.id)!.trimmed).not.toBeNull();
    // Stored as the model read it: the secret never lands.
    const { messages } = await s.frontend.json<{ messages: StoredMessage[] }>("GET", `${s.path}/messages`);
    expect(JSON.stringify(messages)).not.toContain(TOKEN);
    expect(messages.slice(-3).map((m) => m.message.role)).toEqual(["assistant", "tool", "tool"]);
  });

  it("gives the model a schema error it can read, and never calls the app with bad arguments", async () => {
    const s = await setup();
    await s.turn({ message: "Book it." });
    const model = reply(["calendar__create_event", { title: 5 }], ["calendar__list_events", "{not json"]);
    const turn = await s.turn({ reply: model });
    const read = results(turn);
    const schemaError = read.get(model.tool_calls[0]!.id)!;
    expect(schemaError).toMatch(/^\[tool error: the arguments do not match calendar__create_event's schema: .*title.*\. Fix them and call it again\]$/s);
    expect(schemaError).toContain("date");
    expect(read.get(model.tool_calls[1]!.id)).toBe("[tool error: calendar__list_events: the arguments are not valid JSON; call it again with a JSON object]");
    expect(toolsCalled(s.app)).toEqual([]);
    expect(turn.envelope.tools!.ran!.map((r) => r.outcome)).toEqual(["invalid_arguments", "invalid_arguments"]);
  });

  it("answers every call when the app is late, fails or throws, without hanging the turn", async () => {
    const s = await setup({
      agent: { tools: ["create_event", "list_events", "delete_event"] },
      answer: (name) => {
        if (name === "list_events") return null; // never answers
        if (name === "delete_event") return { error: { code: -32000, message: "database locked" } };
        return { result: { content: [{ type: "text", text: "no calendar named work" }], isError: true } };
      },
    });
    await s.turn({ message: "Clean up my week." });
    const model = reply(["calendar__list_events", {}], ["calendar__delete_event", { id: "e1" }], ["calendar__create_event", { title: "Review", date: "2026-11-30" }]);
    const turn = await s.turn({ reply: model });
    const read = results(turn);
    expect(read.get(model.tool_calls[0]!.id)).toMatch(/^\[tool error: calendar__list_events did not answer in time \(.*\); it may still have run, so check before calling it again\]$/);
    expect(read.get(model.tool_calls[1]!.id)).toBe("[tool error: calendar__delete_event failed: database locked]");
    expect(read.get(model.tool_calls[2]!.id)).toBe("[tool error: calendar__create_event reported a failure: no calendar named work]");
    expect(turn.envelope.tools!.ran!.map((r) => r.outcome)).toEqual(["timeout", "error", "tool_error"]);
    expect(pairingProblems(turn.messages.slice(1))).toEqual([]);

    // Offline: the app is gone; the model reads that the call was not run.
    s.app.ws.close(1000, "bye");
    await new Promise((r) => setTimeout(r, 50));
    const second = reply(["calendar__create_event", { title: "Retro", date: "2026-12-01" }]);
    const offline = await s.turn({ reply: second });
    expect(results(offline).get(second.tool_calls[0]!.id)).toBe("[tool error: calendar__create_event was not run: the app 'calendar' that serves it is not connected. Tell the user, or go on without it]");
  });

  it("ends a call at once when the app's answer is larger than a frame, and tells the model", async () => {
    const s = await setup();
    await s.turn({ message: "List Friday." });
    const huge: ToolAnswer = (params, id, method) =>
      method === "tools/call" ? { raw: JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "x".repeat(600_000) }] } }) } : null;
    const big = await ToolApp.connect(s.id, "calendar", s.init, huge);
    const model = reply(["calendar__list_events", {}]);
    const turn = await s.turn({ reply: model });
    expect(results(turn).get(model.tool_calls[0]!.id)).toBe("[tool error: calendar__list_events failed: the answer is larger than the 524288-character frame limit]");
    expect(turn.envelope.tools!.ran!.map((r) => r.outcome)).toEqual(["invalid"]);
    big.ws.close(1000, "done");
  });

  it("answers a call to a tool the app does not have, and refuses a reply sent again", async () => {
    const s = await setup();
    await s.turn({ message: "Book it." });
    const model = reply(["calendar__nope", {}]);
    const turn = await s.turn({ reply: model });
    expect(results(turn).get(model.tool_calls[0]!.id)).toBe("[tool error: there is no tool named calendar__nope; call one of the tools in your list]");
    expect(turn.envelope.tools!.ran!.map((r) => r.outcome)).toEqual(["unknown_tool"]);
    // The same reply again (a retry without its turnId) would run its calls twice.
    const again = await s.frontend.request("POST", `${s.path}/turns`, { agent: s.agent, reply: model });
    expect((await expectProblem(again, 409, "conflict")).detail).toContain("send it again with the same turnId");
    const { messages } = await s.frontend.json<{ messages: StoredMessage[] }>("GET", `${s.path}/messages`);
    expect(messages.map((m) => m.message.role)).toEqual(["user", "assistant", "tool"]);
    // With a turnId of its own it is a new step (a model polling with the very same call), and runs.
    const polled = await s.turn({ turnId: "poll-2", reply: model });
    expect(polled.envelope.tools!.ran!.map((r) => r.outcome)).toEqual(["unknown_tool"]);
  });

  it("keeps the tool list byte for byte across 50 turns, and changes it only when the bindings change", async () => {
    const s = await setup({ agent: { catalog: ["calendar:*"], skills: ["calendar:*"] } });
    const first = await s.turn({ message: "turn 0" });
    for (let i = 1; i < 50; i++) {
      const turn = await s.turn({ message: `turn ${i}` });
      expect(JSON.stringify(turn.tools)).toBe(JSON.stringify(first.tools));
      expect(systemOf(turn)).toBe(systemOf(first));
    }
    // The app binds one more tool: the list changes, and only then.
    await s.app.initialize("calendar", { ...s.init, agents: [{ ...s.init.agents[0], tools: ["create_event", "list_events", "delete_event"] }] });
    const rebound = await s.turn({ message: "after" });
    expect(rebound.tools!.map((t) => t.function.name).slice(0, 3)).toEqual(["calendar__create_event", "calendar__list_events", "calendar__delete_event"]);
    expect(JSON.stringify(rebound.tools)).not.toBe(JSON.stringify(first.tools));
  });

  it("approves a call to an app's tool and the runtime runs it, with no result from the frontend", async () => {
    const s = await setup({ agent: { tools: ["delete_event"] } });
    await s.turn({ message: "Delete the standup." });
    const model = reply(["calendar__delete_event", { id: "standup" }]);
    await s.frontend.json("POST", `${s.path}/messages`, { messages: [model] });
    await s.frontend.json("POST", `${s.path}/approvals`, { toolCallId: model.tool_calls[0]!.id });
    expect(toolsCalled(s.app)).toEqual([]);
    const turn = await s.turn({ approvals: [{ toolCallId: model.tool_calls[0]!.id, approved: true }] });
    expect(toolsCalled(s.app).map((c) => c.arguments)).toEqual([{ id: "standup" }]);
    expect(results(turn).get(model.tool_calls[0]!.id)).toBe('delete_event ok: {"id":"standup"}');
  });
});

describe("approvals riding with a new message", () => {
  it("runs the approved call and closes the rest when the user's decision comes with a new message", async () => {
    const s = await setup({ agent: { tools: ["delete_event", "list_events"] } });
    await s.turn({ message: "Delete the standup and list Friday." });
    const model = reply(["calendar__delete_event", { id: "standup" }], ["calendar__list_events", { date: "2026-11-27" }]);
    await s.frontend.json("POST", `${s.path}/messages`, { messages: [model] });
    await s.frontend.json("POST", `${s.path}/approvals`, { toolCallId: model.tool_calls[0]!.id });
    const turn = await s.turn({ message: "Yes, delete it.", approvals: [{ toolCallId: model.tool_calls[0]!.id, approved: true }] });
    expect(toolsCalled(s.app).map((c) => c.name)).toEqual(["delete_event"]);
    const read = results(turn);
    expect(read.get(model.tool_calls[0]!.id)).toBe('delete_event ok: {"id":"standup"}');
    expect(read.get(model.tool_calls[1]!.id)).toBe("[no result: this tool call was not answered before the conversation moved on]");
  });
});

describe("a catalog the model searches", () => {
  it("loads what search_tools finds: appended after the others, kept through compaction and eviction", async () => {
    const s = await setup({ agent: { tools: ["list_events"], catalog: ["calendar:*"] }, compaction: SMALL_WINDOW });
    const first = await s.turn({ message: "Find me a free hour." });
    expect(first.tools!.map((t) => t.function.name)).toEqual(["calendar__list_events", "search_tools"]);
    const search = reply(["search_tools", { query: "find a free slot for a meeting" }]);
    const turn = await s.turn({ reply: search });
    const found = results(turn).get(search.tool_calls[0]!.id)!;
    expect(found).toContain("- calendar__find_free_slot: Find a free slot for a meeting of a given length.");
    const names = turn.tools!.map((t) => t.function.name);
    expect(names.slice(0, 2)).toEqual(["calendar__list_events", "search_tools"]);
    expect(names).toContain("calendar__find_free_slot");
    expect(turn.envelope.tools!.loaded!.map((l) => [l.name, l.query])).toContainEqual(["calendar:find_free_slot", "find a free slot for a meeting"]);
    // The loaded tool runs like a bound one.
    const use = reply(["calendar__find_free_slot", { minutes: 60 }]);
    const used = await s.turn({ reply: use });
    expect(results(used).get(use.tool_calls[0]!.id)).toBe('find_free_slot ok: {"minutes":60}');

    // The first summary adds search_history in its place, after search_tools; the rest stays as it was, loaded tools last.
    const compacted = await untilSummarised(s.turn, 5);
    expect(compacted.tools!.map((t) => t.function.name).indexOf("search_history")).toBe(2);
    expect(JSON.stringify(compacted.tools!.filter((t) => t.function.name !== "search_history"))).toBe(JSON.stringify(used.tools));
    const after = JSON.stringify(compacted.tools);
    await evictDurableObject(conversationStub(env, s.id, s.conversation));
    const evicted = await s.turn({ message: "after eviction" });
    expect(JSON.stringify(evicted.tools)).toBe(after);
  });
});

describe("skills", () => {
  it("opens a manual with read_skill, links the skill, and says it is still there once a summary replaced the manual", async () => {
    const s = await setup({ agent: { skills: ["calendar:*"] }, compaction: SMALL_WINDOW });
    const first = await s.turn({ message: "Schedule the offsite." });
    expect(systemOf(first)).toContain("Skills (read a skill's manual with read_skill before doing that kind of task):\n- calendar:scheduling: How to schedule meetings well.");
    expect(first.envelope.tools!.skillsMenu).toMatchObject({ cut: [] });
    const read = reply(["read_skill", { name: "calendar:scheduling" }]);
    const turn = await s.turn({ reply: read });
    expect(results(turn).get(read.tool_calls[0]!.id)).toBe("# Skill calendar:scheduling\n\n# Scheduling\nPrefer mornings.\n\n## Reference: rooms.md\n\nRoom A, Room B");
    expect(turn.envelope.tools!.linked).toEqual([{ name: "calendar:scheduling", toolCallId: read.tool_calls[0]!.id }]);
    expect(systemOf(turn)).toBe(systemOf(first));

    const unknown = reply(["read_skill", { name: "calendar:nope" }]);
    const missing = await s.turn({ reply: unknown });
    expect(results(missing).get(unknown.tool_calls[0]!.id)).toBe("[tool error: no skill 'calendar:nope' on your menu; the menu lists: calendar:scheduling]");

    expect(systemOf(missing)).not.toContain("Skills you read earlier");
    const after = await untilSummarised(s.turn, 3);
    expect(systemOf(after)).toContain("Skills you read earlier (their manuals were summarised; read_skill opens them again): calendar:scheduling.");
  });

  it("keeps the menu within about 1 % of the window, in a fixed order, and reports every cut", async () => {
    const id = freshIdentity();
    const skills = Array.from({ length: 30 }, (_, i) => ({ name: `skill-${String(29 - i).padStart(2, "0")}`, description: `Skill number ${i}: ${"does a careful, well-described thing for the user. ".repeat(8)}`, manual: "m" }));
    await ToolApp.connect(id, "kit", { skills, agents: [{ agentId: "a", name: "A", systemPrompt: "Help.", skills: ["kit:*"] }] });
    const frontend = await Frontend.for(id);
    const conversation = await frontend.conversation();
    const turn = await frontend.turn(conversation, { agent: "kit:a", message: "hi", budget: { contextWindow: 64_000 } });
    const menu = turn.envelope.tools!.skillsMenu!;
    expect(menu.budgetTokens).toBe(640);
    expect(menu.tokens).toBeLessThanOrEqual(640);
    expect(menu.cut.length).toBeGreaterThan(0);
    const system = systemOf(turn);
    const lines = system.split("\n").filter((l) => l.startsWith("- kit:"));
    expect(lines.map((l) => l.slice(2, 14))).toEqual(skills.map((s) => `kit:${s.name}`).sort());
    for (const cut of menu.cut) expect(system).toContain(`- kit:${cut.name.slice(4)}`);
  });
});

describe("the model browses contexts", () => {
  it("lists and reads a context through the runtime's tools; what it read is attached and not injected again", async () => {
    const s = await setup({ agent: { browseContexts: true } });
    await s.turn({ message: "What drafts do I have?" });
    const list = reply(["list_contexts", {}], ["list_contexts", { provider: "calendar:drafts" }]);
    const listed = await s.turn({ reply: list });
    const read = results(listed);
    expect(read.get(list.tool_calls[0]!.id)).toContain("- calendar:drafts: Drafts — The user's drafts");
    expect(read.get(list.tool_calls[1]!.id)).toBe("Items of calendar:drafts (read one with read_context and its id):\n- d1: Offsite plan — Draft agenda");
    const open = reply(["read_context", { provider: "calendar:drafts", id: "d1" }]);
    const opened = await s.turn({ reply: open });
    expect(results(opened).get(open.tool_calls[0]!.id)).toBe("Offsite plan\n\nDay 1: arrive. Day 2: hike.");
    const { attachments } = await s.frontend.json<{ attachments: { key: string }[] }>("GET", `${s.path}/attachments`);
    expect(attachments.map((a) => a.key)).toEqual(["calendar:drafts#d1"]);
    const next = await s.turn({ message: "Summarise it." });
    expect(textOf(next.messages.at(-1) as ChatMessage)).not.toContain("[Context");
    expect(next.envelope.selection.omitted).toContainEqual({ id: "calendar:drafts#d1", reason: "unchanged" });
  });
});

describe("running tools outside a turn", () => {
  it("runs the open calls the runtime serves and stores their results; the frontend's own tools are left to it", async () => {
    const s = await setup();
    await s.turn({ message: "Book it." });
    const model = reply(["calendar__create_event", { title: "Dentist", date: "2026-12-02" }]);
    await s.frontend.json("POST", `${s.path}/messages`, { messages: [model] });
    const run = await s.frontend.json<{ ran: { outcome: string }[]; appended: number }>("POST", `${s.path}/tools/run`, {});
    expect(run).toMatchObject({ ran: [{ outcome: "ok" }], appended: 1 });
    const { messages } = await s.frontend.json<{ messages: StoredMessage[] }>("GET", `${s.path}/messages`);
    expect(messages.at(-1)!.message).toEqual({ role: "tool", tool_call_id: model.tool_calls[0]!.id, content: 'create_event ok: {"title":"Dentist","date":"2026-12-02"}' });

    const own = reply(["my_browser_tool", {}]);
    await s.frontend.json("POST", `${s.path}/messages`, { messages: [own] });
    const res = await s.frontend.request("POST", `${s.path}/tools/run`, { toolCallIds: [own.tool_calls[0]!.id] });
    expect(res.status).toBe(400);
    await s.frontend.json("POST", `${s.path}/messages`, { messages: [{ role: "tool", tool_call_id: own.tool_calls[0]!.id, content: "done in the browser" }] });
    // Then a bare continuation: the model reads everything since the user's message.
    const next = await s.turn({});
    expect(next.messages.slice(-4).map((m) => m.role)).toEqual(["assistant", "tool", "assistant", "tool"]);
    // Nothing left to run: nothing appended, and `lastSeq` is still the conversation's last message.
    expect(await s.frontend.json("POST", `${s.path}/tools/run`, {})).toEqual({ ran: [], toolResults: [], appended: 0, lastSeq: messages.length + 2 });
  });
});

