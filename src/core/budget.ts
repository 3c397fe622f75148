/**
 * Token budgets by priority class. Over budget, the runtime gives up whole
 * items (a history group, a memory, a context, a tool call with all its
 * results) from the lowest class first and, within a class, oldest first.
 * Class 0 (identity and the current user message) is never given up.
 */
import type { BudgetKind, Priority, Truncation } from "../protocol/evidence";

export const PRIORITY = { identity: 0, current: 1, memory: 2, history: 3 } as const satisfies Record<string, Priority>;

export interface BudgetItem {
  id: string;
  kind: BudgetKind;
  priority: Priority;
  /** Lower is older: within a class the oldest is given up first. */
  age: number;
  tokens: number;
}

export type BudgetFit =
  | { ok: true; kept: Set<string>; truncations: Truncation[]; tokens: number }
  | { ok: false; required: number };

/** The order items are given up in: lowest class (highest number) first, then oldest first. */
export function dropOrder(items: readonly BudgetItem[]): BudgetItem[] {
  return items
    .filter((i) => i.priority !== PRIORITY.identity)
    .sort((a, b) => b.priority - a.priority || a.age - b.age || a.id.localeCompare(b.id));
}

/**
 * Keeps the most valuable items within `maxTokens`, giving up items in
 * `dropOrder` until the rest fits. `overhead` is what the kept set costs beyond
 * its items (wrappers, seams); it is re-measured after every item given up.
 * Fails, naming the minimum, when class 0 alone does not fit.
 */
export function fitBudget(items: readonly BudgetItem[], maxTokens: number, overhead: (kept: ReadonlySet<string>) => number = () => 0): BudgetFit {
  const kept = new Set(items.map((i) => i.id));
  let tokens = items.reduce((sum, i) => sum + i.tokens, 0);
  const truncations: Truncation[] = [];
  for (const item of dropOrder(items)) {
    if (tokens + overhead(kept) <= maxTokens) break;
    kept.delete(item.id);
    tokens -= item.tokens;
    truncations.push({ id: item.id, kind: item.kind, priority: item.priority, tokens: item.tokens });
  }
  const total = tokens + overhead(kept);
  return total <= maxTokens ? { ok: true, kept, truncations, tokens: total } : { ok: false, required: total };
}
