/**
 * The hooks' pure logic (docs/hooks.md) with a fake `HookHost`: no Durable Objects, no sockets. What is pinned here
 * is the contract: the caller's order, each hook reading the one before it, the first stop ending the chain, fail
 * modes, the evidence's log, the trust boundary on what hooks and the model guard say, and each point's merge.
 */
import { describe, expect, it } from "vitest";
import { neutralize } from "../../src/core/neutralize";
import type { Summariser, SummaryDraft, SummaryRequest } from "../../src/history/summary";
import { globMatches, hooksAt, runChain, type HookAnswer, type HookHost, type HookScope } from "../../src/hooks/chain";
import { withCompactionHooks } from "../../src/hooks/compaction";
import { rejectionNote, reviewOutput } from "../../src/hooks/output";
import type { AgentInfo } from "../../src/protocol/frontend";
import type { HookCallParams, HookPoint, HookSpec } from "../../src/protocol/hooks";
import type { GuardModel } from "../../src/protocol/methods";
import type { Toolbox, ToolSpec } from "../../src/protocol/tools";
import { gateCalls, GUARD_DENIED_RESULT, HOOK_DENIED_RESULT, MODEL_GUARD, reviewResult } from "../../src/tools/gate";
import type { GuardModelInput, GuardModelVerdict } from "../../src/tools/guard-model";
import { SECRET_SAMPLES } from "../fixtures/secret-corpus";
import { agentInfo } from "./support/fake-scope";

const AWS = "AKIAIOSFODNN7EXAMPLE";
const GITHUB = SECRET_SAMPLES.find((s) => s.shape === "plain" && s.secrets[0]?.rule === "github-token")!.secrets[0]!.value;

// ---------------------------------------------------------------- fakes

function hook(id: string, point: HookPoint, over: Partial<HookSpec> = {}): HookSpec {
  const [app, name] = id.split(":") as [string, string];
  return { id, app, name, point, agents: ["*"], tools: null, order: 0, deadlineMs: 500, failMode: "open", ...over };
}

type Reply = HookAnswer | ((params: HookCallParams) => HookAnswer);
const answer = (value: unknown, ms = 3): HookAnswer => ({ ok: true, value, ms });
const failure = (reason: "offline" | "timeout" | "error" | "invalid", detail: string, ms = 9): HookAnswer => ({ ok: false, reason, detail, ms });

/** A host that answers each hook (by id) as told, and records every call made to it, in order. */
function fakeHost(replies: Record<string, Reply>): HookHost & { calls: { hook: string; params: HookCallParams }[] } {
  const calls: { hook: string; params: HookCallParams }[] = [];
  return {
    calls,
    async callHook(spec, params) {
      calls.push({ hook: spec.id, params: structuredClone(params) });
      const reply = replies[spec.id];
      if (reply === undefined) throw new Error(`no reply for ${spec.id}`);
      return typeof reply === "function" ? reply(params) : reply;
    },
  };
}

function scopeOf(hooks: HookSpec[], host: HookHost): HookScope {
  return { host, conversationId: "c-0000001", turnId: "t-0000001", agent: "app:agent", hooks, log: [] };
}

const spec = (name: string, annotations?: ToolSpec["annotations"]): ToolSpec => ({
  name,
  description: `${name} does its thing`,
  inputSchema: { type: "object", properties: {} },
  ...(annotations ? { annotations } : {}),
  online: true,
});
const agent = (over: Partial<AgentInfo> = {}): AgentInfo => agentInfo({ id: "app:agent", name: "Agent", systemPrompt: "", updatedAt: "", ...over });
const box = (over: Partial<Toolbox> = {}): Toolbox => ({ agent: agent(), bound: [], catalog: [], skills: [], unknown: [], ...over });
const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: JSON.stringify(args) });
const GUARD_MODEL: GuardModel = { upstream: "GUARD", failMode: "closed", deadlineMs: 3000, readOnly: false };

// ---------------------------------------------------------------- order and globs

describe("hooksAt and globMatches", () => {
  it("keeps the caller's order (not `order`), keeps only the point's hooks, and for a tool only those whose globs match it", () => {
    const late = hook("z:late", "tool.before", { order: 900 });
    const early = hook("a:early", "tool.before", { order: -900, tools: ["mail:send_*"] });
    const other = hook("m:other", "tool.after");
    const reads = hook("b:reads", "tool.before", { tools: ["mail:read", "cal:*"] });
    const all = [late, other, early, reads];
    expect(hooksAt(all, "tool.before")).toEqual([late, early, reads]);
    expect(hooksAt(all, "tool.before", "mail:send_now")).toEqual([late, early]);
    expect(hooksAt(all, "tool.before", "cal:list")).toEqual([late, reads]);
    expect(hooksAt(all, "tool.before", "mail:delete")).toEqual([late]);
    expect(hooksAt(all, "tool.after", "anything")).toEqual([other]);
    expect(hooksAt(all, "input")).toEqual([]);
  });

  it("reads `*` as any run, `?` as exactly one character, and everything else literally", () => {
    expect(globMatches("*", "")).toBe(true);
    expect(globMatches("*", "mail:send")).toBe(true);
    expect(globMatches("mail:*", "mail:")).toBe(true);
    expect(globMatches("mail:*", "mailx:send")).toBe(false);
    expect(globMatches("mail:send_*", "mail:send_now")).toBe(true);
    expect(globMatches("mail:send_*", "mail:read")).toBe(false);
    expect(globMatches("a?c", "abc")).toBe(true);
    expect(globMatches("a?c", "ac")).toBe(false);
    expect(globMatches("a?c", "abbc")).toBe(false);
    // Anchored at both ends.
    expect(globMatches("send", "mail:send")).toBe(false);
    expect(globMatches("mail", "mail:send")).toBe(false);
    // Regular-expression metacharacters are themselves.
    expect(globMatches("a.b", "a.b")).toBe(true);
    expect(globMatches("a.b", "axb")).toBe(false);
    expect(globMatches("a+b", "a+b")).toBe(true);
    expect(globMatches("a+b", "aab")).toBe(false);
    expect(globMatches("x(y)|z", "x(y)|z")).toBe(true);
    expect(globMatches("x(y)|z", "z")).toBe(false);
    expect(globMatches("[ab]", "a")).toBe(false);
    expect(globMatches("[ab]", "[ab]")).toBe(true);
    expect(globMatches("$^\\{1}", "$^\\{1}")).toBe(true);
    expect(globMatches("v1.*", "v1.2")).toBe(true);
    expect(globMatches("v1.*", "v12")).toBe(false);
  });
});

// ---------------------------------------------------------------- runChain

/** An `input` chain as the turn runs one: the state is the message, a rewrite replaces it, a refusal stops. */
function runInput(scope: HookScope, message: string) {
  return runChain(scope, "input", message, {
    payload: (m) => ({ message: m }),
    apply: (m, d) => (d.action === "rewrite" ? { state: d.message } : { state: m, stop: d.action === "refuse" }),
    closed: (_, why) => ({ action: "refuse", reason: why }),
  });
}

describe("runChain", () => {
  it("a fail-closed reason quotes a long failure cut at a space, never inside a secret (the next redaction sees it whole or not at all)", async () => {
    const detail = `${"word ".repeat(298)}${GITHUB} trailing text`;
    const scope = scopeOf([hook("a:long", "input", { failMode: "closed" })], fakeHost({ "a:long": failure("error", detail, 1) }));
    const reason = ((await runInput(scope, "hi")).stoppedBy!.decision as { reason: string }).reason;
    expect(reason).toBe(`a:long did not answer (error: ${"word ".repeat(298).trimEnd()} …) and fails closed`);
    expect(reason).not.toContain("ghp_");
  });

  it("a hub that fails to call a hook (the RPC throws) is the hook failing: its fail mode decides, the turn goes on", async () => {
    const open = scopeOf([hook("a:gone", "input")], fakeHost({}));
    expect((await runInput(open, "hi")).state).toBe("hi");
    expect(open.log).toEqual([{ hook: "a:gone", point: "input", ms: 0, verdict: "continue", failed: "error", detail: "no reply for a:gone" }]);
    const closed = scopeOf([hook("a:gone", "input", { failMode: "closed" })], fakeHost({}));
    const outcome = await runInput(closed, "hi");
    expect(outcome.stoppedBy?.decision).toEqual({ action: "refuse", reason: "a:gone did not answer (error: no reply for a:gone) and fails closed" });
  });

  it("gives each hook what the one before left; the first stop ends the chain; every call is logged in order with the host's ms", async () => {
    const host = fakeHost({
      "a:one": answer({ action: "rewrite", message: "hello one" }, 4),
      "b:two": (p) => answer({ action: "rewrite", message: `${(p.payload as { message: string }).message} two` }, 5),
      "c:stop": answer({ action: "refuse", reason: "no thanks" }, 6),
      "d:never": answer({ action: "rewrite", message: "unreachable" }),
    });
    const hooks = [hook("a:one", "input"), hook("x:mem", "memory"), hook("b:two", "input"), hook("c:stop", "input"), hook("d:never", "input")];
    const scope = scopeOf(hooks, host);
    const outcome = await runInput(scope, "hello");
    expect(host.calls.map((c) => c.hook)).toEqual(["a:one", "b:two", "c:stop"]);
    expect(host.calls.map((c) => c.params.payload)).toEqual([{ message: "hello" }, { message: "hello one" }, { message: "hello one two" }]);
    expect(host.calls[0]!.params).toEqual({ hook: "one", point: "input", conversationId: "c-0000001", turnId: "t-0000001", agent: "app:agent", payload: { message: "hello" } });
    expect(outcome).toEqual({ state: "hello one two", stoppedBy: { hook: hooks[3], decision: { action: "refuse", reason: "no thanks" } } });
    expect(scope.log).toEqual([
      { hook: "a:one", point: "input", ms: 4, verdict: "rewrite" },
      { hook: "b:two", point: "input", ms: 5, verdict: "rewrite" },
      { hook: "c:stop", point: "input", ms: 6, verdict: "refuse" },
    ]);
  });

  it("with no stop, runs every hook and returns the last state without stoppedBy", async () => {
    const host = fakeHost({ "a:one": answer({ action: "continue" }, 1), "b:two": answer({ action: "rewrite", message: "B" }, 2) });
    const scope = scopeOf([hook("a:one", "input"), hook("b:two", "input")], host);
    expect(await runInput(scope, "A")).toEqual({ state: "B" });
    expect(scope.log).toEqual([
      { hook: "a:one", point: "input", ms: 1, verdict: "continue" },
      { hook: "b:two", point: "input", ms: 2, verdict: "rewrite" },
    ]);
  });

  it("fails open as `continue`: the state is unchanged, the chain goes on, and the log has the failure and its detail", async () => {
    const host = fakeHost({ "a:slow": failure("timeout", "no answer within 500 ms", 500), "b:next": answer({ action: "rewrite", message: "after" }, 2) });
    const scope = scopeOf([hook("a:slow", "input"), hook("b:next", "input")], host);
    const outcome = await runInput(scope, "before");
    expect(outcome).toEqual({ state: "after" });
    expect(host.calls[1]!.params.payload).toEqual({ message: "before" });
    expect(scope.log).toEqual([
      { hook: "a:slow", point: "input", ms: 500, verdict: "continue", failed: "timeout", detail: "no answer within 500 ms" },
      { hook: "b:next", point: "input", ms: 2, verdict: "rewrite" },
    ]);
  });

  it("fails closed with the point's closed decision, which stops the chain like the hook's own would", async () => {
    const host = fakeHost({ "a:gone": failure("offline", "app a is not connected", 0), "b:never": answer({ action: "continue" }) });
    const hooks = [hook("a:gone", "input", { failMode: "closed" }), hook("b:never", "input")];
    const scope = scopeOf(hooks, host);
    const outcome = await runInput(scope, "hi");
    expect(outcome).toEqual({ state: "hi", stoppedBy: { hook: hooks[0], decision: { action: "refuse", reason: "a:gone did not answer (offline: app a is not connected) and fails closed" } } });
    expect(host.calls.map((c) => c.hook)).toEqual(["a:gone"]);
    expect(scope.log).toEqual([{ hook: "a:gone", point: "input", ms: 0, verdict: "refuse", failed: "offline", detail: "app a is not connected" }]);
  });

  it("reads an answer its point does not take as `invalid`, with a detail naming the point, then follows the fail mode", async () => {
    const host = fakeHost({
      "a:wrong": answer({ action: "rewrite", message: "a tool.before hook cannot rewrite" }, 7),
      "b:bare": answer({ action: "deny" }, 8),
      "c:closed": answer("not even an object", 1),
    });
    const hooks = [hook("a:wrong", "tool.before"), hook("b:bare", "tool.before"), hook("c:closed", "tool.before", { failMode: "closed" })];
    const scope = scopeOf(hooks, host);
    const outcome = await runChain(scope, "tool.before", "state", {
      tool: { name: "mail:send", toolCallId: "call-1" },
      payload: () => ({ request: null, call: { id: "call-1", tool: "mail:send", arguments: {} } }),
      apply: (s, d) => ({ state: s, stop: d.action === "deny" }),
      closed: (_, why) => ({ action: "deny", reason: why }),
    });
    const wrong = "not a decision 'tool.before' takes: action: Invalid discriminator value. Expected 'continue' | 'deny' | 'patch'";
    const bare = "not a decision 'tool.before' takes: reason: Invalid input: expected string, received undefined";
    expect(scope.log).toEqual([
      { hook: "a:wrong", point: "tool.before", toolCallId: "call-1", ms: 7, verdict: "continue", failed: "invalid", detail: wrong },
      { hook: "b:bare", point: "tool.before", toolCallId: "call-1", ms: 8, verdict: "continue", failed: "invalid", detail: bare },
      { hook: "c:closed", point: "tool.before", toolCallId: "call-1", ms: 1, verdict: "deny", failed: "invalid", detail: expect.stringMatching(/^not a decision 'tool\.before' takes: /) },
    ]);
    expect(outcome.stoppedBy?.hook).toBe(hooks[2]);
    expect(outcome.stoppedBy?.decision).toEqual({ action: "deny", reason: `c:closed did not answer (invalid: ${scope.log[2]!.detail}) and fails closed` });
  });

  it("redacts a secret in a failure's detail before the log holds it", async () => {
    const host = fakeHost({ "a:leaky": failure("error", `upstream refused key ${AWS} and token ${GITHUB}`, 12) });
    const scope = scopeOf([hook("a:leaky", "input")], host);
    await runInput(scope, "hi");
    expect(scope.log).toEqual([
      { hook: "a:leaky", point: "input", ms: 12, verdict: "continue", failed: "error", detail: "upstream refused key [REDACTED:aws-access-key-id] and token [REDACTED:github-token]" },
    ]);
    expect(JSON.stringify(scope.log)).not.toContain(AWS);
    expect(JSON.stringify(scope.log)).not.toContain(GITHUB.slice(4));
  });

  it("redacts a secret that straddles the 500-character cut of the detail (none of it reaches the log), never cutting inside the marker", async () => {
    const detail = `${"x".repeat(479)} ${GITHUB} and more after it`;
    const host = fakeHost({ "a:long": failure("error", detail, 1) });
    const scope = scopeOf([hook("a:long", "input")], host);
    await runInput(scope, "hi");
    expect(scope.log[0]!.detail).not.toContain(GITHUB.slice(0, 12));
    // The marker would cross character 500: the detail ends before it.
    expect(scope.log[0]!.detail).toBe(`${"x".repeat(479)} `);
  });

  it("logs toolCallId for tool hooks only", async () => {
    const host = fakeHost({ "a:after": answer({ action: "continue" }, 2), "b:in": answer({ action: "continue" }, 3) });
    const scope = scopeOf([hook("a:after", "tool.after"), hook("b:in", "input")], host);
    await runChain(scope, "tool.after", null, {
      tool: { name: "kit:t", toolCallId: "tc-9" },
      payload: () => ({ call: { id: "tc-9", tool: "kit:t", arguments: {} }, result: { text: "", isError: false } }),
      apply: (s) => ({ state: s }),
      closed: () => ({ action: "continue" }),
    });
    await runInput(scope, "x");
    expect(scope.log).toEqual([
      { hook: "a:after", point: "tool.after", toolCallId: "tc-9", ms: 2, verdict: "continue" },
      { hook: "b:in", point: "input", ms: 3, verdict: "continue" },
    ]);
    expect(Object.keys(scope.log[1]!)).not.toContain("toolCallId");
  });
});

// ---------------------------------------------------------------- gateCalls

/** A model guard that waits until `expected` questions are in flight before it answers any (or 200 ms): parallel questions all answer. */
function fakeGuard(expected: number, verdicts: Record<string, Omit<GuardModelVerdict, "ms">>) {
  const asked: { config: GuardModel; input: GuardModelInput }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => {
    release = resolve;
    setTimeout(resolve, 200);
  });
  return {
    asked,
    get maxInFlight() {
      return maxInFlight;
    },
    async askGuardModel(config: GuardModel, input: GuardModelInput): Promise<GuardModelVerdict> {
      asked.push({ config, input });
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      if (asked.length === expected) release();
      await all;
      inFlight--;
      const v = verdicts[input.call.tool];
      if (!v) throw new Error(`no verdict for ${input.call.tool}`);
      return { ...v, ms: 7 };
    },
  };
}

describe("gateCalls", () => {
  const nonce = "k7m2p9q4r8s3";
  const neutralizeText = (t: string) => neutralize(t, nonce);
  const toolbox = box({
    agent: agent({ guard: { rules: [{ tool: "mail:drop", verdict: "deny", reason: "never drop mail" }], model: GUARD_MODEL } }),
    bound: [spec("mail:send", { destructiveHint: true }), spec("mail:read", { readOnlyHint: true }), spec("mail:drop")],
  });

  it("rule denial first; the model guard asked in parallel only on unruled, non-read-only calls (and delegate); its verdicts logged; hooks only on what is left", async () => {
    const guard = fakeGuard(2, {
      "mail:send": { verdict: "deny", reason: `it would mail the key ${AWS} outside` },
      delegate: { verdict: "allow", reason: "the user asked for help" },
    });
    const host = fakeHost({ "h:watch": answer({ action: "continue" }, 1) });
    const scope = scopeOf([hook("h:watch", "tool.before")], host);
    const calls = [
      call("c1", "mail__drop", { id: 1 }),
      call("c2", "mail__read", { folder: "in" }),
      call("c3", "mail__send", { to: "x@example.com" }),
      call("c4", "delegate", { agent: "app:helper", task: "t" }),
      call("c5", "search_tools", { query: "q" }),
    ];
    const gate = await gateCalls(calls, { toolbox, neutralize: neutralizeText, hooks: scope, host: guard, request: "send the report" });

    // The model guard: mail:send and delegate only, both in flight at once.
    expect(guard.asked.map((a) => a.input)).toEqual([
      { agent: "app:agent", request: "send the report", call: { tool: "mail:send", arguments: { to: "x@example.com" }, annotations: { destructiveHint: true } } },
      { agent: "app:agent", request: "send the report", call: { tool: "delegate", arguments: { agent: "app:helper", task: "t" } } },
    ]);
    expect(guard.asked[0]!.config).toEqual(GUARD_MODEL);
    expect(guard.maxInFlight).toBe(2);

    const reason = "it would mail the key [REDACTED:aws-access-key-id] outside";
    expect(gate.allowed).toEqual([calls[1], calls[3], calls[4]]);
    expect(gate.denied).toEqual([
      {
        result: { toolCallId: "c1", content: `${GUARD_DENIED_RESULT} Its reason: never drop mail`, runtimeWritten: true },
        ran: { toolCallId: "c1", tool: "mail__drop", servedBy: "mail:drop", outcome: "denied", ms: 0, reason: "never drop mail", deniedBy: "guard" },
      },
      {
        result: { toolCallId: "c3", content: `${GUARD_DENIED_RESULT} Its reason: ${reason}`, runtimeWritten: true },
        ran: { toolCallId: "c3", tool: "mail__send", servedBy: "mail:send", outcome: "denied", ms: 7, reason, deniedBy: "model-guard" },
      },
    ]);
    // Hooks never hear of c1 (rules) nor c3 (model guard).
    expect(host.calls.map((c) => (c.params.payload as { call: { id: string } }).call.id)).toEqual(["c2", "c4", "c5"]);
    expect(scope.log).toEqual([
      { hook: MODEL_GUARD, point: "tool.before", toolCallId: "c3", ms: 7, verdict: "deny", detail: reason },
      { hook: MODEL_GUARD, point: "tool.before", toolCallId: "c4", ms: 7, verdict: "allow", detail: "the user asked for help" },
      { hook: "h:watch", point: "tool.before", toolCallId: "c2", ms: 1, verdict: "continue" },
      { hook: "h:watch", point: "tool.before", toolCallId: "c4", ms: 1, verdict: "continue" },
      { hook: "h:watch", point: "tool.before", toolCallId: "c5", ms: 1, verdict: "continue" },
    ]);
    expect(MODEL_GUARD).toBe("runtime:model-guard");
  });

  it("a read-only tool goes to the model guard when the guard reads reads too (readOnly: true)", async () => {
    const guard = fakeGuard(1, { "mail:read": { verdict: "allow", reason: "fine" } });
    const reads = box({ ...toolbox, agent: agent({ guard: { rules: [], model: { ...GUARD_MODEL, readOnly: true } } }) });
    const gate = await gateCalls([call("r1", "mail__read", {})], { toolbox: reads, neutralize: neutralizeText, host: guard, request: null });
    expect(guard.asked.map((a) => a.input.call.tool)).toEqual(["mail:read"]);
    expect({ allowed: gate.allowed, denied: gate.denied }).toEqual({ allowed: [call("r1", "mail__read", {})], denied: [] });
  });

  it("a model guard that could not decide is logged with why; its fail mode's verdict stands", async () => {
    const guard = fakeGuard(1, { "mail:send": { verdict: "allow", reason: "the guard model did not answer in time, so the call is allowed: the guard fails open", failed: "timeout" } });
    const scope = scopeOf([], fakeHost({}));
    const gate = await gateCalls([call("s1", "mail__send", {})], { toolbox, neutralize: neutralizeText, hooks: scope, host: guard });
    expect({ allowed: gate.allowed, denied: gate.denied }).toEqual({ allowed: [call("s1", "mail__send", {})], denied: [] });
    expect(scope.log).toEqual([
      { hook: MODEL_GUARD, point: "tool.before", toolCallId: "s1", ms: 7, verdict: "allow", failed: "timeout", detail: "the guard model did not answer in time, so the call is allowed: the guard fails open" },
    ]);
  });

  it("a hook's denial answers the call with its reason redacted once, its markers' brackets kept, and deniedBy the hook", async () => {
    const host = fakeHost({ "sec:no": answer({ action: "deny", reason: `leaks ${GITHUB} to <system_reminder> nonce ${nonce}` }, 4), "sec:later": answer({ action: "continue" }) });
    const hooks = [hook("sec:no", "tool.before", { tools: ["mail:*"] }), hook("sec:later", "tool.before")];
    const scope = scopeOf(hooks, host);
    const calls = [call("c1", "mail__send", { to: "a" })];
    const gate = await gateCalls(calls, { toolbox: box({ bound: toolbox.bound }), neutralize: neutralizeText, hooks: scope, request: "r" });
    const reason = "leaks [REDACTED:github-token] to (system_reminder) nonce (nonce)";
    expect(gate).toEqual({
      allowed: [],
      denied: [
        {
          result: { toolCallId: "c1", content: `${HOOK_DENIED_RESULT} Its reason: ${reason}`, runtimeWritten: true },
          ran: { toolCallId: "c1", tool: "mail__send", servedBy: "mail:send", outcome: "denied", ms: 0, reason, deniedBy: "sec:no" },
        },
      ],
    });
    expect(host.calls.map((c) => c.hook)).toEqual(["sec:no"]);
    expect(host.calls[0]!.params.payload).toEqual({ request: "r", call: { id: "c1", tool: "mail:send", arguments: { to: "a" } }, annotations: { destructiveHint: true } });
  });

  it("a hook failing closed denies with why, its secret redacted once in the result and in the log", async () => {
    const host = fakeHost({ "sec:down": failure("error", `crashed holding ${AWS}`, 3) });
    const scope = scopeOf([hook("sec:down", "tool.before", { failMode: "closed" })], host);
    const gate = await gateCalls([call("c1", "mail__send", {})], { toolbox: box({ bound: toolbox.bound }), neutralize: neutralizeText, hooks: scope });
    const reason = "sec:down did not answer (error: crashed holding [REDACTED:aws-access-key-id]) and fails closed";
    expect(gate.denied.map((d) => d.result.content)).toEqual([`${HOOK_DENIED_RESULT} Its reason: ${reason}`]);
    expect(gate.denied.map((d) => [d.ran.reason, d.ran.deniedBy])).toEqual([[reason, "sec:down"]]);
    expect(scope.log).toEqual([{ hook: "sec:down", point: "tool.before", toolCallId: "c1", ms: 3, verdict: "deny", failed: "error", detail: "crashed holding [REDACTED:aws-access-key-id]" }]);
  });

  it("a patch changes the arguments the call is given, and the next hook reads the patched ones", async () => {
    const host = fakeHost({
      "p:one": answer({ action: "patch", arguments: { to: "safe@example.com", cc: [] } }, 1),
      "p:two": (p) => answer({ action: "patch", arguments: { ...((p.payload as { call: { arguments: object } }).call.arguments), bcc: "audit" } }, 2),
    });
    const scope = scopeOf([hook("p:one", "tool.before", { tools: ["mail:*"] }), hook("p:two", "tool.before", { tools: ["mail:*"] })], host);
    const calls = [call("c1", "mail__send", { to: "rival@example.com" }), call("c2", "search_tools", { query: "q" })];
    const gate = await gateCalls(calls, { toolbox: box({ bound: toolbox.bound }), neutralize: neutralizeText, hooks: scope, request: null });
    expect(gate.denied).toEqual([]);
    expect(gate.allowed).toEqual([
      { id: "c1", name: "mail__send", arguments: JSON.stringify({ to: "safe@example.com", cc: [], bcc: "audit" }) },
      calls[1],
    ]);
    const forC1 = host.calls.filter((c) => (c.params.payload as { call: { id: string } }).call.id === "c1");
    expect(forC1.map((c) => (c.params.payload as { call: { arguments: unknown } }).call.arguments)).toEqual([{ to: "rival@example.com" }, { to: "safe@example.com", cc: [] }]);
  });

  it("a patch the tool's schema refuses is the hook's: the call is not run, and the model is not asked to fix what it did not write", async () => {
    const strict: ToolSpec = { ...spec("mail:send"), inputSchema: { type: "object", properties: { to: { type: "string" } }, required: ["to"], additionalProperties: false } };
    const host = fakeHost({ "p:bad": answer({ action: "patch", arguments: { to: 42 } }, 1) });
    const scope = scopeOf([hook("p:bad", "tool.before", { tools: ["mail:*"] })], host);
    const gate = await gateCalls([call("c1", "mail__send", { to: "a@example.com" })], { toolbox: box({ bound: [strict] }), neutralize: neutralizeText, hooks: scope, request: null });
    expect(gate.allowed).toEqual([]);
    expect(gate.denied.map((d) => [d.ran.outcome, d.ran.deniedBy])).toEqual([["denied", "p:bad"]]);
    expect(gate.denied[0]!.result.content).toMatch(/^\[not run: a hook denied this tool call\] Its reason: p:bad's patch of its arguments does not match mail:send's schema \(.+\); the call as made was not run$/);
    // A patch the schema takes runs.
    const good = fakeHost({ "p:ok": answer({ action: "patch", arguments: { to: "b@example.com" } }, 1) });
    const passed = await gateCalls([call("c2", "mail__send", { to: "a@example.com" })], { toolbox: box({ bound: [strict] }), neutralize: neutralizeText, hooks: scopeOf([hook("p:ok", "tool.before", { tools: ["mail:*"] })], good), request: null });
    expect(passed.allowed.map((c) => c.arguments)).toEqual([JSON.stringify({ to: "b@example.com" })]);
  });

  it("with no hooks and no model guard, every call passes unchanged and nothing is asked", async () => {
    const calls = [call("c1", "mail__send", { to: "a" }), call("c2", "delegate", {}), call("c3", "ghost__tool", {})];
    const host = fakeHost({});
    const scope = scopeOf([hook("x:in", "input")], host);
    const guard = fakeGuard(99, {});
    const gate = await gateCalls(calls, { toolbox: box({ bound: toolbox.bound }), neutralize: neutralizeText, hooks: scope, host: guard });
    expect({ allowed: gate.allowed, denied: gate.denied }).toEqual({ allowed: calls, denied: [] });
    expect(gate.allowed[0]).toBe(calls[0]);
    expect(host.calls).toEqual([]);
    expect(guard.asked).toEqual([]);
    expect(scope.log).toEqual([]);
    const bare = await gateCalls(calls, { toolbox: box({ bound: toolbox.bound }), neutralize: neutralizeText });
    expect({ allowed: bare.allowed, denied: bare.denied }).toEqual({ allowed: calls, denied: [] });
  });

  it("no tool.before hook is called for a call whose tool its globs do not match", async () => {
    const host = fakeHost({ "m:mail": answer({ action: "deny", reason: "no mail" }, 1), "d:deleg": answer({ action: "continue" }, 1) });
    const scope = scopeOf([hook("m:mail", "tool.before", { tools: ["mail:send"] }), hook("d:deleg", "tool.before", { tools: ["delegate"] })], host);
    const calls = [call("c1", "mail__read", {}), call("c2", "delegate", {}), call("c3", "mail__send", {})];
    const gate = await gateCalls(calls, { toolbox: box({ bound: toolbox.bound }), neutralize: neutralizeText, hooks: scope });
    expect(host.calls.map((c) => [c.hook, (c.params.payload as { call: { id: string } }).call.id])).toEqual([
      ["d:deleg", "c2"],
      ["m:mail", "c3"],
    ]);
    expect(gate.allowed).toEqual([calls[0], calls[1]]);
    expect(gate.denied.map((d) => [d.ran.toolCallId, d.ran.deniedBy])).toEqual([["c3", "m:mail"]]);
  });
});

// ---------------------------------------------------------------- reviewResult

describe("reviewResult", () => {
  const theCall = { id: "tc-1", tool: "kit:fetch", arguments: '{"url":"https://example.com"}' };

  it("gives the result as the last hook left it; each hook reads the one before's", async () => {
    const host = fakeHost({ "a:clean": answer({ action: "replace", text: "cleaned" }, 2), "b:flag": answer({ action: "replace", text: "flagged", isError: true }, 3) });
    const scope = scopeOf([hook("a:clean", "tool.after", { tools: ["kit:*"] }), hook("b:flag", "tool.after")], host);
    const out = await reviewResult(scope, theCall, { text: "raw", isError: false });
    expect(out).toEqual({ text: "flagged", isError: true });
    expect(host.calls.map((c) => c.params.payload)).toEqual([
      { call: { id: "tc-1", tool: "kit:fetch", arguments: { url: "https://example.com" } }, result: { text: "raw", isError: false } },
      { call: { id: "tc-1", tool: "kit:fetch", arguments: { url: "https://example.com" } }, result: { text: "cleaned", isError: false } },
    ]);
    expect(scope.log).toEqual([
      { hook: "a:clean", point: "tool.after", toolCallId: "tc-1", ms: 2, verdict: "replace" },
      { hook: "b:flag", point: "tool.after", toolCallId: "tc-1", ms: 3, verdict: "replace" },
    ]);
  });

  it("a hook failing closed withholds the result with the documented text", async () => {
    const host = fakeHost({ "a:guard": failure("timeout", "late", 500) });
    const scope = scopeOf([hook("a:guard", "tool.after", { failMode: "closed" })], host);
    const out = await reviewResult(scope, theCall, { text: "secret stuff", isError: false });
    expect(out).toEqual({ text: "[result withheld: a:guard could not review it]", isError: true });
    expect(scope.log).toEqual([{ hook: "a:guard", point: "tool.after", toolCallId: "tc-1", ms: 500, verdict: "replace", failed: "timeout", detail: "late" }]);
  });

  it("with no hook matching the tool, returns the result itself and asks nobody", async () => {
    const host = fakeHost({});
    const scope = scopeOf([hook("a:mail", "tool.after", { tools: ["mail:*"] }), hook("b:before", "tool.before")], host);
    const result = { text: "raw", isError: false };
    expect(await reviewResult(scope, theCall, result)).toBe(result);
    expect(await reviewResult(undefined, theCall, result)).toBe(result);
    expect(host.calls).toEqual([]);
  });
});

// ---------------------------------------------------------------- reviewOutput and rejectionNote

describe("reviewOutput", () => {
  const reply = { content: "Here it is.", tool_calls: [{ id: "tc-1", function: { name: "kit__x", arguments: '{"a":1}' } }] };

  it("accepts when every hook continues, after giving each the request, the answer and the attempt", async () => {
    const host = fakeHost({ "a:one": answer({ action: "continue" }, 1), "b:two": answer({ action: "continue" }, 2) });
    const scope = scopeOf([hook("a:one", "output"), hook("b:two", "output"), hook("c:in", "input")], host);
    expect(await reviewOutput(scope, { request: "do it", reply, attempt: 1 }, null)).toEqual({ verdict: "accept", hooks: 2 });
    expect(host.calls.map((c) => c.params.payload)).toEqual([
      { request: "do it", answer: { content: "Here it is.", toolCalls: [{ id: "tc-1", name: "kit__x", arguments: '{"a":1}' }] }, attempt: 1 },
      { request: "do it", answer: { content: "Here it is.", toolCalls: [{ id: "tc-1", name: "kit__x", arguments: '{"a":1}' }] }, attempt: 1 },
    ]);
    const nonString = await reviewOutput(scopeOf([hook("a:one", "output")], host), { request: null, reply: { content: [{ type: "text" }] }, attempt: 0 }, null);
    expect(nonString).toEqual({ verdict: "accept", hooks: 1 });
    expect(host.calls[2]!.params.payload).toEqual({ request: null, answer: { content: null, toolCalls: [] }, attempt: 0 });
  });

  it("rejects at the first rejection, with the note past the trust boundary; later hooks are not called", async () => {
    const nonce = "abcd2345efgh";
    const host = fakeHost({ "a:one": answer({ action: "continue" }, 1), "b:no": answer({ action: "reject", note: `do not print ${AWS}; nonce ${nonce}` }, 2), "c:never": answer({ action: "continue" }) });
    const scope = scopeOf([hook("a:one", "output"), hook("b:no", "output"), hook("c:never", "output")], host);
    const review = await reviewOutput(scope, { request: "r", reply, attempt: 0 }, nonce);
    expect(review).toEqual({ verdict: "reject", hooks: 3, hook: "b:no", note: "do not print [REDACTED:aws-access-key-id]; nonce (nonce)" });
    expect(host.calls.map((c) => c.hook)).toEqual(["a:one", "b:no"]);
  });

  it("a hook failing closed rejects, its note saying why with the detail redacted", async () => {
    const host = fakeHost({ "a:down": failure("error", `boom ${GITHUB}`, 4) });
    const scope = scopeOf([hook("a:down", "output", { failMode: "closed" })], host);
    expect(await reviewOutput(scope, { request: "r", reply, attempt: 0 }, null)).toEqual({
      verdict: "reject",
      hooks: 1,
      hook: "a:down",
      note: "a:down did not answer (error: boom [REDACTED:github-token]) and fails closed",
    });
    expect(scope.log).toEqual([{ hook: "a:down", point: "output", ms: 4, verdict: "reject", failed: "error", detail: "boom [REDACTED:github-token]" }]);
  });

  it("with no output hooks accepts at once", async () => {
    const host = fakeHost({});
    expect(await reviewOutput(scopeOf([hook("a:in", "input")], host), { request: "r", reply, attempt: 0 }, null)).toEqual({ verdict: "accept", hooks: 0 });
    expect(host.calls).toEqual([]);
  });

  it("rejectionNote is the runtime's tag with the hook and its note, with and without a nonce", () => {
    const review = { verdict: "reject" as const, hooks: 1, hook: "app:strict", note: "cite a source" };
    expect(rejectionNote(review, "n0nce2345abc")).toBe(
      '<system_reminder kind="output_rejected" nonce="n0nce2345abc">\nYour previous answer was not accepted (app:strict): cite a source\nAnswer again, taking this into account.\n</system_reminder>',
    );
    expect(rejectionNote(review, null)).toBe(
      '<system_reminder kind="output_rejected">\nYour previous answer was not accepted (app:strict): cite a source\nAnswer again, taking this into account.\n</system_reminder>',
    );
  });
});

// ---------------------------------------------------------------- withCompactionHooks

describe("withCompactionHooks", () => {
  function baseSummariser(): Summariser & { asked: SummaryRequest[] } {
    const asked: SummaryRequest[] = [];
    return {
      name: "base",
      asked,
      async summarise(request): Promise<SummaryDraft> {
        asked.push(request);
        return { text: "the base summary", state: { n: 1 }, loss: ["base loss"] };
      },
    };
  }
  const request: SummaryRequest = {
    previous: { text: "earlier", summariser: "base", state: null },
    messages: [
      { seq: 1, role: "user", content: "hi", createdAt: "2026-01-01T00:00:00Z" },
      { seq: 2, role: "assistant", content: "hello", createdAt: "2026-01-01T00:00:01Z" },
    ],
    maxTokens: 50,
  };

  it("the first summary wins (past the boundary) and later hooks are not called", async () => {
    const base = baseSummariser();
    const host = fakeHost({ "a:pass": answer({ action: "continue" }, 1), "b:write": answer({ action: "summary", summary: `They greeted; key ${AWS}.` }, 2), "c:never": answer({ action: "summary", summary: "no" }) });
    const scope = scopeOf([hook("a:pass", "compaction"), hook("b:write", "compaction"), hook("c:never", "compaction")], host);
    const wrapped = withCompactionHooks(base, scope, null);
    expect(wrapped.name).toBe("base");
    expect(await wrapped.summarise(request)).toEqual({ text: "They greeted; key [REDACTED:aws-access-key-id].", state: null, loss: ["written by b:write"] });
    expect(host.calls.map((c) => c.hook)).toEqual(["a:pass", "b:write"]);
    expect(host.calls[0]!.params.payload).toEqual({ messages: [{ role: "user", text: "hi" }, { role: "assistant", text: "hello" }], previousSummary: "earlier", maxTokens: 50, maxChars: 200 });
    expect(base.asked).toEqual([]);
    expect(scope.log).toEqual([
      { hook: "a:pass", point: "compaction", ms: 1, verdict: "continue" },
      { hook: "b:write", point: "compaction", ms: 2, verdict: "summary" },
    ]);
  });

  it("a summary over the token bound falls back to the base summariser, with a loss note first", async () => {
    const base = baseSummariser();
    const host = fakeHost({ "b:long": answer({ action: "summary", summary: "word ".repeat(400) }, 2), "c:never": answer({ action: "summary", summary: "short" }) });
    const scope = scopeOf([hook("b:long", "compaction"), hook("c:never", "compaction")], host);
    const draft = await withCompactionHooks(base, scope, null).summarise(request);
    expect(draft).toEqual({ text: "the base summary", state: { n: 1 }, loss: ["b:long's summary exceeded 50 tokens; base summarised instead", "base loss"] });
    expect(base.asked).toEqual([request]);
    expect(host.calls.map((c) => c.hook)).toEqual(["b:long"]);
  });

  it("hooks that all continue or fail (even closed) leave it to the base summariser, unchanged", async () => {
    const base = baseSummariser();
    const host = fakeHost({ "a:pass": answer({ action: "continue" }, 1), "b:down": failure("offline", "gone", 0) });
    const scope = scopeOf([hook("a:pass", "compaction"), hook("b:down", "compaction", { failMode: "closed" })], host);
    expect(await withCompactionHooks(base, scope, null).summarise(request)).toEqual({ text: "the base summary", state: { n: 1 }, loss: ["base loss"] });
    expect(scope.log.map((l) => [l.hook, l.verdict, l.failed])).toEqual([
      ["a:pass", "continue", undefined],
      ["b:down", "continue", "offline"],
    ]);
  });

  it("with no compaction hooks, is the base summariser object itself", () => {
    const base = baseSummariser();
    expect(withCompactionHooks(base, scopeOf([], fakeHost({})), null)).toBe(base);
    expect(withCompactionHooks(base, scopeOf([hook("a:out", "output"), hook("b:in", "input")], fakeHost({})), null)).toBe(base);
  });
});
