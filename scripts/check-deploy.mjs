// `npm run check:deploy` (and `npm run deploy`, first): refuses a wrangler.toml whose KV namespaces still carry the
// placeholder ids this repository ships with. A Cloudflare KV namespace id is 32 hex digits; the placeholders
// (`context-runtime-memory`, …) work under `wrangler dev` and bundle in a dry run, but a deploy with them fails, or
// binds the wrong namespace. With `--dry-run`, it then bundles the Worker (`wrangler deploy --dry-run`).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const configArg = process.argv.indexOf("--config");
const config = configArg === -1 ? new URL("../wrangler.toml", import.meta.url) : process.argv[configArg + 1];
const toml = readFileSync(config, "utf8");
const blocks = toml.split(/^\[\[kv_namespaces\]\]\s*$/m).slice(1).map((block) => block.split(/^\[/m)[0]);
const placeholders = blocks.flatMap((block) => {
  const binding = /^binding\s*=\s*"([^"]+)"/m.exec(block)?.[1] ?? "?";
  const id = /^id\s*=\s*"([^"]*)"/m.exec(block)?.[1] ?? "";
  return /^[0-9a-f]{32}$/.test(id) ? [] : [{ binding, id }];
});
for (const { binding, id } of placeholders) {
  console.error(`KV namespace ${binding}: id "${id}" is a placeholder. Create it (npx wrangler kv namespace create ${binding}) and put the id it prints in wrangler.toml.`);
}
if (placeholders.length > 0) process.exit(1);
console.log(`wrangler.toml: ${blocks.length} KV namespace ids set`);
if (process.argv.includes("--dry-run")) {
  const run = spawnSync("npx", ["wrangler", "deploy", "--dry-run"], { stdio: "inherit" });
  process.exit(run.status ?? 1);
}
