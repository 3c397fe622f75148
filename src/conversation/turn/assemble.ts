import { assembleTurn, type TurnAssembly } from "../../core/assemble";
import { systemMessage } from "../../core/capabilities";
import type { ContextEnvelope } from "../../protocol/evidence";
import { HookPoint } from "../../protocol/hooks";
import { PRIORITY } from "../../core/budget";
import { ok, type Result } from "../../core/problem";
import { auditRecords } from "../../protect";
import type { ImagePart } from "../../protocol/messages";
import type { RenderedHistory } from "../../history/view";
import type { HistoryView } from "../history";
import type { InjectedEntry } from "../store";
import { checkTurnFits } from "../capacity";
import type { Admitted } from "./admit";
import type { Compacted } from "./compact";
import type { StoredTurnResult } from "./options";
import type { Identified } from "./identify";
import type { Loaded } from "./load";
import type { Offered } from "./offer-tools";
import type { Pulled } from "./pull";
import type { Recalled } from "./recall";
import type { Reminded } from "./remind";
import type { Ran } from "./run-tools";
import type { Staged } from "./stage";

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

export interface Assembled {
  assembly: TurnAssembly;
  result: StoredTurnResult;
}

/**
 * The final model input and its evidence. Refused before anything is stored: an answer too large to return, or a
 * conversation with no room for this turn.
 */
export async function assemble(d: AssemblyDraft & Compacted): Promise<Result<Staged<Assembled>>> {
  if (!d.assembled.ok) return d.assembled;
  const assembly = d.assembled.value;
  const { scope, view, extra } = d;
  const fits = checkTurnFits(scope.db.messages, [...d.admitted.messages, ...(assembly.userMessage ? [assembly.userMessage] : [])], assembly.messages);
  if (!fits.ok) return fits;
  const memoryMissing = extra.memoryError ? [{ id: "memory", reason: "error" as const, detail: extra.memoryError, severity: "warning" as const }] : [];
  // History the budget could never hold was not even loaded; the evidence still says it was given up.
  const unread = view.unread.messages ? [{ id: `history:before:${view.stored[0]?.seq ?? 0}`, kind: "history" as const, priority: PRIORITY.history, tokens: view.unread.tokens }] : [];
  const hits = [...d.contextHits, ...d.personaHits.map((hit) => ({ ...hit, id: "persona" })), ...d.toolHits, ...d.stapledHits];
  const contextRedactions = await Promise.all(hits.map(async (hit) => ({ id: hit.id, ...(await auditRecords([hit], d.auditKey))[0]! })));
  const typedRedactions = d.typed?.redactions ?? [];
  const corrective = [...d.reminders, ...d.stapled].flatMap((r) => (r.kind !== "persona" && r.reason !== undefined ? [{ kind: r.kind, reason: r.reason }] : []));
  const envelope: ContextEnvelope = {
    ...assembly.envelope,
    budget: { ...assembly.envelope.budget, truncations: [...unread, ...assembly.envelope.budget.truncations] },
    missing: [...assembly.envelope.missing, ...memoryMissing],
    selection: { ...assembly.envelope.selection, omitted: [...assembly.envelope.selection.omitted, ...extra.omitted] },
    tools: {
      unanswered: d.unanswered,
      results: d.admitted.reports,
      ...(d.offer.offered.length ? { offered: d.offer.offered } : {}),
      ...(d.toolRun.ran.length ? { ran: d.toolRun.ran } : {}),
      ...(d.toolRun.loaded.length ? { loaded: d.toolRun.loaded } : {}),
      ...(d.toolRun.linked.length ? { linked: d.toolRun.linked } : {}),
      ...(d.toolRun.searched.length ? { searched: d.toolRun.searched } : {}),
      ...(d.delegated.length ? { delegated: d.delegated } : {}),
      ...(d.toolbox.skills.length ? { skillsMenu: { tokens: d.skillsMenu.tokens, budgetTokens: d.menuBudget, cut: d.skillsMenu.cut } } : {}),
    },
    ...(typedRedactions.length ? { message: { redactions: typedRedactions } } : {}),
    ...(corrective.length ? { reminders: corrective } : {}),
    ...(contextRedactions.length ? { contexts: { redactions: contextRedactions } } : {}),
    history: { summaryThroughSeq: view.summary?.throughSeq ?? null, loadedFromSeq: view.stored[0]?.seq ?? null, stubs: view.stubs.size, imagesHiddenThroughSeq: view.imagesHiddenThrough ?? 0 },
    ...(d.compaction ? { compaction: d.compaction } : {}),
    ...(d.hooks.hooks.length || d.hooks.log.length ? { hooks: { points: HookPoint.options.filter((p) => d.hooks.hooks.some((h) => h.point === p)), calls: d.hooks.log } } : {}),
  };
  const result: StoredTurnResult = {
    turnId: d.turnId,
    conversationId: scope.meta.conversationId,
    agent: { id: d.agent.id, name: d.agent.name, tools: d.agent.tools },
    // Absent when there is none: model APIs refuse an empty `tools`.
    ...(d.offer.tools.length ? { tools: d.offer.tools } : {}),
    usage: assembly.usage,
    missing: [...assembly.missing, ...memoryMissing],
    envelope,
  };
  return ok({
    out: { assembly, result },
    decided: { tokens: assembly.usage.total, messages: assembly.messages.length, truncations: envelope.budget.truncations.length, standIns: assembly.standIns.length },
  });
}
