/**
 * MCP servers as apps, end to end (docs/mcp.md, "Consume"): the official `server-everything` in its Streamable HTTP
 * mode, registered through the HTTP API of a real `wrangler dev`; its tools run in a turn, a pinned resource is
 * injected and then updated, its prompts are on the skills menu. Then servers that are offline, slow, answer garbage
 * or drop their stream: each turn still answers, in time, naming what is missing and why. And one tenant's server is
 * invisible to another.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/local-runtime";
import type { TurnResult } from "../../src/sdk";
import { apiKey, freshIdentity, frontend, reminderOf, runtimeUrl, sleep, startApp, type Identity } from "./support";

// ── server-everything, started once for the file ──────────────────────────────

let everything: { url: string; child: ChildProcess };

beforeAll(async () => {
  const port = await freePort();
  const bin = join(process.cwd(), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
  const child = spawn(process.execPath, [bin, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not start:\n${output}`)), 20_000);
    const seen = (d: Buffer) => {
      output += d;
      if (output.includes("listening on port")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", seen);
    child.stderr!.on("data", seen);
    child.once("exit", () => reject(new Error(`server-everything exited:\n${output}`)));
  });
  everything = { url: `http://127.0.0.1:${port}/mcp`, child };
}, 30_000);

afterAll(() => {
  everything?.child.kill("SIGTERM");
});

// ── helpers ───────────────────────────────────────────────────────────────────

async function api(id: Identity, method: string, path: string, body?: unknown): Promise<{ status: number; type: string; json: any }> {
  const res = await fetch(`${runtimeUrl()}${path}`, {
    method,
    headers: { Authorization: `Bearer ${await apiKey(id)}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, type: res.headers.get("Content-Type") ?? "", json: await res.json() };
}

/** A native app that only brings the agent: what it reads and calls is all the MCP server's. */
async function hostAgent(id: Identity, agent: { tools?: string[]; catalog?: string[]; skills?: string[]; attachedContexts?: string[] }) {
  const app = await startApp(id, { name: "host" });
  const { agentId } = await app.createAgent({ agentId: "assistant", name: "Assistant", systemPrompt: "You help.", ...agent });
  const client = await frontend(id);
  const { id: conversation } = await client.createConversation({ agent: agentId });
  return { client, conversation, turn: (body: Omit<Parameters<typeof client.turn>[1], "agent">) => client.turn(conversation, { ...body, agent: agentId }) };
}

let nextCall = 0;
function reply(...calls: [name: string, args: unknown][]) {
  return {
    role: "assistant" as const,
    content: null,
    tool_calls: calls.map(([name, args]) => ({ id: `call_${++nextCall}`, type: "function" as const, function: { name, arguments: JSON.stringify(args) } })),
  };
}

function results(turn: TurnResult): Map<string, string> {
  return new Map(turn.messages.flatMap((m) => (m.role === "tool" ? [[m.tool_call_id, typeof m.content === "string" ? m.content : JSON.stringify(m.content)] as const] : [])));
}

const DYNAMIC = "demo://resource/dynamic/text/1";

// ── server-everything ─────────────────────────────────────────────────────────

describe("server-everything, registered through the HTTP API", () => {
  it("is listed with its header names only, its tools run through a turn, its prompts are skills", async () => {
    const id = freshIdentity();
    const registered = await api(id, "POST", "/v1/mcp-servers", { name: "everything", url: everything.url, headers: { "X-Api-Key": "sk-very-secret-value" } });
    expect(registered.status).toBe(201);
    expect(registered.json).toMatchObject({ name: "everything", status: "online", headerNames: ["X-Api-Key"], declaredBy: "user", resources: true });
    expect(registered.json.tools).toBeGreaterThan(5);
    const listed = await api(id, "GET", "/v1/mcp-servers");
    expect(JSON.stringify(listed.json)).not.toContain("sk-very-secret-value");
    expect(listed.json.servers.map((s: { name: string }) => s.name)).toEqual(["everything"]);
    // The prompts with required arguments are left out, and said to be.
    expect(listed.json.servers[0].skipped).toContainEqual({ kind: "prompt", name: "args-prompt", reason: "it has required arguments; a skill is read without any" });

    const { turn } = await hostAgent(id, { tools: ["everything:echo"], catalog: ["everything:*"], skills: ["everything:*"] });
    const first = await turn({ message: "Say hi through echo." });
    expect(first.tools!.map((t) => t.function.name)).toContain("everything__echo");
    expect(first.tools!.find((t) => t.function.name === "everything__echo")!.function.parameters).toMatchObject({ type: "object", properties: { message: { type: "string" } } });
    expect(first.messages[0]!.content).toContain("everything:simple-prompt");

    const calls = reply(["everything__echo", { message: "hi from a turn" }], ["read_skill", { name: "everything:simple-prompt" }], ["search_tools", { query: "sum of two numbers" }], ["everything__echo", { nope: 1 }]);
    const second = await turn({ reply: calls });
    const read = results(second);
    expect(read.get(calls.tool_calls[0]!.id)).toContain("Echo: hi from a turn");
    expect(read.get(calls.tool_calls[1]!.id)).toContain("This is a simple prompt without arguments.");
    expect(read.get(calls.tool_calls[2]!.id)).toContain("everything__get-sum");
    // Arguments are checked against the server's schema before anything is sent.
    expect(read.get(calls.tool_calls[3]!.id)).toMatch(/message/);
    const ran = second.envelope.tools!.ran!;
    expect(ran.map((r) => [r.tool, r.servedBy, r.outcome])).toContainEqual(["everything__echo", "everything:echo", "ok"]);
  }, 60_000);

  it("injects a pinned resource, then marks it updated when its contents change; the server's resources browse as a provider", async () => {
    const id = freshIdentity();
    expect((await api(id, "POST", "/v1/mcp-servers", { name: "everything", url: everything.url })).status).toBe(201);
    const { turn, client, conversation } = await hostAgent(id, { attachedContexts: [`everything:${DYNAMIC}`] });
    const first = await turn({ message: "What does the resource say?" });
    expect(first.missing).toEqual([]);
    expect(reminderOf(first)).toContain("Resource 1: This is a plaintext resource created at");
    expect(reminderOf(first)).toContain(`[Context: everything: ${DYNAMIC}]`);
    // Its text carries the time to the second: a second later it is new content, a new version.
    await sleep(1_100);
    const second = await turn({ message: "And now?" });
    expect(second.envelope.injection.map((i) => [i.id, i.marker])).toContainEqual([`everything:${DYNAMIC}`, "updated"]);

    const { providers } = await client.providers();
    expect(providers).toContainEqual(expect.objectContaining({ id: "everything:resources", methods: ["list", "get"], online: true }));
    const items = await client.browse(conversation, "everything:resources", { limit: 5 });
    expect(items.items[0]!.id).toMatch(/^demo:\/\/resource\/static\/document\//);
  }, 60_000);
});

describe("server-everything, declared by an app in initialize", () => {
  it("serves its tools to the app's agent; its name is then taken, for the user and for other apps", async () => {
    const id = freshIdentity();
    const app = await startApp(id, { name: "notes", mcpServers: [{ name: "everything", url: everything.url, headers: { Authorization: "Bearer app-secret" } }] });
    const { agentId } = await app.createAgent({ agentId: "assistant", name: "Assistant", systemPrompt: "You help.", tools: ["everything:get-sum"] });
    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent: agentId });
    await client.turn(conversation, { agent: agentId, message: "Add 2 and 3." });
    const call = reply(["everything__get-sum", { a: 2, b: 3 }]);
    const ran = await client.turn(conversation, { agent: agentId, reply: call });
    expect(results(ran).get(call.tool_calls[0]!.id)).toContain("The sum of 2 and 3 is 5.");
    const listed = (await api(id, "GET", "/v1/mcp-servers")).json.servers;
    expect(listed).toEqual([expect.objectContaining({ name: "everything", declaredBy: "notes", headerNames: ["Authorization"] })]);
    expect(JSON.stringify(listed)).not.toContain("app-secret");
    // The user cannot take the name, nor remove the app's server (an app named like it: test/workers/mcp-consume.test.ts).
    expect((await api(id, "POST", "/v1/mcp-servers", { name: "everything", url: everything.url })).status).toBe(409);
    expect((await api(id, "DELETE", "/v1/mcp-servers/everything")).status).toBe(409);
    expect((await api(id, "POST", "/v1/mcp-servers", { name: "notes", url: everything.url })).status).toBe(409);
  }, 60_000);
});

// ── faults: small servers that misbehave on purpose ──────────────────────────

type Fault = (method: string, req: IncomingMessage, res: ServerResponse, id: unknown) => boolean;

/** A minimal Streamable HTTP MCP server (JSON answers, no stream) whose `fault` may take over any request. */
async function faultServer(fault: Fault): Promise<{ url: string; server: Server }> {
  const server = createServer(async (req, res) => {
    if (req.method !== "POST") return res.writeHead(405).end();
    let body = "";
    for await (const chunk of req) body += chunk;
    const message = JSON.parse(body) as { id?: unknown; method: string; params?: { protocolVersion?: string } };
    if (fault(message.method, req, res, message.id)) return;
    const answer = (result: unknown) => res.writeHead(200, { "Content-Type": "application/json", "Mcp-Session-Id": "s1" }).end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
    switch (message.method) {
      case "initialize":
        return answer({ protocolVersion: message.params?.protocolVersion, capabilities: { tools: {}, resources: {} }, serverInfo: { name: "faulty", version: "1" } });
      case "tools/list":
        return answer({ tools: [{ name: "work", description: "Does work", inputSchema: { type: "object", properties: {} } }] });
      case "resources/read":
        return answer({ contents: [{ uri: "note://a", text: "fine" }] });
      default:
        return message.id === undefined ? res.writeHead(202).end() : answer({});
    }
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${port}/mcp`, server };
}
const servers: Server[] = [];
afterAll(() => servers.forEach((s) => s.closeAllConnections() ?? s.close()));

/** Registers the server, binds its tool and pins its resource; one turn with the resource and one that calls the tool. */
async function faultyTurns(url: string) {
  const id = freshIdentity();
  const registered = await api(id, "POST", "/v1/mcp-servers", { name: "faulty", url });
  expect(registered.status).toBe(201);
  const { turn } = await hostAgent(id, { tools: ["faulty:work"], attachedContexts: ["faulty:note://a"] });
  const started = Date.now();
  const withContext = await turn({ message: "Read the note." });
  const contextMs = Date.now() - started;
  const call = reply(["faulty__work", {}]);
  const toolStarted = Date.now();
  const withTool = await turn({ reply: call });
  return { registered: registered.json, withContext, contextMs, ran: withTool.envelope.tools!.ran![0]!, toolMs: Date.now() - toolStarted, toolText: results(withTool).get(call.tool_calls[0]!.id)! };
}

describe("a server that misbehaves never fails or hangs a turn", () => {
  it("offline: registered all the same, its context missing with reason offline, its tool failing at once", async () => {
    const { registered, withContext, ran, toolMs } = await faultyTurns(`http://127.0.0.1:${await freePort()}/mcp`);
    expect(registered).toMatchObject({ status: "offline", tools: 0 });
    expect(registered.detail).toContain("faulty");
    expect(withContext.missing).toEqual([expect.objectContaining({ id: "faulty:note://a", reason: "offline" })]);
    // Its tools were never listed, so the agent's binding names an unknown tool, which the model is told of.
    expect(ran.outcome).not.toBe("ok");
    expect(toolMs).toBeLessThan(5_000);
  }, 60_000);

  it("slow: the read past PROVIDER_DEADLINE_MS is missing with reason timeout, and the turn answers at the deadline", async () => {
    const { url } = await faultServer((method) => method === "resources/read"); // never answered
    const { withContext, contextMs } = await faultyTurns(url);
    expect(withContext.missing).toEqual([expect.objectContaining({ id: "faulty:note://a", reason: "timeout" })]);
    expect(contextMs).toBeLessThan(6_000); // PROVIDER_DEADLINE_MS is 2 s in wrangler.toml
  }, 60_000);

  it("garbage: an answer that is not JSON-RPC is invalid, for the context and the tool alike", async () => {
    const { url } = await faultServer((method, _req, res) => {
      if (method !== "resources/read" && method !== "tools/call") return false;
      res.writeHead(200, { "Content-Type": "application/json" }).end('{"this is": "not json-rpc"');
      return true;
    });
    const { withContext, ran, toolText } = await faultyTurns(url);
    expect(withContext.missing).toEqual([expect.objectContaining({ id: "faulty:note://a", reason: "invalid" })]);
    expect(ran).toMatchObject({ servedBy: "faulty:work", outcome: "invalid" });
    expect(toolText).toContain("faulty");
  }, 60_000);

  it("a dropped stream: the context's event stream is cut before its answer, the tool's answer cut midway; both fail, the turns go on", async () => {
    const { url } = await faultServer((method, _req, res) => {
      if (method === "resources/read") {
        // The SDK cannot resume a POST's stream without an event id: the read ends at the deadline.
        res.writeHead(200, { "Content-Type": "text/event-stream", "Mcp-Session-Id": "s1" });
        res.write(": opening\n\n");
        setTimeout(() => res.socket?.destroy(), 50);
        return true;
      }
      if (method !== "tools/call") return false;
      res.writeHead(200, { "Content-Type": "application/json", "Mcp-Session-Id": "s1", "Content-Length": "200" });
      res.write('{"jsonrpc":"2.0","id":');
      setTimeout(() => res.socket?.destroy(), 50);
      return true;
    });
    const { withContext, contextMs, ran, toolMs } = await faultyTurns(url);
    expect(withContext.missing).toEqual([expect.objectContaining({ id: "faulty:note://a", reason: "timeout" })]);
    expect(contextMs).toBeLessThan(6_000);
    expect(ran.outcome).not.toBe("ok");
    expect(toolMs).toBeLessThan(10_000);
  }, 60_000);
});

// ── isolation ────────────────────────────────────────────────────────────────

describe("isolation", () => {
  it("a server one tenant registers is invisible to another: not listed, not a provider, not a tool", async () => {
    const a = freshIdentity();
    const b = freshIdentity();
    expect((await api(a, "POST", "/v1/mcp-servers", { name: "everything", url: everything.url })).status).toBe(201);
    expect((await api(b, "GET", "/v1/mcp-servers")).json).toEqual({ servers: [] });
    expect((await api(b, "DELETE", "/v1/mcp-servers/everything")).status).toBe(404);
    const { turn, client } = await hostAgent(b, { tools: ["everything:echo"], attachedContexts: [`everything:${DYNAMIC}`] });
    const first = await turn({ message: "Anything?" });
    expect(first.missing).toEqual([expect.objectContaining({ id: `everything:${DYNAMIC}`, reason: "unknown_provider" })]);
    expect(first.tools ?? []).toEqual([]);
    expect((await client.providers()).providers.map((p) => p.id)).toEqual([]);
    // The other tenant still has its own.
    expect((await api(a, "GET", "/v1/mcp-servers")).json.servers.map((s: { name: string }) => s.name)).toEqual(["everything"]);
  }, 60_000);
});
