/**
 * Hooks in the app SDK: `ContextApp` declares them in `initialize` (at every reconnect) and answers the runtime's
 * `hooks/call` with its handlers' decisions, checked against the point's schemas; `turn.end` comes as a notification.
 */
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type WebSocket from "ws";
import { WebSocketServer } from "ws";
import { ErrorCode } from "../../src/protocol/jsonrpc";
import { LIMITS } from "../../src/protocol/limits";
import { PROTOCOL_VERSION } from "../../src/protocol/methods";
import { ContextApp, defineHook, type AppHook, type ContextAppOptions } from "../../src/sdk";

const TOKEN = "app-token-1";

interface Frame {
  jsonrpc: "2.0";
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** A stand-in runtime: accepts the app, answers `initialize`, and calls the app's hooks. */
class FakeRuntime {
  readonly peers: { socket: WebSocket; frames: Frame[] }[] = [];
  private readonly server = new WebSocketServer({ port: 0, handleProtocols: (offered) => (offered.has("context-runtime.v1") ? "context-runtime.v1" : false) });
  private readonly waiting = new Map<string | number, (frame: Frame) => void>();
  private nextCall = 1;

  constructor() {
    this.server.on("connection", (socket) => {
      const peer = { socket, frames: [] as Frame[] };
      this.peers.push(peer);
      socket.on("message", (data) => {
        const text = data.toString();
        if (text === "ping") return socket.send("pong");
        const frame = JSON.parse(text) as Frame;
        peer.frames.push(frame);
        if (frame.method === undefined) return this.waiting.get(frame.id as string | number)?.(frame);
        if (frame.method === "initialize") socket.send(JSON.stringify({ jsonrpc: "2.0", id: frame.id, result: { protocolVersion: PROTOCOL_VERSION, sessionId: "s1" } }));
      });
    });
  }

  async url(): Promise<string> {
    if (!this.server.address()) await new Promise((resolve) => this.server.once("listening", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get last() {
    const peer = this.peers.at(-1);
    if (!peer) throw new Error("no app has connected");
    return peer;
  }

  call(method: string, params: unknown): Promise<Frame> {
    const id = `call-${this.nextCall++}`;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.last.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  notify(method: string, params: unknown): void {
    this.last.socket.send(JSON.stringify({ jsonrpc: "2.0", method, params }));
  }

  async close(): Promise<void> {
    for (const client of this.server.clients) client.terminate();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

async function until(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

let runtime: FakeRuntime;
const apps: ContextApp[] = [];

async function hookedApp(hooks: AppHook[], overrides: Partial<ContextAppOptions> = {}): Promise<ContextApp> {
  runtime = new FakeRuntime();
  const app = new ContextApp({
    url: await runtime.url(),
    token: TOKEN,
    app: { name: "guard", version: "1.0.0" },
    hooks,
    reconnect: { initialDelayMs: 5, maxDelayMs: 20 },
    requestTimeoutMs: 500,
    ...overrides,
  });
  apps.push(app);
  await app.connect();
  return app;
}

const TURN = { conversationId: "conv-0001", turnId: "turn-1", agent: "guard:assistant" };
const inputCall = (hook: string, message: string) => ({ hook, point: "input", ...TURN, payload: { message } });

beforeAll(() => {
  // As on Node 20: the SDK finds `ws` by itself.
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

describe("ContextApp hooks: declaration", () => {
  it("declares each hook in initialize without its handler, with the schema's defaults, and again after a reconnect", async () => {
    const app = await hookedApp([
      { name: "polite", point: "input", handler: () => undefined },
      { name: "no-rm", point: "tool.before", agents: ["guard:*"], tools: ["shell:*"], order: -5, deadlineMs: 2000, failMode: "closed", handler: () => ({ action: "deny", reason: "no" }) },
    ]);
    const declared = [
      { name: "polite", point: "input", order: 0, deadlineMs: LIMITS.hookDeadlineMs, failMode: "open" },
      { name: "no-rm", point: "tool.before", agents: ["guard:*"], tools: ["shell:*"], order: -5, deadlineMs: 2000, failMode: "closed" },
    ];
    const first = runtime.last.frames[0]!;
    expect(first.method).toBe("initialize");
    expect(JSON.stringify(first.params!.hooks)).toBe(JSON.stringify(declared));

    let registered = 0;
    app.on("registered", () => registered++);
    runtime.last.socket.terminate();
    await until(() => registered === 1);
    expect(runtime.peers).toHaveLength(2);
    const again = runtime.last.frames[0]!;
    expect(again.method).toBe("initialize");
    expect(JSON.stringify(again.params!.hooks)).toBe(JSON.stringify(declared));
    // And the handlers still answer on the new socket.
    const answer = await runtime.call("hooks/call", inputCall("polite", "hi"));
    expect(answer.result).toEqual({ action: "continue" });
  });

  it("refuses at construction a bad declaration, a hook without a handler, and two hooks of one name", () => {
    const base = { url: "http://127.0.0.1:1", token: TOKEN, app: { name: "guard", version: "1" } };
    expect(() => new ContextApp({ ...base, hooks: [{ name: "t", point: "input", tools: ["x:*"], handler: () => undefined }] })).toThrow(/tools applies to tool.before/);
    expect(() => new ContextApp({ ...base, hooks: [{ name: "slow", point: "output", deadlineMs: LIMITS.hookDeadlineMaxMs + 1, handler: () => undefined }] })).toThrow();
    expect(() => new ContextApp({ ...base, hooks: [{ name: "none", point: "input" } as never] })).toThrow(/hook 'none' has no handler/);
    const twice = [defineHook({ name: "a", point: "input", handler: () => undefined }), defineHook({ name: "a", point: "output", handler: () => undefined })];
    expect(() => new ContextApp({ ...base, hooks: twice })).toThrow(/hook 'a' is declared twice/);
  });
});

describe("ContextApp hooks: answering hooks/call", () => {
  it("passes the payload and the call's info to the handler and answers with its decision", async () => {
    const seen: unknown[] = [];
    await hookedApp([
      {
        name: "polite",
        point: "input",
        handler: async (payload, info) => {
          seen.push([payload, info]);
          return { action: "rewrite", message: payload.message.replace("stupid", "s*****") };
        },
      },
    ]);
    const answer = await runtime.call("hooks/call", inputCall("polite", "a stupid question"));
    expect(answer).toEqual({ jsonrpc: "2.0", id: answer.id, result: { action: "rewrite", message: "a s***** question" } });
    expect(seen).toEqual([[{ message: "a stupid question" }, { ...TURN, hook: "polite" }]]);
  });

  it("answers continue for a handler that returns nothing, sync or async", async () => {
    await hookedApp([
      { name: "sync", point: "input", handler: () => undefined },
      { name: "async", point: "output", handler: async () => {} },
    ]);
    const output = { hook: "async", point: "output", ...TURN, payload: { request: null, answer: { content: "hi", toolCalls: [] }, attempt: 0 } };
    const [sync, async] = await Promise.all([runtime.call("hooks/call", inputCall("sync", "hi")), runtime.call("hooks/call", output)]);
    expect(sync.result).toEqual({ action: "continue" });
    expect(async.result).toEqual({ action: "continue" });
  });

  it("answers an invalid decision with an error carrying the issues (and warns), not the decision", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    await hookedApp([
      { name: "wrong-action", point: "input", handler: () => ({ action: "deny", reason: "not an input action" }) as never },
      { name: "empty-rewrite", point: "input", handler: () => ({ action: "rewrite", message: "" }) },
      { name: "null", point: "input", handler: () => null as never },
    ]);
    const answers = await Promise.all(["wrong-action", "empty-rewrite", "null"].map((hook) => runtime.call("hooks/call", inputCall(hook, "hi"))));
    for (const answer of answers) {
      expect(answer.result).toBeUndefined();
      expect(answer.error?.code).toBe(ErrorCode.InternalError);
      expect(answer.error?.message).toMatch(/^hook '[a-z-]+' returned an invalid 'input' decision: /);
      expect((answer.error?.data as { issues: unknown[] }).issues.length).toBeGreaterThan(0);
    }
    expect((answers[1]!.error!.data as { issues: { path: string }[] }).issues[0]!.path).toBe("message");
    expect(warn).toHaveBeenCalledTimes(3);
  });

  it("answers a throwing handler with an error carrying its message", async () => {
    await hookedApp([
      { name: "broken", point: "memory", handler: () => { throw new Error("vector store down"); } },
      { name: "rejects", point: "compaction", handler: async () => Promise.reject(new Error("summariser busy")) },
    ]);
    const [broken, rejects] = await Promise.all([
      runtime.call("hooks/call", { hook: "broken", point: "memory", ...TURN, payload: { message: "hi", memory: [] } }),
      runtime.call("hooks/call", { hook: "rejects", point: "compaction", ...TURN, payload: { messages: [], previousSummary: null, maxTokens: 25, maxChars: 100 } }),
    ]);
    expect(broken).toEqual({ jsonrpc: "2.0", id: broken.id, error: { code: ErrorCode.InternalError, message: "vector store down" } });
    expect(rejects.error).toEqual({ code: ErrorCode.InternalError, message: "summariser busy" });
  });

  it("answers an unknown hook, a hook called at another point, bad params and a bad payload with InvalidParams, without running a handler", async () => {
    const handler = vi.fn(() => undefined);
    await hookedApp([{ name: "polite", point: "input", handler }]);
    const [unknown, otherPoint, badParams, badPayload] = await Promise.all([
      runtime.call("hooks/call", inputCall("nope", "hi")),
      runtime.call("hooks/call", { hook: "polite", point: "output", ...TURN, payload: { request: null, answer: { content: null, toolCalls: [] }, attempt: 0 } }),
      runtime.call("hooks/call", { hook: "polite", point: "input", conversationId: "conv-0001", payload: { message: "hi" } }),
      runtime.call("hooks/call", inputCall("polite", 42 as never)),
    ]);
    expect(unknown.error).toEqual({ code: ErrorCode.InvalidParams, message: "unknown hook 'nope'" });
    expect(otherPoint.error).toEqual({ code: ErrorCode.InvalidParams, message: "hook 'polite' is registered for 'input', not 'output'" });
    expect(badParams.error).toMatchObject({ code: ErrorCode.InvalidParams, message: "invalid params" });
    expect(badPayload.error).toMatchObject({ code: ErrorCode.InvalidParams, message: "invalid payload for a 'input' hook", data: { issues: [{ path: "message" }] } });
    expect(handler).not.toHaveBeenCalled();
  });

  it("answers the other points' actions as their schemas parse them", async () => {
    await hookedApp([
      { name: "patch", point: "tool.before", tools: ["shell:*"], handler: (p) => ({ action: "patch", arguments: { ...(p.call.arguments as object), dryRun: true } }) },
      { name: "redact", point: "tool.after", handler: (p) => ({ action: "replace", text: p.result.text.replace(/\d/g, "#") }) },
      { name: "pin", point: "assembled", handler: (p) => ({ action: "change", remove: p.blocks.filter((b) => b.truncated).map((b) => b.id), add: [{ title: "Rules", content: "Be brief." }] }) },
    ]);
    const call = { id: "call_1", tool: "shell:run", arguments: { cmd: "ls" } };
    const [patch, redact, pin] = await Promise.all([
      runtime.call("hooks/call", { hook: "patch", point: "tool.before", ...TURN, payload: { request: "list files", call } }),
      runtime.call("hooks/call", { hook: "redact", point: "tool.after", ...TURN, payload: { call, result: { text: "pin 1234", isError: false } } }),
      runtime.call("hooks/call", { hook: "pin", point: "assembled", ...TURN, payload: { blocks: [{ id: "b1", kind: "context", text: "…", truncated: true }, { id: "b2", kind: "memory", text: "x", truncated: false }] } }),
    ]);
    expect(patch.result).toEqual({ action: "patch", arguments: { cmd: "ls", dryRun: true } });
    expect(redact.result).toEqual({ action: "replace", text: "pin ####" });
    expect(pin.result).toEqual({ action: "change", remove: ["b1"], add: [{ title: "Rules", content: "Be brief." }] });
  });
});

describe("ContextApp hooks: turn.end as a notification", () => {
  const END = { hook: "audit", point: "turn.end", ...TURN, payload: { continuation: false, toolCalls: [{ id: "call_1", tool: "shell:run", outcome: "ok" }], tokens: 321 } };

  it("runs the handler and sends nothing back", async () => {
    const seen: unknown[] = [];
    await hookedApp([{ name: "audit", point: "turn.end", handler: (payload, info) => void seen.push([payload, info]) }, { name: "polite", point: "input", handler: () => undefined }]);
    const before = runtime.last.frames.length;
    runtime.notify("hooks/call", END);
    await until(() => seen.length === 1);
    expect(seen[0]).toEqual([END.payload, { ...TURN, hook: "audit" }]);
    // A request after it is answered, and that answer is the only frame the app sent since.
    const answer = await runtime.call("hooks/call", inputCall("polite", "hi"));
    expect(runtime.last.frames.slice(before)).toEqual([answer]);
  });

  it("logs a throwing handler, an invalid answer and an unknown hook, and still sends nothing", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const ran: string[] = [];
    await hookedApp([
      { name: "audit", point: "turn.end", handler: () => { ran.push("audit"); throw new Error("audit log full"); } },
      { name: "chatty", point: "turn.end", handler: () => (ran.push("chatty"), { action: "refuse", reason: "x" }) as never },
    ]);
    const before = runtime.last.frames.length;
    runtime.notify("hooks/call", END);
    runtime.notify("hooks/call", { ...END, hook: "chatty" });
    runtime.notify("hooks/call", { ...END, hook: "nope" });
    await until(() => warn.mock.calls.length === 3);
    expect(ran.sort()).toEqual(["audit", "chatty"]);
    const messages = warn.mock.calls.map((c) => String(c[0]));
    expect(messages).toEqual(
      expect.arrayContaining([expect.stringContaining("audit log full"), expect.stringContaining("hook 'chatty' returned an invalid 'turn.end' decision"), expect.stringContaining("unknown hook 'nope'")]),
    );
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(runtime.last.frames.slice(before)).toEqual([]);
  });

  it("answers turn.end sent as a request with continue", async () => {
    await hookedApp([{ name: "audit", point: "turn.end", handler: () => undefined }]);
    const answer = await runtime.call("hooks/call", END);
    expect(answer.result).toEqual({ action: "continue" });
  });
});

describe("ContextApp hooks: types", () => {
  it("types each handler's payload and decision by its point, in an array and through defineHook", () => {
    const hooks: AppHook[] = [
      { name: "a", point: "input", handler: (p) => ({ action: "rewrite", message: p.message.trim() }) },
      { name: "b", point: "tool.before", handler: (p) => (p.call.tool === "shell:rm" ? { action: "deny", reason: "no" } : undefined) },
      // @ts-expect-error an input hook cannot deny
      { name: "c", point: "input", handler: () => ({ action: "deny", reason: "no" }) },
      // @ts-expect-error an output payload has no `message`
      { name: "d", point: "output", handler: (p) => ({ action: "reject", note: p.message }) },
    ];
    const single = defineHook({ name: "e", point: "compaction", handler: async (p) => ({ action: "summary", summary: p.messages.map((m) => m.text).join(" ") }) });
    // @ts-expect-error turn.end answers nothing but continue
    defineHook({ name: "f", point: "turn.end", handler: () => ({ action: "refuse", reason: "x" }) });
    expect([...hooks, single].map((h) => h.point)).toEqual(["input", "tool.before", "input", "output", "compaction"]);
  });
});
