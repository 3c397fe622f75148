import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { resolveFields } from "../../src/artifacts/declare-fields";
import { ARTIFACT_LIMITS } from "../../src/protocol/artifact-limits";
import type { ArtifactRef } from "../../src/protocol/artifacts";
import { renderTaskState } from "../../src/artifacts/task-state";
import { worker as api } from "../../src/worker";
import { LIMITS } from "../../src/protocol/limits";
import { countTokens } from "../../src/core/tokens";
import { BASE, freshIdentity, Frontend, apiKey, type Identity, expectProblem } from "./support/runtime";

async function setup() {
  const id = freshIdentity();
  const frontend = await Frontend.for(id);
  const conversation = await frontend.conversation();
  return { id, frontend, conversation, path: `/v1/conversations/${conversation}/artifacts` };
}

const keyOf = (id: Identity, conversation: string, ref: { task: string; id: string; version: number }) =>
  `art/${id.tenant}/${id.user}/${conversation}/${ref.task}/${ref.id}/v${ref.version}.json`;

async function sha256(bytes: ArrayBuffer): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}


async function storedKeys(id: Identity): Promise<string[]> {
  return (await env.ARTIFACTS.list({ prefix: `art/${id.tenant}/` })).objects.map((o) => o.key);
}

const searchData = {
  query: "2026 cloud market",
  market_size: "$912.8B",
  cagr: 0.173,
  results: Array.from({ length: 5 }, (_, i) => ({ title: `Report ${i}`, url: `https://r.example/${i}`, snippet: `snippet ${i}` })),
};
const extractionData = { cagr: 0.2, report_url: "https://r.example/summary", regions: { emea: 0.31 } };

/** Counts the R2 reads the route makes; everything else goes to the real bucket. */
function countingBucket(bucket: R2Bucket) {
  const gets: string[] = [];
  const proxy = new Proxy(bucket, {
    get(target, prop) {
      if (prop === "get") {
        return (key: string, options?: R2GetOptions) => {
          gets.push(key);
          return target.get(key, options);
        };
      }
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { bucket: proxy, gets };
}

/** The real route and the real R2 binding, called in-process so the test can count the bucket's reads. */
async function callApi(id: Identity, method: string, path: string, body: unknown, bucket: R2Bucket): Promise<Response> {
  const ctx = createExecutionContext();
  const request = new Request(`${BASE}${path}`, {
    method,
    headers: { Authorization: `Bearer ${await apiKey(id)}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const response = await api.fetch(request, { ...env, ARTIFACTS: bucket }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

describe("storing artifacts", () => {
  it("stores the JSON under the owner's key and returns a ref that matches the stored bytes", async () => {
    const { id, frontend, conversation, path } = await setup();
    const res = await frontend.request("POST", path, { task: "search", type: "search_results", data: searchData });
    expect(res.status).toBe(201);
    const ref = (await res.json()) as ArtifactRef;
    expect(ref.id).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(ref).toMatchObject({ task: "search", type: "search_results", version: 1, redacted: 0, schemaKeys: ["query", "market_size", "cagr", "results"], keyCount: 4 });
    expect(ref.pointer).toBe(`r2://artifacts/${conversation}/search/${ref.id}@v1`);
    expect(ref.pointer).not.toContain(id.tenant);
    expect(ref.summary).toBe(`search_results, ${ref.sizeBytes} B: object: query (text, 17 chars), market_size (text, 7 chars), cagr (number), results (5 × {title, url, snippet})`);

    const object = await env.ARTIFACTS.get(keyOf(id, conversation, ref));
    expect(object).not.toBeNull();
    const bytes = await object!.arrayBuffer();
    expect(ref.sizeBytes).toBe(bytes.byteLength);
    expect(ref.sha256).toBe(await sha256(bytes));
    expect(JSON.parse(new TextDecoder().decode(bytes))).toEqual(searchData);
    expect(object!.httpMetadata?.contentType).toBe("application/json");
    // The ref rides in the object's metadata, so a HEAD answers it.
    expect(object!.customMetadata).toMatchObject({ id: ref.id, sha256: ref.sha256, version: "1", summary: ref.summary });
    expect(await frontend.json("GET", `${path}/${ref.id}?task=search`)).toEqual(ref);
  });

  it("keeps the caller's summary; a list of objects gets the union of its items' keys", async () => {
    const { frontend, path } = await setup();
    const ref = await frontend.json<ArtifactRef>("POST", path, { task: "t", type: "hits", id: "hits", summary: "Three hits on the query", data: [{ a: 1 }, { b: 2 }, { a: 3, c: 4 }] });
    expect(ref).toMatchObject({ id: "hits", summary: "Three hits on the query", schemaKeys: ["a", "b", "c"], keyCount: 3 });
  });

  it("the same id again stores the next version; each version keeps its own ref", async () => {
    const { id, frontend, conversation, path } = await setup();
    const body = (n: number) => ({ task: "extract", type: "extraction", id: "figures", data: { ...extractionData, n } });
    const refs: ArtifactRef[] = [];
    for (let n = 1; n <= 3; n++) refs.push(await frontend.json<ArtifactRef>("POST", path, body(n)));
    expect(refs.map((r) => r.version)).toEqual([1, 2, 3]);
    expect(refs.map((r) => r.pointer)).toEqual([1, 2, 3].map((v) => `r2://artifacts/${conversation}/extract/figures@v${v}`));
    expect(new Set(refs.map((r) => r.sha256)).size).toBe(3);
    expect(await frontend.json("GET", `${path}/figures?task=extract`)).toEqual(refs[2]);
    expect(await frontend.json("GET", `${path}/figures?task=extract&version=1`)).toEqual(refs[0]);
    await expectProblem(await frontend.request("GET", `${path}/figures?task=extract&version=4`), 404, "not-found");
    await expectProblem(await frontend.request("GET", `${path}/figures?task=other`), 404, "not-found");
    expect((await storedKeys(id)).length).toBe(3);
  });

  it("concurrent writers of one id never share a version (conditional put)", async () => {
    const { frontend, path } = await setup();
    const refs = await Promise.all(
      Array.from({ length: 4 }, (_, n) => frontend.json<ArtifactRef>("POST", path, { task: "t", type: "x", id: "race", data: { n } })),
    );
    expect(refs.map((r) => r.version).sort()).toEqual([1, 2, 3, 4]);
  });

  it("keeps the newest versions; a ref to a pruned one is a 409 that names the current version", async () => {
    const { id, frontend, conversation, path } = await setup();
    const kept = ARTIFACT_LIMITS.versionsKept;
    let first: ArtifactRef | undefined;
    for (let n = 1; n <= kept + 1; n++) {
      const ref = await frontend.json<ArtifactRef>("POST", path, { task: "t", type: "x", id: "busy", data: { n } });
      first ??= ref;
    }
    const keys = await storedKeys(id);
    expect(keys).toHaveLength(kept);
    expect(keys).not.toContain(keyOf(id, conversation, first!));
    const stale = await expectProblem(await frontend.request("POST", `${path}/resolve`, { refs: [first], fields: ["n"] }), 409, "conflict");
    expect(stale.detail).toContain(`v${kept + 1}`);
    await expectProblem(await frontend.request("GET", `${path}/busy?task=t&version=1`), 404, "not-found");
  });
});

describe("declareFields over R2", () => {
  async function twoArtifacts() {
    const s = await setup();
    const search = await s.frontend.json<ArtifactRef>("POST", s.path, { task: "search", type: "search_results", data: searchData });
    const extraction = await s.frontend.json<ArtifactRef>("POST", s.path, { task: "extract", type: "extraction", data: extractionData });
    return { ...s, search, extraction };
  }

  const fields = ["market_size", "cagr", "report_url", { across: "/results", field: "url" }, "/results/1/title", "/regions/emea", "analyst_name"];

  it("resolves only the fields asked for, reading each artifact once", async () => {
    const { id, conversation, path, search, extraction } = await twoArtifacts();
    const counting = countingBucket(env.ARTIFACTS);
    const res = await callApi(id, "POST", `${path}/resolve`, { refs: [search, extraction, search], fields }, counting.bucket);
    expect(res.status).toBe(200);
    const out = (await res.json()) as Record<string, unknown>;
    expect(counting.gets).toEqual([keyOf(id, conversation, search), keyOf(id, conversation, extraction)]);
    const values = {
      market_size: "$912.8B",
      cagr: 0.173,
      report_url: "https://r.example/summary",
      "/results[].url": searchData.results.map((r) => r.url),
      "/results/1/title": "Report 1",
      "/regions/emea": 0.31,
    };
    expect(out).toEqual({
      values,
      from: {
        market_size: search.pointer,
        cagr: search.pointer,
        report_url: extraction.pointer,
        "/results[].url": search.pointer,
        "/results/1/title": search.pointer,
        "/regions/emea": extraction.pointer,
      },
      shadowed: { cagr: [extraction.pointer] },
      missing: [{ field: "analyst_name", reason: "not-found", detail: expect.stringContaining("no key 'analyst_name'") }],
      read: [search.pointer, extraction.pointer],
      tokens: countTokens(JSON.stringify(values)),
    });
  });

  it("the route through the Worker answers the same, and so does resolveFields for the turn", async () => {
    const { id, frontend, conversation, path, search, extraction } = await twoArtifacts();
    const viaWorker = await frontend.json<{ values: unknown; read: string[] }>("POST", `${path}/resolve`, { refs: [search, extraction], fields });
    const counting = countingBucket(env.ARTIFACTS);
    const direct = await resolveFields(counting.bucket, id, conversation, [search, extraction], fields);
    expect(direct.ok && direct.value).toEqual(viaWorker);
    expect(counting.gets).toHaveLength(2);
    // The task state shows refs, never values.
    const state = renderTaskState([search, extraction]);
    expect(state).toContain(search.pointer);
    expect(state).not.toContain("https://r.example/summary");
  });

  it("a ref whose version or sha256 no longer matches what is stored is a 409", async () => {
    const { id, frontend, conversation, path, extraction } = await twoArtifacts();
    const resolve = (refs: unknown[]) => frontend.request("POST", `${path}/resolve`, { refs, fields: ["cagr"] });
    // The pointer names v1 but the caller expects v2.
    const skew = await expectProblem(await resolve([{ pointer: extraction.pointer, version: 2 }]), 409, "conflict");
    expect(skew.detail).toContain("expects version 2");
    // Different bytes than the ref saw.
    await expectProblem(await resolve([{ pointer: extraction.pointer, version: 1, sha256: "f".repeat(64) }]), 409, "conflict");
    // Only v2 exists now: v1's ref is stale.
    const v2 = await frontend.json<ArtifactRef>("POST", path, { task: "extract", type: "extraction", id: extraction.id, data: { cagr: 0.25 } });
    expect(v2.version).toBe(2);
    await env.ARTIFACTS.delete(keyOf(id, conversation, extraction));
    const gone = await expectProblem(await resolve([extraction]), 409, "conflict");
    expect(gone.detail).toContain("is at v2");
    expect(await frontend.json("POST", `${path}/resolve`, { refs: [v2], fields: ["cagr"] })).toMatchObject({ values: { cagr: 0.25 } });
    // A version that never existed is not found.
    await expectProblem(await resolve([{ pointer: extraction.pointer.replace("@v1", "@v7"), version: 7 }]), 404, "not-found");
  });

  it("another tenant's or user's pointer resolves to nothing", async () => {
    const owner = await twoArtifacts();
    const other = await setup();
    const sameTenant = await Frontend.for({ tenant: owner.id.tenant, user: "mallory" });
    const refs = [owner.search];
    // Through the other tenant's own conversation: the pointer is not in it.
    await expectProblem(await other.frontend.request("POST", `${other.path}/resolve`, { refs, fields: ["cagr"] }), 404, "not-found");
    // Naming the owner's conversation: the key derives from the caller, so there is nothing there.
    await expectProblem(await other.frontend.request("POST", `${owner.path}/resolve`, { refs, fields: ["cagr"] }), 404, "not-found");
    await expectProblem(await sameTenant.request("POST", `${owner.path}/resolve`, { refs, fields: ["cagr"] }), 404, "not-found");
    await expectProblem(await other.frontend.request("GET", `${owner.path}/${owner.search.id}?task=search`), 404, "not-found");
    // Nor can they write into it.
    await expectProblem(await other.frontend.request("POST", owner.path, { task: "t", type: "x", data: {} }), 404, "not-found");
    await expectProblem(await sameTenant.request("POST", owner.path, { task: "t", type: "x", data: {} }), 404, "not-found");
    expect(await storedKeys(other.id)).toEqual([]);
    expect(await storedKeys(owner.id)).toHaveLength(2);
  });
});

describe("secrets never land", () => {
  it("string leaves and the summary are redacted before storing; the ref counts them", async () => {
    const { id, frontend, conversation, path } = await setup();
    const github = `ghp_${"A1b2C3d4E5f6G7h8I9j0".repeat(2).slice(0, 36)}`;
    const stripe = `sk_live_${"9z8Y7x6W5v4U3t2S1r0Q".repeat(2).slice(0, 26)}`;
    const data = { config: { note: `deploy with ${github}`, password: "hunter2-Correct!Horse" }, rows: [{ key: stripe }], cagr: 0.2 };
    const ref = await frontend.json<ArtifactRef>("POST", path, { task: "t", type: "config", data, summary: `uses ${github}` });
    expect(ref.redacted).toBeGreaterThanOrEqual(4);
    expect(ref.summary).not.toContain(github);
    const stored = await (await env.ARTIFACTS.get(keyOf(id, conversation, ref)))!.text();
    for (const secret of [github, stripe, "hunter2-Correct!Horse"]) expect(stored).not.toContain(secret);
    expect(stored).toContain("[REDACTED:");
    expect(JSON.parse(stored).cagr).toBe(0.2);
    const head = await env.ARTIFACTS.head(keyOf(id, conversation, ref));
    expect(JSON.stringify(head!.customMetadata)).not.toContain(github);
    const out = await frontend.json<{ values: Record<string, string> }>("POST", `${path}/resolve`, { refs: [ref], fields: ["/config/note"] });
    expect(out.values["/config/note"]).toBe("deploy with [REDACTED:github-token]");
  });
});

describe("bad input gets a clear 4xx and stores nothing", () => {
  it("store: malformed JSON, wrong types, unknown fields, wrong media type", async () => {
    const { id, frontend, path } = await setup();
    await expectProblem(await frontend.request("POST", path, "{not json"), 400, "invalid-request");
    const typed = await expectProblem(await frontend.request("POST", path, { task: 42, type: "x", data: {} }), 400, "invalid-request");
    expect(typed.issues?.[0]?.path).toBe("task");
    const noData = await expectProblem(await frontend.request("POST", path, { task: "t", type: "x" }), 400, "invalid-request");
    expect(noData.issues?.[0]?.path).toBe("data");
    for (const body of [
      { task: "t", type: "x", data: {}, tenant: "other" },
      { task: "../t", type: "x", data: {} },
      { task: "t", type: "has space", data: {} },
      { task: "t", type: "x", data: {}, id: "a/b" },
      { task: "t", type: "x", data: {}, summary: "" },
      { task: "t", type: "x", data: {}, summary: "s".repeat(ARTIFACT_LIMITS.summaryChars + 1) },
      [{ task: "t" }],
    ]) {
      await expectProblem(await frontend.request("POST", path, body), 400, "invalid-request");
    }
    await expectProblem(await frontend.request("POST", path, JSON.stringify({ task: "t", type: "x", data: {} }), { "Content-Type": "text/plain" }), 415, "unsupported-media-type");
    expect(await storedKeys(id)).toEqual([]);
  });

  it("store: oversized bodies and data, too deep data", async () => {
    const { id, frontend, path } = await setup();
    await expectProblem(await frontend.request("POST", path, { task: "t", type: "x", data: "x".repeat(LIMITS.httpBodyBytes + 10) }), 413, "payload-too-large");
    // Under the body limit, over the artifact limit.
    const big = await expectProblem(await frontend.request("POST", path, { task: "t", type: "x", data: "x".repeat(ARTIFACT_LIMITS.dataBytes + 10_000) }), 413, "payload-too-large");
    expect(big.detail).toContain(`${ARTIFACT_LIMITS.dataBytes} bytes`);
    const deep = JSON.parse(`${"[".repeat(ARTIFACT_LIMITS.depth + 1)}${"]".repeat(ARTIFACT_LIMITS.depth + 1)}`);
    await expectProblem(await frontend.request("POST", path, { task: "t", type: "x", data: deep }), 400, "invalid-request");
    const veryDeep = `{"task":"t","type":"x","data":${"[".repeat(50_000)}${"]".repeat(50_000)}}`;
    await expectProblem(await frontend.request("POST", path, veryDeep), 400, "invalid-request");
    expect(await storedKeys(id)).toEqual([]);
  });

  it("store: no such, malformed or ended conversation", async () => {
    const { id, frontend, conversation, path } = await setup();
    const body = { task: "t", type: "x", data: {} };
    await expectProblem(await frontend.request("POST", "/v1/conversations/nope/artifacts", body), 404, "not-found");
    await expectProblem(await frontend.request("POST", `/v1/conversations/${crypto.randomUUID()}/artifacts`, body), 404, "not-found");
    await frontend.json("DELETE", `/v1/conversations/${conversation}`);
    await expectProblem(await frontend.request("POST", path, body), 409, "conflict");
    expect(await storedKeys(id)).toEqual([]);
  });

  it("resolve and get: bad pointers, bad fields, bad queries", async () => {
    const { frontend, conversation, path } = await setup();
    const ref = await frontend.json<ArtifactRef>("POST", path, { task: "t", type: "x", id: "a", data: { a: 1 } });
    const resolve = (body: unknown) => frontend.request("POST", `${path}/resolve`, body);
    for (const body of [
      { refs: [{ pointer: "art/tenant/user/x.json", version: 1 }], fields: ["a"] },
      { refs: [{ pointer: `r2://artifacts/${conversation}/t/a`, version: 1 }], fields: ["a"] },
      { refs: [{ pointer: `r2://artifacts/${conversation}/t/a@v1`, version: 0 }], fields: ["a"] },
      { refs: [{ pointer: ref.pointer, version: 1, sha256: "nothex" }], fields: ["a"] },
      { refs: [ref], fields: ["/a~2"] },
      { refs: [ref], fields: [""] },
      { refs: [ref], fields: [] },
      { refs: [], fields: ["a"] },
      { refs: [ref], fields: [{ across: "results", field: "url" }] },
      { refs: [ref], fields: ["a", "a"] },
      { refs: Array.from({ length: ARTIFACT_LIMITS.refsPerResolve + 1 }, () => ref), fields: ["a"] },
      { refs: [ref] },
    ]) {
      await expectProblem(await resolve(body), 400, "invalid-request");
    }
    await expectProblem(await resolve("{nope"), 400, "invalid-request");
    await expectProblem(await frontend.request("GET", `${path}/a`), 400, "invalid-request");
    await expectProblem(await frontend.request("GET", `${path}/a?task=t&version=0`), 400, "invalid-request");
    await expectProblem(await frontend.request("GET", `${path}/a?task=t&version=one`), 400, "invalid-request");
    await expectProblem(await frontend.request("GET", `${path}/a?task=t&extra=1`), 400, "invalid-request");
    await expectProblem(await frontend.request("GET", `${path}/a~b?task=t`), 404, "not-found");
    expect(await frontend.json("GET", `${path}/a?task=t`)).toEqual(ref);
  });
});
