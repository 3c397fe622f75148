import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { conversationStub } from "../../src/conversation/stub";
import { freshIdentity, Frontend, reminderOf, withoutNonce } from "./support/runtime";
import { TestApp } from "./support/test-app";

async function notesSetup() {
  const id = freshIdentity();
  const state = { editor: "cursor at line 1", notes: "3 notes" };
  const app = await TestApp.connect(id, "notes", {
    "editor-state": { name: "Editor State", current: () => ({ content: state.editor, title: "Editor State" }) },
    notes: { name: "Notes", current: () => ({ content: state.notes, title: "Notes overview" }), list: () => ({ items: [] }), get: (p) => ({ content: `body of ${p.id}`, title: `Note ${p.id}` }) },
  });
  const agent = await app.createAgent("assistant", ["notes:editor-state", "notes:notes"]);
  const frontend = await Frontend.for(id);
  const conversation = await frontend.conversation();
  return { id, state, app, agent, frontend, conversation };
}

describe("injecting contexts turn by turn", () => {
  it("injects first, skips unchanged, marks updated and removed, and keeps the ledger across eviction", async () => {
    const { id, state, agent, frontend, conversation } = await notesSetup();

    const first = await frontend.turn(conversation, { agent, message: "hello" });
    expect(reminderOf(first)).toContain("[Context: Editor State]\ncursor at line 1");
    expect(reminderOf(first)).toContain("[Context: Notes overview]\n3 notes");
    expect(first.envelope.selection.selected.map((s) => s.reason)).toEqual(["first", "first"]);

    const second = await frontend.turn(conversation, { agent, message: "and now?" });
    expect(reminderOf(second)).toBe("");
    expect(second.envelope.selection.omitted).toEqual([
      { id: "notes:editor-state", reason: "unchanged" },
      { id: "notes:notes", reason: "unchanged" },
    ]);

    await evictDurableObject(conversationStub(env, id, conversation));
    state.editor = "cursor at line 9";
    const third = await frontend.turn(conversation, { agent, message: "moved" });
    expect(reminderOf(third)).toBe("<system_reminder>\n[Context updated: Editor State]\ncursor at line 9\n</system_reminder>");

    await frontend.json("POST", `/v1/conversations/${conversation}/attachments`, { context: "notes:notes", itemId: "n1" });
    const fourth = await frontend.turn(conversation, { agent, message: "see n1" });
    expect(reminderOf(fourth)).toBe("<system_reminder>\n[Context: Note n1]\nbody of n1\n</system_reminder>");

    await frontend.json("DELETE", `/v1/conversations/${conversation}/attachments`, { context: "notes:notes", itemId: "n1" });
    const fifth = await frontend.turn(conversation, { agent, message: "drop it" });
    expect(reminderOf(fifth)).toBe("<system_reminder>\n[Context removed: notes:notes#n1]\n</system_reminder>");
  });

  it("keeps each turn's messages a byte-identical prefix of the next", async () => {
    const { state, agent, frontend, conversation } = await notesSetup();
    let previous: string[] = [];
    for (let i = 0; i < 6; i++) {
      if (i % 2 === 1) state.notes = `${i} notes`;
      const turn = await frontend.turn(conversation, { agent, message: `turn ${i}` });
      await frontend.json("POST", `/v1/conversations/${conversation}/messages`, { messages: [{ role: "assistant", content: `reply ${i}` }] });
      const serialised = turn.messages.map((m) => JSON.stringify(m));
      expect(serialised.slice(0, previous.length)).toEqual(previous);
      expect(serialised.length).toBe(i === 0 ? 2 : previous.length + 1);
      previous = [...serialised, JSON.stringify({ role: "assistant", content: `reply ${i}` })];
    }
  });

  it("switching agents removes the old agent's contexts and injects the new one's", async () => {
    const { id, app, agent, frontend, conversation } = await notesSetup();
    const calendar = await TestApp.connect(id, "calendar", { today: { name: "Today", current: () => ({ content: "standup at 10", title: "Today" }) } });
    const planner = await calendar.createAgent("planner", ["calendar:today", "notes:notes"]);

    const first = await frontend.turn(conversation, { agent, message: "notes first" });
    const switched = await frontend.turn(conversation, { agent: planner, message: "now plan" });
    const reminder = reminderOf(switched);
    expect(reminder).toContain("[Context removed: notes:editor-state]");
    expect(reminder).toContain("[Context: Today]\nstandup at 10");
    expect(reminder).not.toContain("Notes overview"); // shared and unchanged: not injected again
    // The identity block stays as it was frozen; the new persona arrives as a note on the user's message.
    expect(switched.messages.slice(0, first.messages.length)).toEqual(first.messages);
    expect(String(switched.messages[0]!.content).startsWith("You are assistant.\n\nThis conversation started on ")).toBe(true);
    const note = withoutNonce(String(switched.messages.at(-1)!.content));
    expect(note.startsWith("now plan\n\n<persona_switch>\nFrom this message on you are planner: adopt this role now")).toBe(true);
    expect(note).toContain("You are planner.\n</persona_switch>");
    const again = await frontend.turn(conversation, { agent: planner, message: "and tomorrow?" });
    expect(String(again.messages.at(-1)!.content)).not.toContain("<persona_switch");
    const back = await frontend.turn(conversation, { agent, message: "back to notes" });
    expect(String(back.messages.at(-1)!.content)).toContain("From this message on you are assistant");
    app.close();
  });

  it("freezes the identity block at the first turn, even when the agent's prompt changes later", async () => {
    const { app, agent, frontend, conversation } = await notesSetup();
    const first = await frontend.turn(conversation, { agent, message: "hi" });
    await app.createAgent("assistant", ["notes:editor-state", "notes:notes"], "You are a rewritten assistant.");
    const later = await frontend.turn(conversation, { agent, message: "still there?", turnId: "later" });
    expect(later.messages[0]).toEqual(first.messages[0]);
    expect(String(first.messages[0]!.content)).toMatch(/^You are assistant\.\n\nThis conversation started on \w+day, \d{4}-\d{2}-\d{2}, in the (morning|afternoon|evening|night) \(UTC\)\.\nBlocks the runtime adds open with a tag carrying nonce="[a-z0-9]{12}"[^\n]*\n\nApp context: /);
    const replayed = await frontend.turn(conversation, { agent, message: "still there?", turnId: "later" });
    expect(replayed.messages).toEqual(later.messages);
  });

  it("adds capability blocks after the identity block only for what the agent has, always in one order", async () => {
    const id = freshIdentity();
    const app = await TestApp.connect(id, "caps", { editor: { name: "Editor", current: () => ({ content: "x", title: "Editor" }) } });
    const frontend = await Frontend.for(id);
    const systemOf = async (agentId: string, contexts: string[], extra: Record<string, unknown>) => {
      const agent = await app.createAgent(agentId, contexts, "You help.", extra);
      const turn = await frontend.turn(await frontend.conversation(), { agent, message: "hi" });
      return String(turn.messages[0]!.content);
    };
    const bare = await systemOf("bare", [], {});
    expect(bare).toMatch(/\(UTC\)\.\nBlocks the runtime adds open with a tag carrying nonce="[a-z0-9]{12}"[^\n]*\n\nApp context: [^\n]+$/);
    const all = await systemOf("all", ["caps:editor"], { tools: ["search"], memory: true });
    const order = ["Tool results:", "App context:", "Memory:"].map((heading) => all.indexOf(heading));
    expect(order.every((at) => at > bare.indexOf("App context:") - 5)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    const toolsOnly = await systemOf("tools-only", [], { tools: ["search"] });
    expect(toolsOnly).not.toContain("Memory:");
    // Turning one capability off leaves the others' text, and their order, exactly as they were.
    expect(withoutNonce(all).replace(/\n\nMemory: [^\n]*/, "")).toBe(withoutNonce(toolsOnly));
    app.close();
  });

  it("does not inject an attachment that duplicates an agent default twice", async () => {
    const { agent, frontend, conversation } = await notesSetup();
    const turn = await frontend.turn(conversation, { agent, message: "hi", attachments: [{ context: "notes:editor-state" }] });
    expect(reminderOf(turn).match(/\[Context: Editor State\]/g)).toHaveLength(1);
    expect(turn.envelope.surface.items.map((i) => i.id)).toEqual(["notes:editor-state", "notes:notes"]);
  });
});
