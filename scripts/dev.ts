/**
 * Starts Context Runtime locally with embedded state: `wrangler dev` with local
 * Durable Objects, KV and R2 under .wrangler/state. No account, no network.
 * Prints the URL and working credentials, and writes them to
 * .dev-credentials.json for the examples and benchmarks.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { mintToken } from "../src/http/auth";
import { localSecret } from "./local-secret";

const port = Number(process.env.PORT ?? 8787);
const url = `http://127.0.0.1:${port}`;
const tenant = "local";
const user = "dev";
const apps = ["notes", "calendar", "browser"];

const secret = localSecret();
const apiKey = await mintToken(secret, { kind: "frontend", tenant, sub: user });
const appTokens = Object.fromEntries(await Promise.all(apps.map(async (app) => [app, await mintToken(secret, { kind: "app", tenant, sub: user, app })])));
writeFileSync(".dev-credentials.json", `${JSON.stringify({ url, tenant, user, apiKey, appTokens }, null, 2)}\n`);

console.log(`
Context Runtime (local) → ${url}
  tenant/user   ${tenant}/${user}
  frontend key  ${apiKey}
${apps.map((a) => `  app token ${a.padEnd(9)} ${appTokens[a]}`).join("\n")}
  (also in .dev-credentials.json; more with: npm run token -- app --app <name>)
`);

const wrangler = spawn("wrangler", ["dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", ".wrangler/state", ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => wrangler.kill(signal));
wrangler.on("exit", (code) => process.exit(code ?? 0));
