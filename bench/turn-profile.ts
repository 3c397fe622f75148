/**
 * `npx tsx bench/turn-profile.ts`: where a turn's time goes inside the Worker. Runs the turn bench's workload (three
 * providers answering at once) against a `wrangler dev` with its inspector open, samples the isolate's CPU with the
 * DevTools profiler over TURNS turns (200 by default), and prints each stage's median ms (`envelope.stages`) and the
 * functions with the most CPU time, by their own time and with their callees. PROFILE_CONTEXT=1 profiles
 * `GET …/context` on a conversation of HISTORY messages (10,000 by default) instead.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { mintToken } from "../src/http/auth";
import { ContextApp, ContextClient } from "../src/sdk";
import { freePort } from "../scripts/local-runtime";
import WebSocket from "ws";
import { SourceMapConsumer } from "source-map-js";
import { timedFetch } from "./timed-fetch";
import { percentile } from "./stats";
import { longHistory } from "./history";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const secret = `bench-${crypto.randomUUID()}`;
const [port, inspectorPort] = [await freePort(), await freePort()];
const state = mkdtempSync(join(tmpdir(), "context-runtime-"));
const child = spawn(
  "wrangler",
  ["dev", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspectorPort), "--persist-to", state, "--var", `AUTH_SECRET:${secret}`, "--show-interactive-dev-session=false"],
  { stdio: "ignore", detached: true, env: { ...process.env, PATH: `${join(process.cwd(), "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}`, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" } },
);
const url = `http://127.0.0.1:${port}`;
const started = Date.now();
let sources: SourceMapConsumer | null = null;

/** The source map of the bundle this wrangler dev runs (read while it runs: it is deleted on exit), to name sources. */
function bundleMap(): SourceMapConsumer | null {
  const root = join(process.cwd(), ".wrangler", "tmp");
  for (const dir of existsSync(root) ? readdirSync(root).filter((d) => d.startsWith("dev-")) : []) {
    const map = readdirSync(join(root, dir)).find((f) => f.endsWith(".js.map"));
    if (map && statSync(join(root, dir, map)).mtimeMs >= started - 1000) return new SourceMapConsumer(JSON.parse(readFileSync(join(root, dir, map), "utf8")));
  }
  return null;
}
try {
  for (let i = 0; ; i++) {
    if (i > 300) throw new Error("wrangler dev did not start");
    if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const identity = { tenant: "bench", sub: "bench" };
  const timed = timedFetch();
  const client = new ContextClient({ url, apiKey: await mintToken(secret, { kind: "frontend", ...identity }), fetch: timed.fetch });
  const inspector = await connect(inspectorPort);
  sources = bundleMap();
  if (process.env.PROFILE_CONTEXT === "1") await profileContext(client, timed.lastServerMs, inspector);
  else await profileTurns(client, timed.lastServerMs, inspector);
  inspector.close();
} finally {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(-child.pid!, "SIGTERM");
  await exited;
  rmSync(state, { recursive: true, force: true });
}

async function profileTurns(client: ContextClient, serverMs: () => number, inspector: Inspector): Promise<void> {
  const appToken = await mintToken(secret, { kind: "app", tenant: "bench", sub: "bench", app: "bench" });
  const provider = (id: string) => ({ id, name: id, description: id, getCurrent: () => ({ title: id, content: `${id} state: ${"lorem ipsum ".repeat(40)}` }) });
  const app = new ContextApp({ url, token: appToken, app: { name: "bench", version: "1.0.0" }, contexts: [provider("editor"), provider("calendar"), provider("browser")] });
  await app.connect();
  const { agentId } = await app.createAgent({ agentId: "assistant", name: "Bench", systemPrompt: "You are a benchmark.", attachedContexts: ["bench:editor", "bench:calendar", "bench:browser"] });
  const turns = Number(process.env.TURNS ?? 200);
  const stages = new Map<string, number[]>();
  const inside: number[] = [];
  let id = (await client.createConversation({ agent: agentId })).id;
  for (let t = 0; t < 20; t++) await client.turn(id, { agent: agentId, message: `warm ${t}` });
  await inspector.send("Profiler.start");
  for (let t = 0; t < turns; t++) {
    if (t % 25 === 0) id = (await client.createConversation({ agent: agentId })).id;
    const result = await client.turn(id, { agent: agentId, message: `turn ${t}` });
    inside.push(serverMs());
    for (const s of result.envelope.stages ?? []) stages.set(s.stage, [...(stages.get(s.stage) ?? []), s.ms]);
  }
  const profile = ((await inspector.send("Profiler.stop")) as { profile: Profile }).profile;
  await app.close();
  console.log(`\n${turns} turns, inside the Worker p50 ${percentile(inside, 50)} ms, p99 ${percentile(inside, 99)} ms`);
  console.log("stages (ms): " + [...stages].map(([stage, ms]) => `${stage} p50 ${percentile(ms, 50)} p99 ${percentile(ms, 99)}`).join(" · "));
  report(profile, turns);
}

async function profileContext(client: ContextClient, serverMs: () => number, inspector: Inspector): Promise<void> {
  // The long conversation of `npm run bench` (bench/history.ts): 10,000 messages, compaction on, read with the window's budget.
  const history = Number(process.env.HISTORY ?? 10_000);
  const appToken = await mintToken(secret, { kind: "app", tenant: "bench", sub: "bench", app: "history" });
  const app = new ContextApp({ url, token: appToken, app: { name: "history", version: "1.0.0" } });
  await app.connect();
  const { agentId: agent } = await app.createAgent({ agentId: "long", name: "Long", systemPrompt: "You keep long conversations." });
  const { id } = await client.createConversation({ agent, compaction: { contextWindow: 128_000, outputReserve: 4_096 } });
  await client.setMessages(id, longHistory(history));
  for (let i = 0; i < 5; i++) await client.requestMessages(id);
  const reads = Number(process.env.READS ?? 50);
  const inside: number[] = [];
  await inspector.send("Profiler.start");
  for (let i = 0; i < reads; i++) {
    await client.requestMessages(id);
    inside.push(serverMs());
  }
  const profile = ((await inspector.send("Profiler.stop")) as { profile: Profile }).profile;
  await app.close();
  console.log(`\nGET …/context at ${history} messages, ${reads} reads: inside the Worker p50 ${percentile(inside, 50)} ms`);
  report(profile, reads);
}

/** The functions with the most CPU per turn (or read): by their own samples, and with their callees'. */
function report(profile: Profile, per: number): void {
  if (process.env.PROFILE_OUT) writeFileSync(process.env.PROFILE_OUT, JSON.stringify(profile));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const where = (f: ProfileNode["callFrame"]) => {
    const at = f.url && sources ? sources.originalPositionFor({ line: f.lineNumber + 1, column: f.columnNumber }) : null;
    return at?.source ? `${at.source.replace(/^(\.\.\/)+/, "").replace(/^.*node_modules\//, "~/")}:${at.line}` : `${f.url.split("/").slice(-1)[0]}:${f.lineNumber + 1}`;
  };
  const name = (n: ProfileNode) => `${n.callFrame.functionName || "(anonymous)"} ${where(n.callFrame)}`;
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  // Inclusive time: each node's subtree, counted once per function on a path (recursion is not counted twice).
  const walk = (id: number, onPath: Set<string>): number => {
    const node = byId.get(id)!;
    const key = name(node);
    let sum = selfUs.get(id) ?? 0;
    self.set(key, (self.get(key) ?? 0) + sum);
    const fresh = !onPath.has(key);
    if (fresh) onPath.add(key);
    for (const c of node.children ?? []) sum += walk(c, onPath);
    if (fresh) {
      onPath.delete(key);
      total.set(key, (total.get(key) ?? 0) + sum);
    }
    return sum;
  };
  walk(profile.nodes[0]!.id, new Set());
  const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, us]) => `  ${(us / 1000 / per).toFixed(3).padStart(8)} ms  ${k}`).join("\n");
  const busy = [...selfUs].filter(([id]) => !["(idle)", "(program)"].includes(byId.get(id)!.callFrame.functionName)).reduce((s, [, us]) => s + us, 0);
  console.log(`CPU busy per item: ${(busy / 1000 / per).toFixed(2)} ms (idle and (program) excluded)`);
  console.log(`\nself time per item:\n${top(self, Number(process.env.TOP ?? 30))}`);
  console.log(`\nwith callees per item:\n${top(total, Number(process.env.TOP ?? 50))}`);
}

interface Inspector {
  send(method: string, params?: object): Promise<unknown>;
  close(): void;
}

/** The Worker's isolate over the DevTools protocol (wrangler's inspector proxy). */
async function connect(inspector: number): Promise<Inspector> {
  let targets: { webSocketDebuggerUrl: string }[] = [];
  for (let i = 0; i < 50 && targets.length === 0; i++) {
    targets = await fetch(`http://127.0.0.1:${inspector}/json`).then((r) => r.json() as Promise<typeof targets>, () => []);
    if (targets.length === 0) await new Promise((r) => setTimeout(r, 200));
  }
  // The inspector proxy admits only local origins.
  const ws = new WebSocket(targets[0]!.webSocketDebuggerUrl, { headers: { Origin: "http://localhost" } });
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)));
  const waiting = new Map<number, (value: unknown) => void>();
  let next = 1;
  ws.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: unknown };
    if (message.id !== undefined) waiting.get(message.id)?.(message.error ? Promise.reject(new Error(JSON.stringify(message.error))) : message.result);
  };
  const send = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: Number(process.env.SAMPLE_US ?? 100) });
  return { send, close: () => ws.close() };
}
