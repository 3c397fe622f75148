import { describe, expect, it } from "vitest";
import type { ContextEvent, StoredMessage } from "../../src/protocol/frontend";
import { NEGATIVE_SAMPLES, SECRET_SAMPLES } from "../fixtures/secret-corpus";
import { freshIdentity, Frontend } from "./support/runtime";
import { TestApp } from "./support/test-app";

/**
 * The whole labelled corpus through the real tool-result path: every sample is
 * a tool result of a turn, and no secret value may be found afterwards in the
 * stored messages, the conversation's events, or the turns' evidence, while the
 * look-alikes come through untouched.
 */
describe("the secret corpus, end to end in workerd", () => {
  it("leaves no secret in stored messages, events or evidence, and keeps every look-alike", { timeout: 120_000 }, async () => {
    const id = freshIdentity();
    const app = await TestApp.connect(id, "agent", {});
    const agent = await app.createAgent("worker", [], "You run tools.", { resultPolicies: { dump: { strategy: "head", maxTokens: 32_000 } } });
    const frontend = await Frontend.for(id);
    const conversation = await frontend.conversation();
    const path = `/v1/conversations/${conversation}`;
    await frontend.turn(conversation, { agent, message: "run the tools" });

    const samples = [...SECRET_SAMPLES.filter((s) => !s.policy).map((s) => s.text), ...NEGATIVE_SAMPLES.map((s) => s.text)];
    const evidence: unknown[] = [];
    for (let start = 0; start < samples.length; start += 64) {
      const batch = samples.slice(start, start + 64);
      const calls = batch.map((_, i) => ({ id: `call_${start + i}`, type: "function", function: { name: "dump", arguments: "{}" } }));
      await frontend.json("POST", `${path}/messages`, { messages: [{ role: "assistant", content: null, tool_calls: calls }] });
      evidence.push(await frontend.turn(conversation, { agent, toolResults: batch.map((content, i) => ({ tool_call_id: calls[i]!.id, content })) }));
    }

    const messages: StoredMessage[] = [];
    for (let after = 0, more = true; more; ) {
      const page = await frontend.json<{ messages: StoredMessage[]; nextAfter: number; hasMore: boolean }>("GET", `${path}/messages?after=${after}`);
      messages.push(...page.messages);
      [after, more] = [page.nextAfter, page.hasMore];
    }
    const { events } = await frontend.json<{ events: ContextEvent[] }>("GET", `${path}/events?limit=500`);
    const everything = JSON.stringify([messages, events, evidence]);
    const leaked = SECRET_SAMPLES.filter((s) => !s.policy).flatMap((s) => s.secrets.filter((secret) => everything.includes(secret.value)).map((secret) => `${s.id}: ${secret.rule}`));
    expect(leaked).toEqual([]);
    const stored = messages.filter((m) => m.message.role === "tool").map((m) => String(m.message.content));
    for (const negative of NEGATIVE_SAMPLES) expect(stored, negative.id).toContain(negative.text);
  });
});
