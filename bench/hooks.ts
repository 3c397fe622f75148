/**
 * `npm run bench:hooks`: what hooks cost a turn. Starts a local runtime (real wrangler dev, embedded state) and, for
 * each configuration, an SDK app on its own tenant whose agent (memory on, no providers) takes plain message turns
 * from a ContextClient over HTTP:
 *
 *   base      no hooks
 *   input×1   one `input` hook answering at once
 *   input×3   three `input` hooks answering at once (`{action:"continue"}` or nothing)
 *   points×3  one hook at each of `input`, `memory` and `assembled`, answering at once
 *   deadline  one `input` hook, deadlineMs 100, failMode open, whose handler sleeps 1000 ms before answering
 *
 * The configurations take turns round by round (one turn each per round, the order rotating each round), so drift
 * in the machine's load hits all of them alike; each runs conversations of 25 turns. Every turn's evidence
 * (`envelope.hooks`) is checked: the calls expected were made, and only the deadline hook failed (timeout).
 * TURNS=300 per configuration (after WARMUP=20 rounds) by default.
 */
import { execSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { mintToken } from "../src/http/auth";
import { ContextApp, ContextClient, type AppHook, type TurnResult } from "../src/sdk";
import { startLocalRuntime } from "../scripts/local-runtime";
import { percentile, summary } from "./stats";
import { timedFetch } from "./timed-fetch";

const TURNS = Number(process.env.TURNS ?? 300);
const WARMUP = Number(process.env.WARMUP ?? 20);
const PER_CONVERSATION = 25;
const DEADLINE_MS = 100;
const SLOW_HANDLER_MS = 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Calls = NonNullable<TurnResult["envelope"]["hooks"]>["calls"];

interface Config {
  key: string;
  label: string;
  /** Hook calls a turn makes (for the per-hook figure). */
  hooks: number;
  declare: AppHook[];
  /** Throws when a turn's evidence is not what this configuration's hooks should leave. */
  check: (calls: Calls) => void;
}

const expectCalls = (want: { point: string; failed?: string }[]) => (calls: Calls) => {
  const got = calls.map((c) => `${c.point}:${c.verdict}:${c.failed ?? "-"}`).join(", ");
  const expected = want.map((w) => `${w.point}:continue:${w.failed ?? "-"}`).join(", ");
  if (got !== expected) throw new Error(`envelope.hooks.calls: expected [${expected}], got [${got}]`);
};

const CONFIGS: Config[] = [
  { key: "base", label: "no hooks", hooks: 0, declare: [], check: expectCalls([]) },
  {
    key: "input1",
    label: "1 input hook",
    hooks: 1,
    declare: [{ name: "pass", point: "input", handler: () => ({ action: "continue" }) }],
    check: expectCalls([{ point: "input" }]),
  },
  {
    key: "input3",
    label: "3 input hooks",
    hooks: 3,
    declare: [
      { name: "first", point: "input", order: 1, handler: () => ({ action: "continue" }) },
      { name: "second", point: "input", order: 2, handler: () => undefined },
      { name: "third", point: "input", order: 3, handler: () => ({ action: "continue" }) },
    ],
    check: expectCalls([{ point: "input" }, { point: "input" }, { point: "input" }]),
  },
  {
    key: "points3",
    label: "input + memory + assembled hooks",
    hooks: 3,
    declare: [
      { name: "in", point: "input", handler: () => ({ action: "continue" }) },
      { name: "mem", point: "memory", handler: () => undefined },
      { name: "blocks", point: "assembled", handler: () => ({ action: "continue" }) },
    ],
    check: expectCalls([{ point: "input" }, { point: "memory" }, { point: "assembled" }]),
  },
  {
    key: "deadline",
    label: `1 input hook past its ${DEADLINE_MS} ms deadline (fail open)`,
    hooks: 1,
    declare: [
      {
        name: "slow",
        point: "input",
        deadlineMs: DEADLINE_MS,
        failMode: "open",
        handler: async () => {
          await sleep(SLOW_HANDLER_MS);
          return { action: "continue" };
        },
      },
    ],
    check: expectCalls([{ point: "input", failed: "timeout" }]),
  },
];

interface Running {
  config: Config;
  app: ContextApp;
  client: ContextClient;
  lastServerMs: () => number;
  agent: string;
  conversation: string;
  turnsInConversation: number;
  latency: number[];
  server: number[];
  /** The runtime's own record of the turn's hook calls, summed (`envelope.hooks.calls[].ms`). */
  hookMs: number[];
}

const secret = `bench-${crypto.randomUUID()}`;
const runtime = await startLocalRuntime(secret);
const running: Running[] = [];
try {
  for (const config of CONFIGS) {
    const identity = { tenant: `bench-hooks-${config.key}`, sub: "bench" };
    const app = new ContextApp({
      url: runtime.url,
      token: await mintToken(secret, { kind: "app", ...identity, app: "bench" }),
      app: { name: "bench", version: "1.0.0" },
      hooks: config.declare,
    });
    await app.connect();
    const { agentId } = await app.createAgent({ agentId: "assistant", name: "Bench", systemPrompt: "You are a benchmark.", memory: true });
    const timed = timedFetch();
    const client = new ContextClient({ url: runtime.url, apiKey: await mintToken(secret, { kind: "frontend", ...identity }), fetch: timed.fetch });
    running.push({ config, app, client, lastServerMs: timed.lastServerMs, agent: agentId, conversation: "", turnsInConversation: PER_CONVERSATION, latency: [], server: [], hookMs: [] });
  }

  const nproc = execSync("nproc").toString().trim();
  const wrangler = (JSON.parse(readFileSync("node_modules/wrangler/package.json", "utf8")) as { version: string }).version;
  const machine = `Node ${process.version} (bench client), wrangler ${wrangler}, nproc ${nproc} (${cpus()[0]?.model.trim() ?? "unknown CPU"})`;
  console.log(`Hooks per turn — local wrangler dev at ${runtime.url}`);
  console.log(machine);
  console.log(`${TURNS} turns per configuration after ${WARMUP} warm-up rounds; ${CONFIGS.length} configurations alternating turn by turn (order rotating each round), conversations of ${PER_CONVERSATION} turns`);
  console.log("Each configuration: its own tenant and app, one agent (memory on, no providers), plain message turns.");

  const started = performance.now();
  for (let round = 0; round < WARMUP + TURNS; round++) {
    for (let i = 0; i < running.length; i++) {
      const r = running[(round + i) % running.length]!;
      if (r.turnsInConversation >= PER_CONVERSATION) {
        r.conversation = (await r.client.createConversation({ agent: r.agent })).id;
        r.turnsInConversation = 0;
      }
      const t0 = performance.now();
      const turn = await r.client.turn(r.conversation, { agent: r.agent, message: `turn ${r.turnsInConversation} of round ${round}` });
      const elapsed = performance.now() - t0;
      r.turnsInConversation++;
      const calls = turn.envelope.hooks?.calls ?? [];
      r.config.check(calls);
      if (round >= WARMUP) {
        r.latency.push(elapsed);
        r.server.push(r.lastServerMs());
        r.hookMs.push(calls.reduce((sum, c) => sum + c.ms, 0));
      }
    }
  }
  const wallS = (performance.now() - started) / 1000;

  const p = (xs: readonly number[], q: number) => percentile(xs, q);
  const f = (n: number) => n.toFixed(2);
  const base = running[0]!;
  for (const r of running) {
    console.log(`\n${r.config.label}`);
    console.log(`  turn latency       ${summary(r.latency)}`);
    console.log(`  inside the Worker  ${summary(r.server)}  (Server-Timing, ms resolution)`);
    if (r.config.hooks > 0) {
      console.log(`  hook calls, as the runtime timed them (sum per turn)  p50 ${f(p(r.hookMs, 50))} ms · p99 ${f(p(r.hookMs, 99))} ms`);
      const added50 = p(r.latency, 50) - p(base.latency, 50);
      const added99 = p(r.latency, 99) - p(base.latency, 99);
      const server50 = p(r.server, 50) - p(base.server, 50);
      // Paired by round: each turn against the base turn of the same round, whose machine state it shared.
      const paired = r.latency.map((x, i) => x - base.latency[i]!);
      console.log(`  added vs no hooks  p50 ${f(added50)} ms (${f(added50 / r.config.hooks)} ms per hook) · p99 ${f(added99)} ms · inside the Worker p50 ${f(server50)} ms · median of per-round differences ${f(p(paired, 50))} ms`);
    }
  }
  console.log(`\n(${CONFIGS.length} × ${WARMUP + TURNS} turns in ${wallS.toFixed(1)} s)`);

  // A table for docs/figures.md.
  console.log(`\nFor docs/figures.md — \`npm run bench:hooks\` (TURNS=${TURNS}), ${new Date().toISOString().slice(0, 10)}, ${machine}:\n`);
  console.log("| configuration (plain message turns, memory on) | turns | p50 | p99 | inside the Worker p50 / p99 | added at p50 | per hook |");
  console.log("|---|---|---|---|---|---|---|");
  for (const r of running) {
    const added = p(r.latency, 50) - p(base.latency, 50);
    const perHook = r.config.hooks > 0 ? `${f(added / r.config.hooks)} ms` : "—";
    const addedCell = r.config.hooks > 0 ? `${f(added)} ms` : "—";
    console.log(`| ${r.config.label} | ${r.latency.length} | ${f(p(r.latency, 50))} ms | ${f(p(r.latency, 99))} ms | ${p(r.server, 50)} / ${p(r.server, 99)} ms | ${addedCell} | ${r.config.key === "deadline" ? `${f(added - DEADLINE_MS)} ms over the deadline` : perHook} |`);
  }
} finally {
  // The deadline hook's handlers are still sleeping: let them answer (late, ignored) before the sockets close.
  await sleep(SLOW_HANDLER_MS + 100);
  for (const r of running) await r.app.close();
  await runtime.stop();
}
