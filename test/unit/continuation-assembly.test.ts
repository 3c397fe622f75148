import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assembleTurn, messageTokens, renderNotShown, usageOf } from "../../src/core/assemble";
import { pairingProblems } from "../../src/core/groups";
import { textOf, type ChatMessage } from "../../src/protocol/messages";

/** A continuation's model input: no new message; the model answers the last user message in `history`. */
const continuation = (history: readonly ChatMessage[], maxTokens?: number) =>
  assembleTurn({ turnId: "t", conversationId: "c", now: new Date(0), systemPrompt: "You are a test.", history, ledger: [], observations: [], maxTokens, answersRequest: true });

const call = (id: string, name = "search") => ({ id, type: "function" as const, function: { name, arguments: `{"q":"${id}"}` } });
const big = (tag: string, lines: number) => `${tag}\n` + `row of ${tag} with words 1234\n`.repeat(lines);

describe("a continuation's model input", () => {
  const request: ChatMessage = { role: "user", content: "Search the three archives." };
  const calls: ChatMessage = { role: "assistant", content: null, tool_calls: [call("x"), call("y", "read_file"), call("z")] };
  const results: ChatMessage[] = ["x", "y", "z"].map((id) => ({ role: "tool", tool_call_id: id, content: big(`archive ${id}`, 60) }));
  const history = [request, calls, ...results];

  it("shows results that do not fit as stand-ins naming the tool and size, oldest first, keeping the request and the calls", () => {
    const full = continuation(history);
    expect(full.ok).toBe(true);
    const total = full.ok ? full.value.usage.total : 0;
    const note = `[tool result not shown: search returned ~${messageTokens(results[0]!)} tokens, more than this turn's budget holds]`;
    expect(renderNotShown("search", messageTokens(results[0]!))).toBe(note);
    // Just what standing in the oldest result saves: only it gives way.
    const budget = total - messageTokens(results[0]!) + messageTokens({ role: "tool", tool_call_id: "x", content: note });
    const tight = continuation(history, budget);
    expect(tight.ok).toBe(true);
    if (!tight.ok) return;
    const { messages, standIns, envelope } = tight.value;
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool", "tool"]);
    expect(pairingProblems(messages)).toEqual([]);
    expect(tight.value.usage.total).toBeLessThanOrEqual(budget);
    expect(textOf(messages[3]!)).toBe(note);
    expect(textOf(messages[5]!)).toBe(textOf(results[2]!));
    expect(standIns).toEqual([{ index: 2, toolCallId: "x", tool: "search", tokens: messageTokens(results[0]!) }]);
    expect(envelope.budget.truncations.map((t) => t.id)).toEqual(["tool_result:2"]);
  });

  it("gives up whole old rounds only after every result is a stand-in", () => {
    const older: ChatMessage[] = [{ role: "assistant", content: null, tool_calls: [call("w")] }, { role: "tool", tool_call_id: "w", content: big("old", 60) }];
    const loop = [request, ...older, calls, ...results];
    const minimal = continuation(loop, 1);
    expect(minimal.ok).toBe(false);
    // Room for the request, both rounds' calls and their stand-ins: no call is given up.
    const standIns = continuation(loop, 420);
    expect(standIns.ok && standIns.value.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "tool", "tool", "tool"]);
    expect(standIns.ok && standIns.value.standIns.length).toBe(4);
  });

  it("is refused when no user message is in view, and unchanged without answersRequest", () => {
    const refused = continuation([calls, ...results]);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.problem.type).toBe("conflict");
    // `GET …/context` assembles without a request and may begin with the model's calls.
    const plain = assembleTurn({ turnId: "t", conversationId: "c", now: new Date(0), systemPrompt: "s", history: [calls, ...results], ledger: [], observations: [] });
    expect(plain.ok).toBe(true);
  });

  it("holds over random tool loops and budgets: a user message, pairs whole, within the budget, stand-ins only for results", () => {
    const loop = fc.record({
      rounds: fc.array(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.array(fc.integer({ min: 0, max: 80 }), { minLength: 3, maxLength: 3 })), { minLength: 1, maxLength: 6 }),
      before: fc.integer({ min: 0, max: 4 }),
      budget: fc.integer({ min: 40, max: 3_000 }),
    });
    fc.assert(
      fc.property(loop, ({ rounds, before, budget }) => {
        const history: ChatMessage[] = [];
        for (let i = 0; i < before; i++) history.push({ role: "user", content: `Earlier ${i}.` }, { role: "assistant", content: big(`answer ${i}`, 5) });
        history.push({ role: "user", content: "The request." });
        rounds.forEach(([n, sizes], r) => {
          const ids = Array.from({ length: n }, (_, k) => `r${r}c${k}`);
          history.push({ role: "assistant", content: null, tool_calls: ids.map((id) => call(id)) });
          ids.forEach((id, k) => history.push({ role: "tool", tool_call_id: id, content: sizes[k] ? big(id, sizes[k]!) : "ok" }));
        });
        const result = continuation(history, budget);
        if (!result.ok) {
          // Only a budget too small for the system prompt and the request.
          expect(result.problem.type).toBe("limit-exceeded");
          expect(budget).toBeLessThan(usageOf([{ role: "system", content: "You are a test." }, { role: "user", content: "The request." }]) + 40);
          return;
        }
        const { messages, standIns, historyShown } = result.value;
        expect(usageOf(messages)).toBeLessThanOrEqual(budget);
        expect(messages.some((m) => m.role === "user" && textOf(m) === "The request.")).toBe(true);
        expect(pairingProblems(messages)).toEqual([]);
        for (const s of standIns) {
          expect(historyShown).toContain(s.index);
          expect(history[s.index]!.role).toBe("tool");
        }
        expect(messages.filter((m) => m.role === "tool" && textOf(m).startsWith("[tool result not shown:")).length).toBe(standIns.length);
      }),
      { numRuns: 500 },
    );
  });
});
