import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hubStub } from "../../src/hub/stub";
import { ErrorCode } from "../../src/protocol/jsonrpc";
import { skillKey } from "../../src/hub/skill-store";
import { freshIdentity, type Identity } from "./support/runtime";
import { ToolApp } from "./support/tool-app";

const CALL = { conversationId: "conv-00000001", toolCallId: "call_1" };
const EVENT_SCHEMA = {
  type: "object",
  properties: { title: { type: "string" }, date: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" } },
  required: ["title", "date"],
  additionalProperties: false,
};

const calendarInit = (agents: unknown[] = []) => ({
  tools: [
    { name: "create_event", description: "Create an event", inputSchema: EVENT_SCHEMA, annotations: { destructiveHint: false, title: "New event" } },
    { name: "list_events", description: "List events" },
    { name: "delete_event", description: "Delete an event", annotations: { destructiveHint: true } },
  ],
  skills: [{ name: "scheduling", description: "How to schedule meetings", manual: "# Scheduling\nPrefer mornings.", references: [{ name: "rooms.md", content: "Room A, Room B" }] }],
  agents,
});

const hub = (id: Identity) => hubStub(env, id);

describe("tools and skills apps serve", () => {
  it("resolves an agent's bound tools, catalog and skills across apps, qualified and bare", async () => {
    const id = freshIdentity();
    await ToolApp.connect(id, "notes", {
      tools: [{ name: "search", description: "Search notes" }, { name: "append", description: "Append" }],
      skills: [{ name: "style", description: "House style", manual: "Be brief." }],
    });
    await ToolApp.connect(
      id,
      "calendar",
      calendarInit([
        {
          agentId: "planner",
          name: "Planner",
          systemPrompt: "Plan.",
          tools: ["create_event", "notes:search", "missing_tool", "create_event"],
          catalog: ["calendar:*", "notes:append", "notes:gone"],
          skills: ["calendar:*", "notes:style", "notes:nope"],
          browseContexts: true,
          resultPolicies: { "notes:search": { strategy: "head" }, create_event: { strategy: "head_tail" } },
        },
      ]),
    );
    const box = await hub(id).toolbox("calendar:planner");
    expect(box).not.toBeNull();
    expect(box!.agent).toMatchObject({
      tools: ["calendar:create_event", "notes:search", "calendar:missing_tool"],
      catalog: ["calendar:*", "notes:append", "notes:gone"],
      skills: ["calendar:*", "notes:style", "notes:nope"],
      browseContexts: true,
      resultPolicies: { "notes:search": { strategy: "head" }, create_event: { strategy: "head_tail" } },
    });
    expect(box!.bound).toEqual([
      {
        name: "calendar:create_event",
        description: "Create an event",
        inputSchema: EVENT_SCHEMA,
        annotations: { destructiveHint: false, title: "New event" },
        online: true,
      },
      { name: "notes:search", description: "Search notes", inputSchema: { type: "object", properties: {} }, online: true },
    ]);
    expect(box!.catalog.map((t) => t.name)).toEqual(["calendar:delete_event", "calendar:list_events", "notes:append"]);
    expect(box!.skills).toEqual([
      { name: "calendar:scheduling", description: "How to schedule meetings" },
      { name: "notes:style", description: "House style" },
    ]);
    expect(box!.unknown).toEqual(["calendar:missing_tool", "notes:gone", "notes:nope"]);
    expect(await hub(id).toolbox("calendar:nobody")).toBeNull();
    const plain = await hub(id).agent("calendar:planner");
    expect(plain?.browseContexts).toBe(true);
  });

  it("runs a tool: the app's handler gets its own name, the arguments and the call, and its text parts come back", async () => {
    const id = freshIdentity();
    const app = await ToolApp.connect(id, "calendar", calendarInit(), (params) => ({
      result: { content: [{ type: "text", text: `created ${JSON.stringify(params.arguments)}` }, { type: "image", data: "…" }, { type: "text", text: "done" }] },
    }));
    const run = await hub(id).callTool("calendar:create_event", { title: "Lunch", date: "2026-11-20" }, CALL);
    expect(run).toMatchObject({ ok: true, text: 'created {"title":"Lunch","date":"2026-11-20"}\ndone', isError: false });
    expect(app.calls).toEqual([{ method: "tools/call", name: "create_event", arguments: { title: "Lunch", date: "2026-11-20" }, ...CALL }]);

    const failing = await ToolApp.connect(id, "notes", { tools: [{ name: "search" }] }, () => ({ result: { content: [{ type: "text", text: "index is rebuilding" }], isError: true } }));
    expect(await hub(id).callTool("notes:search", undefined, CALL)).toMatchObject({ ok: true, text: "index is rebuilding", isError: true });
    expect(failing.calls).toHaveLength(1);
  });

  it("refuses bad arguments with readable errors without sending the app anything, and unknown tools", async () => {
    const id = freshIdentity();
    const app = await ToolApp.connect(id, "calendar", calendarInit());
    const run = await hub(id).callTool("calendar:create_event", { title: 5, date: "tomorrow", room: "A" }, CALL);
    expect(run).toMatchObject({ ok: false, reason: "invalid_arguments" });
    if (!run.ok) expect(run.detail.split("\n")).toEqual(["arguments.title: expected string, got number", "arguments.date: String does not match pattern", "arguments.room: unexpected property"]);
    expect(await hub(id).callTool("calendar:create_event", "Lunch", CALL)).toMatchObject({ ok: false, reason: "invalid_arguments", detail: "arguments: expected object, got string" });
    expect(await hub(id).callTool("calendar:nope", {}, CALL)).toMatchObject({ ok: false, reason: "unknown_tool" });
    expect(await hub(id).callTool("create_event", {}, CALL)).toMatchObject({ ok: false, reason: "unknown_tool" });
    expect(app.calls).toEqual([]);
  });

  it("never hangs: offline, late, a JSON-RPC error and a malformed answer all come back as failures", async () => {
    const id = freshIdentity();
    let mode: "late" | "error" | "malformed" | "bad-result" = "late";
    const app = await ToolApp.connect(id, "calendar", calendarInit(), (_params, callId) => {
      if (mode === "late") return null;
      if (mode === "error") return { error: { code: ErrorCode.InternalError, message: "calendar backend down" } };
      // Both result and error: not a JSON-RPC answer, but it still ends the call it names.
      if (mode === "malformed") return { raw: JSON.stringify({ jsonrpc: "2.0", id: callId, result: 1, error: {} }) };
      return { result: { content: "just a string" } };
    });

    const late = await hub(id).callTool("calendar:list_events", {}, CALL);
    expect(late).toMatchObject({ ok: false, reason: "timeout", detail: "no answer within 1000 ms" });
    expect(late.ms).toBeGreaterThanOrEqual(950);

    mode = "error";
    expect(await hub(id).callTool("calendar:list_events", {}, CALL)).toMatchObject({ ok: false, reason: "error", detail: "calendar backend down" });
    mode = "bad-result";
    const bad = await hub(id).callTool("calendar:list_events", {}, CALL);
    expect(bad).toMatchObject({ ok: false, reason: "invalid" });
    if (!bad.ok) expect(bad.detail).toContain("invalid CallToolResult: content:");
    mode = "malformed";
    const malformed = await hub(id).callTool("calendar:list_events", {}, CALL);
    expect(malformed).toMatchObject({ ok: false, reason: "invalid" });
    expect(malformed.ms).toBeLessThan(950);
    expect(app.calls).toHaveLength(4);

    app.ws.close(1000, "bye");
    await waitFor(async () => {
      const run = await hub(id).callTool("calendar:list_events", {}, CALL);
      return !run.ok && run.reason === "offline";
    });
    expect(await hub(id).callTool("calendar:list_events", {}, CALL)).toMatchObject({ ok: false, reason: "offline", detail: "app 'calendar' is not connected" });
    expect(app.calls).toHaveLength(4);
  });

  it("a reconnect re-registers: what the app declares now replaces what it declared before", async () => {
    const id = freshIdentity();
    const first = await ToolApp.connect(id, "calendar", calendarInit([{ agentId: "planner", name: "P", systemPrompt: "", catalog: ["calendar:*"] }]));
    first.ws.close(1000, "reconnecting");
    const second = await ToolApp.connect(
      id,
      "calendar",
      { tools: [{ name: "list_events", description: "List events v2" }], agents: [{ agentId: "planner", name: "P", systemPrompt: "", catalog: ["calendar:*"] }] },
      () => ({ result: { content: [{ type: "text", text: "from second" }] } }),
    );
    const box = await hub(id).toolbox("calendar:planner");
    expect(box!.catalog).toEqual([{ name: "calendar:list_events", description: "List events v2", inputSchema: { type: "object", properties: {} }, online: true }]);
    expect(box!.skills).toEqual([]);
    expect(await hub(id).callTool("calendar:list_events", {}, CALL)).toMatchObject({ ok: true, text: "from second" });
    expect(await hub(id).callTool("calendar:create_event", { title: "x", date: "2026-01-01" }, CALL)).toMatchObject({ ok: false, reason: "unknown_tool" });
    expect(second.calls).toHaveLength(1);
  });

  it("refuses a broken inputSchema at initialize with invalid params naming the tool, and keeps what was registered", async () => {
    const id = freshIdentity();
    const app = await ToolApp.connect(id, "calendar", calendarInit());
    const res = await app.initialize("calendar", { tools: [{ name: "broken", inputSchema: { type: "object", properties: { when: { type: "datetime" } } } }] });
    expect(res.error).toMatchObject({
      code: ErrorCode.InvalidParams,
      data: { issues: [{ path: "tools.0.inputSchema", message: expect.stringContaining("tool 'broken': inputSchema.properties.when.type: \"datetime\" is not a JSON Schema type") }] },
    });
    const notObject = await app.initialize("calendar", { tools: [{ name: "flat", inputSchema: { type: "string" } }] });
    expect(notObject.error).toMatchObject({ code: ErrorCode.InvalidParams, data: { issues: [{ message: expect.stringContaining("tool 'flat'") }] } });
    expect(await hub(id).callTool("calendar:list_events", {}, CALL)).toMatchObject({ ok: true });
  });

  it("keeps skill manuals in R2: read back whole, replaced when changed, deleted when no longer declared", async () => {
    const id = freshIdentity();
    const app = await ToolApp.connect(id, "calendar", calendarInit());
    const read = await hub(id).readSkill("calendar:scheduling");
    expect(read).toEqual({
      ok: true,
      value: { name: "calendar:scheduling", description: "How to schedule meetings", manual: "# Scheduling\nPrefer mornings.", references: [{ name: "rooms.md", content: "Room A, Room B" }] },
    });
    const key = skillKey(id, "calendar", "scheduling");
    const firstEtag = (await env.ARTIFACTS.head(key))!.etag;

    // The same content again: the object is not rewritten.
    await app.initialize("calendar", calendarInit());
    expect((await env.ARTIFACTS.head(key))!.etag).toBe(firstEtag);

    const changed = calendarInit();
    changed.skills[0]!.manual = "# Scheduling\nPrefer afternoons.";
    await app.initialize("calendar", changed);
    expect(await hub(id).readSkill("calendar:scheduling")).toMatchObject({ ok: true, value: { manual: "# Scheduling\nPrefer afternoons." } });
    expect((await env.ARTIFACTS.head(key))!.etag).not.toBe(firstEtag);

    await app.initialize("calendar", { skills: [] });
    expect(await env.ARTIFACTS.head(key)).toBeNull();
    expect(await hub(id).readSkill("calendar:scheduling")).toMatchObject({ ok: false, problem: { type: "not-found" } });
    expect(await hub(id).readSkill("scheduling")).toMatchObject({ ok: false, problem: { type: "not-found" } });
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
