/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, its `server` scenarios) against
 * `/mcp/{app}/{agent}` on the real `wrangler dev`. The suite sends no Authorization header, so it talks to a local
 * proxy that adds the user's frontend API key and forwards everything else as it is (test/e2e/mcp-proxy.ts). The
 * URL names `localhost`, as dns-rebinding-protection requires; the agent's view comes from a `ContextApp` with two
 * providers, a tool and a skill, and an agent that binds the tool, attaches a context and browses the rest.
 *
 * Run (each applicable scenario must exit 0 and write no FAILURE in its checks.json):
 *   server-initialize            the two-phase handshake
 *   ping                         `ping` answered with {}
 *   tools-list                   every tool has a name, a description and an input schema
 *   resources-list               every resource has a uri and a name
 *   prompts-list                 every prompt has a name and a description
 *   server-sse-multiple-streams  three concurrent POSTs of one session are all accepted
 *   dns-rebinding-protection     Host and Origin `evil.example.com` refused with a 4xx, `localhost:<port>` accepted
 *
 * Not applicable, each tried against this server (conformance 0.1.16):
 *   tools-call-* (simple-text, image, audio, embedded-resource, mixed-content, with-logging, error, with-progress,
 *   sampling, elicitation), json-schema-2020-12, elicitation-sep1034-defaults, elicitation-sep1330-enums: they call
 *   the reference server's own tools (`test_simple_text`, `json_schema_2020_12_tool`, …); this server's tools are
 *   the user's apps', so the answer is "no tool named … in this agent's view" (-32602).
 *   resources-read-text, resources-read-binary, resources-templates-read, resources-subscribe,
 *   resources-unsubscribe: they read or subscribe to fixed URIs (`test://static-text`, `test://template/123/data`,
 *   `test://watched-resource`); this server issues only `ctx://app/provider[/id]` URIs for contexts the agent sees,
 *   and answers any other with resource-not-found (-32002). Reading, templates, subscribe and unsubscribe on real
 *   URIs are covered by the official SDK Client in test/e2e/mcp-serve.test.ts.
 *   prompts-get-simple, prompts-get-with-args, prompts-get-embedded-resource, prompts-get-with-image: fixed prompt
 *   names (`test_simple_prompt`, …); this server's prompts are the agent's skills (covered in mcp-serve.test.ts).
 *   logging-set-level, completion-complete: the server does not declare the `logging` or `completions` capability,
 *   so `logging/setLevel` and `completion/complete` are answered with method-not-found (-32601), as the spec allows.
 *   server-sse-polling: it calls a `test_reconnection` tool and checks SSE priming events; this server answers every
 *   POST with JSON (its sessions live in SQLite, not in a stream), so all its checks are INFO and a pass says nothing.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBearerProxy, type BearerProxy } from "./mcp-proxy";
import { ContextApp } from "../../src/sdk";
import { apiKey, appToken, freshIdentity, runtimeUrl } from "./support";

const CONFORMANCE = join(process.cwd(), "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
  details?: Record<string, unknown>;
}

let app: ContextApp;
let proxy: BearerProxy;
let serverUrl: string;
let output: string;

beforeAll(async () => {
  const id = freshIdentity();
  // Made here rather than with startApp, which closes its apps after every test: this one serves the whole file.
  app = new ContextApp({
    url: runtimeUrl(),
    token: await appToken(id, "notes"),
    app: { name: "notes", version: "1.0.0" },
    contexts: [
      { id: "editor", name: "Editor", description: "The note being edited", getCurrent: () => ({ content: "Groceries: eggs, milk", title: "Editor" }) },
      {
        id: "library",
        name: "Library",
        description: "Every note",
        getList: () => ({ items: [{ id: "n1", title: "Trip" }] }),
        getById: (itemId) => (itemId === "n1" ? { content: "Trip: Lisbon in May" } : null),
      },
    ],
    tools: [
      {
        name: "add_note",
        description: "Add a note",
        inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
        handler: (args) => `added ${String(args.title)}`,
      },
    ],
    skills: [{ name: "style", description: "How notes are written", manual: "# Style\n\nShort lines." }],
  });
  await app.connect();
  await app.createAgent({ agentId: "assistant", name: "Assistant", systemPrompt: "You help with notes.", tools: ["add_note"], skills: ["notes:*"], attachedContexts: ["notes:editor"], browseContexts: true });
  proxy = await startBearerProxy(runtimeUrl(), await apiKey(id));
  serverUrl = `http://localhost:${proxy.port}/mcp/notes/assistant`;
  output = mkdtempSync(join(tmpdir(), "mcp-conformance-"));
});

afterAll(async () => {
  await proxy?.close();
  await app?.close();
  if (output) rmSync(output, { recursive: true, force: true });
});

/** Runs one scenario in the suite's own CLI: its exit code and the checks it wrote. */
async function conformance(scenario: string): Promise<{ code: number | null; log: string; checks: Check[] }> {
  const dir = join(output, scenario);
  const child = spawn(process.execPath, [CONFORMANCE, "server", "--url", serverUrl, "--scenario", scenario, "-o", dir], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  const [result] = readdirSync(dir);
  const checks = result === undefined ? [] : (JSON.parse(readFileSync(join(dir, result, "checks.json"), "utf8")) as Check[]);
  return { code, log, checks };
}

/** The scenario passed: exit 0, at least one SUCCESS, no FAILURE (the failures' messages in the assertion's diff). */
function expectPassed(run: { code: number | null; log: string; checks: Check[] }): void {
  expect(run.checks.filter((c) => c.status === "FAILURE").map((c) => `${c.id}: ${c.errorMessage}`)).toEqual([]);
  expect(run.checks.some((c) => c.status === "SUCCESS")).toBe(true);
  expect(run.code, run.log).toBe(0);
}

describe("MCP conformance (official suite, server scenarios)", () => {
  it("server-initialize", async () => {
    expectPassed(await conformance("server-initialize"));
  });

  it("ping", async () => {
    expectPassed(await conformance("ping"));
  });

  it("tools-list: the agent's bound tool and the runtime's own, each well formed", async () => {
    const run = await conformance("tools-list");
    expectPassed(run);
    expect(run.checks[0]!.details!.tools).toEqual(expect.arrayContaining(["notes__add_note", "read_context"]));
  });

  it("resources-list: the attached context and the browsable item", async () => {
    const run = await conformance("resources-list");
    expectPassed(run);
    expect(run.checks[0]!.details!.resources).toEqual(["ctx://notes/editor", "ctx://notes/library/n1"]);
  });

  it("prompts-list: the agent's skill", async () => {
    const run = await conformance("prompts-list");
    expectPassed(run);
    expect(run.checks[0]!.details!.prompts).toEqual(["notes:style"]);
  });

  it("server-sse-multiple-streams: concurrent POSTs of one session", async () => {
    expectPassed(await conformance("server-sse-multiple-streams"));
  });

  it("dns-rebinding-protection: a rebound Host and Origin refused, localhost accepted", async () => {
    const run = await conformance("dns-rebinding-protection");
    expectPassed(run);
    expect(run.checks.map((c) => [c.id, c.details?.statusCode])).toEqual([
      ["localhost-host-rebinding-rejected", 403],
      ["localhost-host-valid-accepted", 200],
    ]);
  });
});
