/**
 * The turn's pipeline in plain Node: `takeTurn` over a `ConversationScope` of fakes (test/unit/support/fake-scope.ts),
 * stage by stage, as a user of the runtime relies on it. The same behaviour inside workerd, through the HTTP API and
 * the real hub, is test/workers/turn-pipeline.test.ts and its neighbours.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { resultKey } from "../../src/artifacts/read";
import { endConversation } from "../../src/conversation/lifecycle";
import { takeTurn, type TurnOptions } from "../../src/conversation/turn/index";
import { MEMORY_FENCE_CLOSE, MEMORY_FENCE_PREAMBLE, MemoryStore, clearListingCache } from "../../src/memory";
import type { AgentInfo, TurnResult } from "../../src/protocol/frontend";
import { TurnBody } from "../../src/protocol/http";
import { textOf } from "../../src/protocol/messages";
import { agentInfo, fakeConversation, hookSpec, provider, toolSpec, type FakeConversation, type FakeScopeOptions } from "./support/fake-scope";

const AGENT = "notes:assistant";
const STAGES = ["load", "pull", "input", "output", "run", "admit", "recall", "identify", "tools", "reminders", "assembled", "compact", "assemble", "commit"];
const TOKEN = `ghp_${"A1b2C3d4E5".repeat(3)}x7Y8z9`;

/** A conversation whose agent reads the editor's state and may call `notes:lookup`. */
async function setup(agent: Partial<AgentInfo> = {}, options: FakeScopeOptions = {}) {
  const c = await fakeConversation(options);
  let editor = "draft one";
  c.apps
    .addAgent(agentInfo({ id: AGENT, attachedContexts: ["notes:editor"], tools: ["notes:lookup"], ...agent }))
    .addTool({ spec: toolSpec("notes:lookup", "Look a word up in the user's notes.", { q: { type: "string" } }), run: (args) => `found ${JSON.stringify(args)}` })
    .addProvider(provider("notes:editor", { current: () => ({ content: editor, title: "Editor" }) }));
  return { c, edit: (text: string) => (editor = text) };
}

/** A turn as the Conversation object takes one: the body parsed at the edge, the scope over the row as stored now. */
function turn(c: FakeConversation, body: Record<string, unknown>, options?: TurnOptions) {
  return takeTurn(c.scope(), TurnBody.parse({ agent: AGENT, ...body }), options);
}

async function answered(c: FakeConversation, body: Record<string, unknown>, options?: TurnOptions): Promise<TurnResult> {
  const result = await turn(c, body, options);
  if (!result.ok) throw new Error(`turn refused: ${result.problem.type}: ${result.problem.detail}`);
  return result.value;
}

/** An assistant reply as an OpenAI client returns it, calling one tool. */
function reply(id: string, name: string, args: unknown) {
  return { role: "assistant", content: null, refusal: null, tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }] };
}

const decided = (result: TurnResult, stage: string) => result.envelope.stages!.find((s) => s.stage === stage)!.decided;
const lastText = (result: TurnResult) => textOf(result.messages.at(-1)!);
const stored = (c: FakeConversation) => c.db.messages.list().map((m) => m.message);
const eventTypes = (c: FakeConversation) => c.db.events.page(0, 500).map((e) => [e.type, e.subject]);

beforeEach(() => clearListingCache());

describe("takeTurn in Node: load", () => {
  it("replays a turnId answered before, byte for byte, without asking the apps again or storing twice", async () => {
    const { c } = await setup();
    const first = await answered(c, { turnId: "t-1", message: "hello" });
    const asked = c.apps.callsTo("prepareTurn").length;
    const again = await answered(c, { turnId: "t-1", message: "hello" });
    expect(again.replayed).toBe(true);
    expect(first.replayed).toBe(false);
    expect({ ...again, replayed: false }).toEqual(first);
    expect(c.apps.callsTo("prepareTurn")).toHaveLength(asked);
    expect(stored(c)).toHaveLength(1);
  });

  it("refuses the same turnId with another body as a conflict, storing nothing", async () => {
    const { c } = await setup();
    await answered(c, { turnId: "t-1", message: "one" });
    const other = await turn(c, { turnId: "t-1", message: "two" });
    expect(other).toMatchObject({ ok: false, problem: { type: "conflict" } });
    expect(stored(c).map(textOf)).toEqual([expect.stringMatching(/^one/)]);
  });

  it("refuses a turn once the conversation has ended, before any app is asked", async () => {
    const { c } = await setup();
    await endConversation(c.scope());
    const refused = await turn(c, { message: "still there?" });
    expect(refused).toEqual({ ok: false, problem: { type: "conflict", detail: "this conversation has ended" } });
    expect(c.apps.callsTo("prepareTurn")).toEqual([]);
    expect(c.apps.callsTo("conversationEnded")).toEqual([[c.conversationId, "2025-03-01T09:00:00.000Z"]]);
  });

  it("gives a conversation made before nonces its nonce at its first turn, and every tag carries it", async () => {
    const { c } = await setup({}, { legacy: true });
    expect(c.db.conversation.get()!.nonce).toBeNull();
    const result = await answered(c, { message: "hi" });
    const nonce = c.db.conversation.get()!.nonce!;
    expect(nonce).toMatch(/^[0-9a-z]{8,}$/);
    expect(lastText(result)).toContain(`<system_reminder nonce="${nonce}">`);
  });
});

describe("takeTurn in Node: the stages' trace", () => {
  it("names every stage in order, each with what it decided", async () => {
    const { c } = await setup({ attachedContexts: ["notes:editor", "notes:blank"] });
    c.apps.addProvider(provider("notes:blank", { current: () => null }));
    const result = await answered(c, { message: "hello" });
    expect(result.envelope.stages!.map((s) => s.stage)).toEqual(STAGES);
    expect(decided(result, "load")).toEqual({ continuation: false, maxTokens: 0, openCalls: 0, decisions: 0 });
    expect(decided(result, "pull")).toMatchObject({ agent: AGENT, pulled: 2, present: 1, empty: 1, missing: 0, reused: 0, hooks: 0 });
    expect(decided(result, "tools")).toMatchObject({ bound: 1, runtime: [] });
    expect(decided(result, "assemble")).toMatchObject({ tokens: result.usage.total, messages: 2 });
    expect(decided(result, "commit")).toEqual({ stored: 1, ledger: 1 });
    // The stored record is the one answered: a replay reads it back.
    expect(JSON.parse(c.db.turns.get(result.turnId)!.result).envelope.stages).toEqual(result.envelope.stages);
  });
});

describe("takeTurn in Node: pull", () => {
  it("admits contexts past the trust boundary: a secret in one never reaches the model, and is audited by keyed hash", async () => {
    const { c, edit } = await setup();
    edit(`deploy with ${TOKEN} tonight`);
    const result = await answered(c, { message: "what does the editor say?" });
    expect(lastText(result)).toContain("[Context: Editor]\ndeploy with [REDACTED:");
    expect(JSON.stringify(result)).not.toContain(TOKEN);
    expect(JSON.stringify(c.db.events.page(0, 100))).not.toContain(TOKEN);
    expect(result.envelope.contexts!.redactions).toEqual([expect.objectContaining({ id: "notes:editor", offset: 12, length: TOKEN.length, hash: expect.stringMatching(/^[0-9a-f]{16,}$/) })]);
    expect(eventTypes(c)).toContainEqual(["context.redacted", null]);
  });

  it("injects a context once: the same version again is reused and injects nothing; a new version is injected as updated", async () => {
    const { c, edit } = await setup();
    const first = await answered(c, { message: "one" });
    expect(first.envelope.injection.map((i) => [i.id, i.marker])).toEqual([["notes:editor", "first"]]);

    const second = await answered(c, { message: "two" });
    expect(decided(second, "pull")).toMatchObject({ present: 1, reused: 1 });
    expect(second.envelope.injection).toEqual([]);
    expect(lastText(second)).toBe("two");
    expect(decided(second, "commit")).toEqual({ stored: 1, ledger: 0 });

    edit("draft two");
    const third = await answered(c, { message: "three" });
    expect(decided(third, "pull")).toMatchObject({ reused: 0 });
    expect(third.envelope.injection.map((i) => i.marker)).toEqual(["updated"]);
    expect(lastText(third)).toContain("[Context updated: Editor]\ndraft two");
    const [entry] = c.db.ledger.list();
    expect(c.db.ledger.list()).toHaveLength(1);
    expect(entry).toMatchObject({ key: "notes:editor", kind: "context", messageSeq: 3 });
  });

  it("reports a provider no app registered, and one that failed, as missing; the turn goes on", async () => {
    const { c } = await setup({ attachedContexts: ["notes:editor", "notes:gone", "notes:broken"] });
    c.apps.addProvider(provider("notes:broken", { current: () => { throw new Error("socket closed"); } }));
    const result = await answered(c, { message: "hello" });
    expect(result.missing).toEqual([
      { id: "notes:gone", reason: "unknown_provider", detail: "no app has registered provider 'notes:gone'", severity: "warning" },
      { id: "notes:broken", reason: "error", detail: "Error: socket closed", severity: "warning" },
    ]);
    expect(decided(result, "pull")).toMatchObject({ pulled: 3, present: 1, missing: 2 });
    expect(lastText(result)).toContain("[Context: Editor]");
    expect(eventTypes(c).filter(([type]) => type === "context.missing")).toEqual([["context.missing", "notes:gone"], ["context.missing", "notes:broken"]]);
  });

  it("attaches a context the body names, pulling it with the agent's own; an unregistered one refuses the turn", async () => {
    const { c } = await setup();
    c.apps.addProvider(provider("notes:page", { get: (id) => ({ content: `page ${id} text` }) }));
    const result = await answered(c, { message: "see page 7", attachments: [{ context: "notes:page", itemId: "7" }] });
    expect(lastText(result)).toContain("[Context: page: 7]\npage 7 text");
    expect(c.db.attachments.list().map((a) => a.key)).toEqual(["notes:page#7"]);
    const [, , runtime] = c.apps.callsTo("prepareTurn")[0]!;
    expect(runtime).toEqual([{ ref: "notes:page", itemId: "7" }]);

    const refused = await turn(c, { message: "and this", attachments: [{ context: "notes:nowhere" }] });
    expect(refused).toMatchObject({ ok: false, problem: { type: "not-found" } });
    expect(stored(c)).toHaveLength(1);
  });

  it("refuses an agent no app registered, storing nothing", async () => {
    const { c } = await setup();
    const refused = await turn(c, { agent: "notes:nobody", message: "hi" });
    expect(refused).toMatchObject({ ok: false, problem: { type: "not-found", detail: "no agent 'notes:nobody' is registered; an app creates it with agents/create" } });
    expect(stored(c)).toEqual([]);
  });
});

describe("takeTurn in Node: the agent's toolbox, cached per registry version", () => {
  it("tells the hub the toolbox it keeps, works on when the hub sends none, and takes a changed one", async () => {
    const { c } = await setup();
    const first = await answered(c, { message: "one" });
    const version = c.apps.toolboxVersion;
    const second = await answered(c, { message: "two" });
    const asked = c.apps.callsTo("prepareTurn");
    expect(asked.map((call) => call[4])).toEqual([null, version]);
    expect(c.apps.prepared.map((p) => p.toolbox?.agent.id ?? null)).toEqual([AGENT, null]);
    expect(c.cache.toolbox).toMatchObject({ agent: AGENT, version });
    // The hub answered `toolbox: null` (its version is current): the turn offers the kept toolbox's tools.
    expect(second.tools!.map((t) => t.function.name)).toEqual(["notes__lookup"]);
    expect(second.tools).toEqual(first.tools);

    c.apps.addTool({ spec: toolSpec("notes:append", "Append to a note."), run: () => "appended" });
    c.apps.addAgent(agentInfo({ id: AGENT, attachedContexts: ["notes:editor"], tools: ["notes:lookup", "notes:append"] }));
    const third = await answered(c, { message: "three" });
    expect(third.tools!.map((t) => t.function.name)).toEqual(["notes__lookup", "notes__append"]);
    expect(c.cache.toolbox!.version).toBe(c.apps.toolboxVersion);
    expect(c.cache.toolbox!.version).not.toBe(version);
  });
});

describe("takeTurn in Node: input and output hooks", () => {
  it("an input hook's rewrite is the user message stored and read, and the evidence names the hook", async () => {
    const { c } = await setup();
    c.apps.addHook({ spec: hookSpec("guard:polite", "input"), answer: (params) => ({ action: "rewrite", message: `${(params.payload as { message: string }).message}, please` }) });
    const result = await answered(c, { message: "summarise the draft" });
    expect(lastText(result).split("\n")[0]).toBe("summarise the draft, please");
    expect(textOf(stored(c)[0]!)).toMatch(/^summarise the draft, please/);
    expect(c.apps.callsTo("callHook").map(([, params]) => params)).toEqual([expect.objectContaining({ hook: "polite", point: "input", agent: AGENT, payload: { message: "summarise the draft" } })]);
    expect(decided(result, "input")).toEqual({ hooks: 1, rewritten: true });
    expect(result.envelope.hooks!.calls).toEqual([expect.objectContaining({ hook: "guard:polite", point: "input", verdict: "rewrite" })]);
  });

  it("an input hook's refusal refuses the turn: nothing stored, no tool run, no ledger entry", async () => {
    const { c } = await setup();
    c.apps.addHook({ spec: hookSpec("guard:no", "input"), answer: () => ({ action: "refuse", reason: "not on a Sunday" }) });
    const refused = await turn(c, { turnId: "t-x", message: "do it" });
    expect(refused).toEqual({ ok: false, problem: { type: "not-accepted", detail: "hook 'guard:no' refused the message: not on a Sunday", issues: [{ path: "message", message: "not on a Sunday" }] } });
    expect(stored(c)).toEqual([]);
    expect(c.db.turns.get("t-x")).toBeNull();
    expect(c.db.ledger.list()).toEqual([]);
    expect(c.db.events.page(0, 100)).toEqual([]);
  });

  it("an output hook's rejection refuses a reply before any of its calls runs", async () => {
    const { c } = await setup();
    await answered(c, { message: "look it up" });
    c.apps.addHook({ spec: hookSpec("guard:review", "output"), answer: () => ({ action: "reject", note: "ask the user first" }) });
    const refused = await turn(c, { reply: reply("call_1", "notes__lookup", { q: "moth" }) });
    expect(refused).toMatchObject({ ok: false, problem: { type: "not-accepted", detail: "hook 'guard:review' rejected the model's answer: ask the user first" } });
    expect(c.apps.callsTo("callTool")).toEqual([]);
    expect(stored(c)).toHaveLength(1);
  });
});

describe("takeTurn in Node: run and admit", () => {
  it("runs a reply's call to an app's tool on the app, and admits its result redacted and trimmed", async () => {
    const { c } = await setup({ resultPolicies: { lookup: { strategy: "head", maxTokens: 40 } } });
    c.apps.addTool({ spec: toolSpec("notes:lookup", "Look a word up."), run: () => `key ${TOKEN}\n${"a long line of notes about moths and lamps. ".repeat(40)}` });
    await answered(c, { message: "look up moth" });
    const result = await answered(c, { reply: reply("call_1", "notes__lookup", { q: "moth" }) });

    expect(c.apps.callsTo("callTool")).toEqual([["notes:lookup", { q: "moth" }, { conversationId: c.conversationId, toolCallId: "call_1" }]]);
    expect(result.envelope.tools!.ran).toEqual([expect.objectContaining({ toolCallId: "call_1", tool: "notes__lookup", servedBy: "notes:lookup", outcome: "ok" })]);
    const [evidence] = result.envelope.tools!.results;
    expect(evidence).toMatchObject({ toolCallId: "call_1", tool: "notes__lookup", redactions: [expect.objectContaining({ length: TOKEN.length })], trimmed: { strategy: "head" } });
    expect(evidence!.trimmed!.originalTokens).toBeGreaterThan(300);
    expect(evidence!.trimmed!.keptTokens).toBeLessThanOrEqual(40);
    const read = textOf(result.messages.find((m) => m.role === "tool")!);
    expect(read).toMatch(/^key \[REDACTED:/);
    expect(stored(c).map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(textOf(stored(c)[2]!)).toBe(read);
    expect(JSON.stringify(stored(c))).not.toContain(TOKEN);
    expect(decided(result, "run")).toMatchObject({ served: 1, failed: 0 });
    expect(decided(result, "load")).toMatchObject({ continuation: true });
    expect(eventTypes(c)).toContainEqual(["tool.call.ran", "call_1"]);
  });

  it("closes a call nobody answered with a stand-in when the user moves on", async () => {
    const { c } = await setup({ tools: [] });
    await answered(c, { message: "one" });
    const result = await answered(c, { reply: reply("call_9", "frontend_tool", {}), message: "never mind" });
    expect(result.envelope.tools!.unanswered).toEqual([{ id: "call_9", name: "frontend_tool" }]);
    expect(stored(c).map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(textOf(stored(c)[2]!)).toMatch(/^\[no result: this tool call was not answered/);
    expect(c.apps.callsTo("callTool")).toEqual([]);
  });

  it("starts a subagent for a delegate call through the conversations port; the call stays open", async () => {
    const { c } = await setup({ subagents: ["notes:researcher"] });
    c.apps.addAgent(agentInfo({ id: "notes:researcher", description: "Finds things out." }));
    await answered(c, { message: "find out about moths" });
    const result = await answered(c, { reply: reply("call_d", "delegate", { agent: "notes:researcher", task: "Find the moth's range." }) });
    expect(c.delegations).toEqual([expect.objectContaining({ agent: "notes:researcher", task: "Find the moth's range.", parent: { conversationId: c.conversationId, toolCallId: "call_d", depth: 1 } })]);
    expect(result.envelope.tools!.ran).toEqual([expect.objectContaining({ toolCallId: "call_d", outcome: "delegated" })]);
    expect(c.db.messages.openCalls().calls.get("call_d")).toBe("delegate");
    expect(c.db.delegations.list()).toEqual([expect.objectContaining({ toolCallId: "call_d", agent: "notes:researcher", childConversationId: c.delegations[0]!.childConversationId })]);
  });
});

describe("takeTurn in Node: recall", () => {
  it("shows memory stored for the conversation, fenced, in the user message's appendix", async () => {
    const { c } = await setup({ memory: true });
    const memory = new MemoryStore(c.kv as unknown as KVNamespace);
    const [written] = await memory.write([{ ns: { ...c.owner, level: "session", session: c.conversationId }, text: "The moth launch moved to June 12.", source: "test", trust: "curated" }]);
    expect(written!.status).toBe("created");
    const result = await answered(c, { message: "when is the moth launch?" });
    const nonce = c.db.conversation.get()!.nonce!;
    const fence = new RegExp(`<memory_fence nonce="${nonce}">\n${MEMORY_FENCE_PREAMBLE}\n(.*)\n${MEMORY_FENCE_CLOSE}`).exec(lastText(result));
    expect(fence, "no memory fence in the appendix").not.toBeNull();
    expect(fence![1]).toMatch(/The moth launch moved to June 12\.$/);
    expect(decided(result, "recall")).toMatchObject({ memories: 1, omitted: 0 });
  });

  it("lets a memory hook drop what was recalled: the model never reads it", async () => {
    const { c } = await setup({ memory: true });
    const memory = new MemoryStore(c.kv as unknown as KVNamespace);
    await memory.write([{ ns: { ...c.owner, level: "user" }, text: "The moth launch is confidential until June.", source: "test", trust: "curated" }]);
    c.apps.addHook({ spec: hookSpec("guard:memory", "memory"), answer: () => ({ action: "change", keep: [] }) });
    const result = await answered(c, { message: "when is the moth launch?" });
    expect(lastText(result)).not.toContain("confidential");
    expect(decided(result, "recall")).toMatchObject({ memories: 0, omitted: 1 });
  });
});

describe("takeTurn in Node: identify", () => {
  it("freezes the system prompt at the first turn; another agent brings its persona as a note", async () => {
    const { c } = await setup({ systemPrompt: "You are the first prompt." });
    const first = await answered(c, { message: "one" });
    expect(textOf(first.messages[0]!)).toMatch(/^You are the first prompt\./);
    c.apps.addAgent({ ...c.apps.agents.get(AGENT)!, systemPrompt: "You are a rewritten prompt." });
    const second = await answered(c, { message: "two" });
    expect(second.messages[0]).toEqual(first.messages[0]);
    expect(decided(second, "identify")).toEqual({ frozen: true, switching: false });

    c.apps.addAgent(agentInfo({ id: "notes:critic", name: "Critic", tools: ["notes:lookup"], systemPrompt: "You criticise drafts." }));
    const third = await answered(c, { agent: "notes:critic", message: "three" });
    expect(third.messages[0]).toEqual(first.messages[0]);
    expect(decided(third, "identify")).toEqual({ frozen: true, switching: true });
    expect(lastText(third)).toContain("You criticise drafts.");
    expect(c.db.conversation.get()).toMatchObject({ agent: "notes:critic", personaAgent: "notes:critic" });
  });
});

describe("takeTurn in Node: reminders and the assembled hooks", () => {
  it("staples a mentioned item read through its provider; a mention of no registered provider refuses the turn", async () => {
    const { c } = await setup();
    c.apps.addProvider(provider("notes:page", { get: (id) => ({ content: `page ${id}: the moth section`, title: `Page ${id}` }) }));
    const result = await answered(c, { message: "look at @page", mentions: [{ context: "notes:page", itemId: "4" }] });
    expect(c.apps.callsTo("item")).toEqual([["notes:page", "4"]]);
    expect(lastText(result)).toContain("page 4: the moth section");
    expect(decided(result, "reminders")).toEqual({ kinds: ["mentions"] });
    const refused = await turn(c, { message: "and @nothing", mentions: [{ context: "notes:nowhere", itemId: "1" }] });
    expect(refused).toMatchObject({ ok: false, problem: { type: "not-found" } });
    expect(stored(c)).toHaveLength(1);
  });

  it("an assembled hook withholds a context and adds a block of its own, in the runtime's tag naming it", async () => {
    const { c } = await setup();
    c.apps.addHook({ spec: hookSpec("guard:blocks", "assembled"), answer: () => ({ action: "change", remove: ["notes:editor"], add: [{ title: "House rule", content: "Answer in French." }] }) });
    const result = await answered(c, { message: "hello" });
    const text = lastText(result);
    expect(text).not.toContain("draft one");
    expect(text).toContain('kind="hook" source="guard:blocks"');
    expect(text).toContain("[House rule]\nAnswer in French.");
    expect(result.missing).toEqual([{ id: "notes:editor", reason: "withheld", detail: "a hook withheld it this turn", severity: "warning" }]);
    expect(c.db.ledger.list()).toEqual([]);
    const [, params] = c.apps.callsTo("callHook")[0]! as [unknown, { payload: { blocks: { id: string }[] } }];
    expect(params.payload.blocks.map((b) => b.id)).toEqual(["notes:editor"]);
  });

  it("tells the turn.end hooks of the stored turn, with its tokens", async () => {
    const { c } = await setup();
    c.apps.addHook({ spec: hookSpec("audit:end", "turn.end"), answer: () => ({}) });
    const result = await answered(c, { message: "hello" });
    expect(c.apps.callsTo("notifyHook").map(([, params]) => params)).toEqual([
      { hook: "end", point: "turn.end", conversationId: c.conversationId, turnId: result.turnId, agent: AGENT, payload: { continuation: false, toolCalls: [], tokens: result.usage.total } },
    ]);
    expect(c.apps.callsTo("callHook")).toEqual([]);
  });
});

describe("takeTurn in Node: compact and commit", () => {
  const FILLER = "the planning notes go on about rooms, times and people. ".repeat(40);

  it("compacts in a small window: a summary heads the input, search_history joins the tools on that turn", async () => {
    const { c } = await setup({}, { compaction: { contextWindow: 4_096, outputReserve: 512, tailTokens: 600 } });
    const turns: TurnResult[] = [];
    for (let i = 0; i < 20 && !turns.at(-1)?.envelope.compaction?.summary; i++) turns.push(await answered(c, { message: `note ${i}: ${FILLER}` }));
    const compacting = turns.at(-1)!;
    const before = turns.at(-2)!;
    expect(compacting.envelope.compaction?.summary, "no compaction wrote a summary in 20 turns").toBeTruthy();
    expect(decided(compacting, "compact")).toMatchObject({ compacted: true, summary: true, offered: ["search_history"] });
    expect(before.tools!.map((t) => t.function.name)).toEqual(["notes__lookup"]);
    expect(compacting.tools!.map((t) => t.function.name)).toEqual(["notes__lookup", "search_history"]);
    const nonce = c.db.conversation.get()!.nonce!;
    const summary = textOf(compacting.messages[1]!);
    expect(summary).toMatch(new RegExp(`^<summary_fence covers="messages #1–#\\d+" trust="user" summariser="digest" nonce="${nonce}">\nEarlier messages of this conversation, summarised`));
    expect(summary).toContain("[#1] note 0: the planning notes");
    expect(compacting.usage.total).toBeLessThanOrEqual(4_096 - 512);
    expect(c.summaries).toHaveLength(1);
    expect(c.summaries[0]).toMatchObject({ contextWindow: 4_096 });
    // Stored messages are only appended: the compaction hides them from the model's view, never from the store.
    expect(stored(c)).toHaveLength(turns.length);

    const after = await answered(c, { message: "and now?" });
    expect(after.tools!.map((t) => t.function.name)).toEqual(["notes__lookup", "search_history"]);
    expect(decided(after, "compact")).toMatchObject({ summary: true });
  });

  it("keeps the full text of the tool results a compaction clears in R2, under the conversation", async () => {
    const { c } = await setup({}, { compaction: { contextWindow: 4_096, outputReserve: 512, tailTokens: 600, keepToolResults: 1 } });
    c.apps.addTool({ spec: toolSpec("notes:lookup", "Look a word up."), run: (args) => `result for ${JSON.stringify(args)}: ${"a line of the notes found. ".repeat(60)}` });
    let cleared: TurnResult | null = null;
    for (let i = 0; i < 12 && !cleared; i++) {
      await answered(c, { message: `look up ${i}` });
      const result = await answered(c, { reply: reply(`call_${i}`, "notes__lookup", { q: `word ${i}` }) });
      if (result.envelope.compaction?.cleared.length) cleared = result;
    }
    expect(cleared, "no compaction cleared a result").not.toBeNull();
    const seqs = cleared!.envelope.compaction!.cleared.map((r) => r.seq);
    expect([...c.artifacts.objects.keys()]).toEqual(seqs.map((seq) => resultKey(c.owner, c.conversationId, seq)));
    for (const seq of seqs) {
      const full = textOf(c.db.messages.list(seq, seq)[0]!.message);
      expect(full).toMatch(/^result for \{"q":"word \d+"\}: a line of the notes found\./);
      expect(c.artifacts.objects.get(resultKey(c.owner, c.conversationId, seq))).toEqual({ text: full, contentType: "text/plain; charset=utf-8" });
    }
    // The model reads a stub in each one's place, pointing at the kept text.
    const stubs = cleared!.messages.filter((m) => m.role === "tool").map(textOf).filter((t) => t.startsWith("[tool result cleared to save context: notes__lookup"));
    expect(stubs.map((t) => /the full text is at (\S+)\]$/.exec(t)?.[1])).toEqual(cleared!.envelope.compaction!.cleared.map((r) => r.pointer));
    expect(cleared!.envelope.history!.stubs).toBe(seqs.length);
  });

  it("commits the turn's record, ledger and events in one go", async () => {
    const { c } = await setup();
    const result = await answered(c, { turnId: "t-1", message: "one" });
    expect(c.db.turns.get("t-1")).toMatchObject({ systemPrompt: textOf(result.messages[0]!), userSeq: 1, historyView: [[1, 1]] });
    expect(c.db.ledger.list()).toEqual([{ kind: "context", key: "notes:editor", title: "Editor", version: c.cache.contexts.get("notes:editor")!.version, messageSeq: 1 }]);
    expect(eventTypes(c)).toEqual([["context.injection.applied", "notes:editor"], ["turn.assembled", AGENT], ["context.include", null]]);
    const { agent, identity } = c.db.conversation.get()!;
    expect(agent).toBe(AGENT);
    expect(textOf(result.messages[0]!).startsWith(identity!)).toBe(true);
  });
});
