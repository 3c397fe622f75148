/**
 * Starts Context Runtime locally with embedded state: `wrangler dev` with local
 * Durable Objects, KV and R2 under .wrangler/state (DEV_STATE moves it). No account, no network.
 * Prints the URL and working credentials, and writes them to
 * .dev-credentials.json for the examples and benchmarks.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mintToken } from "../src/http/auth";
import { localSecret } from "./local-secret";
import { fakeModelPort } from "./local-runtime";

const port = Number(process.env.PORT ?? 8787);
const url = `http://127.0.0.1:${port}`;
/** Where the local Durable Objects, KV and R2 live; DEV_STATE gives a second runtime in this checkout its own. */
const state = process.env.DEV_STATE ?? ".wrangler/state";

// Two runtimes on one state directory both answer some requests with 500 (SQLite's "database is locked"): refuse.
const lock = `${state}/dev.lock`;
const holder = readLock(lock);
if (holder && isAlive(holder.pid)) {
  console.error(`Another \`npm run dev\` (pid ${holder.pid}, ${holder.url}) is using ${state}.
Stop it, or give this one its own state: DEV_STATE=.wrangler/state-2 PORT=${port === 8787 ? 8789 : port} npm run dev`);
  process.exit(1);
}
mkdirSync(state, { recursive: true });
writeFileSync(lock, JSON.stringify({ pid: process.pid, url }));
process.on("exit", () => rmSync(lock, { force: true }));
const tenant = "local";
const user = "dev";
const apps = ["notes", "calendar", "browser"];

const secret = localSecret();
const apiKey = await mintToken(secret, { kind: "frontend", tenant, sub: user });
const appTokens = Object.fromEntries(await Promise.all(apps.map(async (app) => [app, await mintToken(secret, { kind: "app", tenant, sub: user, app })])));
// The inspector's link carries a key of its own that expires: it ends up in browser history and screenshots.
const inspectorKey = await mintToken(secret, { kind: "frontend", tenant, sub: user }, 3_600);
writeFileSync(".dev-credentials.json", `${JSON.stringify({ url, tenant, user, apiKey, appTokens }, null, 2)}\n`);

console.log(`
Context Runtime (local) → ${url}
  tenant/user   ${tenant}/${user}
  frontend key  ${apiKey}
${apps.map((a) => `  app token ${a.padEnd(9)} ${appTokens[a]}`).join("\n")}
  (also in .dev-credentials.json; more with: npm run token -- app --app <name>)
  inspector     ${url}/inspect#key=${inspectorKey}
                (this key lasts 1 hour; a new one: npm run token -- frontend --ttl 3600)
`);

// USE_FAKE_MODEL=1: the gateway's upstream is `npm run fake-model` (examples/fake-model.ts), no network, no key.
const fakeModel = process.env.USE_FAKE_MODEL === "1" ? ["--var", `UPSTREAM_URL:http://127.0.0.1:${fakeModelPort()}/v1`, "--var", "UPSTREAM_MODEL:fake-model", "--var", "UPSTREAM_KEY:sk-fake"] : [];
if (fakeModel.length) console.log(`  gateway upstream  the fake model at http://127.0.0.1:${fakeModelPort()}/v1 (start it: npm run fake-model)\n`);

const wrangler = spawn("wrangler", ["dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", state, ...fakeModel, ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => wrangler.kill(signal));
wrangler.on("exit", (code) => process.exit(code ?? 0));

function readLock(path: string): { pid: number; url: string } | null {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as { pid?: unknown; url?: unknown };
    return typeof parsed.pid === "number" && typeof parsed.url === "string" ? { pid: parsed.pid, url: parsed.url } : null;
  } catch {
    return null;
  }
}

/** Whether a process still runs (a lock left by one that was killed does not count). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
