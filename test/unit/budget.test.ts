import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assembleTurn, messageTokens, usageOf, type AppendixSection } from "../../src/core/assemble";
import { fitBudget, type BudgetItem } from "../../src/core/budget";
import { groupMessages } from "../../src/core/groups";
import type { Observation } from "../../src/core/ledger";
import type { ChatMessage } from "../../src/protocol/messages";
import { neutralize } from "../../src/core/neutralize";

const words = fc.array(fc.constantFrom("alpha", "beta", "ledger", "context", "runtime", "42", "{\"k\":1}", "日本", "\n"), { minLength: 1, maxLength: 60 }).map((w) => w.join(" "));

/** A random history of whole groups: user messages, replies, and tool calls each answered by all their results. */
const history = fc
  .array(
    fc.oneof(
      words.map((content): ChatMessage[] => [{ role: "user", content }]),
      words.map((content): ChatMessage[] => [{ role: "assistant", content }]),
      fc.tuple(fc.integer({ min: 1, max: 3 }), words, fc.nat()).map(([n, content, salt]): ChatMessage[] => {
        const calls = Array.from({ length: n }, (_, i) => ({ id: `call_${salt}_${i}`, type: "function" as const, function: { name: "search", arguments: `{"q":"${i}"}` } }));
        return [{ role: "assistant", content: null, tool_calls: calls }, ...calls.map((c): ChatMessage => ({ role: "tool", tool_call_id: c.id, content }))];
      }),
    ),
    { maxLength: 30 },
  )
  .map((groups) => {
    // Call ids must be unique across the history, as they are in a conversation.
    let n = 0;
    return groups.flat().map((m): ChatMessage => {
      if (m.role === "assistant" && m.tool_calls) return { ...m, tool_calls: m.tool_calls.map((c) => ({ ...c, id: `${c.id}_${n++}` })) };
      return m;
    });
  })
  .map(renumberResults);

function renumberResults(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let pending: string[] = [];
  for (const m of messages) {
    if (m.role === "assistant" && m.tool_calls) pending = m.tool_calls.map((c) => c.id);
    out.push(m.role === "tool" ? { ...m, tool_call_id: pending.shift()! } : m);
  }
  return out;
}

const contexts = fc.array(words, { maxLength: 4 }).map((texts) =>
  texts.map((content, i): Observation => ({ key: `app:ctx${i}`, kind: "context", status: "present", title: `Context ${i}`, version: `v${i}`, content })),
);
const memory = fc.array(words, { maxLength: 5 }).map(
  (texts): AppendixSection => ({ kind: "memory", entries: texts.map((text, i) => ({ id: `m${i}`, text })), wrap: (t) => `<memory_fence>\n${t.join("\n")}\n</memory_fence>` }),
);

function pairedAndOrdered(messages: readonly ChatMessage[]): void {
  const open = new Set<string>();
  for (const m of messages) {
    if (m.role === "tool") {
      expect(open.has(m.tool_call_id), `result ${m.tool_call_id} without its call`).toBe(true);
      open.delete(m.tool_call_id);
    } else {
      expect(open.size, `call(s) ${[...open].join(", ")} without results`).toBe(0);
      if (m.role === "assistant") for (const c of m.tool_calls ?? []) open.add(c.id);
    }
  }
  expect(open.size).toBe(0);
}

describe("token budgets (property)", () => {
  it("never exceeds the budget, never drops class 0, never separates a tool call from its results, gives up the lowest class first", () => {
    fc.assert(
      fc.property(history, contexts, memory, words, fc.integer({ min: 0, max: 3000 }), (past, observed, mem, userText, maxTokens) => {
        const result = assembleTurn({ turnId: "t", conversationId: "c", now: new Date(0), systemPrompt: "You are a test.", history: past, userText, ledger: [], observations: observed, sections: [mem], maxTokens });
        const floor = usageOf([{ role: "system", content: "You are a test." }, { role: "user", content: neutralize(userText) }]);
        if (!result.ok) {
          expect(floor).toBeGreaterThan(maxTokens);
          return;
        }
        const { messages, envelope } = result.value;
        expect(usageOf(messages)).toBeLessThanOrEqual(maxTokens);
        expect(envelope.budget.usedTokens).toBe(usageOf(messages));
        expect(messages[0]).toEqual({ role: "system", content: "You are a test." });
        expect(messages.at(-1)!.role).toBe("user");
        expect(String(messages.at(-1)!.content).startsWith(neutralize(userText))).toBe(true);
        pairedAndOrdered(messages);
        const dropped = envelope.budget.truncations;
        const keptHistory = messages.slice(1, -1);
        const keptMemory = String(messages.at(-1)!.content).includes("<memory_fence>");
        for (const t of dropped) expect(t.priority).toBeGreaterThan(0);
        // A class is given up only after every lower class is gone...
        if (dropped.some((t) => t.priority <= 2)) expect(keptHistory).toEqual([]);
        if (dropped.some((t) => t.priority === 1)) expect(keptMemory).toBe(false);
        // ...and history from its oldest end: what is kept is the most recent part.
        expect(keptHistory).toEqual(past.slice(past.length - keptHistory.length));
      }),
      { numRuns: 1000 },
    );
  });

  it("keeps everything when it fits, and then reports no truncation", () => {
    fc.assert(
      fc.property(history, words, (past, userText) => {
        const result = assembleTurn({ turnId: "t", conversationId: "c", now: new Date(0), systemPrompt: "s", history: past, userText, ledger: [], observations: [], maxTokens: 1_000_000 });
        expect(result.ok && result.value.messages.length).toBe(past.length + 2);
        expect(result.ok && result.value.envelope.budget.truncations).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });
});

describe("this turn's tool results", () => {
  it("are class 1: memory and older history go before them", () => {
    const call = { id: "c1", type: "function" as const, function: { name: "search", arguments: "{}" } };
    const history: ChatMessage[] = [
      { role: "user", content: "earlier question ".repeat(20) },
      { role: "assistant", content: "earlier answer ".repeat(20) },
      { role: "assistant", content: null, tool_calls: [call] },
      { role: "tool", tool_call_id: "c1", content: "result ".repeat(40) },
    ];
    const memory: AppendixSection = { kind: "memory", entries: [{ id: "m1", text: "remembered ".repeat(30) }], wrap: (t) => `<memory_fence>\n${t.join("\n")}\n</memory_fence>` };
    const input = { turnId: "t", conversationId: "c", now: new Date(0), systemPrompt: "s", history, userText: "go on", ledger: [], observations: [], sections: [memory], currentFrom: 2 };
    const full = assembleTurn(input);
    const total = full.ok ? full.value.usage.total : 0;
    const tight = assembleTurn({ ...input, maxTokens: total - 60 });
    expect(tight.ok && tight.value.envelope.budget.truncations.map((t) => t.kind)).toEqual(["history", "history"]);
    const tighter = assembleTurn({ ...input, maxTokens: total - 110 });
    expect(tighter.ok && tighter.value.envelope.budget.truncations.map((t) => t.kind)).toEqual(["history", "history", "memory"]);
    expect(tighter.ok && tighter.value.messages.slice(1, -1)).toEqual(history.slice(2));
  });
});

describe("fitBudget", () => {
  const item = (id: string, priority: BudgetItem["priority"], age: number, tokens: number): BudgetItem => ({ id, kind: "history", priority, age, tokens });

  it("gives up the lowest class first and the oldest first within it", () => {
    const items = [item("sys", 0, 0, 10), item("old", 3, 0, 10), item("new", 3, 1, 10), item("mem", 2, 0, 10), item("ctx", 1, 0, 10)];
    const fit = fitBudget(items, 30);
    expect(fit.ok && fit.truncations.map((t) => t.id)).toEqual(["old", "new"]);
    const tighter = fitBudget(items, 15);
    expect(tighter.ok && tighter.truncations.map((t) => t.id)).toEqual(["old", "new", "mem", "ctx"]);
  });

  it("refuses when class 0 alone does not fit, naming what it needs", () => {
    expect(fitBudget([item("sys", 0, 0, 50), item("h", 3, 0, 5)], 40)).toEqual({ ok: false, required: 50 });
  });
});

describe("turn groups", () => {
  it("keeps an assistant's tool calls and all their results in one group", () => {
    const calls = [1, 2].map((i) => ({ id: `c${i}`, type: "function" as const, function: { name: "f", arguments: "{}" } }));
    const groups = groupMessages([
      { role: "user", content: "q" },
      { role: "assistant", content: null, tool_calls: calls },
      { role: "tool", tool_call_id: "c2", content: "two" },
      { role: "tool", tool_call_id: "c1", content: "one" },
      { role: "assistant", content: "done" },
    ]);
    expect(groups.map((g) => [g.kind, g.messages.length])).toEqual([["user", 1], ["tool_calls", 3], ["assistant", 1]]);
    expect(messageTokens(groups[1]!.messages[0]!)).toBeGreaterThan(0);
  });
});
