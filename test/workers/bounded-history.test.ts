import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CONVERSATION_MIGRATIONS } from "../../src/conversation/migrations";
import { ConversationDb } from "../../src/conversation/store";
import { conversationStub } from "../../src/conversation/stub";
import { durableDatabase } from "../../src/storage/database";
import { migrate } from "../../src/storage/migrate";
import { LIMITS } from "../../src/protocol/limits";
import type { ConversationInfo, MessagePage, TurnResult } from "../../src/protocol/frontend";
import { expectProblem, freshIdentity, Frontend } from "./support/runtime";
import { TestApp } from "./support/test-app";

async function setup() {
  const id = freshIdentity();
  const app = await TestApp.connect(id, "notes", { editor: { current: () => ({ content: "cursor at line 1", title: "Editor" }) } });
  const agent = await app.createAgent("assistant", ["notes:editor"]);
  const frontend = await Frontend.for(id);
  const conversation = await frontend.conversation();
  const path = `/v1/conversations/${conversation}`;
  await frontend.turn(conversation, { agent, message: "Let us plan the quarter." });
  const count = async () => (await frontend.json<ConversationInfo>("GET", path)).messageCount;
  return { id, agent, frontend, conversation, path, count };
}

type Setup = Awaited<ReturnType<typeof setup>>;

const PROSE = "The quarterly plan lists the owners, the open questions and the dates we agreed on last week. ".repeat(700);
/** A reply of the most a message may hold, different each time. */
const reply = (i: number) => ({ role: "assistant", content: `Reply ${i}. ${PROSE}`.slice(0, LIMITS.messageChars) });

/** Appends replies `per` at a time (30 of the largest fit one 2 MiB body) until `until` says stop or an append is refused. */
async function grow(s: Setup, from: number, per: number, until: (appended: number) => boolean): Promise<{ appended: number; refused: Response | null }> {
  let appended = from;
  while (!until(appended)) {
    const res = await s.frontend.request("POST", `${s.path}/messages`, { messages: Array.from({ length: per }, (_, k) => reply(appended + k)) });
    if (res.status !== 201) return { appended, refused: res };
    await res.text();
    appended += per;
  }
  return { appended, refused: null };
}

/** Every stored message through the pages, checking each page stays small. */
async function pageThrough(s: Setup, limit?: number) {
  const seqs: number[] = [];
  let pages = 0;
  for (let after = 0; ; pages++) {
    const res = await s.frontend.request("GET", `${s.path}/messages?after=${after}${limit ? `&limit=${limit}` : ""}`);
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).toBe(200);
    expect(text.length).toBeLessThan(2 * LIMITS.historyReadBytes);
    const page = JSON.parse(text) as MessagePage;
    seqs.push(...page.messages.map((m) => m.seq));
    if (!page.hasMore) return { seqs, pages: pages + 1 };
    expect(page.nextAfter).toBe(page.messages.at(-1)!.seq);
    after = page.nextAfter;
  }
}

const inOrder = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe("bounded history", () => {
  it("pages GET …/messages with a cursor: every message once, in order", async () => {
    const s = await setup();
    await grow(s, 0, 3, (n) => n >= 9);
    expect(await s.count()).toBe(10);
    const first = await s.frontend.json<MessagePage>("GET", `${s.path}/messages?limit=4`);
    expect(first.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4]);
    expect(first).toMatchObject({ nextAfter: 4, hasMore: true });
    expect((await pageThrough(s, 4)).seqs).toEqual(inOrder(10));
    // The default page holds them all; past the end is an empty last page.
    expect(await s.frontend.json<MessagePage>("GET", `${s.path}/messages`)).toMatchObject({ nextAfter: 10, hasMore: false });
    expect(await s.frontend.json<MessagePage>("GET", `${s.path}/messages?after=10`)).toEqual({ messages: [], nextAfter: 10, hasMore: false });
    for (const bad of ["limit=0", `limit=${LIMITS.messagesPerPage + 1}`, "after=-1", "after=x", "cursor=3"]) {
      await expectProblem(await s.frontend.request("GET", `${s.path}/messages?${bad}`), 400, "invalid-request");
    }
  });

  it("a conversation grown past 32 MiB never answers 500: reads page, a turn that cannot be answered stores nothing, a window makes it usable", { timeout: 60_000 }, async () => {
    const s = await setup();
    // 18 appends of 30 replies: 34,560,000 characters, past the Durable Object's 32 MiB RPC limit.
    await grow(s, 0, 30, (n) => n * LIMITS.messageChars > 34_000_000);
    const stored = await s.count();
    expect(stored).toBe(541);

    const { seqs, pages } = await pageThrough(s);
    expect(seqs).toEqual(inOrder(stored));
    expect(pages).toBeGreaterThan(8);

    // Without a window or a budget the model would read it all: refused, with what to do instead.
    const whole = await expectProblem(await s.frontend.request("GET", `${s.path}/context`), 422, "limit-exceeded");
    expect(whole.detail).toContain("compaction window");
    const within = await s.frontend.json<{ tokens: number; truncated: { messages: number } }>("GET", `${s.path}/context?maxTokens=20000`);
    expect(within.tokens).toBeLessThanOrEqual(20_000);
    expect(within.truncated.messages).toBeGreaterThan(500);

    // A turn that cannot be answered stores nothing, its message included; its retry is refused the same way.
    const turn = { turnId: "too-large", agent: s.agent, message: "What did we decide?" };
    await expectProblem(await s.frontend.request("POST", `${s.path}/turns`, turn), 422, "limit-exceeded");
    await expectProblem(await s.frontend.request("POST", `${s.path}/turns`, turn), 422, "limit-exceeded");
    expect(await s.count()).toBe(stored);

    // With a budget, or a compaction window, turns work again.
    const budgeted = await s.frontend.turn(s.conversation, { agent: s.agent, message: "Within a budget?", budget: { maxTokens: 20_000 } });
    expect(budgeted.usage.total).toBeLessThanOrEqual(20_000);
    await s.frontend.json("PUT", `${s.path}/compaction`, { contextWindow: 128_000 });
    const compacted = await s.frontend.turn(s.conversation, turn);
    expect(compacted.envelope.compaction?.summary?.loss.join("\n")).toMatch(/were more than a summariser may read at once/);
    expect(compacted.usage.total).toBeLessThanOrEqual(128_000 - 4_096);
    expect((await s.frontend.json<TurnResult>("POST", `${s.path}/turns`, turn)).replayed).toBe(true);
    expect(await s.count()).toBe(stored + 2);
    await s.frontend.json("GET", `${s.path}/context`);
  });

  it("refuses new messages at the conversation's cap with problem+json, and stays readable, compactable and endable", { timeout: 90_000 }, async () => {
    const s = await setup();
    const cap = Math.floor(LIMITS.conversationBytes / (LIMITS.messageChars + 128));
    const batch = await grow(s, 0, 30, (n) => n + 30 > cap);
    expect(batch.refused).toBeNull();
    // Then one at a time, until the cap refuses one.
    const single = await grow(s, batch.appended, 1, () => false);
    const full = await expectProblem(single.refused!, 422, "limit-exceeded");
    expect(full.detail).toContain("this conversation is full");
    const stored = await s.count();
    expect(stored).toBe(single.appended + 1);

    // Every way in is refused before anything is stored: appends, turns, their retries, with a window too.
    await expectProblem(await s.frontend.request("POST", `${s.path}/messages`, { messages: [reply(0)] }), 422, "limit-exceeded");
    const turn = { turnId: "at-the-cap", agent: s.agent, message: reply(1).content };
    await expectProblem(await s.frontend.request("POST", `${s.path}/turns`, { ...turn, budget: { maxTokens: 20_000 } }), 422, "limit-exceeded");
    await expectProblem(await s.frontend.request("POST", `${s.path}/turns`, { ...turn, budget: { maxTokens: 20_000 } }), 422, "limit-exceeded");
    expect(await s.count()).toBe(stored);

    // Readable and still usable for what stores no message.
    expect((await pageThrough(s)).seqs).toEqual(inOrder(stored));
    await expectProblem(await s.frontend.request("GET", `${s.path}/context`), 422, "limit-exceeded");
    await s.frontend.json("GET", `${s.path}/context?maxTokens=8000`);
    await s.frontend.json("PUT", `${s.path}/compaction`, { contextWindow: 128_000 });
    expect((await s.frontend.json<{ compaction: unknown }>("POST", `${s.path}/compact`, {})).compaction).not.toBeNull();
    await s.frontend.json("GET", `${s.path}/context`);
    await s.frontend.json("GET", `${s.path}/compaction`);
    await s.frontend.json("POST", `${s.path}/clear`);
    await s.frontend.json("GET", `${s.path}/events?limit=500`);
    await s.frontend.json("DELETE", s.path);
    expect(await s.count()).toBe(stored);
  });
});

describe("the conversation's weight", () => {
  const weights = (state: DurableObjectState) => ({
    running: new ConversationDb(durableDatabase(state.storage)).messages.storedBytes(),
    summed: state.storage.sql.exec<{ b: number }>("SELECT SUM(IFNULL(octet_length(content), 0) + IFNULL(octet_length(tool_calls), 0) + IFNULL(octet_length(images), 0) + 128) AS b FROM messages").one().b,
  });

  it("is kept as a running total that equals the sum over its messages, and migration 0010 fills it for older conversations", async () => {
    const s = await setup();
    await s.frontend.turn(s.conversation, { agent: s.agent, message: "Plan the trip — with ümlauts, 漢字 and 🚲", images: [{ url: "https://images.example.com/a.png" }] });
    await s.frontend.json("POST", `${s.path}/messages`, { messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "search", arguments: '{"q":"ü"}' } }] }] });
    await s.frontend.json("POST", `${s.path}/messages`, { messages: [{ role: "tool", tool_call_id: "c1", content: "found 3 routes" }] });
    const stub = conversationStub(env, s.id, s.conversation);
    const live = await runInDurableObject(stub, (_, state) => weights(state));
    expect(live.running).toBe(live.summed);
    expect(live.running).toBeGreaterThan(4 * 128);
    const migrated = await runInDurableObject(stub, (_, state) => {
      // As version 9 left it: no running totals.
      state.storage.sql.exec("ALTER TABLE messages DROP COLUMN running_bytes");
      state.storage.sql.exec("DELETE FROM schema_migrations WHERE version = 10");
      migrate(durableDatabase(state.storage), CONVERSATION_MIGRATIONS);
      return weights(state);
    });
    expect(migrated).toEqual(live);
    // Where a byte-bounded read begins, from the running totals, is where summing the rows from the newest says.
    const starts = await runInDurableObject(stub, (_, state) => {
      const store = new ConversationDb(durableDatabase(state.storage));
      const rows = state.storage.sql.exec<{ seq: number; b: number }>("SELECT seq, IFNULL(octet_length(content), 0) + IFNULL(octet_length(tool_calls), 0) + IFNULL(octet_length(images), 0) + 128 AS b FROM messages ORDER BY seq").toArray();
      const summed = (after: number, max: number, through: number) => {
        let bytes = 0;
        let first = Math.min(through, rows.at(-1)!.seq) + 1;
        for (const row of [...rows].reverse()) {
          if (row.seq <= after || row.seq > through) continue;
          bytes += row.b;
          if (bytes > max) break;
          first = row.seq;
        }
        return first;
      };
      const cases = [0, 1, 2].flatMap((after) => [100, 200, 300, 10_000].flatMap((max) => [2, 3, 99].map((through) => [after, max, through] as const)));
      return cases.map(([after, max, through]) => [store.messages.firstSeqWithinBytes(after, max, through), summed(after, max, through)]);
    });
    for (const [fromTotals, fromRows] of starts) expect(fromTotals).toBe(fromRows);
  });
});
