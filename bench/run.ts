/**
 * `npm run bench`: starts a local runtime (real wrangler dev, embedded state)
 * and prints the spine's figures. TURNS=500 by default.
 */
import { benchRuntime } from "./bench-runtime";
import { summary } from "./stats";
import { httpFloor } from "./timed-fetch";
import { benchArtifactTokens } from "./artifacts";
import { benchLongConversation, benchSession } from "./history";
import { benchMemorySearch } from "./memory";
import { benchRedaction, formatRedactionBench } from "./redaction";
import { benchInjectedTokens } from "./tokens";
import { benchToolSession } from "./tool-session";
import { benchTurns, printTurnBench } from "./turns";

const runtime = await benchRuntime();
try {
  const { client, appToken } = runtime;
  const turns = Number(process.env.TURNS ?? 500);
  const perConversation = 25;
  const conversations = Math.ceil((turns + 5) / perConversation);

  console.log(`Context Runtime benchmarks — local wrangler dev at ${runtime.url}, Node ${process.version}`);
  console.log(`\nThe local stack's floor: GET /health, answered by the Worker alone through wrangler dev's proxy`);
  console.log(`  round trip       ${summary(await httpFloor(runtime.url, 300))}`);
  printTurnBench(
    `Turns with three providers answering at once (${conversations} conversations × ${perConversation} turns)`,
    await benchTurns({ url: runtime.url, appToken: await appToken("bench"), client, lastServerMs: runtime.lastServerMs, providerDelaysMs: [0, 0, 0], conversations, turnsPerConversation: perConversation }),
  );
  printTurnBench(
    "The same, the providers notifying their changes (notifies: true): the editor changes every turn, the calendar's and the browser's answers are kept",
    await benchTurns({ url: runtime.url, appToken: await appToken("bench"), client, lastServerMs: runtime.lastServerMs, providerDelaysMs: [0, 0, 0], conversations, turnsPerConversation: perConversation, notifies: true }),
  );
  printTurnBench(
    "Turns with providers taking 1, 3 and 5 ms",
    await benchTurns({ url: runtime.url, appToken: await appToken("bench"), client, lastServerMs: runtime.lastServerMs, providerDelaysMs: [1, 3, 5], conversations: Math.ceil(conversations / 2), turnsPerConversation: perConversation }),
  );

  const t = await benchInjectedTokens({ url: runtime.url, appToken: await appToken("tokens"), client, turns: 30 });
  console.log(`\nContext tokens over a scripted ${t.turns}-turn session (contexts changed on ${t.changedTurns} turns)`);
  console.log(`  injected ${t.injected} tokens vs ${t.naive} re-injecting every turn = ${((100 * t.injected) / t.naive).toFixed(1)} % (target ≤ 25 %)`);

  const s = await benchToolSession({ url: runtime.url, appToken: await appToken("tools"), client, lastServerMs: runtime.lastServerMs });
  console.log(`\nA tool-heavy session: ${s.results} tool results of ~${Math.round(s.rawResultTokens / s.results)} tokens each, through turns' toolResults`);
  console.log(`  the model reads ${s.protectedInputTokens} tokens vs ${s.rawInputTokens} with raw results appended = ${((100 * s.protectedInputTokens) / s.rawInputTokens).toFixed(1)} % (${(100 - (100 * s.protectedInputTokens) / s.rawInputTokens).toFixed(1)} % saved)`);
  console.log(`  a 1 MB tool output through the tool-result path inside the Worker (Server-Timing, against a tiny one): ${s.redactMbPerSecond.toFixed(1)} MB/s (target ≥ 20 MB/s)`);

  const long = await benchLongConversation({ url: runtime.url, appToken: await appToken("history"), client, lastServerMs: runtime.lastServerMs });
  console.log(`\nA ${long.messages.toLocaleString("en-US")}-message conversation (${long.storedTokens.toLocaleString("en-US")} tokens stored), 128k window`);
  console.log(`  building the request (GET /context): p50 ${long.request.p50.toFixed(2)} ms · p99 ${long.request.p99.toFixed(2)} ms · inside the Worker p50 ${long.request.serverP50} ms`);
  console.log(`  memory: it loads ${long.request.loadedMessages.toLocaleString("en-US")} messages (${(long.request.loadedBytes / 1024).toFixed(0)} KB of message JSON); read whole it would be ${(long.whole.bytes / 1024).toFixed(0)} KB, p50 ${long.whole.serverP50} ms inside the Worker`);
  console.log(`  a turn on it once compacted: p50 ${long.turn.p50.toFixed(2)} ms (inside the Worker ${long.turn.serverP50} ms), the model reads ${long.turn.tokens.toLocaleString("en-US")} tokens`);

  const window = { contextWindow: 4_096, outputReserve: 512 };
  const scripted = await benchSession({ url: runtime.url, app: "session", appToken: await appToken("session"), client, exchanges: 25, resultLines: 8, compaction: window });
  console.log(`\nPrefix stability over a scripted ${scripted.turns}-turn session (4k window, ${scripted.compactions} compactions)`);
  console.log(`  ${scripted.extending} of ${scripted.turns - 1} turns extend the previous prompt byte for byte (${((100 * scripted.extending) / (scripted.turns - 1)).toFixed(1)} %); ${((100 * scripted.cacheableBytes) / scripted.promptBytes).toFixed(1)} % of all prompt bytes repeat the previous prompt's prefix`);

  const [compacted, whole] = await Promise.all([
    benchSession({ url: runtime.url, app: "long-a", appToken: await appToken("long-a"), client, exchanges: 100, resultLines: 30, compaction: { contextWindow: 16_384, outputReserve: 2_048 } }),
    benchSession({ url: runtime.url, app: "long-b", appToken: await appToken("long-b"), client, exchanges: 100, resultLines: 30 }),
  ]);
  console.log(`\nTokens the model reads over a ${compacted.turns}-turn session`);
  console.log(`  with compaction (16k window): ${compacted.tokens.toLocaleString("en-US")} (${compacted.compactions} compactions) vs ${whole.tokens.toLocaleString("en-US")} uncompacted = ${((100 * compacted.tokens) / whole.tokens).toFixed(1)} %`);

  const r = benchRedaction();
  console.log(`\nRedaction over the labelled corpus (${r.secrets} secrets, ${r.negatives} negative samples), in Node`);
  for (const line of formatRedactionBench(r)) console.log(line);

  const memoryKey = await runtime.apiKey("memory");
  console.log("\nMemory search in one user namespace (GET /v1/memories/search, warm listing cache)");
  for (const m of await benchMemorySearch({ url: runtime.url, apiKey: memoryKey, counts: [1_000, 10_000] })) {
    console.log(`  ${String(m.count).padStart(6)} memories: p50 ${m.p50.toFixed(2)} ms · p90 ${m.p90.toFixed(2)} ms · p99 ${m.p99.toFixed(2)} ms · first search after the cache expires ${m.coldMs.toFixed(0)} ms${m.count === 10_000 ? " (target p50 ≤ 25 ms)" : ""}`);
  }

  const a = benchArtifactTokens();
  console.log(`\nA ${(a.artifactBytes / 1024).toFixed(1)} KB artifact passed by pointer and resolved to three fields`);
  console.log(`  ${a.pointerTokens} tokens (pointer line) + ${a.resolvedTokens} (three fields) = ${a.pointerTokens + a.resolvedTokens} vs ${a.fullTokens} for the full payload = ${((100 * (a.pointerTokens + a.resolvedTokens)) / a.fullTokens).toFixed(1)} %`);
} finally {
  await runtime.stop();
}
