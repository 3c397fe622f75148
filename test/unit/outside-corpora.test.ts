/**
 * Issue 19, measured on corpora written by people who never read src/history/ (test/fixtures/outside-corpora.ts):
 * A, written before the ranking changed and used while changing it; C, ordinary chat written once the first ranking
 * was frozen, run once as held out, then used to tune the second; B, the user's messages documentation prose full of
 * names, versions and numbers, never tuned on; D, ordinary chat written while the last ranking was made, run once
 * after it. `npm run bench:corpora` prints the figures these hold the runtime to.
 *
 * Survival is short of the issue's 90 % on B, C and D: FLOORS are what the ranking reaches, so a change that loses
 * ground fails here, and docs/figures.md reports the gap. Issue 20 made the token count an upper bound on o200k
 * (docs/tokens.md): the digest's budget now holds for the model, and fits 1–6 points fewer facts than the old
 * estimate, which under-counted; the floors are the figures measured then, and A's a-correction-039 at 8k became an
 * old value read without its correction (its correction no longer fits beside it). Every session compacts at least 30 times, and no
 * superseded value is read without its correction on any corpus. Issue 19's third pass (a sentence whose
 * canonical form the user keeps writing is routine, and weighs that much less) raised A, C and D by 1–5 points.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { indexedText } from "../../src/history/search";
import { redact } from "../../src/protect";
import { OUTSIDE_CORPORA, WINDOWS, measureSurvival, shows, storedMessages, type OutsideCorpus, type Window } from "../fixtures/outside-corpora";
import { measureSearch } from "../fixtures/outside-search";
import { memoryConversation } from "./support/node-sql";

/**
 * What each corpus's facts reach, readable at the end, by window; found by search_history in its top 3; and the
 * corrections known to be outlived by the value they replace. D's four ("API level 24" … "needs to be API level 26",
 * "#ops-alerts" … "#inc-war-room") were fixed at issue 19's third pass: a bare number beside a shared subject is a
 * value, a channel or handle an identifier. A first version of the number rule (any new number) left one on B and one
 * more on E; a bare number now counts only in the same place of the two sentences' canonical forms ("level #"), and
 * neither is left. The last ones (E, F, G) went at this stop's fourth pass: a number written onto its unit ("3.2p",
 * "2.5GB") is a number, not a path, an amount is a number in the canonical form, and a new number in the same place
 * of the same words is an update even where a third sentence shares the subject ("Agency HCA rate is £24.10 an hour" →
 * "the agency HCA rate has gone up to £25.35 an hour", beside "the HCA rota"). Any outlived correction is a regression.
 * Then a summary's share grew from a quarter of the compaction target to a third (and `summaryTokens` from 2,000 to
 * 4,000): more of the user's words fit, and two corrections the subject rules never linked, which the smaller budget
 * had dropped with their originals, became visible as outlived: F's "Meeting Room 2" … "the old library on the
 * ground floor" (the new value has no entity's shape) and G's "30-day terms" … "14-day payment terms" (the two share no
 * subject word: "Verdant" is in too many sentences, "terms" too common). At stop 34 a routine became a form alike, not
 * only the same (half the weight of its word pairs in common, each pair weighing its rarity): every floor moved to the
 * figure then measured (docs/history.md). G's and M's outlived corrections went; H's and J's below are pairs the subject rules never link ("odd/even days" … "two
 * fixed days per address", the new value of no entity's shape; "Valley Life" held by four sentences), which the
 * budget now keeps only the old sentence of.
 */
const FLOORS: Record<OutsideCorpus["name"], { readable: Record<Window, number>; searchTop3: number; outlived?: Partial<Record<Window, string[]>>; minSummaries?: Record<Window, number> }> = {
  A: { readable: { 4096: 0.96, 8192: 0.98, 16384: 1 }, searchTop3: 0.99 },
  // B gave up 1–3 points at 8k and 16k to stop 34's alike forms (52.2 / 61.3 / 87.8 % before).
  B: { readable: { 4096: 0.52, 8192: 0.6, 16384: 0.85 }, searchTop3: 0.99 },
  C: { readable: { 4096: 0.88, 8192: 0.94, 16384: 0.99 }, searchTop3: 0.97 },
  D: { readable: { 4096: 0.9, 8192: 0.96, 16384: 1 }, searchTop3: 0.94 },
  // E, run once after the third pass (before it: 60.6 / 71.3 / 78.1 %; at its one run 59.1 / 73.1 / 80.6 %, three
  // outlived corrections); then the number rule was narrowed (from D, not E): 60.6 / 72.5 / 80.6 %. Its messages
  // are shorter: its sessions compact 28, 23 and 17 times at least, not 30.
  E: {
    readable: { 4096: 0.68, 8192: 0.8, 16384: 0.95 },
    searchTop3: 0.94,
    minSummaries: { 4096: 28, 8192: 21, 16384: 16 },
  },
  // F (a clinic practice manager's sessions, long messages), run once after the third pass (at 01abb65: 40.0 / 55.3 /
  // 63.4 %, outlived 2 / 1 / 1; at its run 47.5 / 60.9 / 68.4 %, 3 / 2 / 1). Then, from E's and F's outlived
  // corrections, two or more terms no other sentence holds together name a subject too: 47.5 / 60.9 / 69.1 %. Its
  // remaining ones went at the fourth pass (a new number in the same place of the same words): 47.5 / 61.3 / 68.8 %.
  // Stop 32 (tables, transcripts and long quotations read as pasted, and kept so across digests; routines):
  // 64.1 / 75.6 / 89.7 %.
  F: {
    readable: { 4096: 0.64, 8192: 0.75, 16384: 0.9 },
    searchTop3: 0.93,
    outlived: { 8192: ["f-correction-038"] },
  },
  // G (an event-planning agency's season, by a seventh helper), run once after this stop's last digest change (at
  // 01abb65: 55.3 / 59.1 / 72.5 %, outlived 0 / 1 / 2). Its messages are short: sessions compact 13–22 times.
  // Stop 32 (tables, transcripts and long quotations read as pasted, and kept so across digests): 62.2 / 70.9 / 92.8 %.
  G: {
    readable: { 4096: 0.64, 8192: 0.73, 16384: 0.93 },
    searchTop3: 0.97,
    minSummaries: { 4096: 22, 8192: 15, 16384: 12 },
  },
  // H (a municipal water utility's engineering team, by an eighth helper), written while the fourth pass was made and
  // run once after it, held out. Its questions name each subject in other words ("pipe bursts" for "watermain
  // breaks", "the smart meter trial" for "the AMI pilot"), which a lexical search finds far less often.
  // Stop 32 (tables, transcripts and long quotations read as pasted, and kept so across digests; routines):
  // 52.8 / 71.9 / 91.9 %.
  H: {
    readable: { 4096: 0.6, 8192: 0.76, 16384: 0.95 },
    searchTop3: 0.72,
    outlived: { 8192: ["h-correction-038"] },
    minSummaries: { 4096: 23, 8192: 16, 16384: 11 },
  },
  // I (a ski resort group's operations director, by a ninth helper), written while search_history's answer-shape
  // ranking was made and run once after it, held out: readable 37.8 / 59.1 / 67.2 % (the digest unchanged since
  // edefeba), search 98.4 % in the top 3 (97.2 % at edefeba). Its sessions compact 16–26 times. Then, from its and F's
  // losses (so it is no longer held out for the digest), pasted logs read as pasted and every update of a sentence
  // ordered after it: 43.1 / 59.7 / 67.2 % (F 47.2 / 61.6 / 70.3 %).
  I: {
    readable: { 4096: 0.67, 8192: 0.78, 16384: 0.95 },
    searchTop3: 0.98,
    minSummaries: { 4096: 26, 8192: 20, 16384: 16 },
  },
  // J (a regional newspaper's newsroom and print centre, by a tenth helper), written while the summary's share grew to
  // a third of the target and run once after it, held out: readable 36.9 / 58.1 / 79.7 % (27.5 / 51.3 / 63.1 % with a
  // quarter, at 63f623e, one old value read alone at 16k), search 99.1 % in the top 3. Its sessions compact 14–25 times.
  J: {
    readable: { 4096: 0.52, 8192: 0.71, 16384: 0.92 },
    searchTop3: 0.99,
    outlived: { 4096: ["j-cor-33"] },
    minSummaries: { 4096: 25, 8192: 19, 16384: 14 },
  },
  // K (a chamber orchestra's touring manager, by an eleventh helper), written while stop 32's digest changes were
  // made and run once after them, held out: readable 33.1 / 51.3 / 75.6 % (27.8 / 49.1 / 75.3 % at the stop's start),
  // search 99.7 % in the top 3. Then its losses looked at (transcripts, quotations to translate): 35.3 / 55.0 / 78.4 %. A URL's correction the subject rules never link ("the players' tour info page") is read
  // without it at 16k, before the change too. Its sessions compact 19–30 times.
  K: {
    readable: { 4096: 0.37, 8192: 0.55, 16384: 0.79 },
    searchTop3: 0.99,
    outlived: { 16384: ["k-cor-30"] },
    minSummaries: { 4096: 30, 8192: 23, 16384: 19 },
  },
  // L (a construction site's project manager, by a twelfth helper), written after stop 32's digest changes and run once,
  // held out: readable 32.2 / 50.9 / 66.6 % (29.4 / 44.1 / 55.6 % at the stop's start, one old value read alone at 16k
  // then), search 99.4 % in the top 3. Its sessions compact 22–32 times. Its losses were looked at in stop 33 (a rule
  // tried from them was dropped), so it is tuned on since.
  L: {
    readable: { 4096: 0.34, 8192: 0.53, 16384: 0.69 },
    searchTop3: 0.99,
    minSummaries: { 4096: 32, 8192: 27, 16384: 22 },
  },
  // M (a hospital's theatre scheduling manager, by a thirteenth helper), written blind during stop 33 and never tuned
  // on: readable 41.9 / 55.3 / 74.1 %, search 99.7 % in the top 3, a Teams link's correction the subject rules do not
  // link read without it at 4k and 8k; 41.6 / 56.9 / 76.3 % and none outlived after stop 34's change. Its sessions
  // compact 20–31 times.
  M: {
    readable: { 4096: 0.41, 8192: 0.56, 16384: 0.76 },
    searchTop3: 0.99,
    minSummaries: { 4096: 31, 8192: 25, 16384: 20 },
  },
  // N (a veterinary hospital group's head of operations, by a fourteenth helper), written blind during stop 34 and never
  // tuned on: readable 46.9 / 66.9 / 80.6 % at the stop's start, 49.4 / 67.8 / 84.1 % after its one change (two
  // reviews' fixes included). Its sessions compact 14–26 times.
  N: {
    readable: { 4096: 0.49, 8192: 0.67, 16384: 0.84 },
    searchTop3: 0.99,
    minSummaries: { 4096: 26, 8192: 17, 16384: 14 },
  },
};

describe.each(OUTSIDE_CORPORA.map((c) => [c.name, c] as const))("corpus %s", (name, corpus) => {
  it("holds at least 320 facts of nine kinds, each planted once a window, with a query that names no value", () => {
    expect(corpus.facts.length).toBeGreaterThanOrEqual(320);
    for (const window of WINDOWS) {
      const planted = corpus.sessions(window).flatMap((s) => s.facts.map((f) => f.id));
      expect(new Set(planted).size).toBe(corpus.facts.length);
      expect(planted).toHaveLength(corpus.facts.length);
    }
    for (const fact of corpus.facts) for (const probe of fact.probes.slice(1)) expect(fact.query.toLowerCase(), fact.id).not.toContain(probe.toLowerCase());
  });

  it.each(WINDOWS.map((w) => [w]))(`in a %i-token window: the facts readable at the end reach ${name}'s floor, no old value is read alone but the known ones, every session compacts 30 times`, async (window) => {
    const v = await measureSurvival(corpus, window);
    const lost = v.lost.map((f) => `  ${f.id} ${JSON.stringify(f.statement)}`).join("\n");
    expect(v.readable / v.facts, `${v.readable}/${v.facts} readable; lost:\n${lost}`).toBeGreaterThanOrEqual(FLOORS[name].readable[window]);
    expect(v.supersededAlone.map((f) => f.id).sort()).toEqual([...(FLOORS[name].outlived?.[window] ?? [])].sort());
    expect(v.minSummaries).toBeGreaterThanOrEqual(FLOORS[name].minSummaries?.[window] ?? 30);
    // Hundreds of turns compacted in plain Node: 2–4 s alone, more on a loaded machine.
  }, 30_000);

  it("search_history finds each fact in its top 3 by a query naming its subject, the value in the excerpt", async () => {
    const s = await measureSearch(corpus);
    expect(s.at3 / s.facts, s.missed.map((f) => `${f.id} ${JSON.stringify(f.query)}`).join("\n")).toBeGreaterThanOrEqual(FLOORS[name].searchTop3);
  }, 30_000);
});

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

describe("search_history over random conversations (property)", () => {
  const secret = fc.constantFrom("ghp_" + "R8fTq2Lm9ZxY4wVb7NcK3pHd6sJa1gUe5oIt", "sk-" + "proj-Qm3xT8vL2nR7wK4pZ9sY6bJ1hF5cD0aE", "AKIA" + "QX7RZT4NB2LKWMPE");
  it("never returns a secret, nor a word of another conversation's", async () => {
    const corpus = OUTSIDE_CORPORA[0]!;
    const sessions = corpus.sessions(4096);
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: sessions.length - 1 }), fc.nat({ max: sessions.length - 1 }), fc.array(fc.tuple(fc.nat({ max: 69 }), secret), { minLength: 1, maxLength: 4 }), async (a, b, planted) => {
        fc.pre(a !== b);
        // Two conversations; secrets planted in the first one's user messages, stored redacted as the envelope stores them.
        const mine = memoryConversation();
        const theirs = memoryConversation();
        const messages = storedMessages(sessions[a]!);
        const secrets = new Set(planted.map(([, s]) => s));
        const withSecrets = messages.map((m, k) => {
          const plant = planted.find(([at]) => at * 3 === k);
          return plant && m.role === "user" ? { ...m, content: redact(`${m.content} The token is ${plant[1]} for now.`).text } : m;
        });
        withSecrets.forEach((m) => mine.append(m));
        storedMessages(sessions[b]!).forEach((m) => theirs.append(m));
        const queries = [...sessions[a]!.facts, ...sessions[b]!.facts].map((f) => f.query).concat([...secrets], ["token for now"]);
        for (const query of queries) {
          for (const hit of mine.search.search(query, 5).hits) {
            for (const s of secrets) expect(hit.excerpt).not.toContain(s.slice(0, 12));
            // Every excerpt is cut from a message of this conversation (its white space folded to one line).
            const stored = withSecrets[hit.seq - 1]!;
            const text = oneLine(indexedText({ role: stored.role, content: typeof stored.content === "string" ? stored.content : null, toolCalls: stored.role === "assistant" ? stored.tool_calls : null }));
            for (const piece of hit.excerpt.split("\u2026").map(oneLine).filter((p) => p.length > 8)) expect(text).toContain(piece);
          }
        }
        // What only the other conversation holds is never found here.
        for (const fact of sessions[b]!.facts) expect(mine.search.search(fact.query, 5).hits.some((hit) => shows(hit.excerpt, fact)), fact.id).toBe(false);
        mine.db.close();
        theirs.db.close();
      }),
      { numRuns: 12 },
    );
  });
});
