/**
 * The model input for one view of the history, as compaction plans it (compact.ts) and the final assembly reads it
 * (assemble.ts): one module both import, so the two stages never import each other.
 */
import { assembleTurn, type TurnAssembly } from "../../core/assemble";
import { systemMessage } from "../../core/capabilities";
import type { Result } from "../../core/problem";
import type { ImagePart } from "../../protocol/messages";
import type { RenderedHistory } from "../../history/view";
import type { HistoryView } from "../history";
import type { InjectedEntry } from "../store";
import type { Admitted } from "./admit";
import type { Identified } from "./identify";
import type { Loaded } from "./load";
import type { Offered } from "./offer-tools";
import type { Pulled } from "./pull";
import type { Recalled } from "./recall";
import type { Reminded } from "./remind";
import type { Ran } from "./run-tools";

/** What assembling reads: everything the stages before compaction added. */
export type AssemblyDraft = Loaded & Pulled & Ran & Admitted & Recalled & Identified & Offered & Reminded;

/**
 * The model input for one view of the history. A context whose injection the budget leaves out of view is out of the
 * model's sight: it is injected again in this turn. That grows the new message and may push more history out, so
 * repeat; each pass drops a ledger entry.
 */
export function assembleView(d: AssemblyDraft, view: HistoryView, rendered: RenderedHistory): Result<TurnAssembly> {
  let ledger = d.scope.db.ledger.list();
  for (;;) {
    const assembled = assembleOnce(d, view, rendered, ledger);
    if (!assembled.ok) return assembled;
    const shown = new Set(assembled.value.historyShown.map((index) => rendered.seqs[index]));
    const inView = ledger.filter((entry) => shown.has(entry.messageSeq));
    if (inView.length === ledger.length) return assembled;
    ledger = inView;
  }
}

function assembleOnce(d: AssemblyDraft, view: HistoryView, rendered: RenderedHistory, ledger: readonly InjectedEntry[]): Result<TurnAssembly> {
  // This message's images are always visible; earlier ones only until a compaction hides them (policy.keepImages).
  const images: ImagePart[] = (d.body.images ?? []).map((image_url) => ({ type: "image_url", image_url }));
  // Any conversation can receive app context (attachments, pushed resources): that block never comes and goes. The
  // earlier-messages block comes with search_history: with the first summary (on a compaction turn, whatever windows
  // turns name) or clear, or from the first turn when the agent asks.
  const runtime = new Set(d.offer.offered.filter((t) => t.source === "runtime").map((t) => t.name));
  const enabled = {
    tools: d.hasTools,
    catalog: runtime.has("search_tools"),
    skills: runtime.has("read_skill"),
    browse: runtime.has("read_context"),
    delegate: runtime.has("delegate"),
    delegated: d.scope.meta.parent !== null,
    searchHistory: runtime.has("search_history"),
  };
  const systemPrompt = systemMessage(d.identity, { ...enabled, contexts: true, memory: d.agent.memory }, [d.skillsMenu.text, linkedNote(d, view)]);
  const notes = d.reminders.map((r) => r.text).join("\n\n");
  return assembleTurn({
    turnId: d.turnId,
    conversationId: d.scope.meta.conversationId,
    now: d.now,
    systemPrompt,
    toolTokens: d.offer.tokens,
    personaNote: notes || undefined,
    stapledNotes: d.stapled.map((r) => r.text).join("\n\n") || undefined,
    history: [...rendered.history, ...d.admitted.messages],
    userText: d.typed?.text,
    userImages: images,
    currentFrom: rendered.history.length,
    ledger,
    observations: d.observations,
    sections: d.extra.sections,
    maxTokens: d.maxTokens,
    nonce: d.nonce,
    answersRequest: d.continuation,
    summaryFirst: view.summary !== null,
  });
}

/**
 * Skills the model read whose manuals a summary has replaced: they stay linked, and the model is told it can read them
 * again. Only a compaction changes this line, so the prefix stays stable between compactions.
 */
function linkedNote(d: AssemblyDraft, view: HistoryView): string {
  const through = view.summary?.throughSeq ?? 0;
  const offered = new Set(d.toolbox.skills.map((s) => s.name));
  const summarised = d.linked.filter((l) => l.seq <= through && offered.has(l.name)).map((l) => l.name);
  return summarised.length ? `Skills you read earlier (their manuals were summarised; read_skill opens them again): ${summarised.join(", ")}.` : "";
}
