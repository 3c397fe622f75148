/**
 * The `compaction` hooks (docs/hooks.md): a custom summariser. When a compaction folds history into a summary, each
 * hook in turn may write it; the first summary given is used (past the trust boundary, and held to the same token
 * bound as any summariser's). A hook that continues, fails or does not answer leaves it to the runtime's summariser.
 */
import { countTokens } from "../core/tokens";
import type { Summariser, SummaryDraft, SummaryRequest } from "../history/summary";
import { admitText } from "../protect";
import { hooksAt, runChain, type HookScope } from "./chain";

export function withCompactionHooks(summariser: Summariser, scope: HookScope, nonce: string | null): Summariser {
  if (hooksAt(scope.hooks, "compaction").length === 0) return summariser;
  return {
    name: summariser.name,
    async summarise(request: SummaryRequest): Promise<SummaryDraft> {
      // The bound is in tokens, as the runtime counts them; four characters a token is a guide for English prose.
      const { maxTokens } = request;
      const outcome = await runChain(scope, "compaction", null as string | null, {
        payload: () => ({ messages: request.messages.map((m) => ({ role: m.role, text: m.content })), previousSummary: request.previous?.text ?? null, maxTokens, maxChars: maxTokens * 4 }),
        apply: (state, decision) => (decision.action === "summary" ? { state: decision.summary, stop: true } : { state }),
        closed: () => ({ action: "continue" }),
      });
      const written = outcome.state === null ? null : admitText(outcome.state, { nonce }).text;
      if (written !== null && countTokens(written) <= request.maxTokens) return { text: written, state: null, loss: [`written by ${outcome.stoppedBy!.hook.id}`] };
      const draft = await summariser.summarise(request);
      return written === null ? draft : { ...draft, loss: [`${outcome.stoppedBy!.hook.id}'s summary exceeded ${request.maxTokens} tokens; ${summariser.name} summarised instead`, ...draft.loss] };
    },
  };
}
