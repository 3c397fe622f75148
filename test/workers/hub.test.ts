import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hubStub } from "../../src/hub/stub";
import type { AgentInfo, ProviderInfo } from "../../src/protocol/frontend";
import { ErrorCode } from "../../src/protocol/jsonrpc";
import { PROTOCOL_VERSION } from "../../src/protocol/methods";
import { freshIdentity, Frontend } from "./support/runtime";
import { TestApp } from "./support/test-app";
import { ToolApp } from "./support/tool-app";

const tool = (name: string) => ({ name, description: `The ${name} tool.`, inputSchema: { type: "object" } });
const offered = (turn: { envelope: { tools?: { offered?: { name: string }[] } } }) => turn.envelope.tools?.offered?.map((o) => o.name) ?? [];

describe("the app hub", () => {
  it("replaces an app's providers and agents in one step when it initialises again", async () => {
    const id = freshIdentity();
    const first = await TestApp.connect(id, "notes", { old: { current: () => ({ content: "old" }) } });
    await first.createAgent("legacy", ["notes:old"]);
    const frontend = await Frontend.for(id);

    const res = await first.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      app: { name: "notes", version: "2.0.0" },
      contexts: [{ id: "fresh", name: "Fresh", methods: ["current"] }],
      agents: [{ agentId: "assistant", name: "Assistant", systemPrompt: "Help.", attachedContexts: ["notes:fresh"] }],
    });
    expect(res.result).toMatchObject({ protocolVersion: PROTOCOL_VERSION });
    const { agents } = await frontend.json<{ agents: AgentInfo[] }>("GET", "/v1/agents");
    expect(agents.map((a) => [a.id, a.attachedContexts])).toEqual([["notes:assistant", ["notes:fresh"]]]);
    const { providers } = await frontend.json<{ providers: ProviderInfo[] }>("GET", "/v1/contexts");
    expect(providers.map((p) => [p.id, p.methods, p.online])).toEqual([["notes:fresh", ["current"], true]]);
  });

  it("sends provider calls to the app's most recently initialised socket", async () => {
    const id = freshIdentity();
    const older = await TestApp.connect(id, "notes", { editor: { current: () => ({ content: "from older" }) } });
    const newer = await TestApp.connect(id, "notes", { editor: { current: () => ({ content: "from newer" }) } });
    const agent = await newer.createAgent("assistant", ["notes:editor"]);
    const frontend = await Frontend.for(id);
    const conversation = await frontend.conversation();
    const turn = await frontend.turn(conversation, { agent, message: "which?" });
    expect(turn.messages.at(-1)!.content).toContain("from newer");
    expect(older.calls).toEqual([]);
  });

  it("falls back to the provider's name for a blank title", async () => {
    const id = freshIdentity();
    const app = await TestApp.connect(id, "notes", { editor: { name: "Editor State", current: () => ({ content: "x", title: "  " }) } });
    const agent = await app.createAgent("assistant", ["notes:editor"]);
    const frontend = await Frontend.for(id);
    const turn = await frontend.turn(await frontend.conversation(), { agent, message: "hi" });
    expect(turn.messages.at(-1)!.content).toContain("[Context: Editor State]\nx");
  });

  it("answers a request or notification with an extra top-level member with -32600 and does not run it", async () => {
    const id = freshIdentity();
    const app = await TestApp.connect(id, "notes", {});
    const agent = { agentId: "extra", name: "Extra", systemPrompt: "" };
    const request = await app.send({ jsonrpc: "2.0", id: 7, method: "agents/create", params: agent, extra: true }, 7);
    expect(request).toMatchObject({ id: 7, error: { code: ErrorCode.InvalidRequest, data: { issues: [{ message: 'Unrecognized key: "extra"' }] } } });
    const notification = await app.send({ jsonrpc: "2.0", method: "agents/create", params: agent, extra: true });
    expect(notification).toMatchObject({ id: null, error: { code: ErrorCode.InvalidRequest } });
    const { agents } = await (await Frontend.for(id)).json<{ agents: AgentInfo[] }>("GET", "/v1/agents");
    expect(agents).toEqual([]);
  });

  it("a turn reads the registrations as they are now: each change (tools, agent, hooks, a disconnect) is seen by the very next turn", async () => {
    const id = freshIdentity();
    const planner = (tools: string[]) => ({ agentId: "planner", name: "Planner", systemPrompt: "Plan.", tools });
    const app = await ToolApp.connect(id, "calendar", { tools: [tool("create_event")], agents: [planner(["create_event"])] });
    const frontend = await Frontend.for(id);
    const conversation = await frontend.conversation();
    const turn = (message: string) => frontend.turn(conversation, { agent: "calendar:planner", message });
    const first = await turn("one");
    expect(offered(first)).toEqual(["calendar__create_event"]);
    expect(first.envelope.hooks).toBeUndefined();

    await app.initialize("calendar", { tools: [tool("create_event"), tool("list_events")], agents: [planner(["create_event", "list_events"])] });
    expect(offered(await turn("two"))).toEqual(["calendar__create_event", "calendar__list_events"]);

    await app.request("agents/create", planner(["list_events"]));
    expect(offered(await turn("three"))).toEqual(["calendar__list_events"]);

    await app.initialize("calendar", { tools: [tool("list_events")], agents: [planner(["list_events"])], hooks: [{ name: "audit", point: "turn.end" }] });
    expect((await turn("four")).envelope.hooks?.points).toEqual(["turn.end"]);

    // The toolbox the next turn reads marks a disconnected app's tools offline (and a reconnected one's online again).
    const hub = hubStub(env, id);
    expect((await hub.toolbox("calendar:planner"))!.bound.map((t) => [t.name, t.online])).toEqual([["calendar:list_events", true]]);
    app.ws.close();
    await expect.poll(async () => (await hub.toolbox("calendar:planner"))!.bound[0]!.online, { timeout: 2_000 }).toBe(false);
    await ToolApp.connect(id, "calendar", { tools: [tool("list_events")], agents: [planner(["list_events"])] });
    expect((await hub.toolbox("calendar:planner"))!.bound[0]!.online).toBe(true);
  });

  it("sends a conversation's toolbox again only when it changed (prepareTurn's knownToolbox)", async () => {
    const id = freshIdentity();
    const app = await ToolApp.connect(id, "calendar", { tools: [tool("create_event")], agents: [{ agentId: "planner", name: "Planner", systemPrompt: "Plan.", tools: ["create_event"] }] });
    const hub = hubStub(env, id);
    const first = (await hub.prepareTurn("c1", "calendar:planner", null, false, null))!;
    expect(first.toolbox!.bound.map((t) => t.name)).toEqual(["calendar:create_event"]);
    expect((await hub.prepareTurn("c1", "calendar:planner", null, false, null))!.toolboxVersion).toBe(first.toolboxVersion);
    expect((await hub.prepareTurn("c1", "calendar:planner", null, false, first.toolboxVersion))!.toolbox).toBeNull();
    await app.request("agents/create", { agentId: "planner", name: "Planner", systemPrompt: "Plan.", tools: [] });
    const changed = (await hub.prepareTurn("c1", "calendar:planner", null, false, first.toolboxVersion))!;
    expect(changed.toolbox!.bound).toEqual([]);
    expect(changed.toolboxVersion).not.toBe(first.toolboxVersion);
    expect(await hub.prepareTurn("c1", "calendar:nobody", null, false, first.toolboxVersion)).toBeNull();
  });
});
