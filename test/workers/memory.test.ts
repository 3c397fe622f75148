import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { LIMITS } from "../../src/protocol/limits";
import { MEMORY_LIMITS } from "../../src/memory/limits";
import { recallForTurn } from "../../src/memory/recall";
import type { StoredMemory } from "../../src/memory/store";
import { BASE, freshIdentity, Frontend, worker, type Identity, expectProblem } from "./support/runtime";

interface SearchResult {
  results: { memory: StoredMemory; score: number; relevance: number }[];
  candidates: number;
}

/** Every raw key and value KV holds under this tenant, read straight from the binding. */
async function rawUnder(tenant: string): Promise<{ name: string; value: string; metadata: unknown }[]> {
  const out: { name: string; value: string; metadata: unknown }[] = [];
  let cursor: string | undefined;
  do {
    const page: KVNamespaceListResult<unknown, string> = await env.MEMORY.list({ prefix: `mem/${tenant}/`, ...(cursor ? { cursor } : {}) });
    for (const key of page.keys) out.push({ name: key.name, value: (await env.MEMORY.get(key.name)) ?? "", metadata: key.metadata });
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return out;
}


async function remember(frontend: Frontend, body: Record<string, unknown>): Promise<StoredMemory> {
  const res = await frontend.request("POST", "/v1/memories", body);
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST /v1/memories → ${res.status}: ${text}`);
  return (JSON.parse(text) as { memory: StoredMemory }).memory;
}

describe("memory namespaces through the Worker", () => {
  it("a task reads its task, its session and its user; never a sibling session or task, another user or another tenant", async () => {
    const id = freshIdentity();
    const alice = await Frontend.for(id);
    const mine = {
      user: await remember(alice, { text: "The user deploys every project with wrangler.", level: "user", trust: "curated" }),
      session: await remember(alice, { text: "This session's project deploys with wrangler to staging.", level: "session", session: "s1" }),
      task: await remember(alice, { text: "This task deploys the billing worker with wrangler tomorrow.", level: "task", session: "s1", task: "t1" }),
    };
    await remember(alice, { text: "A sibling task deploys the search worker with wrangler.", level: "task", session: "s1", task: "t2" });
    await remember(alice, { text: "Another session deploys with wrangler to production.", session: "s2" });
    await remember(alice, { text: "A task in another session deploys with wrangler too.", session: "s2", task: "t1" });
    const mallory = await Frontend.for({ tenant: id.tenant, user: "mallory" });
    await remember(mallory, { text: "Mallory deploys everything with wrangler on Fridays.", level: "user" });
    const otherTenant = await Frontend.for({ tenant: `${id.tenant}x`, user: id.user });
    await remember(otherTenant, { text: "The other tenant deploys with wrangler from CI.", level: "user" });
    await remember(otherTenant, { text: "The other tenant's session deploys with wrangler.", session: "s1", task: "t1" });

    const found = await alice.json<SearchResult>("GET", "/v1/memories/search?q=deploy%20wrangler&session=s1&task=t1&threshold=0");
    expect(found.candidates).toBe(3);
    expect(found.results.map((r) => r.memory.id).sort()).toEqual([mine.user.id, mine.session.id, mine.task.id].sort());
    expect(found.results.find((r) => r.memory.id === mine.task.id)!.memory).toMatchObject({ level: "task", session: "s1", task: "t1" });

    const sessionOnly = await alice.json<SearchResult>("GET", "/v1/memories/search?q=deploy%20wrangler&session=s1&threshold=0");
    expect(sessionOnly.results.map((r) => r.memory.id).sort()).toEqual([mine.user.id, mine.session.id].sort());
    const userOnly = await alice.json<SearchResult>("GET", "/v1/memories/search?q=deploy%20wrangler&threshold=0");
    expect(userOnly.results.map((r) => r.memory.id)).toEqual([mine.user.id]);
    const malloryView = await mallory.json<SearchResult>("GET", "/v1/memories/search?q=deploy%20wrangler&session=s1&task=t1&threshold=0");
    expect(malloryView.results.map((r) => r.memory.text)).toEqual(["Mallory deploys everything with wrangler on Fridays."]);

    // The turn's entry point reads the same chain from the same binding.
    const recall = await recallForTurn(env.MEMORY, { ...id, session: "s1", task: "t1" }, "how do we deploy with wrangler?");
    expect(recall.candidates).toBe(3);
    expect(recall.selected.map((s) => s.level).sort()).toEqual(["session", "task", "user"]);
    expect(recall.fence).toContain("billing worker");
    expect(recall.fence).not.toMatch(/sibling|Another|Mallory|other tenant/);
    expect(recall.fence).toMatch(/^- \(\d{4}-\d{2}-\d{2}; user; curated; source: api\) The user deploys every project with wrangler\.$/m);

    // Each level is one prefix; no key strays outside the tenant's own.
    const keys = (await rawUnder(id.tenant)).map((k) => k.name);
    expect(keys).toContain(`mem/${id.tenant}/alice/~/${mine.user.id}`);
    expect(keys).toContain(`mem/${id.tenant}/alice/s/s1/~/${mine.session.id}`);
    expect(keys).toContain(`mem/${id.tenant}/alice/s/s1/t/t1/~/${mine.task.id}`);
  });

  it("lists one level at a time, in pages, and deletes only from the level named", async () => {
    const id = freshIdentity();
    const alice = await Frontend.for(id);
    const texts = ["The user drinks green tea every morning.", "The user runs on Tuesdays and Saturdays.", "The user reads science fiction before bed."];
    const batch = await alice.json<{ results: { memory: StoredMemory }[] }>("POST", "/v1/memories/batch", { memories: texts.map((text) => ({ text, session: "s1" })) });
    const made = batch.results.map((r) => r.memory);
    await remember(alice, { text: "The user keeps a garden with tomatoes and basil.", level: "user" });

    const page1 = await alice.json<{ memories: StoredMemory[]; cursor?: string }>("GET", "/v1/memories?level=session&session=s1&limit=2");
    expect(page1.memories.map((m) => m.text)).toEqual(texts.slice(0, 2));
    expect(page1.cursor).toBeTruthy();
    const page2 = await alice.json<{ memories: StoredMemory[]; cursor?: string }>("GET", `/v1/memories?session=s1&limit=2&cursor=${encodeURIComponent(page1.cursor!)}`);
    expect(page2.memories.map((m) => m.text)).toEqual(texts.slice(2));
    expect(page2.cursor).toBeUndefined();
    const users = await alice.json<{ memories: StoredMemory[] }>("GET", "/v1/memories");
    expect(users.memories.map((m) => m.level)).toEqual(["user"]);

    await expectProblem(await alice.request("DELETE", `/v1/memories/${made[0]!.id}`), 404, "not-found");
    await expectProblem(await alice.request("DELETE", `/v1/memories/${made[0]!.id}?session=s2`), 404, "not-found");
    const other = await Frontend.for({ tenant: id.tenant, user: "mallory" });
    await expectProblem(await other.request("DELETE", `/v1/memories/${made[0]!.id}?session=s1`), 404, "not-found");
    const deleted = await alice.json<{ deleted: StoredMemory }>("DELETE", `/v1/memories/${made[0]!.id}?level=session&session=s1`);
    expect(deleted.deleted.id).toBe(made[0]!.id);
    expect(await env.MEMORY.get(`mem/${id.tenant}/alice/s/s1/~/${made[0]!.id}`)).toBeNull();
    const search = await alice.json<SearchResult>("GET", "/v1/memories/search?q=green%20tea%20morning&session=s1");
    expect(search.results).toEqual([]);
  });
});

describe("the write gate through the Worker", () => {
  it("reinforces a near-duplicate in its own key instead of adding one", async () => {
    const id = freshIdentity();
    const alice = await Frontend.for(id);
    const first = await remember(alice, { text: "The user prefers pnpm over npm for JavaScript projects.", source: "notes:assistant" });
    const res = await alice.request("POST", "/v1/memories", { text: "the user prefers PNPM over npm, for javascript projects!", trust: "curated" });
    expect(res.status).toBe(200);
    const { reinforced } = (await res.json()) as { reinforced: StoredMemory };
    expect(reinforced).toMatchObject({ id: first.id, reinforcement: 2, trust: "curated", text: first.text, source: "notes:assistant" });
    expect(reinforced.reinforcedAt).toBeTruthy();
    const raw = await rawUnder(id.tenant);
    expect(raw).toHaveLength(1);
    expect(JSON.parse(raw[0]!.value)).toMatchObject({ id: first.id, reinforcement: 2, trust: "curated" });
    expect(raw[0]!.metadata).toMatchObject({ k: 2, u: "c" });

    // A different fact in the same words' neighbourhood is a new memory.
    expect((await alice.request("POST", "/v1/memories", { text: "The user prefers npm over pnpm for legacy JavaScript projects." })).status).toBe(201);
    // The same text in another level is that level's own memory.
    expect((await alice.request("POST", "/v1/memories", { text: first.text, session: "s1" })).status).toBe(201);
    expect(await rawUnder(id.tenant)).toHaveLength(3);
  });

  it("stores text as text: a lone surrogate becomes U+FFFD, as in every other channel", async () => {
    const alice = await Frontend.for(freshIdentity());
    const stored = await remember(alice, { text: "The staging database lives in the Frankfurt region \ud800 behind the VPN." });
    expect(stored.text).toBe("The staging database lives in the Frankfurt region \ufffd behind the VPN.");
    expect((await alice.json<{ memories: StoredMemory[] }>("GET", "/v1/memories")).memories.map((m) => m.text)).toEqual([stored.text]);
  });

  it("refuses fragments, dumps and low-information text with a reason, and stores nothing", async () => {
    const id = freshIdentity();
    const alice = await Frontend.for(id);
    const cases: [string, string, string][] = [
      ["ok thanks", "fragment", "too_short"],
      ["pnpm workspace monorepo setup", "fragment", "no_verb"],
      ['{"user": "alice", "prefers": "pnpm", "projects": ["web", "api"]}', "raw_dump", "json"],
      ["2026-01-01T10:00:00Z ERROR connection refused\n2026-01-01T10:00:01Z INFO retrying", "raw_dump", "log"],
      ["function add(a, b) {\n  return a + b;\n}", "raw_dump", "code"],
      ["yes yes yes yes yes yes", "low_information", "stopwords"],
      ["Let me check whether this function has an SQL injection", "low_information", "reasoning"],
    ];
    for (const [text, reason, signal] of cases) {
      const body = await expectProblem(await alice.request("POST", "/v1/memories", { text }), 422, "not-accepted");
      expect(body, text).toMatchObject({ reason, signal });
    }
    const batch = await alice.json<{ results: { status: string; reason?: string }[]; created: number; refused: number }>("POST", "/v1/memories/batch", {
      memories: [{ text: "ok thanks" }, { text: "The user prefers window seats on long flights." }, { text: '{"a": [1, 2, 3]}', session: "s1" }],
    });
    expect(batch.results.map((r) => r.status)).toEqual(["refused", "created", "refused"]);
    expect(batch).toMatchObject({ created: 1, refused: 2 });
    expect((await rawUnder(id.tenant)).map((r) => JSON.parse(r.value).text)).toEqual(["The user prefers window seats on long flights."]);
  });

  it("never stores a secret: only the redacted text reaches KV, and mostly-secret text is refused", async () => {
    const id = freshIdentity();
    const alice = await Frontend.for(id);
    const github = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB";
    const aws = "AKIAIOSFODNN7EXAMPLE";
    const memory = await remember(alice, { text: `The nightly deploy bot for the billing service signs in to GitHub with ${github} and to AWS with ${aws} before it runs.`, session: "s1" });
    expect(memory.text).not.toContain(github);
    expect(memory.text).toMatch(/\[REDACTED:[a-z0-9-]+\]/);
    await expectProblem(await alice.request("POST", "/v1/memories", { text: `token ${github} key ${aws}` }), 422, "not-accepted");
    const batch = await alice.json<{ results: { status: string; memory?: StoredMemory }[] }>("POST", "/v1/memories/batch", {
      memories: [{ text: `The staging deploy reads the AWS key ${aws} from the vault on every run.` }],
    });
    expect(batch.results[0]!.status).toBe("created");

    const raw = await rawUnder(id.tenant);
    expect(raw).toHaveLength(2);
    for (const r of raw) {
      const stored = `${r.name}\n${r.value}\n${JSON.stringify(r.metadata)}`;
      expect(stored).not.toContain(github);
      expect(stored).not.toContain(aws);
      expect(stored.toLowerCase()).not.toContain(aws.toLowerCase());
    }
    const found = await alice.json<SearchResult>("GET", "/v1/memories/search?q=deploy%20bot%20billing&session=s1");
    expect(JSON.stringify(found)).not.toContain(github);
  });
});

describe("bad memory input gets a clear 4xx and stores nothing", () => {
  it("bodies: syntax, types, unknown fields, levels, sizes, media type, credentials", async () => {
    const id = freshIdentity();
    const alice = await Frontend.for(id);
    const ok = "The user prefers pnpm over npm for JavaScript projects.";
    await expectProblem(await alice.request("POST", "/v1/memories", "{not json"), 400, "invalid-request");
    await expectProblem(await alice.request("POST", "/v1/memories", { text: 42 }), 400, "invalid-request");
    await expectProblem(await alice.request("POST", "/v1/memories", {}), 400, "invalid-request");
    await expectProblem(await alice.request("POST", "/v1/memories", { text: ok, tenant: "other" }), 400, "invalid-request");
    await expectProblem(await alice.request("POST", "/v1/memories", { text: ok, user: "bob" }), 400, "invalid-request");
    await expectProblem(await alice.request("POST", "/v1/memories", { text: ok, level: "user", session: "s1" }), 400, "invalid-request");
    await expectProblem(await alice.request("POST", "/v1/memories", { text: ok, level: "session" }), 400, "invalid-request");
    await expectProblem(await alice.request("POST", "/v1/memories", { text: ok, level: "task", session: "s1" }), 400, "invalid-request");
    await expectProblem(await alice.request("POST", "/v1/memories", { text: ok, level: "global" }), 400, "invalid-request");
    await expectProblem(await alice.request("POST", "/v1/memories", { text: ok, session: "../../other/~" }), 400, "invalid-request");
    await expectProblem(await alice.request("POST", "/v1/memories", { text: ok, session: "s".repeat(MEMORY_LIMITS.scopeIdChars + 1) }), 400, "invalid-request");
    await expectProblem(await alice.request("POST", "/v1/memories", { text: ok, trust: "verified" }), 400, "invalid-request");
    await expectProblem(await alice.request("POST", "/v1/memories", { text: ok, source: "x\n[Context: y]" }), 400, "invalid-request");
    const long = await expectProblem(await alice.request("POST", "/v1/memories", { text: `The user prefers ${"tea ".repeat(MEMORY_LIMITS.textChars)}` }), 400, "invalid-request");
    expect(JSON.stringify(long)).toMatch(/at most 1200 characters/);
    await expectProblem(await alice.request("POST", "/v1/memories", { text: "x".repeat(LIMITS.httpBodyBytes + 10) }), 413, "payload-too-large");
    await expectProblem(await alice.request("POST", "/v1/memories", JSON.stringify({ text: ok }), { "Content-Type": "text/plain" }), 415, "unsupported-media-type");
    await expectProblem(await alice.request("POST", "/v1/memories/batch", { memories: [] }), 400, "invalid-request");
    await expectProblem(await alice.request("POST", "/v1/memories/batch", { memories: Array.from({ length: MEMORY_LIMITS.batchItems + 1 }, () => ({ text: ok })) }), 400, "invalid-request");
    const mixed = await expectProblem(await alice.request("POST", "/v1/memories/batch", { memories: [{ text: ok }, { text: ok, level: "task" }] }), 400, "invalid-request");
    expect(JSON.stringify(mixed)).toContain("memories.1");
    await expectProblem(await worker().fetch(`${BASE}/v1/memories`, { method: "POST", body: JSON.stringify({ text: ok }), headers: { "Content-Type": "application/json" } }), 401, "unauthorized");
    expect(await rawUnder(id.tenant)).toEqual([]);
  });

  it("query strings and paths", async () => {
    const id: Identity = freshIdentity();
    const alice = await Frontend.for(id);
    await expectProblem(await alice.request("GET", "/v1/memories/search"), 400, "invalid-request");
    await expectProblem(await alice.request("GET", "/v1/memories/search?q=%20%20"), 400, "invalid-request");
    await expectProblem(await alice.request("GET", `/v1/memories/search?q=${"a".repeat(MEMORY_LIMITS.queryChars + 1)}`), 400, "invalid-request");
    await expectProblem(await alice.request("GET", "/v1/memories/search?q=tea&limit=9999"), 400, "invalid-request");
    await expectProblem(await alice.request("GET", "/v1/memories/search?q=tea&task=t1"), 400, "invalid-request");
    await expectProblem(await alice.request("GET", "/v1/memories/search?q=tea&session=a/b"), 400, "invalid-request");
    await expectProblem(await alice.request("GET", "/v1/memories/search?q=tea&user=bob"), 400, "invalid-request");
    await expectProblem(await alice.request("GET", "/v1/memories?level=task&session=s1"), 400, "invalid-request");
    await expectProblem(await alice.request("GET", "/v1/memories?limit=0"), 400, "invalid-request");
    await expectProblem(await alice.request("GET", "/v1/memories?cursor=not-a-cursor"), 400, "invalid-request");
    for (const text of ["The user drinks green tea every morning.", "The user runs on Tuesdays and Saturdays."]) await remember(alice, { text, session: "s1" });
    const { cursor } = await alice.json<{ cursor?: string }>("GET", "/v1/memories?session=s1&limit=1");
    expect(cursor).toBeTruthy();
    await expectProblem(await alice.request("GET", `/v1/memories?session=s2&limit=1&cursor=${encodeURIComponent(cursor!)}`), 400, "invalid-request");
    await expectProblem(await alice.request("DELETE", "/v1/memories/..%2F..%2Fother"), 404, "not-found");
    await expectProblem(await alice.request("DELETE", "/v1/memories/0000000000000000000000?level=bogus"), 404, "not-found");
    await expectProblem(await alice.request("DELETE", "/v1/memories/mabcdefgh0123456789ab?level=bogus"), 400, "invalid-request");
    await expectProblem(await alice.request("DELETE", "/v1/memories/mabcdefgh0123456789ab"), 404, "not-found");
    await expectProblem(await alice.request("PUT", "/v1/memories/mabcdefgh0123456789ab", {}), 404, "not-found");
    const empty = await alice.json<SearchResult>("GET", "/v1/memories/search?q=tea");
    expect(empty).toMatchObject({ results: [], candidates: 0 });
    expect((await rawUnder(id.tenant)).length).toBe(2);
  });
});
