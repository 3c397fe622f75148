/**
 * What a turn calls: the scope's namespace chain (its task, its session, its
 * user: nothing else), gated by relevance, ranked by relevance, recency,
 * reinforcement and trust, packed into the memory budget and rendered as a
 * `<memory_fence>`.
 */
import { countTokens } from "../core/tokens";
import { entryHeader, FENCE_OVERHEAD_TOKENS, renderEntry, renderMemoryFence, type FenceMemory } from "./fence";
import type { Level, Scope } from "./keys";
import { MEMORY_DEFAULTS } from "./limits";
import type { IndexEntry } from "./record";
import { packByBudget, type Scored } from "./score";
import { MemoryStore } from "./store";

export interface RecallOptions {
  /** Tokens the whole fence may take (default 800). */
  budgetTokens?: number;
  halfLifeHours?: number;
  threshold?: number;
  now?: number;
  /** The reading conversation's nonce: a memory may not carry it. */
  nonce?: string | null;
}

export interface RecallResult {
  /** The rendered `<memory_fence>` block, or "" when no memory was selected. */
  fence: string;
  /** Best first, each with its line of the fence. */
  selected: { id: string; score: number; relevance: number; tokens: number; level: Level; entry: string }[];
  /**
   * Memories that matched the query but were left out, best first: below the
   * relevance threshold, or no room left in the budget. Memories that share no
   * term with the query are not listed (see `candidates`); at most 100 are.
   */
  omitted: { id: string; reason: "low_relevance" | "budget" }[];
  /** Tokens of `fence`. */
  tokens: number;
  /** Memories in the scope's namespace chain, all of which were scored. */
  candidates: number;
  /** Omitted memories in all, when more than are listed. */
  omittedTotal: number;
  /** Set when the memory store could not be read; the turn goes on without memory. */
  error?: string;
}

const OMITTED_REPORTED = 100;

/**
 * The memory block for a turn. Reads the scope's chain (its task, its
 * session, its user: nothing else), keeps the memories relevant to `query`,
 * ranks them by relevance, recency, reinforcement and trust, and packs them
 * into `budgetTokens`. Never throws: a store failure yields an empty fence and
 * `error`.
 */
export async function recallForTurn(kv: KVNamespace, scope: Scope, query: string, options: RecallOptions = {}): Promise<RecallResult> {
  const budget = options.budgetTokens ?? MEMORY_DEFAULTS.budgetTokens;
  try {
    const store = new MemoryStore(kv);
    const { relevant, belowThreshold, candidates } = await store.rank(scope, query, options);
    const cost = (s: Scored<IndexEntry>) => countTokens(entryHeader(fenceFields(s.item))) + s.item.tokens + 1;
    const packed = packByBudget(relevant, budget, cost, FENCE_OVERHEAD_TOKENS);
    const texts = await store.texts(packed.selected.map((s) => s.item));
    // A memory deleted since the listing is simply gone; nothing else takes its place this turn.
    let shown = packed.selected.filter((s) => texts.has(s.item.key));
    const skipped = [...packed.skipped];
    let fence = renderMemoryFence(shown.map((s) => ({ ...fenceFields(s.item), text: texts.get(s.item.key)! })), options.nonce);
    let tokens = countTokens(fence);
    // The per-entry costs are exact up to how pieces meet at line joins; the rendered total is what must fit.
    while (tokens > budget && shown.length > 0) {
      skipped.unshift(shown.pop()!);
      fence = renderMemoryFence(shown.map((s) => ({ ...fenceFields(s.item), text: texts.get(s.item.key)! })), options.nonce);
      tokens = countTokens(fence);
    }
    const omittedAll = [
      ...skipped.map((s) => ({ id: s.item.id, reason: "budget" as const })),
      ...belowThreshold.map((s) => ({ id: s.item.id, reason: "low_relevance" as const })),
    ];
    return {
      fence,
      selected: shown.map((s) => {
        const entry = renderEntry({ ...fenceFields(s.item), text: texts.get(s.item.key)! }, options.nonce);
        return { id: s.item.id, score: s.score, relevance: s.relevance, tokens: countTokens(entry), level: s.item.level, entry };
      }),
      omitted: omittedAll.slice(0, OMITTED_REPORTED),
      tokens,
      candidates,
      omittedTotal: omittedAll.length,
    };
  } catch (error) {
    return {
      fence: "",
      selected: [],
      omitted: [],
      tokens: 0,
      candidates: 0,
      omittedTotal: 0,
      error: `memory unavailable: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

function fenceFields(e: IndexEntry): Omit<FenceMemory, "text"> {
  return { level: e.level, trust: e.trust, source: e.source, createdAt: e.createdAt, reinforcedAt: e.reinforcedAt };
}
