/**
 * `npx tsx bench/tool-search-semantic.ts`: what ranking by meaning costs a search_tools call in the runtime's own
 * work, over a catalog of 1,000 tools: the cosine similarity of the query's vector to 1,000 stored 1024-float vectors,
 * and the fusion with the lexical ranking, beside the lexical search itself. The vectors come from the
 * workerd tests' fake model (test/fixtures/fake-embedding.ts); the model call itself (a network round trip in a
 * deployment) is not in these figures. Pure Node; reads test/fixtures/tool-catalog.ts for tools and queries.
 */
import { CATALOG, QUERIES } from "../test/fixtures/tool-catalog";
import { ToolIndex, type CatalogTool } from "../src/tools/catalog-search";
import { embeddingText, fuseRankings, rankByCosine, unitVector } from "../src/tools/semantic-search";
import { fakeEmbedding } from "../test/fixtures/fake-embedding";

const TOOLS = 1000;
const RUNS = 5;

/** 1,000 tools: the fixture's catalog repeated under other app names (`calendar2:list_events`, …). */
const catalog: CatalogTool[] = Array.from({ length: TOOLS }, (_, i) => {
  const tool = CATALOG[i % CATALOG.length]!;
  const copy = Math.floor(i / CATALOG.length);
  return copy === 0 ? tool : { ...tool, name: tool.name.replace(":", `${copy + 1}:`) };
});
const index = new ToolIndex(catalog);
const vectors = new Map(catalog.map((t) => [t.name, unitVector(fakeEmbedding(embeddingText(t)))]));
const queryVectors = QUERIES.map(({ query }) => unitVector(fakeEmbedding(query)));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

const lexicalMs: number[] = [];
const semanticMs: number[] = [];
const fusedMs: number[] = [];
for (let run = 0; run < RUNS; run++) {
  QUERIES.forEach(({ query }, i) => {
    let t = performance.now();
    const lexical = index.search(query, 20);
    lexicalMs.push(performance.now() - t);
    t = performance.now();
    const semantic = rankByCosine(queryVectors[i]!, vectors);
    const fused = fuseRankings(lexical, semantic, 5);
    semanticMs.push(performance.now() - t);
    fusedMs.push(lexicalMs.at(-1)! + semanticMs.at(-1)!);
    if (fused.length === 0) throw new Error(`nothing for ${query}`);
  });
}
const f = (ms: number) => `${ms.toFixed(3)} ms`;
console.log(`${TOOLS} tools × 1024 floats, ${QUERIES.length} queries × ${RUNS} runs (Node ${process.version})`);
console.log(`lexical search (top 20):          p50 ${f(percentile(lexicalMs, 0.5))}, p95 ${f(percentile(lexicalMs, 0.95))}`);
console.log(`cosine over all tools + fusion:    p50 ${f(percentile(semanticMs, 0.5))}, p95 ${f(percentile(semanticMs, 0.95))}`);
console.log(`a fused search (both, no model):   p50 ${f(percentile(fusedMs, 0.5))}, p95 ${f(percentile(fusedMs, 0.95))}`);
