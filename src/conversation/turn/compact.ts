import type { TurnAssembly } from "../../core/assemble";
import { usageOf } from "../../core/assemble";
import { ok, type Result } from "../../core/problem";
import { reinjectionCosts, renderReminder } from "../../core/reminder";
import { countTokens } from "../../core/tokens";
import { summariseSafely } from "../../history/summarise";
import { withCompactionHooks } from "../../hooks/compaction";
import type { RenderedHistory } from "../../history/view";
import { checkWholeView } from "../capacity";
import { offersHistorySearch } from "../history-search-store";
import type { CompactionReport, HistoryView } from "../history";
import { assembleView, type AssemblyDraft } from "./view-assembly";
import { withHistorySearch, type Offered } from "./offer-tools";
import type { Staged } from "./stage";

export interface Compacted {
  view: HistoryView;
  rendered: RenderedHistory;
  /** The model input on the view after any compaction; its refusal is the assemble stage's to return. */
  assembled: Result<TurnAssembly>;
  compaction: CompactionReport | undefined;
  /** The tool list: the tools stage's, with search_history added when this turn's compaction wrote the first summary. */
  offer: Offered["offer"];
  hasTools: boolean;
}

/**
 * The history this turn reads: the view that fits, assembled once to see what the model would read; when that
 * passes the policy's trigger, a compaction (old images, old results, a summary) is committed first and the view
 * read again. A continuation's user message and the tool work after it are this turn's: read whatever the budget.
 * The first summary also brings search_history into the tool list, on this turn, whose prefix changes anyway.
 */
export async function compact(d: AssemblyDraft): Promise<Result<Staged<Compacted>>> {
  const { scope, maxTokens, continuation, now, observations, nonce } = d;
  const { history } = d;
  const store = scope.db;
  // Without a token bound the model reads the whole view: refused before it is loaded when no request may read that much.
  const readable = maxTokens === undefined ? checkWholeView(store.messages, history.coveredThrough()) : ok(true);
  if (!readable.ok) return readable;
  const loadFrom = continuation ? store.messages.lastUserSeq() : undefined;
  let view = history.view({ maxTokens, loadFrom });
  let rendered = history.render(view, now);
  let assembled = assembleView(d, view, rendered);
  let compaction: CompactionReport | undefined;
  let offered = { offer: d.offer, hasTools: d.hasTools };
  // A summary that covers a context's injection shows the context again on this message (a continuation shows none),
  // inside a <system_reminder> that the message may not carry yet.
  // Both read only when a summary is planned: most turns are far under the trigger and plan nothing.
  let costs: ReturnType<typeof reinjectionCosts> | undefined;
  let wrapper: number | undefined;
  const first = assembled;
  const reinjected = (throughSeq: number) => {
    if (continuation) return 0;
    const tokens = (costs ??= reinjectionCosts(store.ledger.list(), observations, new Set(rendered.seqs), nonce)).reduce((total, c) => total + (c.seq <= throughSeq ? c.tokens : 0), 0);
    return tokens > 0 ? tokens + (wrapper ??= first.ok && first.value.envelope.injection.length === 0 ? countTokens(renderReminder([""], nonce)) + 2 : 0) : 0;
  };
  const plan = (input: typeof assembled) => (input.ok ? history.prepare(view, rendered, input.value.requestedTokens - usageOf(rendered.history), d.policy, { protectFromSeq: loadFrom, reinjected }) : null);
  let planned = plan(assembled);
  // The first summary brings search_history (its definition, its block in the system message) into this very input:
  // the plan counts them.
  const joining = d.listed.searchHistory ? null : withHistorySearch(d);
  if (planned?.plan.summarise && joining) planned = plan(assembleView({ ...d, ...joining }, view, rendered)) ?? planned;
  if (planned) {
    const prepared = planned;
    await history.keepClearedResults(prepared);
    const draft = prepared.request ? await summariseSafely(withCompactionHooks(scope.models.summariser(d.policy), d.hooks, d.nonce), prepared.request) : null;
    compaction = store.transaction(() => history.commit(prepared, draft, "auto", now.toISOString(), d.turnId)) ?? undefined;
    if (joining && offersHistorySearch(d.agent, history.everCovered())) offered = joining;
    view = history.view({ maxTokens, loadFrom });
    rendered = history.render(view, now);
    assembled = assembleView({ ...d, ...offered }, view, rendered);
  }
  const joined = offered.offer !== d.offer;
  return ok({
    out: { view, rendered, assembled, compaction, ...offered },
    decided: {
      loaded: view.stored.length,
      summary: view.summary !== null,
      compacted: compaction !== undefined,
      ...(compaction ? { summarised: compaction.summary?.coverage.messages ?? 0, cleared: compaction.cleared.length } : {}),
      ...(joined ? { offered: ["search_history"] } : {}),
    },
  });
}
