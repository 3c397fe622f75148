/**
 * `npm run bench:tools-outside`: search_tools on the outside catalogs (test/fixtures/tool-corpus-outside.ts,
 * tool-corpus-outside-b.ts, -c.ts, -d.ts, -e.ts, -f.ts and -g.ts, each written by someone who had not read src/tools/), recall@1/@5 by query kind, for the lexical ranker alone and fused with a
 * semantic ranker through the fake embedding (test/fixtures/fake-embedding.ts: hashed character trigrams and words,
 * the same stand-in the workerd tests bind as `AI`; it proves the fusion's plumbing, not a real model's quality).
 * Then search time over about 1,000 tools. Pure Node. MISSES=1 lists the lexical ranker's misses.
 */
import { OUTSIDE_QUERIES, OUTSIDE_TOOLS } from "../test/fixtures/tool-corpus-outside";
import { OUTSIDE_QUERIES_B, OUTSIDE_TOOLS_B } from "../test/fixtures/tool-corpus-outside-b";
import { OUTSIDE_QUERIES_C, OUTSIDE_TOOLS_C } from "../test/fixtures/tool-corpus-outside-c";
import { OUTSIDE_QUERIES_D, OUTSIDE_TOOLS_D } from "../test/fixtures/tool-corpus-outside-d";
import { OUTSIDE_QUERIES_E, OUTSIDE_TOOLS_E } from "../test/fixtures/tool-corpus-outside-e";
import { OUTSIDE_QUERIES_F, OUTSIDE_TOOLS_F } from "../test/fixtures/tool-corpus-outside-f";
import { OUTSIDE_QUERIES_G, OUTSIDE_TOOLS_G } from "../test/fixtures/tool-corpus-outside-g";
import { measureTools, rate, type Ranker } from "../test/fixtures/outside-tools";
import { fakeEmbedding } from "../test/fixtures/fake-embedding";
import { ToolIndex } from "../src/tools/catalog-search";
import { embeddingText, fuseRankings, rankByCosine, unitVector, FUSION_DEPTH } from "../src/tools/semantic-search";

const KINDS = ["exact", "near_duplicate", "parameter", "mid_task", "paraphrase", "typo", "non_english", "english", "all"] as const;

const pct = (x: number) => `${(x * 100).toFixed(1)}`.padStart(5);
for (const [label, tools, queries] of [
  ["the outside catalog (test/fixtures/tool-corpus-outside.ts)", OUTSIDE_TOOLS, OUTSIDE_QUERIES],
  ["catalog B (test/fixtures/tool-corpus-outside-b.ts, held out at its first run)", OUTSIDE_TOOLS_B, OUTSIDE_QUERIES_B],
  ["catalog C (test/fixtures/tool-corpus-outside-c.ts, written after the weighted fusion, held out at its first run)", OUTSIDE_TOOLS_C, OUTSIDE_QUERIES_C],
  ["catalog D (test/fixtures/tool-corpus-outside-d.ts, held out at its first run)", OUTSIDE_TOOLS_D, OUTSIDE_QUERIES_D],
  ["catalog E (test/fixtures/tool-corpus-outside-e.ts, held out for the lexical ranker; the fusion by score was made with it)", OUTSIDE_TOOLS_E, OUTSIDE_QUERIES_E],
  ["catalog F (test/fixtures/tool-corpus-outside-f.ts, written after the ranker's and the fusion's last change, held out)", OUTSIDE_TOOLS_F, OUTSIDE_QUERIES_F],
  ["catalog G (test/fixtures/tool-corpus-outside-g.ts, written blind during stop 35, held out)", OUTSIDE_TOOLS_G, OUTSIDE_QUERIES_G],
] as const) {
  const index = new ToolIndex(tools);
  const vectors = new Map(tools.map((tool) => [tool.name, unitVector(fakeEmbedding(embeddingText(tool)))]));
  const lexical: Ranker = (query) => index.search(query, 5).map((hit) => hit.name);
  const fused: Ranker = (query) =>
    fuseRankings(index.search(query, FUSION_DEPTH), rankByCosine(unitVector(fakeEmbedding(query)), vectors), 5).map((hit) => hit.name);
  console.log(`\nsearch_tools over ${label}: ${tools.length} tools of ${new Set(tools.map((t) => t.name.split(":")[0])).size} apps, ${queries.length} queries`);
  console.log(`${"kind".padEnd(16)}${"n".padStart(5)}   lexical R@1  R@5    fused (fake) R@1  R@5`);
  const figures = { lexical: measureTools(lexical, queries), fused: measureTools(fused, queries) };
  for (const kind of KINDS) {
    const l = figures.lexical[kind];
    const f = figures.fused[kind];
    if (!l) continue;
    console.log(`${kind.padEnd(16)}${String(l.queries).padStart(5)}   ${pct(rate(l, 1))} ${pct(rate(l, 5))}        ${pct(rate(f, 1))} ${pct(rate(f, 5))}`);
  }
  if (process.env.MISSES) for (const { query, got } of figures.lexical.misses) console.log(`  miss [${query.kind}] ${query.query} ⇒ ${query.expect} | got ${got.join(", ")}`);
}

// About 1,000 tools: the catalog twice over, under other app names.
const large = [0, 1].flatMap((copy) => OUTSIDE_TOOLS.map((tool) => ({ ...tool, name: `${tool.name.split(":")[0]}${copy || ""}:${tool.name.split(":")[1]}` })));
const big = new ToolIndex(large);
const times: number[] = [];
for (let run = 0; run < 5; run++) {
  for (const { query } of OUTSIDE_QUERIES) {
    const start = performance.now();
    big.search(query, 5);
    times.push(performance.now() - start);
  }
}
times.sort((a, b) => a - b);
const at = (q: number) => `${(times[Math.floor(q * (times.length - 1))]! * 1000).toFixed(0)} µs`;
console.log(`lexical search over ${large.length} tools: p50 ${at(0.5)}, p99 ${at(0.99)}`);
