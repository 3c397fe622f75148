/**
 * Ranking the catalog by meaning, beside the lexical ranker (catalog-search.ts): the text a tool is embedded from,
 * cosine similarity over unit vectors, and reciprocal rank fusion of the two rankings. Pure: the embedding model is
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

/** Cormack, Clarke and Büttcher's constant (SIGIR 2009): it damps the head of each list so neither ranker dominates. */
export const RRF_K = 60;

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
 * Reciprocal rank fusion of the lexical and the semantic ranking: each tool scores 1/(k + lexical rank) + w/(k +
 * semantic rank) over the lists it is in (rank from 1, exact hits left out), where w is the share of the query the best
 * lexical hit did not account for (1 − its `coverage`): a query the lexical ranker read whole keeps its order, one
 * it could not read (another language, other words) is ranked by meaning. Exact-name hits stay first, in the lexical
 * order, untouched. Equal scores (one ranker's first against the other's, first-and-second against second-and-first)
 * go to the better lexical rank, the ranker that read the query's own words, then the better semantic rank, then by
 * name: the same lists always fuse to the same answer.
 */
export function fuseRankings(lexical: readonly CatalogHit[], semantic: readonly SemanticHit[], limit: number): CatalogHit[] {
  const exact = lexical.filter((hit) => hit.exact);
  const taken = new Set(exact.map((hit) => hit.name));
  const ranks = (names: readonly string[]) => new Map(names.filter((name) => !taken.has(name)).slice(0, FUSION_DEPTH).map((name, i) => [name, i + 1]));
  const lexicalRanks = ranks(lexical.map((hit) => hit.name));
  const semanticRanks = ranks(semantic.map((hit) => hit.name));
  // The semantic ranking counts as much as the lexical one could not read of the query: nothing when the best lexical
  // hit holds every query word, all of it when it holds none (another language, a paraphrase).
  const sure = lexical.find((hit) => !hit.exact)?.coverage ?? 0;
  const weights = [1, 1 - sure];
  const fused = new Map<string, number>();
  [lexicalRanks, semanticRanks].forEach((list, l) => {
    for (const [name, rank] of list) fused.set(name, (fused.get(name) ?? 0) + weights[l]! / (RRF_K + rank));
  });
  const lexicalRank = (name: string) => lexicalRanks.get(name) ?? Infinity;
  const semanticRank = (name: string) => semanticRanks.get(name) ?? Infinity;
  // Equal scores (a semantic ranking weighed at nothing among them) keep each ranker's order: lexical, then semantic.
  const ranked = [...fused]
    .sort(([a, x], [b, y]) => y - x || lexicalRank(a) - lexicalRank(b) || semanticRank(a) - semanticRank(b) || compareNames(a, b))
    .map(([name, score]): CatalogHit => ({ name, score: Math.round(score * 1e6) / 1e6, exact: false, coverage: lexical.find((hit) => hit.name === name)?.coverage ?? 0 }));
  return [...exact, ...ranked].slice(0, Math.max(0, limit));
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
