/**
 * `npx tsx bench/fact-survival.ts`: do the user's facts survive compaction (issue 10)? Pure Node, no runtime:
 * the corpus of test/fixtures/fact-corpus.ts planted in long sessions, compacted turn by turn with the real planner
 * and the default summariser in windows of 4k, 8k and 16k (1,024 tokens reserved for the answer), and the last
 * turn's model input judged. Prints survival by kind of fact and window, corrections whose old value is read
 * alone, compactions per session, and the tokens the model reads over a 200-turn session.
 *
 * It needs only this file, the fixture and the checkout's src/, so it measures an older digest too:
 *   git worktree add /tmp/base <commit> && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   cp bench/fact-survival.ts /tmp/base/bench/ && cp test/fixtures/fact-corpus.ts /tmp/base/test/fixtures/
 *   (cd /tmp/base && npx tsx bench/fact-survival.ts)
 * SEED=<integer> deals the corpus into other sessions; DENSITY=1.5 plants 1.5 times as many facts a session (how
 * much room is left); JSON=1 prints the figures as JSON as well.
 */
import { execSync } from "node:child_process";
import { CORPUS, FACT_KINDS, SURVIVAL, WINDOWS, corpusSessions, measureWindow, session, simulateSession, windowPolicy, type Window } from "../test/fixtures/fact-corpus";

const seed = Number(process.env.SEED ?? 7_2026);
if (!Number.isSafeInteger(seed)) throw new Error(`SEED must be an integer, not '${process.env.SEED}'`);
const density = Number(process.env.DENSITY ?? 1);
if (!(density > 0)) throw new Error(`DENSITY must be a positive number, not '${process.env.DENSITY}'`);
const commit = (() => {
  try {
    return execSync("git rev-parse --short HEAD", { stdio: ["ignore", "pipe", "ignore"] }).toString().trim() + (execSync("git status --porcelain -- src", { stdio: ["ignore", "pipe", "ignore"] }).toString().trim() ? " + uncommitted src/ changes" : "");
  } catch {
    return "unknown";
  }
})();

const label = (w: Window) => `${w / 1024}k`;
const pct = (n: number, of: number) => (of ? `${((100 * n) / of).toFixed(1)} %` : "—");
const cell = (n: number, of: number) => `${n}/${of} ${pct(n, of)}`.padStart(16);
const row = (name: string, cells: string[]) => console.log(`  ${name.padEnd(26)}${cells.join("")}`);

console.log(`Fact survival through compaction (issue 10) — checkout ${commit}, Node ${process.version}`);
console.log(`  corpus: ${CORPUS.length} facts (${FACT_KINDS.map((k) => `${CORPUS.filter((f) => f.kind === k).length} ${k}`).join(", ")}); sessions seed ${seed}`);
console.log(`  each window plants the whole corpus: ${WINDOWS.map((w) => `${label(w)} ${Math.max(1, Math.round(SURVIVAL.session[w].facts * density))} facts × ${SURVIVAL.session[w].turns} turns a session`).join(", ")}${density === 1 ? "" : ` (DENSITY ${density})`}`);
console.log(`  targets: ≥ ${SURVIVAL.overall * 100} % readable, ${SURVIVAL.corrections * 100} % of corrections, ${SURVIVAL.supersededAlone} old values read alone, ≥ ${SURVIVAL.compactionsPerSession} summaries a session\n`);

const results = [];
for (const w of WINDOWS) {
  const started = performance.now();
  const r = await measureWindow(w, corpusSessions(w, seed, density));
  results.push({ ...r, ms: performance.now() - started });
}
row("readable at the end", WINDOWS.map((w) => label(w).padStart(16)));
for (const k of FACT_KINDS) row(`  ${k}`, results.map((r) => cell(r.verdict.byKind[k].readable, r.verdict.byKind[k].facts)));
row("  overall", results.map((r) => cell(r.verdict.readable, r.verdict.facts)));
row("old value read alone", results.map((r) => String(r.verdict.supersededAlone.length).padStart(16)));
row("sessions", results.map((r) => String(r.sessions).padStart(16)));
row("summaries a session", results.map((r) => `${r.summaries.min} min, ${r.summaries.mean.toFixed(1)}`.padStart(16)));
row("compactions a session", results.map((r) => `${r.compactions.min} min, ${r.compactions.mean.toFixed(1)}`.padStart(16)));
row("summaries over budget", results.map((r) => String(r.overBudget).padStart(16)));
row("turns over the window", results.map((r) => String(r.overWindow).padStart(16)));
row("time", results.map((r) => `${(r.ms / 1000).toFixed(1)} s`.padStart(16)));

// The tokens the model reads over one 200-turn session (every model call: user turns and continuations).
const long = [];
for (const w of WINDOWS) {
  const s = session(seed + 200, { turns: 200, facts: SURVIVAL.session[w].facts });
  const sim = await simulateSession(s, windowPolicy(w));
  long.push({ window: w, calls: sim.turns.length, tokens: sim.tokensRead, summaries: sim.summaries, last: sim.turns.at(-1)!.tokens });
}
console.log("");
row("200-turn session", WINDOWS.map((w) => label(w).padStart(16)));
row("  model calls", long.map((l) => String(l.calls).padStart(16)));
row("  tokens read, summed", long.map((l) => l.tokens.toLocaleString("en-US").padStart(16)));
row("  per call, mean", long.map((l) => Math.round(l.tokens / l.calls).toLocaleString("en-US").padStart(16)));
row("  summaries", long.map((l) => String(l.summaries).padStart(16)));

const lost = results.flatMap((r) => r.verdict.lost.map((f) => ({ window: r.window, fact: f })));
if (lost.length) {
  console.log(`\nLost (${lost.length}; a fact may be lost in several windows):`);
  for (const { window, fact } of lost.slice(0, 60)) console.log(`  ${label(window).padEnd(4)} ${fact.id.padEnd(14)} ${fact.template}  ${JSON.stringify(fact.statement)}`);
  if (lost.length > 60) console.log(`  … and ${lost.length - 60} more`);
}
const alone = results.flatMap((r) => r.verdict.supersededAlone.map((f) => ({ window: r.window, fact: f })));
if (alone.length) {
  console.log(`\nOld value read without its correction (${alone.length}):`);
  for (const { window, fact } of alone) console.log(`  ${label(window).padEnd(4)} ${fact.id.padEnd(14)} ${JSON.stringify(fact.original)} → ${JSON.stringify(fact.statement)}`);
}

if (process.env.JSON) {
  console.log(
    JSON.stringify({
      commit,
      seed,
      density,
      windows: results.map((r) => ({
        window: r.window,
        sessions: r.sessions,
        readable: r.verdict.readable,
        facts: r.verdict.facts,
        byKind: r.verdict.byKind,
        supersededAlone: r.verdict.supersededAlone.map((f) => f.id),
        lost: r.verdict.lost.map((f) => f.id),
        summaries: r.summaries,
        compactions: r.compactions,
        overBudget: r.overBudget,
        overWindow: r.overWindow,
      })),
      session200: long,
    }),
  );
}
