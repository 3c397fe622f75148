/**
 * The read gate: which memories a turn reads. Pure.
 *
 * 1. Relevance: BM25 of each memory against the query's terms, with IDF over
 *    the candidate set, divided by the query's total IDF weight, so 1 means
 *    "matches every query term about as often as an average memory would" and
 *    the threshold is a share of the query's information. Below the threshold a
 *    memory is not considered at all.
 * 2. Weight: relevance × recency (halves every `halfLifeHours` since the memory
 *    was written or last reinforced) × reinforcement (log-scaled) × trust
 *    (curated outranks captured).
 * 3. Packing: greedily by weight into a token budget; a memory that does not fit
 *    is skipped and smaller ones after it may still fit.
 *
 * Ties break deterministically: weight, then relevance, then the more specific
 * level, then id.
 */
import type { Level } from "./keys";
import { MEMORY_DEFAULTS, MEMORY_LIMITS } from "./limits";
import type { Trust } from "./record";
import { terms } from "./text";

export interface Scorable {
  id: string;
  level: Level;
  terms: ReadonlyMap<string, number>;
  /** Index terms in the whole memory. */
  length: number;
  createdAt: number;
  reinforcedAt?: number;
  reinforcement: number;
  trust: Trust;
}

export interface ScoreOptions {
  threshold?: number;
  halfLifeHours?: number;
  now?: number;
}

export interface Scored<T extends Scorable> {
  item: T;
  /**
   * The share of the query's IDF weight this memory matches: about 1 when it has
   * every query term once at average length; above 1 for repeated terms in a
   * short memory (BM25 saturates at k1 + 1 = 2.2).
   */
  relevance: number;
  /** 0-1: recency decay. */
  recency: number;
  /** What the ranking and the packing go by. */
  score: number;
}

export const BM25 = { k1: 1.2, b: 0.75 } as const;
export const TRUST_WEIGHT: Record<Trust, number> = { curated: 1, captured: 0.6 };
const LEVEL_ORDER: Record<Level, number> = { task: 0, session: 1, user: 2 };

/** The query's distinct index terms, in order of first appearance, at most `MEMORY_LIMITS.queryTerms`. */
export function queryTerms(query: string): string[] {
  return [...new Set(terms(query.slice(0, MEMORY_LIMITS.queryChars)))].slice(0, MEMORY_LIMITS.queryTerms);
}

export function recencyWeight(item: Pick<Scorable, "createdAt" | "reinforcedAt">, now: number, halfLifeHours: number): number {
  const since = Math.max(item.createdAt, item.reinforcedAt ?? 0);
  const ageHours = Math.max(0, now - since) / 3_600_000;
  return halfLifeHours > 0 ? Math.pow(0.5, ageHours / halfLifeHours) : 1;
}

export function reinforcementWeight(reinforcement: number): number {
  return 1 + 0.3 * Math.log(Math.max(1, reinforcement));
}

/**
 * Scores every candidate against the query. `relevant` holds those at or above
 * the threshold, best first; `belowThreshold` those that matched some query term
 * but not enough. Candidates that match no term appear in neither.
 */
export function rankMemories<T extends Scorable>(
  query: string | readonly string[],
  candidates: readonly T[],
  options: ScoreOptions = {},
): { relevant: Scored<T>[]; belowThreshold: Scored<T>[] } {
  const threshold = options.threshold ?? MEMORY_DEFAULTS.threshold;
  const halfLife = options.halfLifeHours ?? MEMORY_DEFAULTS.halfLifeHours;
  const now = options.now ?? Date.now();
  const q = typeof query === "string" ? queryTerms(query) : [...new Set(query)];
  if (q.length === 0 || candidates.length === 0) return { relevant: [], belowThreshold: [] };

  const df = new Map<string, number>(q.map((t) => [t, 0]));
  let totalLength = 0;
  for (const c of candidates) {
    totalLength += c.length;
    for (const t of q) if (c.terms.has(t)) df.set(t, df.get(t)! + 1);
  }
  const n = candidates.length;
  const avgLength = totalLength / n || 1;
  const idf = new Map(q.map((t) => [t, Math.log(1 + (n - df.get(t)! + 0.5) / (df.get(t)! + 0.5))]));
  const ideal = [...idf.values()].reduce((a, b) => a + b, 0);

  const relevant: Scored<T>[] = [];
  const belowThreshold: Scored<T>[] = [];
  for (const c of candidates) {
    let bm25 = 0;
    const norm = BM25.k1 * (1 - BM25.b + (BM25.b * c.length) / avgLength);
    for (const t of q) {
      const tf = c.terms.get(t);
      if (!tf) continue;
      bm25 += idf.get(t)! * ((tf * (BM25.k1 + 1)) / (tf + norm));
    }
    if (bm25 <= 0) continue;
    const relevance = bm25 / ideal;
    const recency = recencyWeight(c, now, halfLife);
    const scored = { item: c, relevance, recency, score: relevance * recency * reinforcementWeight(c.reinforcement) * TRUST_WEIGHT[c.trust] };
    (relevance >= threshold ? relevant : belowThreshold).push(scored);
  }
  relevant.sort(byRank);
  belowThreshold.sort(byRank);
  return { relevant, belowThreshold };
}

export function byRank<T extends Scorable>(a: Scored<T>, b: Scored<T>): number {
  return (
    b.score - a.score ||
    b.relevance - a.relevance ||
    LEVEL_ORDER[a.item.level] - LEVEL_ORDER[b.item.level] ||
    (a.item.id < b.item.id ? -1 : a.item.id > b.item.id ? 1 : 0)
  );
}

/**
 * Greedy packing in rank order: take each memory whose cost still fits, skip
 * (and report) the ones that do not. `overhead` is paid once, by the first
 * memory taken (the fence's own lines).
 */
export function packByBudget<T>(ranked: readonly T[], budget: number, cost: (item: T) => number, overhead = 0): { selected: T[]; skipped: T[]; tokens: number } {
  const selected: T[] = [];
  const skipped: T[] = [];
  let used = 0;
  for (const item of ranked) {
    const c = cost(item) + (selected.length === 0 ? overhead : 0);
    if (used + c <= budget) {
      selected.push(item);
      used += c;
    } else skipped.push(item);
  }
  return { selected, skipped, tokens: used };
}
