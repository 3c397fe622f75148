import { describe, expect, it } from "vitest";
import type { ResourceInfo } from "../../src/protocol/frontend";
import { ErrorCode } from "../../src/protocol/jsonrpc";
import { freshIdentity, Frontend, reminderOf } from "./support/runtime";
import { TestApp } from "./support/test-app";

async function setup() {
  const id = freshIdentity();
  const notes = await TestApp.connect(id, "notes", { "editor-state": { current: () => ({ content: "editor", title: "Editor" }) } });
  const browser = await TestApp.connect(id, "browser", { tab: { current: () => ({ content: "a tab", title: "Tab" }) } });
  const agent = await notes.createAgent("assistant", ["notes:editor-state"]);
  const frontend = await Frontend.for(id);
  const conversation = await frontend.conversation(agent);
  return { notes, browser, agent, frontend, conversation };
}

describe("session resources", () => {
  it("refuses a push from an app the agent does not name, with a clear error", async () => {
    const { browser, conversation } = await setup();
    const res = await browser.request("resources/push", { conversationId: conversation, title: "Page", content: "secret page" });
    expect(res.error).toMatchObject({ code: ErrorCode.Forbidden });
    expect(String((res.error as { message: string }).message)).toContain("app 'browser' may not push");
  });

  it("lets an app the user attached push, and injects it", async () => {
    const { browser, agent, frontend, conversation } = await setup();
    await frontend.json("POST", `/v1/conversations/${conversation}/attachments`, { context: "browser:tab" });
    const res = await browser.request("resources/push", { conversationId: conversation, id: "sel", title: "Selection", content: "picked text" });
    expect(res.result).toEqual({ fullId: "browser:sel", conversationId: conversation });
    const turn = await frontend.turn(conversation, { agent, message: "explain" });
    expect(reminderOf(turn)).toContain("[Resource: Selection]\npicked text");
  });

  it("replaces a resource pushed again under the same id, and marks it updated", async () => {
    const { notes, agent, frontend, conversation } = await setup();
    const push = (content: string) => notes.request("resources/push", { conversationId: conversation, id: "selection", title: "Selection", content });
    expect((await push("first words")).result).toEqual({ fullId: "notes:selection", conversationId: conversation });
    await frontend.turn(conversation, { agent, message: "one" });
    await push("second words");
    const { resources } = await frontend.json<{ resources: ResourceInfo[] }>("GET", `/v1/conversations/${conversation}/resources`);
    expect(resources).toHaveLength(1);
    expect(resources[0]).toMatchObject({ fullId: "notes:selection", title: "Selection", sizeChars: 12 });
    const turn = await frontend.turn(conversation, { agent, message: "two" });
    expect(reminderOf(turn)).toBe("<system_reminder>\n[Resource updated: Selection]\nsecond words\n</system_reminder>");
  });

  it("pushes into the user's most recently created or active conversation when none is named", async () => {
    const { notes, agent, frontend, conversation } = await setup();
    const pushTarget = async () => (await notes.request("resources/push", { title: "Note", content: "x" })).result as { conversationId: string } | undefined;
    expect((await pushTarget())?.conversationId).toBe(conversation);
    const second = await frontend.conversation(agent);
    expect((await pushTarget())?.conversationId).toBe(second);
    await frontend.turn(conversation, { agent, message: "back to the first" });
    expect((await pushTarget())?.conversationId).toBe(conversation);
    await frontend.json("DELETE", `/v1/conversations/${conversation}`);
    const afterEnd = await notes.request("resources/push", { title: "Note", content: "x" });
    expect(afterEnd.error).toMatchObject({ code: ErrorCode.NotFound });
  });

  it("tells the app when the user removes its resource, and the model sees it removed", async () => {
    const { notes, agent, frontend, conversation } = await setup();
    await notes.request("resources/push", { conversationId: conversation, id: "sel", title: "Selection", content: "words" });
    await frontend.turn(conversation, { agent, message: "one" });
    const removed = await frontend.request("DELETE", `/v1/conversations/${conversation}/resources/${encodeURIComponent("notes:sel")}`);
    expect(removed.status).toBe(200);
    await expect.poll(() => notes.notifications).toContainEqual({ method: "resources/removed", params: { fullId: "notes:sel", conversationId: conversation } });
    const turn = await frontend.turn(conversation, { agent, message: "two" });
    expect(reminderOf(turn)).toBe("<system_reminder>\n[Resource removed: notes:sel]\n</system_reminder>");
  });

  it("clears resources and notifies apps when the conversation ends, then refuses turns and pushes", async () => {
    const { notes, agent, frontend, conversation } = await setup();
    await notes.request("resources/push", { conversationId: conversation, id: "a", title: "A", content: "a" });
    await notes.request("resources/push", { conversationId: conversation, id: "b", title: "B", content: "b" });
    const ended = await frontend.json<{ resourcesRemoved: number; endedAt: string }>("DELETE", `/v1/conversations/${conversation}`);
    expect(ended.resourcesRemoved).toBe(2);
    await expect.poll(() => notes.notifications.map((n) => (n.params as { fullId: string }).fullId).sort()).toEqual(["notes:a", "notes:b"]);
    const { resources } = await frontend.json<{ resources: unknown[] }>("GET", `/v1/conversations/${conversation}/resources`);
    expect(resources).toEqual([]);
    const turn = await frontend.request("POST", `/v1/conversations/${conversation}/turns`, { agent, message: "late" });
    expect(turn.status).toBe(409);
    const push = await notes.request("resources/push", { conversationId: conversation, title: "late", content: "x" });
    expect(push.error).toMatchObject({ code: ErrorCode.Conflict });
  });

  it("lets an app remove only its own resources", async () => {
    const { notes, browser, conversation } = await setup();
    await notes.request("resources/push", { conversationId: conversation, id: "sel", title: "S", content: "s" });
    const res = await browser.request("resources/remove", { fullId: "notes:sel", conversationId: conversation });
    expect(res.error).toMatchObject({ code: ErrorCode.Forbidden });
    const own = await notes.request("resources/remove", { fullId: "notes:sel", conversationId: conversation });
    expect(own.result).toEqual({});
  });
});
