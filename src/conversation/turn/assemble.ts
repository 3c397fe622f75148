import { type TurnAssembly } from "../../core/assemble";
import type { ContextEnvelope } from "../../protocol/evidence";
import { HookPoint } from "../../protocol/hooks";
import { PRIORITY } from "../../core/budget";
import { ok, type Result } from "../../core/problem";
import { auditRecords } from "../../protect";
import { checkTurnFits } from "../capacity";
import type { Compacted } from "./compact";
import type { StoredTurnResult } from "./options";
import type { Staged } from "./stage";
import type { AssemblyDraft } from "./view-assembly";

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
