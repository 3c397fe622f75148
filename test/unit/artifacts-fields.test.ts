import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FieldRequests, FieldResolution, fieldName, ResolveBody, resolveWith, type ArtifactReader } from "../../src/artifacts/declare-fields";
import { lookup } from "../../src/core/json-pointer";
import { formatJsonPointer, parseJsonPointer } from "../../src/protocol/json-pointer";
import { ARTIFACT_LIMITS } from "../../src/protocol/artifact-limits";
import { formatPointer, parsePointer, type PointerParts } from "../../src/protocol/artifacts";
import { ok, fail } from "../../src/core/problem";
import { countTokens } from "../../src/core/tokens";

describe("JSON Pointer (RFC 6901)", () => {
  it("parses and unescapes ~1 then ~0", () => {
    expect(parseJsonPointer("")).toEqual([]);
    expect(parseJsonPointer("/")).toEqual([""]);
    expect(parseJsonPointer("/results/0/url")).toEqual(["results", "0", "url"]);
    expect(parseJsonPointer("/a~1b")).toEqual(["a/b"]);
    expect(parseJsonPointer("/m~0n")).toEqual(["m~n"]);
    // ~01 is "~1" (not "/"): ~1 is replaced first, then ~0.
    expect(parseJsonPointer("/~01")).toEqual(["~1"]);
    expect(parseJsonPointer("/a//b")).toEqual(["a", "", "b"]);
  });

  it("rejects what is not a pointer", () => {
    for (const bad of ["a", "results/0", "/a~2", "/~", "/a~"]) expect(parseJsonPointer(bad), bad).toBeNull();
  });

  it("round-trips any tokens", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary" })), (tokens) => {
        expect(parseJsonPointer(formatJsonPointer(tokens))).toEqual(tokens);
      }),
    );
  });

  it("evaluates the RFC's examples", () => {
    const doc = JSON.parse(`{"foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\\\j": 5, "k\\"l": 6, " ": 7, "m~n": 8}`);
    const at = (p: string) => lookup(doc, parseJsonPointer(p)!);
    expect(at("")).toEqual({ found: true, value: doc });
    expect(at("/foo")).toEqual({ found: true, value: ["bar", "baz"] });
    expect(at("/foo/0")).toEqual({ found: true, value: "bar" });
    expect(at("/")).toEqual({ found: true, value: 0 });
    expect(at("/a~1b")).toEqual({ found: true, value: 1 });
    expect(at("/i\\j")).toEqual({ found: true, value: 5 });
    expect(at("/ ")).toEqual({ found: true, value: 7 });
    expect(at("/m~0n")).toEqual({ found: true, value: 8 });
  });

  it("indexes lists strictly and ignores the prototype", () => {
    const doc = JSON.parse(`{"list": [1, 2], "__proto__": "own"}`);
    expect(lookup(doc, ["list", "1"])).toEqual({ found: true, value: 2 });
    for (const index of ["01", "-", "2", "1.0", "-1", " 1"]) expect(lookup(doc, ["list", index]).found, index).toBe(false);
    expect(lookup(doc, ["list", "2"])).toEqual({ found: false, reason: "/list has 2 items" });
    expect(lookup(doc, ["constructor"]).found).toBe(false);
    expect(lookup(doc, ["list", "length"]).found).toBe(false);
    expect(lookup(doc, ["__proto__"])).toEqual({ found: true, value: "own" });
    expect(lookup(doc, ["list", "0", "x"])).toEqual({ found: false, reason: "/list/0 is number, not an object or list" });
  });
});

describe("artifact pointers", () => {
  it("format and parse, and refuse anything else", () => {
    const parts = { conversation: "conv-1234", task: "step_1", id: "abc", version: 12 };
    expect(formatPointer(parts)).toBe("r2://artifacts/conv-1234/step_1/abc@v12");
    expect(parsePointer(formatPointer(parts))).toEqual(parts);
    for (const bad of [
      "r2://artifacts/conv-1234/step_1/abc",
      "r2://artifacts/conv-1234/step_1/abc@v0",
      "r2://artifacts/conv-1234/step_1/abc@v01",
      "r2://artifacts/short/step_1/abc@v1",
      "r2://artifacts/conv-1234/../abc@v1",
      "r2://artifacts/tenant/conv-1234/step_1/abc@v1",
      "s3://artifacts/conv-1234/step_1/abc@v1",
    ]) {
      expect(parsePointer(bad), bad).toBeNull();
    }
  });
});

const search = {
  market_size: "$912B in 2026",
  cagr: 0.17,
  results: [
    { title: "A", url: "https://a.example", snippet: "x" },
    { title: "B", snippet: "y" },
    { title: "C", url: "https://c.example" },
  ],
};
const extraction = { cagr: 0.2, regions: { emea: 0.3 }, report_url: "https://r.example" };

function resolve(fields: Parameters<typeof FieldRequests.parse>[0], docs: [string, unknown][]) {
  const r = new FieldResolution(FieldRequests.parse(fields));
  for (const [pointer, data] of docs) r.offer(pointer, data);
  return r.finish();
}

describe("declareFields: resolving field requests", () => {
  it("top-level keys: the first artifact that has the field wins, and says so", () => {
    const out = resolve(["market_size", "cagr", "report_url"], [["p1", search], ["p2", extraction]]);
    expect(out.values).toEqual({ market_size: "$912B in 2026", cagr: 0.17, report_url: "https://r.example" });
    expect(out.from).toEqual({ market_size: "p1", cagr: "p1", report_url: "p2" });
    expect(out.shadowed).toEqual({ cagr: ["p2"] });
    expect(out.missing).toEqual([]);
    expect(out.tokens).toBe(countTokens(JSON.stringify(out.values)));
    // Order of refs decides.
    expect(resolve(["cagr"], [["p2", extraction], ["p1", search]]).values).toEqual({ cagr: 0.2 });
  });

  it("JSON Pointers, escapes included", () => {
    const doc = { "a/b": { "m~n": [10, 20] } };
    const out = resolve(["/results/0/url", "/regions/emea", "/a~1b/m~0n/1"], [["p1", search], ["p2", extraction], ["p3", doc]]);
    expect(out.values).toEqual({ "/results/0/url": "https://a.example", "/regions/emea": 0.3, "/a~1b/m~0n/1": 20 });
    expect(out.from).toEqual({ "/results/0/url": "p1", "/regions/emea": "p2", "/a~1b/m~0n/1": "p3" });
  });

  it("across a list of objects: aligned with the items, null where an item lacks the field", () => {
    const out = resolve([{ across: "/results", field: "url" }, { across: "/results", field: ["title", "url"] }], [["p1", search]]);
    expect(out.values).toEqual({
      "/results[].url": ["https://a.example", null, "https://c.example"],
      "/results[].{title,url}": [{ title: "A", url: "https://a.example" }, { title: "B" }, { title: "C", url: "https://c.example" }],
    });
  });

  it("across a list artifact, with a pointer into each item and a chosen name", () => {
    const list = [{ meta: { url: "u1" } }, { meta: { url: "u2" } }, "not an object"];
    const out = resolve([{ across: "", field: "/meta/url", as: "urls" }, { across: "", field: "meta" }], [["p1", list]]);
    expect(out.values).toEqual({ urls: ["u1", "u2", null], "[].meta": [{ url: "u1" }, { url: "u2" }, null] });
  });

  it("a plain key does not silently pick one item of a list artifact: the miss says how to ask", () => {
    const out = resolve(["url"], [["p1", search.results]]);
    expect(out.values).toEqual({});
    expect(out.missing).toEqual([{ field: "url", reason: "not-found", detail: expect.stringContaining(`ask {"across": "", "field": "url"}`) }]);
  });

  it("missing fields are listed with a reason per artifact", () => {
    const out = resolve(["nope", "/results/9/url", { across: "/market_size", field: "x" }, { across: "/results", field: "nope" }], [["p1", search], ["p2", extraction]]);
    expect(out.values).toEqual({});
    expect(out.missing).toEqual([
      { field: "nope", reason: "not-found", detail: "in p1, no key 'nope'; in p2, no key 'nope'" },
      { field: "/results/9/url", reason: "not-found", detail: "in p1, /results has 3 items; in p2, the root has no key 'results'" },
      { field: "/market_size[].x", reason: "not-a-list", detail: "in p1, /market_size is string, not a list; in p2, the root has no key 'market_size'" },
      { field: "/results[].nope", reason: "not-found", detail: "in p1, no item of /results has 'nope'; in p2, the root has no key 'results'" },
    ]);
  });

  it("a value too large to read is missing, not swapped for a later artifact's", () => {
    const big = { blob: "x".repeat(ARTIFACT_LIMITS.valueChars + 1) };
    const out = resolve(["blob"], [["p1", big], ["p2", { blob: "small" }]]);
    expect(out.values).toEqual({});
    expect(out.missing).toEqual([{ field: "blob", reason: "too-large", detail: expect.stringContaining("in p1") }]);
  });

  it("values past the budget are missing in the order asked", () => {
    const chunk = "y".repeat(ARTIFACT_LIMITS.resolvedChars * 0.4);
    const out = resolve(["a", "b", "c", "d"], [["p1", { a: chunk, b: chunk, c: chunk, d: 1 }]]);
    expect(Object.keys(out.values)).toEqual(["a", "b", "d"]);
    expect(out.missing).toEqual([{ field: "c", reason: "over-budget", detail: expect.any(String) }]);
    expect(JSON.stringify(out.values).length).toBeLessThanOrEqual(ARTIFACT_LIMITS.resolvedChars);
  });

  it("field names that are prototype keys are plain keys", () => {
    const doc = JSON.parse(`{"__proto__": {"x": 1}, "constructor": 2}`);
    const out = resolve(["__proto__", "constructor", "toString"], [["p1", doc]]);
    expect(Object.hasOwn(out.values, "__proto__")).toBe(true);
    expect(JSON.stringify(out.values)).toBe(`{"__proto__":{"x":1},"constructor":2}`);
    expect(out.missing.map((m) => m.field)).toEqual(["toString"]);
  });

  it("names: the request itself, or across[] plus the field, or `as`", () => {
    expect(fieldName("cagr")).toBe("cagr");
    expect(fieldName("/a/0")).toBe("/a/0");
    expect(fieldName({ across: "/results", field: "url" })).toBe("/results[].url");
    expect(fieldName({ across: "", field: "url" })).toBe("[].url");
    expect(fieldName({ across: "/r", field: "/a/b" })).toBe("/r[]/a/b");
    expect(fieldName({ across: "/r", field: ["t", "u"], as: "cites" })).toBe("cites");
  });

  it("invalid requests are refused before anything is read", () => {
    for (const bad of [[], [""], ["/a~2"], [{ across: "results", field: "url" }], [{ across: "/r", field: [] }], [{ across: "/r", field: "u", extra: 1 }], ["a", "a"], [42]]) {
      expect(FieldRequests.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
    const dup = FieldRequests.safeParse([{ across: "/r", field: "u" }, { across: "/r", field: "u" }]);
    expect(dup.success ? "" : dup.error.issues[0]!.message).toContain("give one an 'as'");
  });
});

const CONV = "conv-1234";
const p = (task: string, id: string, version = 1) => formatPointer({ conversation: CONV, task, id, version });

function fakeReader(store: Record<string, unknown>) {
  const reads: string[] = [];
  const reader: ArtifactReader = async (parts: PointerParts) => {
    const pointer = formatPointer(parts);
    reads.push(pointer);
    if (!(pointer in store)) return fail("not-found", `no artifact ${pointer}`);
    return ok({ pointer, sha256: `${"0".repeat(63)}${parts.version}`, data: store[pointer] });
  };
  return { reader, reads };
}

describe("resolveWith: refs, versions and reads", () => {
  it("reads each artifact once, even when the same ref comes twice", async () => {
    const { reader, reads } = fakeReader({ [p("s", "a")]: search, [p("s", "b")]: extraction });
    const refs = [{ pointer: p("s", "a"), version: 1 }, { pointer: p("s", "b"), version: 1 }, { pointer: p("s", "a"), version: 1 }];
    const out = await resolveWith(reader, CONV, refs, ["cagr", "report_url", "market_size", { across: "/results", field: "url" }]);
    expect(out.ok && out.value.from).toEqual({ cagr: p("s", "a"), report_url: p("s", "b"), market_size: p("s", "a"), "/results[].url": p("s", "a") });
    expect(reads).toEqual([p("s", "a"), p("s", "b")]);
    expect(out.ok && out.value.read).toEqual([p("s", "a"), p("s", "b")]);
  });

  it("a ref naming another conversation, or disagreeing with its pointer, fails before any read", async () => {
    const { reader, reads } = fakeReader({ [p("s", "a")]: search });
    const other = await resolveWith(reader, "conv-other", [{ pointer: p("s", "a"), version: 1 }], ["cagr"]);
    expect(other).toEqual({ ok: false, problem: { type: "not-found", detail: expect.stringContaining("in this conversation") } });
    const skew = await resolveWith(reader, CONV, [{ pointer: p("s", "a"), version: 1 }, { pointer: p("s", "a", 2), version: 1 }], ["cagr"]);
    expect(skew).toEqual({ ok: false, problem: { type: "conflict", detail: expect.stringContaining("expects version 1, but its pointer names v2") } });
    expect(reads).toEqual([]);
  });

  it("a sha256 that differs from the stored bytes' is a conflict, also on a repeated ref", async () => {
    const { reader } = fakeReader({ [p("s", "a")]: search });
    const stored = `${"0".repeat(63)}1`;
    const wrong = "f".repeat(64);
    expect((await resolveWith(reader, CONV, [{ pointer: p("s", "a"), version: 1, sha256: stored }], ["cagr"])).ok).toBe(true);
    const bad = await resolveWith(reader, CONV, [{ pointer: p("s", "a"), version: 1, sha256: wrong }], ["cagr"]);
    expect(bad.ok ? null : bad.problem.type).toBe("conflict");
    const again = await resolveWith(reader, CONV, [{ pointer: p("s", "a"), version: 1 }, { pointer: p("s", "a"), version: 1, sha256: wrong }], ["cagr"]);
    expect(again.ok ? null : again.problem.type).toBe("conflict");
  });

  it("a reader's problem is the answer", async () => {
    const { reader } = fakeReader({});
    const out = await resolveWith(reader, CONV, [{ pointer: p("s", "gone"), version: 1 }], ["cagr"]);
    expect(out.ok ? null : out.problem.type).toBe("not-found");
  });

  it("a stored ref can be passed back as it is; unknown fields cannot", () => {
    const ref = {
      id: "a", task: "s", type: "search_results", pointer: p("s", "a"), summary: "x", sizeBytes: 10, schemaKeys: ["k"], keyCount: 1,
      sha256: "a".repeat(64), version: 1, redacted: 0, createdAt: "2026-01-01T00:00:00.000Z",
    };
    expect(ResolveBody.safeParse({ refs: [ref], fields: ["k"] }).success).toBe(true);
    expect(ResolveBody.safeParse({ refs: [{ ...ref, tenant: "other" }], fields: ["k"] }).success).toBe(false);
    expect(ResolveBody.safeParse({ refs: [{ pointer: "r2://x", version: 1 }], fields: ["k"] }).success).toBe(false);
    expect(ResolveBody.safeParse({ refs: [{ pointer: p("s", "a") }], fields: ["k"] }).success).toBe(false);
    expect(ResolveBody.safeParse({ refs: [], fields: ["k"] }).success).toBe(false);
  });
});
