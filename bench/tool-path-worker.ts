/**
 * `npx tsx bench/tool-path-worker.ts`: just the tool-session figure of `npm run bench`, a 1 MB tool output through
 * the tool-result path inside the Worker (Server-Timing, against a tiny one), on a local runtime of its own.
 * ROUNDS=n runs the session n times on one runtime and prints each figure.
 */
import { mintToken } from "../src/http/auth";
import { ContextClient } from "../src/sdk";
import { startLocalRuntime } from "../scripts/local-runtime";
import { timedFetch } from "./timed-fetch";
import { benchToolSession } from "./tool-session";

const secret = `bench-${crypto.randomUUID()}`;
const runtime = await startLocalRuntime(secret);
try {
  const identity = { tenant: "bench", sub: "bench" };
  const timed = timedFetch();
  const client = new ContextClient({ url: runtime.url, apiKey: await mintToken(secret, { kind: "frontend", ...identity }), fetch: timed.fetch });
  for (let round = 0; round < Number(process.env.ROUNDS ?? 1); round++) {
    const s = await benchToolSession({ url: runtime.url, appToken: await mintToken(secret, { kind: "app", ...identity, app: "tools" }), client, lastServerMs: timed.lastServerMs });
    console.log(`a 1 MB tool output through the tool-result path inside the Worker: ${s.redactMbPerSecond.toFixed(1)} MB/s`);
  }
} finally {
  await runtime.stop();
}
