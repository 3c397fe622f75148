/**
 * The loop detector on seven corpora written by people who had not read src/reminders/, each by another author, in
 * every way a session ends (`npm run bench:loops` prints the figures):
 * - the first (59 loops, 130 legitimate): 48 / 42 / 48 caught (message / continuation / gateway) at its first run;
 *   tuned on afterwards (a continuation reads what was appended since the last turn as new; a call made in each of
 *   consecutive messages is repeated in a row whatever else they make): 56 in every ending.
 * - E (63 loops, 133 legitimate), run once after that: 53 in every ending. A review then found polling that masks
 *   read as a loop (minutes remaining, byte counts, dates, commit hashes changing); masking only timestamps, clock
 *   times, sub-second durations, UUIDs and minted ids: 52. Then, from E's misses, a cycle reads a batch with the
 *   calls the batch before made first, so a batch made again beside another call is the same batch: 55.
 * - F (56 loops, 122 legitimate), run once after the last change to what counts as a loop: 51 in every ending, and
 *   one false firing (a replication lag polled as "00:04:12.8", read as a clock time). A clock time now masks only
 *   beside a date or a zone: 0 false firings, 51 caught. Its misses: cycles whose steps carry another call, and an
 *   error whose repeats differ in more than ids.
 * - Then, from F's misses (so tuned on all three): a call asked once beside a cycle's calls is work done alongside, not
 *   a step that breaks the cycle; ids in parts joined by colons or pluses, and a timestamp with underscores, are
 *   occurrence marks: 58 / 60 / 56.
 * - G (74 loops, 140 legitimate), a fourth author, written meanwhile and run once after that change: 68 in every
 *   ending (66 before it), 0 false firings. Its misses: results that differ only in a short id (four), and rounds
 *   with a step of new work between them (two). Then, from those misses (G tuned on since): a field named for the
 *   request's identity (request, trace, span, correlation or transaction id) is an occurrence mark however short:
 *   72. Corpus H (86 loops, 150 legitimate; a fifth author) was written meanwhile and run once after: 70 (65 before
 *   this stop), 0 false firings. Its misses were mostly epoch times in fields named for a time, rate-limit counters
 * *   and cache ages; with those read as occurrence marks (H tuned on since): 81.
 * - I (94 loops, 113 legitimate; a sixth author), written after that and run once: 77 in every ending, 0 false
 *   firings. Its misses: how long the call took by a field's unit or word (`latency_ms`, `uptime_seconds`, PostgreSQL's
 *   `actual time=`), quota headers named for a limit, a request's log link, times relative to now ("12 minutes ago",
 *   "Up 3 minutes", a table's AGE column) and reissued sync tokens. With those read as occurrence marks (I tuned on
 *   since): 93; H 82, E 61. One miss left: a GraphQL cost's `currentlyAvailable`, named for nothing of the call.
 * - J (96 loops, 120 legitimate; a seventh author, volatile parts from many more systems), written after that and run
 *   once: 60 in every ending (62.5 %), 0 false firings. From its misses (J tuned on since): an HTTP response's
 *   exchange headers (when, who served it, how long, which request, what quota, when to retry), ids in base62 and
 *   base64, epoch seconds to the millisecond, transfer rates and a server's `system_fingerprint` are occurrence marks:
 *   J 77, H 83, E 62. A review then narrowed them so no header or field that reports progress is masked (a deny-list
 *   of exchange headers, not an allow-list of resource ones; quotas named for the call; no countdowns): J 74.
 * No corpus has a false firing now, in any ending.
 */
import { describe, expect, it } from "vitest";
import { OUTSIDE_LOOP_SESSIONS } from "../fixtures/loop-corpus-outside";
import { OUTSIDE_LOOP_SESSIONS as CORPUS_E } from "../fixtures/loop-corpus-e";
import { OUTSIDE_LOOP_SESSIONS as CORPUS_F } from "../fixtures/loop-corpus-f";
import { CORPUS_G } from "../fixtures/loop-corpus-g";
import { CORPUS_H } from "../fixtures/loop-corpus-h";
import { CORPUS_I } from "../fixtures/loop-corpus-i";
import { CORPUS_J } from "../fixtures/loop-corpus-j";
import { CORPUS_K } from "../fixtures/loop-corpus-k";
import { CORPUS_L } from "../fixtures/loop-corpus-l";
import { CORPUS_M } from "../fixtures/loop-corpus-m";
import { CORPUS_N } from "../fixtures/loop-corpus-n";
import { CORPUS_O } from "../fixtures/loop-corpus-o";
import { CORPUS_P } from "../fixtures/loop-corpus-p";
import { CORPUS_Q } from "../fixtures/loop-corpus-q";
import { CORPUS_R } from "../fixtures/loop-corpus-r";
import { ENDINGS, caughtIn, measureLoops } from "../fixtures/outside-loops";

describe.each([
  ["the first outside corpus", OUTSIDE_LOOP_SESSIONS, 59],
  ["corpus E", CORPUS_E, 62],
  ["corpus F", CORPUS_F, 56],
  ["corpus G", CORPUS_G, 72],
  ["corpus H", CORPUS_H, 86],
  ["corpus I", CORPUS_I, 94],
  ["corpus J", CORPUS_J, 94],
  ["corpus K", CORPUS_K, 90],
  ["corpus L", CORPUS_L, 93],
  // Written after the detector's last change: 65 at its first run, then three rules from its misses, then two marks
  // and white space as layout (stop 32), then numbers that move both ways over a streak read as noise, then over a
  // whole user turn (stop 33).
  ["corpus M", CORPUS_M, 90],
  // Written after the marks of stop 32: 61 at its one run; 66 with numbers that move both ways read as noise, a rule
  // not drawn from it; 73 with stop 33's rules drawn from O's misses (74 in the gateway's ending).
  ["corpus N", CORPUS_N, 73],
  // Written after streaks were read for noise and the review's fixes: 61 at its one run; then stop 33's rules from its
  // misses (a call's readings over the whole user turn, two readings less than 2 % apart, lines in another order).
  ["corpus O", CORPUS_O, 68],
  // Written blind during stop 33, never tuned on: 52 / 104 before its rules, 61 after (60 in the gateway's ending; 61
  // since stop 35 notes a loop the new results show in hindsight).
  ["corpus P", CORPUS_P, 61],
  // Written blind during stop 34 (about 90 systems no earlier corpus used), never tuned on: 79 / 104 at its first run
  // (76 in the gateway's ending, 80 since stop 35).
  ["corpus Q", CORPUS_Q, 79],
  // Written blind during stop 35, never tuned on: 79 / 104 before and after that stop's rules (78 → 79 in the
  // gateway's ending).
  ["corpus R", CORPUS_R, 79],
] as const)("loops on %s", (_name, sessions, floor) => {
  const figures = measureLoops(sessions);

  it("plants every kind, and at least 100 legitimate sessions", () => {
    expect(Object.keys(figures.caught).sort()).toEqual(["batch_repeated", "cycle_2", "cycle_3", "keys_reordered", "repeat_3", "repeat_4_5", "same_error", "whitespace"]);
    expect(figures.legitimate).toBeGreaterThanOrEqual(100);
  });

  it("fires on no legitimate session, in any ending", () => {
    for (const ending of ENDINGS) expect(figures.falseFirings[ending], ending).toEqual([]);
  });

  it("catches the loops it caught when measured, in every ending", () => {
    for (const ending of ENDINGS) expect(caughtIn(figures, ending).caught, ending).toBeGreaterThanOrEqual(floor);
  });
});

describe("loops on the first outside corpus, by kind", () => {
  it("catches every repeated batch, A-B-A-B and white-space respelling, in every ending", () => {
    const figures = measureLoops(OUTSIDE_LOOP_SESSIONS);
    for (const kind of ["batch_repeated", "cycle_2", "whitespace"]) for (const ending of ENDINGS) expect(figures.caught[kind]![ending].caught).toBe(figures.caught[kind]![ending].of);
  });
});
