import { messageTokens } from "../core/assemble";
import type { CompactionEvidence } from "../protocol/evidence";
import { planCompaction, viewGroups, type CompactionPlan } from "../history/plan";
import { compactionLimits } from "../history/policy";
import type { CompactionLimits, CompactionPolicy } from "../protocol/policies";
import type { SummaryDraft, SummaryInputMessage, SummaryRequest } from "../history/summary";
import {
  leastTrusted,
  messageTrust,
  renderHistory,
  renderStub,
  renderSummary,
  hiddenImageSavings,
  resultPointer,
  type HistoryOverlay,
  type RenderedHistory,
  type SummaryOverlay,
} from "../history/view";
import { groupMessages } from "../core/groups";
import { imagesOf, textOf, type ChatMessage } from "../protocol/messages";
import { withoutAppendix } from "../core/reminder";
import type { StoredMessage } from "../protocol/frontend";
import { redact } from "../protect";
import { callKey } from "./approval-store";
import { denialReason } from "./approvals";
import { resultKey } from "../artifacts/read";
import type { CompactionReason } from "./compaction-store";
import type { ConversationScope } from "./scope";
import { LIMITS } from "../protocol/limits";

/** What a request reads of the history: the summary in effect, then the stored messages after it, some as stubs. */
export interface HistoryView extends HistoryOverlay {
  compactionId: number;
  /** The last seq the model no longer reads as a message: covered by the summary, or by a clear (which leaves none). */
  coveredThrough: number;
  /** Stored messages after the summary that were not loaded: the request's budget could not hold them. */
  unread: { messages: number; tokens: number };
}

export type CompactionReport = CompactionEvidence;

/** A planned compaction waiting for its summary; committing it checks nothing else compacted meanwhile. */
export interface PreparedCompaction {
  basedOn: number;
  /** Where the new summary's coverage starts: the previous summary's start, or just after a clear. */
  fromSeq: number;
  plan: CompactionPlan;
  limits: CompactionLimits;
  request: SummaryRequest | null;
  stubs: { seq: number; stub: string; saved: number; content: string }[];
  coveredMessages: number;
  coveredGroups: number;
  trust: SummaryOverlay["trust"];
  /** Loss notes for covered messages the summariser could not read (more than one request may read). */
  unreadLoss: string[];
}

/** What the history reaches: the conversation's database and row (its nonce is carried by the summary fence's tag), and R2. */
export type HistoryScope = Pick<ConversationScope, "db" | "meta" | "owner" | "artifacts">;

/**
 * The Conversation's history beyond what is stored: views for requests
 * (bounded by what the request can read), and non-destructive compaction.
 */
export class History {
  constructor(private readonly scope: HistoryScope) {}

  /**
   * Loads the summary, and only the stored messages after it that `maxTokens`
   * could hold (whole groups) once rendered (stubs, and placeholders for the
   * images the latest compaction hid), but always from `loadFrom` on when given;
   * and never more than one request may read (LIMITS.historyReadBytes),
   * `loadFrom` or not: older messages count as unread.
   */
  view(options: { maxTokens?: number | undefined; loadFrom?: number | undefined }): HistoryView {
    const { db: store } = this.scope;
    const { compactions } = store;
    const compactionId = compactions.latestId();
    const overlay = compactions.summary(compactionId);
    const after = overlay?.throughSeq ?? 0;
    const imagesHiddenThrough = compactions.imagesHiddenThrough(compactionId);
    // Stubs and image placeholders make the view smaller than the stored messages: what they save can be loaded in addition.
    const within = options.maxTokens === undefined ? after + 1 : store.messages.firstSeqWithin(after, options.maxTokens + this.savedAfter(after, imagesHiddenThrough));
    const fits = store.messages.firstSeqWithinBytes(after, LIMITS.historyReadBytes);
    const readable = fits > after + 1 ? store.messages.groupStartFrom(fits) : fits;
    const from = Math.max(after + 1, readable, Math.min(within, options.loadFrom ?? within));
    const unread = { messages: from - after - 1, tokens: from > after + 1 ? store.messages.tokensBetween(after, from - 1) : 0 };
    const summary = overlay?.text ? overlay : null;
    return { summary, stored: store.messages.list(Number.MAX_SAFE_INTEGER, from), stubs: compactions.stubs(after, compactionId), imagesHiddenThrough, compactionId, coveredThrough: after, unread };
  }

  /** The summary, stubs and image boundary in effect as of compaction `asOf`, no messages loaded: what a replay renders its stored ranges with. */
  overlayAsOf(asOf: number): Omit<HistoryOverlay, "stored"> {
    const { compactions } = this.scope.db;
    const overlay = compactions.summary(asOf);
    return { summary: overlay?.text ? overlay : null, stubs: compactions.stubs(overlay?.throughSeq ?? 0, asOf), imagesHiddenThrough: compactions.imagesHiddenThrough(asOf) };
  }

  /**
   * The view as the model reads it, images hidden through the view's boundary; `legacyKeepImages` (a turn stored
   * before boundaries existed recorded it) renders it as such a turn did: only the newest that many images shown.
   */
  render(view: HistoryOverlay, now: Date, legacyKeepImages?: number): RenderedHistory {
    return renderHistory(view, now, legacyKeepImages, this.scope.meta.nonce);
  }

  /** The last seq the model no longer reads as a message (covered by the summary or a clear); 0 when none. */
  coveredThrough(): number {
    return this.scope.db.compactions.summary()?.throughSeq ?? 0;
  }

  /** Whether a summary or a clear ever took messages out of the model's view (search_history is offered from then on). */
  everCovered(): boolean {
    return this.scope.db.compactions.everCovered();
  }

  /** Cheap: from the running totals, the tokens the stored part of the view takes. */
  storedViewTokens(): number {
    const { db: store } = this.scope;
    const { compactions } = store;
    const summary = compactions.summary();
    const after = summary?.throughSeq ?? 0;
    return store.messages.tokensAfter(after) - this.savedAfter(after) + (summary?.text ? messageTokens(renderSummary(summary, this.scope.meta.nonce)) : 0);
  }

  /**
   * What the view of the messages after `after` saves against their stored token counts: stubs in place of cleared
   * results, and placeholders for the images of the messages through the image boundary (the latest compaction's by
   * default), read from the rows that carry images.
   */
  private savedAfter(after: number, imagesHiddenThrough = this.scope.db.compactions.imagesHiddenThrough()): number {
    const images = imagesHiddenThrough > after ? hiddenImageSavings(this.scope.db.messages.imagesAfter(after, imagesHiddenThrough).flat()) : 0;
    return this.scope.db.compactions.savedAfter(after) + images;
  }

  /**
   * Plans a compaction of `rendered` (the view a request would read, whose
   * other parts cost `fixedTokens`) and gathers what its summariser needs.
   * Null when nothing would be gained or it is not needed.
   */
  prepare(
    view: HistoryView,
    rendered: RenderedHistory,
    fixedTokens: number,
    policy: CompactionPolicy,
    options: { force?: boolean; protectFromSeq?: number | undefined; reinjected?: (throughSeq: number) => number } = {},
  ): PreparedCompaction | null {
    const limits = compactionLimits(policy);
    if (!limits) return null;
    const first = view.summary ? 1 : 0;
    const messages = rendered.history.slice(first);
    const seqs = rendered.seqs.slice(first);
    const tokens = messages.map(messageTokens);
    const summaryTokens = view.summary ? messageTokens(rendered.history[0]!) : 0;
    const toolNames = new Map(messages.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []).map((c) => [c.id, c.function.name] as const) : [])));
    const indexOf = new Map(seqs.map((seq, i) => [seq, i]));
    const storedAt = (seq: number) => view.stored[indexOf.get(seq)!]!.message;
    const stubFor = (seq: number) => {
      const stored = storedAt(seq);
      const tool = stored.role === "tool" ? (toolNames.get(stored.tool_call_id) ?? "a tool") : "a tool";
      return renderStub({ tool, tokens: tokens[indexOf.get(seq)!]!, content: textOf(stored), pointer: resultPointer(this.scope.meta.conversationId, seq) }, this.scope.meta.nonce);
    };
    const groups = viewGroups(messages, seqs);
    // Messages the budget could not even load are the oldest group of all: a summary can still cover them.
    const firstLoaded = view.stored[0]?.seq;
    if (view.unread.messages > 0 && firstLoaded !== undefined) {
      groups.unshift({ kind: "user", seqs: [firstLoaded - 1], tokens: [view.unread.tokens], toolResult: [false], images: [0], imageSavings: [0], pending: false });
    }
    const plan = planCompaction({
      groups,
      cleared: new Set(view.stubs.keys()),
      fixedTokens: fixedTokens + summaryTokens,
      summaryTokens,
      summaryOverheadTokens: messageTokens(renderSummary({ fromSeq: 1, throughSeq: seqs.at(-1) ?? 0, text: "", summariser: "digest", trust: "external", loss: [] }, this.scope.meta.nonce)),
      stubTokens: (seq) => messageTokens({ role: "tool", tool_call_id: "", content: stubFor(seq) }),
      limits,
      policy,
      force: options.force ?? false,
      protectFromSeq: options.protectFromSeq,
      reinjected: options.reinjected,
    });
    if (!plan) return null;

    const stubs = plan.clear.map((c) => ({ seq: c.seq, stub: stubFor(c.seq), saved: c.saved, content: textOf(storedAt(c.seq)) }));
    const fromSeq = view.summary?.fromSeq ?? view.coveredThrough + 1;
    if (!plan.summarise) return { basedOn: view.compactionId, fromSeq, plan, limits, request: null, stubs, coveredMessages: 0, coveredGroups: 0, trust: "user", unreadLoss: [] };
    // Everything after the previous summary through the new end, loaded or not: the new summary must cover it all.
    // Its summariser reads one request's worth of it, the newest; what is older is given up, and the loss notes say so.
    const readFrom = this.scope.db.messages.firstSeqWithinBytes(view.coveredThrough, LIMITS.historyReadBytes, plan.summarise.throughSeq);
    const covered = this.scope.db.messages.list(plan.summarise.throughSeq, readFrom);
    const previous = view.summary ? { text: view.summary.text, summariser: view.summary.summariser, state: this.scope.db.compactions.summary(view.compactionId)?.state ?? null } : null;
    return {
      basedOn: view.compactionId,
      fromSeq,
      plan,
      limits,
      request: { previous, messages: summaryInputs(covered, this.scope.db.approvals.denied()), maxTokens: limits.summaryTokens },
      stubs,
      coveredMessages: readFrom - view.coveredThrough - 1 + covered.length,
      coveredGroups: groupMessages(covered.map((m) => m.message)).length,
      trust: leastTrusted([...(view.summary ? [view.summary.trust] : []), ...covered.map((m) => messageTrust(m.message))]),
      unreadLoss: readFrom > view.coveredThrough + 1 ? [`messages #${view.coveredThrough + 1}–#${readFrom - 1} were more than a summariser may read at once and are not summarised`] : [],
    };
  }

  /** Writes the full text of cleared results to R2 (outside any transaction: it is idempotent). */
  async keepClearedResults(prepared: PreparedCompaction): Promise<void> {
    const { artifacts: bucket, owner, meta } = this.scope;
    const { conversationId } = meta;
    await Promise.all(prepared.stubs.map((s) => bucket.put(resultKey(owner, conversationId, s.seq), s.content, { httpMetadata: { contentType: "text/plain; charset=utf-8" } })));
  }

  /**
   * Records the compaction, unless another one was recorded since it was
   * planned. Messages stored meanwhile are after what it covers, so they stay.
   * Runs inside the caller's transaction.
   */
  commit(prepared: PreparedCompaction, draft: (SummaryDraft & { summariser: string }) | null, reason: CompactionReason, at: string, turnId: string | null = null): CompactionReport | null {
    const { db: store } = this.scope;
    const { compactions } = store;
    if (compactions.latestId() !== prepared.basedOn) return null;
    const { plan } = prepared;
    // A summariser that kept nothing (its budget too small) must not hide what it covers: record the clearing only.
    const summary =
      plan.summarise && draft?.text
        ? { fromSeq: prepared.fromSeq, throughSeq: plan.summarise.throughSeq, text: draft.text, summariser: draft.summariser, trust: prepared.trust, loss: [...prepared.unreadLoss, ...draft.loss], state: draft.state }
        : null;
    // The plan counted the summary at an estimate; the report counts the one written.
    const after = summary && plan.summarise ? plan.after - plan.summarise.summaryEstimate + messageTokens(renderSummary(summary, this.scope.meta.nonce)) : plan.after;
    const id = compactions.add(reason, summary, { before: plan.before, after }, at, plan.hideImages?.throughSeq);
    for (const s of prepared.stubs) compactions.clearResult(s.seq, id, s.stub, s.saved);
    const reinjected = summary ? store.ledger.forgetThrough(summary.throughSeq) : [];
    if (summary) store.conversation.forgetPersonaThrough(summary.throughSeq);
    const report: CompactionReport = {
      id,
      reason,
      tokens: { before: plan.before, after, trigger: prepared.limits.trigger, target: prepared.limits.target },
      images: plan.hideImages ? { hiddenThroughSeq: plan.hideImages.throughSeq, messages: plan.hideImages.messages, images: plan.hideImages.images, savedTokens: plan.hideImages.saved } : null,
      cleared: prepared.stubs.map((s) => ({ seq: s.seq, savedTokens: s.saved, pointer: resultPointer(this.scope.meta.conversationId, s.seq) })),
      summary: summary && plan.summarise
        ? { coverage: { throughSeq: plan.summarise.throughSeq, groups: prepared.coveredGroups, tokens: plan.summarise.tokens, messages: prepared.coveredMessages }, summariser: summary.summariser, trust: summary.trust, loss: summary.loss }
        : null,
      reinjected,
      reachesTarget: after <= prepared.limits.target,
    };
    store.events.add(turnId, "context.pre_compact", String(id), { messageCount: store.messages.count(), tokens: plan.before }, at);
    store.events.add(turnId, "context.post_compact", String(id), { messageCount: store.messages.count(), tokens: after, imagesHidden: report.images?.images ?? 0, cleared: report.cleared.length, summary: report.summary?.coverage ?? null, reinjected }, at);
    return report;
  }

  /**
   * Clears the model's view (the stored history stays): the next request reads
   * none of it, and every context is injected again. Calls still waiting for
   * results stay in view with the user's message they answer and everything
   * between (that request's tool work so far), so their results never arrive
   * without them and the continuation still shows what it answers.
   */
  clear(at: string): CompactionReport {
    const { db: store } = this.scope;
    const { compactions } = store;
    const open = store.messages.openCalls();
    // Only the latest calls can be open, so the last user message is the request they answer (none: a resumed history).
    const request = open.seq ? store.messages.lastUserSeq() : 0;
    const throughSeq = open.seq ? (request > 0 && request < open.seq ? request : open.seq) - 1 : store.messages.lastSeq();
    const before = this.storedViewTokens();
    const after = throughSeq < store.messages.lastSeq() ? store.messages.tokensAfter(throughSeq) - this.savedAfter(throughSeq) : 0;
    const id = compactions.add("clear", { fromSeq: 1, throughSeq, text: "", summariser: "clear", trust: "user", loss: [], state: null }, { before, after }, at);
    const reinjected = store.ledger.forgetThrough(Number.MAX_SAFE_INTEGER);
    store.conversation.forgetPersonaThrough(throughSeq);
    store.events.add(null, "context.pre_compact", String(id), { messageCount: store.messages.count(), tokens: before }, at);
    store.events.add(null, "context.post_compact", String(id), { messageCount: store.messages.count(), tokens: after, cleared: 0, hiddenThroughSeq: throughSeq, reinjected }, at);
    return { id, reason: "clear", tokens: { before, after, trigger: null, target: null }, cleared: [], summary: null, reinjected, reachesTarget: true };
  }
}

/** What a summariser reads: stored text, redacted again in case it holds a secret the user typed. */
function summaryInputs(stored: readonly StoredMessage[], denied: ReadonlySet<string>): SummaryInputMessage[] {
  // A result's call is in the same group, so in `stored` too; ids may repeat across calls, so the latest call's.
  const toolNames = new Map<string, string>();
  const callSeqs = new Map<string, number>();
  return stored.map(({ seq, message, createdAt }) => {
    const content = redact(textOf(message)).text;
    if (message.role === "assistant" && message.tool_calls) {
      for (const c of message.tool_calls) {
        toolNames.set(c.id, c.function.name);
        callSeqs.set(c.id, seq);
      }
      return { seq, role: "assistant", content, createdAt, toolCalls: message.tool_calls.map((c) => ({ name: c.function.name, arguments: redact(c.function.arguments).text })) };
    }
    if (message.role === "tool") {
      const toolName = toolNames.get(message.tool_call_id) ?? "unknown";
      return denied.has(callKey(callSeqs.get(message.tool_call_id) ?? 0, message.tool_call_id)) ? { seq, role: "tool", content, createdAt, toolName, denied: { reason: denialReason(content) } } : { seq, role: "tool", content, createdAt, toolName };
    }
    // The appendix is app, memory and persona text: it is injected again when needed, and is not the user's to quote.
    if (message.role === "user") return { seq, role: "user", content: redact(withoutAppendix(textOf(message))).text + imageNote(message), createdAt };
    return { seq, role: message.role, content, createdAt };
  });
}

function imageNote(message: ChatMessage): string {
  const images = imagesOf(message).length;
  return images ? `\n[${images} image${images === 1 ? "" : "s"}]` : "";
}
