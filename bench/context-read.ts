/**
 * `npx tsx bench/context-read.ts`: only the 10,000-message `GET …/context` of `npm run bench` ("long conversation"),
 * READS reads (50 by default) on a fresh local runtime, printing the round trip and the time inside the Worker
 * (`Server-Timing`). Small enough to copy into an export of another commit and run in turn with this one.
 */
import { mintToken } from "../src/http/auth";
import { ContextApp, ContextClient } from "../src/sdk";
import { startLocalRuntime } from "../scripts/local-runtime";
import { timedFetch } from "./timed-fetch";
import { longHistory } from "./history";
import { percentile } from "./stats";

const secret = `bench-${crypto.randomUUID()}`;
const runtime = await startLocalRuntime(secret);
try {
  const identity = { tenant: "bench", sub: "bench" };
  const timed = timedFetch();
  const client = new ContextClient({ url: runtime.url, apiKey: await mintToken(secret, { kind: "frontend", ...identity }), fetch: timed.fetch });
  const app = new ContextApp({ url: runtime.url, token: await mintToken(secret, { kind: "app", ...identity, app: "history" }), app: { name: "history", version: "1.0.0" } });
  await app.connect();
  const { agentId: agent } = await app.createAgent({ agentId: "long", name: "Long", systemPrompt: "You keep long conversations." });
  const { id } = await client.createConversation({ agent, compaction: { contextWindow: 128_000, outputReserve: 4_096 } });
  const messages = Number(process.env.HISTORY ?? 10_000);
  await client.setMessages(id, longHistory(messages));
  const view = await client.requestMessages(id);
  const wall: number[] = [];
  const server: number[] = [];
  for (let i = 0; i < Number(process.env.READS ?? 50); i++) {
    const started = performance.now();
    await client.requestMessages(id);
    wall.push(performance.now() - started);
    server.push(timed.lastServerMs());
  }
  await app.close();
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  console.log(`GET …/context on ${messages} messages (${view.messages.length - 1} loaded): p50 ${ms(percentile(wall, 50))}, p99 ${ms(percentile(wall, 99))}, inside the Worker p50 ${ms(percentile(server, 50))}`);
} finally {
  await runtime.stop();
}
