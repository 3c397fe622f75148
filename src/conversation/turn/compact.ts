import type { TurnAssembly } from "../../core/assemble";
import { usageOf } from "../../core/assemble";
import { ok, type Result } from "../../core/problem";
import { reinjectionCosts } from "../../core/reminder";
import { summariseSafely } from "../../history/summarise";
import { withCompactionHooks } from "../../hooks/compaction";
import type { RenderedHistory } from "../../history/view";
import { checkWholeView } from "../capacity";
import type { CompactionReport, HistoryView } from "../history";
import { assembleView, type AssemblyDraft } from "./assemble";
import type { Staged } from "./stage";

export interface Compacted {
  view: HistoryView;
  rendered: RenderedHistory;
  /** The model input on the view after any compaction; its refusal is the assemble stage's to return. */
  assembled: Result<TurnAssembly>;
  compaction: CompactionReport | undefined;
}

/**
 * The history this turn reads: the view that fits, assembled once to see what the model would read; when that
 * passes the policy's trigger, a compaction (old images, old results, a summary) is committed first and the view
 * read again. A continuation's user message and the tool work after it are this turn's: read whatever the budget.
 */
export async function compact(d: AssemblyDraft): Promise<Result<Staged<Compacted>>> {
  const { deps, maxTokens, continuation, now, observations, nonce } = d;
  const { store, history } = deps;
  // Without a token bound the model reads the whole view: refused before it is loaded when no request may read that much.
  const readable = maxTokens === undefined ? checkWholeView(store, history.coveredThrough()) : ok(true);
  if (!readable.ok) return readable;
  const loadFrom = continuation ? store.lastUserSeq() : undefined;
  let view = history.view({ maxTokens, loadFrom });
  let rendered = history.render(view, now);
  let assembled = assembleView(d, view, rendered);
  let compaction: CompactionReport | undefined;
  // A summary that covers a context's injection shows the context again on this message (a continuation shows none).
  let costs: ReturnType<typeof reinjectionCosts> | undefined;
  const reinjected = (throughSeq: number) =>
    continuation ? 0 : (costs ??= reinjectionCosts(store.ledger(), observations, new Set(rendered.seqs), nonce)).reduce((total, c) => total + (c.seq <= throughSeq ? c.tokens : 0), 0);
  const planned = assembled.ok ? history.prepare(view, rendered, assembled.value.requestedTokens - usageOf(rendered.history), d.policy, { protectFromSeq: loadFrom, reinjected }) : null;
  if (planned) {
    await history.keepClearedResults(planned);
    const draft = planned.request ? await summariseSafely(withCompactionHooks(deps.summariser(d.policy), d.hooks, d.nonce), planned.request) : null;
    compaction = store.transaction(() => history.commit(planned, draft, "auto", now.toISOString(), d.turnId)) ?? undefined;
    view = history.view({ maxTokens, loadFrom });
    rendered = history.render(view, now);
    assembled = assembleView(d, view, rendered);
  }
  return ok({
    out: { view, rendered, assembled, compaction },
    decided: { loaded: view.stored.length, summary: view.summary !== null, compacted: compaction !== undefined, ...(compaction ? { summarised: compaction.summary?.coverage.messages ?? 0, cleared: compaction.cleared.length } : {}) },
  });
}
