/**
 * A page in headless Chromium (Debian's `chromium`) loads the SDK's browser bundle and, with CORS, runs a turn against
 * a local `wrangler dev`: ContextApp connects from the page over the browser's own WebSocket (the token as a
 * subprotocol) and serves a context, and ContextClient creates a conversation and takes a turn that reads it. The page
 * writes what it got into the DOM; the test reads it over the DevTools protocol. A page from an origin CORS_ORIGINS
 * does not name is refused by the browser.
 *
 * This file starts its own runtime (CORS_ORIGINS must name the page's origin, and the shared one has none).
 * Chromium missing: skipped with a message, except in CI (`CI` set), where it fails (.ci/run installs it).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startLocalRuntime } from "../../scripts/local-runtime";
import { mintToken } from "../../src/http/auth";
import { CHROMIUM, Chromium, IN_CI } from "./chromium";

if (!CHROMIUM && !IN_CI) console.warn("browser-sdk: skipped, no chromium here (apt-get install -y chromium; CI installs it and fails without it)");

describe.skipIf(!CHROMIUM && !IN_CI)("the SDK in headless Chromium", () => {
  const work = mkdtempSync(join(tmpdir(), "browser-sdk-"));
  const secret = `browser-${crypto.randomUUID()}`;
  let runtime: { url: string; stop: () => Promise<void> };
  let pages: Server;
  let pagePort = 0;
  let browser: Chromium;

  beforeAll(async () => {
    if (!CHROMIUM) throw new Error("chromium is not installed: CI must install it (apt-get install -y chromium; see .ci/run)");
    // The bundle `npm run build` ships (dist/browser/context-runtime.js), built here so no other test's build races it.
    const bundle = join(work, "context-runtime.js");
    const built = spawnSync(process.execPath, ["scripts/bundle-sdk.mjs", "browser", bundle], { encoding: "utf8" });
    if (built.status !== 0) throw new Error(`bundle failed: ${built.stderr}`);
    pagePort = await freePort();
    pages = await servePages(pagePort, readFileSync(bundle, "utf8"));
    runtime = await startLocalRuntime(secret, { vars: { CORS_ORIGINS: `http://127.0.0.1:${pagePort}` } });
    browser = await Chromium.launch(CHROMIUM, work);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    pages?.close();
    await runtime?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  async function pageUrl(host: string): Promise<string> {
    const tenant = `browser-${crypto.randomUUID().slice(0, 8)}`;
    const params = new URLSearchParams({
      runtime: runtime.url,
      apiKey: await mintToken(secret, { kind: "frontend", tenant, sub: "alice" }),
      appToken: await mintToken(secret, { kind: "app", tenant, sub: "alice", app: "page" }),
    });
    return `http://${host}:${pagePort}/index.html#${params}`;
  }

  it("runs a turn: the page's app serves a context over its WebSocket and the page's ContextClient gets the turn back", async () => {
    const result = await runPage(browser, await pageUrl("127.0.0.1"));
    expect(result.status, JSON.stringify(result)).toBe("ok");
    expect(result).toMatchObject({ agent: "page:assistant", messages: 2, listed: true });
    expect(result.reminder).toContain("[Context: Page State]");
    expect(result.reminder).toContain("Open document: report.md (from the browser)");
    expect(result.userAgent).toMatch(/HeadlessChrome|Chrome/);
    expect(result.serverTiming).toMatch(/total;dur=/);
  }, 60_000);

  it("is refused by the browser from an origin CORS_ORIGINS does not name", async () => {
    // Same page, same port, but `localhost` is another origin than `127.0.0.1`.
    const result = await runPage(browser, await pageUrl("localhost"), { stopAt: "client" });
    expect(result.status).toBe("error");
    expect(result.error).toMatch(/Failed to fetch/);
  }, 60_000);
});

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>Context Runtime in the browser</title>
<pre id="result">running</pre>
<script type="module">
  import { ContextApp, ContextClient } from "/context-runtime.js";
  const show = (value) => { document.getElementById("result").textContent = JSON.stringify(value); };
  const params = new URLSearchParams(location.hash.slice(1));
  const url = params.get("runtime");
  const stopAtClient = params.get("stopAt") === "client";
  try {
    const client = new ContextClient({ url, apiKey: params.get("apiKey") });
    if (stopAtClient) {
      await client.agents();
      show({ status: "ok" });
    } else {
      const app = new ContextApp({
        url,
        token: params.get("appToken"),
        app: { name: "page", version: "1.0.0" },
        contexts: [{ id: "state", name: "Page State", description: "What the page shows",
          getCurrent: () => ({ title: "Page State", content: "Open document: report.md (from the browser)" }) }],
      });
      await app.connect();
      await app.createAgent({ agentId: "assistant", name: "Page Assistant", systemPrompt: "You help with the page.", attachedContexts: ["page:state"] });
      const conversation = await client.createConversation({ agent: "page:assistant" });
      const timed = await fetch(url + "/v1/conversations/" + conversation.id, { headers: { Authorization: "Bearer " + params.get("apiKey") } });
      const turn = await client.turn(conversation.id, { agent: "page:assistant", message: "What am I looking at?" });
      const listed = (await fetch(url + "/v1/conversations", { headers: { Authorization: "Bearer " + params.get("apiKey") } }).then((r) => r.json()))
        .conversations.some((c) => c.id === conversation.id);
      await app.close();
      show({ status: "ok", agent: turn.agent.id, messages: turn.messages.length, reminder: turn.messages.at(-1).content,
        listed, serverTiming: timed.headers.get("Server-Timing"), userAgent: navigator.userAgent });
    }
  } catch (error) {
    show({ status: "error", error: String(error) });
  }
</script>`;

function servePages(port: number, bundle: string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://page").pathname;
    if (path === "/index.html") res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(PAGE);
    else if (path === "/context-runtime.js") res.writeHead(200, { "Content-Type": "text/javascript; charset=utf-8" }).end(bundle);
    else res.writeHead(404).end();
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

interface PageResult {
  status: "ok" | "error";
  error?: string;
  [key: string]: unknown;
}

/** Opens `url` in a new tab and waits for the page to write its result into #result. */
async function runPage(browser: Chromium, url: string, options: { stopAt?: "client" } = {}): Promise<PageResult> {
  const page = await browser.open();
  try {
    await page.send("Page.navigate", { url: url + (options.stopAt ? `&stopAt=${options.stopAt}` : "") });
    const deadline = Date.now() + 45_000;
    while (Date.now() < deadline) {
      const written = await page.eval<string>(`document.getElementById("result")?.textContent ?? ""`);
      if (written && written !== "running") return JSON.parse(written) as PageResult;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the page wrote no result in 45 s; console: ${page.console.join(" | ")}`);
  } finally {
    await page.close();
  }
}
