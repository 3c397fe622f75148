import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/protocol/jsonrpc";
import { freshIdentity, Frontend, reminderOf } from "./support/runtime";
import { TestApp, type ProviderSpec } from "./support/test-app";

/** A provider that answers well on the first turn and misbehaves on the second. */
async function misbehavingAfterFirst(misbehave: NonNullable<ProviderSpec["current"]>) {
  const id = freshIdentity();
  let turn = 0;
  const app = await TestApp.connect(id, "notes", {
    flaky: { name: "Flaky", current: (p) => (turn++ === 0 ? { content: "fine", title: "Flaky" } : misbehave(p)) },
    steady: { name: "Steady", current: () => ({ content: "steady", title: "Steady" }) },
  });
  const agent = await app.createAgent("assistant", ["notes:flaky", "notes:steady"]);
  const frontend = await Frontend.for(id);
  const conversation = await frontend.conversation();
  const first = await frontend.turn(conversation, { agent, message: "one" });
  expect(reminderOf(first)).toContain("[Context: Flaky]");
  return { app, agent, frontend, conversation };
}

describe("a provider that fails never fails the turn", () => {
  const cases: [string, NonNullable<ProviderSpec["current"]>, string][] = [
    ["slow past its deadline", () => new Promise((resolve) => setTimeout(() => resolve({ content: "late" }), 3_000)), "timeout"],
    ["throwing", () => { throw new Error("database locked"); }, "error"],
    ["answering with invalid data", () => ({ content: 42, title: ["not", "a", "string"] }), "invalid"],
  ];
  for (const [what, misbehave, reason] of cases) {
    it(`reports a provider ${what} as missing (${reason}) without a removed marker`, async () => {
      const { agent, frontend, conversation } = await misbehavingAfterFirst(misbehave);
      const second = await frontend.turn(conversation, { agent, message: "two" });
      expect(second.missing).toEqual([expect.objectContaining({ id: "notes:flaky", reason, severity: "warning" })]);
      expect(reminderOf(second)).toBe("");
      expect(second.envelope.selection.omitted).toContainEqual({ id: "notes:flaky", reason: "missing" });
      // The late case waits out the 2 s deadline after a first turn that may start the isolate: 4–5 s under load.
    }, 15_000);
  }

  it("reports a disconnected app's contexts as offline, and injects them as updated once it is back", async () => {
    const id = freshIdentity();
    const providers = { editor: { name: "Editor", current: () => ({ content: "v1", title: "Editor" }) } };
    const app = await TestApp.connect(id, "notes", providers);
    const agent = await app.createAgent("assistant", ["notes:editor"]);
    const frontend = await Frontend.for(id);
    const conversation = await frontend.conversation();
    await frontend.turn(conversation, { agent, message: "one" });
    app.close();
    await new Promise((r) => setTimeout(r, 50));
    const offline = await frontend.turn(conversation, { agent, message: "two" });
    expect(offline.missing).toEqual([expect.objectContaining({ id: "notes:editor", reason: "offline" })]);
    expect(reminderOf(offline)).toBe("");

    const back = await TestApp.connect(id, "notes", { editor: { name: "Editor", current: () => ({ content: "v2", title: "Editor" }) } });
    await back.createAgent("assistant", ["notes:editor"]);
    const third = await frontend.turn(conversation, { agent, message: "three" });
    expect(third.missing).toEqual([]);
    expect(reminderOf(third)).toBe("<system_reminder>\n[Context updated: Editor]\nv2\n</system_reminder>");
  });

  it("treats a provider answering null as nothing current: removed if it was shown, silent otherwise", async () => {
    const id = freshIdentity();
    let value: { content: string } | null = { content: "open note" };
    const app = await TestApp.connect(id, "notes", { editor: { name: "Editor", current: () => value } });
    const agent = await app.createAgent("assistant", ["notes:editor"]);
    const frontend = await Frontend.for(id);
    const conversation = await frontend.conversation();
    expect(reminderOf(await frontend.turn(conversation, { agent, message: "a" }))).toContain("[Context: Editor]\nopen note");
    value = null;
    expect(reminderOf(await frontend.turn(conversation, { agent, message: "b" }))).toBe("<system_reminder>\n[Context removed: notes:editor]\n</system_reminder>");
    const third = await frontend.turn(conversation, { agent, message: "c" });
    expect(reminderOf(third)).toBe("");
    expect(third.envelope.selection.omitted).toEqual([{ id: "notes:editor", reason: "empty" }]);
  });

  it("reports an agent's context whose app never registered it as missing", async () => {
    const id = freshIdentity();
    const app = await TestApp.connect(id, "notes", {});
    const agent = await app.createAgent("assistant", ["calendar:today"]);
    const frontend = await Frontend.for(id);
    const turn = await frontend.turn(await frontend.conversation(), { agent, message: "hi" });
    expect(turn.missing).toEqual([expect.objectContaining({ id: "calendar:today", reason: "unknown_provider" })]);
  });
});

/**
 * The flaky provider's second call is answered with raw frames instead of its
 * handler; `replies` collects what the hub sends back with that call's id.
 */
async function answeredWith(frames: (callId: string) => unknown[]) {
  const setup = await misbehavingAfterFirst(() => new Promise(() => undefined));
  const replies: Record<string, unknown>[] = [];
  let callId: string | undefined;
  setup.app.ws.addEventListener("message", (event) => {
    const frame = JSON.parse(String(event.data)) as Record<string, unknown>;
    if (frame.method === "contexts/current" && (frame.params as { provider: string }).provider === "flaky") {
      callId = String(frame.id);
      for (const raw of frames(callId)) setup.app.ws.send(JSON.stringify(raw));
    } else if (callId !== undefined && frame.id === callId) {
      replies.push(frame);
    }
  });
  const second = await setup.frontend.turn(setup.conversation, { agent: setup.agent, message: "two" });
  return { ...setup, second, replies };
}

describe("a provider's answer counts only when it is a well-formed JSON-RPC answer", () => {
  const malformed: [string, (id: string) => unknown][] = [
    ["a malformed error object", (id) => ({ jsonrpc: "2.0", id, error: { code: "oops", message: 42 } })],
    ["neither result nor error (a null dropped by its encoder)", (id) => ({ jsonrpc: "2.0", id })],
    ["an extra top-level member", (id) => ({ jsonrpc: "2.0", id, result: null, extra: true })],
    ["both result and error", (id) => ({ jsonrpc: "2.0", id, result: null, error: { code: -32603, message: "x" } })],
    ["a wrong jsonrpc version", (id) => ({ jsonrpc: "1.0", id, result: null })],
  ];
  for (const [what, answer] of malformed) {
    it(`reports ${what} as missing (invalid), answers it with -32600, and shows no removed marker`, async () => {
      const { second, replies } = await answeredWith((id) => [answer(id)]);
      expect(second.missing).toEqual([expect.objectContaining({ id: "notes:flaky", reason: "invalid", severity: "warning" })]);
      expect(second.missing[0]!.detail).toMatch(/^malformed JSON-RPC answer: /);
      expect(reminderOf(second)).toBe("");
      expect(second.messages.at(-1)!.content).not.toContain("[Context removed");
      await expect.poll(() => replies).toEqual([expect.objectContaining({ error: expect.objectContaining({ code: ErrorCode.InvalidRequest }) })]);
    });
  }

  const requestShaped: [string, Record<string, unknown>, number][] = [
    ["a known method", { method: "contexts/current", params: { provider: "flaky" } }, ErrorCode.MethodNotFound],
    ["a malformed method", { method: 42 }, ErrorCode.InvalidRequest],
  ];
  for (const [what, members, code] of requestShaped) {
    it(`answers a request-shaped frame with the call's id and ${what} as a request (${code}); the call still times out`, async () => {
      const { second, replies } = await answeredWith((id) => [{ jsonrpc: "2.0", id, ...members }]);
      await expect.poll(() => replies).toEqual([{ jsonrpc: "2.0", id: expect.any(String), error: expect.objectContaining({ code }) }]);
      expect(second.missing).toEqual([expect.objectContaining({ id: "notes:flaky", reason: "timeout" })]);
      expect(reminderOf(second)).toBe("");
    });
  }

  it("answers a request-shaped frame that also holds a result with -32600, and a later valid answer still counts", async () => {
    const { second, replies } = await answeredWith((id) => [
      { jsonrpc: "2.0", id, method: "contexts/current", result: null },
      { jsonrpc: "2.0", id, result: { content: "changed", title: "Flaky" } },
    ]);
    await expect.poll(() => replies).toEqual([expect.objectContaining({ error: expect.objectContaining({ code: ErrorCode.InvalidRequest }) })]);
    expect(second.missing).toEqual([]);
    expect(reminderOf(second)).toBe("<system_reminder>\n[Context updated: Flaky]\nchanged\n</system_reminder>");
  });

  it("still reads an explicit result: null as nothing now, with a removed marker", async () => {
    const { second, replies } = await answeredWith((id) => [{ jsonrpc: "2.0", id, result: null }]);
    expect(replies).toEqual([]);
    expect(second.missing).toEqual([]);
    expect(reminderOf(second)).toBe("<system_reminder>\n[Context removed: notes:flaky]\n</system_reminder>");
  });
});
