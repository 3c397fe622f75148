/**
 * Issue 10, item 2, as a property over 1,000 random histories driven through the HTTP API: user turns, appended
 * assistant replies and (parallel) tool calls, results appended or carried by continuation turns, approvals asked,
 * approved and denied, clears, forced compactions, small windows and tight turn budgets. For every turn:
 *
 * - its model input has a user message; a continuation whose request is in view shows it byte for byte;
 * - every assistant tool call is followed by all its results, and every result follows its call;
 * - a continuation is refused (409) only when no user message could be shown (a clear with no call in flight);
 *
 * and at the end of each history every turn's `turnId` replays byte-identical `messages`, and the stored history
 * pairs every result with its call.
 *
 * Seeded: PROPERTY_SEED (see test/unit/support/property-seed.ts) picks the run; a failure names the history and its
 * operations, so `PROPERTY_SEED=<seed>` replays it.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { pairingProblems } from "../../src/core/groups";
import { textOf, type ChatMessage } from "../../src/protocol/messages";
import type { StoredMessage, TurnResult } from "../../src/protocol/frontend";
import { seededRandom } from "../fixtures/seeded-random";
import { freshIdentity, Frontend } from "./support/runtime";
import { TestApp } from "./support/test-app";

const SEED = Number((env as unknown as { PROPERTY_SEED?: string }).PROPERTY_SEED ?? "20261120");
const HISTORIES = 1_000;
/** Histories driven at once, each in its own conversation. */
const CONCURRENCY = 16;
const TOOLS = ["search", "read_file", "delete_file", "send_mail", "list_calendar"];

type Rng = () => number;
const pick = <T,>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
const chance = (rng: Rng, p: number) => rng() < p;
const int = (rng: Rng, min: number, max: number) => min + Math.floor(rng() * (max - min + 1));

/** A tool result: usually short, sometimes hundreds of tokens (stored trimmed to 800). */
function resultText(rng: Rng, id: string): string {
  if (chance(rng, 0.6)) return `${id}: ${int(rng, 1, 9)} matches in drafts/${id}.md`;
  return `${id} output\n` + `row ${id} with words, figures ${int(rng, 100, 999)} and paths src/${id}.ts\n`.repeat(int(rng, 20, 90));
}

function userText(rng: Rng, h: number, n: number): string {
  const base = `Request ${n} of history ${h}: ${pick(rng, ["find the drafts", "tidy the calendar", "migrate module 7", "mail the team", "read the plan"])}.`;
  return chance(rng, 0.3) ? `${base} ${"Some more detail about what I need. ".repeat(int(rng, 2, 12))}` : base;
}

interface Call {
  id: string;
  name: string;
  state: "open" | "awaiting" | "approved";
}

interface Stats {
  turns: number;
  continuations: number;
  refused: number;
  afterClearWithCalls: number;
  standIns: number;
  compactingTurns: number;
  forced: number;
  clears: number;
  denied: number;
  approved: number;
}

/** One random history; returns what it exercised. Every check names the history and its operations so far. */
async function runHistory(frontend: Frontend, agent: string, h: number, stats: Stats): Promise<void> {
  const rng = seededRandom(SEED * 1_000 + h);
  const windowed = chance(rng, 0.7);
  const policy = windowed
    ? { contextWindow: pick(rng, [1_024, 1_536, 2_048, 4_096]), outputReserve: 256, keepToolResults: int(rng, 0, 3), tailTokens: pick(rng, [0, 200, 600]) }
    : {};
  const { id: conversation } = await frontend.json<{ id: string }>("POST", "/v1/conversations", { compaction: policy });
  const path = `/v1/conversations/${conversation}`;
  const log: string[] = [`history ${h} (seed ${SEED}) policy ${JSON.stringify(policy)}`];
  const where = () => log.join("\n  ");

  let calls: Call[] = [];
  let nextCall = 0;
  let users = 0;
  /** Whether a continuation can show its request (false after a clear with no call in flight, or before any user message). */
  let requestInView = false;
  /** Whether that request is shown as stored (a forced compaction after the model's reply may summarise it). */
  let requestVerbatim = false;
  let lastUserMessage: ChatMessage | null = null;
  let lastIsReply = false;
  let clearedWithCalls = false;
  const answered: { body: Record<string, unknown>; result: TurnResult }[] = [];

  const request = async (method: string, url: string, body?: unknown) => {
    const res = await frontend.request(method, url, body);
    return { status: res.status, text: await res.text() };
  };
  const expectStatus = (got: { status: number; text: string }, status: number) => expect(got.status, `${where()}\n→ ${got.text.slice(0, 400)}`).toBe(status);

  /** Checks every turn's input; returns the result. */
  const turn = async (body: Record<string, unknown>, continuation: boolean): Promise<TurnResult | null> => {
    const got = await request("POST", `${path}/turns`, { agent, ...body });
    if (continuation && got.status === 409 && !requestInView) {
      log.push("  → refused: no user message in view");
      stats.refused++;
      return null;
    }
    expectStatus(got, 200);
    const result = JSON.parse(got.text) as TurnResult;
    const { messages } = result;
    const context = `${where()}\n→ ${JSON.stringify(messages.map((m) => [m.role, textOf(m).slice(0, 60)]))}`;
    expect(messages.some((m) => m.role === "user"), `no user message\n${context}`).toBe(true);
    expect(pairingProblems(messages), context).toEqual([]);
    if (continuation) {
      stats.continuations++;
      if (clearedWithCalls) stats.afterClearWithCalls++;
      if (requestVerbatim) expect(messages.some((m) => JSON.stringify(m) === JSON.stringify(lastUserMessage)), `request not shown\n${context}`).toBe(true);
    } else {
      expect(messages.at(-1)?.role, context).toBe("user");
      lastUserMessage = messages.at(-1)!;
    }
    stats.turns++;
    stats.standIns += result.envelope.tools?.notShown?.length ?? 0;
    if (result.envelope.compaction) stats.compactingTurns++;
    answered.push({ body: { agent, ...body }, result });
    calls = [];
    clearedWithCalls = false;
    lastIsReply = false;
    return result;
  };

  /** Results for the open calls a turn or an append carries: each open or approved call answered with probability p. */
  const resultsFor = (eligible: Call[], p: number) => eligible.filter(() => chance(rng, p)).map((c) => ({ tool_call_id: c.id, content: resultText(rng, c.id) }));

  const operations = int(rng, 5, 8);
  // Mostly the user speaks first; sometimes the history begins with the model's calls (as a resumed one may).
  const first = chance(rng, 0.97) ? "user" : "calls";
  for (let step = 0; step < operations; step++) {
    const open = calls.length > 0;
    const op =
      step === 0
        ? first
        : open
          ? pick(rng, ["continue", "continue", "continue", "continue", "user", "results", "ask", "ask", "decide", "clear", "clear", ...(windowed ? ["compact"] : [])])
          : pick(rng, ["user", "user", "calls", "calls", "calls", "calls", "reply", "clear", ...(windowed ? ["compact"] : [])]);
    switch (op) {
      case "user": {
        users++;
        const body: Record<string, unknown> = { message: userText(rng, h, users) };
        // Results may ride along for some open calls (the rest are closed), and decisions for awaiting ones.
        const results = resultsFor(calls.filter((c) => c.state !== "awaiting"), 0.5);
        if (results.length) body.toolResults = results;
        const awaiting = calls.filter((c) => c.state === "awaiting" && chance(rng, 0.5));
        if (awaiting.length) body.approvals = awaiting.map((c) => ({ toolCallId: c.id, approved: false, reason: "Not now." }));
        if (!windowed && chance(rng, 0.2)) body.budget = { maxTokens: int(rng, 900, 2_000) };
        log.push(`user ${JSON.stringify({ ...body, message: `${String(body.message).length} chars`, toolResults: results.map((r) => `${r.tool_call_id}:${r.content.length}`) })}`);
        await turn(body, false);
        requestInView = true;
        requestVerbatim = true;
        break;
      }
      case "calls": {
        const n = pick(rng, [1, 1, 2, 3]);
        const made = Array.from({ length: n }, () => ({ id: `c${++nextCall}`, name: pick(rng, TOOLS), state: "open" as const }));
        log.push(`calls ${made.map((c) => `${c.id}:${c.name}`).join(",")}`);
        const content = chance(rng, 0.3) ? "Let me look that up." : null;
        const tool_calls = made.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify({ q: c.id }) } }));
        expectStatus(await request("POST", `${path}/messages`, { messages: [{ role: "assistant", content, tool_calls }] }), 201);
        calls = made;
        lastIsReply = false;
        break;
      }
      case "reply": {
        log.push("reply");
        expectStatus(await request("POST", `${path}/messages`, { messages: [{ role: "assistant", content: `Done with step ${step}.` }] }), 201);
        lastIsReply = true;
        break;
      }
      case "results": {
        const results = resultsFor(calls.filter((c) => c.state !== "awaiting"), 0.6);
        if (!results.length) break;
        log.push(`append results ${results.map((r) => `${r.tool_call_id}:${r.content.length}`).join(",")}`);
        expectStatus(await request("POST", `${path}/messages`, { messages: results.map((r) => ({ role: "tool", ...r })) }), 201);
        const done = new Set(results.map((r) => r.tool_call_id));
        calls = calls.filter((c) => !done.has(c.id));
        lastIsReply = false;
        break;
      }
      case "continue": {
        const toolResults: { tool_call_id: string; content: string }[] = [];
        const approvals: { toolCallId: string; approved: boolean; reason?: string }[] = [];
        for (const c of calls) {
          if (c.state === "awaiting") {
            const approved = chance(rng, 0.5);
            approvals.push(approved ? { toolCallId: c.id, approved } : { toolCallId: c.id, approved, reason: "Keep it." });
            if (approved) toolResults.push({ tool_call_id: c.id, content: resultText(rng, c.id) });
          } else if (chance(rng, 0.85)) toolResults.push({ tool_call_id: c.id, content: resultText(rng, c.id) });
        }
        if (!toolResults.length && !approvals.length) toolResults.push({ tool_call_id: calls[0]!.id, content: resultText(rng, calls[0]!.id) });
        const body: Record<string, unknown> = {};
        if (toolResults.length) body.toolResults = toolResults;
        if (approvals.length) body.approvals = approvals;
        if (chance(rng, 0.15)) body.budget = { maxTokens: int(rng, 700, 1_500) };
        log.push(`continue ${JSON.stringify({ results: toolResults.map((r) => `${r.tool_call_id}:${r.content.length}`), approvals, budget: body.budget })}`);
        stats.approved += approvals.filter((a) => a.approved).length;
        stats.denied += approvals.filter((a) => !a.approved).length;
        await turn(body, true);
        break;
      }
      case "ask": {
        const c = calls.find((c) => c.state === "open");
        if (!c) break;
        log.push(`ask approval ${c.id}`);
        expectStatus(await request("POST", `${path}/approvals`, { toolCallId: c.id }), 201);
        c.state = "awaiting";
        break;
      }
      case "decide": {
        const c = calls.find((c) => c.state === "awaiting");
        if (!c) break;
        const approved = chance(rng, 0.5);
        log.push(`decide ${c.id} ${approved ? "approved" : "denied"}`);
        expectStatus(await request("POST", `${path}/approvals/${c.id}`, approved ? { approved } : { approved, reason: "No." }), 200);
        if (approved) {
          c.state = "approved";
          stats.approved++;
        } else {
          // A denial answers the call.
          calls = calls.filter((x) => x !== c);
          lastIsReply = false;
          stats.denied++;
        }
        break;
      }
      case "clear": {
        log.push(`clear (calls open: ${calls.map((c) => c.id).join(",") || "none"})`);
        expectStatus(await request("POST", `${path}/clear`), 200);
        stats.clears++;
        // The calls in flight keep their request in view; with none in flight, nothing is.
        requestInView = calls.length > 0 && users > 0;
        requestVerbatim = requestInView;
        clearedWithCalls = calls.length > 0 && users > 0;
        break;
      }
      case "compact": {
        log.push("compact {force: true}");
        expectStatus(await request("POST", `${path}/compact`, { force: true }), 200);
        stats.forced++;
        // Once the model has replied, the request is no longer being answered: a summary may cover it.
        if (lastIsReply) requestVerbatim = false;
        break;
      }
    }
  }

  // Every answered turn replays exactly, after whatever came later (clears, compactions, more turns).
  for (const { body, result } of answered) {
    const got = await request("POST", `${path}/turns`, { ...body, turnId: result.turnId });
    expectStatus(got, 200);
    const again = JSON.parse(got.text) as TurnResult;
    expect(again.replayed, where()).toBe(true);
    expect(JSON.stringify(again.messages), `replay of ${result.turnId}\n${where()}`).toBe(JSON.stringify(result.messages));
  }
  // Stored history pairs every result with its call (calls at the very end may still wait).
  const stored = (await frontend.json<{ messages: StoredMessage[] }>("GET", `${path}/messages`)).messages.map((m) => m.message);
  expect(pairingProblems(stored, { pendingAllowed: true }), where()).toEqual([]);
}

describe("every turn carries the request it answers (property, workerd)", () => {
  it(`holds over ${HISTORIES} random histories with clears, calls in flight, approvals and compactions`, { timeout: 600_000 }, async () => {
    const id = freshIdentity();
    const app = await TestApp.connect(id, "files", { tree: { name: "File Tree", current: () => ({ content: "drafts/, notes/", title: "File Tree" }) } });
    const agent = await app.createAgent("assistant", ["files:tree"]);
    const frontend = await Frontend.for(id);
    const stats: Stats = { turns: 0, continuations: 0, refused: 0, afterClearWithCalls: 0, standIns: 0, compactingTurns: 0, forced: 0, clears: 0, denied: 0, approved: 0 };
    const started = Date.now();
    for (let from = 0; from < HISTORIES; from += CONCURRENCY) {
      await Promise.all(Array.from({ length: Math.min(CONCURRENCY, HISTORIES - from) }, (_, k) => runHistory(frontend, agent, from + k, stats)));
    }
    console.log(`turn-request property: seed ${SEED}, ${HISTORIES} histories in ${((Date.now() - started) / 1000).toFixed(1)} s`, stats);
    // The histories exercised what the property is about.
    expect(stats.afterClearWithCalls).toBeGreaterThan(50);
    expect(stats.standIns).toBeGreaterThan(20);
    expect(stats.refused).toBeGreaterThan(10);
    expect(stats.compactingTurns + stats.forced).toBeGreaterThan(50);
    expect(stats.denied + stats.approved).toBeGreaterThan(50);
    app.close();
  });
});
