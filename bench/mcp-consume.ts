/**
 * `npx tsx bench/mcp-consume.ts`: a turn whose context and tool come from an MCP server against the same turn from a
 * native app (docs/mcp.md, "Consume"), on one fresh local runtime. Both serve the same text (a ~500-character
 * document) and the same tool (`echo`); the MCP server is the official SDK's (`McpServer`, Streamable HTTP) in this
 * process, the app the project's `ContextApp` on its WebSocket. Each round is two turns in one conversation: a user
 * message (the context is pulled) and the model's reply calling the tool (the runtime runs it). The two sides
 * alternate round by round; ROUNDS (200 by default) per side, the first 10 of each not counted (warm-up).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import * as z from "zod";
import { ContextApp } from "../src/sdk";
import { benchRuntime } from "./bench-runtime";
import { percentile } from "./stats";

const ROUNDS = Number(process.env.ROUNDS ?? 200);
const WARMUP = 10;
const DOC = `Project notes. ${"The context runtime builds what the model reads each turn. ".repeat(8)}`;

/** The MCP side: a resource with DOC and an `echo` tool, one SDK server per session. */
async function mcpServer(): Promise<{ url: string; close: () => void }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    const id = req.headers["mcp-session-id"];
    const known = typeof id === "string" ? sessions.get(id) : undefined;
    if (known) return known.handleRequest(req, res);
    const server = new McpServer({ name: "bench", version: "1" });
    server.registerResource("doc", "note://doc", { mimeType: "text/plain" }, async (uri) => ({ contents: [{ uri: uri.href, text: DOC }] }));
    server.registerTool("echo", { description: "Echo the text", inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }));
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID(), onsessioninitialized: (sid) => void sessions.set(sid, transport) });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, close: () => (http.closeAllConnections(), http.close()) };
}

const runtime = await benchRuntime();
const mcp = await mcpServer();
const app = new ContextApp({
  url: runtime.url,
  token: await runtime.appToken("native"),
  app: { name: "native", version: "1" },
  contexts: [{ id: "doc", name: "doc", getCurrent: () => ({ title: "doc", content: DOC }) }],
  tools: [{ name: "echo", description: "Echo the text", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }, handler: ({ text }) => ({ content: [{ type: "text", text: `echo: ${String(text)}` }] }) }],
});
try {
  await app.connect();
  const registered = await fetch(`${runtime.url}/v1/mcp-servers`, {
    method: "POST",
    headers: { Authorization: `Bearer ${await runtime.apiKey("bench")}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "remote", url: mcp.url }),
  });
  if (registered.status !== 201) throw new Error(`registering the MCP server: ${registered.status} ${await registered.text()}`);
  const agents = {
    native: (await app.createAgent({ agentId: "native", name: "Native", systemPrompt: "Bench.", tools: ["native:echo"], attachedContexts: ["native:doc"] })).agentId,
    mcp: (await app.createAgent({ agentId: "via-mcp", name: "Via MCP", systemPrompt: "Bench.", tools: ["remote:echo"], attachedContexts: ["remote:note://doc"] })).agentId,
  };
  const tools = { native: "native__echo", mcp: "remote__echo" };
  const conversations = { native: (await runtime.client.createConversation({ agent: agents.native })).id, mcp: (await runtime.client.createConversation({ agent: agents.mcp })).id };
  const samples = { native: { round: [] as number[], context: [] as number[], tool: [] as number[], server: [] as number[] }, mcp: { round: [] as number[], context: [] as number[], tool: [] as number[], server: [] as number[] } };
  for (let round = 0; round < ROUNDS + WARMUP; round++) {
    for (const side of ["native", "mcp"] as const) {
      const agent = agents[side];
      const started = performance.now();
      const asked = await runtime.client.turn(conversations[side], { agent, message: `round ${round}` });
      const contextMs = performance.now() - started;
      const contextServer = runtime.lastServerMs();
      if (asked.missing.length) throw new Error(`${side}: ${JSON.stringify(asked.missing)}`);
      const call = { id: `c${side}${round}`, type: "function" as const, function: { name: tools[side], arguments: JSON.stringify({ text: `r${round}` }) } };
      const toolStarted = performance.now();
      const ran = await runtime.client.turn(conversations[side], { agent, reply: { role: "assistant", content: null, tool_calls: [call] } });
      const toolMs = performance.now() - toolStarted;
      if (ran.envelope.tools?.ran?.[0]?.outcome !== "ok") throw new Error(`${side}: the tool did not run: ${JSON.stringify(ran.envelope.tools?.ran)}`);
      if (round < WARMUP) continue;
      samples[side].round.push(contextMs + toolMs);
      samples[side].context.push(contextMs);
      samples[side].tool.push(toolMs);
      samples[side].server.push(contextServer + runtime.lastServerMs());
    }
  }
  const p50 = (xs: number[]) => percentile(xs, 50).toFixed(1);
  console.log(`A turn's context and tool from an MCP server against a native app (${ROUNDS} rounds each, alternating; round trip from this process)`);
  console.log(`                         native app    MCP server`);
  console.log(`  context turn p50     ${p50(samples.native.context).padStart(9)} ms  ${p50(samples.mcp.context).padStart(9)} ms`);
  console.log(`  tool turn p50        ${p50(samples.native.tool).padStart(9)} ms  ${p50(samples.mcp.tool).padStart(9)} ms`);
  console.log(`  both, p50            ${p50(samples.native.round).padStart(9)} ms  ${p50(samples.mcp.round).padStart(9)} ms`);
  console.log(`  both, inside Worker  ${p50(samples.native.server).padStart(9)} ms  ${p50(samples.mcp.server).padStart(9)} ms`);
} finally {
  await app.close();
  mcp.close();
  await runtime.stop();
}
