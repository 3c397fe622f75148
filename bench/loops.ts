/**
 * `npm run bench:loops`: the loop detector (src/reminders/loops.ts) on the scripted sessions of
 * test/fixtures/tool-sessions.ts — its detection rate on planted loops and cycles, and its false positives on
 * legitimate sessions, at the default thresholds (3 repeats, cycles up to 3 calls) and a few others. Pure Node.
 */
import { findLoops, LOOP_DEFAULTS, type LoopOptions } from "../src/reminders/loops";
import { LEGITIMATE, PLANTED } from "../test/fixtures/tool-sessions";

function measure(options: LoopOptions) {
  const missed = PLANTED.filter((s) => findLoops(s.calls, options).length === 0);
  const falsePositives = LEGITIMATE.filter((s) => findLoops(s.calls, options).length > 0);
  return { missed, falsePositives };
}

const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)}%`;
const calls = [...PLANTED, ...LEGITIMATE].reduce((n, s) => n + s.calls.length, 0);
const started = performance.now();
for (let i = 0; i < 20; i++) for (const s of [...PLANTED, ...LEGITIMATE]) findLoops(s.calls);
const usPerCall = ((performance.now() - started) * 1000) / (20 * calls);

console.log(`loop detector: ${PLANTED.length} planted sessions, ${LEGITIMATE.length} legitimate sessions, ${calls} calls`);
for (const options of [LOOP_DEFAULTS, { repeats: 2, maxPeriod: 3 }, { repeats: 4, maxPeriod: 3 }, { repeats: 3, maxPeriod: 1 }]) {
  const { missed, falsePositives } = measure(options);
  const label = `repeats=${options.repeats} maxPeriod=${options.maxPeriod}${options === LOOP_DEFAULTS ? " (default)" : ""}`;
  console.log(
    `${label.padEnd(34)} detection ${PLANTED.length - missed.length}/${PLANTED.length} (${pct(PLANTED.length - missed.length, PLANTED.length)})` +
      `  false positives ${falsePositives.length}/${LEGITIMATE.length} (${pct(falsePositives.length, LEGITIMATE.length)})` +
      (missed.length ? `  missed: ${missed.map((s) => s.name).join(", ")}` : "") +
      (falsePositives.length ? `  fired on: ${falsePositives.map((s) => s.name).join(", ")}` : ""),
  );
}
console.log(`cost: ${usPerCall.toFixed(2)} µs per call scanned`);
