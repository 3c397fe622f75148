/**
 * `npx tsx bench/turn-latency.ts`: only the turn figures of `npm run bench` (three providers answering at once,
 * TURNS turns, 500 by default), on a fresh local runtime. Small enough to copy into a worktree of another commit
 * and run in turn with this one, so a change's cost to a turn is measured in pairs:
 *   git worktree add /tmp/base <commit> && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   cp bench/turn-latency.ts /tmp/base/bench/ && (cd /tmp/base && npx tsx bench/turn-latency.ts)
 */
import { mintToken } from "../src/http/auth";
import { ContextClient } from "../src/sdk";
import { startLocalRuntime } from "../scripts/local-runtime";
import { timedFetch } from "./timed-fetch";
import { benchTurns, printTurnBench } from "./turns";

const secret = `bench-${crypto.randomUUID()}`;
const runtime = await startLocalRuntime(secret);
try {
  const identity = { tenant: "bench", sub: "bench" };
  const timed = timedFetch();
  const client = new ContextClient({ url: runtime.url, apiKey: await mintToken(secret, { kind: "frontend", ...identity }), fetch: timed.fetch });
  const turns = Number(process.env.TURNS ?? 500);
  const perConversation = 25;
  const conversations = Math.ceil(turns / perConversation);
  printTurnBench(
    `Turns with three providers answering at once (${conversations} conversations × ${perConversation} turns)`,
    await benchTurns({ url: runtime.url, appToken: await mintToken(secret, { kind: "app", ...identity, app: "bench" }), client, lastServerMs: timed.lastServerMs, providerDelaysMs: [0, 0, 0], conversations, turnsPerConversation: perConversation }),
  );
} finally {
  await runtime.stop();
}
