/**
 * Hooks, end to end: apps on real sockets to `wrangler dev` register hooks in `initialize` through the SDK
 * (`ContextApp({ hooks })`), and a frontend's turns call them with `hooks/call` (docs/protocol.md, `hooks/call`).
 * Each test has its own tenant, so one test's hooks never see another's turns.
 */
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/protocol/messages";
import type { AppHook, HookCallInfo, TurnResult } from "../../src/sdk";
import { apiKey, appToken, createApp, freshIdentity, frontend, Network, nextEvent, record, runtimeUrl, sleep, startApp, type Identity } from "./support";

const ASSISTANT = { agentId: "assistant", name: "Assistant", systemPrompt: "You help the user." };

/** The app that owns the agent every turn here is for: `notes:assistant`. */
async function notesAgent(id: Identity): Promise<string> {
  const app = await startApp(id, { name: "notes" });
  const { agentId } = await app.createAgent(ASSISTANT);
  return agentId;
}

/** An app that serves only hooks (for `notes:*` agents unless the hook says otherwise). */
function hookApp(id: Identity, name: string, hooks: AppHook[]) {
  return startApp(id, { name, hooks: hooks.map((h) => ({ agents: ["notes:*"], ...h }) as AppHook) });
}

/** The text of a message, whatever its content's shape. */
function textOf(message: ChatMessage | undefined): string {
  const content = (message as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p: { text?: string }) => p.text ?? "").join("");
  return "";
}

/** The user's words in the model input's last message, before the runtime's appendix. */
function userWords(turn: TurnResult): string {
  const last = turn.messages.at(-1);
  expect(last?.role).toBe("user");
  return textOf(last).split("\n\n<system_reminder")[0]!;
}

/** POST …/turns by hand, to read the status and Content-Type of a refusal. */
async function rawTurn(id: Identity, conversation: string, body: Record<string, unknown>): Promise<{ status: number; type: string | null; problem: Record<string, unknown> }> {
  const response = await fetch(`${runtimeUrl()}/v1/conversations/${encodeURIComponent(conversation)}/turns`, {
    method: "POST",
    headers: { Authorization: `Bearer ${await apiKey(id)}`, "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, type: response.headers.get("Content-Type"), problem: (await response.json()) as Record<string, unknown> };
}

async function expectNotAccepted(id: Identity, conversation: string, body: Record<string, unknown>): Promise<string> {
  const { status, type, problem } = await rawTurn(id, conversation, body);
  expect(status, JSON.stringify(problem)).toBe(422);
  expect(type).toBe("application/problem+json");
  expect(problem).toMatchObject({ type: "urn:context-runtime:problem:not-accepted", status: 422 });
  return String(problem.detail);
}

/** Resolves once the hub has seen `app`'s socket go (its provider reads offline). */
async function untilOffline(id: Identity, provider: string): Promise<void> {
  const client = await frontend(id);
  for (let i = 0; i < 100; i++) {
    const { providers } = await client.providers();
    if (providers.find((p) => p.id === provider)?.online === false) return;
    await sleep(50);
  }
  throw new Error(`${provider} still online after 5 s`);
}

const STATE = { id: "state", name: "State", description: "a provider whose online flag tells the test the socket is gone", getCurrent: () => ({ title: "State", content: "-" }) };

describe("input hooks", () => {
  it("rewrite the user's message in order (order asc, then app name, then hook name), each seeing the one before, as the model reads and history stores it", async () => {
    const id = freshIdentity();
    const agent = await notesAgent(id);
    const seen: Record<string, string[]> = {};
    const append = (key: string, tag: string): AppHook => ({
      name: key.split(":")[1]!,
      point: "input",
      order: 0,
      handler: ({ message }) => {
        (seen[key] ??= []).push(message);
        return { action: "rewrite", message: `${message} ${tag}` };
      },
    });
    // Started in an order unlike the running order, so registration order cannot be what decides.
    await hookApp(id, "gamma", [
      { ...append("gamma:zz", "[gz]"), order: 10 },
      { ...append("gamma:aa", "[ga]"), order: 10 },
    ]);
    await hookApp(id, "alpha", [{ ...append("alpha:tag", "[a]"), order: 10 }]);
    await hookApp(id, "beta", [{ ...append("beta:tag", "[b]"), order: -5 }]);
    // Without `agents`, a hook sees only its own app's agents: never notes:assistant's turns.
    await startApp(id, { name: "delta", hooks: [{ ...append("delta:own", "[d]"), order: -100 }] });

    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent });
    const turn = await client.turn(conversation, { agent, message: "hello" });

    expect(userWords(turn)).toBe("hello [b] [a] [ga] [gz]");
    expect(seen).toEqual({ "beta:tag": ["hello"], "alpha:tag": ["hello [b]"], "gamma:aa": ["hello [b] [a]"], "gamma:zz": ["hello [b] [a] [ga]"] });
    const calls = turn.envelope.hooks!.calls;
    expect(calls.map((c) => [c.hook, c.point, c.verdict])).toEqual([
      ["beta:tag", "input", "rewrite"],
      ["alpha:tag", "input", "rewrite"],
      ["gamma:aa", "input", "rewrite"],
      ["gamma:zz", "input", "rewrite"],
    ]);
    for (const call of calls) {
      expect(call.ms).toEqual(expect.any(Number));
      expect(call.ms).toBeGreaterThanOrEqual(0);
      expect(call.failed).toBeUndefined();
    }
    expect(turn.envelope.hooks!.points).toEqual(["input"]);

    // History keeps the message as the model read it.
    const { messages } = await client.messages(conversation);
    expect(messages.filter((m) => m.message.role === "user").map((m) => m.message)).toEqual([turn.messages.at(-1)]);
  });

  it("a refusal answers 422 not-accepted naming the hook and its reason, and stores nothing", async () => {
    const id = freshIdentity();
    const agent = await notesAgent(id);
    const received: HookCallInfo[] = [];
    await hookApp(id, "moderator", [
      {
        name: "calm",
        point: "input",
        handler: ({ message }, info) => {
          received.push(info);
          return message.includes("!!!") ? { action: "refuse", reason: "no shouting, please" } : undefined;
        },
      },
    ]);
    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent });

    const detail = await expectNotAccepted(id, conversation, { agent, message: "DO IT NOW!!!", turnId: "refused-1" });
    expect(detail).toBe("hook 'moderator:calm' refused the message: no shouting, please");
    expect(received).toEqual([{ conversationId: conversation, turnId: "refused-1", agent: "notes:assistant", hook: "calm" }]);
    expect((await client.messages(conversation)).messages).toEqual([]);

    // The next, calm message goes through, and is the only one stored.
    const turn = await client.turn(conversation, { agent, message: "Please do it." });
    expect(userWords(turn)).toBe("Please do it.");
    expect(turn.envelope.hooks!.calls.map((c) => [c.hook, c.verdict])).toEqual([["moderator:calm", "continue"]]);
    const { messages } = await client.messages(conversation);
    expect(messages.map((m) => [m.message.role, textOf(m.message).split("\n\n<system_reminder")[0]])).toEqual([["user", "Please do it."]]);
  });
});

describe("tool.before hooks", () => {
  it("deny a call (the tool never runs, the model reads why) and patch another (the tool runs with the patched arguments)", async () => {
    const id = freshIdentity();
    const ran: Record<string, unknown>[] = [];
    const files = await startApp(id, {
      name: "files",
      tools: [
        {
          name: "delete",
          description: "Delete a file.",
          inputSchema: { type: "object", properties: { path: { type: "string" }, dryRun: { type: "boolean" } }, required: ["path"], additionalProperties: false },
          handler: (args) => {
            ran.push(args);
            return `deleted ${String(args.path)}${args.dryRun ? " (dry run)" : ""}`;
          },
        },
      ],
    });
    const { agentId: agent } = await files.createAgent({ ...ASSISTANT, tools: ["delete"] });
    const payloads: unknown[] = [];
    const ended: unknown[] = [];
    await hookApp(id, "guard", [
      {
        name: "safety",
        point: "tool.before",
        agents: ["files:*"],
        tools: ["files:*"],
        handler: (payload) => {
          payloads.push(payload);
          const path = String((payload.call.arguments as { path?: unknown }).path);
          if (path.startsWith("/etc/")) return { action: "deny", reason: "system files are off limits" };
          return { action: "patch", arguments: { path, dryRun: true } };
        },
      },
      { name: "audit", point: "turn.end", agents: ["files:*"], handler: (payload, info) => void ended.push({ turnId: info.turnId, ...payload }) },
    ]);

    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent });
    await client.turn(conversation, { agent, message: "Tidy up my files." });
    const reply = {
      role: "assistant" as const,
      content: null,
      tool_calls: [
        { id: "call_etc", type: "function" as const, function: { name: "files__delete", arguments: JSON.stringify({ path: "/etc/passwd" }) } },
        { id: "call_tmp", type: "function" as const, function: { name: "files__delete", arguments: JSON.stringify({ path: "/tmp/cache" }) } },
      ],
    };
    const turn = await client.turn(conversation, { agent, reply });

    // The denied call never reached the app; the other ran with the hook's arguments, not the model's.
    expect(ran).toEqual([{ path: "/tmp/cache", dryRun: true }]);
    const results = new Map(turn.messages.flatMap((m) => (m.role === "tool" ? [[(m as { tool_call_id: string }).tool_call_id, textOf(m)] as const] : [])));
    expect(results.get("call_etc")).toBe("[not run: a hook denied this tool call] Its reason: system files are off limits");
    expect(results.get("call_tmp")).toContain("deleted /tmp/cache (dry run)");

    // The hook read the user's request and each call as the model made it.
    expect(payloads).toHaveLength(2);
    expect(payloads).toEqual(
      expect.arrayContaining([
        { request: "Tidy up my files.", call: { id: "call_etc", tool: "files:delete", arguments: { path: "/etc/passwd" } } },
        { request: "Tidy up my files.", call: { id: "call_tmp", tool: "files:delete", arguments: { path: "/tmp/cache" } } },
      ]),
    );
    const calls = turn.envelope.hooks!.calls;
    expect(calls.map((c) => [c.hook, c.point, c.toolCallId, c.verdict]).sort()).toEqual([
      ["guard:safety", "tool.before", "call_etc", "deny"],
      ["guard:safety", "tool.before", "call_tmp", "patch"],
    ]);
    const ranCalls = [...(turn.envelope.tools?.ran ?? [])].sort((a, b) => a.toolCallId.localeCompare(b.toolCallId));
    expect(ranCalls.map((r) => [r.toolCallId, r.outcome, r.deniedBy, r.reason])).toEqual([
      ["call_etc", "denied", "guard:safety", "system files are off limits"],
      ["call_tmp", "ok", undefined, undefined],
    ]);

    // turn.end hears of both turns, the second with how each call ended.
    for (let i = 0; i < 100 && ended.length < 2; i++) await sleep(20);
    expect(ended).toHaveLength(2);
    expect(ended[1]).toEqual({
      turnId: turn.turnId,
      continuation: true,
      toolCalls: expect.arrayContaining([
        { id: "call_etc", tool: "files:delete", outcome: "denied" },
        { id: "call_tmp", tool: "files:delete", outcome: "ok" },
      ]),
      tokens: turn.usage.total,
    });
  });
});

describe("fail modes, over a real socket", () => {
  const late = (failMode: "open" | "closed"): AppHook => ({
    name: "late",
    point: "input",
    deadlineMs: 100,
    failMode,
    handler: async ({ message }) => {
      await sleep(400);
      return { action: "rewrite", message: `${message} [too late]` };
    },
  });

  it("a hook past its deadline failing open: the turn goes on unchanged, recorded as a timeout with verdict continue", async () => {
    const id = freshIdentity();
    const agent = await notesAgent(id);
    await hookApp(id, "slow", [late("open")]);
    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent });
    const started = Date.now();
    const turn = await client.turn(conversation, { agent, message: "hello" });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(userWords(turn)).toBe("hello");
    expect(turn.envelope.hooks!.calls).toHaveLength(1);
    expect(turn.envelope.hooks!.calls[0]).toMatchObject({ hook: "slow:late", point: "input", verdict: "continue", failed: "timeout" });
    expect(turn.envelope.hooks!.calls[0]!.ms).toBeGreaterThanOrEqual(90);

    // The answer that comes after the deadline is dropped, and the next turn calls the hook afresh.
    await client.appendMessages(conversation, [{ role: "assistant", content: "hi" }]);
    await sleep(400);
    const next = await client.turn(conversation, { agent, message: "again" });
    expect(userWords(next)).toBe("again");
    expect(next.envelope.hooks!.calls).toMatchObject([{ hook: "slow:late", verdict: "continue", failed: "timeout" }]);
  });

  it("a hook whose handler throws: open goes on recorded as an error, closed refuses", async () => {
    const id = freshIdentity();
    const agent = await notesAgent(id);
    const throwing = (name: string, failMode: "open" | "closed", when: string): AppHook => ({
      name,
      point: "input",
      failMode,
      handler: ({ message }) => {
        if (message.includes(when)) throw new Error(`${name} broke`);
      },
    });
    await hookApp(id, "buggy", [throwing("lenient", "open", "x"), throwing("strict", "closed", "y")]);
    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent });
    const turn = await client.turn(conversation, { agent, message: "x marks the spot" });
    expect(userWords(turn)).toBe("x marks the spot");
    expect(turn.envelope.hooks!.calls.map((c) => [c.hook, c.verdict, c.failed])).toEqual([
      ["buggy:lenient", "continue", "error"],
      ["buggy:strict", "continue", undefined],
    ]);
    expect(turn.envelope.hooks!.calls[0]!.detail).toContain("lenient broke");
    await client.appendMessages(conversation, [{ role: "assistant", content: "found it" }]);
    const detail = await expectNotAccepted(id, conversation, { agent, message: "y not" });
    expect(detail).toMatch(/^hook 'buggy:strict' refused the message: buggy:strict did not answer \(error: .*strict broke.*\) and fails closed$/);
  });

  it("a hook past its deadline failing closed: the input is refused with 422 not-accepted, nothing stored", async () => {
    const id = freshIdentity();
    const agent = await notesAgent(id);
    await hookApp(id, "slow", [late("closed")]);
    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent });
    const detail = await expectNotAccepted(id, conversation, { agent, message: "hello" });
    expect(detail).toMatch(/^hook 'slow:late' refused the message: slow:late did not answer \(timeout: .*\) and fails closed$/);
    expect((await client.messages(conversation)).messages).toEqual([]);
  });

  it("an app that registered hooks and disconnected: its closed hook refuses, its open hook is skipped as offline", async () => {
    const closedId = freshIdentity();
    const openId = freshIdentity();
    const agents = await Promise.all([notesAgent(closedId), notesAgent(openId)]);
    let called = 0;
    const hook = (failMode: "open" | "closed"): AppHook => ({
      name: "gone",
      point: "input",
      failMode,
      handler: () => {
        called += 1;
        return { action: "refuse", reason: "should never be asked" };
      },
    });
    const apps = await Promise.all([
      startApp(closedId, { name: "away", contexts: [STATE], hooks: [{ ...hook("closed"), agents: ["notes:*"] }] }),
      startApp(openId, { name: "away", contexts: [STATE], hooks: [{ ...hook("open"), agents: ["notes:*"] }] }),
    ]);
    await Promise.all(apps.map((app) => app.close()));
    await Promise.all([untilOffline(closedId, "away:state"), untilOffline(openId, "away:state")]);

    const closedClient = await frontend(closedId);
    const { id: refusedConversation } = await closedClient.createConversation({ agent: agents[0] });
    const detail = await expectNotAccepted(closedId, refusedConversation, { agent: agents[0], message: "hello" });
    expect(detail).toMatch(/^hook 'away:gone' refused the message: away:gone did not answer \(offline: .*\) and fails closed$/);
    expect((await closedClient.messages(refusedConversation)).messages).toEqual([]);

    const openClient = await frontend(openId);
    const { id: conversation } = await openClient.createConversation({ agent: agents[1] });
    const turn = await openClient.turn(conversation, { agent: agents[1], message: "hello" });
    expect(userWords(turn)).toBe("hello");
    expect(turn.envelope.hooks!.calls).toEqual([{ hook: "away:gone", point: "input", ms: expect.any(Number), verdict: "continue", failed: "offline", detail: expect.any(String) }]);
    expect(called).toBe(0);
  });
});

describe("hooks across a reconnect", () => {
  it("are skipped as offline while the app is away and apply again once the SDK reconnects and re-registers them", async () => {
    const id = freshIdentity();
    const agent = await notesAgent(id);
    const network = new Network();
    const app = createApp(id, {
      name: "tagger",
      token: await appToken(id, "tagger"),
      contexts: [STATE],
      WebSocket: network.WebSocket,
      hooks: [{ name: "tag", point: "input", agents: ["notes:*"], handler: ({ message }) => ({ action: "rewrite", message: `${message} [t]` }) }],
    });
    const registrations = record(app, "registered");
    await app.connect();
    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent });
    const before = await client.turn(conversation, { agent, message: "one" });
    expect(userWords(before)).toBe("one [t]");
    await client.appendMessages(conversation, [{ role: "assistant", content: "ok" }]);

    const disconnected = nextEvent(app, "disconnected");
    await network.cut();
    await disconnected;
    await untilOffline(id, "tagger:state");
    const away = await client.turn(conversation, { agent, message: "two" });
    expect(userWords(away)).toBe("two");
    expect(away.envelope.hooks!.calls).toMatchObject([{ hook: "tagger:tag", verdict: "continue", failed: "offline" }]);
    await client.appendMessages(conversation, [{ role: "assistant", content: "ok" }]);

    // initialize replaces an app's hooks: they apply after this only because the SDK sent them again.
    const reregistered = nextEvent(app, "registered");
    network.restore();
    await reregistered;
    expect(registrations).toHaveLength(2);
    const after = await client.turn(conversation, { agent, message: "three" });
    expect(userWords(after)).toBe("three [t]");
    expect(after.envelope.hooks!.calls.map((c) => [c.hook, c.verdict, c.failed])).toEqual([["tagger:tag", "rewrite", undefined]]);
  });
});

describe("turn.end hooks", () => {
  it("hear of each turn once, after it, with the turn's id and a summary, and answer nothing", async () => {
    const id = freshIdentity();
    const agent = await notesAgent(id);
    const heard: { payload: unknown; info: HookCallInfo }[] = [];
    await hookApp(id, "audit", [
      {
        name: "log",
        point: "turn.end",
        handler: (payload, info) => {
          heard.push({ payload, info });
        },
      },
    ]);
    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent });
    const turn = await client.turn(conversation, { agent, message: "hello", turnId: "audited-1" });
    expect(turn.turnId).toBe("audited-1");
    for (let i = 0; i < 100 && heard.length === 0; i++) await sleep(20);
    await sleep(200); // room for a second, wrong, notification to arrive
    expect(heard).toEqual([
      {
        payload: { continuation: false, toolCalls: [], tokens: turn.usage.total },
        info: { conversationId: conversation, turnId: "audited-1", agent: "notes:assistant", hook: "log" },
      },
    ]);
    // A notification follows the turn: nothing to record in its evidence.
    expect(turn.envelope.hooks!.calls).toEqual([]);
  });
});
