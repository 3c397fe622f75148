/**
 * Ranking the catalog by meaning, beside the lexical ranker (catalog-search.ts): the text a tool is embedded from,
 * cosine similarity over unit vectors, and the fusion of the two rankings by score. Pure: the embedding model is
 * called by the hub (src/hub/tool-vectors.ts), which keeps the tools' vectors.
 */
import type { RanToolCall } from "../protocol/evidence";
import { schemaParameters, type CatalogHit, type CatalogTool } from "./catalog-search";

/** A tool and its cosine similarity to the query, best first. */
export interface SemanticHit {
  name: string;
  score: number;
}

/** Which ranking answered a search_tools call: BM25 alone, or BM25 fused with the embedding model's. */
export type Ranker = NonNullable<RanToolCall["ranker"]>;

/** Each ranker's list the fusion reads: as deep as the lexical ranker ever answers. */
export const FUSION_DEPTH = 20;

/** What is embedded of a tool stays well inside the model's input, and bounds an embedding call's cost. */
const MAX_EMBEDDED_CHARS = 2000;

/**
 * The text a tool is embedded from: its name in words, its description, then each parameter's name, description and
 * allowed values (nested ones too, by dotted path: `schemaParameters`, what the lexical ranker reads). Its hash keys
 * the stored vector, so a tool is embedded again exactly when this text changes.
 */
export function embeddingText(tool: CatalogTool): string {
  const lines = [words(tool.name), tool.description.trim()];
  for (const { path, text, values } of schemaParameters(tool.inputSchema)) {
    lines.push(`${words(path.join("."))}${text ? `: ${text}` : ""}${values.length ? ` (one of: ${values.join(", ")})` : ""}`);
  }
  return lines.filter((line) => line !== "").join("\n").slice(0, MAX_EMBEDDED_CHARS);
}

/** "calendar:createEvent" → "calendar create Event": the model reads words, not identifiers. */
function words(identifier: string): string {
  return identifier.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2").replace(/[_:.\-]+/g, " ").trim();
}


/** The vector scaled to length 1 (a zero vector stays zero), as float32: cosine similarity is then a dot product. */
export function unitVector(values: readonly number[]): Float32Array {
  let norm = 0;
  for (const v of values) norm += v * v;
  norm = Math.sqrt(norm);
  const out = new Float32Array(values.length);
  if (norm > 0) for (let i = 0; i < values.length; i++) out[i] = values[i]! / norm;
  return out;
}

/**
 * The `depth` tools closest to the query by cosine similarity, best first, ties by name. Vectors are unit vectors
 * (`unitVector`); one of another length than the query's (another model's) is skipped.
 */
export function rankByCosine(query: Float32Array, vectors: ReadonlyMap<string, Float32Array>, depth = FUSION_DEPTH): SemanticHit[] {
  const hits: SemanticHit[] = [];
  for (const [name, vector] of vectors) {
    if (vector.length !== query.length) continue;
    let dot = 0;
    for (let i = 0; i < query.length; i++) dot += query[i]! * vector[i]!;
    hits.push({ name, score: dot });
  }
  return hits.sort((a, b) => b.score - a.score || compareNames(a.name, b.name)).slice(0, depth);
}

/**
 * The lexical and the semantic ranking fused by score: each tool scores its lexical score over the best lexical hit's,
 * plus w times how far its cosine similarity rises above the floor of the semantic list over the best one's, over the
 * lists it is in (each read FUSION_DEPTH deep, exact hits left out). The floor is the FUSION_DEPTH-th similarity (0
 * when fewer tools have vectors, a small catalog or one still being embedded, or when it is negative): what any tool
 * shares with the query (its common words, its script), so only what stands above it ranks, and a semantic ranking
 * whose best barely clears its twentieth moves little. w is the square of the share of the query the best lexical hit
 * did not account for (1 − its `coverage`): a query the lexical ranker read whole keeps its order, one it could not
 * read at all (another language, other words) is ranked by both alike, and one it read mostly is barely moved.
 * Scores, not ranks: reciprocal rank fusion flattens the lexical ranker's margins (its first and second
 * differ by 1/61 − 1/62), so any weight on a weak semantic ranking reorders a query the lexical ranker was sure of
 * (docs/figures.md). Exact-name hits stay first, in the lexical order, untouched. Equal scores go to the better
 * lexical rank, then the better semantic rank, then by name: the same lists always fuse to the same answer.
 */
export function fuseRankings(lexical: readonly CatalogHit[], semantic: readonly SemanticHit[], limit: number): CatalogHit[] {
  const exact = lexical.filter((hit) => hit.exact);
  const taken = new Set(exact.map((hit) => hit.name));
  const lexicalHits = lexical.filter((hit) => !taken.has(hit.name)).slice(0, FUSION_DEPTH);
  // A similarity that is not a number (a model's broken vector) ranks nothing.
  const semanticHits = semantic.filter((hit) => !taken.has(hit.name) && Number.isFinite(hit.score)).slice(0, FUSION_DEPTH);
  const lexicalRanks = new Map(lexicalHits.map((hit, i) => [hit.name, i + 1]));
  const semanticRanks = new Map(semanticHits.map((hit, i) => [hit.name, i + 1]));
  const bestLexical = Math.max(0, ...lexicalHits.map((hit) => hit.score));
  const bestCosine = Math.max(0, ...semanticHits.map((hit) => hit.score));
  const read = semantic.filter((hit) => Number.isFinite(hit.score)).slice(0, FUSION_DEPTH);
  const floor = read.length === FUSION_DEPTH ? Math.max(0, Math.min(...read.map((hit) => hit.score))) : 0;
  // The semantic ranking counts as much as the lexical one could not read of the query, squared: nothing when the
  // best lexical hit holds every query word, as much as the lexical ranking when it holds none.
  const weight = (1 - Math.min(1, Math.max(0, lexicalHits[0]?.coverage || 0))) ** 2;
  const fused = new Map<string, number>();
  for (const hit of lexicalHits) fused.set(hit.name, bestLexical > 0 ? hit.score / bestLexical : 0);
  for (const hit of semanticHits) fused.set(hit.name, (fused.get(hit.name) ?? 0) + (bestCosine > 0 ? (weight * Math.max(0, hit.score - floor)) / bestCosine : 0));
  const lexicalRank = (name: string) => lexicalRanks.get(name) ?? Infinity;
  const semanticRank = (name: string) => semanticRanks.get(name) ?? Infinity;
  const ranked = [...fused]
    .map(([name, score]) => [name, Math.round(score * 1e6) / 1e6] as const)
    .sort(([a, x], [b, y]) => y - x || lexicalRank(a) - lexicalRank(b) || semanticRank(a) - semanticRank(b) || compareNames(a, b))
    .map(([name, score]): CatalogHit => ({ name, score, exact: false, coverage: lexical.find((hit) => hit.name === name)?.coverage ?? 0 }));
  return [...exact, ...ranked].slice(0, Math.max(0, limit));
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
