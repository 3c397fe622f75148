import { describe, expect, it } from "vitest";
import { assembleTurn, usageOf } from "../../src/core/assemble";
import type { ChatMessage } from "../../src/protocol/messages";

const summary: ChatMessage = { role: "user", content: "<summary_fence covers=\"messages #1–#40\">The user said, verbatim: - [#3] The Heron launch is on Thursday, not Tuesday.</summary_fence>" };
const filler = (n: number): ChatMessage[] => [
  { role: "user", content: `Question ${n}: ${"tell me more about the harbour schedule and the cranes ".repeat(6)}` },
  { role: "assistant", content: `Answer ${n}: ${"the cranes run on the usual schedule this week ".repeat(6)}` },
];
const history = [summary, ...filler(1), ...filler(2), ...filler(3)];
const turn = (summaryFirst: boolean, maxTokens: number) =>
  assembleTurn({ turnId: "t", conversationId: "c", now: new Date("2026-11-23T00:00:00Z"), systemPrompt: "You help.", history, userText: "And now?", ledger: [], observations: [], maxTokens, summaryFirst });

describe("a budget and the summary", () => {
  it("gives up the oldest messages after the summary before the summary itself", () => {
    const whole = turn(true, 100_000);
    if (!whole.ok) throw new Error(whole.problem.detail);
    // Room for all but about one exchange.
    const budget = whole.value.usage.total - 150;
    const kept = turn(true, budget);
    if (!kept.ok) throw new Error(kept.problem.detail);
    expect(usageOf(kept.value.messages)).toBeLessThanOrEqual(budget);
    expect(kept.value.messages[1]).toBe(summary);
    // The oldest messages after the summary went, in order, and the rest stayed.
    const gone = kept.value.envelope.budget.truncations.map((t) => t.id);
    expect(gone.length).toBeGreaterThan(0);
    expect(gone).toEqual(gone.map((_, k) => `history:${k + 1}`));
    expect(kept.value.historyShown).toEqual([0, ...history.map((_, k) => k).slice(gone.length + 1)]);
    // Without a summary to keep, the oldest message goes first, as before.
    const plain = turn(false, budget);
    if (!plain.ok) throw new Error(plain.problem.detail);
    expect(plain.value.historyShown[0]).not.toBe(0);
  });

  it("gives the summary up last of the history, when nothing else is left", () => {
    const whole = turn(true, 100_000);
    if (!whole.ok) throw new Error(whole.problem.detail);
    const tight = turn(true, whole.value.usage.total - whole.value.usage.history + 5);
    if (!tight.ok) throw new Error(tight.problem.detail);
    expect(tight.value.historyShown).toEqual([]);
  });
});
