/**
 * search_tools ranking by meaning inside workerd: the hub's tool vectors (migration 0014), computed in the background
 * after an initialize and at search time, from the `AI` binding vitest.config.mts provides (a deterministic stand-in
 * for @cf/baai/bge-m3, test/workers/support/fake-ai.ts); the fused ranking in turns, POST …/tools/run and the gateway;
 * and the lexical fallback when the model fails or is slow.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hubStub } from "../../src/hub/stub";
import { EMBEDDING_MODEL } from "../../src/hub/tool-vectors";
import { textOf } from "../../src/protocol/messages";
import type { StoredMessage, TurnResult } from "../../src/protocol/frontend";
import type { ToolRunResult } from "../../src/protocol/tools";
import { ToolIndex, type CatalogHit, type CatalogTool } from "../../src/tools/catalog-search";
import { embeddingText, fuseRankings, rankByCosine, unitVector } from "../../src/tools/semantic-search";
import { fakeEmbedding } from "../fixtures/fake-embedding";
import { installFakeUpstream, upstream } from "./support/gateway-fake-upstream";
import { freshIdentity, Frontend, type Identity } from "./support/runtime";
import { ToolApp } from "./support/tool-app";

installFakeUpstream();

const str = (description?: string, more: Record<string, unknown> = {}) => ({ type: "string", ...(description ? { description } : {}), ...more });
const object = (properties: Record<string, unknown>) => ({ type: "object", properties });
const CALENDAR = [
  { name: "list_events", description: "List the events of a day.", inputSchema: object({ date: str("The day, as YYYY-MM-DD.") }) },
  { name: "create_event", description: "Create an event on the user's calendar.", inputSchema: object({ title: str("What the event is called."), kind: str(undefined, { enum: ["meeting", "call", "focus"] }) }) },
  { name: "delete_event", description: "Delete an event by id.", inputSchema: object({ id: str() }) },
  { name: "find_free_slot", description: "Find a free slot for a meeting of a given length.", inputSchema: object({ minutes: { type: "integer" } }) },
];
const MAIL = [
  { name: "send_message", description: "Send an email to one or more recipients.", inputSchema: object({ to: str(), subject: str(), body: str() }) },
  { name: "search_messages", description: "Search the mailbox for messages matching words.", inputSchema: object({ query: str() }) },
  { name: "archive_thread", description: "Move a conversation out of the inbox.", inputSchema: object({ thread_id: str("The thread to archive.") }) },
  { name: "add_label", description: "Put a label such as Urgent on a message.", inputSchema: object({ label: str() }) },
];
const AGENT = { agentId: "planner", name: "Planner", systemPrompt: "You plan the user's week.", tools: ["list_events"], catalog: ["calendar:*", "mail:*"] };
/** The catalog the agent searches: every tool but its bound one, as the runtime qualifies them. */
const CATALOG: CatalogTool[] = [...CALENDAR.map((t) => ({ ...t, name: `calendar:${t.name}` })), ...MAIL.map((t) => ({ ...t, name: `mail:${t.name}` }))].filter((t) => t.name !== "calendar:list_events");
/**
 * Semantic and lexical rankings disagree on it: the fused answer is neither's alone. The lexical ranker reads only
 * part of it ("flag" is no word of the catalog), so the semantic ranking weighs in (a query it reads whole keeps the
 * lexical order: test/unit/tool-search-fusion.test.ts).
 */
const QUERY = "flag this email urgent please";

const index = new ToolIndex(CATALOG);
const lexical = (query: string, limit: number) => index.search(query, limit).map((h) => h.name);
/** The fused order the runtime should answer, computed here from the same pure parts and the same fake model. */
function fused(query: string, limit: number): string[] {
  const vectors = new Map(CATALOG.map((t) => [t.name, unitVector(fakeEmbedding(embeddingText(t)))]));
  return fuseRankings(index.search(query, 20), rankByCosine(unitVector(fakeEmbedding(query)), vectors), limit).map((h: CatalogHit) => h.name);
}

async function setup() {
  const id = freshIdentity();
  const mail = await ToolApp.connect(id, "mail", { tools: MAIL });
  const calendar = await ToolApp.connect(id, "calendar", { tools: CALENDAR, agents: [AGENT] });
  const frontend = await Frontend.for(id);
  const { id: conversation } = await frontend.json<{ id: string }>("POST", "/v1/conversations", {});
  const turn = (body: Record<string, unknown>) => frontend.turn(conversation, { agent: "calendar:planner", ...body });
  await turn({ message: "Flag the mail from Sam as urgent." });
  return { id, mail, calendar, frontend, conversation, path: `/v1/conversations/${conversation}`, turn };
}

let nextCall = 0;
function search(args: Record<string, unknown>) {
  const id = `call_${++nextCall}`;
  return { id, reply: { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "search_tools", arguments: JSON.stringify(args) } }] } };
}
/** The tools a search_tools result lists, in order, by their qualified names. */
const listed = (result: string) => [...result.matchAll(/^- (\w+)__(\w+):/gm)].map((m) => `${m[1]}:${m[2]}`);
const resultOf = (turn: TurnResult, toolCallId: string) => textOf(turn.messages.find((m) => m.role === "tool" && m.tool_call_id === toolCallId)!);

interface Row {
  name: string;
  hash: string;
  vector: number[];
}
function storedVectors(id: Identity): Promise<Row[]> {
  return runInDurableObject(hubStub(env, id), (_, state) =>
    state.storage.sql
      .exec<{ app: string; name: string; text_hash: string; vector: ArrayBuffer }>("SELECT app, name, text_hash, vector FROM tool_vectors ORDER BY app, name")
      .toArray()
      .map((r) => ({ name: `${r.app}:${r.name}`, hash: r.text_hash, vector: [...new Float32Array(r.vector)] })),
  );
}
async function until(id: Identity, done: (rows: Row[]) => boolean): Promise<Row[]> {
  for (let i = 0; i < 100; i++) {
    const rows = await storedVectors(id);
    if (done(rows)) return rows;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the stored vectors never matched: ${JSON.stringify((await storedVectors(id)).map((r) => r.name))}`);
}
async function hashOf(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${EMBEDDING_MODEL}\n${text}`));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
async function expectVectorOf(row: Row | undefined, tool: CatalogTool) {
  expect(row, tool.name).toBeDefined();
  expect(row!.hash).toBe(await hashOf(embeddingText(tool)));
  const expected = fakeEmbedding(embeddingText(tool));
  expect(row!.vector).toHaveLength(expected.length);
  row!.vector.forEach((v, i) => expect(v).toBeCloseTo(expected[i]!, 6));
}

describe("tool vectors", () => {
  it("are computed when an app declares its tools, and again only for a tool whose text changed; a tool no longer declared loses its vector", async () => {
    const id = freshIdentity();
    const app = await ToolApp.connect(id, "calendar", { tools: CALENDAR });
    const first = await until(id, (rows) => rows.length === CALENDAR.length);
    for (const tool of CALENDAR) await expectVectorOf(first.find((r) => r.name === `calendar:${tool.name}`), { ...tool, name: `calendar:${tool.name}` });

    // delete_event's description and create_event's allowed values change; find_free_slot goes; list_events stays as it was.
    const changed = [
      CALENDAR[0]!,
      { ...CALENDAR[1]!, inputSchema: object({ title: str("What the event is called."), kind: str(undefined, { enum: ["meeting", "call"] }) }) },
      { ...CALENDAR[2]!, description: "Cancel an event and tell its attendees." },
    ];
    const answer = await app.initialize("calendar", { tools: changed });
    expect(answer).toHaveProperty("result");
    const hashBefore = (name: string) => first.find((r) => r.name === name)!.hash;
    const second = await until(
      id,
      (rows) => rows.length === 3 && rows.every((r) => r.name === "calendar:list_events" || r.hash !== hashBefore(r.name)),
    );
    expect(second.map((r) => r.name)).toEqual(["calendar:create_event", "calendar:delete_event", "calendar:list_events"]);
    for (const tool of changed) await expectVectorOf(second.find((r) => r.name === `calendar:${tool.name}`), { ...tool, name: `calendar:${tool.name}` });
    expect(second.find((r) => r.name === "calendar:list_events")).toEqual(first.find((r) => r.name === "calendar:list_events"));
  });

  it("never delay or fail an initialize: a model that hangs or fails leaves the tools registered, without vectors", async () => {
    const id = freshIdentity();
    const slow = await ToolApp.connect(id, "slow", {});
    const started = Date.now();
    const answer = await slow.initialize("slow", { tools: [{ name: "wait", description: "Waits (fake-ai:slow)." }] });
    // The fake answers this text after 5 s: the answer came long before.
    expect(Date.now() - started).toBeLessThan(1000);
    expect(answer).toHaveProperty("result");

    await ToolApp.connect(id, "broken", { tools: [{ name: "fail", description: "Always fails to embed (fake-ai:fail)." }, { name: "other", description: "Fine on its own." }] });
    await ToolApp.connect(id, "healthy", { tools: [{ name: "fine", description: "Embeds well." }] });
    const rows = await until(id, (r) => r.some((row) => row.name === "healthy:fine"));
    // One batch per initialize: the failed call stored nothing of its app (a search tries again), and the slow one nothing yet.
    expect(rows.map((r) => r.name)).toEqual(["healthy:fine"]);
  });
});

describe("search_tools with an embedding model", () => {
  it("answers the fused ranking in a turn, and the evidence says `fused`", async () => {
    const s = await setup();
    expect(fused(QUERY, 3), "the query must tell the rankings apart").not.toEqual(lexical(QUERY, 3));
    const { id, reply } = search({ query: QUERY, limit: 3 });
    const turn = await s.turn({ reply });
    expect(listed(resultOf(turn, id))).toEqual(fused(QUERY, 3));
    expect(turn.envelope.tools!.ran).toEqual([expect.objectContaining({ toolCallId: id, tool: "search_tools", outcome: "ok", ranker: "fused" })]);
    expect(turn.envelope.tools!.loaded!.map((l) => l.name)).toEqual(fused(QUERY, 3));
  });

  it("keeps exact names first; select: and a blank query are answered lexically", async () => {
    const s = await setup();
    const exact = search({ query: "mail__archive_thread", limit: 3 });
    const turn = await s.turn({ reply: exact.reply });
    expect(listed(resultOf(turn, exact.id))).toEqual(fused("mail__archive_thread", 3));
    expect(listed(resultOf(turn, exact.id))[0]).toBe("mail:archive_thread");
    expect(turn.envelope.tools!.ran![0]!.ranker).toBe("fused");

    const select = search({ query: "select:mail:add_label,calendar:delete_event" });
    const selected = await s.turn({ reply: select.reply });
    expect(listed(resultOf(selected, select.id))).toEqual(lexical("select:mail:add_label,calendar:delete_event", 5));
    expect(selected.envelope.tools!.ran![0]!.ranker).toBe("lexical");

    // A blank query finds nothing: the model's nearest tools to nothing are not an answer.
    const blank = search({ query: "   " });
    const none = await s.turn({ reply: blank.reply });
    expect(resultOf(none, blank.id)).toMatch(/^No tool matched/);
    expect(none.envelope.tools!.ran![0]!.ranker).toBe("lexical");
  });

  it("falls back to the lexical ranking when the model fails, and when it does not answer in 1.5 s, and says `lexical`", async () => {
    const s = await setup();
    const failing = `${QUERY} fake-ai:fail`;
    const failed = search({ query: failing, limit: 3 });
    const turn = await s.turn({ reply: failed.reply });
    expect(listed(resultOf(turn, failed.id))).toEqual(lexical(failing, 3));
    expect(turn.envelope.tools!.ran![0]).toMatchObject({ tool: "search_tools", outcome: "ok", ranker: "lexical" });

    const slowQuery = `${QUERY} fake-ai:slow`;
    const slow = search({ query: slowQuery, limit: 3 });
    const started = Date.now();
    const late = await s.turn({ reply: slow.reply });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(listed(resultOf(late, slow.id))).toEqual(lexical(slowQuery, 3));
    expect(late.envelope.tools!.ran![0]!.ranker).toBe("lexical");
  });

  it("answers the fused ranking in POST …/tools/run, which says `fused`", async () => {
    const s = await setup();
    const { id, reply } = search({ query: QUERY, limit: 3 });
    await s.frontend.json("POST", `${s.path}/messages`, { messages: [reply] });
    const run = await s.frontend.json<ToolRunResult>("POST", `${s.path}/tools/run`, {});
    expect(run.ran).toEqual([expect.objectContaining({ toolCallId: id, tool: "search_tools", outcome: "ok", ranker: "fused" })]);
    const stored = (await s.frontend.json<{ messages: StoredMessage[] }>("GET", `${s.path}/messages`)).messages.at(-1)!;
    expect(listed(textOf(stored.message))).toEqual(fused(QUERY, 3));
  });

  it("answers the fused ranking through the gateway: the upstream reads it", async () => {
    const s = await setup();
    upstream.script = [{ toolCalls: [{ name: "search_tools", arguments: { query: QUERY, limit: 3 }, id: "up_1" }] }, { text: "Found them." }];
    const res = await s.frontend.request("POST", "/v1/chat/completions", { model: "calendar:planner", messages: [{ role: "user", content: "Flag the mail from Sam as urgent." }] });
    expect(res.status, await res.clone().text()).toBe(200);
    const read = upstream.requests[1]!.messages.find((m) => m.role === "tool" && m.tool_call_id === "up_1")!;
    expect(listed(read.content as string)).toEqual(fused(QUERY, 3));
  });
});
