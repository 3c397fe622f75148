import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { ErrorCode } from "../../src/protocol/jsonrpc";
import { PROTOCOL_VERSION } from "../../src/protocol/methods";
import { LIMITS } from "../../src/protocol/limits";
import { ContextApp, ContextAppError, type ContextAppEvents, type ContextAppOptions } from "../../src/sdk";
import { findWebSocket, type WebSocketCtor } from "../../src/sdk/websocket";

const TOKEN = "app-token-1";
/** Node ≥ 22's (undici) or a browser's; captured before the tests hide it to behave as Node 20. */
const platformWebSocket: WebSocketCtor | undefined = globalThis.WebSocket;

interface Frame {
  jsonrpc: "2.0";
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** One app socket as the stand-in runtime sees it. */
interface Peer {
  socket: WebSocket;
  protocols: string[];
  frames: Frame[];
  texts: string[];
  connectedAt: number;
}

/** A stand-in runtime: the subprotocol handshake, the app methods, and `ping` → `pong`. */
class FakeRuntime {
  readonly peers: Peer[] = [];
  /** What the runtime answers to an app's method; `null` leaves it unanswered. */
  answer: (method: string, params: Record<string, unknown>) => { result: unknown } | { error: Frame["error"] } | null = defaultAnswer;
  answerPings = true;
  private readonly server: WebSocketServer;
  private readonly waiting = new Map<string | number, (frame: Frame) => void>();
  private nextCall = 1;

  constructor(port = 0) {
    this.server = new WebSocketServer({
      port,
      handleProtocols: (offered) => (offered.has("context-runtime.v1") ? "context-runtime.v1" : false),
    });
    this.server.on("connection", (socket, request) => this.accept(socket, request));
  }

  async url(): Promise<string> {
    if (!this.server.address()) await new Promise((resolve) => this.server.once("listening", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get last(): Peer {
    const peer = this.peers.at(-1);
    if (!peer) throw new Error("no app has connected");
    return peer;
  }

  /** A runtime → app request on the latest socket; resolves with the app's answer frame. */
  call(method: string, params: unknown, id: string | number = `call-${this.nextCall++}`): Promise<Frame> {
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.last.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  methods(peer: Peer): string[] {
    return peer.frames.flatMap((f) => (f.method ? [f.method] : []));
  }

  async close(): Promise<void> {
    for (const client of this.server.clients) client.terminate();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(socket: WebSocket, request: IncomingMessage): void {
    const protocols = String(request.headers["sec-websocket-protocol"] ?? "").split(/\s*,\s*/);
    const peer: Peer = { socket, protocols, frames: [], texts: [], connectedAt: Date.now() };
    this.peers.push(peer);
    if (!protocols.includes(`bearer.${TOKEN}`)) return socket.close(4001, "invalid app token");
    socket.on("message", (data) => {
      const text = data.toString();
      peer.texts.push(text);
      if (text === "ping") {
        if (this.answerPings) socket.send("pong");
        return;
      }
      const frame = JSON.parse(text) as Frame;
      peer.frames.push(frame);
      if (frame.method === undefined) return this.waiting.get(frame.id as string | number)?.(frame);
      if (frame.id === undefined) return;
      const outcome = this.answer(frame.method, frame.params ?? {});
      if (outcome) socket.send(JSON.stringify({ jsonrpc: "2.0", id: frame.id, ...outcome }));
    });
  }
}

function defaultAnswer(method: string, params: Record<string, unknown>) {
  switch (method) {
    case "initialize":
      return { result: { protocolVersion: PROTOCOL_VERSION, sessionId: "session-1" } };
    case "agents/create":
      return { result: { agentId: `notes:${String(params.agentId)}` } };
    case "resources/push":
      return { result: { fullId: `notes:${String(params.id ?? "generated")}`, conversationId: params.conversationId ?? "conv-0001" } };
    case "resources/remove":
    case "contexts/changed":
      return { result: {} };
    default:
      return { error: { code: ErrorCode.MethodNotFound, message: `unknown method '${method}'` } };
  }
}

async function until(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let runtime: FakeRuntime;
const apps: ContextApp[] = [];

/** Records every event, in order, with its payload. */
function recordEvents(app: ContextApp) {
  const log: { event: keyof ContextAppEvents; payload: unknown }[] = [];
  for (const event of ["connected", "registered", "disconnected", "resourceRemoved", "error"] as const) {
    app.on(event, (payload) => log.push({ event, payload }));
  }
  return log;
}

async function notesApp(overrides: Partial<ContextAppOptions> = {}): Promise<ContextApp> {
  const app = new ContextApp({
    url: overrides.url ?? (await runtime.url()),
    token: TOKEN,
    app: { name: "notes", version: "1.0.0", displayName: "Notes" },
    contexts: [
      { id: "editor-state", name: "Editor State", description: "what the user has open", getCurrent: async () => null },
      {
        id: "notes",
        name: "Notes",
        notifies: true,
        getCurrent: async () => ({ content: "current note" }),
        getList: async ({ offset }) => ({ items: [{ id: `n${offset}`, title: "A note" }] }),
        getById: async (id) => ({ content: `note ${id}` }),
      },
    ],
    tools: [{ name: "search-notes", description: "full-text search", handler: async () => "no notes" }],
    reconnect: { initialDelayMs: 5, maxDelayMs: 20 },
    requestTimeoutMs: 500,
    ...overrides,
  });
  apps.push(app);
  return app;
}

beforeAll(() => {
  // Behave as on Node 20, which has no global WebSocket: the SDK must find `ws` by itself.
  vi.stubGlobal("WebSocket", undefined);
});

afterAll(() => {
  vi.unstubAllGlobals();
});

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(apps.splice(0).map((app) => app.close()));
  await runtime?.close();
});

describe("ContextApp registration", () => {
  it("authenticates by subprotocol and declares each provider's methods from the functions it has, and whether it notifies its changes", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp();
    await app.connect();

    const peer = runtime.last;
    expect(peer.protocols).toEqual(["context-runtime.v1", `bearer.${TOKEN}`]);
    expect(peer.socket.protocol).toBe("context-runtime.v1");
    const [initialize] = peer.frames;
    expect(initialize?.method).toBe("initialize");
    expect(initialize?.params).toEqual({
      protocolVersion: PROTOCOL_VERSION,
      app: { name: "notes", version: "1.0.0", displayName: "Notes" },
      contexts: [
        { id: "editor-state", name: "Editor State", description: "what the user has open", methods: ["current"], notifies: false },
        { id: "notes", name: "Notes", description: "", methods: ["current", "list", "get"], notifies: true },
      ],
      tools: [{ name: "search-notes", description: "full-text search", inputSchema: { type: "object", properties: {} } }],
      skills: [],
      hooks: [],
      mounts: [],
      mcpServers: [],
      agents: [],
      capabilities: { currentMany: true },
    });
  });

  it.runIf(platformWebSocket !== undefined)("works over the platform's WebSocket as well as over ws", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp({ WebSocket: platformWebSocket });
    await app.connect();
    expect(runtime.last.protocols).toEqual(["context-runtime.v1", `bearer.${TOKEN}`]);
    await expect(app.createAgent({ agentId: "a", name: "A", systemPrompt: "" })).resolves.toEqual({ agentId: "notes:a" });
    const answer = await runtime.call("contexts/current", { provider: "notes", conversationId: "conv-0001" });
    expect(answer.result).toEqual({ content: "current note" });
    const events = recordEvents(app);
    runtime.last.socket.close(4003, "app revoked");
    await until(() => events.some((e) => e.event === "error"));
    expect(events.map((e) => e.event)).toEqual(["disconnected", "error"]);
    expect(events[0]?.payload).toEqual({ code: 4003, reason: "app revoked" });
  });

  it("rejects a malformed declaration at construction", async () => {
    runtime = new FakeRuntime();
    await expect(notesApp({ contexts: [{ id: "no-methods", name: "Nothing" }] })).rejects.toThrow();
    await expect(notesApp({ app: { name: "bad name!", version: "1" } })).rejects.toThrow();
  });

  it("re-sends initialize, carrying every agent, after the runtime drops the connection", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp();
    const events = recordEvents(app);
    await app.connect();
    const agent = { agentId: "assistant", name: "Notes Assistant", systemPrompt: "Help with notes.", attachedContexts: ["notes:notes"] };
    await expect(app.createAgent(agent)).resolves.toEqual({ agentId: "notes:assistant" });

    runtime.last.socket.terminate();
    await until(() => events.filter((e) => e.event === "registered").length === 2);

    expect(events.map((e) => e.event)).toEqual(["connected", "registered", "disconnected", "connected", "registered"]);
    expect(events[1]?.payload).toEqual({ protocolVersion: PROTOCOL_VERSION, sessionId: "session-1" });
    expect(runtime.peers).toHaveLength(2);
    const second = runtime.last;
    expect(runtime.methods(second)).toEqual(["initialize"]);
    expect((second.frames[0]?.params as { agents: unknown[] }).agents).toEqual([agent]);
  });

  it.each<[string, WebSocketCtor | undefined]>([
    ["ws", undefined],
    ...(platformWebSocket ? [["the platform's WebSocket", platformWebSocket] as [string, WebSocketCtor]] : []),
  ])("keeps trying until the runtime is up, reporting failed attempts as errors but not as disconnects (%s)", async (_name, WebSocket) => {
    runtime = new FakeRuntime();
    const url = await runtime.url();
    await runtime.close();
    const app = await notesApp({ url, WebSocket });
    const events = recordEvents(app);
    const connected = app.connect();
    await until(() => events.filter((e) => e.event === "error").length >= 2);
    runtime = new FakeRuntime(Number(new URL(url).port));
    await connected;
    expect(new Set(events.map((e) => e.event))).toEqual(new Set(["error", "connected", "registered"]));
    expect(events.slice(-2).map((e) => e.event)).toEqual(["connected", "registered"]);
  });

  it("holds requests made while disconnected until registration, within requestTimeoutMs", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp();
    const pushed = app.pushResource({ id: "sel-1", title: "Selection", content: "some text" });
    await sleep(20);
    await app.connect();
    await expect(pushed).resolves.toEqual({ fullId: "notes:sel-1", conversationId: "conv-0001" });
    expect(runtime.methods(runtime.last)).toEqual(["initialize", "resources/push"]);

    const never = await notesApp({ url: "http://127.0.0.1:9", requestTimeoutMs: 50 });
    await expect(never.pushResource({ title: "t", content: "c" })).rejects.toThrow(/not registered within 50 ms/);
  });

  it("matches answers by id, times out unanswered requests and turns error answers into ContextAppError", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp({ requestTimeoutMs: 100 });
    await app.connect();

    await expect(app.pushResource({ id: "a", title: "A", content: "a", conversationId: "conv-0042" })).resolves.toEqual({
      fullId: "notes:a",
      conversationId: "conv-0042",
    });
    await expect(app.removeResource("notes:a", "conv-0042")).resolves.toBeUndefined();
    expect(runtime.last.frames.at(-1)?.params).toEqual({ fullId: "notes:a", conversationId: "conv-0042" });
    const ids = runtime.last.frames.map((f) => f.id);
    expect(new Set(ids).size).toBe(ids.length);

    runtime.answer = (method) =>
      method === "resources/push" ? { error: { code: ErrorCode.Forbidden, message: "not attached", data: { why: "policy" } } } : null;
    const refused = await app.pushResource({ title: "B", content: "b" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ContextAppError);
    expect(refused).toMatchObject({ code: ErrorCode.Forbidden, message: "not attached", data: { why: "policy" } });

    await expect(app.removeResource("notes:b")).rejects.toThrow(/no answer within/);
  });

  it("rejects pending requests when the socket closes", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp();
    await app.connect();
    runtime.answer = () => null;
    const pending = app.pushResource({ title: "A", content: "a" });
    await until(() => runtime.methods(runtime.last).includes("resources/push"));
    runtime.last.socket.terminate();
    await expect(pending).rejects.toThrow(/connection closed/);
  });

  it("sends contexts/changed for a known provider only, as a request that settles once the runtime has it", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp();
    await app.connect();
    let settled = false;
    runtime.answer = () => null;
    const told = app.notifyChanged("editor-state").then(() => (settled = true));
    await until(() => runtime.methods(runtime.last).includes("contexts/changed"));
    const changed = runtime.last.frames.at(-1);
    expect(changed).toEqual({ jsonrpc: "2.0", id: expect.any(Number), method: "contexts/changed", params: { provider: "editor-state" } });
    expect(settled).toBe(false);
    // Unanswered, it still settles (at the request timeout) and never rejects.
    await told;
    runtime.answer = defaultAnswer;
    await expect(app.notifyChanged("editor-state")).resolves.toBeUndefined();
    expect(() => app.notifyChanged("calendar")).toThrow(/unknown provider/);
  });
});

describe("ContextApp answering the runtime", () => {
  it("passes the right arguments to getCurrent, getList and getById and answers each request by its id", async () => {
    runtime = new FakeRuntime();
    const getCurrent = vi.fn(async () => ({ content: "# Draft", title: "Draft", version: "v7" }));
    const getList = vi.fn(async () => ({ items: [{ id: "n1", title: "One" }], nextCursor: "next" }));
    // The second id answers `undefined`, as a JavaScript provider that returns nothing would: sent as null.
    const getById = vi.fn(async (id: string) => (id === "n1" ? { content: "one" } : (undefined as never)));
    const app = await notesApp({ contexts: [{ id: "notes", name: "Notes", getCurrent, getList, getById }] });
    await app.connect();

    const [current, list, found, absent] = await Promise.all([
      runtime.call("contexts/current", { provider: "notes", conversationId: "conv-0001" }, 41),
      runtime.call("contexts/list", { provider: "notes", query: "draft", cursor: "20", limit: 10 }, "list-a"),
      runtime.call("contexts/get", { provider: "notes", id: "n1" }, "get-1"),
      runtime.call("contexts/get", { provider: "notes", id: "n2" }, "get-2"),
    ]);

    expect(getCurrent).toHaveBeenCalledWith({ conversationId: "conv-0001" });
    expect(getList).toHaveBeenCalledWith({ query: "draft", cursor: "20", limit: 10, offset: 20 });
    expect(getById).toHaveBeenCalledWith("n1");
    expect(current).toEqual({ jsonrpc: "2.0", id: 41, result: { content: "# Draft", title: "Draft", version: "v7" } });
    expect(list).toEqual({ jsonrpc: "2.0", id: "list-a", result: { items: [{ id: "n1", title: "One" }], nextCursor: "next" } });
    expect(found).toEqual({ jsonrpc: "2.0", id: "get-1", result: { content: "one" } });
    expect(absent).toEqual({ jsonrpc: "2.0", id: "get-2", result: null });
  });

  it("answers contexts/currentMany with each provider's answer in order: a value, an error, a timeout past the deadline", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp({
      contexts: [
        { id: "editor", name: "Editor", getCurrent: async ({ conversationId }) => ({ content: `editing in ${conversationId}` }) },
        { id: "empty", name: "Empty", getCurrent: async () => null },
        { id: "broken", name: "Broken", getCurrent: async () => { throw new Error("disk on fire"); } },
        { id: "slow", name: "Slow", getCurrent: () => new Promise((resolve) => setTimeout(() => resolve({ content: "too late" }), 400)) },
      ],
    });
    await app.connect();
    const asked = (provider: string) => ({ provider, conversationId: "conv-0001" });
    const started = Date.now();
    const answer = await runtime.call("contexts/currentMany", { requests: ["editor", "empty", "broken", "slow", "nobody"].map(asked), deadlineMs: 100 }, 7);
    expect(Date.now() - started).toBeLessThan(350);
    expect(answer).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: {
        answers: [
          { result: { content: "editing in conv-0001" } },
          { result: null },
          { error: { code: ErrorCode.InternalError, message: "disk on fire" } },
          { error: { code: ErrorCode.Timeout, message: "no answer within 100 ms" } },
          { error: { code: ErrorCode.NotFound, message: "unknown provider 'nobody'" } },
        ],
      },
    });
    // What does not fit in one frame beside the others is answered TooLarge, to be asked alone.
    const big = await notesApp({
      app: { name: "big", version: "1.0.0" },
      contexts: ["a", "b", "c", "d", "e", "f"].map((id) => ({ id, name: id, getCurrent: async () => ({ content: id.repeat(99_000) }) })),
    });
    await big.connect();
    const many = await runtime.call("contexts/currentMany", { requests: ["a", "b", "c", "d", "e", "f"].map(asked), deadlineMs: 1000 });
    const answers = (many.result as { answers: { result?: { content: string }; error?: { code: number } }[] }).answers;
    expect(answers.slice(0, 5).map((a) => a.result?.content.length)).toEqual([99_000, 99_000, 99_000, 99_000, 99_000]);
    expect(answers[5]).toMatchObject({ error: { code: ErrorCode.TooLarge } });
    expect(JSON.stringify(many).length).toBeLessThanOrEqual(LIMITS.frameChars);
    // Counted in bytes too: a WebSocket message carries at most 1 MiB of UTF-8, and CJK text is 3 bytes a character.
    const wide = await notesApp({
      app: { name: "wide", version: "1.0.0" },
      contexts: ["a", "b", "c", "d", "e"].map((id) => ({ id, name: id, getCurrent: async () => ({ content: "中".repeat(99_000) }) })),
    });
    await wide.connect();
    const cjk = await runtime.call("contexts/currentMany", { requests: ["a", "b", "c", "d", "e"].map(asked), deadlineMs: 1000 });
    const cjkAnswers = (cjk.result as { answers: { result?: unknown; error?: { code: number } }[] }).answers;
    expect(cjkAnswers.filter((a) => a.result).length).toBe(3);
    expect(cjkAnswers.slice(3)).toEqual([expect.objectContaining({ error: expect.objectContaining({ code: ErrorCode.TooLarge }) }), expect.objectContaining({ error: expect.objectContaining({ code: ErrorCode.TooLarge }) })]);
    expect(new TextEncoder().encode(JSON.stringify(cjk)).length).toBeLessThanOrEqual(1_048_576);
    // Bad params are one error for the request, as for any method.
    expect(await runtime.call("contexts/currentMany", { requests: [] })).toMatchObject({ error: { code: ErrorCode.InvalidParams } });
  });

  it("turns sanqian-style { items, hasMore } into a nextCursor at the next offset", async () => {
    runtime = new FakeRuntime();
    const getList = vi.fn(async ({ offset }: { offset: number }) => ({
      items: [
        { id: `n${offset}`, title: "a" },
        { id: `n${offset + 1}`, title: "b" },
      ],
      hasMore: offset < 4,
    }));
    const app = await notesApp({ contexts: [{ id: "notes", name: "Notes", getList }] });
    await app.connect();

    const first = await runtime.call("contexts/list", { provider: "notes" });
    expect(first.result).toEqual({ items: [{ id: "n0", title: "a" }, { id: "n1", title: "b" }], nextCursor: "2" });
    const second = await runtime.call("contexts/list", { provider: "notes", cursor: "2" });
    expect(second.result).toEqual({ items: [{ id: "n2", title: "a" }, { id: "n3", title: "b" }], nextCursor: "4" });
    const last = await runtime.call("contexts/list", { provider: "notes", cursor: "4" });
    expect(last.result).toEqual({ items: [{ id: "n4", title: "a" }, { id: "n5", title: "b" }] });
    // An opaque cursor is passed through, with offset 0.
    await runtime.call("contexts/list", { provider: "notes", cursor: "abc" });
    expect(getList).toHaveBeenLastCalledWith({ cursor: "abc", offset: 0, query: undefined, limit: undefined });
  });

  it("answers a throwing provider with an InternalError carrying its message", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp({
      contexts: [{ id: "notes", name: "Notes", getCurrent: () => Promise.reject(new Error("database locked")) }],
    });
    await app.connect();
    const answer = await runtime.call("contexts/current", { provider: "notes", conversationId: "conv-0001" });
    expect(answer).toEqual({ jsonrpc: "2.0", id: answer.id, error: { code: ErrorCode.InternalError, message: "database locked" } });
  });

  it("answers invalid provider data with an error instead of sending it on", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp({
      contexts: [
        {
          id: "notes",
          name: "Notes",
          getCurrent: async () => ({ content: 42 }) as never,
          getList: async () => ({ items: [{ title: "no id" }] }) as never,
          getById: async () => ({ content: "x".repeat(100_001) }),
        },
      ],
    });
    await app.connect();
    const told: string[] = [];
    app.on("error", (error) => void told.push(error.message));
    const answers = await Promise.all([
      runtime.call("contexts/current", { provider: "notes", conversationId: "conv-0001" }),
      runtime.call("contexts/list", { provider: "notes" }),
      runtime.call("contexts/get", { provider: "notes", id: "big" }),
    ]);
    for (const answer of answers) {
      expect(answer.result).toBeUndefined();
      expect(answer.error?.code).toBe(ErrorCode.InternalError);
      expect(answer.error?.message).toMatch(/^provider returned invalid data: /);
    }
    expect(answers[0]?.error?.message).toContain("content");
    // Too long says by how much; and the app's developer hears of each, not only the runtime.
    expect(answers[2]?.error?.message).toContain("content: at most 100,000 characters, not 100,001");
    expect(told).toHaveLength(3);
    expect(told.find((m) => m.includes("getById"))).toMatch(/^provider 'notes' getById returned invalid data, so the runtime reports the context missing: content: at most 100,000 characters, not 100,001$/);
  });

  it("warns in the console of an invalid answer when the app listens for no errors", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp({ contexts: [{ id: "notes", name: "Notes", getCurrent: async () => ({ content: "x".repeat(100_001) }) }] });
    await app.connect();
    const warned = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      await runtime.call("contexts/current", { provider: "notes", conversationId: "conv-0001" });
      expect(warned).toHaveBeenCalledWith("context-runtime: provider 'notes' getCurrent returned invalid data, so the runtime reports the context missing: content: at most 100,000 characters, not 100,001");
    } finally {
      warned.mockRestore();
    }
  });

  it("answers unknown providers, missing functions, unknown methods and bad params with errors", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp();
    await app.connect();
    const [unknownProvider, noList, unknownMethod, badParams] = await Promise.all([
      runtime.call("contexts/current", { provider: "calendar", conversationId: "conv-0001" }),
      runtime.call("contexts/list", { provider: "editor-state" }),
      runtime.call("contexts/subscribe", { provider: "notes" }),
      runtime.call("contexts/current", { provider: "notes" }),
    ]);
    expect(unknownProvider.error?.code).toBe(ErrorCode.NotFound);
    expect(noList.error?.code).toBe(ErrorCode.MethodNotFound);
    expect(unknownMethod.error?.code).toBe(ErrorCode.MethodNotFound);
    expect(badParams.error?.code).toBe(ErrorCode.InvalidParams);
  });

  it("ignores unknown frames and emits resourceRemoved on the notification", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp();
    const removed: unknown[] = [];
    app.on("resourceRemoved", (payload) => removed.push(payload));
    const unsubscribed: unknown[] = [];
    app.on("resourceRemoved", (payload) => unsubscribed.push(payload))();
    const errors: Error[] = [];
    app.on("error", (error) => errors.push(error));
    await app.connect();

    const socket = runtime.last.socket;
    for (const junk of ["not json", "{}", '{"jsonrpc":"2.0","id":999,"result":1}', '{"jsonrpc":"2.0","method":"resources/removed","params":{}}']) {
      socket.send(junk);
    }
    socket.send(JSON.stringify({ jsonrpc: "2.0", method: "resources/removed", params: { fullId: "notes:sel-1", conversationId: "conv-0001" } }));
    await until(() => removed.length > 0);
    expect(removed).toEqual([{ fullId: "notes:sel-1", conversationId: "conv-0001" }]);
    expect(unsubscribed).toEqual([]);
    // Still working after the junk.
    const answer = await runtime.call("contexts/current", { provider: "notes", conversationId: "conv-0001" });
    expect(answer.result).toEqual({ content: "current note" });
    expect(errors).toEqual([]);
  });
});

describe("ContextApp liveness and shutdown", () => {
  it("pings every heartbeatMs, stays up while pongs come, and reconnects when nothing comes back", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp({ heartbeatMs: 30 });
    const events = recordEvents(app);
    await app.connect();
    await sleep(150);
    expect(runtime.last.texts.filter((t) => t === "ping").length).toBeGreaterThanOrEqual(3);
    expect(runtime.peers).toHaveLength(1);

    runtime.answerPings = false;
    await until(() => events.filter((e) => e.event === "registered").length >= 2);
    expect(events.find((e) => e.event === "disconnected")?.payload).toEqual({ code: 4000, reason: "no frame received within two heartbeats" });
  });

  it("stops reconnecting after close()", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp();
    const events = recordEvents(app);
    await app.connect();
    await app.close();
    expect(events.map((e) => e.event)).toEqual(["connected", "registered", "disconnected"]);
    await sleep(100);
    expect(runtime.peers).toHaveLength(1);
    await expect(app.connect()).rejects.toThrow(/closed/);
    await expect(app.pushResource({ title: "t", content: "c" })).rejects.toThrow(/closed/);
  });

  it("does not retry after a 4001 close and rejects connect()", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp({ token: "wrong-token" });
    const events = recordEvents(app);
    const failed = await app.connect().catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ContextAppError);
    expect(failed).toMatchObject({ code: ErrorCode.Unauthorized, message: "invalid app token" });
    expect(events.map((e) => e.event)).toEqual(["connected", "disconnected", "error"]);
    await sleep(100);
    expect(runtime.peers).toHaveLength(1);
  });

  it("does not retry when initialize is refused as Forbidden", async () => {
    runtime = new FakeRuntime();
    runtime.answer = () => ({ error: { code: ErrorCode.Forbidden, message: "this token is for app 'calendar'" } });
    const app = await notesApp();
    await expect(app.connect()).rejects.toMatchObject({ code: ErrorCode.Forbidden });
    await sleep(100);
    expect(runtime.peers).toHaveLength(1);
  });

  it("retries refused initializes with doubling, capped delays, and starts again from initialDelayMs once registered", async () => {
    runtime = new FakeRuntime();
    vi.spyOn(Math, "random").mockReturnValue(1); // full jitter at its ceiling: the delays themselves
    let refusals = 3;
    runtime.answer = (method, params) =>
      method === "initialize" && refusals-- > 0 ? { error: { code: ErrorCode.InternalError, message: "busy" } } : defaultAnswer(method, params);
    const app = await notesApp({ reconnect: { initialDelayMs: 30, maxDelayMs: 70 } });
    const errors: Error[] = [];
    app.on("error", (error) => errors.push(error));
    await app.connect();

    expect(runtime.peers).toHaveLength(4);
    expect(errors.map((e) => e.message)).toEqual(["busy", "busy", "busy"]);
    const gaps = runtime.peers.slice(1).map((peer, i) => peer.connectedAt - (runtime.peers[i]?.connectedAt ?? 0));
    expect(gaps[0]).toBeGreaterThanOrEqual(28);
    expect(gaps[1]).toBeGreaterThanOrEqual(58);
    expect(gaps[2]).toBeGreaterThanOrEqual(68);
    expect(gaps[2]).toBeLessThan(110); // capped at 70, not 120

    let droppedAt = 0;
    app.on("disconnected", () => (droppedAt = Date.now()));
    runtime.last.socket.terminate();
    await until(() => runtime.peers.length === 5);
    expect(runtime.last.connectedAt - droppedAt).toBeLessThan(60); // 30 again, not 70
  });
});

describe("WebSocket discovery", () => {
  it("prefers the given constructor, then the platform's, then ws", async () => {
    const given = class {} as unknown as WebSocketCtor;
    expect(await findWebSocket(given)).toBe(given);
    vi.stubGlobal("WebSocket", given);
    expect(await findWebSocket()).toBe(given);
    vi.stubGlobal("WebSocket", undefined);
    expect(await findWebSocket()).toBe(WebSocket);
  });
});

describe("ContextApp tools and skills", () => {
  const CALL = { conversationId: "conv-0001", toolCallId: "call_1" };
  const schema = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };

  it("declares tools (without their handlers) and skills in initialize", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp({
      tools: [{ name: "search", description: "Search notes", inputSchema: schema, annotations: { readOnlyHint: true }, handler: () => "x" }],
      skills: [{ name: "meeting-notes", description: "How to write meeting notes", manual: "# Meeting notes\n…", references: [{ name: "template.md", content: "## Template" }] }],
    });
    await app.connect();
    const params = runtime.last.frames[0]!.params!;
    expect(params.tools).toEqual([{ name: "search", description: "Search notes", inputSchema: schema, annotations: { readOnlyHint: true } }]);
    expect(params.skills).toEqual([{ name: "meeting-notes", description: "How to write meeting notes", manual: "# Meeting notes\n…", references: [{ name: "template.md", content: "## Template" }] }]);
  });

  it("refuses at construction an input schema of the wrong shape (naming the tool) and a tool without a handler", () => {
    const url = "http://127.0.0.1:1";
    expect(() => new ContextApp({ url, token: TOKEN, app: { name: "notes", version: "1" }, tools: [{ name: "flat", inputSchema: { type: "string" }, handler: () => "" }] })).toThrow(/tool 'flat'/);
    const long = { type: "object", description: "x".repeat(20_000) };
    expect(() => new ContextApp({ url, token: TOKEN, app: { name: "notes", version: "1" }, tools: [{ name: "long", inputSchema: long, handler: () => "" }] })).toThrow(/tool 'long'/);
    expect(() => new ContextApp({ url, token: TOKEN, app: { name: "notes", version: "1" }, tools: [{ name: "none" } as never] })).toThrow(/tool 'none' has no handler/);
  });

  it("leaves the JSON Schema check to the runtime: a schema it refuses at initialize rejects connect with its error, naming the tool, and is not sent again", async () => {
    runtime = new FakeRuntime();
    const issue = { path: "tools.0.inputSchema", message: `tool 'bad': inputSchema.properties.a.type: "date" is not a JSON Schema type` };
    runtime.answer = (method, params) =>
      method === "initialize" ? { error: { code: ErrorCode.InvalidParams, message: "invalid params", data: { issues: [issue] } } } : defaultAnswer(method, params);
    // The SDK checks shape only, so a schema of the right shape with a wrong keyword is sent as declared.
    const app = await notesApp({ tools: [{ name: "bad", inputSchema: { type: "object", properties: { a: { type: "date" } } }, handler: () => "" }] });
    const errors: Error[] = [];
    app.on("error", (error) => errors.push(error));
    await expect(app.connect()).rejects.toMatchObject({ code: ErrorCode.InvalidParams, data: { issues: [issue] } });
    expect(errors).toHaveLength(1);
    await sleep(100);
    expect(runtime.peers).toHaveLength(1);
  });

  it("answers tools/call: a string, an object as JSON, a CallToolResult as is, a throw as isError text", async () => {
    runtime = new FakeRuntime();
    const seen: unknown[] = [];
    const app = await notesApp({
      tools: [
        { name: "text", handler: (args, call) => (seen.push([args, call]), `hello ${String(args.q)}`) },
        { name: "json", handler: async () => ({ events: [{ title: "Lunch" }] }) },
        { name: "mcp", handler: async () => ({ content: [{ type: "text", text: "a" }, { type: "image", data: "…", mimeType: "image/png" }], isError: false }) },
        { name: "fails", handler: async () => { throw new Error("calendar is read-only"); } },
        { name: "nothing", handler: async () => undefined },
      ],
    });
    await app.connect();
    const call = (name: string, args: Record<string, unknown> = {}) => runtime.call("tools/call", { name, arguments: args, ...CALL });
    const [text, json, mcp, fails, nothing] = await Promise.all([call("text", { q: "there" }), call("json"), call("mcp"), call("fails"), call("nothing")]);
    expect(text.result).toEqual({ content: [{ type: "text", text: "hello there" }] });
    expect(seen).toEqual([[{ q: "there" }, CALL]]);
    expect(json.result).toEqual({ content: [{ type: "text", text: '{"events":[{"title":"Lunch"}]}' }] });
    expect(mcp.result).toEqual({ content: [{ type: "text", text: "a" }, { type: "image", data: "…", mimeType: "image/png" }], isError: false });
    expect(fails.result).toEqual({ content: [{ type: "text", text: "calendar is read-only" }], isError: true });
    expect(nothing.result).toEqual({ content: [] });
  });

  it("answers an unknown tool and bad params with JSON-RPC errors", async () => {
    runtime = new FakeRuntime();
    const app = await notesApp();
    await app.connect();
    const [unknown, bad] = await Promise.all([
      runtime.call("tools/call", { name: "nope", arguments: {}, ...CALL }),
      runtime.call("tools/call", { name: "search-notes", arguments: "q", ...CALL }),
    ]);
    expect(unknown.error).toMatchObject({ code: ErrorCode.InvalidParams, message: "unknown tool 'nope'" });
    expect(bad.error?.code).toBe(ErrorCode.InvalidParams);
  });
});
