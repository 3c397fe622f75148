/**
 * A provider that notifies its changes, end to end: the SDK's ContextApp on a real socket to `wrangler dev`, a
 * frontend through the SDK's ContextClient. The runtime asks the provider once, reuses its answer while nothing
 * changes, and asks again once `notifyChanged` has settled.
 */
import { describe, expect, it } from "vitest";
import { freshIdentity, frontend, reminderOf, startApp } from "./support";

describe("a provider that notifies its changes, through the SDK", () => {
  it("is asked once while nothing changes, and again after notifyChanged", async () => {
    const id = freshIdentity();
    const doc = { body: "Draft one", asked: 0 };
    const app = await startApp(id, {
      name: "desk",
      contexts: [{ id: "doc", name: "Document", notifies: true, getCurrent: () => ((doc.asked += 1), { title: "Document", content: doc.body }) }],
    });
    const { agentId } = await app.createAgent({ agentId: "writer", name: "Writer", systemPrompt: "You write.", attachedContexts: ["desk:doc"] });
    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent: agentId });

    const first = await client.turn(conversation, { agent: agentId, message: "one" });
    expect(reminderOf(first)).toContain("Draft one");
    const second = await client.turn(conversation, { agent: agentId, message: "two" });
    expect(doc.asked).toBe(1);
    expect(second.envelope.stages!.find((s) => s.stage === "pull")!.decided).toMatchObject({ kept: 1 });

    doc.body = "Draft two";
    await app.notifyChanged("doc");
    const third = await client.turn(conversation, { agent: agentId, message: "three" });
    expect(doc.asked).toBe(2);
    expect(reminderOf(third)).toContain("Draft two");
  });
});
