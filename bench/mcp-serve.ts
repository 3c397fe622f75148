/**
 * `npx tsx bench/mcp-serve.ts`: what a read and a tool call cost through `/mcp` (docs/mcp.md, "Serve"). Starts a
 * local runtime (real wrangler dev, embedded state) and an SDK app with a 2 KB context and a tool that answers at
 * once, opens one session with the official SDK's `Client` over Streamable HTTP (the frontend API key as its bearer
 * token), warms up, then times N (300) of each, one at a time:
 *
 *   (a) `resources/read` of the agent's attached context, through /mcp;
 *   (b) the same context read through the frontend API: `POST …/tools/run` of a `read_context` call (the API has no
 *       plain "read this context" route; a frontend reads one through the runtime's own tool);
 *   (c) `tools/call` of the app's tool, through /mcp;
 *   (d) the same tool through the frontend API: `POST …/tools/run` of an appended call.
 *
 * (b) and (d) time the `tools/run` request only; the `POST …/messages` that appends the call before it is not timed.
 * Their conversations hold 50 calls each, so history stays the same size as the session's. N=300 by default.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ContextApp } from "../src/sdk";
import { benchRuntime } from "./bench-runtime";
import { summary } from "./stats";

const N = Number(process.env.N ?? 300);
const WARMUP = 30;
const PER_CONVERSATION = 50;

/** 2 KB of note text, the same every read (its version does not move). */
const DOCUMENT = Array.from({ length: 40 }, (_, i) => `Line ${String(i + 1).padStart(2, "0")}: the quarterly plan, step ${i + 1}.`).join("\n").padEnd(2048, ".").slice(0, 2048);

async function timed<T>(samples: number[] | null, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const value = await run();
  samples?.push(performance.now() - started);
  return value;
}

const runtime = await benchRuntime();
const app = new ContextApp({
  url: runtime.url,
  token: await runtime.appToken("bench"),
  app: { name: "bench", version: "1.0.0" },
  contexts: [{ id: "doc", name: "Document", description: "The open document", getCurrent: () => ({ title: "Document", content: DOCUMENT }) }],
  tools: [{ name: "echo", description: "Echo a word", inputSchema: { type: "object", properties: { word: { type: "string" } }, required: ["word"] }, handler: (args) => `echo ${String(args.word)}` }],
});
const transport = new StreamableHTTPClientTransport(new URL(`${runtime.url}/mcp/bench/reader`), { requestInit: { headers: { Authorization: `Bearer ${await runtime.apiKey("bench")}` } } });
const client = new Client({ name: "bench-mcp-serve", version: "1.0.0" });
// A socket dropped mid-run (wrangler dev reloads the Worker when a source file changes) fails the run, and is said.
let closing = false;
app.on("disconnected", ({ code, reason }) => closing || console.error(`the app's socket closed (${code} ${reason})`));
try {
  await app.connect();
  const { agentId: agent } = await app.createAgent({ agentId: "reader", name: "Reader", systemPrompt: "You read documents.", tools: ["echo"], attachedContexts: ["bench:doc"], browseContexts: true });
  await client.connect(transport);

  const read = { mcp: [] as number[], api: [] as number[] };
  const call = { mcp: [] as number[], api: [] as number[] };
  let conversation = "";
  let calls = 0;
  /** Appends one call to the frontend's conversation (untimed), then runs it through `POST …/tools/run` (timed). */
  const runThroughApi = async (samples: number[] | null, name: string, args: unknown): Promise<void> => {
    if (calls % PER_CONVERSATION === 0) conversation = (await runtime.client.createConversation({ agent })).id;
    const id = `call_${++calls}`;
    await runtime.client.appendMessages(conversation, [{ role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }] }]);
    const result = await timed(samples, () => runtime.client.runTools(conversation, { agent, toolCallIds: [id] }));
    if (result.ran.length !== 1 || result.ran[0]!.outcome !== "ok") throw new Error(`tools/run did not run ${id}: ${JSON.stringify(result).slice(0, 300)}`);
  };

  console.log(`MCP serve latency — local wrangler dev at ${runtime.url}, Node ${process.version}`);
  console.log(`${N} of each after ${WARMUP} warm-up, one at a time; a ${DOCUMENT.length}-char context, a tool that answers at once`);
  for (let i = 0; i < WARMUP + N; i++) {
    const record = i >= WARMUP;
    const contents = (await timed(record ? read.mcp : null, () => client.readResource({ uri: "ctx://bench/doc" }))).contents;
    if ((contents[0] as { text?: string }).text !== DOCUMENT) throw new Error(`resources/read did not return the document: ${JSON.stringify(contents).slice(0, 200)}`);
    await runThroughApi(record ? read.api : null, "read_context", { provider: "bench:doc" });
    const result = await timed(record ? call.mcp : null, () => client.callTool({ name: "bench__echo", arguments: { word: `w${i}` } }));
    if (result.isError) throw new Error(`tools/call failed: ${JSON.stringify(result.content)}`);
    await runThroughApi(record ? call.api : null, "bench__echo", { word: `w${i}` });
  }
  console.log(`  (a) resources/read through /mcp                 ${summary(read.mcp)}`);
  console.log(`  (b) read_context through POST …/tools/run       ${summary(read.api)}`);
  console.log(`  (c) tools/call through /mcp                     ${summary(call.mcp)}`);
  console.log(`  (d) the same tool through POST …/tools/run      ${summary(call.api)}`);
} finally {
  closing = true;
  await client.close().catch(() => undefined);
  await app.close();
  await runtime.stop();
}
