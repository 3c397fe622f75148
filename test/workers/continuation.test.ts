/**
 * A turn always carries the request it answers (issue 10, item 2): after a clear with calls in flight the
 * continuation still shows the user message its calls answer, results that do not fit become stand-ins, no model
 * input is ever without a user message, and a replay returns exactly the first answer.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { pairingProblems } from "../../src/core/groups";
import { textOf, type ChatMessage } from "../../src/protocol/messages";
import { conversationStub } from "../../src/conversation/stub";
import type { StoredMessage, TurnResult } from "../../src/protocol/frontend";
import { expectProblem, freshIdentity, Frontend } from "./support/runtime";
import { TestApp } from "./support/test-app";

const call = (id: string, name = "search") => ({ id, type: "function", function: { name, arguments: `{"q":"${id}"}` } });
/** About `lines` × 12 tokens of tool output. */
const output = (tag: string, lines: number) => `${tag}\n` + `line of ${tag} with words and numbers 1234 5678\n`.repeat(lines);

async function setup(compaction: Record<string, unknown> = { contextWindow: 8_192, outputReserve: 1_024 }) {
  const id = freshIdentity();
  const app = await TestApp.connect(id, "notes", { "editor-state": { name: "Editor State", current: () => ({ content: "cursor at line 1", title: "Editor State" }) } });
  const agent = await app.createAgent("assistant", ["notes:editor-state"]);
  const frontend = await Frontend.for(id);
  const { id: conversation } = await frontend.json<{ id: string }>("POST", "/v1/conversations", { compaction });
  const path = `/v1/conversations/${conversation}`;
  return {
    id,
    agent,
    frontend,
    conversation,
    path,
    turn: (body: Record<string, unknown>) => frontend.turn(conversation, { agent, ...body }),
    turnRequest: (body: Record<string, unknown>) => frontend.request("POST", `${path}/turns`, { agent, ...body }),
    append: (messages: unknown[]) => frontend.json("POST", `${path}/messages`, { messages }),
    clear: () => frontend.json("POST", `${path}/clear`),
    stored: async () => (await frontend.json<{ messages: StoredMessage[] }>("GET", `${path}/messages`)).messages,
  };
}

const roles = (messages: readonly ChatMessage[]) => messages.map((m) => m.role);
const userTexts = (messages: readonly ChatMessage[]) => messages.filter((m) => m.role === "user").map((m) => textOf(m));

/** Asks again with the same turnId and body: the answer must be the first one, byte for byte. */
async function expectReplay(s: Awaited<ReturnType<typeof setup>>, body: Record<string, unknown>, first: TurnResult): Promise<void> {
  const again = await s.turn({ ...body, turnId: first.turnId });
  expect(again.replayed).toBe(true);
  expect(JSON.stringify(again.messages)).toBe(JSON.stringify(first.messages));
}

describe("a continuation after a clear", () => {
  it("still shows the user's request its calls answer, and replays byte for byte", async () => {
    const s = await setup();
    await s.turn({ message: "Earlier question about the Q3 plan." });
    await s.append([{ role: "assistant", content: "The Q3 plan is on track." }]);
    await s.turn({ message: "Find every draft that mentions Heron." });
    await s.append([{ role: "assistant", content: null, tool_calls: [call("a"), call("b")] }]);
    await s.clear();
    const body = { toolResults: [{ tool_call_id: "a", content: "drafts/heron.md" }, { tool_call_id: "b", content: "notes/heron-launch.md" }] };
    const next = await s.turn(body);
    expect(roles(next.messages)).toEqual(["system", "user", "assistant", "tool", "tool"]);
    expect(userTexts(next.messages)[0]).toMatch(/^Find every draft that mentions Heron\./);
    // What the clear hid stays hidden.
    expect(JSON.stringify(next.messages)).not.toContain("Q3 plan");
    expect(pairingProblems(next.messages)).toEqual([]);
    await expectReplay(s, body, next);
  });

  it("keeps what is between the request and the calls in flight: earlier rounds of the same tool loop", async () => {
    const s = await setup();
    await s.turn({ message: "Migrate every module." });
    await s.append([{ role: "assistant", content: null, tool_calls: [call("r1")] }]);
    await s.turn({ toolResults: [{ tool_call_id: "r1", content: "module 1 migrated" }] });
    await s.append([{ role: "assistant", content: null, tool_calls: [call("r2")] }]);
    await s.clear();
    const body = { toolResults: [{ tool_call_id: "r2", content: "module 2 migrated" }] };
    const next = await s.turn(body);
    expect(roles(next.messages)).toEqual(["system", "user", "assistant", "tool", "assistant", "tool"]);
    expect(pairingProblems(next.messages)).toEqual([]);
    await expectReplay(s, body, next);
    // The next new message closes the loop normally.
    await s.append([{ role: "assistant", content: "Both modules are migrated." }]);
    const after = await s.turn({ message: "Thanks." });
    expect(pairingProblems(after.messages)).toEqual([]);
    expect(userTexts(after.messages).at(-1)).toMatch(/^Thanks\./);
  });

  it("shows stand-ins for results that do not fit, never an input without the request, and replays them byte for byte", async () => {
    // Usable 1,536 tokens, some 300 of them the system message and search_history (offered since the clear); each
    // result is trimmed to 800 when stored, so three of them cannot all fit.
    const s = await setup({ contextWindow: 1_792, outputReserve: 256 });
    await s.turn({ message: "Search the three archives for the Heron launch date." });
    await s.append([{ role: "assistant", content: null, tool_calls: [call("x", "search_archive"), call("y", "search_archive"), call("z", "search_archive")] }]);
    await s.clear();
    const body = { toolResults: ["x", "y", "z"].map((id) => ({ tool_call_id: id, content: output(`archive ${id}`, 120) })) };
    const next = await s.turn(body);
    expect(roles(next.messages)).toEqual(["system", "user", "assistant", "tool", "tool", "tool"]);
    expect(userTexts(next.messages)[0]).toMatch(/^Search the three archives/);
    expect(pairingProblems(next.messages)).toEqual([]);
    expect(next.usage.total).toBeLessThanOrEqual(1_536);
    const tools = next.messages.filter((m) => m.role === "tool").map((m) => textOf(m));
    const standIns = tools.filter((t) => t.startsWith("[tool result not shown:"));
    expect(standIns.length).toBeGreaterThan(0);
    expect(standIns[0]).toMatch(/^\[tool result not shown: search_archive returned ~\d+ tokens/);
    // The newest results are given up last: some result is still read in full.
    expect(tools.some((t) => t.startsWith("archive "))).toBe(true);
    expect(next.envelope.tools?.notShown?.map((n) => n.toolCallId)).toEqual(tools.flatMap((t, i) => (t.startsWith("[tool result not shown:") ? [["x", "y", "z"][i]] : [])));
    // Stored history keeps the results themselves.
    const stored = (await s.stored()).filter((m) => m.message.role === "tool").map((m) => textOf(m.message));
    expect(stored.every((t) => t.startsWith("archive "))).toBe(true);
    await expectReplay(s, body, next);
  });

  it("refuses a continuation whose request is out of view (cleared before its calls were made), storing nothing", async () => {
    const s = await setup();
    await s.turn({ message: "Find the drafts." });
    await s.clear();
    await s.append([{ role: "assistant", content: null, tool_calls: [call("late")] }]);
    const before = await s.stored();
    const body = { toolResults: [{ tool_call_id: "late", content: "drafts/a.md" }] };
    const problem = await expectProblem(await s.turnRequest(body), 409, "conflict");
    expect(problem.detail).toMatch(/user message/);
    expect(await s.stored()).toEqual(before);
    // The same results with a new message are answered.
    const next = await s.turn({ ...body, message: "Here is what the search found; go on." });
    expect(roles(next.messages)).toEqual(["system", "assistant", "tool", "user"]);
    expect(pairingProblems(next.messages)).toEqual([]);
  });

  it("refuses a continuation in a conversation that holds no user message at all", async () => {
    const s = await setup();
    await s.append([{ role: "assistant", content: null, tool_calls: [call("first")] }]);
    await expectProblem(await s.turnRequest({ toolResults: [{ tool_call_id: "first", content: "ok" }] }), 409, "conflict");
  });

  it("keeps the request through a forced compaction while calls are in flight", async () => {
    // The two newest groups are the tail; the request is older than that, behind two rounds of its own tool loop.
    const s = await setup({ contextWindow: 4_096, outputReserve: 512, tailTokens: 0, keepToolResults: 0 });
    for (let i = 0; i < 4; i++) {
      await s.turn({ message: `Question ${i} about module ${i}.` });
      await s.append([{ role: "assistant", content: `Module ${i} parses listings.` }]);
    }
    // A long request (a pasted listing): summarising it is what would bring the view to the target.
    const asked = await s.turn({ message: `Now migrate module 9. The listing:\n${output("listing", 200)}` });
    for (const round of ["m1", "m2"]) {
      await s.append([{ role: "assistant", content: null, tool_calls: [call(round)] }]);
      await s.turn({ toolResults: [{ tool_call_id: round, content: `module 9 ${round} done` }] });
    }
    await s.append([{ role: "assistant", content: null, tool_calls: [call("m3")] }]);
    const forced = await s.frontend.json<{ compaction: { summary: { coverage: { throughSeq: number } } | null } | null }>("POST", `${s.path}/compact`, { force: true });
    const requestSeq = (await s.stored()).find((m) => m.turnId === asked.turnId)!.seq;
    // Summarising through the request was what reached the target; it is protected, as on a continuation.
    expect(forced.compaction?.summary?.coverage.throughSeq ?? 0).toBeLessThan(requestSeq);
    const body = { toolResults: [{ tool_call_id: "m3", content: "module 9 part 3 migrated" }] };
    const next = await s.turn(body);
    expect(userTexts(next.messages).some((t) => t.startsWith("Now migrate module 9."))).toBe(true);
    expect(pairingProblems(next.messages)).toEqual([]);
    await expectReplay(s, body, next);
  });
});

describe("replays of stored turn records", () => {
  it("replays a turn whose stored view is empty as the input it answered, and a legacy record as the whole history", async () => {
    const s = await setup();
    const first = await s.turn({ message: "First." });
    await s.append([{ role: "assistant", content: "One." }]);
    const second = await s.turn({ message: "Second." });
    const stub = conversationStub(env, { tenant: s.id.tenant, user: s.id.user }, s.conversation);
    // A record written before views were stored ('[]', the column's default) read the whole history up to its message.
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("UPDATE turns SET history_view = '[]' WHERE turn_id = ?", second.turnId);
    });
    await expectReplay(s, { message: "Second." }, second);
    // A record whose model input held no stored message at all (usage says so) replays as exactly that.
    await runInDurableObject(stub, (_instance, state) => {
      const row = state.storage.sql.exec<{ result: string }>("SELECT result FROM turns WHERE turn_id = ?", first.turnId).one();
      const result = JSON.parse(row.result) as { usage: Record<string, number> };
      result.usage = { ...result.usage, history: 0, message: 0 };
      state.storage.sql.exec("UPDATE turns SET history_view = '[]', result = ? WHERE turn_id = ?", JSON.stringify(result), first.turnId);
    });
    const again = await s.turn({ message: "First.", turnId: first.turnId });
    expect(again.messages).toEqual([first.messages[0]]);
  });
});
