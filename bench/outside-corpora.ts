/**
 * `npm run bench:corpora`: issue 19's figures on the fourteen corpora written by people who never read src/history/
 * (test/fixtures/history-corpus-a.ts to -n.ts, listed in outside-corpora.ts). Pure Node, no runtime:
 *
 * - survival: each corpus's sessions compacted turn by turn (the real planner and the default summariser) in 4k, 8k
 *   and 16k windows, the last model input judged: facts readable by kind, corrections whose old value is read alone,
 *   summaries a session;
 * - search: every session's messages stored and indexed by search_history's own store (in node:sqlite, the same SQL as
 *   the Durable Object's), each fact's query (its subject, never its value) asked: recall@1 and @3, a fact found when a
 *   hit's excerpt shows all its probes.
 *
 * CORPUS=A (any one letter) measures one; SEARCH=0 leaves the search out; LOST=1 lists the facts lost, the corrections
 * outlived and the searches missed. To measure an older summariser, copy this file and test/fixtures/{outside-corpora,
 * history-corpus-*,fact-corpus}.ts into a worktree of it (SEARCH=0 there, if it has no search).
 */
import { execSync } from "node:child_process";
import { OUTSIDE_CORPORA, OUTSIDE_KINDS, OUTSIDE_TARGETS, WINDOWS, measureSurvival, type OutsideVerdict } from "../test/fixtures/outside-corpora";

const only = process.env.CORPUS;
const commit = (() => {
  try {
    return execSync("git rev-parse --short HEAD", { stdio: ["ignore", "pipe", "ignore"] }).toString().trim() + (execSync("git status --porcelain -- src", { stdio: ["ignore", "pipe", "ignore"] }).toString().trim() ? " + uncommitted src/ changes" : "");
  } catch {
    return "unknown";
  }
})();
const pct = (n: number, of: number) => (of ? `${((100 * n) / of).toFixed(1)} %` : "—");
const cell = (n: number, of: number) => `${n}/${of} ${pct(n, of)}`.padStart(16);
const row = (name: string, cells: string[]) => console.log(`  ${name.padEnd(26)}${cells.join("")}`);
const label = (w: number) => `${w / 1024}k`;

console.log(`Issue 19 on the outside corpora — checkout ${commit}, Node ${process.version}`);
console.log(`  targets: ≥ ${OUTSIDE_TARGETS.readable * 100} % readable, ${OUTSIDE_TARGETS.corrections * 100} % of corrections, 0 old values read alone, ≥ ${OUTSIDE_TARGETS.searchTop3 * 100} % found by search_history in its top 3`);
for (const corpus of OUTSIDE_CORPORA) {
  if (only && corpus.name !== only) continue;
  console.log(`\nCorpus ${corpus.name}: ${corpus.facts.length} facts (${OUTSIDE_KINDS.map((k) => `${corpus.facts.filter((f) => f.kind === k).length} ${k}`).join(", ")})`);
  const results: (OutsideVerdict & { ms: number })[] = [];
  for (const w of WINDOWS) {
    const started = performance.now();
    results.push({ ...(await measureSurvival(corpus, w)), ms: performance.now() - started });
  }
  row("readable at the end", WINDOWS.map((w) => label(w).padStart(16)));
  for (const k of OUTSIDE_KINDS) row(`  ${k}`, results.map((r) => cell(r.byKind[k].readable, r.byKind[k].facts)));
  row("  overall", results.map((r) => cell(r.readable, r.facts)));
  row("old value read alone", results.map((r) => String(r.supersededAlone.length).padStart(16)));
  row("summaries a session, min", results.map((r) => String(r.minSummaries).padStart(16)));
  row("time", results.map((r) => `${(r.ms / 1000).toFixed(1)} s`.padStart(16)));
  if (process.env.LOST) for (const [k, r] of results.entries()) for (const f of r.lost) console.log(`    lost ${label(WINDOWS[k]!)} ${f.id} ${JSON.stringify(f.statement)}`);
  if (process.env.LOST) for (const [k, r] of results.entries()) for (const f of r.supersededAlone) console.log(`    old value alone ${label(WINDOWS[k]!)} ${f.id} ${JSON.stringify(f.original)} → ${JSON.stringify(f.statement)}`);
  if (process.env.SEARCH !== "0") {
    const { measureSearch } = await import("../test/fixtures/outside-search");
    const s = await measureSearch(corpus);
    console.log(`  search_history: recall@1 ${cell(s.at1, s.facts).trim()}, recall@3 ${cell(s.at3, s.facts).trim()}; per search p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms over ${s.messages.toLocaleString("en-US")} stored messages in ${s.sessions} sessions`);
    if (process.env.LOST) for (const f of s.missed) console.log(`    missed ${f.id} ${JSON.stringify(f.query)} → ${JSON.stringify(f.probes)}`);
  }
}
