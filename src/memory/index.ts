/** The memory layer: KV store, write and read gates, scoring and the fence. */
export { recallForTurn, type RecallOptions, type RecallResult } from "./recall";
export { renderMemoryFence, wrapMemoryFence, fenceText, MEMORY_FENCE_OPEN, MEMORY_FENCE_CLOSE, MEMORY_FENCE_PREAMBLE, type FenceMemory } from "./fence";
export { MemoryStore, clearListingCache, type StoredMemory, type WriteItem, type WriteOutcome } from "./store";
export { gateWrite, similarity, isNearDuplicate, type Refusal, type RefusalReason, type RefusalSignal } from "./write-gate";
export { rankMemories, packByBudget, recencyWeight, reinforcementWeight, type Scorable, type Scored } from "./score";
export { chainOf, levelPrefix, memoryKey, namespaceFor, type Level, type Namespace, type Scope } from "./keys";
export { MEMORY_DEFAULTS, MEMORY_LIMITS } from "./limits";
