/**
 * The loop detector on the outside loop corpus (test/fixtures/loop-corpus-outside.ts, written by someone who had not
 * read src/reminders/), in every way a session ends. First run after the detector was rebuilt (issue 20): 48 / 42 / 48
 * of 59 loops caught (message / continuation / gateway), 0 false firings in 130 legitimate sessions. Changes then
 * followed from reading which sessions were missed, so this corpus is no longer held out for them (corpus E is): a
 * continuation reads what was appended since the last turn as new; a call made in each of consecutive messages is
 * repeated in a row whatever else they make: 56 / 56 / 56, 0 false firings. `npm run bench:loops` prints the figures.
 */
import { describe, expect, it } from "vitest";
import { OUTSIDE_LOOP_SESSIONS } from "../fixtures/loop-corpus-outside";
import { OUTSIDE_LOOP_SESSIONS as CORPUS_E } from "../fixtures/loop-corpus-e";
import { OUTSIDE_LOOP_SESSIONS as CORPUS_F } from "../fixtures/loop-corpus-f";
import { ENDINGS, measureLoops } from "../fixtures/outside-loops";

describe("loops on the outside corpus", () => {
  const figures = measureLoops(OUTSIDE_LOOP_SESSIONS);

  it("is the corpus the figures name: every kind planted, at least 100 legitimate sessions", () => {
    expect(Object.keys(figures.caught).sort()).toEqual(["batch_repeated", "cycle_2", "cycle_3", "keys_reordered", "repeat_3", "repeat_4_5", "same_error", "whitespace"]);
    expect(figures.legitimate).toBeGreaterThanOrEqual(100);
  });

  it("fires on no legitimate session, in any ending", () => {
    for (const ending of ENDINGS) expect(figures.falseFirings[ending], ending).toEqual([]);
  });

  it("catches the loops it caught when measured, in every ending", () => {
    for (const ending of ENDINGS) {
      const caught = Object.values(figures.caught).reduce((n, k) => n + k[ending].caught, 0);
      expect(caught, ending).toBeGreaterThanOrEqual(56);
    }
    for (const kind of ["batch_repeated", "cycle_2", "whitespace"]) for (const ending of ENDINGS) expect(figures.caught[kind]![ending].caught).toBe(figures.caught[kind]![ending].of);
  });
});

/**
 * Corpus E, written by another author who had read neither the detector nor the first corpus, run once after the last
 * change and never tuned on: 53 of 63 loops caught in every ending (84.1 %), 0 false firings in 133 legitimate
 * sessions. The misses: cycles and batches made again beside other calls in their steps, and errors whose repeat
 * changes a row id. A review then found polling that masks read as a loop (minutes remaining, byte counts, dates,
 * commit hashes changing); masking only timestamps, clock times, sub-second durations, UUIDs and minted ids: 52. Then,
 * from E's misses (so E is no longer held out for it), a cycle reads a batch with the calls the batch before made
 * first, so a batch made again beside another call is the same batch: 55 of 63, 87.3 %, 0 false firings.
 */
describe("loops on corpus E (held out)", () => {
  const figures = measureLoops(CORPUS_E);

  it("fires on no legitimate session, in any ending", () => {
    expect(figures.legitimate).toBeGreaterThanOrEqual(100);
    for (const ending of ENDINGS) expect(figures.falseFirings[ending], ending).toEqual([]);
  });

  it("catches what it caught when run, in every ending", () => {
    for (const ending of ENDINGS) expect(Object.values(figures.caught).reduce((n, k) => n + k[ending].caught, 0), ending).toBeGreaterThanOrEqual(55);
  });
});

/**
 * Corpus F, by a third author, written after the last change to what counts as a loop and run once: 51 of 56 loops
 * caught in every ending (91.1 %), and one false firing in 122 legitimate sessions: a replication lag polled as
 * "00:04:12.8", read as a clock time. A clock time now masks only beside a date or a zone: 0 false firings, 51 caught.
 * The misses: cycles whose steps carry another call, and an error whose repeats differ in more than ids.
 */
describe("loops on corpus F (held out but for one false firing)", () => {
  const figures = measureLoops(CORPUS_F);

  it("fires on no legitimate session, in any ending", () => {
    expect(figures.legitimate).toBeGreaterThanOrEqual(100);
    for (const ending of ENDINGS) expect(figures.falseFirings[ending], ending).toEqual([]);
  });

  it("catches what it caught when run, in every ending", () => {
    for (const ending of ENDINGS) expect(Object.values(figures.caught).reduce((n, k) => n + k[ending].caught, 0), ending).toBeGreaterThanOrEqual(51);
  });
});
