/**
 * The runtime as an MCP server (docs/mcp.md, "Serve"), reached by the official SDK's Client over Streamable HTTP
 * through the Worker: resources, templates, subscriptions, tools, prompts, sessions, isolation and refusals.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { ContextEvent } from "../../src/protocol/frontend";
import { apiKey, BASE, freshIdentity, Frontend, worker, type Identity } from "./support/runtime";
import { TestApp } from "./support/test-app";
import { ToolApp } from "./support/tool-app";

const fetchThroughWorker = (url: string | URL, init?: RequestInit) => worker().fetch(String(url), init);

async function connectClient(id: Identity, path: string, options: { key?: string; name?: string } = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const key = options.key ?? (await apiKey(id));
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}${path}`), { fetch: fetchThroughWorker, requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  const client = new Client({ name: options.name ?? "test-client", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** The notes app: a current state that changes, a browsable list, items by id; an agent that browses it. */
async function notesApp(id: Identity, options: { browse?: boolean } = {}) {
  let editor = "draft one";
  const notes: Record<string, string> = { n1: "Groceries: eggs, milk", "n 2/x": "Trip: Lisbon in May" };
  const app = await TestApp.connect(id, "notes", {
    editor: { current: () => ({ content: editor, title: "Editor" }) },
    library: {
      list: () => ({ items: Object.keys(notes).map((k) => ({ id: k, title: `Note ${k}` })) }),
      get: (p) => (notes[String(p.id)] === undefined ? null : { content: notes[String(p.id)]! }),
    },
  });
  await app.createAgent("assistant", ["notes:editor"], "You help with notes.", { browseContexts: options.browse ?? true });
  return { app, setEditor: (text: string) => (editor = text) };
}

async function events(id: Identity, conversationId: string): Promise<ContextEvent[]> {
  const frontend = await Frontend.for(id);
  return (await frontend.json<{ events: ContextEvent[] }>("GET", `/v1/conversations/${conversationId}/events`)).events;
}

function conversationOf(transport: StreamableHTTPClientTransport): string {
  return transport.sessionId!.split(".")[0]!;
}

describe("MCP: an agent's view as resources", () => {
  it("initialises a session for the agent, listing its attached context, browsable items and templates", async () => {
    const id = freshIdentity();
    await notesApp(id);
    const { client, transport } = await connectClient(id, "/mcp/notes/assistant");
    expect(client.getServerVersion()?.name).toBe("context-runtime");
    expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{8,64}\.[0-9a-f]{32}$/);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(["ctx://notes/editor", "ctx://notes/library/n1", "ctx://notes/library/n%202%2Fx"]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["ctx://notes/library/{id}"]);
    const item = await client.readResource({ uri: "ctx://notes/library/n%202%2Fx" });
    expect(item.contents).toEqual([{ uri: "ctx://notes/library/n%202%2Fx", mimeType: "text/plain", text: "Trip: Lisbon in May" }]);
    await client.close();
  });

  it("reads a context as a turn would see it: secrets redacted, the read recorded in the conversation's events", async () => {
    const id = freshIdentity();
    const { setEditor } = await notesApp(id);
    setEditor("deploy with key ghp_abcdefghijklmnopqrstuvwxyz0123456789 today");
    const { client, transport } = await connectClient(id, "/mcp/notes/assistant");
    const read = await client.readResource({ uri: "ctx://notes/editor" });
    const text = (read.contents[0] as { text: string }).text;
    expect(text).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123456789");
    expect(text).toContain("deploy with key");
    const log = await events(id, conversationOf(transport));
    const readEvent = log.find((e) => e.type === "mcp.resource.read");
    expect(readEvent).toMatchObject({ subject: "ctx://notes/editor", turnId: `mcp:${transport.sessionId}`, data: { ref: "notes:editor" } });
    expect(JSON.stringify(readEvent)).not.toContain("ghp_abcdef");
    expect((readEvent!.data as { redactions: unknown[] }).redactions).toHaveLength(1);
    expect(log.map((e) => e.type)).toContain("mcp.session.started");
    await client.close();
  });

  it("shows an agent that does not browse only its attached contexts", async () => {
    const id = freshIdentity();
    await notesApp(id, { browse: false });
    const { client } = await connectClient(id, "/mcp/notes/assistant");
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(["ctx://notes/editor"]);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    await expect(client.readResource({ uri: "ctx://notes/library/n1" })).rejects.toMatchObject({ code: -32002 });
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("read_context");
    await client.close();
  });

  it("answers a resource it never issued with MCP's resource-not-found", async () => {
    const id = freshIdentity();
    await notesApp(id);
    const { client } = await connectClient(id, "/mcp/notes/assistant");
    for (const uri of ["file:///etc/passwd", "ctx://notes", "ctx://other/editor", "ctx://notes/library/missing/extra"]) {
      await expect(client.readResource({ uri })).rejects.toMatchObject({ code: -32002 });
    }
    await client.close();
  });

  it("notifies a subscriber when the app says its context changed, once per new version", async () => {
    const id = freshIdentity();
    const { app, setEditor } = await notesApp(id);
    const { client } = await connectClient(id, "/mcp/notes/assistant");
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    await client.subscribeResource({ uri: "ctx://notes/editor" });
    // The stream the client opens after initialising must be up before a change can be told on it.
    await waitFor(async () => (await app.request("contexts/changed", { provider: "editor" }), true));
    setEditor("draft two");
    await app.request("contexts/changed", { provider: "editor" });
    await waitFor(() => updates.length === 1);
    // The same version again is no news.
    await app.request("contexts/changed", { provider: "editor" });
    await new Promise((r) => setTimeout(r, 200));
    expect(updates).toEqual(["ctx://notes/editor"]);
    expect((await client.readResource({ uri: "ctx://notes/editor" })).contents[0]).toMatchObject({ text: "draft two" });
    await client.unsubscribeResource({ uri: "ctx://notes/editor" });
    setEditor("draft three");
    await app.request("contexts/changed", { provider: "editor" });
    await new Promise((r) => setTimeout(r, 200));
    expect(updates).toHaveLength(1);
    await client.close();
  });

  it("keeps what it told a session whose stream dropped, for the client that reconnects with Last-Event-ID", async () => {
    const id = freshIdentity();
    const { app, setEditor } = await notesApp(id);
    const { client, transport } = await connectClient(id, "/mcp/notes/assistant");
    const sessionId = transport.sessionId!;
    await client.subscribeResource({ uri: "ctx://notes/editor" });
    await client.close(); // its stream goes with it; the session stays
    const headers = { Authorization: `Bearer ${await apiKey(id)}`, Accept: "text/event-stream", "Mcp-Session-Id": sessionId, "MCP-Protocol-Version": "2025-11-25" };
    const first = await worker().fetch(`${BASE}/mcp/notes/assistant`, { headers });
    expect(first.headers.get("Content-Type")).toBe("text/event-stream");
    const reader = first.body!.getReader();
    setEditor("draft two");
    await app.request("contexts/changed", { provider: "editor" });
    const told = await readUntil(reader, "notifications/resources/updated");
    const seen = /^id: (\S+)$/m.exec(told)![1]!;
    await reader.cancel();
    // Told while no stream is open: kept for the reconnect.
    setEditor("draft three");
    await app.request("contexts/changed", { provider: "editor" });
    const resumed = await worker().fetch(`${BASE}/mcp/notes/assistant`, { headers: { ...headers, "Last-Event-ID": seen } });
    const replay = resumed.body!.getReader();
    const missed = await readUntil(replay, "notifications/resources/updated");
    expect(missed).toContain('"uri":"ctx://notes/editor"');
    expect(/^id: (\S+)$/m.exec(missed)![1]).not.toBe(seen);
    await replay.cancel();
    const log = (await events(id, sessionId.split(".")[0]!)).filter((e) => e.type === "mcp.resource.updated");
    expect(log.map((e) => (e.data as { version: string }).version)).toHaveLength(2);
    // An id the session was given that is no longer its newest replays what came after it.
    const fromStart = await worker().fetch(`${BASE}/mcp/notes/assistant`, { headers: { ...headers, "Last-Event-ID": "1" } });
    expect(fromStart.status).toBe(200);
    const again = fromStart.body!.getReader();
    expect(await readUntil(again, "notifications/resources/updated")).toContain('"uri":"ctx://notes/editor"');
    await again.cancel();
    // An event id this session never sent is refused.
    expect((await worker().fetch(`${BASE}/mcp/notes/assistant`, { headers: { ...headers, "Last-Event-ID": "999999" } })).status).toBe(400);
  });
});

describe("MCP: a session that never opened its stream", () => {
  it("is sent what was kept for it first when it opens one, with no Last-Event-ID", async () => {
    const id = freshIdentity();
    const { app, setEditor } = await notesApp(id);
    const opened = await post(id, "/mcp/notes/assistant", initialize());
    const sessionId = opened.headers.get("Mcp-Session-Id")!;
    const session = { "Mcp-Session-Id": sessionId, "MCP-Protocol-Version": "2025-11-25" };
    expect((await post(id, "/mcp/notes/assistant", { jsonrpc: "2.0", id: 2, method: "resources/subscribe", params: { uri: "ctx://notes/editor" } }, session)).status).toBe(200);
    setEditor("changed before any stream");
    await app.request("contexts/changed", { provider: "editor" });
    // The hub tells the conversation in the background: the change is kept before the stream opens.
    await waitFor(async () => (await events(id, sessionId.split(".")[0]!)).some((e) => e.type === "mcp.resource.updated"));
    const stream = await worker().fetch(`${BASE}/mcp/notes/assistant`, { headers: { Authorization: `Bearer ${await apiKey(id)}`, Accept: "text/event-stream", ...session } });
    const reader = stream.body!.getReader();
    expect(await readUntil(reader, "notifications/resources/updated")).toContain('"uri":"ctx://notes/editor"');
    await reader.cancel();
    const updated = (await events(id, sessionId.split(".")[0]!)).filter((e) => e.type === "mcp.resource.updated");
    expect(updated.map((e) => (e.data as { on: string }).on)).toEqual(["stored"]);
  });

  it("refuses a request whose MCP-Protocol-Version no MCP version has", async () => {
    const id = freshIdentity();
    await notesApp(id);
    const sessionId = (await post(id, "/mcp/notes/assistant", initialize())).headers.get("Mcp-Session-Id")!;
    const unknown = await post(id, "/mcp/notes/assistant", { jsonrpc: "2.0", id: 2, method: "ping" }, { "Mcp-Session-Id": sessionId, "MCP-Protocol-Version": "1999-01-01" });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain("Unsupported protocol version");
  });
});

describe("MCP: tools and prompts", () => {
  it("lists the agent's tools and runs one on its app, through the guard and the tool-result envelope", async () => {
    const id = freshIdentity();
    const app = await ToolApp.connect(
      id,
      "tasks",
      {
        tools: [
          { name: "add_task", description: "Add a task to the list", inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] } },
          { name: "drop_all", description: "Delete every task", inputSchema: { type: "object", properties: {} } },
        ],
      },
      (params) => ({ result: { content: [{ type: "text", text: `added ${String((params.arguments as { title: string }).title)} with token sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD` }] } }),
    );
    const created = await app.request("agents/create", {
      agentId: "planner",
      name: "Planner",
      systemPrompt: "Plan.",
      tools: ["tasks:add_task", "tasks:drop_all"],
      guard: { rules: [{ tool: "tasks:drop_all", verdict: "deny", reason: "never delete everything" }] },
    });
    expect(created.error).toBeUndefined();
    const { client, transport } = await connectClient(id, "/mcp/tasks/planner");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["tasks__add_task", "tasks__drop_all"]);
    const ran = await client.callTool({ name: "tasks__add_task", arguments: { title: "milk" } });
    expect(ran.isError).toBe(false);
    const text = (ran.content as { text: string }[])[0]!.text;
    expect(text).toContain("added milk");
    expect(text).not.toContain("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD");
    const denied = await client.callTool({ name: "tasks__drop_all", arguments: {} });
    expect(denied.isError).toBe(true);
    expect((denied.content as { text: string }[])[0]!.text).toContain("never delete everything");
    expect(app.calls).toHaveLength(1);
    const invalid = await client.callTool({ name: "tasks__add_task", arguments: { title: 7 } });
    expect(invalid.isError).toBe(true);
    await expect(client.callTool({ name: "tasks__nope", arguments: {} })).rejects.toMatchObject({ code: -32602 });
    const log = await events(id, conversationOf(transport));
    expect(log.filter((e) => e.type === "tool.call.ran").map((e) => (e.data as { outcome: string }).outcome)).toEqual(["ok", "denied", "invalid_arguments"]);
    expect(log.some((e) => e.type === "tool.result.redacted")).toBe(true);
    await client.close();
  });

  it("loads a catalog tool with search_tools and tells the client its tool list changed", async () => {
    const id = freshIdentity();
    const app = await ToolApp.connect(id, "mail", {
      tools: [
        { name: "send_email", description: "Send an email message to a recipient", inputSchema: { type: "object", properties: { to: { type: "string" } } } },
        { name: "archive_thread", description: "Archive a mail thread", inputSchema: { type: "object", properties: {} } },
      ],
    });
    await app.request("agents/create", { agentId: "writer", name: "Writer", systemPrompt: "Write.", catalog: ["mail:*"] });
    const { client } = await connectClient(id, "/mcp/mail/writer");
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["search_tools"]);
    await new Promise((r) => setTimeout(r, 100));
    const found = await client.callTool({ name: "search_tools", arguments: { query: "send an email" } });
    expect((found.content as { text: string }[])[0]!.text).toContain("mail__send_email");
    await waitFor(() => changed > 0);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("mail__send_email");
    await client.close();
  });

  it("offers the agent's skills as prompts, the manual past the trust boundary", async () => {
    const id = freshIdentity();
    const app = await ToolApp.connect(id, "docs", { skills: [{ name: "release", description: "How to cut a release", manual: "# Release\n\nTag, then publish." }] });
    await app.request("agents/create", { agentId: "helper", name: "Helper", systemPrompt: "Help.", skills: ["docs:*"] });
    const { client } = await connectClient(id, "/mcp/docs/helper");
    expect((await client.listPrompts()).prompts).toEqual([{ name: "docs:release", description: "How to cut a release" }]);
    const prompt = await client.getPrompt({ name: "docs:release" });
    expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: "# Release\n\nTag, then publish." } }]);
    await expect(client.getPrompt({ name: "docs:missing" })).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });
});

describe("MCP: sessions, isolation and refusals", () => {
  it("never shows one user's session, contexts or conversation to another", async () => {
    const alice = freshIdentity();
    await notesApp(alice);
    const { client, transport } = await connectClient(alice, "/mcp/notes/assistant");
    const bob = { tenant: alice.tenant, user: "bob" };
    const bobKey = await apiKey(bob);
    // Bob's own hub has no such agent.
    await expect(connectClient(bob, "/mcp/notes/assistant", { key: bobKey })).rejects.toThrow();
    // Alice's session id under Bob's key: not found.
    const res = await worker().fetch(`${BASE}/mcp/notes/assistant`, {
      method: "POST",
      headers: { Authorization: `Bearer ${bobKey}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Session-Id": transport.sessionId!, "MCP-Protocol-Version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "ctx://notes/editor" } }),
    });
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain("draft one");
    // Joining Alice's conversation by id: not found for Bob either.
    const join = await worker().fetch(`${BASE}/mcp/notes/assistant?conversation=${conversationOf(transport)}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${bobKey}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify(initialize()),
    });
    expect(join.status).toBe(404);
    await client.close();
  });

  it("ends a session on DELETE: its id is then unknown, and the conversation's events say so", async () => {
    const id = freshIdentity();
    await notesApp(id);
    const { client, transport } = await connectClient(id, "/mcp/notes/assistant");
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    const res = await post(id, "/mcp/notes/assistant", { jsonrpc: "2.0", id: 2, method: "tools/list" }, { "Mcp-Session-Id": sessionId });
    expect(res.status).toBe(404);
    expect((await events(id, sessionId.split(".")[0]!)).map((e) => e.type)).toContain("mcp.session.ended");
    await client.close();
  });

  it("answers an old client's version with the latest, and a current one's with its own", async () => {
    const id = freshIdentity();
    await notesApp(id);
    for (const [asked, answered] of [["2024-11-05", "2025-11-25"], ["2025-06-18", "2025-06-18"], ["2025-11-25", "2025-11-25"]]) {
      const res = await post(id, "/mcp/notes/assistant", initialize(asked));
      expect(res.status).toBe(200);
      expect(res.headers.get("Mcp-Session-Id")).toBeTruthy();
      expect(((await res.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(answered);
    }
  });

  it("refuses bad requests with clear errors and leaves no conversation behind", async () => {
    const id = freshIdentity();
    await notesApp(id);
    const frontend = await Frontend.for(id);
    const before = (await frontend.json<{ conversations: unknown[] }>("GET", "/v1/conversations")).conversations.length;
    expect((await post(id, "/mcp/notes/assistant", "{not json")).status).toBe(400);
    expect((await post(id, "/mcp/notes/assistant", { jsonrpc: "2.0", id: 1, method: "tools/list" })).status).toBe(400);
    expect((await post(id, "/mcp/notes/assistant", { jsonrpc: "2.0", id: 1, method: "initialize", params: { nope: true } })).status).toBe(400);
    expect((await post(id, "/mcp/notes/nobody", initialize())).status).toBe(404);
    expect((await post(id, "/mcp/notes/assistant", initialize(), { "Mcp-Session-Id": "garbage" })).status).toBe(404);
    expect((await post(id, "/mcp/notes/assistant", { jsonrpc: "2.0", id: 1, method: "tools/list" }, { "Mcp-Session-Id": "abcdefgh.0123456789abcdef0123456789abcdef" })).status).toBe(404);
    expect((await worker().fetch(`${BASE}/mcp/notes/assistant`, { method: "PUT", headers: { Authorization: `Bearer ${await apiKey(id)}` } })).status).toBe(405);
    expect((await worker().fetch(`${BASE}/mcp/notes/assistant`, { method: "POST", body: JSON.stringify(initialize()) })).status).toBe(401);
    const after = (await frontend.json<{ conversations: unknown[] }>("GET", "/v1/conversations")).conversations.length;
    expect(after).toBe(before);
  });

  it("refuses a page from an origin CORS_ORIGINS does not allow (DNS rebinding)", async () => {
    const id = freshIdentity();
    await notesApp(id);
    for (const origin of ["http://evil.example", BASE, "http://localhost:6274"]) {
      expect((await post(id, "/mcp/notes/assistant", initialize(), { Origin: origin })).status).toBe(403);
    }
    // A page on a rebound name carries that name as its Host and Origin alike: still refused on a loopback runtime.
    expect((await post(id, "http://evil.example/mcp/notes/assistant", initialize(), { Origin: "http://evil.example" })).status).toBe(403);
    // A local page reaching a local runtime (an MCP inspector in the browser, say) is let through, and may read the
    // session's id from the answer.
    const local = await post(id, "http://localhost:8787/mcp/notes/assistant", initialize(), { Origin: "http://localhost:6274" });
    expect(local.status).toBe(200);
    expect(local.headers.get("Access-Control-Allow-Origin")).toBe("http://localhost:6274");
    expect(local.headers.get("Access-Control-Expose-Headers")?.split(/,\s*/)).toContain("Mcp-Session-Id");
  });
});

function initialize(protocolVersion = "2025-11-25") {
  return { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "0" } } };
}

async function post(id: Identity, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return worker().fetch(path.startsWith("http") ? path : `${BASE}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${await apiKey(id)}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Reads an SSE body until `marker` appears; what was read. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, marker: string, ms = 3000): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  const until = Date.now() + ms;
  while (!text.includes(marker)) {
    if (Date.now() > until) throw new Error(`no '${marker}' in: ${text}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before '${marker}': ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  return text;
}

async function waitFor(check: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}
