/**
 * A provider declared `notifies: true` promises `contexts/changed` whenever its answer would differ: the hub asks it
 * once per conversation and reuses the answer (`kept`) until the app says it changed, re-initialises or disconnects.
 * A provider that does not notify is asked every turn. Over a real socket through the Worker.
 */
import { describe, expect, it } from "vitest";
import { freshIdentity, Frontend, reminderOf } from "./support/runtime";
import { TestApp } from "./support/test-app";

async function setup() {
  const id = freshIdentity();
  const state = { doc: "draft one", clock: "09:00" };
  const providers = {
    doc: { name: "Document", notifies: true, current: () => ({ content: state.doc, title: "Document" }) },
    clock: { name: "Clock", current: () => ({ content: state.clock, title: "Clock" }) },
  };
  const app = await TestApp.connect(id, "desk", providers);
  const agent = await app.createAgent("writer", ["desk:doc", "desk:clock"]);
  const frontend = await Frontend.for(id);
  const conversation = await frontend.conversation();
  const asked = (a: TestApp, provider: string) => a.calls.filter((c) => c.method === "contexts/current" && c.params.provider === provider).length;
  const pullStage = (turn: Awaited<ReturnType<Frontend["turn"]>>) => turn.envelope.stages!.find((s) => s.stage === "pull")!.decided;
  return { id, state, providers, app, agent, frontend, conversation, asked, pullStage };
}

describe("kept answers of providers that notify their changes", () => {
  it("asks a notifying provider once, reuses its answer until the app says it changed, and asks the other every turn", async () => {
    const { state, app, agent, frontend, conversation, asked, pullStage } = await setup();
    const first = await frontend.turn(conversation, { agent, message: "one" });
    expect(reminderOf(first)).toContain("draft one");
    expect(pullStage(first)).toMatchObject({ pulled: 2, kept: 0 });

    const second = await frontend.turn(conversation, { agent, message: "two" });
    expect([asked(app, "doc"), asked(app, "clock")]).toEqual([1, 2]);
    expect(pullStage(second)).toMatchObject({ pulled: 2, kept: 1 });
    expect(second.envelope.selection.omitted).toContainEqual({ id: "desk:doc", reason: "unchanged" });

    // Changed without a word: the kept answer stands (the app broke its promise).
    state.doc = "draft two";
    await frontend.turn(conversation, { agent, message: "three" });
    expect(asked(app, "doc")).toBe(1);

    // Told: the next turn asks again and reads the change.
    expect(await app.request("contexts/changed", { provider: "doc" })).toMatchObject({ result: {} });
    const fourth = await frontend.turn(conversation, { agent, message: "four" });
    expect(asked(app, "doc")).toBe(2);
    expect(reminderOf(fourth)).toContain("[Context updated: Document]\ndraft two");
    expect(pullStage(fourth)).toMatchObject({ kept: 0 });
  });

  it("keeps each conversation's answer apart, and forgets an app's when it comes back and initialises again", async () => {
    const { id, state, providers, app, agent, frontend, conversation, asked } = await setup();
    expect(agent).toBe("desk:writer");
    const other = await frontend.conversation();
    await frontend.turn(conversation, { agent, message: "one" });
    await frontend.turn(other, { agent, message: "one" });
    expect(asked(app, "doc")).toBe(2);
    const doc = app.calls.filter((c) => c.method === "contexts/current" && c.params.provider === "doc").map((c) => c.params.conversationId);
    expect(new Set(doc)).toEqual(new Set([conversation, other]));

    app.close();
    state.doc = "edited while away";
    const back = await TestApp.connect(id, "desk", providers);
    await back.createAgent("writer", ["desk:doc", "desk:clock"]);
    const turn = await frontend.turn(conversation, { agent, message: "again" });
    expect(asked(back, "doc")).toBe(1);
    expect(reminderOf(turn)).toContain("edited while away");
  });

  it("forgets an app's answers when it disconnects: the next turn finds it offline, not what it said before", async () => {
    const { app, agent, frontend, conversation, asked } = await setup();
    await frontend.turn(conversation, { agent, message: "one" });
    expect(asked(app, "doc")).toBe(1);
    app.close();
    await new Promise((r) => setTimeout(r, 50));
    const offline = await frontend.turn(conversation, { agent, message: "two" });
    expect(offline.missing).toContainEqual(expect.objectContaining({ id: "desk:doc", reason: "offline" }));
  });

  it("keeps a null answer, counted as kept, and never an invalid one", async () => {
    const id = freshIdentity();
    const app = await TestApp.connect(id, "desk", {
      blank: { name: "Blank", notifies: true, current: () => null },
      broken: { name: "Broken", notifies: true, current: () => ({ content: 42 }) },
    });
    const agent = await app.createAgent("writer", ["desk:blank", "desk:broken"]);
    const frontend = await Frontend.for(id);
    const conversation = await frontend.conversation();
    const asked = (provider: string) => app.calls.filter((c) => c.method === "contexts/current" && c.params.provider === provider).length;
    await frontend.turn(conversation, { agent, message: "one" });
    const second = await frontend.turn(conversation, { agent, message: "two" });
    expect([asked("blank"), asked("broken")]).toEqual([1, 2]);
    expect(second.envelope.stages!.find((s) => s.stage === "pull")!.decided).toMatchObject({ kept: 1, empty: 1, missing: 1 });
  });

  it("lists the promise with the provider", async () => {
    const { frontend } = await setup();
    const listed = await frontend.json<{ providers: { id: string; notifies: boolean }[] }>("GET", "/v1/contexts");
    expect(listed.providers.map((p) => [p.id, p.notifies])).toEqual([
      ["desk:clock", false],
      ["desk:doc", true],
    ]);
  });
});
