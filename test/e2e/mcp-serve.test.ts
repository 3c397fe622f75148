/**
 * The runtime as an MCP server end to end (docs/mcp.md, "Serve"): the official SDK's `Client` over a real socket,
 * `StreamableHTTPClientTransport` with the user's frontend API key as its bearer token, against `/mcp/{app}/{agent}` on
 * the real `wrangler dev`; the agent's contexts, tools and skills come from an app connected with the project's
 * `ContextApp`. Resources listed, read and read through their template; a subscription told of a new version when the
 * app says its provider changed; a tool run on the app; a skill as a prompt; one user's session, contexts and
 * conversation out of another's reach.
 *
 * Not here: a session surviving the Durable Object's eviction. `wrangler dev` gives no way to evict one object (only
 * to stop the whole runtime, whose state this shared runtime must keep); the session's row lives in SQLite and each
 * request gets a fresh server (src/conversation/mcp-sessions.ts), which the workerd tests exercise request by request.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { ContextEvent } from "../../src/protocol/frontend";
import { apiKey, freshIdentity, runtimeUrl, sleep, startApp, type Identity } from "./support";

interface Session {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Resolves once the session's own stream (its GET) is open: notifications can reach the client from then on. */
  streamOpen: Promise<void>;
}

async function connect(id: Identity, path: string): Promise<Session> {
  let opened: () => void = () => undefined;
  const streamOpen = new Promise<void>((resolve) => (opened = resolve));
  // The SDK opens the GET stream itself after `initialized`; the fetch it is given tells the test when it answered.
  const watching: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if ((init?.method ?? "GET") === "GET" && response.ok) opened();
    return response;
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${runtimeUrl()}${path}`), { fetch: watching, requestInit: { headers: { Authorization: `Bearer ${await apiKey(id)}` } } });
  const client = new Client({ name: "e2e-client", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, streamOpen };
}

/** A notes app: the open note (current state that changes), a library (list and get), a tool and a skill. */
async function notesApp(id: Identity, owner: string) {
  const state = { editor: `${owner}'s draft one` };
  const library: Record<string, string> = { n1: `${owner}: groceries, eggs and milk`, n2: `${owner}: call the bank`, "trip/2026": `${owner}: Lisbon in May` };
  const added: string[] = [];
  const app = await startApp(id, {
    name: "notes",
    contexts: [
      { id: "editor", name: "Editor", description: "The note being edited", getCurrent: () => ({ title: "Editor", content: state.editor }) },
      {
        id: "library",
        name: "Library",
        description: "Every note",
        // The list pages one note at a time, so `resources/list` has to follow its cursor.
        getList: ({ offset }) => {
          const ids = ["n1", "n2"];
          return { items: ids.slice(offset, offset + 1).map((itemId) => ({ id: itemId, title: `Note ${itemId}` })), hasMore: offset + 1 < ids.length };
        },
        // Items the list does not show are still reachable by id, through the template.
        getById: (itemId) => (library[itemId] === undefined ? null : { content: library[itemId]! }),
      },
    ],
    tools: [
      {
        name: "add_note",
        description: "Add a note to the library",
        inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
        handler: (args) => {
          added.push(String(args.title));
          return `added '${String(args.title)}' as note ${added.length + 1}`;
        },
      },
    ],
    skills: [{ name: "style", description: "How notes are written", manual: "# Style\n\nOne idea per line." }],
  });
  await app.createAgent({ agentId: "assistant", name: "Assistant", systemPrompt: "You help with notes.", tools: ["add_note"], skills: ["notes:*"], attachedContexts: ["notes:editor"], browseContexts: true });
  return { app, state, added };
}

async function events(id: Identity, conversationId: string): Promise<ContextEvent[]> {
  const res = await fetch(`${runtimeUrl()}/v1/conversations/${conversationId}/events`, { headers: { Authorization: `Bearer ${await apiKey(id)}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { events: ContextEvent[] }).events;
}

const conversationOf = (session: Session) => session.transport.sessionId!.split(".")[0]!;
const textOf = (contents: readonly object[]) => String((contents[0] as { text?: unknown } | undefined)?.text);

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await sleep(20);
  }
}

describe("MCP serve end to end: the official SDK Client against wrangler dev", () => {
  it("lists the agent's contexts, reads one, and reads an item through the provider's template", async () => {
    const alice = freshIdentity();
    await notesApp(alice, "alice");
    const session = await connect(alice, "/mcp/notes/assistant");
    const { client } = session;
    expect(client.getServerVersion()?.name).toBe("context-runtime");
    expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true);

    const first = await client.listResources();
    expect(first.resources.map((r) => r.uri)).toEqual(["ctx://notes/editor", "ctx://notes/library/n1"]);
    expect(first.nextCursor).toBeDefined();
    const second = await client.listResources({ cursor: first.nextCursor! });
    expect(second.resources.map((r) => r.uri)).toEqual(["ctx://notes/library/n2"]);
    expect(second.nextCursor).toBeUndefined();
    const resources = first.resources;
    expect(resources[0]).toMatchObject({ name: "notes:editor", title: "Editor", mimeType: "text/plain" });

    const editor = await client.readResource({ uri: "ctx://notes/editor" });
    expect(editor.contents).toEqual([{ uri: "ctx://notes/editor", mimeType: "text/plain", text: "alice's draft one" }]);

    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["ctx://notes/library/{id}"]);
    // The template filled with an id the list never showed, percent-encoded as one path segment.
    const uri = resourceTemplates[0]!.uriTemplate.replace("{id}", encodeURIComponent("trip/2026"));
    expect(uri).toBe("ctx://notes/library/trip%2F2026");
    expect(textOf((await client.readResource({ uri })).contents)).toBe("alice: Lisbon in May");

    const log = await events(alice, conversationOf(session));
    expect(log.filter((e) => e.type === "mcp.resource.read").map((e) => e.subject)).toEqual(["ctx://notes/editor", uri]);
    await client.close();
  });

  it("tells a subscriber its resource changed once the app announces a new version, and stops after unsubscribe", async () => {
    const alice = freshIdentity();
    const { app, state } = await notesApp(alice, "alice");
    const session = await connect(alice, "/mcp/notes/assistant");
    const { client } = session;
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    await client.subscribeResource({ uri: "ctx://notes/editor" });
    await session.streamOpen;

    // The app's `contexts/changed` (ContextApp.notifyChanged); the same version announced again is no news.
    app.notifyChanged("editor");
    await sleep(300);
    expect(updates).toEqual([]);

    state.editor = "alice's draft two";
    app.notifyChanged("editor");
    await waitFor(() => updates.length === 1);
    expect(updates).toEqual(["ctx://notes/editor"]);
    expect(textOf((await client.readResource({ uri: "ctx://notes/editor" })).contents)).toBe("alice's draft two");

    await client.unsubscribeResource({ uri: "ctx://notes/editor" });
    state.editor = "alice's draft three";
    app.notifyChanged("editor");
    await sleep(300);
    expect(updates).toHaveLength(1);

    const types = (await events(alice, conversationOf(session))).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["mcp.resource.subscribed", "mcp.resource.updated", "mcp.resource.unsubscribed"]));
    await client.close();
  });

  it("runs the agent's tool on the app and returns its result", async () => {
    const alice = freshIdentity();
    const { added } = await notesApp(alice, "alice");
    const session = await connect(alice, "/mcp/notes/assistant");
    const { client } = session;
    const { tools } = await client.listTools();
    const addNote = tools.find((t) => t.name === "notes__add_note");
    expect(addNote).toMatchObject({ description: "Add a note to the library", inputSchema: { type: "object", required: ["title"] } });

    const ran = await client.callTool({ name: "notes__add_note", arguments: { title: "Call the plumber" } });
    expect(ran.isError).toBe(false);
    expect(ran.content).toEqual([{ type: "text", text: "added 'Call the plumber' as note 2" }]);
    expect(added).toEqual(["Call the plumber"]);

    // Arguments the tool's schema refuses never reach the app.
    const invalid = await client.callTool({ name: "notes__add_note", arguments: { title: 42 } });
    expect(invalid.isError).toBe(true);
    expect(added).toHaveLength(1);

    const ran2 = (await events(alice, conversationOf(session))).filter((e) => e.type === "tool.call.ran");
    expect(ran2.map((e) => (e.data as { outcome: string; via: string }).outcome)).toEqual(["ok", "invalid_arguments"]);
    expect(ran2.every((e) => (e.data as { via: string }).via === "mcp")).toBe(true);
    await client.close();
  });

  it("offers the agent's skill as a prompt whose message is the manual", async () => {
    const alice = freshIdentity();
    await notesApp(alice, "alice");
    const { client } = await connect(alice, "/mcp/notes/assistant");
    expect((await client.listPrompts()).prompts).toEqual([{ name: "notes:style", description: "How notes are written" }]);
    const prompt = await client.getPrompt({ name: "notes:style" });
    expect(prompt).toMatchObject({ description: "How notes are written", messages: [{ role: "user", content: { type: "text", text: "# Style\n\nOne idea per line." } }] });
    await client.close();
  });

  // An id the provider's getById answers with null is no resource: MCP's resource-not-found, as for a URI outside the view.
  it("answers an item the provider does not have with resource-not-found", async () => {
    const alice = freshIdentity();
    await notesApp(alice, "alice");
    const { client } = await connect(alice, "/mcp/notes/assistant");
    await expect(client.readResource({ uri: "ctx://notes/library/missing" })).rejects.toMatchObject({ code: -32002, message: "MCP error -32002: no resource 'ctx://notes/library/missing' in this agent's view" });
    await client.close();
  });

  it("keeps one user's session, contexts and conversation out of another user's reach", async () => {
    const alice = freshIdentity();
    const bob: Identity = { tenant: alice.tenant, user: "bob" };
    await notesApp(alice, "alice");
    await notesApp(bob, "bob");
    const aliceSession = await connect(alice, "/mcp/notes/assistant");
    const bobSession = await connect(bob, "/mcp/notes/assistant");

    // Bob's own session shows Bob's contexts only, at the same URIs.
    expect(textOf((await bobSession.client.readResource({ uri: "ctx://notes/editor" })).contents)).toBe("bob's draft one");
    expect(textOf((await bobSession.client.readResource({ uri: "ctx://notes/library/trip%2F2026" })).contents)).toBe("bob: Lisbon in May");
    const listed = JSON.stringify(await bobSession.client.listResources());
    expect(listed).not.toContain("alice");

    // Alice's session id under Bob's key: not found, and nothing of hers in the answer.
    const bobKey = await apiKey(bob);
    const raw = (body: unknown, headers: Record<string, string>, query = "") =>
      fetch(`${runtimeUrl()}/mcp/notes/assistant${query}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${bobKey}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25", ...headers },
        body: JSON.stringify(body),
      });
    const stolen = aliceSession.transport.sessionId!;
    for (const request of [
      { jsonrpc: "2.0", id: 1, method: "resources/list" },
      { jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "ctx://notes/editor" } },
      { jsonrpc: "2.0", id: 3, method: "resources/subscribe", params: { uri: "ctx://notes/editor" } },
    ]) {
      const res = await raw(request, { "Mcp-Session-Id": stolen });
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain("alice");
    }
    const stream = await fetch(`${runtimeUrl()}/mcp/notes/assistant`, { headers: { Authorization: `Bearer ${bobKey}`, Accept: "text/event-stream", "Mcp-Session-Id": stolen } });
    expect(stream.status).toBe(404);
    // Joining Alice's conversation by its id: not found either.
    const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bob", version: "1" } } };
    expect((await raw(initialize, {}, `?conversation=${conversationOf(aliceSession)}`)).status).toBe(404);

    // Alice's session is untouched by all that.
    expect(textOf((await aliceSession.client.readResource({ uri: "ctx://notes/editor" })).contents)).toBe("alice's draft one");
    await aliceSession.client.close();
    await bobSession.client.close();
  });
});
