/**
 * `npm run bench`: starts a local runtime (real wrangler dev, embedded state)
 * and prints the spine's figures. TURNS=500 by default.
 */
import { mintToken } from "../src/api/credentials";
import { ContextClient } from "../src/sdk";
import { startLocalRuntime } from "../scripts/local-runtime";
import { summary } from "./stats";
import { httpFloor, timedFetch } from "./timed-fetch";
import { benchInjectedTokens } from "./tokens";
import { benchTurns, printTurnBench } from "./turns";

const secret = `bench-${crypto.randomUUID()}`;
const runtime = await startLocalRuntime(secret);
try {
  const identity = { tenant: "bench", sub: "bench" };
  const timed = timedFetch();
  const client = new ContextClient({ url: runtime.url, apiKey: await mintToken(secret, { kind: "frontend", ...identity }), fetch: timed.fetch });
  const appToken = (app: string) => mintToken(secret, { kind: "app", ...identity, app });
  const turns = Number(process.env.TURNS ?? 500);
  const perConversation = 25;
  const conversations = Math.ceil((turns + 5) / perConversation);

  console.log(`Context Runtime benchmarks — local wrangler dev at ${runtime.url}, Node ${process.version}`);
  console.log(`\nThe local stack's floor: GET /health, answered by the Worker alone through wrangler dev's proxy`);
  console.log(`  round trip       ${summary(await httpFloor(runtime.url, 300))}`);
  printTurnBench(
    `Turns with three providers answering at once (${conversations} conversations × ${perConversation} turns)`,
    await benchTurns({ url: runtime.url, appToken: await appToken("bench"), client, lastServerMs: timed.lastServerMs, providerDelaysMs: [0, 0, 0], conversations, turnsPerConversation: perConversation }),
  );
  printTurnBench(
    "Turns with providers taking 1, 3 and 5 ms",
    await benchTurns({ url: runtime.url, appToken: await appToken("bench"), client, lastServerMs: timed.lastServerMs, providerDelaysMs: [1, 3, 5], conversations: Math.ceil(conversations / 2), turnsPerConversation: perConversation }),
  );

  const t = await benchInjectedTokens({ url: runtime.url, appToken: await appToken("tokens"), client, turns: 30 });
  console.log(`\nContext tokens over a scripted ${t.turns}-turn session (contexts changed on ${t.changedTurns} turns)`);
  console.log(`  injected ${t.injected} tokens vs ${t.naive} re-injecting every turn = ${((100 * t.injected) / t.naive).toFixed(1)} % (target ≤ 25 %)`);
} finally {
  await runtime.stop();
}
