import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { gateWrite, isNearDuplicate, similarity, type RefusalReason, type RefusalSignal } from "../../src/memory/write-gate";
import { MEMORY_LIMITS } from "../../src/memory/limits";

const refusalOf = (text: string) => {
  const r = gateWrite(text);
  return r.ok ? null : [r.refusal.reason, r.refusal.signal];
};

describe("the memory write gate", () => {
  it("accepts facts stated as sentences, in any script", () => {
    for (const text of [
      "The user prefers pnpm over npm for JavaScript projects.",
      "Prefers dark mode in every editor",
      "Timezone: Europe/Berlin",
      "Always answer in French when the user writes in French.",
      "The billing API lives at https://billing.example.com/v2/invoices and needs OAuth.",
      "用户喜欢使用深色模式编辑笔记",
      "Use `const` rather than `let` in TypeScript code where possible.",
      "The user bakes sourdough bread on weekends with rye flour.",
    ]) {
      const r = gateWrite(text);
      expect(r, text).toMatchObject({ ok: true, text });
    }
  });

  it.each<[string, RefusalReason, RefusalSignal]>([
    ["ok thanks", "fragment", "too_short"],
    ["Really likes pnpm", "fragment", "few_words"],
    ["pnpm workspace monorepo setup", "fragment", "no_verb"],
    ['{"name": "web", "dependencies": {"react": "19.0.0"}}', "raw_dump", "json"],
    ['The config says "name": "web", "private": true, "version": 3 for now', "raw_dump", "json"],
    ["function add(a, b) {\n  return a + b;\n}", "raw_dump", "code"],
    ["const total = items.reduce((a, b) => a + b, 0); if (total > 3) { run(); }", "raw_dump", "code"],
    ["2026-01-01T10:00:00Z ERROR connection refused\n2026-01-01T10:00:01Z INFO retrying in 5s", "raw_dump", "log"],
    ["Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>", "raw_dump", "log"],
    ["payload 3q2+7wAAAAEAAAABAAAAAQAAAAEAAAABAAAAAQAAAAEAAAAB3q2+7wAAAAEAAAAB is stored", "raw_dump", "encoded"],
    [`The user wrote ${"abcdefghij".repeat(10)} somewhere today`, "raw_dump", "long_line"],
    ["@@ ## $$ %% ^^ && ** ~~ || <> the user likes {} [] ==", "raw_dump", "symbols"],
    ["the and of it is was they were", "low_information", "stopwords"],
    ["great great great great great great great great project", "low_information", "repetitive"],
    ["Nooooooooooooo the deploy failed again today", "low_information", "repetitive"],
    ["Let me check if this function has SQL injection...", "low_information", "reasoning"],
    ["Hmm, maybe the parameter is not sanitized after all", "low_information", "reasoning"],
  ])("refuses %j as %s (%s), with a detail for a person", (text, reason, signal) => {
    const r = gateWrite(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.refusal).toMatchObject({ reason, signal });
    expect(r.refusal.detail.length).toBeGreaterThan(10);
  });

  it("refuses text beyond the limit", () => {
    expect(refusalOf(`The user prefers ${"tea ".repeat(MEMORY_LIMITS.textChars)}`)).toEqual(["too_long", "too_long"]);
  });

  it("redacts secrets first and keeps only the redacted text", () => {
    const token = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB";
    const r = gateWrite(`The deploy bot for the billing service authenticates to GitHub with ${token} every night.`);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.text).not.toContain(token);
    expect(r.text).toMatch(/\[REDACTED:[a-z0-9-]+\]/);
    expect(r.redactions.reduce((n, x) => n + x.count, 0)).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(r)).not.toContain(token);
  });

  it("refuses text that is mostly secrets", () => {
    expect(refusalOf("key AKIAIOSFODNN7EXAMPLE ghp_1234567890abcdefghijklmnopqrstuvwxyzAB")).toEqual(["mostly_secrets", "secrets"]);
  });

  it("never throws, and never lets a known secret through (property)", () => {
    const token = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB";
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.boolean(), (text, withSecret) => {
        const input = withSecret ? `The deploy bot uses ${token} and ${text}` : text;
        const r = gateWrite(input);
        if (r.ok) expect(r.text).not.toContain(token);
      }),
      { numRuns: 300 },
    );
  });
});

describe("near-duplicates", () => {
  it("are the same words in the same order, whatever the case, punctuation or inflection", () => {
    const a = "The user prefers pnpm over npm for JavaScript projects.";
    expect(similarity(a, "the user prefers PNPM over npm, for javascript projects")).toBe(1);
    expect(isNearDuplicate(a, "The user preferred pnpm over npm for JavaScript projects")).toBe(true);
    expect(isNearDuplicate("The user likes the Berlin office and visits it on Tuesdays and Thursdays every week", "The user likes the Berlin office and visits it on Tuesdays and Thursdays every single week")).toBe(true);
  });

  it("are not the same words in another order or a different fact", () => {
    expect(isNearDuplicate("I prefer tabs over spaces in Go code", "I prefer spaces over tabs in Go code")).toBe(false);
    expect(isNearDuplicate("The user prefers pnpm over npm for JavaScript projects.", "The user prefers pnpm over npm for all JavaScript projects.")).toBe(false);
    expect(similarity("The user lives in Paris", "The user works in Paris")).toBeLessThan(0.8);
  });
});
