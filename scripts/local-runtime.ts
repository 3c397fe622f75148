/**
 * Starts a real `wrangler dev` with local Durable Objects, KV and R2 in a
 * temporary directory, on a free port: for the end-to-end tests and benchmarks.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** `options.vars`: more `--var NAME:value` for this runtime (e.g. the model gateway's UPSTREAM_URL). */
export async function startLocalRuntime(secret: string, options: { vars?: Record<string, string> } = {}): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const state = mkdtempSync(join(tmpdir(), "context-runtime-"));
  // node_modules/.bin first: its Node 22 runs wrangler even where the system Node is 20.
  const path = `${join(process.cwd(), "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}`;
  const child = spawn(
    "wrangler",
    ["dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", state, "--var", `AUTH_SECRET:${secret}`, ...Object.entries(options.vars ?? {}).flatMap(([name, value]) => ["--var", `${name}:${value}`]), "--show-interactive-dev-session=false"],
    { stdio: ["ignore", "pipe", "pipe"], detached: true, env: { ...process.env, PATH: path, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" } },
  );
  let output = "";
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, child, () => output);
  return {
    url,
    stop: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(-child.pid!, "SIGTERM"); // the whole group: wrangler and its workerd
      await exited;
      rmSync(state, { recursive: true, force: true });
    },
  };
}

async function waitForHealth(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early:\n${output()}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  process.kill(-child.pid!, "SIGKILL");
  throw new Error(`wrangler dev did not become healthy in 60 s:\n${output()}`);
}

/** A port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/** Where `npm run fake-model` listens and `USE_FAKE_MODEL=1 npm run dev` points the gateway (FAKE_MODEL_PORT, default 8788). */
export function fakeModelPort(): number {
  return Number(process.env.FAKE_MODEL_PORT ?? 8788);
}
