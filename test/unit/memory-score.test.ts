import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Level } from "../../src/memory/keys";
import { packByBudget, rankMemories, recencyWeight, reinforcementWeight, type Scorable } from "../../src/memory/score";
import { termFrequencies } from "../../src/memory/text";

const NOW = Date.parse("2026-11-20T12:00:00Z");
const HOUR = 3_600_000;
let seq = 0;
function mem(text: string, extra: Partial<Scorable> = {}): Scorable & { text: string } {
  const terms = termFrequencies(text);
  seq += 1;
  return {
    id: `m${String(seq).padStart(4, "0")}`,
    level: "user",
    terms,
    length: [...terms.values()].reduce((a, b) => a + b, 0),
    createdAt: NOW - HOUR,
    reinforcement: 1,
    trust: "captured",
    text,
    ...extra,
  };
}
const ids = (xs: { item: { id: string } }[]) => xs.map((x) => x.item.id);

describe("relevance (BM25 over the candidate set)", () => {
  const corpus = [
    mem("The user deploys the web app with wrangler to Cloudflare"),
    mem("The user prefers pnpm over npm for the web app"),
    mem("The user drinks tea in the morning"),
    mem("The user lives in Lisbon and works remotely"),
    mem("The user keeps the web app docs in the notes app"),
  ];

  it("ranks memories that match more, and rarer, query terms first", () => {
    const { relevant } = rankMemories("how do I deploy the web app to cloudflare?", corpus, { now: NOW, threshold: 0 });
    expect(relevant[0]!.item).toBe(corpus[0]);
    // "web app" is in three memories, "cloudflare" and "deploy" in one: the one with the rare terms leads by far.
    expect(relevant[0]!.relevance).toBeGreaterThan(2 * relevant[1]!.relevance);
    expect(ids(relevant)).not.toContain(corpus[2]!.id);
  });

  it("leaves out memories that share no term, and reports the weak ones below the threshold", () => {
    const { relevant, belowThreshold } = rankMemories("what does the user drink in the morning in Lisbon", corpus, { now: NOW, threshold: 0.4 });
    expect(ids(relevant)).toEqual([corpus[2]!.id]);
    // Every memory mentions "user", a term with almost no weight here; "Lisbon" lifts one of them, not enough.
    expect(ids(belowThreshold)[0]).toBe(corpus[3]!.id);
    expect(belowThreshold.length).toBe(4);
  });

  it("prefers the shorter memory when the match is the same", () => {
    const short = mem("Tea is the user's favourite drink");
    const long = mem("Tea is the user's favourite drink, along with many other notes about breakfast, lunch, dinner and travel plans");
    const { relevant } = rankMemories("favourite drink", [long, short], { now: NOW });
    expect(ids(relevant)).toEqual([short.id, long.id]);
  });

  it("has nothing to say to an empty or stop-word query", () => {
    expect(rankMemories("what is the", corpus, { now: NOW }).relevant).toEqual([]);
    expect(rankMemories("", corpus, { now: NOW }).relevant).toEqual([]);
  });
});

describe("weights: recency, reinforcement, trust", () => {
  it("decays by age since the last reinforcement, halving every half-life", () => {
    expect(recencyWeight({ createdAt: NOW - 30 * 24 * HOUR }, NOW, 30 * 24)).toBeCloseTo(0.5, 10);
    expect(recencyWeight({ createdAt: NOW - 60 * 24 * HOUR }, NOW, 30 * 24)).toBeCloseTo(0.25, 10);
    expect(recencyWeight({ createdAt: NOW - 60 * 24 * HOUR, reinforcedAt: NOW }, NOW, 30 * 24)).toBe(1);
    const fresh = mem("The user deploys with wrangler", { createdAt: NOW - HOUR });
    const old = mem("The user deploys with wrangler", { createdAt: NOW - 90 * 24 * HOUR });
    expect(ids(rankMemories("deploy wrangler", [old, fresh], { now: NOW }).relevant)).toEqual([fresh.id, old.id]);
    // A short half-life makes the old one fall far behind; relevance (the gate) is unchanged.
    const short = rankMemories("deploy wrangler", [old, fresh], { now: NOW, halfLifeHours: 24 }).relevant;
    expect(short[1]!.score).toBeLessThan(1e-20);
    expect(short[1]!.relevance).toBeCloseTo(short[0]!.relevance, 10);
  });

  it("raises reinforced memories, log-scaled", () => {
    expect(reinforcementWeight(1)).toBe(1);
    expect(reinforcementWeight(10)).toBeGreaterThan(reinforcementWeight(2));
    expect(reinforcementWeight(100)).toBeLessThan(3);
    const once = mem("The user deploys with wrangler");
    const often = mem("The user deploys with wrangler", { reinforcement: 5 });
    expect(ids(rankMemories("wrangler", [once, often], { now: NOW }).relevant)).toEqual([often.id, once.id]);
  });

  it("ranks curated above captured, all else equal, and even when a little older", () => {
    const captured = mem("The user deploys with wrangler", { trust: "captured" });
    const curated = mem("The user deploys with wrangler", { trust: "curated", createdAt: NOW - 5 * 24 * HOUR });
    expect(ids(rankMemories("wrangler", [captured, curated], { now: NOW }).relevant)).toEqual([curated.id, captured.id]);
  });

  it("orders ties deterministically: the more specific level, then the id (property: any input order)", () => {
    const levels: Level[] = ["user", "task", "session", "user", "task"];
    const same = levels.map((level) => mem("The user deploys with wrangler", { level }));
    const expected = ids(rankMemories("wrangler", same, { now: NOW }).relevant);
    expect(expected.map((id) => same.find((m) => m.id === id)!.level)).toEqual(["task", "task", "session", "user", "user"]);
    fc.assert(
      fc.property(fc.shuffledSubarray(same, { minLength: same.length, maxLength: same.length }), (shuffled) => {
        expect(ids(rankMemories("wrangler", shuffled, { now: NOW }).relevant)).toEqual(expected);
      }),
    );
  });
});

describe("packing into the budget", () => {
  it("takes greedily by rank, skips what does not fit and keeps trying smaller ones", () => {
    const items = [{ id: "a", t: 50 }, { id: "b", t: 60 }, { id: "c", t: 20 }, { id: "d", t: 40 }];
    const { selected, skipped, tokens } = packByBudget(items, 100, (x) => x.t, 10);
    expect(selected.map((x) => x.id)).toEqual(["a", "c"]);
    expect(skipped.map((x) => x.id)).toEqual(["b", "d"]);
    expect(tokens).toBe(80);
  });

  it("never exceeds the budget (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(300)), fc.nat(1000), fc.nat(50), (costs, budget, overhead) => {
        const { selected, tokens } = packByBudget(costs, budget, (c) => c, overhead);
        expect(tokens).toBeLessThanOrEqual(budget);
        expect(tokens).toBe(selected.length === 0 ? 0 : overhead + selected.reduce((a, b) => a + b, 0));
      }),
    );
  });
});
