import { describe, expect, it } from "vitest";
import { mintToken } from "../../src/http/auth";
import { LIMITS } from "../../src/protocol/limits";
import type { StoredMessage } from "../../src/protocol/frontend";
import { ErrorCode } from "../../src/protocol/jsonrpc";
import { CloseCode } from "../../src/protocol/methods";
import { BASE, freshIdentity, Frontend, worker, expectProblem } from "./support/runtime";
import { openSocket, TestApp } from "./support/test-app";

async function setup() {
  const id = freshIdentity();
  const app = await TestApp.connect(id, "notes", { editor: { current: () => ({ content: "x" }) } });
  const agent = await app.createAgent("assistant", ["notes:editor"]);
  const frontend = await Frontend.for(id);
  const conversation = await frontend.conversation();
  return { id, app, agent, frontend, conversation };
}


describe("bad input over HTTP gets a clear 4xx and stores nothing", () => {
  it("malformed JSON, wrong types, unknown fields, wrong media type", async () => {
    const { agent, frontend, conversation } = await setup();
    const path = `/v1/conversations/${conversation}/turns`;
    await expectProblem(await frontend.request("POST", path, "{not json"), 400, "invalid-request");
    const typed = await expectProblem(await frontend.request("POST", path, { agent, message: 42 }), 400, "invalid-request");
    expect((typed as unknown as { issues: { path: string }[] }).issues[0]!.path).toBe("message");
    await expectProblem(await frontend.request("POST", path, { agent, message: "hi", tenant: "other" }), 400, "invalid-request");
    await expectProblem(await frontend.request("POST", path, { agent: "no-colon", message: "hi" }), 400, "invalid-request");
    await expectProblem(await frontend.request("POST", path, JSON.stringify({ agent, message: "hi" }), { "Content-Type": "text/plain" }), 415, "unsupported-media-type");
    await expectProblem(await frontend.request("POST", `/v1/conversations/${conversation}/messages`, { messages: [{ role: "user", content: "sneaky" }] }), 400, "invalid-request");
    const { messages } = await frontend.json<{ messages: StoredMessage[] }>("GET", `/v1/conversations/${conversation}/messages`);
    expect(messages).toEqual([]);
  });

  it("bad tool results, budgets, tasks and task state", async () => {
    const { agent, frontend, conversation } = await setup();
    const path = `/v1/conversations/${conversation}/turns`;
    const bad = [
      { agent, toolResults: [] },
      { agent, toolResults: [{ tool_call_id: "", content: "x" }] },
      { agent, toolResults: [{ tool_call_id: "c1", content: 5 }] },
      { agent, message: "hi", toolResults: [{ tool_call_id: "c1", content: "x", role: "tool" }] },
      { agent, message: "hi", budget: { maxTokens: 10 } },
      { agent, message: "hi", budget: { maxTokens: "lots" } },
      { agent, message: "hi", budget: { maxTokens: 1000, extra: true } },
      { agent, message: "hi", task: "../other" },
      { agent, message: "hi", taskState: [{ pointer: "s3://elsewhere" }] },
    ];
    for (const body of bad) await expectProblem(await frontend.request("POST", path, body), 400, "invalid-request");
    // A bare continuation is well formed, but has no user message to answer yet.
    await expectProblem(await frontend.request("POST", path, { agent }), 409, "conflict");
    await expectProblem(await frontend.request("POST", path, { agent, message: "x ".repeat(300), budget: { maxTokens: 64 } }), 422, "limit-exceeded");
    await expectProblem(
      await frontend.request("POST", `/v1/conversations/${conversation}/messages`, { messages: [{ role: "tool", tool_call_id: "c1", content: "x".repeat(LIMITS.toolResultChars + 1) }] }),
      400,
      "invalid-request",
    );
    const { messages } = await frontend.json<{ messages: StoredMessage[] }>("GET", `/v1/conversations/${conversation}/messages`);
    expect(messages).toEqual([]);
  });

  it("oversized bodies and messages", async () => {
    const { agent, frontend, conversation } = await setup();
    const path = `/v1/conversations/${conversation}/turns`;
    await expectProblem(await frontend.request("POST", path, { agent, message: "x".repeat(LIMITS.httpBodyBytes + 10) }), 413, "payload-too-large");
    await expectProblem(await frontend.request("POST", path, { agent, message: "x".repeat(LIMITS.messageChars + 1) }), 400, "invalid-request");
  });

  it("unknown routes, unknown agents, unknown providers, bad query strings", async () => {
    const { agent, frontend, conversation } = await setup();
    await expectProblem(await frontend.request("GET", "/v1/nope"), 404, "not-found");
    await expectProblem(await frontend.request("POST", `/v1/conversations/${conversation}/turns`, { agent: "notes:ghost", message: "hi" }), 404, "not-found");
    await expectProblem(await frontend.request("POST", `/v1/conversations/${conversation}/attachments`, { context: "calendar:today" }), 404, "not-found");
    await expectProblem(await frontend.request("POST", `/v1/conversations/${conversation}/attachments`, { context: "notes:editor", itemId: "n1" }), 400, "invalid-request");
    await expectProblem(await frontend.request("GET", `/v1/conversations/${conversation}/events?limit=9999`), 400, "invalid-request");
    await expectProblem(await frontend.request("GET", `/v1/conversations/${conversation}/contexts/notes:editor/items`), 400, "invalid-request");
    const ok = await frontend.turn(conversation, { agent, message: "still fine" });
    expect(ok.messages).toHaveLength(2);
  });

  it("browsing an app that is offline is a 424, not a 500", async () => {
    const id = freshIdentity();
    const app = await TestApp.connect(id, "notes", { notes: { list: () => ({ items: [{ id: "n1", title: "One" }] }) } });
    const frontend = await Frontend.for(id);
    const conversation = await frontend.conversation();
    const path = `/v1/conversations/${conversation}/contexts/notes:notes/items?query=on&limit=5`;
    expect(await frontend.json("GET", path)).toEqual({ items: [{ id: "n1", title: "One" }] });
    expect(app.calls.at(-1)).toEqual({ method: "contexts/list", params: { provider: "notes", query: "on", limit: 5 } });
    app.close();
    await new Promise((r) => setTimeout(r, 50));
    await expectProblem(await frontend.request("GET", path), 424, "provider-unavailable");
  });

  it("bad credentials and another tenant's or user's conversation", async () => {
    const { id, frontend, conversation } = await setup();
    const anonymous = await worker().fetch(`${BASE}/v1/conversations`, { method: "POST" });
    await expectProblem(anonymous, 401, "unauthorized");
    const forged = await mintToken("not-the-secret", { kind: "frontend", tenant: id.tenant, sub: id.user });
    await expectProblem(await new Frontend(forged).request("GET", `/v1/conversations/${conversation}`), 401, "unauthorized");
    const appToken = await mintToken("workerd-test-secret", { kind: "app", tenant: id.tenant, sub: id.user, app: "notes" });
    await expectProblem(await new Frontend(appToken).request("GET", `/v1/conversations/${conversation}`), 401, "unauthorized");

    const otherTenant = await Frontend.for({ tenant: `${id.tenant}x`, user: id.user });
    await expectProblem(await otherTenant.request("GET", `/v1/conversations/${conversation}`), 404, "not-found");
    const otherUser = await Frontend.for({ tenant: id.tenant, user: "mallory" });
    await expectProblem(await otherUser.request("POST", `/v1/conversations/${conversation}/turns`, { agent: "notes:assistant", message: "hi" }), 404, "not-found");
    await expectProblem(await frontend.request("GET", "/v1/conversations/..%2F..%2Fetc"), 404, "not-found");
  });
});

describe("bad frames over the app socket get JSON-RPC errors and the socket stays open", () => {
  it("answers parse errors, invalid frames, unknown methods, bad params, oversize and binary frames", async () => {
    const { app } = await setup();
    expect((await app.send("{oops")).error).toMatchObject({ code: ErrorCode.ParseError });
    expect((await app.send({ hello: "world" })).error).toMatchObject({ code: ErrorCode.InvalidRequest });
    expect((await app.request("no/such", {})).error).toMatchObject({ code: ErrorCode.MethodNotFound });
    const bad = await app.request("agents/create", { agentId: "has space", name: "", systemPrompt: 1 });
    expect(bad.error).toMatchObject({ code: ErrorCode.InvalidParams });
    expect((bad.error as { data: { issues: unknown[] } }).data.issues.length).toBeGreaterThanOrEqual(3);
    expect((await app.send("x".repeat(LIMITS.frameChars + 1))).error).toMatchObject({ code: ErrorCode.TooLarge });
    const binary = new Promise<Record<string, unknown>>((resolve) => app.ws.addEventListener("message", (e) => resolve(JSON.parse(String(e.data))), { once: true }));
    app.ws.send(new Uint8Array([1, 2, 3]));
    expect((await binary).error).toMatchObject({ code: ErrorCode.InvalidRequest });
    expect((await app.send("ping")).pong).toBe(true);
    expect((await app.request("agents/create", { agentId: "ok", name: "OK", systemPrompt: "fine" })).result).toEqual({ agentId: "notes:ok" });
  });

  it("refuses methods before initialize and registration under another app's name", async () => {
    const id = freshIdentity();
    const ws = await openSocket(await mintToken("workerd-test-secret", { kind: "app", tenant: id.tenant, sub: id.user, app: "notes" }));
    const next = () => new Promise<Record<string, unknown>>((resolve) => ws.addEventListener("message", (e) => resolve(JSON.parse(String(e.data))), { once: true }));
    let answer = next();
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "agents/create", params: { agentId: "a", name: "A", systemPrompt: "" } }));
    expect((await answer).error).toMatchObject({ code: ErrorCode.NotInitialized });
    answer = next();
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: "x", app: { name: "calendar", version: "1" } } }));
    expect((await answer).error).toMatchObject({ code: ErrorCode.Forbidden });
  });

  it("refuses a connection without a valid app token with close code 4001, which browsers can see", async () => {
    const res = await worker().fetch(`${BASE}/v1/apps/connect`, { headers: { Upgrade: "websocket", Authorization: "Bearer nope" } });
    expect(res.status).toBe(101);
    const ws = res.webSocket!;
    const closed = new Promise<CloseEvent>((resolve) => ws.addEventListener("close", resolve));
    ws.accept();
    expect((await closed).code).toBe(CloseCode.Unauthorized);
    await expectProblem(await worker().fetch(`${BASE}/v1/apps/connect`), 426, "upgrade-required");
  });
});
