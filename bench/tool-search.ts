/**
 * `npm run bench:tools`: how well `search_tools` finds the right tool in a catalog of real-looking app tools, how
 * fast, and what it saves against inlining the whole catalog as an OpenAI tool list. Pure Node; reads only
 * test/fixtures/tool-catalog.ts and src/. JSON=1 prints the figures as JSON as well; MISSES=1 lists the queries
 * whose tool is not in the top 5.
 */
import { CATALOG, QUERIES, measureRecall, type QueryKind } from "../test/fixtures/tool-catalog";
import { ToolIndex, type CatalogTool } from "../src/tools/catalog-search";
import { countTokens } from "../src/core/tokens";

const RUNS = 20;

/** The tool as an OpenAI chat completions tool. */
function openAiTool(tool: CatalogTool) {
  return {
    type: "function",
    function: {
      name: tool.name.replace(":", "__"),
      description: tool.description,
      parameters: tool.inputSchema,
    },
  };
}

/** The search tool the model holds instead of the catalog (the lead's definition may differ in wording, not size). */
const SEARCH_TOOL = {
  type: "function",
  function: {
    name: "search_tools",
    description:
      "Search the catalog of app tools you can load. Give a few keywords or a sentence saying what you need, or exact names as 'select:app:tool,app:other'. The best matches (5 by default) become callable.",
    parameters: {
      type: "object",
      properties: { query: { type: "string", description: "What the tool should do, or select:<names>." }, limit: { type: "integer", description: "How many tools to load, 1-20." } },
      required: ["query"],
    },
  },
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

function main() {
  const buildMs: number[] = [];
  let index = new ToolIndex(CATALOG);
  for (let run = 0; run < RUNS; run++) {
    const start = performance.now();
    index = new ToolIndex(CATALOG);
    buildMs.push(performance.now() - start);
  }
  const queryMs: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const start = performance.now();
    for (const { query } of QUERIES) index.search(query, 5);
    queryMs.push((performance.now() - start) / QUERIES.length);
  }
  // A catalog of 1,000+ tools: the fixture four times over under other app names, to show the cost grows linearly.
  const large = [0, 1, 2, 3].flatMap((copy) => CATALOG.map((tool) => ({ ...tool, name: `${copy === 0 ? "" : `copy${copy}`}${tool.name}` })));
  const largeStart = performance.now();
  const largeIndex = new ToolIndex(large);
  const largeBuildMs = performance.now() - largeStart;
  const largeQueryStart = performance.now();
  for (const { query } of QUERIES) largeIndex.search(query, 5);
  const largeQueryMs = (performance.now() - largeQueryStart) / QUERIES.length;

  const overall = measureRecall(index, QUERIES);
  const kinds: QueryKind[] = ["exact", "paraphrase", "near_duplicate", "keyword"];
  const byKind = Object.fromEntries(kinds.map((kind) => [kind, measureRecall(index, QUERIES.filter((q) => q.kind === kind))]));

  const byName = new Map(CATALOG.map((tool) => [tool.name, tool]));
  const inlineTokens = countTokens(JSON.stringify(CATALOG.map(openAiTool)));
  const searchToolTokens = countTokens(JSON.stringify([SEARCH_TOOL]));
  const loadedTokens = QUERIES.map(({ query }) => countTokens(JSON.stringify(index.search(query, 5).map((hit) => openAiTool(byName.get(hit.name)!)))));
  const averageLoaded = loadedTokens.reduce((a, b) => a + b, 0) / loadedTokens.length;

  console.log(`tool search over ${CATALOG.length} tools, ${QUERIES.length} labelled queries`);
  console.log(`  overall         recall@1 ${pct(overall.recallAt1)}  recall@5 ${pct(overall.recallAt5)}  MRR@5 ${overall.mrr.toFixed(3)}`);
  for (const kind of kinds) {
    const m = byKind[kind]!;
    console.log(`  ${kind.padEnd(15)} recall@1 ${pct(m.recallAt1)}  recall@5 ${pct(m.recallAt5)}  MRR@5 ${m.mrr.toFixed(3)}  (${m.queries} queries)`);
  }
  console.log(`  index build ${median(buildMs).toFixed(2)} ms (median of ${RUNS}); search ${(median(queryMs) * 1000).toFixed(0)} µs a query`);
  console.log(`  at ${large.length} tools: build ${largeBuildMs.toFixed(2)} ms, search ${(largeQueryMs * 1000).toFixed(0)} µs a query`);
  console.log(`tokens: whole catalog inlined as OpenAI tools ${inlineTokens}`);
  console.log(`        search_tools alone ${searchToolTokens} + 5 hits loaded ${averageLoaded.toFixed(0)} on average = ${(searchToolTokens + averageLoaded).toFixed(0)} (${pct(1 - (searchToolTokens + averageLoaded) / inlineTokens)} fewer)`);
  if (process.env.MISSES === "1") for (const miss of overall.misses) console.log(`  miss: "${miss.query}" → ${miss.expected}; got ${miss.got.join(", ")}`);
  if (process.env.JSON === "1") {
    const strip = (m: ReturnType<typeof measureRecall>) => ({ queries: m.queries, recallAt1: m.recallAt1, recallAt5: m.recallAt5, mrr: m.mrr });
    console.log(
      JSON.stringify({
        tools: CATALOG.length,
        queries: QUERIES.length,
        overall: strip(overall),
        byKind: Object.fromEntries(kinds.map((kind) => [kind, strip(byKind[kind]!)])),
        buildMs: median(buildMs),
        queryMs: median(queryMs),
        large: { tools: large.length, buildMs: largeBuildMs, queryMs: largeQueryMs },
        tokens: { inline: inlineTokens, searchTool: searchToolTokens, averageLoaded },
      }),
    );
  }
}

main();
