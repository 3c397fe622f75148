/**
 * Every size and default of the memory layer, in one place (the runtime-wide
 * ones are in src/protocol/limits.ts). Chosen against Workers KV's limits: keys
 * ≤ 512 bytes, metadata ≤ 1,024 bytes, 1 write/s per key, ≤ 1,000 keys per
 * list page and ≤ 1,000 KV operations per invocation.
 */
export const MEMORY_LIMITS = {
  /** One memory's text. Memories are short facts; a document belongs in an artifact. */
  textChars: 1_200,
  /** A session or task id: what a conversation or task calls itself. */
  scopeIdChars: 128,
  /** `source`: who or what wrote the memory. */
  sourceChars: 64,
  /** Memories in one namespace level; a write beyond it is refused (422). */
  perLevel: 20_000,
  /** Memories in one `POST /v1/memories/batch`. */
  batchItems: 100,
  /** A search query's text (a turn passes the user's message, which may be longer: it is cut here). */
  queryChars: 4_000,
  /** Distinct query terms scored; the rest of a very long query is ignored. */
  queryTerms: 128,
  /** Search results per request. */
  searchResults: 50,
  /** Memories per page of `GET /v1/memories`. */
  listPage: 100,
  /** Metadata is capped at 1,024 bytes by KV; this leaves room for its framing. */
  metadataBytes: 1_000,
  /** Values fetched to complete the term vectors of long memories while loading a level. */
  termFetchesPerLoad: 200,
  /**
   * How long a worker isolate reuses a level's listing before listing KV again.
   * Writes and deletes made through the same isolate update it at once; others
   * show up within this time, which is shorter than KV's own propagation (≥ 60 s).
   */
  listingTtlMs: 20_000,
  /**
   * Memories held in one isolate's listing cache, across all levels: about
   * 1.5 KB of heap each (terms, sketch), so ~40 MB of the isolate's 128 MB at most.
   */
  cachedEntries: 25_000,
  /** Memory texts one isolate keeps (a text never changes once written): at most ~6 MB. */
  cachedTexts: 5_000,
} as const;

/** Defaults of the read gate; a turn or a search may override them. */
export const MEMORY_DEFAULTS = {
  /** Tokens the memory fence may take in a turn, fence lines included. */
  budgetTokens: 800,
  /** Recency: a memory's weight halves every this many hours since it was written or last reinforced. */
  halfLifeHours: 30 * 24,
  /**
   * Minimum relevance (0-1, the share of the query's IDF weight a memory
   * matches, see score.ts) for a memory to be considered at all.
   */
  threshold: 0.1,
  /** Near-duplicates: Jaccard similarity of word-bigram shingles at or above this reinforces instead of adding. */
  duplicateJaccard: 0.8,
  searchResults: 10,
} as const;
