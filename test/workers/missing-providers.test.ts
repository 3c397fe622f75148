import { describe, expect, it } from "vitest";
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
    ["slow past its deadline", () => new Promise((resolve) => setTimeout(() => resolve({ content: "late" }), 1_000)), "timeout"],
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
    });
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
