import { describe, expect, it } from "vitest";
import { freshIdentity, Frontend } from "./support/runtime";
import { TestApp } from "./support/test-app";

const STAGES = ["load", "pull", "input", "output", "run", "admit", "recall", "identify", "tools", "reminders", "assembled", "compact", "assemble", "commit"];

describe("the turn pipeline", () => {
  it("records each stage, in order, with what it decided; a replay carries the first answer's record", async () => {
    const id = freshIdentity();
    const app = await TestApp.connect(id, "notes", {
      editor: { name: "Editor", current: () => ({ content: "draft", title: "Editor" }) },
      gone: { name: "Gone", current: () => null },
    });
    const agent = await app.createAgent("assistant", ["notes:editor", "notes:gone"]);
    const frontend = await Frontend.for(id);
    const conversation = await frontend.conversation();

    const first = await frontend.turn(conversation, { turnId: "p-1", agent, message: "hello" });
    const stages = first.envelope.stages!;
    expect(stages.map((s) => s.stage)).toEqual(STAGES);
    const decided = Object.fromEntries(stages.map((s) => [s.stage, s.decided]));
    expect(decided.load).toMatchObject({ continuation: false, openCalls: 0, decisions: 0 });
    expect(decided.pull).toMatchObject({ agent, pulled: 2, present: 1, empty: 1, missing: 0, reused: 0 });
    expect(decided.admit).toMatchObject({ results: 0, unanswered: 0 });
    expect(decided.identify).toMatchObject({ frozen: false, switching: false });
    expect(decided.compact).toMatchObject({ compacted: false, summary: false });
    expect(decided.assemble).toMatchObject({ tokens: first.usage.total, messages: first.messages.length });
    expect(decided.commit).toMatchObject({ stored: 1 });
    for (const s of stages) expect(s.ms).toBeGreaterThanOrEqual(0);

    // The same context version is not admitted again; the identity is frozen from here on.
    const second = await frontend.turn(conversation, { agent, message: "again" });
    const again = Object.fromEntries(second.envelope.stages!.map((s) => [s.stage, s.decided]));
    expect(again.pull).toMatchObject({ present: 1, reused: 1 });
    expect(again.identify).toMatchObject({ frozen: true });

    const replayed = await frontend.turn(conversation, { turnId: "p-1", agent, message: "hello" });
    expect(replayed.replayed).toBe(true);
    expect(replayed.envelope.stages).toEqual(stages);
  });

  it("a refused turn stops at its stage and stores nothing", async () => {
    const id = freshIdentity();
    const app = await TestApp.connect(id, "notes", { editor: { name: "Editor", current: () => ({ content: "x" }) } });
    const agent = await app.createAgent("assistant", ["notes:editor"]);
    const frontend = await Frontend.for(id);
    const conversation = await frontend.conversation();
    const res = await frontend.request("POST", `/v1/conversations/${conversation}/turns`, { agent, message: "hi", budget: { maxTokens: 64 } });
    expect(res.status).toBe(422);
    const { messages } = await frontend.json<{ messages: unknown[] }>("GET", `/v1/conversations/${conversation}/messages`);
    expect(messages).toEqual([]);
  });
});
