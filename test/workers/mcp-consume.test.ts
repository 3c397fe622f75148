/**
 * The MCP server registration API's refusals (docs/mcp.md, "Consume"): bad input is a 4xx problem+json that names the
 * field and registers nothing; a name an app has, or an app would take, is a conflict; header values never come back.
 * (Servers that answer, and servers that misbehave, are in test/e2e/mcp-consume.test.ts: they need a real network.)
 */
import { describe, expect, it } from "vitest";
import { MCP_CONSUME_LIMITS } from "../../src/protocol/mcp-servers";
import { PROTOCOL_VERSION } from "../../src/protocol/methods";
import { appToken, expectProblem, freshIdentity, Frontend, type Identity } from "./support/runtime";
import { openSocket, TestApp } from "./support/test-app";

/** An app's `initialize` with MCP servers, sent on a raw socket: the hub's answer (a result or an error). */
async function initialize(id: Identity, app: string, mcpServers: unknown[]): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
  const ws = await openSocket(await appToken(id, app));
  const answer = new Promise<string>((resolve) => ws.addEventListener("message", (event) => resolve(String(event.data)), { once: true }));
  ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: PROTOCOL_VERSION, app: { name: app, version: "1" }, mcpServers } }));
  const frame = JSON.parse(await answer) as { result?: unknown; error?: { code: number; message: string } };
  ws.close();
  return frame;
}

/** Nobody listens here: a registration is accepted and the server is offline. */
const NOWHERE = "http://127.0.0.1:9/mcp";

describe("POST /v1/mcp-servers refuses bad input with a problem naming the field", () => {
  it.each([
    ["an ftp URL", { name: "s", url: "ftp://example.com/mcp" }, "url"],
    ["a stdio command", { name: "s", url: "npx -y some-server" }, "url"],
    ["credentials in the URL", { name: "s", url: "https://me:secret@example.com/mcp" }, "url"],
    ["a fragment", { name: "s", url: "https://example.com/mcp#x" }, "url"],
    ["a name with a space", { name: "my server", url: NOWHERE }, "name"],
    ["a name with a colon", { name: "a:b", url: NOWHERE }, "name"],
    ["a header the transport sets", { name: "s", url: NOWHERE, headers: { "Mcp-Session-Id": "x" } }, "headers"],
    ["a header value that splits the request", { name: "s", url: NOWHERE, headers: { "X-Key": "a\r\nHost: evil" } }, "headers"],
    ["a header name that is not a token", { name: "s", url: NOWHERE, headers: { "X Key": "a" } }, "headers"],
    ["too many headers", { name: "s", url: NOWHERE, headers: Object.fromEntries(Array.from({ length: MCP_CONSUME_LIMITS.headersPerServer + 1 }, (_, i) => [`X-H${i}`, "v"])) }, "headers"],
    ["an unknown field", { name: "s", url: NOWHERE, command: "rm -rf /" }, ""],
    ["no url", { name: "s" }, "url"],
  ])("%s", async (_, body, field) => {
    const frontend = await Frontend.for(freshIdentity());
    const problem = await expectProblem(await frontend.request("POST", "/v1/mcp-servers", body), 400, "invalid-request");
    expect((problem as unknown as { issues: { path: string }[] }).issues.some((i) => i.path.startsWith(field))).toBe(true);
    expect(await frontend.json("GET", "/v1/mcp-servers")).toEqual({ servers: [] });
  });

  it("a body that is not JSON is a 400, one that is not sent as JSON a 415", async () => {
    const frontend = await Frontend.for(freshIdentity());
    await expectProblem(await frontend.request("POST", "/v1/mcp-servers", "{nope"), 400, "invalid-request");
    await expectProblem(await frontend.request("POST", "/v1/mcp-servers", JSON.stringify({ name: "s", url: NOWHERE }), { "Content-Type": "text/plain" }), 415, "unsupported-media-type");
  });

  it("without a frontend API key, nothing: 401", async () => {
    const frontend = new Frontend("not-a-key");
    await expectProblem(await frontend.request("GET", "/v1/mcp-servers"), 401, "unauthorized");
    await expectProblem(await frontend.request("POST", "/v1/mcp-servers", { name: "s", url: NOWHERE }), 401, "unauthorized");
  });
});

describe("registering, listing and removing", () => {
  it("an unreachable server is registered offline, with why; its header values never come back; DELETE removes it", async () => {
    const frontend = await Frontend.for(freshIdentity());
    const res = await frontend.request("POST", "/v1/mcp-servers", { name: "docs", url: NOWHERE, headers: { Authorization: "Bearer top-secret" } });
    const text = await res.text();
    expect(res.status, text).toBe(201);
    expect(text).not.toContain("top-secret");
    expect(JSON.parse(text)).toMatchObject({ name: "docs", url: NOWHERE, headerNames: ["Authorization"], declaredBy: "user", status: "offline", tools: 0, prompts: 0 });
    const listed = await frontend.request("GET", "/v1/mcp-servers");
    expect(await listed.text()).not.toContain("top-secret");
    await expectProblem(await frontend.request("POST", "/v1/mcp-servers", { name: "docs", url: NOWHERE }), 409, "conflict");
    expect(await frontend.json("DELETE", "/v1/mcp-servers/docs")).toEqual({ removed: "docs" });
    await expectProblem(await frontend.request("DELETE", "/v1/mcp-servers/docs"), 404, "not-found");
    await expectProblem(await frontend.request("DELETE", "/v1/mcp-servers/not%20a%20name"), 404, "not-found");
    expect(await frontend.json("GET", "/v1/mcp-servers")).toEqual({ servers: [] });
  });

  it("a name an app has is refused, and an app may not take a server's name or declare one the user has", async () => {
    const id = freshIdentity();
    await TestApp.connect(id, "notes", { editor: { current: () => ({ content: "x" }) } });
    const frontend = await Frontend.for(id);
    const taken = await expectProblem(await frontend.request("POST", "/v1/mcp-servers", { name: "notes", url: NOWHERE }), 409, "conflict");
    expect(taken.detail).toContain("an app named 'notes'");
    await frontend.json("POST", "/v1/mcp-servers", { name: "docs", url: NOWHERE });
    await expect(TestApp.connect(id, "docs", {})).rejects.toThrow(/taken by an MCP server/);
    expect((await initialize(id, "wiki", [{ name: "docs", url: NOWHERE }])).error).toMatchObject({ code: -32004, message: expect.stringContaining("already registered") });
    expect((await initialize(id, "wiki", [{ name: "wiki", url: NOWHERE }])).error?.message).toContain("its app's own name");
    expect((await initialize(id, "wiki", [{ name: "x", url: "file:///etc/passwd" }])).error).toMatchObject({ code: -32602 });
    // Declared by an app: listed as the app's, and the user may not remove it.
    expect((await initialize(id, "wiki", [{ name: "wiki-search", url: NOWHERE, headers: { "X-Key": "app-secret" } }])).result).toBeDefined();
    const listed = await frontend.request("GET", "/v1/mcp-servers");
    const text = await listed.text();
    expect(text).not.toContain("app-secret");
    expect(JSON.parse(text).servers).toContainEqual(expect.objectContaining({ name: "wiki-search", declaredBy: "wiki", headerNames: ["X-Key"] }));
    await expectProblem(await frontend.request("DELETE", "/v1/mcp-servers/wiki-search"), 409, "conflict");
  });

  it(`a user registers at most ${MCP_CONSUME_LIMITS.serversPerUser}`, async () => {
    const frontend = await Frontend.for(freshIdentity());
    for (let i = 0; i < MCP_CONSUME_LIMITS.serversPerUser; i++) await frontend.json("POST", "/v1/mcp-servers", { name: `s${i}`, url: NOWHERE });
    await expectProblem(await frontend.request("POST", "/v1/mcp-servers", { name: "one-more", url: NOWHERE }), 422, "limit-exceeded");
  });
});
