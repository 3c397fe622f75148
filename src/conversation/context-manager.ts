import { assembleTurn, messageTokens, usageOf } from "../core/assemble";
import { pairingProblems } from "../core/groups";
import { withText, type AppendableMessage, type ChatMessage } from "../protocol/messages";
import { fail, ok, type Result } from "../core/problem";
import type { ContextManager } from "../history/contract";
import type { CompactionStatus, RequestMessages } from "../protocol/history";
import { compactionLimits, withModelWindow } from "../history/policy";
import type { CompactionPolicy } from "../protocol/policies";
import { admitText } from "../protect";
import { summariseSafely } from "../history/summarise";
import { History, type CompactionReport, type PreparedCompaction } from "./history";
import type { ConversationScope } from "./scope";
import type { SerialQueue } from "./serial-queue";
import type { ConversationMeta } from "./store";
import { admitMessages, storeAdmitted, type AdmittedMessages } from "./tool-results";
import { checkRoom, checkWholeView } from "./capacity";
import { LIMITS } from "../protocol/limits";
import type { MessagePage } from "../protocol/frontend";

type UserMessage = Extract<ChatMessage, { role: "user" }>;

/** The context-manager contract over one Conversation's SQLite, R2 and queue. Every change goes through the queue. */
export class ConversationContextManager implements ContextManager {
  private readonly history: History;

  constructor(
    private readonly scope: ConversationScope,
    private readonly queue: SerialQueue,
  ) {
    this.history = new History(scope);
  }

  /** The model's reply and tool results; every result must answer an open call, and is redacted and trimmed before it is stored. */
  /** `allowed`: checked once the queue reaches the append (a gateway run's: still the run in progress; a frontend's: the output hooks). */
  addMessages(messages: AppendableMessage[], allowed: () => Promise<Result<true>> | Result<true> = () => ok(true)) {
    const { db: store } = this.scope;
    const { queue } = this;
    return queue.run(async () => {
      const meta = this.current();
      if (!meta.ok) return meta;
      const may = await allowed();
      if (!may.ok) return may;
      const open = store.messages.openCalls();
      const admitted = await admitMessages(open.calls, messages, {
        policies: meta.value.resultPolicies,
        auditKey: await this.scope.auditKey(),
        nonce: meta.value.nonce,
        awaitingApproval: this.scope.db.approvals.awaiting(open),
      });
      if (!admitted.ok) return admitted;
      const room = checkRoom(store.messages, admitted.value.messages);
      if (!room.ok) return room;
      const at = this.scope.now().toISOString();
      const lastSeq = store.transaction(() => storeAdmitted(store, null, admitted.value, at));
      return ok({ appended: admitted.value.messages.length, lastSeq, toolResults: admitted.value.reports });
    });
  }

  /** The conversation as it is once the queue reaches a change: another change may have ended it or changed its agent. */
  private current(): Result<ConversationMeta> {
    const meta = this.scope.db.conversation.get()!;
    return meta.endedAt ? fail("conflict", "this conversation has ended") : ok(meta);
  }

  /** One page of the stored messages after `after`: a page never nears the RPC limit (LIMITS.historyReadBytes). */
  getMessages(page: { after: number; limit: number }): Result<MessagePage> {
    const { messages, hasMore } = this.scope.db.messages.page(page.after, page.limit, LIMITS.historyReadBytes);
    return ok({ messages, nextAfter: messages.at(-1)?.seq ?? page.after, hasMore });
  }

  /** What the model would read before a new message: the frozen system message, the summary, and the newest whole groups that fit. */
  getMessagesForRequest(options: { maxTokens?: number | undefined }): Result<RequestMessages> {
    const { history } = this;
    const { meta } = this.scope;
    const maxTokens = options.maxTokens ?? compactionLimits(meta.compactionPolicy)?.usable;
    const readable = maxTokens === undefined ? checkWholeView(this.scope.db.messages, history.coveredThrough()) : ok(true);
    if (!readable.ok) return readable;
    const system = this.scope.db.turns.latestSystemPrompt();
    const view = history.view({ maxTokens });
    const rendered = history.render(view, this.scope.now());
    const assembled = assembleTurn({
      turnId: "request",
      conversationId: meta.conversationId,
      now: this.scope.now(),
      systemPrompt: system ?? "",
      history: rendered.history,
      ledger: [],
      observations: [],
      maxTokens,
      summaryFirst: view.summary !== null,
    });
    if (!assembled.ok) return assembled;
    // Before the first turn no system message exists yet: the agent of that turn brings it.
    const messages = system === null ? assembled.value.messages.slice(1) : assembled.value.messages;
    // Every message group given up, whatever its class: the newest (the user's last message and what answered it) too.
    const dropped = assembled.value.envelope.budget.truncations.filter((t) => t.id.startsWith("history:") || t.id.startsWith("tool_result:"));
    const shown = assembled.value.historyShown.filter((i) => rendered.seqs[i] !== 0).length;
    return ok({
      messages,
      tokens: usageOf(messages),
      truncated: {
        messages: this.scope.db.messages.lastSeq() - view.coveredThrough - shown,
        tokens: view.unread.tokens + dropped.reduce((sum, t) => sum + t.tokens, 0),
      },
    });
  }

  /**
   * Resumes a history kept elsewhere into a conversation that has none. It
   * must pair every result with its call; results are protected as if appended.
   */
  setMessages(messages: Exclude<ChatMessage, { role: "system" }>[]) {
    const { db: store } = this.scope;
    const { queue } = this;
    return queue.run(async (): Promise<Result<{ appended: number; lastSeq: number }>> => {
      const meta = this.current();
      if (!meta.ok) return meta;
      if (store.messages.count() > 0) return fail("conflict", "this conversation already has messages; stored history is never replaced. Resume into a new conversation");
      const problems = pairingProblems(messages, { pendingAllowed: true });
      if (problems.length) return fail("invalid-request", `the messages do not pair every tool result with its call: ${problems[0]}`, problems.map((p) => ({ path: "messages", message: p })));
      const auditKey = await this.scope.auditKey();
      const at = this.scope.now().toISOString();
      // Runs of the model's messages go through the same envelope as appends; user text is stored as a turn stores it.
      const runs: (AppendableMessage[] | UserMessage)[] = [];
      for (const m of messages) {
        // Stored as a turn stores the user's words: past the trust boundary.
        if (m.role === "user") runs.push(withText(m, (text) => admitText(text, { nonce: meta.value.nonce }).text));
        else if (Array.isArray(runs.at(-1))) (runs.at(-1) as AppendableMessage[]).push(m);
        else runs.push([m]);
      }
      const admitted: AdmittedMessages[] = [];
      for (const run of runs) {
        if (!Array.isArray(run)) continue;
        // Pairing was checked: a user message never follows an open call, so each run starts with none open.
        const result = await admitMessages(new Map(), run, { policies: meta.value.resultPolicies, auditKey, nonce: meta.value.nonce });
        if (!result.ok) return result;
        admitted.push(result.value);
      }
      let lastSeq = 0;
      store.transaction(() => {
        let next = 0;
        for (const run of runs) {
          lastSeq = Array.isArray(run) ? storeAdmitted(store, null, admitted[next++]!, at) : store.messages.append(null, run, at);
        }
        store.events.add(null, "messages.resumed", null, { count: messages.length, lastSeq }, at);
      });
      return ok({ appended: messages.length, lastSeq });
    });
  }

  clear(): Result<CompactionReport> {
    const { history } = this;
    const { db: store } = this.scope;
    return ok(store.transaction(() => history.clear(this.scope.now().toISOString())));
  }

  shouldCompact(): Result<CompactionStatus> {
    const { history } = this;
    const { db: store, meta } = this.scope;
    const { compactions } = store;
    const policy = meta.compactionPolicy;
    const limits = compactionLimits(policy);
    const system = store.turns.latestSystemPrompt();
    const tokens = (system === null ? 0 : messageTokens({ role: "system", content: system })) + history.storedViewTokens();
    const latest = compactions.list().at(-1);
    // A compaction that only cleared tool results leaves the earlier summary (or clear) in effect: report that.
    const inEffect = compactions.inEffect();
    const summary = inEffect && inEffect.summary.text !== "" ? inEffect : null;
    return ok({
      policy,
      limits,
      tokens,
      messageCount: store.messages.count(),
      shouldCompact: limits !== null && tokens > limits.trigger,
      latest: latest ? { id: latest.id, reason: latest.reason, coveredThroughSeq: inEffect?.summary.throughSeq ?? null, summarised: (latest.summary?.text ?? "") !== "", at: latest.createdAt } : null,
      summary: summary
        ? { fromSeq: summary.summary.fromSeq, throughSeq: summary.summary.throughSeq, summariser: summary.summary.summariser, trust: summary.summary.trust, compactionId: summary.id }
        : null,
    });
  }

  /**
   * Plans under the queue, summarises outside it (a model summariser may take
   * seconds, and appends must not wait), then records it under the queue.
   * Messages appended meanwhile come after what it covers, so none is lost.
   */
  async compact(options: { force?: boolean | undefined; contextWindow?: number | undefined }): Promise<Result<CompactionReport | null>> {
    const { history, queue } = this;
    const { db: store } = this.scope;
    const planned = await queue.run(async (): Promise<Result<{ prepared: PreparedCompaction | null; policy: CompactionPolicy }>> => {
      const meta = this.current();
      if (!meta.ok) return meta;
      const merged = withModelWindow(meta.value.compactionPolicy, options);
      if (!merged.success) return fail("invalid-request", `contextWindow: ${merged.error.issues[0]!.message}`);
      const policy = merged.data;
      const limits = compactionLimits(policy);
      if (!limits) return fail("invalid-request", "the conversation's compaction policy names no contextWindow; set one, or pass contextWindow");
      const view = history.view({ maxTokens: limits.usable });
      const rendered = history.render(view, this.scope.now());
      // While the model is still answering the latest request (its last word is not a reply), the request and its tool
      // work so far stay, as on a continuation: the continuation that follows must show what it answers.
      const last = store.messages.list(store.messages.lastSeq(), store.messages.lastSeq())[0]?.message;
      const answering = last !== undefined && !(last.role === "assistant" && !last.tool_calls?.length);
      const protectFromSeq = answering ? store.messages.lastUserSeq() || undefined : undefined;
      return ok({ prepared: history.prepare(view, rendered, messageTokens({ role: "system", content: store.turns.latestSystemPrompt() ?? "" }), policy, { force: options.force ?? false, protectFromSeq }), policy });
    });
    if (!planned.ok) return planned;
    const { prepared, policy } = planned.value;
    if (!prepared) return ok(null);
    await history.keepClearedResults(prepared);
    const draft = prepared.request ? await summariseSafely(this.scope.models.summariser(policy), prepared.request) : null;
    const report = await queue.run(async () => store.transaction(() => history.commit(prepared, draft, "manual", this.scope.now().toISOString())));
    return report ? ok(report) : fail("conflict", "another compaction was recorded while this one ran; ask again");
  }
}
