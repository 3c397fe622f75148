import { DurableObject } from "cloudflare:workers";
import type { ApprovalDecisionBody, Attachment, CompactBody, EventsQuery, MessagesQuery, ReportedUsage, RunToolsBody, SetMessagesBody, TurnBody } from "../protocol/http";
import { contextKey } from "../core/attachments";
import type { ContextList } from "../protocol/context-data";
import type { AppendableMessage, ChatMessage } from "../protocol/messages";
import { fail, ok, type Result } from "../core/problem";
import { conversationStub } from "./stub";
import { hubStub } from "../hub/stub";
import { memoryHalfLifeHours, summaryModel } from "../platform/config";
import type { Env } from "../platform/env";
import type { Owner } from "../protocol/owner";
import { DEFAULT_COMPACTION_POLICY } from "../history/policy";
import type { CompactionPolicy } from "../protocol/policies";
import { chooseSummariser } from "../history/summarise";
import { decideApproval, requestApproval, type ApprovalDeps } from "./approvals";
import { History, type CompactionReport } from "./history";
import type { AppHub } from "../hub/app-hub";
import type { ApprovalInfo, AttachmentInfo, ContextEvent, ConversationInfo, MessagePage, PastTurn, ResourceInfo, TurnResult } from "../protocol/frontend";
import type { ContextsListParams } from "../protocol/methods";
import { SerialQueue } from "./serial-queue";
import type { GatewayCursor, GatewayRun, ModelUsage } from "./gateway-store";
import { recordGatewayStep, runLive, takeGatewayTurn, type GatewayHost } from "./gateway-runs";
import { reviewAppended, reviewGatewayOutput, type ReviewHost } from "./output-review";
import { askGuardModel } from "../tools/guard-model";
import type { ModelAnswer, OutputReview } from "../hooks/output";
import { upstreamConfig } from "../platform/config";
import { runOpenCalls } from "./tool-runs";
import type { ToolHost } from "../tools/run";
import type { ToolRunResult, ToolSpec } from "../protocol/tools";
import { ConversationDb, type ConversationMeta } from "./store";
import { durableDatabase } from "../storage/database";
import { migrate } from "../storage/migrate";
import { CONVERSATION_MIGRATIONS } from "./migrations";
import type { ToolResultReport } from "./tool-results";
import { takeTurn } from "./turn/index";
import { replay } from "./turn/replay";
import type { TurnDeps } from "./turn/deps";
import { ConversationContextManager } from "./context-manager";
import type { CompactionStatus, RequestMessages } from "../protocol/history";
import { turnSections, type TurnSections } from "./turn-sections";
import { tenantAuditKey } from "../protect";
import { newNonce } from "../core/runtime-tag";
import { closeDelegateCall, completeChild, startChild, type ChildAnswer, type ChildHost } from "./delegation";
import type { DelegationCompleted, DelegationInfo, DelegationStart } from "../protocol/delegation";
import type { ToolResultEvidence } from "../protocol/evidence";
import { attachContext, storePushedResource, type PushedResource } from "./resources";

/**
 * One per conversation: history as the model read it, the context ledger,
 * attachments, session resources, turns and events, all in its SQLite. Every
 * change goes through one queue, so turns and appends never interleave.
 */
export class Conversation extends DurableObject<Env> {
  private readonly db: ConversationDb;
  private readonly queue = new SerialQueue();
  /** Apps' contexts past the trust boundary at the version last pulled: an unchanged context is not redacted every turn. */
  private readonly admittedContexts = new Map<string, { version: string; title: string; content: string }>();
  /** Apps' tool declarations past the trust boundary, as last offered: an unchanged list is not redacted every turn. */
  private readonly admittedTools = new Map<string, { raw: string; spec: ToolSpec }>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const database = durableDatabase(ctx.storage);
    this.db = new ConversationDb(database);
    ctx.blockConcurrencyWhile(async () => {
      migrate(database, CONVERSATION_MIGRATIONS);
    });
  }

  async create(owner: Owner, conversationId: string, agent?: string, compactionPolicy: CompactionPolicy = DEFAULT_COMPACTION_POLICY): Promise<Result<ConversationInfo>> {
    return this.queue.run(async () => {
      const made = await this.begin(owner, conversationId, agent, compactionPolicy);
      if (!made.ok) return made;
      await this.hub(owner).conversationCreated({ id: conversationId, agent: agent ?? null, createdAt: made.value.createdAt });
      return ok(this.describe(made.value));
    });
  }

  /** The conversation made here, inside the queue, and not yet listed in the user's hub. */
  private async begin(owner: Owner, conversationId: string, agent?: string, compactionPolicy: CompactionPolicy = DEFAULT_COMPACTION_POLICY): Promise<Result<ConversationMeta>> {
    if (this.db.conversation.get()) return fail("conflict", "conversation already exists");
    let agentContexts: string[] = [];
    let resultPolicies = {};
    if (agent !== undefined) {
      const found = await this.hub(owner).agent(agent);
      if (!found) return fail("not-found", `no agent '${agent}' is registered`);
      ({ attachedContexts: agentContexts, resultPolicies } = found);
    }
    const createdAt = new Date().toISOString();
    this.db.conversation.create({ conversationId, tenant: owner.tenant, user: owner.user, agent: agent ?? null, agentContexts, resultPolicies, compactionPolicy, createdAt, nonce: newNonce() });
    return ok(this.db.conversation.get()!);
  }

  info(owner: Owner): Result<ConversationInfo> {
    return this.read(owner, (meta) => ok(this.describe(meta)));
  }

  /**
   * `gateway`, for a gateway run's own turns: `outputReviewed` when it ran the output hooks on the reply already (it
   * regenerates on a rejection itself); `run`, the run, refused once a newer request interrupted it.
   */
  turn(owner: Owner, body: TurnBody, gateway?: { outputReviewed?: boolean; run?: string }): Promise<Result<TurnResult>> {
    return this.serve(owner, "queued", (owned) => {
      const live = runLive(this.db.gateway, gateway?.run);
      return live.ok ? this.takeTurnNow(owner, owned, body, { outputReviewed: gateway?.outputReviewed === true }) : live;
    });
  }

  /**
   * A turn, inside the queue. `more` adds appendix sections (a subagent's first turn: its parent's hints);
   * `outputReviewed`, the gateway checked the reply already; `interruptedRun`, a gateway answer this message cut off.
   */
  private async takeTurnNow(
    owner: Owner,
    owned: ConversationMeta,
    body: TurnBody,
    options: { more?: (nonce: string | null, own: TurnSections) => Promise<TurnSections>; outputReviewed?: boolean; interruptedRun?: GatewayRun } = {},
  ): Promise<Result<TurnResult>> {
    const { more, outputReviewed = false, interruptedRun } = options;
    const nonce = owned.nonce ?? this.db.conversation.giveNonce(newNonce());
    const meta = { ...owned, nonce };
    const sections = turnSections({ kv: this.env.MEMORY, halfLifeHours: memoryHalfLifeHours(this.env) }, owner, meta.conversationId, body, nonce);
    const deps: TurnDeps = {
      store: this.db,
      hub: this.hub(owner),
      meta,
      history: this.history(owner, meta),
      approvals: this.db.approvals,
      toolState: this.db.toolState,
      tools: this.toolHost(owner),
      summariser: this.summariser,
      admittedContexts: this.admittedContexts,
      admittedTools: this.admittedTools,
      auditKey: await this.auditKey(owner),
      now: () => new Date(),
      delegations: this.db.delegations,
      // A subagent runs in a conversation of its own, in its own Durable Object (same tenant and user).
      delegate: (start) => conversationStub(this.env, owner, start.childConversationId).startDelegation(owner, start),
      sections: more ? async (agent, message) => more(nonce, await sections(agent, message)) : sections,
      outputReviewed,
      ...(interruptedRun ? { interruptedRun } : {}),
    };
    return takeTurn(deps, body);
  }

  // ── subagents (src/conversation/delegation.ts; docs/tools.md, "Subagents") ──

  /** The child's side of a `delegate` call: created for the subagent, it takes its first turn at once. */
  startDelegation(owner: Owner, start: DelegationStart): Promise<Result<{ turnId: string }>> {
    return this.queue.run(() => startChild(this.childHost(owner), start));
  }

  /** The child's final answer (POST …/delegation/complete, or the gateway's loop): it closes the parent's call, then the child ends. */
  completeDelegation(owner: Owner, reply: ChatMessage): Promise<Result<DelegationCompleted>> {
    return this.serve(owner, "live", (meta) => completeChild(this.childHost(owner), meta, reply));
  }

  /** The parent's side: a child's final answer closes its `delegate` call, while that call is still open. */
  closeDelegation(owner: Owner, done: ChildAnswer): Promise<Result<{ toolResult: ToolResultEvidence }>> {
    const host = { store: this.db, approvals: this.db.approvals, delegations: this.db.delegations, auditKey: () => this.auditKey(owner) };
    return this.serve(owner, "live", (meta) => closeDelegateCall(host, meta, done));
  }

  /** The conversation's `delegate` calls and their children, oldest first. */
  listDelegations(owner: Owner): Result<{ delegations: DelegationInfo[] }> {
    return this.read(owner, () => ok({ delegations: this.db.delegations.list() }));
  }

  private childHost(owner: Owner): ChildHost {
    return {
      owner,
      store: this.db,
      hub: this.hub(owner),
      memory: { kv: this.env.MEMORY, halfLifeHours: memoryHalfLifeHours(this.env) },
      auditKey: () => this.auditKey(owner),
      takeTurn: (meta, body, more) => this.takeTurnNow(owner, meta, body, { more }),
      turnIds: () => this.db.turns.ids(),
      closeInParent: (parentConversationId, done) => conversationStub(this.env, owner, parentConversationId).closeDelegation(owner, done),
      end: (meta) => this.endNow(owner, meta),
    };
  }

  /** The open calls the runtime serves, run outside a turn; their results are stored like appended ones. */
  runTools(owner: Owner, body: RunToolsBody, run?: string): Promise<Result<ToolRunResult>> {
    return this.serve(owner, "live", async (meta) => {
      const live = runLive(this.db.gateway, run);
      if (!live.ok) return live;
      const agent = body.agent ?? meta.agent;
      if (agent === null) return fail("conflict", "this conversation has no agent yet: name one in `agent`");
      const toolbox = await this.hub(owner).toolbox(agent);
      if (!toolbox) return fail("not-found", `no agent '${agent}' is registered`);
      const deps = {
        store: this.db,
        approvals: this.db.approvals,
        toolState: this.db.toolState,
        delegations: this.db.delegations,
        host: this.toolHost(owner),
        auditKey: await this.auditKey(owner),
        meta,
        now: new Date(),
        everCovered: this.db.compactions.everCovered(),
      };
      return runOpenCalls(deps, toolbox, body.toolCallIds);
    });
  }

  // ── the model gateway (src/gateway/; src/conversation/gateway-runs.ts) ──

  /** Where the gateway is in the client's copy of the conversation: null before its first request here. */
  gatewayCursor(owner: Owner): Result<{ cursor: GatewayCursor | null; messageCount: number }> {
    return this.read(owner, () => ok({ cursor: this.db.gateway.cursor(), messageCount: this.db.messages.count() }));
  }

  /** The gateway's turn: taken, and the cursor moved past it, only if the cursor is still where the gateway read it. */
  gatewayTurn(owner: Owner, body: TurnBody, cursor: { expected: GatewayCursor | null; next: GatewayCursor }, run: string): Promise<Result<TurnResult>> {
    return this.serve(owner, "queued", (owned) =>
      takeGatewayTurn(this.gatewayHost(owner), body, cursor, run, (interruptedRun) => this.takeTurnNow(owner, owned, body, interruptedRun ? { interruptedRun } : {})),
    );
  }

  /**
   * The gateway's first turn in a conversation of its own: the conversation is made with it and kept only if the turn
   * is taken. A refused turn leaves nothing behind: its storage is deleted, and the hub never lists it.
   */
  gatewayStart(owner: Owner, conversationId: string, body: TurnBody, next: GatewayCursor, run: string): Promise<Result<TurnResult>> {
    return this.queue.run(async () => {
      const made = await this.begin(owner, conversationId, body.agent);
      if (!made.ok) return made;
      try {
        const turn = await takeGatewayTurn(this.gatewayHost(owner), body, { expected: null, next }, run, () => this.takeTurnNow(owner, made.value, body));
        if (!turn.ok) {
          await this.ctx.storage.deleteAll();
          return turn;
        }
        await this.hub(owner).conversationCreated({ id: conversationId, agent: body.agent, createdAt: made.value.createdAt });
        return turn;
      } catch (error) {
        // Whatever failed (the turn, the hub's listing), nothing is left half made.
        await this.ctx.storage.deleteAll();
        throw error;
      }
    });
  }

  /** The gateway's bookkeeping after a step: its cursor, its run's end, the upstream's usage. */
  gatewayRecord(owner: Owner, record: { cursor?: GatewayCursor; usage?: ModelUsage[]; run?: string; end?: boolean }): Promise<Result<{ lastSeq: number }>> {
    return this.serve(owner, "queued", () => recordGatewayStep(this.gatewayHost(owner), record));
  }

  private gatewayHost(owner: Owner): GatewayHost {
    return { store: this.db, gateway: this.db.gateway, hub: this.hub(owner) };
  }

  /** The gateway's check of one model answer by the agent's output hooks. */
  reviewOutput(owner: Owner, check: { agent: string; turnId: string; reply: ModelAnswer; attempt: number }): Promise<Result<OutputReview & { reminder?: string; rejected?: string | null }>> {
    return this.serve(owner, "live", (meta) => reviewGatewayOutput(this.reviewHost(owner, meta), check));
  }

  // ── the context-manager contract (src/history/contract.ts) ──

  messages(owner: Owner, page: MessagesQuery): Result<MessagePage> {
    const manager = this.manager(owner);
    return manager.ok ? manager.value.getMessages(page) : manager;
  }

  /** `run`: a gateway run's answer, stored only while it is the run in progress. */
  async appendMessages(owner: Owner, messages: AppendableMessage[], usage?: ReportedUsage, run?: string): Promise<Result<{ appended: number; lastSeq: number; toolResults: ToolResultReport[] }>> {
    const manager = this.manager(owner, { live: true });
    if (!manager.ok) return manager;
    if (usage?.turnId !== undefined && !this.db.turns.get(usage.turnId)) return fail("not-found", `no turn '${usage.turnId}' in this conversation`);
    // In the queue: a gateway run's answer only while it is the run in progress (its steps were checked already); a
    // frontend's answers after the output hooks accept them.
    const appended = await manager.value.addMessages(messages, () => (run === undefined ? reviewAppended(this.reviewHost(owner, this.db.conversation.get()!), messages) : runLive(this.db.gateway, run)));
    if (appended.ok && usage) this.recordUsage(usage, appended.value.lastSeq);
    return appended;
  }

  /** The model's real usage a frontend's own loop reported: a `model.usage` event on its turn (default: the latest). */
  private recordUsage(usage: ReportedUsage, lastSeq: number): void {
    const turnId = usage.turnId ?? this.db.turns.latestId();
    const data = { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens, cachedTokens: usage.cachedTokens ?? null, model: usage.model ?? null, lastSeq, source: "frontend" };
    this.db.events.add(turnId, "model.usage", usage.model ?? null, data, new Date().toISOString());
  }

  /** A turn answered before: its stored result with the model input it read then (as a replay builds it), and the usage reported for it. */
  pastTurn(owner: Owner, turnId: string): Result<PastTurn> {
    return this.read(owner, (meta) => {
      const prior = this.db.turns.withTime(turnId);
      if (!prior) return fail("not-found", `no turn '${turnId}' in this conversation`);
      // A replay reads only the store, the history and the conversation's nonce.
      const deps: Pick<TurnDeps, "store" | "history" | "meta"> = { store: this.db, history: this.history(owner, meta), meta };
      return ok({ ...replay(deps as TurnDeps, prior.turn), createdAt: prior.createdAt, reportedUsage: this.db.events.usageOf(turnId) });
    });
  }

  requestMessages(owner: Owner, maxTokens: number | undefined): Result<RequestMessages> {
    const manager = this.manager(owner);
    return manager.ok ? manager.value.getMessagesForRequest({ maxTokens }) : manager;
  }

  async setMessages(owner: Owner, messages: SetMessagesBody["messages"]): Promise<Result<{ appended: number; lastSeq: number }>> {
    const manager = this.manager(owner, { live: true });
    return manager.ok ? manager.value.setMessages(messages) : manager;
  }

  clearHistory(owner: Owner): Promise<Result<{ compaction: CompactionReport }>> {
    return this.serve(owner, "live", () => {
      const manager = this.manager(owner, { live: true });
      if (!manager.ok) return manager;
      const compaction = manager.value.clear();
      return compaction.ok ? ok({ compaction: compaction.value }) : compaction;
    });
  }

  compactionStatus(owner: Owner): Result<CompactionStatus> {
    const manager = this.manager(owner);
    return manager.ok ? manager.value.shouldCompact() : manager;
  }

  async compact(owner: Owner, body: CompactBody): Promise<Result<{ compaction: CompactionReport | null }>> {
    const manager = this.manager(owner, { live: true });
    if (!manager.ok) return manager;
    const compaction = await manager.value.compact(body);
    return compaction.ok ? ok({ compaction: compaction.value }) : compaction;
  }

  setCompactionPolicy(owner: Owner, policy: CompactionPolicy): Promise<Result<CompactionStatus>> {
    return this.serve(owner, "live", () => {
      this.db.conversation.setCompactionPolicy(policy);
      return this.compactionStatus(owner);
    });
  }

  private manager(owner: Owner, options: { live?: boolean } = {}): Result<ConversationContextManager> {
    const meta = options.live ? this.live(owner) : this.owned(owner);
    if (!meta.ok) return meta;
    return ok(
      new ConversationContextManager({
        store: this.db,
        compactions: this.db.compactions,
        approvals: this.db.approvals,
        history: this.history(owner, meta.value),
        meta: meta.value,
        queue: this.queue,
        auditKey: () => this.auditKey(owner),
        summariser: this.summariser,
        now: () => new Date(),
      }),
    );
  }

  // ── approvals of tool calls (src/conversation/approvals.ts) ──

  /** The approvals of the calls still open: what a frontend that reconnects must ask the user again. */
  listApprovals(owner: Owner): Result<{ approvals: ApprovalInfo[] }> {
    return this.read(owner, () => ok({ approvals: this.db.approvals.ofOpenCalls(this.db.messages.openCalls()) }));
  }

  requestApproval(owner: Owner, toolCallId: string): Promise<Result<{ approval: ApprovalInfo; created: boolean }>> {
    return this.serve(owner, "live", (meta) => requestApproval(this.approvalDeps(owner, meta), toolCallId));
  }

  decideApproval(owner: Owner, toolCallId: string, decision: ApprovalDecisionBody): Promise<Result<{ approval: ApprovalInfo; seq: number | null }>> {
    return this.serve(owner, "live", (meta) => decideApproval(this.approvalDeps(owner, meta), toolCallId, decision));
  }

  private approvalDeps(owner: Owner, meta: ConversationMeta): ApprovalDeps {
    return { store: this.db, approvals: this.db.approvals, meta, auditKey: () => this.auditKey(owner), now: () => new Date() };
  }

  attachments(owner: Owner): Result<{ attachments: AttachmentInfo[] }> {
    return this.read(owner, () => ok({ attachments: this.db.attachments.list() }));
  }

  /** A picked item is fetched once here so the user learns at once if it does not exist. */
  attach(owner: Owner, attachment: Attachment): Promise<Result<{ attachments: AttachmentInfo[] }>> {
    return this.serve(owner, "live", () => attachContext(this.db, this.hub(owner), attachment));
  }

  detach(owner: Owner, attachment: Attachment): Promise<Result<{ attachments: AttachmentInfo[] }>> {
    return this.serve(owner, "live", () => {
      const key = contextKey(attachment.context, attachment.itemId);
      if (!this.db.attachments.detach(key)) return fail("not-found", `'${key}' is not attached`);
      this.db.events.add(null, "attachment.removed", key, {}, new Date().toISOString());
      return ok({ attachments: this.db.attachments.list() });
    });
  }

  resources(owner: Owner): Result<{ resources: ResourceInfo[] }> {
    return this.read(owner, () => ok({ resources: this.db.resources.list().map(({ content: _content, ...info }) => info) }));
  }

  /** Pushed by an app through the hub; only apps this conversation acknowledges may push. */
  pushResource(owner: Owner, app: string, resource: PushedResource): Promise<Result<ResourceInfo>> {
    return this.serve(owner, "live", (meta) => storePushedResource({ store: this.db, auditKey: () => this.auditKey(owner) }, meta, app, resource));
  }

  removeResource(owner: Owner, fullId: string, options: { notifyApp: boolean }): Promise<Result<{ removed: string }>> {
    return this.serve(owner, "queued", (meta) => {
      if (!this.db.resources.delete(fullId)) return fail("not-found", `no resource '${fullId}' in this conversation`);
      this.db.events.add(null, "resource.removed", fullId, { by: options.notifyApp ? "user" : "app" }, new Date().toISOString());
      if (options.notifyApp) this.hub(owner).notifyResourceRemoved(meta.conversationId, fullId);
      return ok({ removed: fullId });
    });
  }

  async browse(owner: Owner, ref: string, params: Omit<ContextsListParams, "provider">): Promise<Result<ContextList>> {
    const meta = this.owned(owner);
    return meta.ok ? this.hub(owner).listItems(ref, params) : meta;
  }

  events(owner: Owner, query: EventsQuery): Result<{ events: ContextEvent[]; nextAfter: number }> {
    return this.read(owner, () => {
      const after = query.after ?? 0;
      const events = this.db.events.page(after, query.limit ?? 100);
      return ok({ events, nextAfter: events.at(-1)?.seq ?? after });
    });
  }

  /** Ends the session: resources are cleared and each app told; further turns are refused. */
  end(owner: Owner): Promise<Result<ConversationInfo & { resourcesRemoved: number }>> {
    return this.serve(owner, "queued", async (meta) => ok(await this.endNow(owner, meta)));
  }

  private async endNow(owner: Owner, meta: ConversationMeta): Promise<ConversationInfo & { resourcesRemoved: number }> {
    if (meta.endedAt) return { ...this.describe(meta), resourcesRemoved: 0 };
    const resources = this.db.resources.list();
    const at = new Date().toISOString();
    this.db.transaction(() => {
      for (const r of resources) this.db.resources.delete(r.fullId);
      // No decision can come any more: a frontend that lists approvals must not ask the user for one.
      this.db.approvals.expireAwaiting(this.db.messages.openCalls(), at);
      this.db.conversation.end(at);
      this.db.events.add(null, "conversation.ended", null, { resourcesRemoved: resources.length }, at);
    });
    const hub = this.hub(owner);
    await Promise.all([
      hub.conversationEnded(meta.conversationId, at),
      ...resources.map((r) => hub.notifyResourceRemoved(meta.conversationId, r.fullId)),
    ]);
    return { ...this.describe(this.db.conversation.get()!), resourcesRemoved: resources.length };
  }

  private history(owner: Owner, meta: ConversationMeta): History {
    return new History({ store: this.db, compactions: this.db.compactions, approvals: this.db.approvals, bucket: this.env.ARTIFACTS, owner, conversationId: meta.conversationId, nonce: meta.nonce });
  }

  private readonly summariser = (policy: CompactionPolicy) => chooseSummariser(policy.summariser, summaryModel(this.env));

  private hubFor: DurableObjectStub<AppHub> | null = null;
  private auditKeyFor: Promise<CryptoKey> | null = null;

  /** Audit hashes are keyed per tenant, so the same secret hashes differently in another tenant's records. */
  private auditKey(owner: Owner): Promise<CryptoKey> {
    return (this.auditKeyFor ??= tenantAuditKey(this.env.AUTH_SECRET, owner.tenant));
  }

  /** What checking answers with the output hooks reaches: the agent's hooks through the hub, and where they run. */
  private reviewHost(owner: Owner, meta: ConversationMeta): ReviewHost {
    return { store: this.db, meta, toolbox: (agent) => this.hub(owner).toolbox(agent), tools: this.toolHost(owner) };
  }

  /** The tools the runtime serves run on the apps, through the user's hub. */
  private toolHost(owner: Owner): ToolHost {
    const hub = this.hub(owner);
    return {
      callTool: (name, args, meta) => hub.callTool(name, args, meta),
      readSkill: (name) => hub.readSkill(name),
      providers: () => hub.providers(),
      listItems: (ref, params) => hub.listItems(ref, params),
      readContext: (ref, id, conversationId) => hub.readContext(ref, id, conversationId),
      ...(this.env.AI ? { rankByMeaning: (query: string, tools: readonly string[]) => hub.rankByMeaning(query, tools) } : {}),
      callHook: (hook, params) => hub.callHook(hook, params),
      askGuardModel: (config, input) => askGuardModel(input, { config, upstream: upstreamConfig(this.env, config.upstream), nonce: this.db.conversation.get()?.nonce ?? null }),
    };
  }

  /** One conversation belongs to one user, so one hub: its stub is kept. */
  private hub(owner: Owner): DurableObjectStub<AppHub> {
    this.hubFor ??= hubStub(this.env, owner);
    return this.hubFor;
  }

  /**
   * The one way in for a change: through the serial queue, so turns and changes never interleave (a Durable Object's
   * input gate opens while it awaits the hub), and only for the conversation's owner; "live" changes also need it not
   * ended. The checks run once the queue reaches the task: an earlier change may have ended the conversation.
   */
  private serve<T>(owner: Owner, access: "queued" | "live", task: (meta: ConversationMeta) => Promise<Result<T>> | Result<T>): Promise<Result<T>> {
    return this.queue.run(async () => {
      const meta = access === "live" ? this.live(owner) : this.owned(owner);
      return meta.ok ? task(meta.value) : meta;
    });
  }

  /** A read: the owner's, never queued (a read sees committed state; SQLite calls are synchronous). */
  private read<T>(owner: Owner, task: (meta: ConversationMeta) => Result<T>): Result<T> {
    const meta = this.owned(owner);
    return meta.ok ? task(meta.value) : meta;
  }

  /** Another user's conversation (or none) looks the same from outside: not found. */
  private owned(owner: Owner): Result<ConversationMeta> {
    const meta = this.db.conversation.get();
    if (!meta || meta.tenant !== owner.tenant || meta.user !== owner.user) return fail("not-found", "no such conversation");
    return ok(meta);
  }

  private live(owner: Owner): Result<ConversationMeta> {
    const meta = this.owned(owner);
    if (meta.ok && meta.value.endedAt) return fail("conflict", "this conversation has ended");
    return meta;
  }

  private describe(meta: ConversationMeta): ConversationInfo {
    return {
      id: meta.conversationId,
      createdAt: meta.createdAt,
      endedAt: meta.endedAt,
      agent: meta.agent,
      messageCount: this.db.messages.count(),
      ...(meta.parent ? { parent: { ...meta.parent, depth: meta.depth } } : {}),
    };
  }
}
