import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chainOf, idUnder, levelPrefix, memoryKey, namespaceFor, newMemoryId, type Namespace } from "../../src/memory/keys";
import { MEMORY_LIMITS } from "../../src/memory/limits";
import { buildRecord, decode, encode } from "../../src/memory/record";
import { fenceText } from "../../src/memory/fence";

const owner = { tenant: "acme", user: "alice" };

describe("memory namespaces in KV", () => {
  it("give each level its own prefix under the tenant and user", () => {
    expect(levelPrefix({ ...owner, level: "user" })).toBe("mem/acme/alice/~/");
    expect(levelPrefix({ ...owner, level: "session", session: "c1" })).toBe("mem/acme/alice/s/c1/~/");
    expect(levelPrefix({ ...owner, level: "task", session: "c1", task: "t:1" })).toBe("mem/acme/alice/s/c1/t/t:1/~/");
  });

  it("make a prefix listing return exactly one level, whatever the ids (property)", () => {
    // Ids that look like structure, and pairs of namespaces that share most of their path, so near misses are common.
    const id = fc.oneof(fc.constantFrom("a", "s", "t", "~", "a/b", "a/~", "s/a", "t/a/~", "%2F", "%7E", ".", "..", "a:b"), fc.string({ minLength: 1, maxLength: 6 }));
    const level = fc.constantFrom("user" as const, "session" as const, "task" as const);
    const fields = fc.record({ tenant: id, user: id, session: id, task: id });
    const ns = (level: Namespace["level"], f: { tenant: string; user: string; session: string; task: string }): Namespace =>
      level === "user" ? { tenant: f.tenant, user: f.user, level } : level === "session" ? { tenant: f.tenant, user: f.user, level, session: f.session } : { ...f, level };
    const pair = fc.tuple(level, level, fields, fields, fc.array(fc.boolean(), { minLength: 4, maxLength: 4 })).map(([la, lb, fa, fb, keep]) => {
      const mixed = { tenant: keep[0] ? fa.tenant : fb.tenant, user: keep[1] ? fa.user : fb.user, session: keep[2] ? fa.session : fb.session, task: keep[3] ? fa.task : fb.task };
      return [ns(la, fa), ns(lb, mixed)] as const;
    });
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const key = memoryKey(b, newMemoryId(Date.now()));
        const same = levelPrefix(a) === levelPrefix(b) && a.level === b.level && a.tenant === b.tenant && a.user === b.user && a.session === b.session && a.task === b.task;
        expect(idUnder(levelPrefix(a), key) !== null).toBe(same);
        expect(key.startsWith(levelPrefix(a))).toBe(same);
      }),
      { numRuns: 5000 },
    );
  });

  it("escape ids that try to climb or forge a level", () => {
    expect(levelPrefix({ ...owner, level: "session", session: "x/~/../t" })).toBe("mem/acme/alice/s/x%2F%7E%2F..%2Ft/~/");
    expect(() => levelPrefix({ ...owner, level: "session", session: "" })).toThrow();
  });

  it("read a task's chain as task, session, user and nothing else", () => {
    expect(chainOf({ ...owner, session: "s", task: "t" }).map(levelPrefix)).toEqual(["mem/acme/alice/s/s/t/t/~/", "mem/acme/alice/s/s/~/", "mem/acme/alice/~/"]);
    expect(chainOf({ ...owner, session: "s" }).map((n) => n.level)).toEqual(["session", "user"]);
    expect(chainOf(owner).map((n) => n.level)).toEqual(["user"]);
    expect(chainOf({ ...owner, task: "t" }).map((n) => n.level)).toEqual(["user"]);
  });

  it("say which ids a level needs", () => {
    expect(namespaceFor(owner, "user", { session: "s" })).toMatchObject({ ok: false });
    expect(namespaceFor(owner, "session", {})).toMatchObject({ ok: false });
    expect(namespaceFor(owner, "session", { session: "s", task: "t" })).toMatchObject({ ok: false });
    expect(namespaceFor(owner, "task", { session: "s" })).toMatchObject({ ok: false });
    expect(namespaceFor(owner, "task", { session: "s", task: "t" })).toEqual({ ok: true, value: { ...owner, level: "task", session: "s", task: "t" } });
  });

  it("keep the longest keys within KV's 512 bytes", () => {
    const long = "x".repeat(MEMORY_LIMITS.scopeIdChars);
    const name = "n".repeat(64);
    const key = memoryKey({ tenant: name, user: name, level: "task", session: long, task: long }, newMemoryId(Date.now()));
    expect(new TextEncoder().encode(key).length).toBeLessThanOrEqual(512);
  });

  it("make time-ordered ids", () => {
    const now = Date.now();
    const burst = Array.from({ length: 50 }, () => newMemoryId(now));
    expect([...burst].sort()).toEqual(burst);
    expect(new Set(burst).size).toBe(50);
    expect(newMemoryId(Date.now())).toMatch(/^[0-9a-z]{9}[0-9a-f]{12}$/);
  });
});

describe("memory metadata", () => {
  const record = (text: string) => buildRecord({ id: "x", text, source: "notes:assistant", trust: "curated", now: Date.parse("2026-11-20T00:00:00Z") }, fenceText);

  it("round-trips the scoring fields through list() metadata", () => {
    const { metadata, record: stored } = encode(record("The user prefers pnpm, and pnpm workspaces, for JavaScript projects."));
    expect(stored.terms).toBeUndefined();
    const entry = decode("x", "k", "user", JSON.parse(JSON.stringify(metadata)))!;
    expect(entry).toMatchObject({ trust: "curated", reinforcement: 1, source: "notes:assistant", partial: false, createdAt: Date.parse("2026-11-20T00:00:00Z") });
    expect(entry.terms.get("pnpm")).toBe(2);
    expect(entry.terms.get("project")).toBe(1);
    expect(entry.length).toBe(7);
    expect(entry.sketch).toHaveLength(16);
    expect(decode("x", "k", "user", { v: 2 })).toBeNull();
    for (const broken of [null, "x", { ...metadata, k: 0 }, { ...metadata, u: "x" }, { ...metadata, t: 3 }, { ...metadata, h: "1.2" }, { ...metadata, c: "now" }, { ...metadata, x: 2 }]) {
      expect(decode("x", "k", "user", broken), JSON.stringify(broken)).toBeNull();
    }
  });

  it("stays within 1,024 bytes for any text up to the limit, keeping all terms in the record when they do not fit (property)", () => {
    const word = fc.oneof(fc.stringMatching(/^[a-z]{2,12}$/), fc.constantFrom("数据库", "配置文件", "ünïcödé", "ελληνικά", "😀emoji", "x".repeat(40)));
    const text = fc.array(word, { minLength: 1, maxLength: 300 }).map((ws) => ws.join(" ").slice(0, MEMORY_LIMITS.textChars));
    fc.assert(
      fc.property(text, (t) => {
        const { metadata, record: stored } = encode(record(t));
        expect(new TextEncoder().encode(JSON.stringify(metadata)).length).toBeLessThanOrEqual(1024);
        const entry = decode("x", "k", "user", metadata)!;
        if (entry.partial) expect(Object.keys(stored.terms!).length).toBeGreaterThan(entry.terms.size);
        else expect(stored.terms).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });
});
