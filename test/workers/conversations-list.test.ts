import { describe, expect, it } from "vitest";
import { ConversationPage, PastTurn, ProblemDocument, type TurnPage } from "../../src/protocol/frontend";
import { expectProblem, freshIdentity, Frontend } from "./support/runtime";
import { TestApp } from "./support/test-app";

async function setup() {
  const id = freshIdentity();
  const app = await TestApp.connect(id, "notes", { editor: { name: "Editor", current: () => ({ content: "the Q4 plan", title: "Editor" }) } });
  const agent = await app.createAgent("assistant", ["notes:editor"]);
  return { id, agent, frontend: await Frontend.for(id) };
}

describe("GET /v1/conversations", () => {
  it("lists the caller's conversations newest first, a page at a time, with their agent and when they ended", async () => {
    const { agent, frontend } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await frontend.conversation(i % 2 === 0 ? agent : undefined));
    await frontend.json("DELETE", `/v1/conversations/${ids[1]}`);

    const all = ConversationPage.strict().parse(await frontend.json("GET", "/v1/conversations"));
    expect(all.conversations.map((c) => c.id)).toEqual([...ids].reverse());
    expect(all.nextCursor).toBeNull();
    const byId = new Map(all.conversations.map((c) => [c.id, c]));
    expect(byId.get(ids[0]!)).toMatchObject({ agent, endedAt: null });
    expect(byId.get(ids[1]!)!.agent).toBeNull();
    expect(byId.get(ids[1]!)!.endedAt).toEqual(expect.any(String));
    const created = (await frontend.json<{ createdAt: string }>("GET", `/v1/conversations/${ids[2]}`)).createdAt;
    expect(byId.get(ids[2]!)!.createdAt).toBe(created);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: ConversationPage = ConversationPage.parse(await frontend.json("GET", `/v1/conversations?limit=2${cursor ? `&cursor=${cursor}` : ""}`));
      expect(page.conversations.length).toBeLessThanOrEqual(2);
      seen.push(...page.conversations.map((c) => c.id));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    expect(pages).toBe(3);
  });

  it("shows only the caller's own conversations, and refuses a cursor it did not issue or a bad limit", async () => {
    const { frontend } = await setup();
    const mine = await frontend.conversation();
    const other = await Frontend.for(freshIdentity());
    await other.conversation();
    const page = ConversationPage.parse(await frontend.json("GET", "/v1/conversations"));
    expect(page.conversations.map((c) => c.id)).toEqual([mine]);
    for (const query of ["cursor=not-a-cursor", "limit=0", "limit=101", "other=1"]) {
      const res = await frontend.request("GET", `/v1/conversations?${query}`);
      expect(res.status, query).toBe(400);
      ProblemDocument.parse(await res.json());
    }
  });
});

describe("GET /v1/conversations/{id}/turns/{turnId}", () => {
  it("returns a past turn as it was answered: its model input then, not now, and when", async () => {
    const { agent, frontend } = await setup();
    const conversation = await frontend.conversation(agent);
    const first = await frontend.turn(conversation, { turnId: "turn-1", agent, message: "What am I working on?" });
    await frontend.turn(conversation, { turnId: "turn-2", agent, message: "And next?" });

    const past = PastTurn.parse(await frontend.json("GET", `/v1/conversations/${conversation}/turns/turn-1`));
    expect({ ...past, createdAt: undefined, reportedUsage: undefined }).toEqual({ ...first, replayed: true, createdAt: undefined, reportedUsage: undefined });
    expect(past.messages).toHaveLength(2);
    expect(Date.parse(past.createdAt)).not.toBeNaN();
    expect(past.reportedUsage).toEqual([]);
  });

  it("answers 404 for an unknown turn, a malformed one, and another user's conversation", async () => {
    const { agent, frontend } = await setup();
    const conversation = await frontend.conversation(agent);
    await frontend.turn(conversation, { turnId: "turn-1", agent, message: "hi" });
    expect((await frontend.request("GET", `/v1/conversations/${conversation}/turns/nope`)).status).toBe(404);
    expect((await frontend.request("GET", `/v1/conversations/${conversation}/turns/${"x".repeat(200)}`)).status).toBe(404);
    const stranger = await Frontend.for(freshIdentity());
    expect((await stranger.request("GET", `/v1/conversations/${conversation}/turns/turn-1`)).status).toBe(404);
  });
});

describe("a conversation's turns", () => {
  it("lists them oldest first, a page at a time: tokens, contexts injected and left out with why, a missing one's detail", async () => {
    const id = freshIdentity();
    let editor = "draft";
    const app = await TestApp.connect(id, "notes", {
      editor: { current: () => ({ content: editor, title: "Editor" }) },
      empty: { current: () => null },
      broken: {
        current: () => {
          throw new Error("disk is gone");
        },
      },
    });
    const agent = await app.createAgent("assistant", ["notes:editor", "notes:empty", "notes:broken"]);
    const frontend = await Frontend.for(id);
    const conversation = await frontend.conversation(agent);
    const first = await frontend.turn(conversation, { agent, message: "one" });
    await frontend.json("POST", `/v1/conversations/${conversation}/messages`, { messages: [{ role: "assistant", content: "ok" }] });
    await frontend.turn(conversation, { agent, message: "two" });
    await frontend.json("POST", `/v1/conversations/${conversation}/messages`, { messages: [{ role: "assistant", content: "ok" }] });
    editor = "draft two";
    await frontend.turn(conversation, { agent, message: "three" });

    const page1 = await frontend.json<TurnPage>("GET", `/v1/conversations/${conversation}/turns?limit=2`);
    expect(page1.turns.map((t) => t.turnId)[0]).toBe(first.turnId);
    expect(page1.turns).toHaveLength(2);
    expect(page1.nextCursor).toBe("2");
    expect(page1.turns[0]).toMatchObject({ agent, selected: ["notes:editor"], toolCalls: 0, compacted: false });
    expect(page1.turns[0]!.tokens).toBe(first.usage.total);
    expect(page1.turns[1]!.leftOut).toEqual([
      { id: "notes:editor", reason: "unchanged" },
      { id: "notes:empty", reason: "empty" },
      { id: "notes:broken", reason: "missing", missing: { reason: "error", detail: expect.stringContaining("disk is gone") } },
    ]);
    const page2 = await frontend.json<TurnPage>("GET", `/v1/conversations/${conversation}/turns?cursor=${page1.nextCursor}&limit=2`);
    expect(page2.turns.map((t) => t.selected)).toEqual([["notes:editor"]]);
    expect(page2.nextCursor).toBeNull();
    await expectProblem(await frontend.request("GET", `/v1/conversations/${conversation}/turns?cursor=abc`), 400, "invalid-request");
  });
});
