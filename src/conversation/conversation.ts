import { DurableObject } from "cloudflare:workers";
import type { ApprovalDecisionBody, Attachment, CompactBody, EventsQuery, MessagesQuery, ReportedUsage, RunToolsBody, SetMessagesBody, TurnBody, TurnsQuery } from "../protocol/http";
import { contextKey } from "../core/attachments";
import type { ContextList } from "../protocol/context-data";
import type { AppendableMessage, ChatMessage } from "../protocol/messages";
import { fail, ok, type Result } from "../core/problem";
import { newNonce } from "../core/runtime-tag";
import { memoryHalfLifeHours, summaryModel, upstreamConfig } from "../platform/config";
import type { Env } from "../platform/env";
import type { Owner } from "../protocol/owner";
import { DEFAULT_COMPACTION_POLICY } from "../history/policy";
import type { CompactionPolicy } from "../protocol/policies";
import { chooseSummariser } from "../history/summarise";
import { appPort, type ConversationInbox, type PushedResource } from "../hub/port";
import { askGuardModel } from "../tools/guard-model";
import { tenantAuditKey } from "../protect";
import type { ModelAnswer, OutputReview } from "../hooks/output";
import type { ApprovalInfo, AttachmentInfo, ContextEvent, ConversationInfo, MessagePage, PastTurn, ResourceInfo, TurnPage, TurnResult } from "../protocol/frontend";
import type { ContextsListParams } from "../protocol/methods";
import type { CompactionStatus, RequestMessages } from "../protocol/history";
import type { ToolRunResult } from "../protocol/tools";
import type { DelegationCompleted, DelegationInfo, DelegationStart } from "../protocol/delegation";
import type { ToolResultEvidence } from "../protocol/evidence";
import { durableDatabase } from "../storage/database";
import { migrate } from "../storage/migrate";
import { decideApproval, requestApproval } from "./approvals";
import { ConversationContextManager } from "./context-manager";
import type { GatewayCursor } from "./gateway-store";
import { recordGatewayStep, runLive, takeGatewayTurn, type GatewayRecord } from "./gateway-runs";
import { History, type CompactionReport } from "./history";
import { describeConversation, endConversation } from "./lifecycle";
import { CONVERSATION_MIGRATIONS } from "./migrations";
import { reviewAppended, reviewGatewayOutput } from "./output-review";
import { attachContext, storePushedResource } from "./resources";
import { conversationPort, TurnCache, type ChildAnswer, type ConversationObject, type ConversationScope } from "./scope";
import { SerialQueue } from "./serial-queue";
import { ConversationDb, type ConversationMeta } from "./store";
import { closeDelegateCall, completeChild, startChild } from "./subagent";
import type { ToolResultReport } from "./tool-results";
import { runOpenCalls } from "./tool-runs";
import { McpSessions } from "./mcp-sessions";
import type { McpTarget } from "../mcp/serve/wire";
import { takeTurn } from "./turn/index";
import { replay } from "./turn/replay";
import { observeToolRun, observeTurn, observeUsage } from "./telemetry";
import type { WhatIfAnswer, WhatIfBody } from "../protocol/what-if";
import { whatIf } from "./inspect";

/**
 * One per conversation: history as the model read it, the context ledger,
 * attachments, session resources, turns and events, all in its SQLite. Every
 * change goes through one queue, so turns and appends never interleave. Each
 * request is served over one `ConversationScope` (src/conversation/scope.ts),
 * built here: this object is where the bindings become ports.
 */
export class Conversation extends DurableObject<Env> implements ConversationObject, ConversationInbox {
  private readonly db: ConversationDb;
  private readonly queue = new SerialQueue();
  private readonly cache = new TurnCache();
  private readonly mcpSessions = new McpSessions((at) => this.ctx.storage.setAlarm(at));
  /** A conversation belongs to one user: the parts of its scope that do not change between requests, built once. */
  private shared: Omit<ConversationScope, "meta"> | null = null;

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
      await this.parts(owner).apps.conversationCreated({ id: conversationId, agent: agent ?? null, createdAt: made.value.createdAt });
      return ok(describeConversation(this.db, made.value));
    });
  }

  /** The conversation made here, inside the queue, and not yet listed in the user's hub. */
  private async begin(owner: Owner, conversationId: string, agent?: string, compactionPolicy: CompactionPolicy = DEFAULT_COMPACTION_POLICY): Promise<Result<ConversationMeta>> {
    if (this.db.conversation.get()) return fail("conflict", "conversation already exists");
    let agentContexts: string[] = [];
    let resultPolicies = {};
    if (agent !== undefined) {
      const found = await this.parts(owner).apps.agent(agent);
      if (!found) return fail("not-found", `no agent '${agent}' is registered`);
      ({ attachedContexts: agentContexts, resultPolicies } = found);
    }
    const createdAt = new Date().toISOString();
    this.db.conversation.create({ conversationId, tenant: owner.tenant, user: owner.user, agent: agent ?? null, agentContexts, resultPolicies, compactionPolicy, createdAt, nonce: newNonce() });
    return ok(this.db.conversation.get()!);
  }

  info(owner: Owner): Result<ConversationInfo> {
    return this.read(owner, (scope) => ok(describeConversation(this.db, scope.meta)));
  }

  /**
   * `gateway`, for a gateway run's own turns: `outputReviewed` when it ran the output hooks on the reply already (it
   * regenerates on a rejection itself); `run`, the run, refused once a newer request interrupted it.
   */
  turn(owner: Owner, body: TurnBody, gateway?: { outputReviewed?: boolean; run?: string }): Promise<Result<TurnResult>> {
    return this.serve(owner, "queued", async (scope) => {
      const live = runLive(this.db.gateway, gateway?.run);
      if (!live.ok) return live;
      const start = Date.now();
      const turn = await takeTurn(scope, body, { outputReviewed: gateway?.outputReviewed === true });
      observeTurn(this.env, this.waitUntil, scope, turn, start, gateway === undefined);
      return this.announced(scope, turn);
    });
  }

  // ── subagents (src/conversation/subagent.ts; docs/tools.md, "Subagents") ──

  /** The child's side of a `delegate` call: created for the subagent, it takes its first turn at once. */
  startDelegation(owner: Owner, start: DelegationStart): Promise<Result<{ turnId: string }>> {
    return this.queue.run(() => startChild(this.parts(owner), start));
  }

  /** The child's final answer (POST …/delegation/complete, or the gateway's loop): it closes the parent's call, then the child ends. */
  completeDelegation(owner: Owner, reply: ChatMessage): Promise<Result<DelegationCompleted>> {
    return this.serve(owner, "live", (scope) => completeChild(scope, reply));
  }

  /** The parent's side: a child's final answer closes its `delegate` call, while that call is still open. */
  closeDelegation(owner: Owner, done: ChildAnswer): Promise<Result<{ toolResult: ToolResultEvidence }>> {
    return this.serve(owner, "live", (scope) => closeDelegateCall(scope, done));
  }

  /** The conversation's `delegate` calls and their children, oldest first. */
  listDelegations(owner: Owner): Result<{ delegations: DelegationInfo[] }> {
    return this.read(owner, () => ok({ delegations: this.db.delegations.list() }));
  }

  /** The open calls the runtime serves, run outside a turn; their results are stored like appended ones. */
  runTools(owner: Owner, body: RunToolsBody, run?: string): Promise<Result<ToolRunResult>> {
    return this.serve(owner, "live", async (scope) => {
      const live = runLive(this.db.gateway, run);
      if (!live.ok) return live;
      const ran = await runOpenCalls(scope, body);
      observeToolRun(this.env, this.waitUntil, scope, ran);
      return ran;
    });
  }

  // ── the model gateway (src/gateway/; src/conversation/gateway-runs.ts) ──

  /** Where the gateway is in the client's copy of the conversation: null before its first request here. */
  gatewayCursor(owner: Owner): Result<{ cursor: GatewayCursor | null; messageCount: number }> {
    return this.read(owner, () => ok({ cursor: this.db.gateway.cursor(), messageCount: this.db.messages.count() }));
  }

  /** The gateway's turn: taken, and the cursor moved past it, only if the cursor is still where the gateway read it. */
  gatewayTurn(owner: Owner, body: TurnBody, cursor: { expected: GatewayCursor | null; next: GatewayCursor }, run: string): Promise<Result<TurnResult>> {
    return this.serve(owner, "queued", async (scope) => {
      const turn = await takeGatewayTurn(scope, body, cursor, run);
      observeTurn(this.env, this.waitUntil, scope, turn, 0, false);
      return this.announced(scope, turn);
    });
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
        const turn = await takeGatewayTurn(this.scope(owner, made.value), body, { expected: null, next }, run);
        if (!turn.ok) {
          await this.ctx.storage.deleteAll();
          return turn;
        }
        await this.parts(owner).apps.conversationCreated({ id: conversationId, agent: body.agent, createdAt: made.value.createdAt });
        observeTurn(this.env, this.waitUntil, this.scope(owner, made.value), turn, 0, false);
        return turn;
      } catch (error) {
        // Whatever failed (the turn, the hub's listing), nothing is left half made.
        await this.ctx.storage.deleteAll();
        throw error;
      }
    });
  }

  /** The gateway's bookkeeping after a step: its cursor, its run's end, the upstream's usage. */
  gatewayRecord(owner: Owner, record: GatewayRecord): Promise<Result<{ lastSeq: number }>> {
    return this.serve(owner, "queued", (scope) => {
      observeUsage(this.env, this.waitUntil, scope, record.usage ?? []);
      return recordGatewayStep(scope, record);
    });
  }

  /** The gateway's check of one model answer by the agent's output hooks. */
  reviewOutput(owner: Owner, check: { agent: string; turnId: string; reply: ModelAnswer; attempt: number }): Promise<Result<OutputReview & { reminder?: string; rejected?: string | null }>> {
    return this.serve(owner, "live", (scope) => reviewGatewayOutput(scope, check));
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
    const appended = await manager.value.addMessages(messages, () =>
      run === undefined ? reviewAppended(this.scope(owner, this.db.conversation.get()!), messages) : runLive(this.db.gateway, run),
    );
    if (appended.ok && usage) {
      this.recordUsage(usage, appended.value.lastSeq);
      observeUsage(this.env, this.waitUntil, this.scope(owner, this.db.conversation.get()!), [usage]);
    }
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
    return this.read(owner, (scope) => {
      const prior = this.db.turns.withTime(turnId);
      if (!prior) return fail("not-found", `no turn '${turnId}' in this conversation`);
      const gatewaySteps = this.db.events.gatewayStepsOf(turnId);
      return ok({ ...replay(scope, new History(scope), prior.turn), createdAt: prior.createdAt, reportedUsage: this.db.events.usageOf(turnId), ...(gatewaySteps ? { gatewaySteps } : {}) });
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
    return meta.ok ? ok(new ConversationContextManager(this.scope(owner, meta.value), this.queue)) : meta;
  }

  // ── the inspector (src/conversation/inspect.ts; docs/inspector.md) ──

  /** A stored turn fitted again under another budget, window or compaction policy; nothing is stored. */
  whatIf(owner: Owner, turnId: string, body: WhatIfBody): Result<WhatIfAnswer> {
    const turn = this.pastTurn(owner, turnId);
    return turn.ok ? this.read(owner, (scope) => whatIf(turn.value, scope.meta.compactionPolicy, body, scope.meta.nonce)) : turn;
  }

  // ── approvals of tool calls (src/conversation/approvals.ts) ──

  /** The approvals of the calls still open: what a frontend that reconnects must ask the user again. */
  listApprovals(owner: Owner): Result<{ approvals: ApprovalInfo[] }> {
    return this.read(owner, () => ok({ approvals: this.db.approvals.ofOpenCalls(this.db.messages.openCalls()) }));
  }

  requestApproval(owner: Owner, toolCallId: string): Promise<Result<{ approval: ApprovalInfo; created: boolean }>> {
    return this.serve(owner, "live", (scope) => requestApproval(scope, toolCallId));
  }

  decideApproval(owner: Owner, toolCallId: string, decision: ApprovalDecisionBody): Promise<Result<{ approval: ApprovalInfo; seq: number | null }>> {
    return this.serve(owner, "live", (scope) => decideApproval(scope, toolCallId, decision));
  }

  attachments(owner: Owner): Result<{ attachments: AttachmentInfo[] }> {
    return this.read(owner, () => ok({ attachments: this.db.attachments.list() }));
  }

  /** A picked item is fetched once here so the user learns at once if it does not exist. */
  attach(owner: Owner, attachment: Attachment): Promise<Result<{ attachments: AttachmentInfo[] }>> {
    return this.serve(owner, "live", (scope) => attachContext(scope, attachment));
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
    return this.serve(owner, "live", (scope) => storePushedResource(scope, app, resource));
  }

  removeResource(owner: Owner, fullId: string, options: { notifyApp: boolean }): Promise<Result<{ removed: string }>> {
    return this.serve(owner, "queued", (scope) => {
      if (!this.db.resources.delete(fullId)) return fail("not-found", `no resource '${fullId}' in this conversation`);
      this.db.events.add(null, "resource.removed", fullId, { by: options.notifyApp ? "user" : "app" }, new Date().toISOString());
      if (options.notifyApp) void scope.apps.notifyResourceRemoved(scope.meta.conversationId, fullId);
      return ok({ removed: fullId });
    });
  }

  // ── MCP sessions (src/conversation/mcp-sessions.ts; docs/mcp.md, "Serve") ──

  /**
   * One request of an MCP session, in the queue like every change. An initialize without a conversation makes one (only
   * once the request is known to be a valid initialize); a session's requests need the conversation live and its agent.
   */
  mcp(owner: Owner, request: Request, target: McpTarget): Promise<Response> {
    return this.queue.run(() =>
      this.mcpSessions.handle(request, target, async (create) => {
        if (create) {
          const made = await this.begin(owner, target.conversationId, target.agent);
          if (!made.ok) return made;
          await this.parts(owner).apps.conversationCreated({ id: target.conversationId, agent: target.agent, createdAt: made.value.createdAt });
          return ok(this.scope(owner, made.value));
        }
        const meta = this.live(owner);
        if (!meta.ok) return meta;
        if (meta.value.agent !== null && meta.value.agent !== target.agent) return fail("conflict", `this conversation is agent '${meta.value.agent}'s, not '${target.agent}'s`);
        return ok(this.scope(owner, meta.value));
      }),
    );
  }

  /** A turn's result, once the MCP sessions subscribed to contexts it pulled at a new version are told. */
  private async announced<T>(scope: ConversationScope, turn: Result<T>): Promise<Result<T>> {
    if (turn.ok) await this.mcpSessions.pulled(scope);
    return turn;
  }

  /** The alarm: MCP sessions idle for a day end (the only alarm this object sets). */
  override async alarm(): Promise<void> {
    await this.queue.run(async () => {
      const meta = this.db.conversation.get();
      if (meta) await this.mcpSessions.expire(this.scope({ tenant: meta.tenant, user: meta.user }, meta));
    });
  }

  /** The app of a context an MCP session subscribed to says it changed (through the hub's watchers). */
  async contextChanged(owner: Owner, ref: string): Promise<void> {
    await this.serve(owner, "live", async (scope) => ok(await this.mcpSessions.changed(scope, ref)));
  }

  async browse(owner: Owner, ref: string, params: Omit<ContextsListParams, "provider">): Promise<Result<ContextList>> {
    const meta = this.owned(owner);
    return meta.ok ? this.parts(owner).apps.listItems(ref, params) : meta;
  }

  /** The conversation's turns, oldest first, a page at a time (`cursor`: how many came before). */
  turnPage(owner: Owner, query: TurnsQuery): Result<TurnPage> {
    return this.read(owner, () => {
      const offset = Number(query.cursor ?? 0);
      const turns = this.db.turns.summaries(offset, query.limit + 1);
      const more = turns.length > query.limit;
      return ok({ turns: turns.slice(0, query.limit), nextCursor: more ? String(offset + query.limit) : null });
    });
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
    return this.serve(owner, "queued", async (scope) => {
      await this.mcpSessions.endAll(scope);
      return ok(await endConversation(scope));
    });
  }

  // ── the scope every request is served over ──

  /** What every request of `owner` reaches: the bindings as ports, the audit key, the caches this object keeps. */
  private parts(owner: Owner): Omit<ConversationScope, "meta"> {
    if (this.shared && this.shared.owner.tenant === owner.tenant && this.shared.owner.user === owner.user) return this.shared;
    const env = this.env;
    const apps = appPort(env, owner);
    let auditKey: Promise<CryptoKey> | null = null;
    this.shared = {
      owner,
      db: this.db,
      now: () => new Date(),
      auditKey: () => (auditKey ??= tenantAuditKey(env.AUTH_SECRET, owner.tenant)),
      apps,
      models: {
        summariser: (policy) => chooseSummariser(policy.summariser, summaryModel(env)),
        askGuardModel: (config, input, nonce) => askGuardModel(input, { config, upstream: upstreamConfig(env, config.upstream), nonce }),
        ...(env.AI ? { rankByMeaning: (query: string, tools: readonly string[]) => apps.rankByMeaning(query, tools) } : {}),
      },
      // A subagent runs in a conversation of its own, in its own Durable Object (same tenant and user).
      conversations: conversationPort(env, owner),
      memory: { kv: env.MEMORY, halfLifeHours: memoryHalfLifeHours(env) },
      artifacts: env.ARTIFACTS,
      cache: this.cache,
    };
    return this.shared;
  }

  /** Work after the answer (telemetry: src/conversation/telemetry.ts). */
  private readonly waitUntil = (work: Promise<unknown>) => this.ctx.waitUntil(work);

  private scope(owner: Owner, meta: ConversationMeta): ConversationScope {
    return { ...this.parts(owner), meta };
  }

  /**
   * The one way in for a change: through the serial queue, so turns and changes never interleave (a Durable Object's
   * input gate opens while it awaits the hub), and only for the conversation's owner; "live" changes also need it not
   * ended. The checks run once the queue reaches the task: an earlier change may have ended the conversation.
   */
  private serve<T>(owner: Owner, access: "queued" | "live", task: (scope: ConversationScope) => Promise<Result<T>> | Result<T>): Promise<Result<T>> {
    return this.queue.run(async () => {
      const meta = access === "live" ? this.live(owner) : this.owned(owner);
      return meta.ok ? task(this.scope(owner, meta.value)) : meta;
    });
  }

  /** A read: the owner's, never queued (a read sees committed state; SQLite calls are synchronous). */
  private read<T>(owner: Owner, task: (scope: ConversationScope) => Result<T>): Result<T> {
    const meta = this.owned(owner);
    return meta.ok ? task(this.scope(owner, meta.value)) : meta;
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
}
