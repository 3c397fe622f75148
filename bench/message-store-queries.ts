/**
 * `npx tsx bench/message-store-queries.ts` (Node 22, node:sqlite): what each of History.view's reads of the messages
 * costs on a conversation of HISTORY messages (10,000 by default), the SQL the Durable Object runs, in plain Node.
 */
import { memoryDatabase } from "../test/unit/support/node-sql";
import { longHistory } from "./history";

const { db } = memoryDatabase();
const history = Number(process.env.HISTORY ?? 10_000);
db.transaction(() => {
  for (const m of longHistory(history)) db.messages.append(null, m, "2025-01-01T00:00:00.000Z");
});
const time = (name: string, run: () => unknown, n = 200) => {
  for (let i = 0; i < 10; i++) run();
  const started = performance.now();
  for (let i = 0; i < n; i++) run();
  console.log(`${name.padEnd(34)} ${((performance.now() - started) / n).toFixed(3)} ms`);
};
const m = db.messages;
time("firstSeqWithin(0, 116k)", () => m.firstSeqWithin(0, 116_000));
time("firstSeqWithinBytes(0, limit)", () => m.firstSeqWithinBytes(0, 1_000_000));
time("groupStartFrom(9000)", () => m.groupStartFrom(9000));
time("tokensAfter(0)", () => m.tokensAfter(0));
time("lastSeq()", () => m.lastSeq());
time("list(from 6585)", () => m.list(Number.MAX_SAFE_INTEGER, 6585), 50);
