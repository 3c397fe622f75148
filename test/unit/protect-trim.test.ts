import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countTokens } from "../../src/core/tokens";
import { lookup } from "../../src/core/json-pointer";
import { formatJsonPointer, parseJsonPointer } from "../../src/protocol/json-pointer";
import { TrimPolicy } from "../../src/protocol/policies";
import { trimText, resolveTrimPolicy } from "../../src/protect";

const MARKER = /\n?\[… \d+ tokens trimmed …\]\n?/;
const REDACTION = /\[REDACTED:[a-z0-9-]+\]/g;
const logs = Array.from({ length: 400 }, (_, i) => `2026-11-23T10:00:${String(i % 60).padStart(2, "0")}Z INFO request ${i} ok`).join("\n");

/** Text made of prose, JSON-ish punctuation, other scripts, emoji, newlines and redaction markers. */
const pieces = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom("[REDACTED:github-token]", "[REDACTED:pem-private-key]", "[REDACTED:card-number]", "\n", "    ", "😀👩‍💻", "上下文运行时", '{"a": [1, 2]}', "password=", "ok "),
  fc.stringMatching(/^[a-z]{1,12}$/),
);
const texts = fc.array(pieces, { maxLength: 300 }).map((parts) => parts.join(""));
const strategies = fc.constantFrom("head", "head_tail", "summary", "fields") as fc.Arbitrary<TrimPolicy["strategy"]>;

/** Where each redaction marker of `text` sits. */
const markerSpans = (text: string) => [...text.matchAll(REDACTION)].map((m) => [m.index, m.index + m[0].length] as const);
const inside = (cut: number, spans: readonly (readonly [number, number])[]) => spans.some(([start, end]) => start < cut && cut < end);

describe("trimText", () => {
  it("passes a result within budget unchanged, whatever the strategy", () => {
    for (const strategy of ["head", "head_tail", "summary", "fields"] as const) {
      expect(trimText("short result", TrimPolicy.parse({ strategy, maxTokens: 50, fields: ["a"] }))).toEqual({ text: "short result", trimmed: null });
    }
  });

  it("never exceeds the budget, for random text, budgets and strategies", () => {
    fc.assert(
      fc.property(texts, fc.integer({ min: 1, max: 200 }), strategies, (text, maxTokens, strategy) => {
        const { text: out, trimmed } = trimText(text, TrimPolicy.parse({ strategy, maxTokens, fields: ["a", "/a/0"] }));
        expect(countTokens(out)).toBeLessThanOrEqual(maxTokens);
        if (trimmed === null) expect(out).toBe(text);
        else expect(trimmed).toEqual({ strategy: expect.any(String), originalTokens: countTokens(text), keptTokens: countTokens(out) });
      }),
      { numRuns: 400 },
    );
  });

  it("never splits a redaction marker: head and tail are cut outside every marker", () => {
    fc.assert(
      fc.property(texts, fc.integer({ min: 8, max: 120 }), fc.constantFrom("head", "head_tail") as fc.Arbitrary<"head" | "head_tail">, (text, maxTokens, strategy) => {
        const { text: out, trimmed } = trimText(text, TrimPolicy.parse({ strategy, maxTokens }));
        if (trimmed === null) return;
        const spans = markerSpans(text);
        const [head, tail] = out.split(MARKER) as [string, string | undefined];
        expect(text.startsWith(head)).toBe(true);
        expect(inside(head.length, spans)).toBe(false);
        if (tail !== undefined && tail.length > 0) {
          expect(text.endsWith(tail)).toBe(true);
          expect(inside(text.length - tail.length, spans)).toBe(false);
        }
        // Every "[REDACTED:" left in the output is a whole marker.
        expect(out.split("[REDACTED:").length - 1).toBe([...out.matchAll(REDACTION)].length);
      }),
      { numRuns: 400 },
    );
  });

  it("head_tail keeps the first and last lines around a marker that counts what was left out", () => {
    const { text, trimmed } = trimText(logs, TrimPolicy.parse({ strategy: "head_tail", maxTokens: 200 }));
    expect(text.startsWith("2026-11-23T10:00:00Z INFO request 0 ok\n")).toBe(true);
    expect(text.endsWith("INFO request 399 ok")).toBe(true);
    const left = Number(/\[… (\d+) tokens trimmed …\]/.exec(text)![1]);
    const [head, tail] = text.split(MARKER) as [string, string];
    expect(left).toBe(countTokens(logs) - countTokens(head) - countTokens(tail));
    expect(trimmed).toEqual({ strategy: "head_tail", originalTokens: countTokens(logs), keptTokens: countTokens(text) });
    expect(trimmed!.keptTokens).toBeLessThanOrEqual(200);
    expect(trimmed!.keptTokens).toBeGreaterThan(150);
  });

  it("head keeps only the beginning, then the marker", () => {
    const { text } = trimText(logs, TrimPolicy.parse({ strategy: "head", maxTokens: 100 }));
    expect(text.startsWith("2026-11-23T10:00:00Z INFO request 0 ok")).toBe(true);
    expect(text).toMatch(/\n\[… \d+ tokens trimmed …\]$/);
    expect(text).not.toContain("request 399");
  });

  it("summary says what the result is instead of showing it", () => {
    const items = Array.from({ length: 50 }, (_, i) => ({ id: i, title: `Result ${i}`, url: `https://example.com/${i}`, body: "x".repeat(200) }));
    const array = trimText(JSON.stringify(items), TrimPolicy.parse({ strategy: "summary", maxTokens: 100 }));
    expect(array.text).toContain("type: JSON array");
    expect(array.text).toContain(`bytes: ${new TextEncoder().encode(JSON.stringify(items)).length}`);
    expect(array.text).toContain("items: 50");
    expect(array.text).toContain('keys of the first items: "id", "title", "url", "body"');
    expect(array.text).not.toContain("Result 1");
    const object = trimText(JSON.stringify({ results: items, total: 50, query: "cloud" }), TrimPolicy.parse({ strategy: "summary", maxTokens: 100 }));
    expect(object.text).toContain('keys (3): "results", "total", "query"');
    expect(object.text).toContain('"results" (50 items)');
    const text = trimText(logs, TrimPolicy.parse({ strategy: "summary", maxTokens: 100 }));
    expect(text.text).toContain("type: text");
    expect(text.text).toContain("lines: 400");
    expect(text.trimmed?.strategy).toBe("summary");
  });
});

describe("the fields strategy", () => {
  const doc = { answer: 42, "a/b": { "m~n": [1, 2, { deep: "x" }] }, debug: "x".repeat(4000), items: [{ title: "t0", body: "b".repeat(400) }, { title: "t1", body: "b" }] };
  const trim = (fields: string[], value: unknown = doc, maxTokens = 100) => trimText(JSON.stringify(value), TrimPolicy.parse({ strategy: "fields", fields, maxTokens }));

  it("keeps top-level keys and JSON Pointer paths at their place, as compact JSON", () => {
    expect(trim(["/answer"]).text).toBe('{"answer":42}');
    expect(JSON.parse(trim(["answer", "/items/1/title"]).text)).toEqual({ answer: 42, items: [null, { title: "t1" }] });
    expect(trim(["answer"]).trimmed).toMatchObject({ strategy: "fields" });
  });

  it("unescapes ~1 and ~0 in pointers", () => {
    expect(JSON.parse(trim(["/a~1b/m~0n/2/deep"]).text)).toEqual({ "a/b": { "m~n": [null, null, { deep: "x" }] } });
  });

  it("skips missing paths, out-of-range indexes and prototype names", () => {
    expect(trim(["/answer", "/missing/x", "/items/9/title", "/items/-", "/constructor", "toString", "/answer/deeper"]).text).toBe('{"answer":42}');
    expect(trim(["/nothing"]).text).toBe("{}");
  });

  it("applies top-level keys to each object of a top-level array", () => {
    const list = Array.from({ length: 30 }, (_, i) => ({ title: `t${i}`, body: "b".repeat(100) }));
    expect(JSON.parse(trim(["title"], list, 400).text)).toEqual(list.map(({ title }) => ({ title })));
  });

  it("falls back to head_tail for text that is not JSON, and cuts a projection still over budget", () => {
    const text = trimText(logs, TrimPolicy.parse({ strategy: "fields", fields: ["answer"], maxTokens: 100 }));
    expect(text.trimmed?.strategy).toBe("head_tail");
    expect(text.text).toMatch(MARKER);
    const big = trim(["debug"], doc, 50);
    expect(big.trimmed?.strategy).toBe("fields");
    expect(countTokens(big.text)).toBeLessThanOrEqual(50);
    expect(big.text.startsWith('{"debug":"xxx')).toBe(true);
  });
});

describe("trim policies", () => {
  it("default to head_tail at 800 tokens, and a tool's override replaces the default", () => {
    expect(resolveTrimPolicy("search")).toEqual({ strategy: "head_tail", maxTokens: 800 });
    const overrides = { lookup: { strategy: "fields" as const, fields: ["/answer"], maxTokens: 100 }, logs: { maxTokens: 2000 } };
    expect(resolveTrimPolicy("lookup", overrides)).toEqual({ strategy: "fields", fields: ["/answer"], maxTokens: 100 });
    expect(resolveTrimPolicy("logs", overrides)).toEqual({ strategy: "head_tail", maxTokens: 2000 });
    expect(resolveTrimPolicy("search", overrides)).toEqual({ strategy: "head_tail", maxTokens: 800 });
    expect(resolveTrimPolicy("constructor", overrides)).toEqual({ strategy: "head_tail", maxTokens: 800 });
  });

  it("refuse fields without a list, bad pointers and budgets below one token", () => {
    expect(TrimPolicy.safeParse({ strategy: "fields" }).success).toBe(false);
    expect(TrimPolicy.safeParse({ strategy: "fields", fields: ["/a~2"] }).success).toBe(false);
    expect(TrimPolicy.safeParse({ maxTokens: 0 }).success).toBe(false);
    expect(TrimPolicy.safeParse({ strategy: "everything" }).success).toBe(false);
  });
});

describe("JSON Pointer", () => {
  it("parses and formats RFC 6901 pointers", () => {
    expect(parseJsonPointer("")).toEqual([]);
    expect(parseJsonPointer("/")).toEqual([""]);
    expect(parseJsonPointer("/a~1b/m~0n/~01")).toEqual(["a/b", "m~n", "~1"]);
    expect(formatJsonPointer(["a/b", "m~n", "~1", 0])).toBe("/a~1b/m~0n/~01/0");
    expect(parseJsonPointer("a")).toBeNull();
    expect(parseJsonPointer("/a~")).toBeNull();
  });

  it("resolves own properties and array indexes only", () => {
    const doc = { a: [10, 20], "": "empty" };
    expect(lookup(doc, ["a", "1"])).toEqual({ found: true, value: 20 });
    expect(lookup(doc, [""])).toEqual({ found: true, value: "empty" });
    for (const tokens of [["a", "01"], ["a", "2"], ["a", "-"], ["toString"], ["a", "length"]]) expect(lookup(doc, tokens)).toMatchObject({ found: false });
  });
});
