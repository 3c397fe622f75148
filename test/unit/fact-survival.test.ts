/**
 * Issue 10: the user's facts survive compaction. Sessions from test/fixtures/fact-corpus.ts go through compaction
 * as the runtime runs it (the real planner and the real default summariser, turn by turn, in windows of 4k, 8k and
 * 16k with 1,024 tokens reserved for the answer), and the last turn's model input (the summary and the kept tail)
 * is judged: the share of planted facts the model can still read, every correction, and no superseded value read
 * without its correction. The figures it must reach are SURVIVAL's; `npx tsx bench/fact-survival.ts` prints them.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { redact } from "../../src/protect";
import {
  CORPUS,
  FACT_KINDS,
  SURVIVAL,
  TEMPLATES,
  WINDOWS,
  corpusSessions,
  judge,
  measureWindow,
  mergeVerdicts,
  readable,
  session,
  simulateSession,
  supersededAlone,
  windowPolicy,
  type Fact,
  type Verdict,
} from "../fixtures/fact-corpus";

/** The corpus sessions' seed: fixed, so the yardstick is the same on every run (the property draws its own). */
const CORPUS_SESSIONS_SEED = 7_2026;

const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)} %`;
const describeFact = (f: Fact) => `  ${f.id} (${f.template}) ${JSON.stringify(f.statement)} → ${JSON.stringify(f.probes)}`;

/** What went wrong, for the failure message: the figures, then every fact lost or read superseded. */
function report(v: Verdict, extra = ""): string {
  const kinds = FACT_KINDS.map((k) => `${k} ${v.byKind[k].readable}/${v.byKind[k].facts}`).join(", ");
  return [
    `${v.readable}/${v.facts} facts readable (${pct(v.readable, v.facts)}): ${kinds}${extra}`,
    ...(v.lost.length ? ["lost:", ...v.lost.map(describeFact)] : []),
    ...(v.supersededAlone.length ? ["superseded value read without its correction:", ...v.supersededAlone.map((f) => `${describeFact(f)}; old ${JSON.stringify(f.superseded)}`)] : []),
  ].join("\n");
}

function expectSurvival(v: Verdict, extra: string): void {
  const message = report(v, extra);
  expect(v.readable / v.facts, message).toBeGreaterThanOrEqual(SURVIVAL.overall);
  expect(v.byKind.correction.readable, message).toBeGreaterThanOrEqual(Math.ceil(SURVIVAL.corrections * v.byKind.correction.facts));
  expect(v.supersededAlone.length, message).toBeLessThanOrEqual(SURVIVAL.supersededAlone);
}

describe("the fact corpus", () => {
  it("has at least 240 facts of every kind, from at least 15 phrasings a kind and 25 for corrections, in five languages", () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(240);
    expect(new Set(CORPUS.map((f) => f.id)).size).toBe(CORPUS.length);
    for (const kind of FACT_KINDS) {
      const templates = new Set(CORPUS.filter((f) => f.kind === kind).map((f) => f.template));
      expect(templates.size, kind).toBeGreaterThanOrEqual(kind === "correction" ? 25 : 15);
      expect(templates.size, kind).toBe(Object.keys(TEMPLATES[kind]).length);
    }
    expect(new Set(CORPUS.map((f) => f.lang))).toEqual(new Set(["en", "fr", "de", "es", "ja"]));
    for (const f of CORPUS) {
      expect(f.probes.length, f.id).toBeGreaterThan(0);
      expect(f.kind === "correction", f.id).toBe(f.original !== undefined && f.superseded !== undefined);
    }
  });

  it("reads each fact in its own statement, all probes on one line; a correction's original reads as the old value, never as the correction", () => {
    for (const f of CORPUS) {
      expect(readable([f.statement], f), describeFact(f)).toBe(true);
      if (f.original === undefined) continue;
      expect(readable([f.original], { probes: f.superseded! }), `${f.id}: ${f.original}`).toBe(true);
      expect(readable([f.original], f), `${f.id}: ${f.original}`).toBe(false);
      expect(supersededAlone([f.original], f), f.id).toBe(true);
      expect(supersededAlone([f.original, f.statement], f), f.id).toBe(false);
    }
  });

  it("reads no fact anywhere else: not in another fact's words, nor in filler, replies and tool chatter", () => {
    const found: string[] = [];
    const texts = CORPUS.map((f) => [[f.statement], ...(f.original ? [[f.original]] : [])]);
    for (const a of CORPUS) {
      CORPUS.forEach((b, i) => {
        if (a === b) return;
        for (const t of texts[i]!) {
          if (readable(t, a)) found.push(`${a.id} reads in ${b.id}: ${t[0]}`);
          if (a.superseded && readable(t, { probes: a.superseded })) found.push(`${a.id}'s old value reads in ${b.id}: ${t[0]}`);
        }
      });
    }
    // Everything a session says besides the planted statements and originals (two long sessions: the filler pools are the same in all).
    const byId = new Map(CORPUS.map((f) => [f.id, f]));
    for (const s of corpusSessions(16_384, CORPUS_SESSIONS_SEED).slice(0, 2)) {
      const chatter = s.turns.flatMap((t) => {
        let user = t.user;
        for (const p of t.planted) user = user.replace(p.as === "statement" ? byId.get(p.id)!.statement : byId.get(p.id)!.original!, "\n");
        return [user, t.reply, ...(t.tools ? [...t.tools.calls.map((c) => c.function.arguments), ...t.tools.results.map((r) => r.content)] : [])];
      });
      for (const f of CORPUS) {
        if (readable(chatter, f)) found.push(`${f.id} reads in session ${s.seed}'s chatter`);
        if (f.superseded && readable(chatter, { probes: f.superseded })) found.push(`${f.id}'s old value reads in session ${s.seed}'s chatter`);
      }
    }
    expect(found).toEqual([]);
  });

  it("holds nothing the runtime would redact: the user's words reach the summariser as typed", () => {
    for (const f of CORPUS) {
      expect(redact(f.statement).text, f.id).toBe(f.statement);
      if (f.original) expect(redact(f.original).text, f.id).toBe(f.original);
    }
  });

  it("plants every fact once, each original before its correction, and ends on a turn that plants nothing", () => {
    const s = session(42, { turns: 60, facts: 30 });
    expect(s.turns).toHaveLength(60);
    expect(s.facts).toHaveLength(30);
    expect(s.turns.at(-1)!.planted).toEqual([]);
    for (const f of s.facts) {
      const at = s.turns.findIndex((t) => t.planted.some((p) => p.id === f.id && p.as === "statement"));
      expect(at, f.id).toBeGreaterThan(0);
      expect(s.turns[at]!.user).toContain(f.statement);
      if (f.original === undefined) continue;
      const before = s.turns.findIndex((t) => t.planted.some((p) => p.id === f.id && p.as === "original"));
      expect(before, f.id).toBeGreaterThanOrEqual(0);
      expect(before, f.id).toBeLessThan(at);
    }
    // Filler and tool chatter around the facts: most turns call tools, with results of a few hundred tokens.
    expect(s.turns.filter((t) => t.tools).length).toBeGreaterThan(20);
    expect(s.turns.filter((t) => !t.planted.length).length).toBeGreaterThan(15);
    expect(session(42, { turns: 60, facts: 30 })).toEqual(s);
  });
});

describe("the judge", () => {
  const fact: Fact = { id: "t", kind: "correction", template: "x", lang: "en", statement: "", probes: ["Heron", "Thursday"], original: "", superseded: ["Heron", "Tuesday"] };
  it("reads a fact only with all its probes on one line, case and whitespace aside", () => {
    expect(readable(["- [#4] the HERON\u00a0release goes out  thursday"], fact)).toBe(true);
    expect(readable(["The Heron release.\nIt goes out Thursday."], fact)).toBe(false);
    expect(readable(["Heron", "Thursday"], fact)).toBe(false);
    expect(readable(["The Heron release goes out Thurs-day."], fact)).toBe(false);
    expect(readable(["Valsdottir"], { probes: ["Valsdóttir"] })).toBe(false);
    expect(readable(["4 200 €"], { probes: ["4\u202f200\u00a0€"] })).toBe(true);
  });
  it("flags an old value read without its correction, and only then", () => {
    expect(supersededAlone(["Heron goes out Tuesday."], fact)).toBe(true);
    expect(supersededAlone(["Heron goes out Tuesday.", "No wait, Heron goes out Thursday, not Tuesday."], fact)).toBe(false);
    expect(supersededAlone(["Heron goes out on a weekday."], fact)).toBe(false);
  });
});

describe("facts survive compaction (issue 10)", () => {
  for (const window of WINDOWS) {
    it(`in a ${window}-token window, over the whole corpus: ≥ ${SURVIVAL.overall * 100} % readable, every correction, no old value alone`, async () => {
      const result = await measureWindow(window, corpusSessions(window, CORPUS_SESSIONS_SEED));
      const extra = `; ${result.sessions} sessions, summaries per session ≥ ${result.summaries.min} (mean ${result.summaries.mean.toFixed(1)})`;
      expect(result.summaries.min, `summarising compactions per session${extra}`).toBeGreaterThanOrEqual(SURVIVAL.compactionsPerSession);
      expect(result.overBudget, "summaries longer than their budget").toBe(0);
      expectSurvival(result.verdict, extra);
    }, 180_000);
  }

  it("in random sessions (property): the same figures, over one session in each window", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 31 - 1 }), async (seed) => {
        const verdicts: Verdict[] = [];
        for (const window of WINDOWS) {
          const s = session(seed + window, SURVIVAL.session[window]);
          const sim = await simulateSession(s, windowPolicy(window));
          const v = judge(sim.finalTexts, s.facts);
          const extra = `; session seed ${s.seed}, window ${window}, ${sim.summaries} summaries`;
          expect(sim.summaries, extra).toBeGreaterThanOrEqual(SURVIVAL.compactionsPerSession);
          expect(sim.overBudget, "summaries longer than their budget").toBe(0);
          const message = report(v, extra);
          expect(v.byKind.correction.readable, message).toBeGreaterThanOrEqual(Math.ceil(SURVIVAL.corrections * v.byKind.correction.facts));
          expect(v.supersededAlone.length, message).toBeLessThanOrEqual(SURVIVAL.supersededAlone);
          verdicts.push(v);
        }
        // A share is measured over many facts: a session plants 16 to 64, so the three windows' are taken together.
        expectSurvival(mergeVerdicts(verdicts), `; sessions seeded ${seed} + the window`);
      }),
      // A seed shrinks to nothing meaningful: report the first failing session as it is.
      { numRuns: 3, endOnFailure: true },
    );
  }, 180_000);
});
