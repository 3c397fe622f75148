/**
 * The SDK as a package: `npm pack` (which builds it: prepack → npm run build) makes a tarball that installs in an empty
 * project and imports by name in Node, with its types, and whose browser bundle never pulls `ws`.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(__dirname, "../..");
const work = mkdtempSync(join(tmpdir(), "sdk-package-"));
const consumer = join(work, "consumer");
let tarball = "";

const run = (command: string, args: string[], cwd: string) =>
  execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_update_notifier: "false" } });

beforeAll(() => {
  run("npm", ["pack", "--pack-destination", work, "--silent"], ROOT);
  tarball = readdirSync(work).find((f) => f.endsWith(".tgz"))!;
  mkdirSync(consumer);
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error", join(work, tarball)], consumer);
}, 240_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the SDK package", () => {
  it("packs the built files only: ESM, the browser bundles, the declarations", () => {
    const files = run("tar", ["-tzf", join(work, tarball)], work).split("\n").filter(Boolean).map((f) => f.replace(/^package\//, ""));
    expect(files).toEqual(expect.arrayContaining(["package.json", "dist/index.js", "dist/client.js", "dist/browser/context-runtime.js", "dist/browser/context-client.js", "dist/types/sdk/index.d.ts"]));
    expect(files.filter((f) => f.startsWith("src/") || f.startsWith("test/") || f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
  });

  it("imports by name in Node (`.` and `./sdk`), and ContextClient sends what the API expects", () => {
    const script = `
      import { ContextApp, ContextClient, ContextRuntimeError } from "context-runtime";
      import * as sdk from "context-runtime/sdk";
      import { ContextClient as Client } from "context-runtime/client";
      const calls = [];
      const fetch = async (url, init) => {
        calls.push({ url, method: init.method, auth: init.headers.Authorization, body: init.body });
        return calls.length === 1
          ? new Response(JSON.stringify({ id: "c1", createdAt: "2026-01-01T00:00:00.000Z", agent: "notes:assistant" }), { status: 201 })
          : new Response(JSON.stringify({ type: "urn:context-runtime:problem:not-found", title: "Not found", status: 404, detail: "no such conversation" }), { status: 404 });
      };
      const client = new ContextClient({ url: "http://runtime.test/", apiKey: "key", fetch });
      const created = await client.createConversation({ agent: "notes:assistant" });
      const error = await client.conversation("nope").catch((e) => e);
      console.log(JSON.stringify({ created, calls, error: error instanceof ContextRuntimeError ? error.status : String(error), same: sdk.ContextClient === ContextClient && Client === ContextClient, app: typeof ContextApp }));
    `;
    writeFileSync(join(consumer, "run.mjs"), script);
    const out = JSON.parse(run("node", ["run.mjs"], consumer)) as Record<string, unknown>;
    expect(out).toEqual({
      created: { id: "c1", createdAt: "2026-01-01T00:00:00.000Z", agent: "notes:assistant" },
      calls: [
        { url: "http://runtime.test/v1/conversations", method: "POST", auth: "Bearer key", body: '{"agent":"notes:assistant"}' },
        { url: "http://runtime.test/v1/conversations/nope", method: "GET", auth: "Bearer key" },
      ],
      error: 404,
      same: true,
      app: "function",
    });
  });

  it("has types a TypeScript project with node16 resolution reads (strict), and they catch misuse", () => {
    writeFileSync(
      join(consumer, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { target: "es2022", module: "nodenext", moduleResolution: "nodenext", strict: true, noEmit: true, lib: ["es2023", "dom"], types: [] }, include: ["*.ts"] }),
    );
    writeFileSync(
      join(consumer, "use.ts"),
      `import { ContextClient, ContextApp, type TurnResult, type ConversationInfo } from "context-runtime";
       import type { ContextClientOptions } from "context-runtime/sdk";
       const options: ContextClientOptions = { url: "http://127.0.0.1:8787", apiKey: "k" };
       const client = new ContextClient(options);
       export async function turn(id: string): Promise<string> {
         const result: TurnResult = await client.turn(id, { agent: "notes:assistant", message: "hi" });
         const info: ConversationInfo = await client.conversation(id);
         return result.turnId + info.id + result.messages.length;
       }
       export const app = new ContextApp({ url: options.url, token: "t", app: { name: "notes", version: "1.0.0" } });
      `,
    );
    const tsc = join(ROOT, "node_modules/.bin/tsc");
    expect(run(tsc, ["-p", "."], consumer)).toBe("");
    writeFileSync(join(consumer, "misuse.ts"), `import { ContextClient } from "context-runtime";\nexport const p = new ContextClient({ url: "x", apiKey: "k" }).turn("c", { message: "no agent" });\n`);
    let failure = "";
    try {
      run(tsc, ["-p", "."], consumer);
    } catch (error) {
      failure = String((error as { stdout?: string }).stdout);
    }
    expect(failure).toMatch(/misuse\.ts.*agent/s);
    rmSync(join(consumer, "misuse.ts"));
  });

  it("lets a bundler that sees only ContextClient imported drop ContextApp and zod", async () => {
    const result = await build({
      stdin: { contents: `export { ContextClient } from "context-runtime";`, resolveDir: consumer, loader: "js" },
      bundle: true,
      minify: true,
      format: "esm",
      platform: "browser",
      write: false,
      metafile: true,
    });
    // What ends up in the output (the metafile's inputs list also holds what was read and then dropped).
    const kept = Object.values(result.metafile.outputs).flatMap((o) => Object.entries(o.inputs).filter(([, i]) => i.bytesInOutput > 0).map(([path]) => path));
    expect(kept.filter((path) => path.includes("node_modules/zod/"))).toEqual([]);
    expect(kept.some((path) => path.includes("context-runtime/dist/"))).toBe(true);
    expect(result.outputFiles[0]!.contents.length).toBeLessThan(8 * 1024);
  });

  it("keeps ws out of the browser: the bundles never import it statically, and the package maps it away for bundlers", () => {
    const installed = join(consumer, "node_modules/context-runtime");
    const pkg = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { browser: Record<string, unknown>; exports: Record<string, unknown>; peerDependenciesMeta: Record<string, { optional: boolean }> };
    expect(pkg.browser).toEqual({ ws: false });
    expect(pkg.peerDependenciesMeta.ws!.optional).toBe(true);
    const browser = readFileSync(join(installed, "dist/browser/context-runtime.js"), "utf8");
    expect(browser).not.toMatch(/^import\b|\bfrom\s*["']ws["']/m);
    expect(browser.match(/import\(["']ws["']\)/g)).toHaveLength(1); // only where there is no global WebSocket
    expect(readFileSync(join(installed, "dist/browser/context-client.js"), "utf8")).not.toMatch(/["']ws["']|zod/);
  });
});
