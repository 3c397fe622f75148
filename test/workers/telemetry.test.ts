/**
 * What leaves the runtime besides answers (docs/telemetry.md): a past turn's export in the Agent Context draft's
 * vocabulary with its exact model input, and the user's counters per agent at GET /v1/metrics.
 */
import { describe, expect, it } from "vitest";
import { TurnExport } from "../../src/protocol/turn-export";
import { MetricsPage } from "../../src/telemetry/metrics";
import type { TurnResult } from "../../src/protocol/frontend";
import { expectProblem, freshIdentity, Frontend } from "./support/runtime";
import { TestApp } from "./support/test-app";

async function setup() {
  const id = freshIdentity();
  const app = await TestApp.connect(id, "notes", { editor: { name: "Editor", current: () => ({ content: "Open note: Q4 plan", title: "Editor" }) } });
  const agent = await app.createAgent("assistant", ["notes:editor"]);
  const frontend = await Frontend.for(id);
  const conversation = await frontend.conversation(agent);
  return { agent, frontend, conversation };
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("GET …/turns/{turnId}/export", () => {
  it("gives the turn's evidence in the draft's vocabulary and the exact model input it produced, with its SHA-256", async () => {
    const { agent, frontend, conversation } = await setup();
    await frontend.turn(conversation, { turnId: "t1", agent, message: "What am I on?" });
    await frontend.json("POST", `/v1/conversations/${conversation}/messages`, { messages: [{ role: "assistant", content: "The Q4 plan." }], usage: { promptTokens: 900, completionTokens: 5, cachedTokens: 600 } });
    const turn = await frontend.turn(conversation, { turnId: "t2", agent, message: "And now?" });

    const exported = TurnExport.strict().parse(await frontend.json("GET", `/v1/conversations/${conversation}/turns/t2/export`));
    // Byte for byte: the messages and tools as the turn answered them, and the digest of exactly that text.
    expect(JSON.stringify(exported.model_input.messages)).toBe(JSON.stringify(turn.messages));
    expect(JSON.stringify(exported.model_input.tools)).toBe(JSON.stringify(turn.tools));
    expect(exported.model_input.sha256).toBe(await sha256(JSON.stringify(turn.tools ? { messages: turn.messages, tools: turn.tools } : { messages: turn.messages })));
    expect(exported.context_envelope).toMatchObject({ context_id: "t2", scope: "turn", runtime_refs: { conversation_id: conversation, turn_id: "t2", agent_id: agent } });
    // The editor did not change since t1: omitted as unchanged, and the draft's names carry the runtime's reasons.
    expect(exported.context_selection.omitted_item_refs).toEqual([{ item_ref: "notes:editor", reason: "unchanged" }]);
    expect(exported.context_assembly.ordered_blocks.map((b) => b.injection_point)).toContain("system_prompt");
    expect(exported.context_budget.actual_tokens).toBe(turn.envelope.budget.usedTokens);
    expect(exported.evidence).toEqual(turn.envelope);

    const first = TurnExport.parse(await frontend.json("GET", `/v1/conversations/${conversation}/turns/t1/export`));
    expect(first.context_selection.selected_item_refs).toEqual([{ item_ref: "notes:editor", reason: "first" }]);
    expect(first.context_injection).toEqual([{ item_ref: "notes:editor", injection_point: "user_message_appendix", target: "model", marker: "first" }]);
    expect(first.usage).toMatchObject([{ promptTokens: 900, cachedTokens: 600 }]);
  });

  it("is a 404 for a turn that is not the conversation's, or another user's conversation", async () => {
    const { agent, frontend, conversation } = await setup();
    await frontend.turn(conversation, { turnId: "t1", agent, message: "hi" });
    await expectProblem(await frontend.request("GET", `/v1/conversations/${conversation}/turns/nope/export`), 404, "not-found");
    const stranger = await Frontend.for(freshIdentity());
    await expectProblem(await stranger.request("GET", `/v1/conversations/${conversation}/turns/t1/export`), 404, "not-found");
  });
});

describe("GET /v1/metrics", () => {
  /** The counters are written after the answer (waitUntil): read until they show `turns`. */
  async function metricsAfter(frontend: Frontend, turns: number) {
    for (let i = 0; i < 50; i++) {
      const page = MetricsPage.strict().parse(await frontend.json("GET", "/v1/metrics"));
      if ((page.agents[0]?.turns ?? 0) >= turns) return page;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error("the counters never reached the turns taken");
  }

  it("counts the user's turns, tokens and cached share per agent, and nobody else's", async () => {
    const { agent, frontend, conversation } = await setup();
    const turns: TurnResult[] = [];
    turns.push(await frontend.turn(conversation, { turnId: "t1", agent, message: "one" }));
    await frontend.json("POST", `/v1/conversations/${conversation}/messages`, { messages: [{ role: "assistant", content: "ok" }], usage: { promptTokens: 1000, completionTokens: 10, cachedTokens: 250 } });
    turns.push(await frontend.turn(conversation, { turnId: "t2", agent, message: "two" }));
    await frontend.json("POST", `/v1/conversations/${conversation}/messages`, { messages: [{ role: "assistant", content: "ok" }], usage: { promptTokens: 1000, completionTokens: 20, cachedTokens: 750 } });
    // A replayed turn (same turnId) is not counted again.
    await frontend.turn(conversation, { turnId: "t2", agent, message: "two" });

    const page = await metricsAfter(frontend, 2);
    await new Promise((r) => setTimeout(r, 50));
    const [row] = MetricsPage.parse(await frontend.json("GET", "/v1/metrics")).agents;
    expect(page.agents).toHaveLength(1);
    expect(row).toMatchObject({ agent, turns: 2, promptTokens: 2000, completionTokens: 30, cachedTokens: 1000, cachedShare: 0.5, compactions: 0, toolCalls: 0, toolFailures: 0, hookFailures: 0 });
    expect(row!.runtimeTokens).toBe(turns[0]!.usage.total + turns[1]!.usage.total);

    const stranger = await Frontend.for(freshIdentity());
    expect(MetricsPage.parse(await stranger.json("GET", "/v1/metrics")).agents).toEqual([]);
  });
});
