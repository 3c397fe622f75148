/**
 * `npm run bench:tool-roundtrip`: what a tool use costs through the runtime. Starts a local runtime (real wrangler dev,
 * embedded state) and an SDK app serving tools whose handlers take a fixed time (0 and 20 ms by default), then times
 * round trips from the model's reply with a tool call to the next model input:
 *
 *   (a) now: one `turn` carrying the reply; the runtime runs the call on the app over its socket;
 *   (b) the app handler's own time, measured inside the handler;
 *   (c) the runtime's overhead, (a) − (b) per round trip;
 *   (d) before: append the reply (`POST …/messages`), the frontend runs the tool itself (the same function, same
 *       delay), then `turn` with `toolResults`.
 *
 * The flows alternate call by call, each in its own conversations of 25 round trips, so both see the same machine
 * and the same history sizes. A fetch wrapper counts every runtime request of each round trip.
 * ROUND_TRIPS=200 per figure by default; DELAYS_MS=0,20.
 */
import { mintToken } from "../src/http/auth";
import { ContextApp, ContextClient, type TurnResult } from "../src/sdk";
import { startLocalRuntime } from "../scripts/local-runtime";
import { percentile, summary } from "./stats";

const ROUND_TRIPS = Number(process.env.ROUND_TRIPS ?? 200);
const DELAYS_MS = (process.env.DELAYS_MS ?? "0,20").split(",").map(Number);
const WARMUP = 20;
const PER_CONVERSATION = 25;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The tool's work: a fixed wait, timed from inside. The app's handler and the old flow's frontend both run this. */
async function work(delayMs: number, n: unknown): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  if (delayMs > 0) await sleep(delayMs);
  return { text: `done ${String(n)} after ${delayMs} ms`, ms: performance.now() - started };
}

/** A `fetch` that records each request's `METHOD /path` and the Worker's own time (`Server-Timing: total;dur=…`). */
function countingFetch() {
  const seen: { request: string; serverMs: number }[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const match = /(?:^|,)\s*total;dur=([\d.]+)/.exec(response.headers.get("Server-Timing") ?? "");
    seen.push({ request: `${init?.method ?? "GET"} ${new URL(String(input)).pathname.replace(/^\/v1\/conversations\/[^/]+/, "…")}`, serverMs: match ? Number(match[1]) : Number.NaN });
    return response;
  };
  return { fetch: wrapped, seen };
}

interface Flow {
  total: number[];
  handler: number[];
  overhead: number[];
  serverMs: number[];
  requests: string[][];
}

const newFlow = (): Flow => ({ total: [], handler: [], overhead: [], serverMs: [], requests: [] });

const secret = `bench-${crypto.randomUUID()}`;
const runtime = await startLocalRuntime(secret);
const identity = { tenant: "bench-tools", sub: "bench" };
const handlerMs = new Map<string, number>();
const app = new ContextApp({
  url: runtime.url,
  token: await mintToken(secret, { kind: "app", ...identity, app: "bench" }),
  app: { name: "bench", version: "1.0.0" },
  tools: DELAYS_MS.map((delay) => ({
    name: `work_${delay}ms`,
    description: `Does ${delay} ms of work`,
    inputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
    handler: async (args: Record<string, unknown>, call: { toolCallId: string }) => {
      const done = await work(delay, args.n);
      handlerMs.set(call.toolCallId, done.ms);
      return done.text;
    },
  })),
});
try {
  await app.connect();
  const { agentId: agent } = await app.createAgent({ agentId: "worker", name: "Worker", systemPrompt: "You call tools.", tools: DELAYS_MS.map((d) => `work_${d}ms`) });
  const counted = countingFetch();
  const client = new ContextClient({ url: runtime.url, apiKey: await mintToken(secret, { kind: "frontend", ...identity }), fetch: counted.fetch });

  /** A fresh conversation, its first turn taken (not timed). */
  const conversation = async () => {
    const { id } = await client.createConversation({ agent });
    await client.turn(id, { agent, message: "Do the work, one call at a time." });
    return id;
  };
  let callCount = 0;
  const replyCalling = (delay: number) => {
    const id = `call_${++callCount}`;
    return { id, reply: { role: "assistant" as const, content: null, tool_calls: [{ id, type: "function" as const, function: { name: `bench__work_${delay}ms`, arguments: JSON.stringify({ n: callCount }) } }] } };
  };
  const lastResult = (turn: TurnResult, id: string): string => {
    const last = turn.messages.at(-1) as { role: string; tool_call_id?: string; content?: unknown };
    if (last.role !== "tool" || last.tool_call_id !== id) throw new Error(`the next model input does not end with ${id}'s result: ${JSON.stringify(last).slice(0, 300)}`);
    return String(last.content);
  };

  console.log(`Tool round trips through the runtime — local wrangler dev at ${runtime.url}, Node ${process.version}`);
  console.log(`${ROUND_TRIPS} round trips per figure (after ${WARMUP} warm-up), flows alternating call by call, conversations of ${PER_CONVERSATION} round trips`);
  console.log("(d) runs the tool in the frontend's own process for free: a real frontend would also have to reach the app that serves it.");

  for (const delay of DELAYS_MS) {
    const now = newFlow();
    const before = newFlow();
    let a = "";
    let b = "";
    for (let i = 0; i < WARMUP + ROUND_TRIPS; i++) {
      if (i % PER_CONVERSATION === 0) [a, b] = await Promise.all([conversation(), conversation()]);
      const record = i >= WARMUP;

      // (a) now: the reply rides on the turn; the runtime runs the call on the app.
      {
        const { id, reply } = replyCalling(delay);
        const from = counted.seen.length;
        const started = performance.now();
        const next = await client.turn(a, { agent, reply });
        const total = performance.now() - started;
        const content = lastResult(next, id);
        if (!content.startsWith("done ")) throw new Error(`${id} failed: ${content}`);
        const handler = handlerMs.get(id);
        if (handler === undefined) throw new Error(`the app's handler did not run for ${id}`);
        if (record) {
          now.total.push(total);
          now.handler.push(handler);
          now.overhead.push(total - handler);
          now.serverMs.push(counted.seen.at(-1)!.serverMs);
          now.requests.push(counted.seen.slice(from).map((s) => s.request));
        }
      }

      // (d) before: append the reply, run the tool at the frontend, send its result in toolResults.
      {
        const { id, reply } = replyCalling(delay);
        const from = counted.seen.length;
        const started = performance.now();
        await client.appendMessages(b, [reply]);
        const done = await work(delay, callCount);
        const next = await client.turn(b, { agent, toolResults: [{ tool_call_id: id, content: done.text }] });
        const total = performance.now() - started;
        lastResult(next, id);
        if (record) {
          before.total.push(total);
          before.handler.push(done.ms);
          before.overhead.push(total - done.ms);
          before.serverMs.push(counted.seen.slice(from).reduce((sum, s) => sum + s.serverMs, 0));
          before.requests.push(counted.seen.slice(from).map((s) => s.request));
        }
      }
    }

    const requestsOf = (flow: Flow) => {
      const counts = new Set(flow.requests.map((r) => r.length));
      return `${[...counts].join("/")} (${flow.requests[0]!.join(", ")})`;
    };
    const p = (xs: number[], q: number) => percentile(xs, q).toFixed(2);
    console.log(`\nA tool whose handler takes ${delay} ms`);
    console.log(`  (a) reply → next model input, runtime runs the call   ${summary(now.total)}`);
    console.log(`  (b) the app handler's own time                       ${summary(now.handler)}`);
    console.log(`  (c) runtime overhead, (a) − (b) per round trip        ${summary(now.overhead)}`);
    console.log(`      inside the Worker, the app call included          p50 ${p(now.serverMs, 50)} ms · p99 ${p(now.serverMs, 99)} ms`);
    console.log(`  (d) before: append, frontend runs it, toolResults    ${summary(before.total)}`);
    console.log(`      minus the tool's own time                        ${summary(before.overhead)}`);
    console.log(`      inside the Worker, both requests (Server-Timing)  p50 ${p(before.serverMs, 50)} ms · p99 ${p(before.serverMs, 99)} ms`);
    console.log(`  (a) vs (d) at p50: ${p(now.total, 50)} vs ${p(before.total, 50)} ms (${(percentile(now.total, 50) - percentile(before.total, 50)).toFixed(2)} ms)`);
    console.log(`  runtime requests per tool use: now ${requestsOf(now)}; before ${requestsOf(before)}`);
  }
} finally {
  await app.close();
  await runtime.stop();
}
