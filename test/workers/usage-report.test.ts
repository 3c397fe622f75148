import { describe, expect, it } from "vitest";
import { EventPage, PastTurn } from "../../src/protocol/frontend";
import { freshIdentity, Frontend } from "./support/runtime";
import { TestApp } from "./support/test-app";

async function setup() {
  const id = freshIdentity();
  const app = await TestApp.connect(id, "notes", { editor: { name: "Editor", current: () => ({ content: "state", title: "Editor" }) } });
  const agent = await app.createAgent("assistant", ["notes:editor"]);
  const frontend = await Frontend.for(id);
  const conversation = await frontend.conversation(agent);
  return { agent, frontend, conversation };
}

const reply = (text: string) => ({ role: "assistant", content: text });

describe("usage reported with an appended reply", () => {
  it("records the model's real usage as a model.usage event on the latest turn, or on the turn named", async () => {
    const { agent, frontend, conversation } = await setup();
    await frontend.turn(conversation, { turnId: "t1", agent, message: "one" });
    const appended = await frontend.json<{ lastSeq: number }>("POST", `/v1/conversations/${conversation}/messages`, {
      messages: [reply("first answer")],
      usage: { promptTokens: 1200, completionTokens: 40, cachedTokens: 1024, model: "gpt-4.1-mini" },
    });
    await frontend.turn(conversation, { turnId: "t2", agent, message: "two" });
    await frontend.json("POST", `/v1/conversations/${conversation}/messages`, { messages: [reply("second answer")], usage: { promptTokens: 1300, completionTokens: 12 } });
    // A late report names its turn.
    await frontend.json("POST", `/v1/conversations/${conversation}/messages`, { messages: [reply("p.s.")], usage: { promptTokens: 5, completionTokens: 1, turnId: "t1" } });

    const { events } = EventPage.parse(await frontend.json("GET", `/v1/conversations/${conversation}/events?limit=500`));
    const usage = events.filter((e) => e.type === "model.usage");
    expect(usage.map((e) => [e.turnId, e.data.promptTokens])).toEqual([
      ["t1", 1200],
      ["t2", 1300],
      ["t1", 5],
    ]);
    expect(usage[0]).toMatchObject({ subject: "gpt-4.1-mini", data: { completionTokens: 40, cachedTokens: 1024, model: "gpt-4.1-mini", lastSeq: appended.lastSeq, source: "frontend" } });
    expect(usage[1]!.data).toMatchObject({ cachedTokens: null, model: null });

    const t1 = PastTurn.parse(await frontend.json("GET", `/v1/conversations/${conversation}/turns/t1`));
    expect(t1.reportedUsage.map((u) => [u.promptTokens, u.completionTokens, u.cachedTokens])).toEqual([
      [1200, 40, 1024],
      [5, 1, null],
    ]);
  });

  it("refuses invalid usage or an unknown turn, and stores nothing then; appends without usage as before", async () => {
    const { agent, frontend, conversation } = await setup();
    await frontend.turn(conversation, { turnId: "t1", agent, message: "one" });
    const bad = [
      { promptTokens: -1, completionTokens: 0 },
      { promptTokens: 10, completionTokens: 1, cachedTokens: 11 },
      { promptTokens: 10 },
      { prompt_tokens: 10, completion_tokens: 1 },
    ];
    for (const usage of bad) {
      const res = await frontend.request("POST", `/v1/conversations/${conversation}/messages`, { messages: [reply("x")], usage });
      expect(res.status, JSON.stringify(usage)).toBe(400);
    }
    const unknown = await frontend.request("POST", `/v1/conversations/${conversation}/messages`, { messages: [reply("x")], usage: { promptTokens: 1, completionTokens: 1, turnId: "nope" } });
    expect(unknown.status).toBe(404);
    const { messages } = await frontend.json<{ messages: unknown[] }>("GET", `/v1/conversations/${conversation}/messages`);
    expect(messages).toHaveLength(1);
    expect((await frontend.request("POST", `/v1/conversations/${conversation}/messages`, { messages: [reply("fine")] })).status).toBe(201);
    const { events } = EventPage.parse(await frontend.json("GET", `/v1/conversations/${conversation}/events?limit=500`));
    expect(events.filter((e) => e.type === "model.usage")).toEqual([]);
  });
});
