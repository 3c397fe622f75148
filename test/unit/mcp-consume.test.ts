/**
 * MCP servers as apps, in plain Node (docs/mcp.md, "Consume"): what a server's lists and answers become (pure), and
 * one client session against a real server built with the official SDK over HTTP: `resources/updated` passed on,
 * `list_changed` read again, a session the server forgot opened again within the call, a dead server backed off.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { backoffMs, catalogOf, contextOf, failureOf, listOf, manualOf, toolTextOf } from "../../src/mcp/consume/mapping";
import { McpServerSession, type ServerLists } from "../../src/mcp/consume/session";
import { LIMITS } from "../../src/protocol/limits";
import { AttachedContextRef, McpServerDeclaration, pinnedUri } from "../../src/protocol/mcp-servers";

describe("what a server's lists become", () => {
  it("tools with catalog names and usable schemas join; the others are named with why", () => {
    const { tools, skipped } = catalogOf(
      [
        { name: "search", description: "Search the docs", inputSchema: { type: "object", properties: { q: { type: "string" } } }, annotations: { readOnlyHint: true } },
        { name: "has/slash", inputSchema: { type: "object" } },
        { name: "bad-pattern", inputSchema: { type: "object", properties: { q: { type: "string", pattern: "(" } } } },
      ],
      [],
    );
    expect(tools).toEqual([{ name: "search", description: "Search the docs", inputSchema: { type: "object", properties: { q: { type: "string" } } }, annotations: { readOnlyHint: true } }]);
    expect(skipped.map((s) => s.name)).toEqual(["has/slash", "bad-pattern"]);
    expect(skipped[1]!.reason).toMatch(/pattern/);
  });

  it("a long description is cut to the catalog's limit rather than the tool refused", () => {
    const { tools } = catalogOf([{ name: "t", description: "x".repeat(LIMITS.toolDescriptionChars + 50), inputSchema: { type: "object" } }], []);
    expect(tools[0]!.description).toHaveLength(LIMITS.toolDescriptionChars);
  });

  it("prompts without required arguments are skills; those with are left out, and said to be", () => {
    const { prompts, skipped } = catalogOf([], [
      { name: "review", description: "Review a change" },
      { name: "untitled" },
      { name: "translate", arguments: [{ name: "text", required: true }] },
      { name: "greet", arguments: [{ name: "who", required: false }] },
    ]);
    expect(prompts).toEqual([
      { name: "review", description: "Review a change" },
      { name: "untitled", description: "untitled" },
      { name: "greet", description: "greet" },
    ]);
    expect(skipped).toEqual([{ kind: "prompt", name: "translate", reason: "it has required arguments; a skill is read without any" }]);
  });
});

describe("what a server's answers become", () => {
  it("a prompt's messages are a manual; a tool's parts are text, with links and images named", () => {
    expect(manualOf({ description: "How to review", messages: [{ role: "user", content: { type: "text", text: "Read the diff." } }] })).toBe("How to review\n\nuser: Read the diff.");
    expect(
      toolTextOf({
        content: [
          { type: "text", text: "found 2" },
          { type: "resource_link", uri: "file:///a.md", name: "a" },
          { type: "image", data: "AAAA", mimeType: "image/png" },
          { type: "resource", resource: { uri: "file:///b.md", text: "B body" } },
        ],
      }),
    ).toEqual({ text: "found 2\n[resource file:///a.md (a)]\n[image image/png]\nB body", isError: false });
    expect(toolTextOf({ content: [], structuredContent: { n: 1 }, isError: true })).toEqual({ text: '{"n":1}', isError: true });
  });

  it("a resource is a context titled with the server and the URI, cut at the context limit with a note", () => {
    const data = contextOf("docs", "file:///guide.md", { contents: [{ uri: "file:///guide.md", mimeType: "text/markdown", text: "y".repeat(LIMITS.contextContentChars + 10) }] });
    expect(data.title).toBe("docs: file:///guide.md");
    expect(data.content).toHaveLength(LIMITS.contextContentChars);
    expect(data.content.endsWith(`[cut at ${LIMITS.contextContentChars} characters]`)).toBe(true);
    expect(contextOf("docs", "x:1", { contents: [{ uri: "x:1", blob: "AAAA", mimeType: "image/png" }] }).content).toBe("[binary image/png at x:1]");
  });

  it("resources/list is a provider's list by URI, filtered by the query, without URIs too long to be ids", () => {
    const list = listOf(
      {
        resources: [
          { uri: "file:///guide.md", name: "guide", title: "The guide", description: "How to start" },
          { uri: "file:///faq.md", name: "faq" },
          { uri: `file:///${"z".repeat(LIMITS.itemIdChars)}`, name: "long" },
        ],
        nextCursor: "p2",
      },
      "start",
      10,
    );
    expect(list).toEqual({ items: [{ id: "file:///guide.md", title: "The guide", summary: "How to start" }], nextCursor: "p2" });
  });

  it("failures are sorted into the reasons a turn reports", () => {
    expect(failureOf("s", Object.assign(new Error("Request timed out"), { code: -32001 })).reason).toBe("timeout");
    expect(failureOf("s", new TypeError("fetch failed")).reason).toBe("offline");
    expect(failureOf("s", new SyntaxError("Unexpected token < in JSON")).reason).toBe("invalid");
    expect(failureOf("s", Object.assign(new Error("Streamable HTTP error: Unexpected content type: text/html"), { code: -1 })).reason).toBe("invalid");
    expect(failureOf("s", Object.assign(new Error("Streamable HTTP error: Error POSTing to endpoint: boom"), { code: 500 })).reason).toBe("error");
    expect(failureOf("s", Object.assign(new Error("MCP error -32603: broke"), { name: "McpError", code: -32603 })).reason).toBe("error");
    expect(failureOf("docs", new Error("x")).detail).toBe("MCP server 'docs': x");
  });

  it("backoff doubles from a second up to five minutes", () => {
    expect([1, 2, 3, 9, 10, 50].map(backoffMs)).toEqual([1_000, 2_000, 4_000, 256_000, 300_000, 300_000]);
  });
});

describe("declarations and refs", () => {
  it("a pinned resource is server:uri; a provider stays app:provider", () => {
    expect(pinnedUri("docs:file:///guide.md")).toBe("file:///guide.md");
    expect(pinnedUri("docs:resources")).toBeNull();
    expect(AttachedContextRef.safeParse("docs:file:///guide.md").success).toBe(true);
    expect(AttachedContextRef.safeParse("notes:editor").success).toBe(true);
    expect(AttachedContextRef.safeParse("docs:file:///has space").success).toBe(false);
    expect(AttachedContextRef.safeParse("no-colon").success).toBe(false);
  });

  it("only http(s) URLs, without credentials; headers the transport sets are refused", () => {
    expect(McpServerDeclaration.safeParse({ name: "s", url: "https://example.com/mcp", headers: { Authorization: "Bearer x" } }).success).toBe(true);
    expect(McpServerDeclaration.safeParse({ name: "s", url: "javascript:alert(1)" }).success).toBe(false);
    expect(McpServerDeclaration.safeParse({ name: "s", url: "http://a:b@example.com" }).success).toBe(false);
    expect(McpServerDeclaration.safeParse({ name: "s", url: "https://example.com", headers: { host: "evil" } }).success).toBe(false);
  });
});

// ── one session against a real SDK server ────────────────────────────────────

interface Live {
  url: string;
  http: Server;
  mcp: McpServer[];
  /** Forgets every session, as a server that restarted would. */
  forget(): void;
}

const open: Server[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.closeAllConnections(), s.close();
});

/** A Streamable HTTP server of the official SDK: a `note` resource (subscribable), an `echo` tool, a `hello` prompt. */
async function liveServer(): Promise<Live> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers: McpServer[] = [];
  const http = createServer(async (req, res) => {
    const id = req.headers["mcp-session-id"];
    const known = typeof id === "string" ? transports.get(id) : undefined;
    if (known) return known.handleRequest(req, res);
    if (id) return res.writeHead(404).end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }));
    const server = new McpServer({ name: "live", version: "1" }, { capabilities: { resources: { subscribe: true, listChanged: true }, tools: { listChanged: true } } });
    server.registerResource("note", "note://today", { mimeType: "text/plain" }, async (uri) => ({ contents: [{ uri: uri.href, text: "Buy milk" }] }));
    server.registerTool("echo", { description: "Echo", inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }));
    server.registerPrompt("hello", { description: "Say hello" }, () => ({ messages: [{ role: "user", content: { type: "text", text: "Hello!" } }] }));
    server.server.setRequestHandler((await import("@modelcontextprotocol/sdk/types.js")).SubscribeRequestSchema, async () => ({}));
    servers.push(server);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID(), onsessioninitialized: (sid) => void transports.set(sid, transport) });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  open.push(http);
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, http, mcp: servers, forget: () => transports.clear() };
}

function recorder() {
  const lists: ServerLists[] = [];
  const updated: string[] = [];
  return { lists, updated, events: { lists: (l: ServerLists) => void lists.push(l), resourceUpdated: (uri: string) => void updated.push(uri) } };
}

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("one client session with the official SDK", () => {
  it("lists on connect, passes resources/updated on, reads the lists again on list_changed", async () => {
    const live = await liveServer();
    const seen = recorder();
    const session = new McpServerSession({ name: "live", url: live.url, headers: { "X-Key": "k" } }, seen.events);
    expect((await session.connect(5_000)).ok).toBe(true);
    expect(session.state).toBe("online");
    expect(seen.lists[0]).toMatchObject({ resources: true, subscribe: true });
    expect(seen.lists[0]!.tools.map((t) => t.name)).toEqual(["echo"]);
    expect(seen.lists[0]!.prompts.map((p) => p.name)).toEqual(["hello"]);

    const read = await session.request(2_000, (client, options) => client.readResource({ uri: "note://today" }, options));
    expect(read.ok && read.value.contents[0]).toMatchObject({ text: "Buy milk" });
    session.watch("note://today");
    await new Promise((r) => setTimeout(r, 200)); // the subscription is sent in the background; the GET stream opens
    await live.mcp[0]!.server.sendResourceUpdated({ uri: "note://today" });
    await until(() => seen.updated.length > 0);
    expect(seen.updated).toEqual(["note://today"]);

    live.mcp[0]!.registerTool("added", { description: "New" }, async () => ({ content: [] })); // sends tools/list_changed
    await until(() => seen.lists.length > 1);
    expect(seen.lists[1]!.tools.map((t) => t.name)).toEqual(["echo", "added"]);
    await session.close();
  });

  it("a session the server forgot is opened again within the same call", async () => {
    const live = await liveServer();
    const seen = recorder();
    const session = new McpServerSession({ name: "live", url: live.url, headers: {} }, seen.events);
    await session.connect(5_000);
    live.forget();
    const call = await session.request(5_000, (client, options) => client.callTool({ name: "echo", arguments: { text: "again" } }, undefined, options));
    expect(call.ok && call.value.content).toEqual([{ type: "text", text: "echo: again" }]);
    expect(seen.lists).toHaveLength(2);
    await session.close();
  });

  it("a dead server fails fast with offline, then waits out its backoff before trying again", async () => {
    const live = await liveServer();
    const url = live.url;
    live.http.closeAllConnections();
    await new Promise((r) => live.http.close(r));
    let now = 1_000_000;
    const session = new McpServerSession({ name: "gone", url, headers: {} }, recorder().events, () => now);
    const first = await session.request(2_000, (client) => client.ping());
    expect(first).toMatchObject({ ok: false, problem: { reason: "offline" } });
    expect(session.state).toBe("offline");
    expect(session.detail).toMatch(/next attempt in 1 s/);
    // Within the backoff: refused at once, nothing sent.
    const started = Date.now();
    const second = await session.request(2_000, (client) => client.ping());
    expect(second).toMatchObject({ ok: false, problem: { reason: "offline" } });
    expect(Date.now() - started).toBeLessThan(50);
    now += 1_001;
    const third = await session.request(2_000, (client) => client.ping());
    expect(third.ok).toBe(false);
    expect(session.detail).toMatch(/next attempt in 2 s/);
    await session.close();
  });

  it("a server that never answers fails the call at its deadline", async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    open.push(silent);
    const session = new McpServerSession({ name: "silent", url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`, headers: {} }, recorder().events);
    const started = Date.now();
    const answer = await session.request(300, (client) => client.ping());
    expect(answer).toMatchObject({ ok: false, problem: { reason: "timeout" } });
    expect(Date.now() - started).toBeLessThan(1_000);
    await session.close();
  });
});
