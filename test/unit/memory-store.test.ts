import { beforeEach, describe, expect, it } from "vitest";
import { countTokens } from "../../src/core/tokens";
import { levelPrefix, type Namespace } from "../../src/memory/keys";
import { recallForTurn } from "../../src/memory/recall";
import { clearListingCache, MemoryStore, type WriteItem } from "../../src/memory/store";

/** Enough of Workers KV for the store's logic: ordered keys, prefix listing with cursors, metadata. */
class FakeKV {
  data = new Map<string, { value: string; metadata: unknown }>();
  puts: string[] = [];
  lists = 0;
  async get(key: string, type?: string) {
    const v = this.data.get(key);
    if (!v) return null;
    return type === "json" ? JSON.parse(v.value) : v.value;
  }
  async put(key: string, value: string, options?: { metadata?: unknown }) {
    this.puts.push(key);
    this.data.set(key, { value, metadata: options?.metadata });
  }
  async delete(key: string) {
    this.data.delete(key);
  }
  async list(options: { prefix?: string; cursor?: string; limit?: number }) {
    this.lists += 1;
    const names = [...this.data.keys()].filter((k) => k.startsWith(options.prefix ?? "")).sort();
    const start = options.cursor ? Number(options.cursor) : 0;
    const end = start + (options.limit ?? 1000);
    const keys = names.slice(start, end).map((name) => ({ name, metadata: this.data.get(name)!.metadata }));
    return end >= names.length ? { keys, list_complete: true } : { keys, list_complete: false, cursor: String(end) };
  }
}

const owner = { tenant: "acme", user: "alice" };
const user: Namespace = { ...owner, level: "user" };
const session = (s: string): Namespace => ({ ...owner, level: "session", session: s });
const task = (s: string, t: string): Namespace => ({ ...owner, level: "task", session: s, task: t });
const item = (ns: Namespace, text: string, extra: Partial<WriteItem> = {}): WriteItem => ({ ns, text, source: "test", trust: "captured", ...extra });

let kv: FakeKV;
let store: MemoryStore;
beforeEach(() => {
  clearListingCache();
  kv = new FakeKV();
  store = new MemoryStore(kv as unknown as KVNamespace);
});

describe("the memory store", () => {
  it("creates, then reinforces a near-duplicate by rewriting its own key", async () => {
    const [created] = await store.write([item(user, "The user prefers pnpm over npm for JavaScript projects.")]);
    expect(created).toMatchObject({ status: "created", memory: { level: "user", reinforcement: 1, trust: "captured" } });
    const [again] = await store.write([item(user, "the user prefers PNPM over npm, for javascript projects", { trust: "curated" })]);
    expect(again).toMatchObject({ status: "reinforced", memory: { reinforcement: 2, trust: "curated", text: "The user prefers pnpm over npm for JavaScript projects." } });
    expect(kv.data.size).toBe(1);
    expect(kv.puts).toEqual([kv.puts[0], kv.puts[0]]);
    expect(JSON.parse(kv.data.get(kv.puts[0]!)!.value)).toMatchObject({ reinforcement: 2, trust: "curated" });
  });

  it("reinforces within one batch with a single write per key", async () => {
    const text = "The user keeps the web app's documentation in the notes app.";
    const results = await store.write([item(user, text), item(user, text), item(user, `${text}`)]);
    expect(results.map((r) => r.status)).toEqual(["created", "reinforced", "reinforced"]);
    expect(kv.puts).toHaveLength(1);
    expect(JSON.parse([...kv.data.values()][0]!.value).reinforcement).toBe(3);
  });

  it("does not treat the same text in another level as a duplicate", async () => {
    const text = "The user wants weekly summaries on Fridays.";
    const results = await store.write([item(user, text), item(session("s1"), text), item(task("s1", "t1"), text)]);
    expect(results.map((r) => r.status)).toEqual(["created", "created", "created"]);
  });

  it("stores nothing for a refused write", async () => {
    const [refused] = await store.write([item(user, '{"a": 1, "b": 2}')]);
    expect(refused).toMatchObject({ status: "refused", reason: "raw_dump", signal: "json" });
    expect(kv.data.size).toBe(0);
  });

  it("reads a task's chain and never a sibling's", async () => {
    await store.write([
      item(user, "The user deploys every project with wrangler."),
      item(session("s1"), "This session's project deploys with wrangler to staging."),
      item(task("s1", "t1"), "This task deploys the worker with wrangler tomorrow."),
      item(task("s1", "t2"), "Another task deploys something with wrangler too."),
      item(session("s2"), "Another session deploys with wrangler to production."),
    ]);
    const found = await store.search({ ...owner, session: "s1", task: "t1" }, "wrangler deploy", { threshold: 0 });
    expect(found.candidates).toBe(3);
    expect(found.results.map((r) => r.memory.level).sort()).toEqual(["session", "task", "user"]);
    expect(found.results.every((r) => !/Another/.test(r.memory.text))).toBe(true);
    const other = new MemoryStore(kv as unknown as KVNamespace);
    expect((await other.search({ tenant: "acme", user: "bob" }, "wrangler deploy", { threshold: 0 })).results).toEqual([]);
  });

  it("lists a large level once per cache period, 1,000 keys a page", async () => {
    const items = Array.from({ length: 2500 }, (_, i) => item(user, `Fact number ${i} says the user visited city${i} in year ${1000 + i}.`));
    for (let i = 0; i < items.length; i += 100) await store.write(items.slice(i, i + 100));
    clearListingCache();
    kv.lists = 0;
    const first = await store.search(owner, "city1234 visited", {});
    expect(kv.lists).toBe(3);
    expect(first.candidates).toBe(2500);
    expect(first.results[0]!.memory.text).toContain("city1234");
    await store.search(owner, "city99", {});
    expect(kv.lists).toBe(3);
  });

  it("deletes one memory from its level, and says when there is none", async () => {
    const [created] = await store.write([item(session("s1"), "The user wants weekly summaries on Fridays.")]);
    const id = created!.status === "created" ? created!.memory.id : "";
    expect(await store.remove(session("s2"), id)).toBeNull();
    expect(await store.remove(session("s1"), id)).toMatchObject({ id });
    expect(kv.data.size).toBe(0);
    expect((await store.search({ ...owner, session: "s1" }, "weekly summaries", {})).results).toEqual([]);
  });
});

describe("recallForTurn", () => {
  it("packs the relevant memories into the budget, says what it left out and why", async () => {
    await store.write([
      item(user, "The user prefers pnpm over npm for every JavaScript project.", { trust: "curated" }),
      item(user, "The web project deploys to Cloudflare Workers with wrangler."),
      item(session("s1"), "In this session the user is migrating the web project from npm to pnpm workspaces."),
      item(user, "The user drinks tea in the morning and coffee after lunch."),
      item(user, "Lunch meetings with the design team happen on Thursdays at noon, the user mentioned the project once."),
    ]);
    const all = await recallForTurn(kv as unknown as KVNamespace, { ...owner, session: "s1" }, "set up pnpm for the web project");
    expect(all.error).toBeUndefined();
    expect(all.candidates).toBe(5);
    expect(all.selected.map((s) => s.level)).toContain("session");
    expect(all.fence.startsWith("<memory_fence>\n")).toBe(true);
    expect(all.fence).toContain("pnpm workspaces");
    expect(all.fence).not.toContain("tea");
    expect(all.tokens).toBe(countTokens(all.fence));
    expect(all.omitted).toContainEqual({ id: expect.any(String), reason: "low_relevance" });
    const scores = all.selected.map((s) => s.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));

    const tight = await recallForTurn(kv as unknown as KVNamespace, { ...owner, session: "s1" }, "set up pnpm for the web project", { budgetTokens: 90 });
    expect(tight.tokens).toBeLessThanOrEqual(90);
    expect(tight.selected.length).toBeGreaterThan(0);
    expect(tight.selected.length).toBeLessThan(all.selected.length);
    expect(tight.omitted.filter((o) => o.reason === "budget").length).toBe(all.selected.length - tight.selected.length);
  });

  it("returns an empty fence, not an error, when nothing is relevant or the store fails", async () => {
    expect(await recallForTurn(kv as unknown as KVNamespace, owner, "anything at all")).toMatchObject({ fence: "", selected: [], tokens: 0 });
    const broken = { list: async () => { throw new Error("KV down"); } } as unknown as KVNamespace;
    const r = await recallForTurn(broken, { tenant: "x", user: "y" }, "anything");
    expect(r).toMatchObject({ fence: "", selected: [], tokens: 0 });
    expect(r.error).toMatch(/KV down/);
  });

  it("sees other isolates' writes once the listing is listed again, and ignores keys that are not memories", async () => {
    await store.write([item(user, "The user deploys every project with wrangler.")]);
    const elsewhere = new FakeKV();
    elsewhere.data = kv.data;
    await new MemoryStore(elsewhere as unknown as KVNamespace).write([item(user, "The staging worker also deploys with wrangler nightly.")]);
    await kv.put(`${levelPrefix(user)}zzzzzzzzz000000000000`, "{}", { metadata: { junk: true } });
    await kv.put(`${levelPrefix(user)}not-an-id`, "{}", {});
    clearListingCache(); // what the listing's expiry does in a real isolate
    const r = await recallForTurn(kv as unknown as KVNamespace, owner, "wrangler deploys");
    expect(r.candidates).toBe(2);
    expect(r.selected).toHaveLength(2);
  });
});
