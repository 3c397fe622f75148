import type { LedgerChange, LedgerEntry, Observation } from "./ledger";
import { markerTitle } from "./neutralize";
import { openTag } from "./runtime-tag";
import { countTokens } from "./tokens";

const LABEL = { context: "Context", resource: "Resource" } as const;

/** One change as the model reads it: a one-line marker, then the content (which passed the trust boundary when it came in). */
export function renderChange(change: LedgerChange, nonce?: string | null): string {
  const label = LABEL[change.kind];
  switch (change.change) {
    case "first":
      return `[${label}: ${markerTitle(change.title, 200, nonce)}]\n${change.content}`;
    case "updated":
      return `[${label} updated: ${markerTitle(change.title, 200, nonce)}]\n${change.content}`;
    case "removed":
      return `[${label} removed: ${markerTitle(change.key, 600, nonce)}]`;
  }
}

/**
 * What showing each context again would cost, by the message that showed it:
 * for those in the model's view (`shown`) still observed at the version the
 * model read. Those not in view, or changed, are shown this turn anyway.
 */
export function reinjectionCosts(
  ledger: readonly (LedgerEntry & { messageSeq: number })[],
  observed: readonly Observation[],
  shown: ReadonlySet<number>,
  nonce?: string | null,
): { seq: number; tokens: number }[] {
  return ledger.flatMap((entry) => {
    const now = observed.find((o) => o.kind === entry.kind && o.key === entry.key);
    if (!shown.has(entry.messageSeq) || now?.status !== "present" || now.version !== entry.version) return [];
    return [{ seq: entry.messageSeq, tokens: countTokens(`\n\n${renderChange({ ...now, change: "first" }, nonce)}`) }];
  });
}

/** The `<system_reminder>` appendix, or "" when there is nothing to say. */
export function renderReminder(parts: readonly string[], nonce?: string | null): string {
  return parts.length === 0 ? "" : `${openTag("system_reminder", nonce)}\n${parts.join("\n\n")}\n</system_reminder>`;
}

/** The user's text, then each non-empty appendix block, a blank line apart. */
export function withAppendix(userText: string, blocks: readonly string[]): string {
  return [userText, ...blocks.filter((b) => b !== "")].join("\n\n");
}

// Every appendix block opens with one of the runtime's tags, which the user's own (neutralised) text cannot contain.
const APPENDIX_START = /\n\n<(persona_switch|memory_fence|task_state|system_reminder)[ >]/;

/** What the user typed, without the appendix the runtime stapled to it. */
export function withoutAppendix(storedText: string): string {
  const at = storedText.search(APPENDIX_START);
  return at === -1 ? storedText : storedText.slice(0, at);
}
