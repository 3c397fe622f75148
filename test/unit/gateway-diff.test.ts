/**
 * The gateway's diff rule over the hash chain (src/gateway/diff.ts): what a request brings that the conversation has
 * not consumed, where a conversation it continues can have stopped, and what is refused.
 */
import { describe, expect, it } from "vitest";
import { continuationChains, newPart, readHistory } from "../../src/gateway/diff";
import type { GatewayCursor } from "../../src/conversation/gateway-store";
import type { ChatRequestMessage } from "../../src/protocol/gateway-openai";

const user = (content: string): ChatRequestMessage => ({ role: "user", content });
const answer = (content: string): ChatRequestMessage => ({ role: "assistant", content });

/** The cursor once `messages` were consumed and answered (as the loop leaves it). */
async function consumed(messages: ChatRequestMessage[], awaiting = false): Promise<GatewayCursor> {
  const { hashes, chains } = await readHistory(messages);
  return { consumed: messages.length, lastHash: hashes.at(-1)!, awaiting, chain: chains.at(-1)! };
}

const codeOf = (r: Awaited<ReturnType<typeof newPart>>) => (r.ok ? r.value.kind : r.problem.body.error.code);

describe("the diff rule over the hash chain", () => {
  it("takes what follows a resent history as new, and moves the chain over it", async () => {
    const cursor = await consumed([user("one"), answer("A1")]);
    const resent = [{ role: "system" as const, content: "be brief" }, user("one"), { ...answer("A1"), refusal: null }, user("two")];
    const part = await newPart(await readHistory(resent), cursor);
    expect(part.ok && part.value).toMatchObject({ kind: "new", message: "two", consumed: { consumed: 3, awaiting: true, chain: (await readHistory(resent)).chains.at(-1) } });
  });

  it("refuses a history whose earlier message was edited, though its last consumed message is the same", async () => {
    const cursor = await consumed([user("one"), answer("A1"), user("two"), answer("A2")]);
    const edited = await readHistory([user("ONE"), answer("A1"), user("two"), answer("A2"), user("three")]);
    expect(codeOf(await newPart(edited, cursor))).toBe("history_mismatch");
  });

  it("compares a cursor from before chains by its last message alone, and gives it the resent history's chain", async () => {
    const legacy = { ...(await consumed([user("one"), answer("A1")])), chain: null };
    const history = await readHistory([user("one"), answer("A1"), user("two")]);
    const part = await newPart(history, legacy);
    expect(part.ok && part.value.consumed.chain).toBe(history.chains.at(-1));
    // Only the new part sent: the chain cannot be known, and stays unknown.
    const alone = await newPart(await readHistory([user("two")]), legacy);
    expect(alone.ok && alone.value.consumed.chain).toBeNull();
  });

  it("extends the chain over a new part sent alone, to the chain of the whole history", async () => {
    const cursor = await consumed([user("one"), answer("A1")]);
    const part = await newPart(await readHistory([user("two")]), cursor);
    expect(part.ok && part.value.consumed.chain).toBe((await readHistory([user("one"), answer("A1"), user("two")])).chains.at(-1));
  });

  it("refuses an empty new part with nothing_new: no messages but system ones, an empty or white-space message", async () => {
    const cursor = await consumed([user("one"), answer("A1")]);
    const cases: [ChatRequestMessage[], GatewayCursor | null][] = [
      [[{ role: "system", content: "sys" }], null],
      [[{ role: "system", content: "sys" }], cursor],
      [[user("")], null],
      [[user(" \n ")], null],
      [[user("one"), answer("A1"), user("")], cursor],
      [[{ role: "user", content: [] }], null],
    ];
    for (const [messages, at] of cases) {
      const part = await newPart(await readHistory(messages), at);
      expect(codeOf(part), JSON.stringify(messages)).toBe("nothing_new");
    }
    // An empty message after results is no new part of its own: the results are taken.
    const calling = await consumed([user("one"), { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] }]);
    const part = await newPart(await readHistory([{ role: "tool", tool_call_id: "c1", content: "42" }, user("")]), calling);
    expect(part.ok && part.value).toMatchObject({ kind: "new", toolResults: [{ tool_call_id: "c1", content: "42" }] });
  });

  it("looks a conversation up only where one it continues can have stopped: at the last answer, or after it", async () => {
    const history = await readHistory([user("one"), answer("A1"), user("two"), answer("A2"), { role: "tool", tool_call_id: "c", content: "r" }, user("three")]);
    expect(continuationChains(history)).toEqual(history.chains.slice(3));
    const fresh = await readHistory([user("one"), user("two")]);
    expect(continuationChains(fresh)).toEqual(fresh.chains);
    expect(continuationChains(await readHistory([]))).toEqual([]);
  });
});
