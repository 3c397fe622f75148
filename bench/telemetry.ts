/**
 * `npx tsx bench/telemetry.ts`: a gateway request's p50 with the span exporter on and off, paired (docs/telemetry.md).
 * Two fresh local runtimes share one fake upstream; one has OTEL_EXPORTER_OTLP_ENDPOINT at a local OTLP/JSON receiver,
 * the other none. Each round sends the same request to both, alternating which goes first: a user message whose model
 * calls the app's tool once, then answers (two upstream calls, two turns, one tool run). ROUNDS (100 by default) per
 * side, the first 10 of each not counted (warm-up). Prints each side's p50 and p95 (client wall time), the paired
 * difference's median, and the spans received.
 */
import OpenAI from "openai";
import { mintToken } from "../src/http/auth";
import { ContextApp } from "../src/sdk";
import { startLocalRuntime } from "../scripts/local-runtime";
import { startFakeOpenAI } from "../test/e2e/fake-openai";
import { startOtlpReceiver } from "../test/e2e/otlp-receiver";
import { percentile } from "./stats";

const ROUNDS = Number(process.env.ROUNDS ?? 100);
const WARMUP = 10;

async function main() {
  const receiver = await startOtlpReceiver();
  // Every first call asks for the tool, every second answers: the fake's replies alternate per request.
  const fake = await startFakeOpenAI((request) => (request.messages.some((m) => (m as { role: string }).role === "tool") ? { text: "Done." } : { toolCalls: [{ name: "notes__search", arguments: { q: "plan" } }] }));
  // One after the other: two `wrangler dev` starting at once can miss their health check on a small machine.
  const sides = [];
  for (const side of ["on", "off"] as const) {
    sides.push(
      await (async () => {
      const secret = `bench-telemetry-${crypto.randomUUID()}`;
      const vars: Record<string, string> = { UPSTREAM_URL: fake.url, UPSTREAM_MODEL: "fake-gpt", UPSTREAM_KEY: "sk-bench" };
      if (side === "on") vars.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
      const runtime = await startLocalRuntime(secret, { vars });
      const identity = { tenant: "bench", sub: "bench" };
      const app = new ContextApp({
        url: runtime.url,
        token: await mintToken(secret, { kind: "app", ...identity, app: "notes" }),
        app: { name: "notes", version: "1.0.0" },
        contexts: [{ id: "editor", name: "Editor", description: "The open note", getCurrent: async () => ({ title: "Editor", content: "Q4 plan: hire, ship, rest" }) }],
        tools: [{ name: "search", description: "Search notes.", inputSchema: { type: "object", properties: { q: { type: "string" } } }, handler: async () => "plan: hire, ship, rest" }],
      });
      await app.connect();
      await app.createAgent({ agentId: "assistant", name: "Assistant", systemPrompt: "Help.", attachedContexts: ["notes:editor"], tools: ["search"] });
      const openai = new OpenAI({ apiKey: await mintToken(secret, { kind: "frontend", ...identity }), baseURL: `${runtime.url}/v1`, maxRetries: 0 });
      const samples: number[] = [];
      const once = async () => {
        const start = performance.now();
        await openai.chat.completions.create({ model: "notes:assistant", messages: [{ role: "user", content: `What is on the plan? ${crypto.randomUUID()}` }] });
        return performance.now() - start;
      };
      return { side, runtime, app, samples, once };
      })(),
    );
  }
  const differences: number[] = [];
  for (let round = 0; round < ROUNDS + WARMUP; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    const ms: Record<string, number> = {};
    for (const s of order) ms[s.side] = await s.once();
    if (round < WARMUP) continue;
    for (const s of sides) s.samples.push(ms[s.side]!);
    differences.push(ms.on! - ms.off!);
  }
  for (const s of sides) console.log(`exporter ${s.side}: p50 ${percentile(s.samples, 50).toFixed(1)} ms, p95 ${percentile(s.samples, 95).toFixed(1)} ms (n=${s.samples.length})`);
  console.log(`paired difference (on − off): median ${percentile(differences, 50).toFixed(1)} ms`);
  await new Promise((r) => setTimeout(r, 500));
  console.log(`spans received: ${receiver.spans.length} in ${receiver.bodies.length} exports (${(receiver.spans.length / receiver.bodies.length).toFixed(1)} per request)`);
  for (const s of sides) {
    await s.app.close();
    await s.runtime.stop();
  }
  await fake.close();
  await receiver.close();
}

await main();
