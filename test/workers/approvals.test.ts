import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { APPROVAL_EXPIRED_RESULT, DENIED_RESULT } from "../../src/conversation/approvals";
import { pairingProblems } from "../../src/core/groups";
import { textOf } from "../../src/protocol/messages";
import { conversationStub } from "../../src/conversation/stub";
import type { RequestMessages } from "../../src/protocol/history";
import type { ApprovalInfo, ContextEvent, StoredMessage } from "../../src/protocol/frontend";
import { expectProblem, freshIdentity, Frontend } from "./support/runtime";
import { TestApp } from "./support/test-app";

/** A small window, so a few exchanges reach the trigger. */
const POLICY = { contextWindow: 4_096, outputReserve: 512, tailTokens: 600, keepToolResults: 100 };
const GITHUB_TOKEN = "ghp_R8x2Lq9TzV4mN7bK1cW5yH3jP6dF0sA2gE8u";

const call = (id: string, name: string) => ({ id, type: "function", function: { name, arguments: `{"target":"${id}"}` } });

async function setup() {
  const id = freshIdentity();
  const app = await TestApp.connect(id, "files", { tree: { name: "File Tree", current: () => ({ content: "drafts/, notes/", title: "File Tree" }) } });
  const agent = await app.createAgent("assistant", ["files:tree"]);
  const frontend = await Frontend.for(id);
  const { id: conversation } = await frontend.json<{ id: string }>("POST", "/v1/conversations", { compaction: POLICY });
  const path = `/v1/conversations/${conversation}`;
  const s = {
    id,
    agent,
    frontend,
    conversation,
    path,
    stored: async () => (await frontend.json<{ messages: StoredMessage[] }>("GET", `${path}/messages`)).messages.map((m) => m.message),
    events: async () => (await frontend.json<{ events: ContextEvent[] }>("GET", `${path}/events?limit=500`)).events,
    approvals: async () => (await frontend.json<{ approvals: ApprovalInfo[] }>("GET", `${path}/approvals`)).approvals,
    turn: (body: Record<string, unknown>) => frontend.turn(conversation, { agent, ...body }),
  };
  return s;
}

/** The user asks; the model wants to delete a draft and to search, at once; the frontend asks the user about the delete. */
async function askToDelete(s: Awaited<ReturnType<typeof setup>>) {
  await s.turn({ message: "Tidy up my drafts." });
  await s.frontend.json("POST", `${s.path}/messages`, { messages: [{ role: "assistant", content: null, tool_calls: [call("del", "delete_file"), call("find", "search")] }] });
  const res = await s.frontend.request("POST", `${s.path}/approvals`, { toolCallId: "del" });
  expect(res.status).toBe(201);
  return ((await res.json()) as { approval: ApprovalInfo }).approval;
}

describe("approvals of tool calls", () => {
  it("holds a call for the user's approval: its result is refused until they decide, and a reconnecting frontend finds it", async () => {
    const s = await setup();
    const approval = await askToDelete(s);
    expect(approval).toMatchObject({ toolCallId: "del", tool: "delete_file", state: "requested", decidedAt: null });
    // Asking again changes nothing.
    const again = await s.frontend.request("POST", `${s.path}/approvals`, { toolCallId: "del" });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ approval });
    expect(await s.approvals()).toEqual([approval]);

    const before = await s.stored();
    const early = await s.frontend.request("POST", `${s.path}/messages`, { messages: [{ role: "tool", tool_call_id: "del", content: "deleted" }] });
    expect((await expectProblem(early, 409, "conflict")).detail).toContain("waiting for the user's approval");
    await expectProblem(await s.frontend.request("POST", `${s.path}/turns`, { agent: s.agent, toolResults: [{ tool_call_id: "del", content: "deleted" }] }), 409, "conflict");
    expect(await s.stored()).toEqual(before);

    // The other call is not held.
    await s.frontend.json("POST", `${s.path}/messages`, { messages: [{ role: "tool", tool_call_id: "find", content: "2 drafts" }] });
    expect((await s.events()).filter((e) => e.type === "tool.approval.requested").map((e) => [e.subject, e.data])).toEqual([["del", { tool: "delete_file" }]]);

    // Kept in SQLite, not in memory: an evicted object still holds it.
    await evictDurableObject(conversationStub(env, s.id, s.conversation));
    expect(await s.approvals()).toEqual([approval]);
  });

  it("answers a denied call with the denial: the model reads that it was not run and why, with secrets redacted", async () => {
    const s = await setup();
    await askToDelete(s);
    const turn = await s.turn({ approvals: [{ toolCallId: "del", approved: false, reason: `Not the drafts; my token ${GITHUB_TOKEN} is in one.` }], toolResults: [{ tool_call_id: "find", content: "2 drafts" }] });
    expect(pairingProblems(turn.messages)).toEqual([]);
    const denial = turn.messages.find((m) => m.role === "tool" && m.tool_call_id === "del")!;
    expect(textOf(denial)).toContain(DENIED_RESULT);
    expect(textOf(denial)).toContain("Not the drafts");
    expect(JSON.stringify(await s.stored())).not.toContain(GITHUB_TOKEN);
    expect(turn.envelope.tools?.results.find((r) => r.toolCallId === "del")?.redactions.length).toBe(1);
    expect(turn.envelope.tools?.unanswered).toEqual([]);
    expect(await s.approvals()).toEqual([]);
    const decided = (await s.events()).find((e) => e.type === "tool.approval.decided")!;
    expect([decided.subject, decided.turnId, decided.data]).toEqual(["del", turn.turnId, { tool: "delete_file", approved: false }]);
  });

  it("keeps the user's denial in the summary once compaction covers it", async () => {
    const s = await setup();
    await askToDelete(s);
    await s.turn({ approvals: [{ toolCallId: "del", approved: false, reason: "Leave the drafts alone." }], toolResults: [{ tool_call_id: "find", content: "2 drafts" }] });
    let summary: string | undefined;
    for (let i = 0; i < 12 && !summary; i++) {
      const turn = await s.turn({ message: `Question ${i}: ${"what else is in the workspace today? ".repeat(30)}` });
      summary = turn.messages.map(textOf).find((text) => text.startsWith("<summary_fence"));
      await s.frontend.json("POST", `${s.path}/messages`, { messages: [{ role: "assistant", content: `Answer ${i}: ${"the workspace holds notes. ".repeat(30)}` }] });
    }
    expect(summary, "no turn summarised").toBeDefined();
    expect(summary).toContain("] denied running delete_file: Leave the drafts alone.");
  });

  it("takes an approval with its result in one turn, and refuses an approval that comes without one", async () => {
    const s = await setup();
    await askToDelete(s);
    const before = await s.stored();
    const alone = await s.frontend.request("POST", `${s.path}/turns`, { agent: s.agent, approvals: [{ toolCallId: "del", approved: true }], toolResults: [{ tool_call_id: "find", content: "2 drafts" }] });
    expect((await expectProblem(alone, 400, "invalid-request")).issues).toEqual([{ path: "approvals.0.toolCallId", message: "an approved call's result comes in toolResults with it" }]);
    const deniedWithResult = await s.frontend.request("POST", `${s.path}/turns`, { agent: s.agent, approvals: [{ toolCallId: "del", approved: false }], toolResults: [{ tool_call_id: "del", content: "deleted" }] });
    expect((await expectProblem(deniedWithResult, 400, "invalid-request")).issues).toEqual([{ path: "approvals.0.toolCallId", message: "a denied call was not run: send no result for it" }]);
    expect(await s.stored()).toEqual(before);

    const turn = await s.turn({ approvals: [{ toolCallId: "del", approved: true }], toolResults: [{ tool_call_id: "del", content: "deleted drafts/old.md" }, { tool_call_id: "find", content: "2 drafts" }] });
    expect(turn.messages.slice(-3).map((m) => (m.role === "tool" ? [m.tool_call_id, m.content] : m.role))).toEqual(["assistant", ["del", "deleted drafts/old.md"], ["find", "2 drafts"]]);
    const decided = await s.frontend.request("POST", `${s.path}/approvals/del`, { approved: false });
    expect((await expectProblem(decided, 409, "conflict")).detail).toContain("no open tool call 'del'");
  });

  it("records an approval alone, then takes the result when it is ready", async () => {
    const s = await setup();
    await askToDelete(s);
    const decided = await s.frontend.json<{ approval: ApprovalInfo; seq: number | null }>("POST", `${s.path}/approvals/del`, { approved: true });
    expect(decided).toMatchObject({ approval: { state: "approved" }, seq: null });
    expect(decided.approval.decidedAt).not.toBeNull();
    // A retry of the same decision answers with the record; another decision conflicts.
    expect(await s.frontend.json("POST", `${s.path}/approvals/del`, { approved: true })).toEqual(decided);
    await expectProblem(await s.frontend.request("POST", `${s.path}/approvals/del`, { approved: false }), 409, "conflict");
    const turn = await s.turn({ toolResults: [{ tool_call_id: "del", content: "deleted" }, { tool_call_id: "find", content: "none" }] });
    expect(turn.envelope.tools?.unanswered).toEqual([]);
  });

  it("denies through the approvals route too: the denial is stored as the call's result, redacted, and a retry changes nothing", async () => {
    const s = await setup();
    await askToDelete(s);
    const decided = await s.frontend.json<{ approval: ApprovalInfo; seq: number }>("POST", `${s.path}/approvals/del`, { approved: false, reason: `leaked ${GITHUB_TOKEN}` });
    expect(decided.approval.state).toBe("denied");
    const stored = await s.frontend.json<{ messages: StoredMessage[] }>("GET", `${s.path}/messages`);
    const denial = stored.messages.find((m) => m.seq === decided.seq)!.message;
    expect(denial).toMatchObject({ role: "tool", tool_call_id: "del" });
    expect(textOf(denial).startsWith(`${DENIED_RESULT} Their reason: leaked `)).toBe(true);
    expect(JSON.stringify([stored, await s.events()])).not.toContain(GITHUB_TOKEN);
    const retried = await s.frontend.json<{ approval: ApprovalInfo; seq: number | null }>("POST", `${s.path}/approvals/del`, { approved: false, reason: "again" });
    expect(retried).toEqual({ approval: decided.approval, seq: null });
    expect((await s.stored()).length).toBe(stored.messages.length);
  });

  it("refuses a turn without a new message while a call still waits for approval", async () => {
    const s = await setup();
    await askToDelete(s);
    const before = await s.stored();
    const res = await s.frontend.request("POST", `${s.path}/turns`, { agent: s.agent, toolResults: [{ tool_call_id: "find", content: "2 drafts" }] });
    expect((await expectProblem(res, 409, "conflict")).detail).toContain("'del' is waiting for the user's approval");
    expect(await s.stored()).toEqual(before);
    expect(await s.approvals()).toMatchObject([{ toolCallId: "del", state: "requested" }]);
  });

  it("tells a call apart from an earlier one with the same id", async () => {
    const s = await setup();
    const first = await askToDelete(s);
    await s.turn({ approvals: [{ toolCallId: "del", approved: false }], toolResults: [{ tool_call_id: "find", content: "2 drafts" }] });
    await s.turn({ message: "Then delete notes/old.md instead." });
    // Some models number their calls per message: the same id names a new call.
    await s.frontend.json("POST", `${s.path}/messages`, { messages: [{ role: "assistant", content: null, tool_calls: [call("del", "delete_file")] }] });
    const second = (await s.frontend.json<{ approval: ApprovalInfo }>("POST", `${s.path}/approvals`, { toolCallId: "del" })).approval;
    expect(second).toMatchObject({ toolCallId: "del", state: "requested" });
    expect(second.callSeq).toBeGreaterThan(first.callSeq);
    expect(await s.approvals()).toEqual([second]);
    await expectProblem(await s.frontend.request("POST", `${s.path}/messages`, { messages: [{ role: "tool", tool_call_id: "del", content: "deleted" }] }), 409, "conflict");
    const approved = await s.turn({ approvals: [{ toolCallId: "del", approved: true }], toolResults: [{ tool_call_id: "del", content: "deleted notes/old.md" }] });
    expect(approved.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "del", content: "deleted notes/old.md" });
    // A stale denial of the first call is not taken for a retry about the second.
    await expectProblem(await s.frontend.request("POST", `${s.path}/approvals/del`, { approved: false }), 409, "conflict");
    // Its own decision, sent again, is.
    expect(await s.frontend.json("POST", `${s.path}/approvals/del`, { approved: true })).toMatchObject({ approval: { callSeq: second.callSeq, state: "approved" }, seq: null });
  });

  it("never compacts or clears away a call waiting for approval: the user can still decide it after both", async () => {
    const s = await setup();
    for (let i = 0; i < 6; i++) {
      await s.turn({ message: `Question ${i}: ${"what is in the drafts folder today? ".repeat(12)}` });
      await s.frontend.json("POST", `${s.path}/messages`, { messages: [{ role: "assistant", content: `Answer ${i}: ${"the drafts hold notes. ".repeat(20)}` }] });
    }
    await askToDelete(s);
    await s.frontend.json("POST", `${s.path}/messages`, { messages: [{ role: "tool", tool_call_id: "find", content: "2 drafts" }] });
    const compacted = await s.frontend.json<{ compaction: { summary: { throughSeq: number } | null } | null }>("POST", `${s.path}/compact`, { force: true });
    expect(compacted.compaction?.summary).not.toBeNull();
    const callInView = async () => (await s.frontend.json<RequestMessages>("GET", `${s.path}/context`)).messages.some((m) => m.role === "assistant" && m.tool_calls?.some((c) => c.id === "del"));
    expect(await callInView()).toBe(true);
    await s.frontend.json("POST", `${s.path}/clear`);
    expect(await callInView()).toBe(true);
    expect(await s.approvals()).toMatchObject([{ toolCallId: "del", state: "requested" }]);
    await expectProblem(await s.frontend.request("POST", `${s.path}/messages`, { messages: [{ role: "tool", tool_call_id: "del", content: "deleted" }] }), 409, "conflict");

    const denied = await s.turn({ approvals: [{ toolCallId: "del", approved: false }] });
    expect(pairingProblems(denied.messages)).toEqual([]);
    expect(denied.messages.slice(1).map((m) => (m.role === "tool" ? [m.tool_call_id, m.content] : m.role))).toEqual(["user", "assistant", ["find", "2 drafts"], ["del", DENIED_RESULT]]);
    // The clear kept the request the calls answer.
    expect(textOf(denied.messages[1]!)).toMatch(/^Tidy up my drafts\./);
  });

  it("closes a call still waiting for approval when a new message comes, saying it was not run", async () => {
    const s = await setup();
    await askToDelete(s);
    const moved = await s.turn({ message: "Never mind, leave them." });
    expect(pairingProblems(moved.messages)).toEqual([]);
    expect(moved.messages.find((m) => m.role === "tool" && m.tool_call_id === "del")?.content).toBe(APPROVAL_EXPIRED_RESULT);
    expect(moved.envelope.tools?.unanswered).toEqual([
      { id: "del", name: "delete_file", awaitingApproval: true },
      { id: "find", name: "search" },
    ]);
    expect(await s.approvals()).toEqual([]);
    const unanswered = (await s.events()).filter((e) => e.type === "tool.call.unanswered").map((e) => e.data);
    expect(unanswered).toEqual([{ tool: "delete_file", awaitingApproval: true }, { tool: "search" }]);
    await expectProblem(await s.frontend.request("POST", `${s.path}/approvals/del`, { approved: true }), 409, "conflict");
  });

  it("answers bad requests with a problem, never a 500", async () => {
    const s = await setup();
    await askToDelete(s);
    const post = (path: string, body: unknown) => s.frontend.request("POST", `${s.path}${path}`, body);
    await expectProblem(await post("/approvals", {}), 400, "invalid-request");
    await expectProblem(await post("/approvals", { toolCallId: "del", extra: 1 }), 400, "invalid-request");
    await expectProblem(await post("/approvals", { toolCallId: "x".repeat(129) }), 400, "invalid-request");
    await expectProblem(await post("/approvals", { toolCallId: "ghost" }), 409, "conflict");
    await expectProblem(await post("/approvals/del", { approved: "yes" }), 400, "invalid-request");
    await expectProblem(await post("/approvals/del", { approved: true, reason: "fine" }), 400, "invalid-request");
    await expectProblem(await post("/approvals/del", { approved: false, reason: "x".repeat(2_001) }), 400, "invalid-request");
    await expectProblem(await post(`/approvals/${"x".repeat(129)}`, { approved: true }), 400, "invalid-request");
    // The call is named in the route's path: the issue says so.
    expect((await expectProblem(await post("/approvals/ghost", { approved: true }), 409, "conflict")).issues).toEqual([{ path: "toolCallId", message: "not an undecided open call" }]);
    const twice = await s.frontend.request("POST", `${s.path}/turns`, {
      agent: s.agent,
      approvals: [{ toolCallId: "del", approved: false }, { toolCallId: "del", approved: false }],
    });
    expect((await expectProblem(twice, 400, "invalid-request")).issues).toEqual([{ path: "approvals.1.toolCallId", message: "one decision per call" }]);
    const unknown = await s.frontend.request("POST", `${s.path}/turns`, { agent: s.agent, message: "go", approvals: [{ toolCallId: "ghost", approved: false }] });
    expect((await expectProblem(unknown, 409, "conflict")).issues).toEqual([{ path: "approvals.0.toolCallId", message: "not an undecided open call" }]);
    await expectProblem(await s.frontend.request("GET", "/v1/conversations/nope/approvals"), 404, "not-found");
    await s.frontend.request("DELETE", s.path);
    await expectProblem(await post("/approvals/del", { approved: true }), 409, "conflict");
    // Ended, it can never be decided: a frontend listing approvals must not ask the user.
    expect(await s.approvals()).toMatchObject([{ toolCallId: "del", state: "expired" }]);
  });
});
