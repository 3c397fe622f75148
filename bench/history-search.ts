/**
 * `npm run bench:history-search`: search_history at scale. Starts a local runtime (real wrangler dev, embedded state),
 * resumes two conversations of 1,000 and 10,000 generated messages (questions, tool calls and results, replies, with
 * a dated fact planted every 40 messages) for an agent with `searchHistory: true`, then measures:
 *
 *   - search_history through `POST …/tools/run` (the model's call appended first, untimed): round trip and inside the
 *     Worker (Server-Timing), against the same request whose query holds only common words, which runs no SQL: the
 *     difference is the search's own cost (the index, the candidate rows, ranking and excerpts);
 *   - appends (`POST …/messages`, one reply each): what storing a message costs now, its indexing included;
 *
 * and in Node, on the same messages in node:sqlite through the runtime's own store (test/unit/support/node-sql.ts): a
 * search alone, and an append with and without the index. Workerd advances its clock only across I/O, so the time
 * inside one call cannot be read from within; Node's figures isolate it. SEARCHES=200 per figure, APPENDS=200.
 */
import { mintToken } from "../src/http/auth";
import { ContextApp, ContextClient } from "../src/sdk";
import type { ChatMessage } from "../src/protocol/messages";

/** A user, assistant or tool message: what a resume takes and a stored conversation holds. */
type Message = Exclude<ChatMessage, { role: "system" }>;
import { startLocalRuntime } from "../scripts/local-runtime";
import { seededRandom } from "../test/fixtures/seeded-random";
import { memoryConversation } from "../test/unit/support/node-sql";
import { percentile } from "./stats";
import { timedFetch } from "./timed-fetch";

const SEARCHES = Number(process.env.SEARCHES ?? 200);
const APPENDS = Number(process.env.APPENDS ?? 200);
const WARMUP = 20;

const CODENAMES = ["Kestrel", "Osprey", "Heron", "Plover", "Moth", "Wren", "Lynx", "Marten", "Ibis", "Tern", "Quokka", "Vole", "Egret", "Shrike", "Dunlin", "Gannet"];
const THINGS = ["cutover", "launch", "audit", "migration", "review", "release", "offsite", "renewal"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const WORDS = "status report open items module parser listing rows table index schema cache queue worker deploy build test draft plan budget invoice meeting room team vendor contract ticket branch".split(" ");

/** `count` messages in groups of four: a question, a tool call, its result, a reply; a dated fact every 40 messages. */
function generate(count: number, seed: number): Message[] {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(" ");
  const messages: Message[] = [];
  for (let i = 0; messages.length < count; i++) {
    const fact = i % 10 === 0 ? ` The ${pick(CODENAMES)} ${pick(THINGS)} moved to ${pick(MONTHS)} ${1 + Math.floor(random() * 28)}.` : "";
    messages.push(
      { role: "user", content: `Question ${i}: what about the ${words(4)} of ${pick(CODENAMES)}?${fact}` },
      { role: "assistant", content: null, tool_calls: [{ id: `h${i}`, type: "function", function: { name: "notes__lookup", arguments: JSON.stringify({ q: words(2) }) } }] },
      { role: "tool", tool_call_id: `h${i}`, content: `${words(12)}, ${Math.floor(random() * 900)} rows` },
      { role: "assistant", content: `${pick(CODENAMES)}: ${words(8)}.` },
    );
  }
  return messages.slice(0, count);
}

/** What the model asks: a planted fact's subject, everyday words, a codename alone, and words no message holds. */
const QUERIES = ["Kestrel cutover date", "when is the Osprey launch", "status report open items", "Heron budget invoice", "Plover", "zeppelin marmalade", "Moth release", "vendor contract renewal"];
/** Only common words: the same request, no SQL. */
const BASELINE = "what did we say about it";

const fmt = (samples: readonly number[]) => `p50 ${percentile(samples, 50).toFixed(2)} ms · p99 ${percentile(samples, 99).toFixed(2)} ms`;

const secret = `bench-${crypto.randomUUID()}`;
const runtime = await startLocalRuntime(secret);
try {
  const identity = { tenant: "bench-history-search", sub: "bench" };
  const timed = timedFetch();
  const client = new ContextClient({ url: runtime.url, apiKey: await mintToken(secret, { kind: "frontend", ...identity }), fetch: timed.fetch });
  const app = new ContextApp({ url: runtime.url, token: await mintToken(secret, { kind: "app", ...identity, app: "bench" }), app: { name: "bench", version: "1.0.0" } });
  await app.connect();
  const { agentId: agent } = await app.createAgent({ agentId: "searcher", name: "Searcher", systemPrompt: "You remember.", searchHistory: true });

  console.log(`search_history — local wrangler dev at ${runtime.url}, Node ${process.version}; ${SEARCHES} searches and ${APPENDS} appends per figure (after ${WARMUP} warm-up)`);
  let calls = 0;
  for (const size of [1_000, 10_000]) {
    const { id } = await client.createConversation({ agent });
    await client.setMessages(id, generate(size, size));
    const search = { wall: [] as number[], server: [] as number[] };
    const baseline = { wall: [] as number[], server: [] as number[] };
    for (let i = 0; i < WARMUP + SEARCHES; i++) {
      for (const [query, into] of [[QUERIES[i % QUERIES.length]!, search], [BASELINE, baseline]] as const) {
        const callId = `s${++calls}`;
        await client.appendMessages(id, [{ role: "assistant", content: null, tool_calls: [{ id: callId, type: "function", function: { name: "search_history", arguments: JSON.stringify({ query }) } }] }]);
        const started = performance.now();
        const run = await client.runTools(id);
        const wall = performance.now() - started;
        if (run.ran[0]?.outcome !== "ok") throw new Error(`search_history did not run: ${JSON.stringify(run.ran)}`);
        if (i >= WARMUP) (into.wall.push(wall), into.server.push(timed.lastServerMs()));
      }
    }
    const appends = { wall: [] as number[], server: [] as number[] };
    for (let i = 0; i < WARMUP + APPENDS; i++) {
      const started = performance.now();
      await client.appendMessages(id, [{ role: "assistant", content: `Reply ${i}: the ${QUERIES[i % QUERIES.length]} is noted, with ${i} open items.` }]);
      if (i >= WARMUP) (appends.wall.push(performance.now() - started), appends.server.push(timed.lastServerMs()));
    }
    const own = percentile(search.server, 50) - percentile(baseline.server, 50);
    console.log(`\nA ${size.toLocaleString("en-US")}-message conversation`);
    console.log(`  search_history via tools/run   round trip ${fmt(search.wall)} · inside the Worker ${fmt(search.server)}`);
    console.log(`  the same, a query of common words (no SQL) round trip ${fmt(baseline.wall)} · inside the Worker ${fmt(baseline.server)}`);
    console.log(`  the search's own cost inside the Worker (p50 difference): ${own.toFixed(2)} ms`);
    console.log(`  append one message (POST …/messages, indexed)   round trip ${fmt(appends.wall)} · inside the Worker ${fmt(appends.server)}`);
  }
  await app.close();
} finally {
  await runtime.stop();
}

// Node: the runtime's own store on node:sqlite, the same messages.
console.log(`\nIn Node (node:sqlite, the runtime's HistorySearchStore), the same generated messages`);
for (const size of [1_000, 10_000]) {
  const messages = generate(size, size);
  const timeAppends = (index: boolean) => {
    const conversation = memoryConversation({ index });
    const at = new Date().toISOString();
    const times = messages.map((m) => {
      const started = performance.now();
      conversation.append(m, at);
      return performance.now() - started;
    });
    return { conversation, times };
  };
  const bare = timeAppends(false);
  const indexed = timeAppends(true);
  const searches: number[] = [];
  for (let i = 0; i < WARMUP + SEARCHES; i++) {
    const started = performance.now();
    indexed.conversation.search.search(QUERIES[i % QUERIES.length]!, 5);
    if (i >= WARMUP) searches.push(performance.now() - started);
  }
  const us = (samples: readonly number[]) => `p50 ${(percentile(samples, 50) * 1000).toFixed(1)} µs · p99 ${(percentile(samples, 99) * 1000).toFixed(1)} µs`;
  console.log(`  ${size.toLocaleString("en-US")} messages: search ${fmt(searches)} · append without the index ${us(bare.times)}, with it ${us(indexed.times)}`);
}
