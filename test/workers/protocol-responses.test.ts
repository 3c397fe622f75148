/**
 * Real responses against their protocol schemas, made deeply strict: every object refuses keys the schema does not
 * name and every default becomes required, so a field the runtime sends but the protocol does not document, or a
 * documented one it leaves out, fails here. (Strict copies keep the fields, not the objects' own refinements.)
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { hubStub } from "../../src/hub/stub";
import { ContextList } from "../../src/protocol/context-data";
import {
  AgentInfo,
  AgentList,
  Appended,
  AppendResult,
  ApprovalDecided,
  ApprovalList,
  ApprovalRequested,
  AttachmentList,
  ClearResult,
  CompactResult,
  ConversationInfo,
  EndedConversation,
  EventPage,
  MessagePage,
  ProblemDocument,
  ProviderList,
  ResourceList,
  TurnResult,
} from "../../src/protocol/frontend";
import { CompactionStatus, RequestMessages } from "../../src/protocol/history";
import { ResourcePushResult } from "../../src/protocol/methods";
import { SkillContent, Toolbox, ToolRun, ToolRunResult } from "../../src/protocol/tools";
import { freshIdentity, Frontend } from "./support/runtime";
import { ToolApp } from "./support/tool-app";

/** The schema with every object strict, every default required, all the way down. */
function strict(schema: z.ZodType): z.ZodType {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
  switch (def.type) {
    case "object": {
      const shape = def.shape as Record<string, z.ZodType>;
      return z.strictObject(Object.fromEntries(Object.entries(shape).map(([key, value]) => [key, strict(value)])));
    }
    case "array":
      return z.array(strict(def.element as z.ZodType));
    case "optional":
      return strict(def.innerType as z.ZodType).optional();
    case "nullable":
      return strict(def.innerType as z.ZodType).nullable();
    case "default":
    case "prefault":
    case "readonly":
      return strict(def.innerType as z.ZodType);
    case "union":
      return z.union((def.options as z.ZodType[]).map(strict) as [z.ZodType, z.ZodType, ...z.ZodType[]]);
    case "record":
      return z.record(def.keyType as z.ZodString, strict(def.valueType as z.ZodType));
    case "pipe":
      return strict(def.in as z.ZodType).pipe(def.out as z.ZodType);
    default:
      return schema;
  }
}

/** Parses `value` with the strict schema; on failure the issues say which field and where. */
function expectShape(schema: z.ZodType, value: unknown, what: string): void {
  const parsed = strict(schema).safeParse(value);
  expect(parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`), what).toEqual([]);
}

describe("the strict helper", () => {
  it("refuses an undocumented field and a missing one, deep inside", () => {
    const Page = z.object({ items: z.array(z.object({ id: z.string(), n: z.number().default(1) })).optional() });
    expect(strict(Page).safeParse({ items: [{ id: "a", n: 2 }] }).success).toBe(true);
    expect(strict(Page).safeParse({ items: [{ id: "a", n: 2, extra: true }] }).success).toBe(false);
    expect(strict(Page).safeParse({ items: [{ id: "a" }] }).success).toBe(false);
    expect(Page.safeParse({ items: [{ id: "a", extra: true }] }).success).toBe(true);
  });
});

const EVENT_SCHEMA = {
  type: "object",
  properties: { title: { type: "string" }, date: { type: "string" } },
  required: ["title", "date"],
};
const INIT = {
  contexts: [{ id: "drafts", name: "Drafts", description: "The user's drafts", methods: ["current", "list", "get"] }],
  tools: [
    { name: "create_event", description: "Create an event.", inputSchema: EVENT_SCHEMA, annotations: { destructiveHint: false, title: "New event" } },
    { name: "list_events", description: "List the events of a day.", inputSchema: { type: "object", properties: { date: { type: "string" } } } },
  ],
  skills: [{ name: "scheduling", description: "How to schedule meetings well.", manual: "# Scheduling\nPrefer mornings.", references: [{ name: "rooms.md", content: "Room A" }] }],
  agents: [
    {
      agentId: "planner",
      name: "Planner",
      description: "Plans the week",
      systemPrompt: "You plan the user's week.",
      tools: ["create_event"],
      catalog: ["calendar:*"],
      skills: ["calendar:*"],
      browseContexts: true,
      attachedContexts: ["calendar:drafts"],
      resultPolicies: { list_events: { strategy: "head", maxTokens: 200 } },
    },
  ],
};

let nextCall = 0;
function reply(...calls: [name: string, args: unknown][]) {
  return {
    role: "assistant",
    content: null,
    tool_calls: calls.map(([name, args]) => ({ id: `call_${++nextCall}`, type: "function", function: { name, arguments: JSON.stringify(args) } })),
  };
}

describe("responses match their protocol schemas exactly", () => {
  it("conversations, turns with tools, messages, attachments, resources, approvals, events, agents, contexts, history and problems", async () => {
    const id = freshIdentity();
    const app = await ToolApp.connect(id, "calendar", INIT, (params, _id, method) => {
      if (method === "contexts/current") return { result: { title: "Draft", content: "Day 1: arrive.", version: "v1" } };
      if (method === "contexts/list") return { result: { items: [{ id: "d1", title: "Offsite plan", summary: "Draft agenda" }] } };
      if (method === "contexts/get") return { result: { title: "Offsite plan", content: "Day 2: hike." } };
      return { result: { content: [{ type: "text", text: `${String(params.name)} ok` }] } };
    });
    const frontend = await Frontend.for(id);
    const agent = "calendar:planner";

    const created = await frontend.json<{ id: string }>("POST", "/v1/conversations", { agent, compaction: { contextWindow: 32_000 } });
    expectShape(ConversationInfo, created, "POST /v1/conversations");
    const path = `/v1/conversations/${created.id}`;
    expectShape(ConversationInfo, await frontend.json("GET", path), "GET conversation");

    expectShape(AttachmentList, await frontend.json("POST", `${path}/attachments`, { context: "calendar:drafts", itemId: "d1" }), "POST attachments");
    expectShape(AttachmentList, await frontend.json("GET", `${path}/attachments`), "GET attachments");
    const pushed = await app.request("resources/push", { conversationId: created.id, id: "agenda", title: "Agenda", content: "9:00 standup", summary: "today", type: "text" });
    expectShape(ResourcePushResult, pushed.result, "resources/push");
    expectShape(ResourceList, await frontend.json("GET", `${path}/resources`), "GET resources");
    expectShape(ContextList, await frontend.json("GET", `${path}/contexts/calendar:drafts/items`), "GET items");

    // A turn with tools, then the model's reply calling one: the runtime runs it and the turn goes on.
    const first = await frontend.turn(created.id, { agent, message: "Book lunch tomorrow.", turnId: "t-1" });
    expect(first.tools?.length).toBeGreaterThan(0);
    expectShape(TurnResult, first, "turn with tools");
    const ran = await frontend.turn(created.id, { agent, reply: reply(["calendar__create_event", { title: "Lunch", date: "2026-11-20" }]) });
    expect(ran.envelope.tools?.ran?.[0]).toMatchObject({ outcome: "ok" });
    expectShape(TurnResult, ran, "turn that ran a tool");
    expectShape(TurnResult, await frontend.turn(created.id, { agent, message: "Book lunch tomorrow.", turnId: "t-1" }), "replayed turn");

    // Tools run outside a turn.
    const open = reply(["calendar__list_events", { date: "2026-11-20" }]);
    const appended = await frontend.json("POST", `${path}/messages`, { messages: [open] });
    expectShape(AppendResult, appended, "POST messages");
    const run = await frontend.json<{ ran: unknown[] }>("POST", `${path}/tools/run`, {});
    expect(run.ran).toHaveLength(1);
    expectShape(ToolRunResult, run, "POST tools/run");

    // Approvals: asked for, listed, decided.
    const asked = reply(["calendar__create_event", { title: "Dinner", date: "2026-11-21" }]);
    await frontend.json("POST", `${path}/messages`, { messages: [asked] });
    const toolCallId = asked.tool_calls[0]!.id;
    expectShape(ApprovalRequested, await frontend.json("POST", `${path}/approvals`, { toolCallId }), "POST approvals");
    expectShape(ApprovalList, await frontend.json("GET", `${path}/approvals`), "GET approvals");
    expectShape(ApprovalDecided, await frontend.json("POST", `${path}/approvals/${toolCallId}`, { approved: false, reason: "not now" }), "POST decision");

    const page = await frontend.json<{ messages: unknown[] }>("GET", `${path}/messages`);
    expect(page.messages.length).toBeGreaterThan(4);
    expectShape(MessagePage, page, "GET messages");
    const events = await frontend.json<{ events: unknown[] }>("GET", `${path}/events`);
    expect(events.events.length).toBeGreaterThan(0);
    expectShape(EventPage, events, "GET events");

    const agents = await frontend.json<{ agents: unknown[] }>("GET", "/v1/agents");
    expect(agents.agents).toHaveLength(1);
    expectShape(AgentList, agents, "GET /v1/agents");
    expectShape(ProviderList, await frontend.json("GET", "/v1/contexts"), "GET /v1/contexts");

    // History: status, policy, the model's view, compaction and clearing.
    expectShape(CompactionStatus, await frontend.json("GET", `${path}/compaction`), "GET compaction");
    for (const message of ["And dinner?", "Move it to Friday.", "Thanks."]) await frontend.turn(created.id, { agent, message });
    const policy = { contextWindow: 4_096, outputReserve: 512, tailTokens: 0, keepToolResults: 0, keepImages: 2 };
    expectShape(CompactionStatus, await frontend.json("PUT", `${path}/compaction`, policy), "PUT compaction");
    expectShape(RequestMessages, await frontend.json("GET", `${path}/context?maxTokens=1000`), "GET context");
    // A short history gives a forced compaction nothing to summarise (null); POST …/clear below answers a whole CompactionEvidence.
    expectShape(CompactResult, await frontend.json("POST", `${path}/compact`, { force: true }), "POST compact");
    expectShape(CompactionStatus, await frontend.json("GET", `${path}/compaction`), "GET compaction after one");
    expectShape(TurnResult, await frontend.turn(created.id, { agent, message: "What is booked?" }), "turn after a compaction");
    const cleared = await frontend.json<{ compaction: { reason: string } }>("POST", `${path}/clear`);
    expect(cleared.compaction.reason).toBe("clear");
    expectShape(ClearResult, cleared, "POST clear");

    // Resume into a fresh conversation, then end it.
    const other = await frontend.conversation();
    expectShape(Appended, await frontend.json("PUT", `/v1/conversations/${other}/messages`, { messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] }), "PUT messages");
    expectShape(EndedConversation, await frontend.json("DELETE", `/v1/conversations/${other}`), "DELETE conversation");

    // Problems: a missing conversation, and a body with issues.
    const missing = await frontend.request("GET", "/v1/conversations/no-such-conversation");
    expect(missing.status).toBe(404);
    expectShape(ProblemDocument, await missing.json(), "404 problem");
    const invalid = await frontend.request("POST", `${path}/turns`, { agent, message: 5 });
    expect(invalid.status).toBe(400);
    const problem = await invalid.json<{ issues?: unknown[] }>();
    expect(problem.issues?.length).toBeGreaterThan(0);
    expectShape(ProblemDocument, problem, "400 problem with issues");

    // What the hub answers a Conversation over RPC.
    const hub = hubStub(env, id);
    expectShape(AgentInfo, await hub.agent(agent), "hub.agent");
    expectShape(Toolbox, await hub.toolbox(agent), "hub.toolbox");
    expectShape(ToolRun, await hub.callTool("calendar:create_event", { title: "Tea", date: "2026-11-22" }, { conversationId: created.id, toolCallId: "call_x" }), "hub.callTool ok");
    expectShape(ToolRun, await hub.callTool("calendar:nope", {}, { conversationId: created.id, toolCallId: "call_y" }), "hub.callTool failed");
    const skill = await hub.readSkill("calendar:scheduling");
    expect(skill.ok).toBe(true);
    if (skill.ok) expectShape(SkillContent, skill.value, "hub.readSkill");
  });
});
