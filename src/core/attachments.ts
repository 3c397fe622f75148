/**
 * What a conversation has attached this turn: the agent's declared
 * `attachedContexts` (the spine) plus what the user attached at runtime,
 * deduplicated so a context is never pulled or injected twice.
 */
export interface ContextRequest {
  /** Ledger key: `app:provider` for a provider's current state, `app:provider#itemId` for a picked item. */
  key: string;
  ref: string;
  itemId?: string;
}

export function contextKey(ref: string, itemId?: string): string {
  return itemId === undefined ? ref : `${ref}#${itemId}`;
}

export function mergeAttachments(
  agentDefaults: readonly string[],
  runtime: readonly { ref: string; itemId?: string | undefined }[],
): ContextRequest[] {
  const merged = new Map<string, ContextRequest>();
  for (const ref of agentDefaults) merged.set(ref, { key: ref, ref });
  for (const a of runtime) {
    const key = contextKey(a.ref, a.itemId);
    if (!merged.has(key)) merged.set(key, a.itemId === undefined ? { key, ref: a.ref } : { key, ref: a.ref, itemId: a.itemId });
  }
  return [...merged.values()];
}

/** The apps a conversation acknowledges: they may push session resources into it. */
export function acknowledgedApps(requests: readonly ContextRequest[]): Set<string> {
  return new Set(requests.map((r) => r.ref.slice(0, r.ref.indexOf(":"))));
}
