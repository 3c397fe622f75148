import { mintToken } from "../src/http/auth";
import { ContextClient } from "../src/sdk";
import { startLocalRuntime } from "../scripts/local-runtime";
import { timedFetch } from "./timed-fetch";

/**
 * A fresh local runtime for a bench (real wrangler dev, embedded state): a frontend client whose `lastServerMs` reads
 * the Worker's own time (`Server-Timing`), app tokens for the same tenant and user, frontend keys for another user of
 * it, and `stop`.
 */
export async function benchRuntime() {
  const secret = `bench-${crypto.randomUUID()}`;
  const runtime = await startLocalRuntime(secret);
  const identity = { tenant: "bench", sub: "bench" };
  const timed = timedFetch();
  const client = new ContextClient({ url: runtime.url, apiKey: await mintToken(secret, { kind: "frontend", ...identity }), fetch: timed.fetch });
  return {
    url: runtime.url,
    client,
    lastServerMs: timed.lastServerMs,
    appToken: (app: string) => mintToken(secret, { kind: "app", ...identity, app }),
    apiKey: (user: string) => mintToken(secret, { kind: "frontend", tenant: identity.tenant, sub: user }),
    stop: () => runtime.stop(),
  };
}
