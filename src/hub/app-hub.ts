import { DurableObject } from "cloudflare:workers";
import { contextKey, mergeAttachments, type ContextRequest } from "../core/attachments";
import { ContextData, ContextList } from "../protocol/context-data";
import type { MissingReason } from "../protocol/evidence";
import { LIMITS } from "../protocol/limits";
import { qualify, splitQualified } from "../protocol/names";
import { fail, failWith, ok, type Result } from "../core/problem";
import { contextVersion } from "../core/version";
import { providerDeadlineMs, toolDeadlineMs } from "../platform/config";
import type { Env } from "../platform/env";
import type { Owner } from "../protocol/owner";
import type { AgentInfo, ConversationPage, ConversationSummary, ProviderInfo } from "../protocol/frontend";
import type { ConversationsQuery } from "../protocol/http";
import { ErrorCode, issuesOf, readFrame, rpcError, rpcNotification, rpcRequest, rpcResult, type FrameIssue, type JsonRpcResponse } from "../protocol/jsonrpc";
import { APP_SUBPROTOCOL, ContextsCurrentManyResult, CurrentManyAnswer, ToolsCallResult, type ContextsListParams, type ProviderMethod } from "../protocol/methods";
import type { SkillContent, ToolFailureReason, ToolRun, ToolSpec, Toolbox } from "../protocol/tools";
import { validateArguments } from "../tools/validate";
import type { HookCallParams, HookSpec } from "../protocol/hooks";
import type { HookAnswer } from "../hooks/chain";
import { durableDatabase } from "../storage/database";
import { migrate } from "../storage/migrate";
import { handleAppRequest, type RpcOutcome } from "./app-requests";
import { HUB_MIGRATIONS } from "./migrations";
import { AppCallError, PendingCalls } from "./pending-calls";
import { Registry, type ProviderRecord, type ToolRecord } from "./registry";
import { readStoredSkill } from "./skill-store";
import { saveSession, sessionOf, type SocketSession } from "./socket-session";
import { GatewayHeads, type GatewayHead } from "./gateway-heads";
import { MetricsStore } from "./metrics-store";
import type { Counts, MetricsPage } from "../telemetry/metrics";
import { ContextWatchers } from "./context-watchers";
import { ToolVectors } from "./tool-vectors";
import { McpServers } from "./mcp-servers";
import { MCP_RESOURCES_PROVIDER, type McpServerDeclaration, type McpServerInfo } from "../protocol/mcp-servers";
import type { SemanticHit } from "../tools/semantic-search";
import { conversationInbox, type AppPort, type PreparedTurn, type PulledContext } from "./port";
import { KeptAnswers } from "./kept-answers";

/** An agent's toolbox as built at a registry version, with whether each of its tools' apps was online then. */
interface BuiltToolbox {
  registry: number;
  online: [app: string, online: boolean][];
  box: Toolbox;
  version: string;
}

/**
 * One per tenant+user: the apps' sockets (hibernatable), their registrations and
 * agents (SQLite), and the calls the runtime makes to apps.
 */
export class AppHub extends DurableObject<Env> implements AppPort {
  private readonly registry: Registry;
  private readonly heads: GatewayHeads;
  private readonly metrics: MetricsStore;
  private readonly watchers: ContextWatchers;
  private readonly vectors: ToolVectors;
  /** The user's MCP servers, each an app of this hub (src/hub/mcp-servers.ts). */
  private readonly mcp: McpServers;
  private readonly pending = new PendingCalls();
  private activeConversation: string | null = null;
  /** Toolboxes by agent: built again only when a registration or an app's being online moved, not every turn. */
  private readonly toolboxes = new Map<string, BuiltToolbox>();
  private toolboxesBuilt = 0;
  /** Toolbox versions are this object's own: a conversation's from before a restart never matches. */
  private readonly epoch = crypto.randomUUID().slice(0, 8);
  /** The last answers of providers that notify their changes: a turn reuses them instead of asking the app again. */
  private readonly kept = new KeptAnswers();
  /** Each context's last content and its version: most pulls return what the last did, and hashing it again costs. */
  private readonly versions = new Map<string, { content: string; version: string }>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.registry = new Registry(ctx.storage);
    this.heads = new GatewayHeads(ctx.storage.sql);
    this.metrics = new MetricsStore(durableDatabase(ctx.storage));
    this.watchers = new ContextWatchers(ctx.storage.sql);
    this.vectors = new ToolVectors(ctx.storage, env.AI, (work) => ctx.waitUntil(work));
    this.mcp = new McpServers(ctx.storage.sql, this.registry, {
      toolsListed: (server) => this.toolsDeclared(server),
      contextChanged: (ref) => this.resourceChanged(ref),
      background: (work) => ctx.waitUntil(work.catch((error: unknown) => console.warn("MCP server work failed", error instanceof Error ? error.message : String(error)))),
    });
    // Heartbeats are answered without waking the object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
    ctx.blockConcurrencyWhile(async () => {
      migrate(durableDatabase(ctx.storage), HUB_MIGRATIONS);
      this.activeConversation = this.registry.activeConversation();
      this.mcp.start();
    });
  }

  /** The Worker has authenticated the app; its identity arrives in internal headers. */
  override async fetch(request: Request): Promise<Response> {
    const tenant = request.headers.get("x-cr-tenant");
    const user = request.headers.get("x-cr-user");
    const app = request.headers.get("x-cr-app");
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket" || !tenant || !user || !app) {
      return new Response("expected an authenticated WebSocket upgrade", { status: 400 });
    }
    this.registry.rememberIdentity({ tenant, user });
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [app]);
    saveSession(server, { app, sessionId: crypto.randomUUID(), initializedAt: null });
    const headers = new Headers();
    if (request.headers.get("x-cr-subprotocol") === APP_SUBPROTOCOL) headers.set("Sec-WebSocket-Protocol", APP_SUBPROTOCOL);
    return new Response(null, { status: 101, webSocket: client, headers });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const session = sessionOf(ws);
    if (!session) return;
    if (typeof message !== "string") return ws.send(rpcError(null, ErrorCode.InvalidRequest, "send JSON-RPC as text frames"));
    if (message.length > LIMITS.frameChars) {
      ws.send(rpcError(null, ErrorCode.TooLarge, `frame exceeds ${LIMITS.frameChars} characters`));
      // An answer too large still ends its call, at once: the caller must not wait out the deadline for it.
      const id = leadingId(message);
      if (id !== null) this.pending.settle(id, session.sessionId, { failure: new AppCallError("invalid", `the answer is larger than the ${LIMITS.frameChars}-character frame limit`) });
      return;
    }
    let data: unknown;
    try {
      data = JSON.parse(message);
    } catch {
      return ws.send(rpcError(null, ErrorCode.ParseError, "frame is not valid JSON"));
    }
    const incoming = readFrame(data);
    if (incoming.kind === "invalid") {
      ws.send(rpcError(incoming.id, ErrorCode.InvalidRequest, "not a JSON-RPC 2.0 message", { issues: incoming.issues }));
      // A malformed answer to a call still ends that call, as a failure: never as "nothing now".
      if (incoming.answer) this.pending.settle(incoming.id, session.sessionId, { failure: malformedAnswer(incoming.issues) });
      return;
    }
    if (incoming.kind === "response") {
      this.pending.settle(incoming.frame.id, session.sessionId, outcomeOf(incoming.frame));
      return;
    }
    const outcome = await this.answer(ws, session, incoming.frame.method, incoming.frame.params);
    if (incoming.kind === "notification") return;
    const { id } = incoming.frame;
    ws.send("error" in outcome ? rpcError(id, outcome.error.code, outcome.error.message, outcome.error.data) : rpcResult(id, outcome.result));
  }

  /** A failure behind a method (a Conversation object that threw) is an error answer, never a dropped request. */
  private async answer(ws: WebSocket, session: SocketSession, method: string, params: unknown): Promise<RpcOutcome> {
    try {
      const ctx = { env: this.env, registry: this.registry, ws, session, initialized: (app: string) => this.appInitialized(app), contextChanged: (ref: string) => this.contextChanged(ref), declareMcpServers: (app: string, servers: readonly McpServerDeclaration[]) => this.mcp.declare(app, servers) };
      return await handleAppRequest(ctx, method, params);
    } catch (error) {
      console.error("app request failed", method, error instanceof Error ? error.message : String(error));
      return { error: { code: ErrorCode.InternalError, message: `'${method}' failed inside the runtime; try again` } };
    }
  }

  /** An app (re)initialised: its providers may answer otherwise now, and its tools' vectors are brought up to date. */
  private appInitialized(app: string): void {
    this.kept.forgetApp(app);
    this.toolsDeclared(app);
  }

  /** An app declared its tools: their vectors for ranking by meaning are brought up to date in the background, never delaying its answer. */
  private toolsDeclared(app: string): void {
    const tools = this.registry.tools().filter((t) => t.app === app);
    this.ctx.waitUntil(this.vectors.declared(app, tools).catch((error) => console.warn("tool vectors not updated", app, error instanceof Error ? error.message : String(error))));
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.dropSocket(ws);
    // Completes the close handshake where the runtime does not do it for us; a no-op where it already has.
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, reason);
    } catch {
      // already closed
    }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.dropSocket(ws);
  }

  private dropSocket(ws: WebSocket): void {
    const session = sessionOf(ws);
    if (!session) return;
    this.pending.failSession(session.sessionId, new AppCallError("offline", `app '${session.app}' disconnected`));
    // Changes made while it was away would not be told.
    this.kept.forgetApp(session.app);
  }

  // ── Called by the Worker and the Conversation objects ─────────────────────

  agent(fullId: string): AgentInfo | null {
    return this.registry.agent(fullId);
  }

  agents(): AgentInfo[] {
    return this.registry.agents();
  }

  provider(ref: string): ProviderInfo | null {
    const record = this.registry.provider(ref);
    return record ? { ...record, online: this.appOnline(record.app) } : null;
  }

  providers(): ProviderInfo[] {
    return this.registry.providers().map((p) => ({ ...p, online: this.appOnline(p.app) }));
  }

  /** An app with a socket now, or an MCP server a call would be tried on (not waiting out a backoff). */
  private appOnline(app: string): boolean {
    return this.mcp.isServer(app) ? this.mcp.available(app) : this.socketFor(app) !== null;
  }

  // ── MCP servers the user registers (src/api/mcp-servers.ts) ──────────────

  mcpServers(): McpServerInfo[] {
    return this.mcp.list();
  }

  registerMcpServer(declaration: McpServerDeclaration): Promise<Result<McpServerInfo>> {
    return this.mcp.register(declaration);
  }

  removeMcpServer(name: string): Promise<Result<{ removed: string }>> {
    return this.mcp.remove(name);
  }

  /**
   * Everything a turn needs from the apps, in one call: the agent and its
   * toolbox, and every context it and the user attached (none when `runtime`
   * is null), pulled in parallel under the deadline.
   * A provider's failure is data (a missing context), never a failed turn.
   * The toolbox is left out when `knownToolbox` (the caller's last answer's `toolboxVersion`) is still current: a
   * large one costs a copy each way.
   */
  async prepareTurn(conversationId: string, agentId: string, runtime: { ref: string; itemId?: string | undefined }[] | null, active: boolean, knownToolbox: string | null): Promise<PreparedTurn | null> {
    // Only the servers this agent names: one still connecting holds up no other agent's turn.
    const agent = this.mcp.anyOpening ? this.registry.agent(agentId) : null;
    if (agent) await this.mcp.opened([...agent.tools, ...agent.catalog, ...agent.skills, ...agent.attachedContexts].map((name) => splitQualified(name).app), providerDeadlineMs(this.env));
    const built = this.builtToolbox(agentId);
    return built && { ...(await this.prepareWith(built, conversationId, runtime, active)), toolbox: built.version === knownToolbox ? null : built.box };
  }

  private async prepareWith(built: BuiltToolbox, conversationId: string, runtime: { ref: string; itemId?: string | undefined }[] | null, active: boolean): Promise<Omit<PreparedTurn, "toolbox">> {
    if (active) this.conversationActive(conversationId);
    // A continuation (tool results only) pulls nothing: contexts ride with user messages.
    if (runtime === null) return { toolboxVersion: built.version, pulled: [] };
    const requests = mergeAttachments(built.box.agent.attachedContexts, runtime);
    const together = this.askTogether(conversationId, requests);
    return { toolboxVersion: built.version, pulled: await Promise.all(requests.map((r) => this.pullOne(conversationId, r, together.get(r.key)))) };
  }

  /**
   * The current state of an app's providers asked in one `contexts/currentMany`, where the app answers it and two or
   * more of its providers are to be asked (a kept answer is not asked): one frame each way instead of one per
   * provider. Each provider's answer, by request key, as `contexts/current` alone would give it; one the app could
   * not fit in the answer is asked alone.
   */
  private askTogether(conversationId: string, requests: readonly ContextRequest[]): Map<string, AskedTogether> {
    const byApp = new Map<string, { request: ContextRequest; provider: ProviderRecord }[]>();
    for (const request of requests) {
      if (request.itemId !== undefined || this.mcp.isServer(splitQualified(request.ref).app)) continue;
      const provider = this.registry.provider(request.ref);
      if (!provider?.methods.includes("current") || (provider.notifies && this.kept.get(request.ref, conversationId) !== undefined)) continue;
      byApp.set(provider.app, [...(byApp.get(provider.app) ?? []), { request, provider }]);
    }
    const answers = new Map<string, AskedTogether>();
    const deadlineMs = providerDeadlineMs(this.env);
    // The app's deadline for each provider is the runtime's, in whole milliseconds the protocol takes; the runtime waits
    // for the whole answer a little longer, for its way there and back, so a late provider is a timeout of its own.
    const appDeadlineMs = Math.min(60_000, Math.floor(deadlineMs));
    if (appDeadlineMs < 1) return answers;
    for (const [app, asked] of byApp) {
      const ws = this.socketFor(app);
      if (asked.length < 2 || !ws || sessionOf(ws)?.currentMany !== true) continue;
      const due = Date.now() + appDeadlineMs + LIMITS.currentManyMarginMs;
      const params = (request: ContextRequest) => ({ provider: splitQualified(request.ref).name, conversationId });
      const batch = this.callApp(app, "contexts/currentMany", { requests: asked.map((a) => params(a.request)), deadlineMs: appDeadlineMs }, appDeadlineMs + LIMITS.currentManyMarginMs).then((answer): Result<unknown[], AppFailure> => {
        if (!answer.ok) return answer;
        const read = ContextsCurrentManyResult.safeParse(answer.value);
        if (read.success && read.data.answers.length === asked.length) return ok(read.data.answers);
        return failWith({ reason: "invalid", detail: `the answer to contexts/currentMany is not one answer per provider asked`, sent: true });
      });
      asked.forEach(({ request, provider }, k) =>
        answers.set(request.key, {
          provider,
          generation: this.kept.now(request.ref),
          answer: batch.then((many): AppAnswer | Promise<AppAnswer> => {
            if (!many.ok) return many;
            // Each answer is read alone: one malformed answer is that provider's, not the others'.
            const one = CurrentManyAnswer.safeParse(many.value[k]);
            if (!one.success) return failWith({ reason: "invalid", detail: `malformed answer in contexts/currentMany: ${issuesOf(one.error).map((i) => i.message).join("; ")}`, sent: true });
            if ("result" in one.data) return ok(one.data.result);
            // Asked alone, within what is left of the turn's wait: the pull waits for no provider longer than before.
            if (one.data.error.code === ErrorCode.TooLarge) return this.callApp(app, "contexts/current", params(request), Math.max(1, due - Date.now()));
            return failWith({ reason: one.data.error.code === ErrorCode.Timeout ? "timeout" : "error", detail: one.data.error.message, sent: true });
          }),
        }),
      );
    }
    return answers;
  }

  /** One context as the model asked for it (read_context): a provider's current state, or one of its items. */
  async readContext(ref: string, id: string | undefined, conversationId: string): Promise<Result<ContextData | null>> {
    if (id !== undefined) return this.item(ref, id);
    const answer = await this.currentOf(ref, conversationId);
    if (!answer.ok) return unanswered(answer);
    const data = MaybeContextData.safeParse(answer.value.value);
    return data.success ? ok(data.data) : fail("provider-unavailable", `'${ref}' answered with invalid data`, issuesOf(data.error));
  }

  async listItems(ref: string, params: Omit<ContextsListParams, "provider">): Promise<Result<ContextList>> {
    const answer = await this.callProvider(ref, "list", (provider) => ({ ...params, provider }));
    if (!answer.ok) return unanswered(answer);
    const list = ContextList.safeParse(answer.value.value);
    return list.success ? ok(list.data) : fail("provider-unavailable", `'${ref}' answered with an invalid list`, issuesOf(list.error));
  }

  async item(ref: string, id: string): Promise<Result<ContextData | null>> {
    const answer = await this.callProvider(ref, "get", (provider) => ({ provider, id }));
    if (!answer.ok) return unanswered(answer);
    const data = MaybeContextData.safeParse(answer.value.value);
    return data.success ? ok(data.data) : fail("provider-unavailable", `'${ref}' answered with invalid data`, issuesOf(data.error));
  }

  /** Resources pushed without a conversationId go to the conversation the user most recently created or spoke in. */
  conversationActive(conversationId: string): void {
    if (this.activeConversation === conversationId) return;
    this.activeConversation = conversationId;
    this.registry.setActiveConversation(conversationId);
  }

  /**
   * A new conversation: listed (GET /v1/conversations) and, as the most recent, active — unless it is a subagent's,
   * which the user never speaks in: resources pushed without a conversationId stay with the user's own.
   */
  conversationCreated(conversation: Pick<ConversationSummary, "id" | "agent" | "createdAt">, active = true): void {
    this.registry.indexConversation(conversation);
    if (active) this.conversationActive(conversation.id);
  }

  listConversations(query: ConversationsQuery): Result<ConversationPage> {
    const page = this.registry.conversationPage(query.cursor, query.limit);
    return page ? ok(page) : fail("invalid-request", "the cursor was not issued by this listing; start again without it");
  }

  conversationEnded(conversationId: string, endedAt?: string): void {
    if (endedAt !== undefined) this.registry.indexConversationEnded(conversationId, endedAt);
    this.watchers.forget(conversationId);
    this.kept.forgetConversation(conversationId);
    if (this.activeConversation !== conversationId) return;
    this.activeConversation = null;
    this.registry.clearActiveConversation(conversationId);
  }

  /** The model gateway's cursor in a conversation moved (src/hub/gateway-heads.ts). */
  gatewayHeadMoved(head: GatewayHead): void {
    this.heads.moved(head);
  }

  /** A turn's or a usage report's counts, added to the agent's counters (src/telemetry/metrics.ts). */
  countMetrics(agent: string, counts: Counts): void {
    this.metrics.add(agent, counts, new Date().toISOString());
  }

  /** The user's counters, one row per agent (GET /v1/metrics). */
  metricsPage(): MetricsPage {
    return { agents: this.metrics.list() };
  }

  /** The agent's conversations a resent history continues, best first (src/hub/gateway-heads.ts). */
  gatewayConversations(agent: string, chains: readonly string[]): string[] {
    return this.heads.matching(agent, chains);
  }

  watchContext(conversationId: string, ref: string, watching: boolean): void {
    this.watchers.watch(conversationId, ref, watching);
  }

  /**
   * An MCP server says one of its resources changed: what was kept of it goes, and the conversations watching it are
   * told, as the pinned `server:uri` and as an item of `server:resources` (a watcher of either reads it again).
   */
  private resourceChanged(ref: string): void {
    const { app: server, name: uri } = splitQualified(ref);
    const provider = qualify(server, MCP_RESOURCES_PROVIDER);
    this.versions.delete(ref);
    this.versions.delete(contextKey(provider, uri));
    this.contextChanged(ref);
    this.contextChanged(provider);
  }

  /** A context changed: what was kept of it goes, and each conversation watching it is told in the background (one that fails is only logged). */
  contextChanged(ref: string): void {
    this.kept.forget(ref);
    const owner = this.registry.identity();
    if (!owner) return;
    for (const conversationId of this.watchers.of(ref)) {
      const told = conversationInbox(this.env, owner, conversationId).contextChanged(owner, ref);
      this.ctx.waitUntil(told.catch((error: unknown) => console.warn("context change not delivered", conversationId, error instanceof Error ? error.message : String(error))));
    }
  }

  notifyResourceRemoved(conversationId: string, fullId: string): void {
    const { app } = splitQualified(fullId);
    const frame = rpcNotification("resources/removed", { fullId, conversationId });
    for (const ws of this.ctx.getWebSockets(app)) if (sessionOf(ws)?.initializedAt != null) ws.send(frame);
  }

  owner(): Owner | null {
    return this.registry.identity();
  }

  // ── Tools and skills, for the Conversation objects ───────────────────────

  /** An agent's tools and skills as registered now; null for an unknown agent. */
  toolbox(agentId: string): Toolbox | null {
    return this.builtToolbox(agentId)?.box ?? null;
  }

  /** The agent's toolbox, built again only when the registry's version or an app's being online moved since. */
  private builtToolbox(agentId: string): BuiltToolbox | null {
    const cached = this.toolboxes.get(agentId);
    if (cached && cached.registry === this.registry.version && cached.online.every(([app, online]) => this.appOnline(app) === online)) return cached;
    const online = new Map<string, boolean>();
    const isOnline = (app: string) => {
      if (!online.has(app)) online.set(app, this.appOnline(app));
      return online.get(app)!;
    };
    const registry = this.registry.version;
    const box = this.buildToolbox(agentId, isOnline);
    if (!box) return null;
    const built = { registry, online: [...online], box, version: `${this.epoch}.${++this.toolboxesBuilt}` };
    this.toolboxes.set(agentId, built);
    return built;
  }

  private buildToolbox(agentId: string, isOnline: (app: string) => boolean): Toolbox | null {
    const agent = this.registry.agent(agentId);
    if (!agent) return null;
    const forAgent = (patterns: readonly string[]) => patterns.some((p) => p === "*:*" || matches(p, agentId));
    const hooks = this.registry.hooks().filter((h) => forAgent(h.agents));
    const mounts = this.registry.mounts().flatMap(({ agents, ...mount }) => (forAgent(agents) ? [mount] : []));
    const box = { ...this.toolsOf(agent, isOnline), ...(hooks.length ? { hooks } : {}), ...(mounts.length ? { mounts } : {}) };
    if (!agent.subagents?.length) return box;
    // The subagents `delegate` may start: those registered now; the others are named unknown, like a missing tool.
    const subagents: NonNullable<Toolbox["subagents"]> = [];
    for (const id of agent.subagents) {
      const sub = this.registry.agent(id);
      if (sub) subagents.push({ id, name: sub.name, description: sub.description ?? "" });
      else box.unknown.push(id);
    }
    return { ...box, subagents };
  }

  private toolsOf(agent: AgentInfo, isOnline: (app: string) => boolean): Toolbox {
    // Most turns' agents use no tools: nothing more to read.
    if (agent.tools.length + agent.catalog.length + agent.skills.length === 0) return { agent, bound: [], catalog: [], skills: [], unknown: [] };
    const spec = ({ app, ...tool }: ToolRecord): ToolSpec => ({ ...tool, online: isOnline(app) });
    const tools = new Map(this.registry.tools().map((t) => [t.name, t]));
    const unknown: string[] = [];
    const bound: ToolSpec[] = [];
    for (const name of agent.tools) {
      const tool = tools.get(name);
      if (tool) bound.push(spec(tool));
      else unknown.push(name);
    }
    const boundNames = new Set(agent.tools);
    const catalog = [...tools.values()]
      .filter((t) => !boundNames.has(t.name) && agent.catalog.some((p) => matches(p, t.name)))
      .sort((a, b) => compare(a.name, b.name))
      .map(spec);
    const allSkills = this.registry.skills();
    const skillNames = new Set(allSkills.map((s) => s.name));
    for (const name of agent.catalog) if (!name.endsWith(":*") && !tools.has(name)) unknown.push(name);
    for (const name of agent.skills) if (!name.endsWith(":*") && !skillNames.has(name)) unknown.push(name);
    const skills = allSkills
      .filter((s) => agent.skills.some((p) => matches(p, s.name)))
      .map(({ name, description }) => ({ name, description }))
      .sort((a, b) => compare(a.name, b.name));
    return { agent, bound, catalog, skills, unknown };
  }

  /**
   * The catalog tools among `names` closest in meaning to `query`, best first (search_tools fuses them with its lexical
   * ranking); null without the Workers AI binding, or when the model did not answer in time: the search is lexical then.
   */
  rankByMeaning(query: string, names: readonly string[]): Promise<SemanticHit[] | null> {
    const wanted = new Set(names);
    return this.vectors.rank(query, this.registry.tools().filter((t) => wanted.has(t.name)));
  }

  /**
   * Runs one tool for a model's call: arguments checked against the tool's schema first (nothing reaches
   * the app when they fail), then `tools/call` to the app under TOOL_DEADLINE_MS. Every failure is a value.
   */
  async callTool(name: string, args: unknown, meta: { conversationId: string; toolCallId: string }): Promise<ToolRun> {
    const started = Date.now();
    const failed = (reason: ToolFailureReason, detail: string): ToolRun => ({ ok: false, reason, detail, ms: Date.now() - started });
    const tool = name.includes(":") ? this.registry.tool(name) : null;
    if (!tool) return failed("unknown_tool", `no app has registered tool '${name}'`);
    const input = args ?? {};
    const checked = validateArguments(tool.inputSchema, input);
    if (!checked.ok) return failed("invalid_arguments", checked.problem.join("\n"));
    if (this.mcp.isServer(tool.app)) return this.mcp.callTool(name, input as Record<string, unknown>, toolDeadlineMs(this.env));
    const params = { name: splitQualified(name).name, arguments: input, conversationId: meta.conversationId, toolCallId: meta.toolCallId };
    const answer = await this.callApp(tool.app, "tools/call", params, toolDeadlineMs(this.env));
    if (!answer.ok) {
      // Gone after the call was sent: the tool may have run.
      const { reason: why, detail, sent } = answer.problem;
      const reason = why === "offline" && sent ? "disconnected" : why === "timeout" || why === "offline" || why === "error" ? why : "invalid";
      return failed(reason, detail);
    }
    const result = ToolsCallResult.safeParse(answer.value);
    if (!result.success) {
      const detail = issuesOf(result.error).map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
      return failed("invalid", `'${name}' answered with an invalid CallToolResult: ${detail}`);
    }
    const text = result.data.content.flatMap((part) => (part.type === "text" && typeof part.text === "string" ? [part.text] : [])).join("\n");
    return { ok: true, text, isError: result.data.isError === true, ms: Date.now() - started };
  }

  /**
   * One hook call (`hooks/call`) to the app that registered it, under the hook's deadline: its answer (not yet
   * checked against the point's schema), or why there is none. Never a hang: an offline app fails at once.
   */
  async callHook(hook: HookSpec, params: HookCallParams): Promise<HookAnswer> {
    const started = Date.now();
    const answer = await this.callApp(hook.app, "hooks/call", params, hook.deadlineMs);
    const ms = Date.now() - started;
    if (answer.ok) return { ok: true, value: answer.value, ms };
    const { reason: why, detail } = answer.problem;
    return { ok: false, reason: why === "timeout" || why === "offline" || why === "error" ? why : "invalid", detail, ms };
  }

  /** A hook that answers nothing (`turn.end`): a notification to the app, if it is connected. */
  notifyHook(hook: HookSpec, params: HookCallParams): boolean {
    const ws = this.socketFor(hook.app);
    if (!ws) return false;
    try {
      ws.send(rpcNotification("hooks/call", params));
      return true;
    } catch {
      return false;
    }
  }

  /** A skill's manual and references, from R2. */
  async readSkill(name: string): Promise<Result<SkillContent>> {
    const skill = name.includes(":") ? this.registry.skill(name) : null;
    const owner = this.registry.identity();
    if (!skill || !owner) return fail("not-found", `no app has registered skill '${name}'`);
    if (this.mcp.isServer(skill.app)) return this.mcp.readPrompt(name, skill.description, providerDeadlineMs(this.env));
    const stored = await readStoredSkill(this.env.ARTIFACTS, owner, skill.app, splitQualified(name).name);
    if (!stored) return fail("not-found", `the manual of skill '${name}' is missing; the app registers it again when it reconnects`);
    return ok({ name: skill.name, description: skill.description, ...stored });
  }

  // ── Calls to apps ─────────────────────────────────────────────────────────

  private async pullOne(conversationId: string, request: ContextRequest, together?: AskedTogether): Promise<PulledContext> {
    const base = { key: request.key, kind: "context" as const, ref: request.ref, ...(request.itemId !== undefined ? { itemId: request.itemId } : {}) };
    const answer =
      request.itemId === undefined
        ? await this.currentOf(request.ref, conversationId, together)
        : await this.callProvider(request.ref, "get", (provider) => ({ provider, id: request.itemId }));
    if (!answer.ok) return { ...base, status: "missing", reason: answer.problem.reason, detail: answer.problem.detail };
    const data = MaybeContextData.safeParse(answer.value.value);
    if (!data.success) {
      const first = data.error.issues[0];
      return { ...base, status: "missing", reason: "invalid", detail: `invalid ContextData: ${first?.path.join(".")} ${first?.message}` };
    }
    if (data.data === null) return { ...base, status: "empty", ...(answer.value.kept ? { kept: true as const } : {}) };
    const title = data.data.title?.trim() || (request.itemId === undefined ? answer.value.provider.name : `${answer.value.provider.name}: ${request.itemId}`);
    return { ...base, status: "present", title, version: await this.versionOf(request.key, data.data), content: data.data.content, ...(answer.value.kept ? { kept: true as const } : {}) };
  }

  /**
   * A provider's current answer for a conversation. A provider that notifies its changes is asked once, and its answer
   * reused (`kept`) until the app says it changed, re-initialises or goes away.
   */
  private async currentOf(ref: string, conversationId: string, together?: AskedTogether): Promise<ProviderAnswer> {
    const params = (id: string) => ({ provider: id, conversationId });
    // Asked with its app's other providers: not kept (or it would not have been asked), its row read once already.
    if (together) return this.keepIfNotifying(ref, conversationId, together.generation, withProvider(await together.answer, together.provider));
    if (this.mcp.isServer(splitQualified(ref).app)) return this.callProvider(ref, "current", params);
    const provider = this.registry.provider(ref);
    const kept = provider?.notifies ? this.kept.get(ref, conversationId) : undefined;
    if (provider && kept !== undefined) return ok({ value: kept, provider, kept: true });
    const generation = this.kept.now(ref);
    return this.keepIfNotifying(ref, conversationId, generation, await this.askApp(provider, ref, "current", params));
  }

  private keepIfNotifying(ref: string, conversationId: string, generation: string, answer: ProviderAnswer): ProviderAnswer {
    // Only a valid answer is kept: an invalid one is asked again, and read as missing each time.
    if (answer.ok && answer.value.provider.notifies && MaybeContextData.safeParse(answer.value.value).success) this.kept.keep(ref, conversationId, generation, answer.value.value);
    return answer;
  }

  private async versionOf(key: string, data: ContextData): Promise<string> {
    const known = data.version === undefined ? this.versions.get(key) : undefined;
    if (known?.content === data.content) return known.version;
    const version = await contextVersion(data);
    if (data.version !== undefined) return version;
    this.versions.delete(key);
    this.versions.set(key, { content: data.content, version });
    // The oldest goes first: a bound on what this memory holds, not on what it may hash.
    if (this.versions.size > REMEMBERED_VERSIONS) this.versions.delete(this.versions.keys().next().value!);
    return version;
  }

  private async callProvider(
    ref: string,
    method: ProviderMethod,
    params: (providerId: string) => unknown,
  ): Promise<ProviderAnswer> {
    const server = splitQualified(ref).app;
    if (this.mcp.isServer(server)) return this.mcp.provide(ref, method, (params(splitQualified(ref).name) ?? {}) as { id?: string }, providerDeadlineMs(this.env));
    return this.askApp(this.registry.provider(ref), ref, method, params);
  }

  /** A provider as the registry has it (null: none registered), asked over its app's socket. */
  private async askApp(provider: ProviderRecord | null, ref: string, method: ProviderMethod, params: (providerId: string) => unknown): Promise<ProviderAnswer> {
    if (!provider) return failWith({ reason: "unknown_provider", detail: `no app has registered provider '${ref}'` });
    if (!provider.methods.includes(method)) return failWith({ reason: "unsupported", detail: `'${ref}' does not implement '${method}'` });
    return withProvider(await this.callApp(provider.app, `contexts/${method}`, params(splitQualified(ref).name), providerDeadlineMs(this.env)), provider);
  }

  /** One request to an app's current socket under a deadline: an answer, or why there is none (never a hang). */
  private async callApp(app: string, method: string, params: unknown, deadlineMs: number): Promise<AppAnswer> {
    const ws = this.socketFor(app);
    const session = ws && sessionOf(ws);
    if (!ws || !session) return failWith({ reason: "offline", detail: `app '${app}' is not connected` });
    const { id, answer } = this.pending.start(session.sessionId, deadlineMs);
    const frame = rpcRequest(id, method, params);
    // A request one WebSocket message cannot carry fails alone, unsent: a failed send would fail every call in flight.
    if (frame.length * 3 > PLATFORM_MESSAGE_BYTES && new TextEncoder().encode(frame).length > PLATFORM_MESSAGE_BYTES) {
      this.pending.settle(id, session.sessionId, { failure: new AppCallError("invalid", `the request is larger than one WebSocket message (${PLATFORM_MESSAGE_BYTES} bytes) can carry`) });
      return answer.then(
        (value): AppAnswer => ok(value),
        (error: AppCallError): AppAnswer => failWith({ reason: error.reason, detail: error.message }),
      );
    }
    try {
      ws.send(frame);
      return ok(await answer);
    } catch (error) {
      if (error instanceof AppCallError) return failWith({ reason: error.reason, detail: error.message, sent: true });
      this.pending.failSession(session.sessionId, new AppCallError("offline", "socket failed"));
      return failWith({ reason: "offline", detail: `app '${app}' could not be reached` });
    }
  }

  /** The app's most recently initialised socket: the one whose registrations are current. */
  private socketFor(app: string): WebSocket | null {
    let best: WebSocket | null = null;
    let bestAt = -1;
    for (const ws of this.ctx.getWebSockets(app)) {
      const session = sessionOf(ws);
      if (session?.initializedAt != null && session.initializedAt > bestAt && ws.readyState === WebSocket.OPEN) {
        best = ws;
        bestAt = session.initializedAt;
      }
    }
    return best;
  }
}

/** A context's answer: its data, or null for nothing now. Built once: building a zod schema costs more than a parse. */
const MaybeContextData = ContextData.nullable();

/** How many contexts' last content the hub keeps to skip hashing it again. */
const REMEMBERED_VERSIONS = 64;

/** Workers' limit on one WebSocket message, in bytes (the runtime's own frames stay far below it). */
const PLATFORM_MESSAGE_BYTES = 1_048_576;

/** `sent`: the request reached the socket before the call failed. */
type AppAnswer = Result<unknown, AppFailure>;

/** Why an app gave no answer; `sent`: the request reached the socket before the call failed. */
interface AppFailure {
  reason: MissingReason;
  detail: string;
  sent?: true;
}

/** The id of a JSON-RPC frame, read from its start without parsing it all (for a frame too large to parse). */
function leadingId(frame: string): string | number | null {
  const match = /"id"\s*:\s*("(?:[^"\\]|\\.){1,256}"|-?\d{1,16})/.exec(frame.slice(0, 1024));
  if (!match) return null;
  try {
    return JSON.parse(match[1]!) as string | number;
  } catch {
    return null;
  }
}

/** `kept`: the answer kept from an earlier pull (the provider notifies its changes, and none came since). */
type ProviderAnswer = Result<{ value: unknown; provider: ProviderRecord; kept?: true }, AppFailure>;

/** A provider asked in its app's `contexts/currentMany`: its row, what was kept of it when asked, its answer to come. */
interface AskedTogether {
  provider: ProviderRecord;
  generation: string;
  answer: Promise<AppAnswer>;
}

function unanswered(answer: { problem: AppFailure }): Result<never> {
  const { reason, detail } = answer.problem;
  const type = reason === "unknown_provider" ? "not-found" : reason === "unsupported" ? "invalid-request" : "provider-unavailable";
  return fail(type, detail);
}

/** An app's answer as the provider's. */
function withProvider(answer: AppAnswer, provider: ProviderRecord): ProviderAnswer {
  return answer.ok ? ok({ value: answer.value, provider }) : answer;
}

function outcomeOf(frame: JsonRpcResponse): { result: unknown } | { failure: AppCallError } {
  return "error" in frame ? { failure: new AppCallError("error", frame.error.message) } : { result: frame.result };
}

function malformedAnswer(issues: FrameIssue[]): AppCallError {
  const detail = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
  return new AppCallError("invalid", `malformed JSON-RPC answer: ${detail}`);
}

/** `app:*` matches all of an app's; anything else matches itself. */
function matches(pattern: string, name: string): boolean {
  return pattern.endsWith(":*") ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
