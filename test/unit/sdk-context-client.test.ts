import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ContextClient, ContextRuntimeError } from "../../src/sdk/context-client";
import { startRecordingServer, type RecordingServer, type SeenRequest } from "./support/recording-server";

/** A stand-in runtime. */
let runtime: RecordingServer;

beforeAll(async () => {
  runtime = await startRecordingServer();
});

afterAll(() => runtime.close());

beforeEach(() => runtime.reset({ status: 200, type: "application/json", body: "{}" }));

function client() {
  return new ContextClient({ url: `${runtime.origin}/`, apiKey: "fk_test" }); // the trailing slash must not double
}

function only(): SeenRequest {
  expect(runtime.seen).toHaveLength(1);
  return runtime.seen[0]!;
}

describe("ContextClient requests", () => {
  it("sends the bearer key and a JSON body, and returns the parsed answer", async () => {
    runtime.reply = { status: 201, type: "application/json", body: '{"id":"conv-0001","createdAt":"2026-11-23T09:00:00Z","agent":"notes:assistant"}' };
    const created = await client().createConversation({ agent: "notes:assistant" });

    expect(created).toEqual({ id: "conv-0001", createdAt: "2026-11-23T09:00:00Z", agent: "notes:assistant" });
    const request = only();
    expect(request.method).toBe("POST");
    expect(request.url).toBe("/v1/conversations");
    expect(request.headers.authorization).toBe("Bearer fk_test");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(request.body)).toEqual({ agent: "notes:assistant" });
  });

  it("sends no body or content-type on GET and DELETE without one", async () => {
    await client().conversation("conv-0001");
    runtime.reply = { status: 204 };
    await expect(client().endConversation("conv-0001")).resolves.toBeUndefined();
    expect(runtime.seen.map((s) => [s.method, s.url, s.body, s.headers["content-type"]])).toEqual([
      ["GET", "/v1/conversations/conv-0001", "", undefined],
      ["DELETE", "/v1/conversations/conv-0001", "", undefined],
    ]);
  });

  it.each([
    ["turn", (c: ContextClient) => c.turn("conv-0001", { turnId: "t1", agent: "notes:assistant", message: "hi" }), "POST", "/v1/conversations/conv-0001/turns", { turnId: "t1", agent: "notes:assistant", message: "hi" }],
    ["appendMessages", (c: ContextClient) => c.appendMessages("conv-0001", [{ role: "assistant", content: "hello" }]), "POST", "/v1/conversations/conv-0001/messages", { messages: [{ role: "assistant", content: "hello" }] }],
    ["appendMessages with usage", (c: ContextClient) => c.appendMessages("conv-0001", [{ role: "assistant", content: "hi" }], { promptTokens: 812, completionTokens: 40, cachedTokens: 512 }), "POST", "/v1/conversations/conv-0001/messages", { messages: [{ role: "assistant", content: "hi" }], usage: { promptTokens: 812, completionTokens: 40, cachedTokens: 512 } }],
    ["completeDelegation", (c: ContextClient) => c.completeDelegation("child-0001", { role: "assistant", content: "Bluefin ships on 3 March." }), "POST", "/v1/conversations/child-0001/delegation/complete", { reply: { role: "assistant", content: "Bluefin ships on 3 March." } }],
    ["delegations", (c: ContextClient) => c.delegations("conv-0001"), "GET", "/v1/conversations/conv-0001/delegations", undefined],
    ["conversations", (c: ContextClient) => c.conversations({ cursor: "c2", limit: 10 }), "GET", "/v1/conversations?cursor=c2&limit=10", undefined],
    ["pastTurn", (c: ContextClient) => c.pastTurn("conv-0001", "turn:1"), "GET", "/v1/conversations/conv-0001/turns/turn%3A1", undefined],
    ["runTools", (c: ContextClient) => c.runTools("conv-0001", { toolCallIds: ["call_1"] }), "POST", "/v1/conversations/conv-0001/tools/run", { toolCallIds: ["call_1"] }],
    ["messages", (c: ContextClient) => c.messages("conv-0001"), "GET", "/v1/conversations/conv-0001/messages", undefined],
    ["messages, a page", (c: ContextClient) => c.messages("conv-0001", { after: 40, limit: 20 }), "GET", "/v1/conversations/conv-0001/messages?after=40&limit=20", undefined],
    ["approvals", (c: ContextClient) => c.approvals("conv-0001"), "GET", "/v1/conversations/conv-0001/approvals", undefined],
    ["requestApproval", (c: ContextClient) => c.requestApproval("conv-0001", "call_1"), "POST", "/v1/conversations/conv-0001/approvals", { toolCallId: "call_1" }],
    ["decideApproval", (c: ContextClient) => c.decideApproval("conv-0001", "call/1", { approved: false, reason: "no" }), "POST", "/v1/conversations/conv-0001/approvals/call%2F1", { approved: false, reason: "no" }],
    ["attach", (c: ContextClient) => c.attach("conv-0001", { context: "notes:notes", itemId: "n1" }), "POST", "/v1/conversations/conv-0001/attachments", { context: "notes:notes", itemId: "n1" }],
    ["detach", (c: ContextClient) => c.detach("conv-0001", { context: "notes:notes" }), "DELETE", "/v1/conversations/conv-0001/attachments", { context: "notes:notes" }],
    ["attachments", (c: ContextClient) => c.attachments("conv-0001"), "GET", "/v1/conversations/conv-0001/attachments", undefined],
    ["resources", (c: ContextClient) => c.resources("conv-0001"), "GET", "/v1/conversations/conv-0001/resources", undefined],
    ["removeResource", (c: ContextClient) => c.removeResource("conv-0001", "notes:sel/1"), "DELETE", "/v1/conversations/conv-0001/resources/notes%3Asel%2F1", undefined],
    ["browse", (c: ContextClient) => c.browse("conv-0001", "notes:notes", { query: "a b&c", cursor: "20", limit: 5 }), "GET", "/v1/conversations/conv-0001/contexts/notes%3Anotes/items?query=a+b%26c&cursor=20&limit=5", undefined],
    ["browse without a query", (c: ContextClient) => c.browse("conv-0001", "notes:notes"), "GET", "/v1/conversations/conv-0001/contexts/notes%3Anotes/items", undefined],
    ["events", (c: ContextClient) => c.events("conv-0001", { after: 7, limit: 50 }), "GET", "/v1/conversations/conv-0001/events?after=7&limit=50", undefined],
    ["agents", (c: ContextClient) => c.agents(), "GET", "/v1/agents", undefined],
    ["providers", (c: ContextClient) => c.providers(), "GET", "/v1/contexts", undefined],
  ] as const)("%s → %s %s", async (_name, call, method, url, body) => {
    await call(client());
    const request = only();
    expect([request.method, request.url]).toEqual([method, url]);
    expect(request.headers.authorization).toBe("Bearer fk_test");
    expect(request.body ? JSON.parse(request.body) : undefined).toEqual(body);
    expect(request.headers["content-type"]).toBe(body === undefined ? undefined : "application/json");
  });

  it("uses the given fetch", async () => {
    const calls: string[] = [];
    const fetch: typeof globalThis.fetch = async (input, init) => {
      calls.push(`${init?.method} ${String(input)}`);
      return new Response('{"agents":[]}', { status: 200, headers: { "content-type": "application/json" } });
    };
    await expect(new ContextClient({ url: "https://runtime.example", apiKey: "k", fetch }).agents()).resolves.toEqual({ agents: [] });
    expect(calls).toEqual(["GET https://runtime.example/v1/agents"]);
  });
});

describe("ContextClient paging", () => {
  it("allMessages follows nextAfter until hasMore is false, each message once, in order", async () => {
    const stored = Array.from({ length: 7 }, (_, i) => ({ seq: i + 1, turnId: null, createdAt: "2026-11-23T09:00:00Z", message: { role: "assistant", content: `m${i + 1}` } }));
    const asked: string[] = [];
    // Pages of three, as a runtime would cut them.
    const fetch: typeof globalThis.fetch = async (input) => {
      const url = new URL(String(input));
      asked.push(url.search);
      const after = Number(url.searchParams.get("after") ?? 0);
      const messages = stored.filter((m) => m.seq > after).slice(0, 3);
      const page = { messages, nextAfter: messages.at(-1)?.seq ?? after, hasMore: messages.at(-1)!.seq < stored.length };
      return new Response(JSON.stringify(page), { status: 200, headers: { "content-type": "application/json" } });
    };
    const all = await new ContextClient({ url: "https://runtime.example", apiKey: "k", fetch }).allMessages("conv-0001");
    expect(all).toEqual(stored);
    expect(asked).toEqual(["?after=0", "?after=3", "?after=6"]);
  });
});

describe("ContextClient errors", () => {
  it("throws ContextRuntimeError with the status and the problem document", async () => {
    const problem = {
      type: "invalid-request",
      title: "The request is not valid",
      status: 400,
      detail: "message: too short",
      issues: [{ path: "message", message: "too short" }],
    };
    runtime.reply = { status: 400, type: "application/problem+json", body: JSON.stringify(problem) };
    const error = await client()
      .turn("conv-0001", { agent: "notes:assistant", message: "" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextRuntimeError);
    expect(error).toMatchObject({ status: 400, problem, message: "The request is not valid: message: too short" });
  });

  it("describes an answer that is not a problem document", async () => {
    runtime.reply = { status: 502, type: "text/html", body: "<h1>Bad gateway</h1>" };
    const error = await client()
      .agents()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextRuntimeError);
    expect(error).toMatchObject({ status: 502, problem: { type: "about:blank", title: "Bad Gateway", status: 502, detail: "<h1>Bad gateway</h1>" } });
  });
});
