/**
 * The conversation's repositories over Node's SQLite with the real migrations applied: every table's rows round-trip
 * through its repository, and rows as earlier versions left them still decode.
 */
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { ConversationDb } from "../../src/conversation/store";
import { DEFAULT_COMPACTION_POLICY } from "../../src/history/policy";
import { migrate } from "../../src/storage/migrate";
import { conversationMigrations, memoryDatabase, nodeDatabase } from "./support/node-sql";

const AT = "2026-11-01T09:00:00.000Z";
const call = { id: "c1", type: "function" as const, function: { name: "notes__search", arguments: '{"q":"plover"}' } };
const meta = {
  conversationId: "conv-1",
  tenant: "t",
  user: "u",
  agent: "notes",
  agentContexts: ["notes:today"],
  resultPolicies: { notes__search: { strategy: "head" as const, maxTokens: 200 } },
  compactionPolicy: { ...DEFAULT_COMPACTION_POLICY, contextWindow: 64_000 },
  createdAt: AT,
  nonce: "n0nce",
};

/** A database with the migrations through `version` applied, and a way to apply the rest. */
function migratedThrough(version: number) {
  const sql = new DatabaseSync(":memory:");
  const database = nodeDatabase(sql);
  const all = conversationMigrations();
  migrate(database, all.filter((m) => m.version <= version));
  return { sql, db: new ConversationDb(database), rest: () => migrate(database, all) };
}

describe("the conversation's migrations in Node", () => {
  it("apply all twenty-one, in order, once", () => {
    const { sql, database } = memoryDatabase();
    const versions = sql.prepare("SELECT version FROM schema_migrations ORDER BY version").all().map((r) => r.version);
    expect(versions).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    expect(migrate(database, conversationMigrations())).toBe(0);
  });
});

describe("each table through its repository", () => {
  it("round-trips the conversation row, messages, turns, events, ledger, attachments and resources", () => {
    const { db } = memoryDatabase();
    db.conversation.create(meta);
    expect(db.conversation.get()).toEqual({ ...meta, identity: null, personaAgent: null, endedAt: null, parent: null, depth: 0 });

    const seqs = db.transaction(() => [
      db.messages.append("turn-1", { role: "user", content: [{ type: "text", text: "Look at this" }, { type: "image_url", image_url: { url: "https://images.example.com/a.png" } }] }, AT),
      db.messages.append("turn-1", { role: "assistant", content: null, tool_calls: [call] }, AT),
      db.messages.append(null, { role: "tool", tool_call_id: "c1", content: "the Plover invoice: 310 EUR" }, AT),
    ]);
    expect(seqs).toEqual([1, 2, 3]);
    expect(db.messages.list().map((m) => [m.seq, m.turnId, m.message])).toEqual([
      [1, "turn-1", expect.objectContaining({ role: "user", content: [{ type: "text", text: "Look at this" }, { type: "image_url", image_url: { url: "https://images.example.com/a.png" } }] })],
      [2, "turn-1", expect.objectContaining({ role: "assistant", content: null, tool_calls: [call] })],
      [3, null, expect.objectContaining({ role: "tool", tool_call_id: "c1", content: "the Plover invoice: 310 EUR" })],
    ]);
    expect(db.messages.imagesAfter(0)).toEqual([[{ type: "image_url", image_url: { url: "https://images.example.com/a.png" } }]]);
    expect(db.messages.lastCalls()).toEqual([call]);
    expect(db.messages.openCalls().seq).toBe(0);
    expect(db.messages.count()).toBe(3);
    expect(db.searchIndex.search("Plover invoice", 5).hits.map((h) => h.seq)).toContain(3);

    const turn = { turnId: "turn-1", requestDigest: "d", systemPrompt: "You are notes.", userSeq: 1, historyView: [[1, 1]] as [number, number][], compactionId: 0, result: "{}" };
    db.turns.save(turn, AT);
    expect(db.turns.withTime("turn-1")).toEqual({ turn, createdAt: AT });
    expect([db.turns.latestId(), db.turns.ids(), db.turns.latestSystemPrompt()]).toEqual(["turn-1", ["turn-1"], "You are notes."]);

    const usage = { promptTokens: 10, completionTokens: 2, cachedTokens: null, model: "m", lastSeq: 3, source: "frontend" };
    db.events.add("turn-1", "model.usage", "m", usage, AT);
    db.events.add(null, "reminder.fired", "loop", { reason: "same call thrice", continuation: true, userSeq: 1 }, AT);
    expect(db.events.page(0, 10)).toEqual([
      { seq: 1, turnId: "turn-1", type: "model.usage", subject: "m", data: usage, at: AT },
      { seq: 2, turnId: null, type: "reminder.fired", subject: "loop", data: { reason: "same call thrice", continuation: true, userSeq: 1 }, at: AT },
    ]);
    expect(db.events.usageOf("turn-1")).toEqual([{ ...usage, at: AT }]);
    expect(db.events.lastReminderReason("loop", () => true)).toBe("same call thrice");
    expect(db.events.continuationReminders(1)).toEqual(new Set(["loop\u0000same call thrice"]));

    db.ledger.record({ kind: "context", key: "notes:today", title: "Today", version: "v1" }, "turn-1", 1, AT);
    expect(db.ledger.list()).toEqual([{ kind: "context", key: "notes:today", title: "Today", version: "v1", messageSeq: 1 }]);
    expect(db.ledger.forgetThrough(1)).toEqual(["notes:today"]);

    expect([db.attachments.attach("k", "notes:today", undefined, AT), db.attachments.attach("k", "notes:today", undefined, AT)]).toEqual([true, false]);
    expect(db.attachments.list()).toEqual([{ key: "k", context: "notes:today", createdAt: AT }]);
    expect([db.attachments.detach("k"), db.attachments.detach("k")]).toEqual([true, false]);

    db.resources.put({ fullId: "notes:r1", app: "notes", title: "Draft", content: "abc", version: "v1", updatedAt: AT });
    expect(db.resources.get("notes:r1")).toEqual({ fullId: "notes:r1", app: "notes", title: "Draft", content: "abc", version: "v1", sizeChars: 3, updatedAt: AT });
    expect([db.resources.delete("notes:r1"), db.resources.list()]).toEqual([true, []]);
  });

  it("round-trips approvals, compactions, delegations, the gateway cursor and the tool state", () => {
    const { db } = memoryDatabase();
    db.approvals.record(2, "c1", "notes__search", "requested", AT);
    db.approvals.record(2, "c2", "notes__search", "denied", AT);
    expect(db.approvals.get(2, "c1")).toEqual({ toolCallId: "c1", callSeq: 2, tool: "notes__search", state: "requested", requestedAt: AT, decidedAt: null });
    expect(db.approvals.denied()).toEqual(new Set(["2:c2"]));

    const summary = { fromSeq: 1, throughSeq: 4, text: "They planned a trip.", summariser: "digest", trust: "external" as const, loss: ["a date"], state: { facts: 2 } };
    const id = db.compactions.add("auto", summary, { before: 900, after: 300 }, AT, 2);
    db.compactions.add("clear", null, { before: 300, after: 200 }, AT);
    expect(db.compactions.inEffect()).toEqual({ id, summary });
    expect(db.compactions.list().map((c) => [c.reason, c.summary, c.imagesHiddenThrough])).toEqual([
      ["auto", summary, 2],
      ["clear", null, 2],
    ]);
    db.compactions.clearResult(3, id, "[stub]", 40);
    expect([db.compactions.stubs(0), db.compactions.savedAfter(0), db.compactions.everCovered()]).toEqual([new Map([[3, "[stub]"]]), 40, true]);

    db.delegations.started({ toolCallId: "d1", callSeq: 2, childConversationId: "child", agent: "helper", depth: 1, turnId: "turn-1", childTurnId: "ct1" }, AT);
    expect(db.delegations.byChild("child")).toEqual({ toolCallId: "d1", childConversationId: "child", agent: "helper", depth: 1, turnId: "turn-1", status: "running", childTurnIds: ["ct1"], createdAt: AT, completedAt: null, callSeq: 2 });
    db.delegations.completed("child", ["ct1", "ct2"], AT);
    expect(db.delegations.list()).toMatchObject([{ status: "completed", childTurnIds: ["ct1", "ct2"], completedAt: AT }]);

    const cursor = { consumed: 3, lastHash: "h", awaiting: true, chain: "c" };
    db.gateway.setCursor(cursor, AT, { runId: "r1", turnId: "turn-1" });
    expect([db.gateway.cursor(), db.gateway.openRun()]).toEqual([cursor, { runId: "r1", turnId: "turn-1" }]);
    db.gateway.endRun("r1");
    expect(db.gateway.openRun()).toBeNull();

    db.toolState.load([{ name: "notes__b", query: "q", toolCallId: "c1" }, { name: "notes__a", query: "q", toolCallId: "c1" }], null, AT);
    db.toolState.link("drafting", 3, null, AT);
    expect([db.toolState.loaded(), db.toolState.linked()]).toEqual([["notes__b", "notes__a"], [{ name: "drafting", seq: 3 }]]);
  });

  it("rolls a transaction back whole when it throws", () => {
    const { db } = memoryDatabase();
    expect(() =>
      db.transaction(() => {
        db.messages.append(null, { role: "user", content: "kept?" }, AT);
        throw new Error("refused");
      }),
    ).toThrow("refused");
    expect(db.messages.count()).toBe(0);
  });
});

describe("a long history's seeks", () => {
  it("find by halving what a scan of every row finds: the first message that fits a token or byte budget, and the tokens between two seqs", () => {
    const { sql, db } = memoryDatabase();
    // Groups of uneven weight, then gaps in seq (never made by the runtime, which only appends, but the seek must not assume none).
    for (let i = 0; i < 300; i++) {
      db.messages.append(null, { role: "user", content: `question ${i} `.repeat(1 + (i % 7)) }, AT);
      if (i % 3 === 0) {
        db.messages.append(null, { role: "assistant", content: null, tool_calls: [{ ...call, id: `c${i}` }] }, AT);
        db.messages.append(null, { role: "tool", tool_call_id: `c${i}`, content: "result line\n".repeat(1 + ((i * 13) % 40)) }, AT);
      }
      db.messages.append(null, { role: "assistant", content: `answer ${i}`.repeat(1 + (i % 5)) }, AT);
    }
    sql.exec("DELETE FROM messages WHERE seq % 97 = 0");
    const scan = (query: string, ...bindings: number[]) => (sql.prepare(query).all(...bindings)[0] as { seq: number | null }).seq;
    const bytes = "IFNULL(octet_length(content), 0) + IFNULL(octet_length(tool_calls), 0) + IFNULL(octet_length(images), 0) + 128";
    const newest = sql.prepare("SELECT seq, running_tokens AS t FROM messages ORDER BY seq DESC LIMIT 1").all()[0] as { seq: number; t: number };
    // Budgets that land exactly on a message's running total, and between.
    const exact = (sql.prepare("SELECT running_tokens - tokens AS t FROM messages WHERE seq IN (2, 300, 650, 900)").all() as { t: number }[]).map((r) => newest.t - r.t);
    for (const after of [0, 1, 96, 97, 400, 700, newest.seq - 1, newest.seq]) {
      for (const budget of [0, 1, 50, 333, 2_000, 10_000, 1_000_000, ...exact, ...exact.map((b) => b + 1)]) {
        const first = scan("SELECT MIN(seq) AS seq FROM messages WHERE seq > ? AND running_tokens - tokens >= ?", after, newest.t - budget) ?? newest.seq;
        const group = scan("SELECT MAX(seq) AS seq FROM messages WHERE seq <= ? AND role != 'tool'", first) ?? first;
        expect(db.messages.firstSeqWithin(after, budget), `tokens after ${after} within ${budget}`).toBe(Math.max(after + 1, group));
        for (const through of [after, after + 50, 700, newest.seq]) {
          const end = sql.prepare("SELECT seq, running_bytes AS b FROM messages WHERE seq <= ? ORDER BY seq DESC LIMIT 1").all(through)[0] as { seq: number; b: number } | undefined;
          // The byte budget lands exactly on a message's running total when `budget` is one of `exact`.
          const before = (sql.prepare(`SELECT running_bytes - (${bytes}) AS b FROM messages WHERE seq >= ? ORDER BY seq LIMIT 1`).all(Math.min(after + budget, newest.seq))[0] as { b: number }).b;
          const maxBytes = end ? Math.max(0, end.b - before) : budget;
          const fits = end ? (scan(`SELECT MIN(seq) AS seq FROM messages WHERE seq > ? AND seq <= ? AND running_bytes - (${bytes}) >= ?`, after, end.seq, end.b - maxBytes) ?? end.seq + 1) : 1;
          expect(db.messages.firstSeqWithinBytes(after, maxBytes, through), `bytes after ${after} through ${through} within ${maxBytes}`).toBe(fits);
          const total = (seq: number) => (sql.prepare("SELECT running_tokens AS t FROM messages WHERE seq <= ? ORDER BY seq DESC LIMIT 1").all(seq)[0] as { t: number } | undefined)?.t ?? 0;
          expect(db.messages.tokensBetween(after, through)).toBe(total(through) - total(after));
        }
      }
    }
    expect(db.messages.firstSeqWithin(0, 1_000_000)).toBe(1);
    expect(db.messages.tokensAfter(0)).toBe(newest.t);
  });
});

describe("rows written by earlier versions", () => {
  it("decode: a conversation from 0001 with its defaults, an old compaction policy, messages before token counts and resources before the trust boundary", () => {
    const { sql, db, rest } = migratedThrough(3);
    sql.exec(`INSERT INTO conversation (id, conversation_id, tenant, user, agent, created_at) VALUES (1, 'old', 't', 'u', NULL, '${AT}')`);
    sql.exec(`INSERT INTO messages (role, content, created_at) VALUES ('user', 'An old question', '${AT}')`);
    sql.exec(`INSERT INTO messages (role, content, tool_calls, created_at) VALUES ('assistant', NULL, '${JSON.stringify([call])}', '${AT}')`);
    sql.exec(`INSERT INTO resources (full_id, app, title, content, summary, type, version, updated_at) VALUES ('notes:old', 'notes', 'Old', 'raw', NULL, NULL, 'v1', '${AT}')`);
    sql.exec(`INSERT INTO turns (turn_id, request_digest, system_prompt, user_seq, result, created_at) VALUES ('old-turn', 'd', 's', 1, '{}', '${AT}')`);
    rest();
    expect(db.conversation.get()).toEqual({
      conversationId: "old", tenant: "t", user: "u", agent: null, agentContexts: [], resultPolicies: {}, identity: null, personaAgent: null,
      nonce: null, compactionPolicy: DEFAULT_COMPACTION_POLICY, createdAt: AT, endedAt: null, parent: null, depth: 0,
    });
    expect(db.messages.list().map((m) => m.message.role)).toEqual(["user", "assistant"]);
    expect(db.messages.tokensAfter(0)).toBeGreaterThan(0);
    expect(db.turns.get("old-turn")).toMatchObject({ historyView: [], compactionId: 0 });
    expect(db.resources.get("notes:old")).toMatchObject({ content: "raw" });

    // A policy stored before 28289b9 tightened trigger and target, and before keepImages: read as stored, the rest by default.
    sql.exec(`UPDATE conversation SET compaction_policy = '{"trigger":0.3,"target":0.2,"outputReserve":4096}'`);
    expect(db.conversation.get()!.compactionPolicy).toEqual({ ...DEFAULT_COMPACTION_POLICY, trigger: 0.3, target: 0.2 });
    // A trim policy stored before its maxTokens was capped at 100,000.
    sql.exec(`UPDATE conversation SET result_policies = '{"notes__search":{"strategy":"head","maxTokens":500000}}'`);
    expect(db.conversation.get()!.resultPolicies).toEqual({ notes__search: { strategy: "head", maxTokens: 500_000 } });
  });

  it("decode: a summary without state, a compaction before boundaries, a cursor before its chain", () => {
    const { sql, db, rest } = migratedThrough(5);
    sql.exec(`INSERT INTO compactions (reason, through_seq, summary, summary_state, summariser, trust, tokens_before, tokens_after, created_at) VALUES ('auto', 4, 'sum', NULL, 'digest', 'user', 9, 3, '${AT}')`);
    rest();
    expect(db.compactions.inEffect()).toEqual({ id: 1, summary: { fromSeq: 1, throughSeq: 4, text: "sum", summariser: "digest", trust: "user", loss: [], state: null } });
    expect(db.compactions.imagesHiddenThrough()).toBe(0);
    sql.exec(`INSERT INTO gateway_cursor (id, consumed, last_hash, awaiting, updated_at) VALUES (1, 2, 'h', 0, '${AT}')`);
    expect(db.gateway.cursor()).toEqual({ consumed: 2, lastHash: "h", awaiting: false, chain: null });
  });

  it("that no longer decode throw, naming the column, rather than pass a wrong value on", () => {
    const { sql, db } = memoryDatabase();
    db.conversation.create(meta);
    sql.exec(`UPDATE conversation SET agent_contexts = '{"not":"a list"}'`);
    expect(() => db.conversation.get()).toThrow(/agent_contexts/);
    sql.exec(`INSERT INTO messages (role, content, tool_calls, created_at) VALUES ('assistant', NULL, 'not json', '${AT}')`);
    expect(() => db.messages.list()).toThrow(/tool_calls is not JSON/);
  });
});
