/** `npm run check:deploy` refuses the placeholder KV ids wrangler.toml ships with, naming each binding, and passes real ones. */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const check = (config: string) => spawnSync(process.execPath, ["scripts/check-deploy.mjs", "--config", config], { encoding: "utf8" });

describe("check:deploy", () => {
  it("refuses the repository's placeholder KV ids, naming each binding and the command that creates it", () => {
    const run = check("wrangler.toml");
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("KV namespace MEMORY: id \"context-runtime-memory\" is a placeholder");
    expect(run.stderr).toContain("npx wrangler kv namespace create OAUTH_KV");
  });

  it("passes once every KV namespace has a real id", () => {
    let n = 0;
    const real = readFileSync("wrangler.toml", "utf8").replace(/^id = "[^"]*"/gm, () => `id = "${String(++n).padStart(32, "a")}"`);
    const config = join(mkdtempSync(join(tmpdir(), "check-deploy-")), "wrangler.toml");
    writeFileSync(config, real);
    const run = check(config);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`${n} KV namespace ids set`);
  });
});
