/**
 * A `ConversationScope` in plain Node, for driving `takeTurn` without workerd: the conversation's SQLite in memory
 * (node:sqlite, every migration applied, the row made as the Conversation object's `begin` makes it), the user's apps
 * as an in-memory registry behind `AppPort` that records every call, the digest summariser, memory in a Map-backed
 * KV, cleared results in a Map-backed R2, a stepping clock and the tenant's real audit key. Small on purpose: each
 * fake does what the real binding does for the calls the conversation makes, and nothing else.
 */
import { mergeAttachments } from "../../../src/core/attachments";
import { fail, ok, type Result } from "../../../src/core/problem";
import { newNonce } from "../../../src/core/runtime-tag";
import { sha256Hex } from "../../../src/core/version";
import { TurnCache, type ConversationScope } from "../../../src/conversation/scope";
import type { ConversationDb } from "../../../src/conversation/store";
import { DEFAULT_COMPACTION_POLICY } from "../../../src/history/policy";
import { chooseSummariser } from "../../../src/history/summarise";
import { globMatches, type HookAnswer } from "../../../src/hooks/chain";
import type { AppPort, PreparedTurn, PulledContext } from "../../../src/hub/port";
import { tenantAuditKey } from "../../../src/protect";
import type { ContextData, ContextList } from "../../../src/protocol/context-data";
import type { DelegationStart } from "../../../src/protocol/delegation";
import type { AgentInfo, ProviderInfo } from "../../../src/protocol/frontend";
import type { HookCallParams, HookPoint, HookSpec } from "../../../src/protocol/hooks";
import type { Owner } from "../../../src/protocol/owner";
import { CompactionPolicy, type CompactionPolicyInput } from "../../../src/protocol/policies";
import type { SkillContent, ToolRun, ToolSpec, Toolbox } from "../../../src/protocol/tools";
import { memoryDatabase } from "./node-sql";

/** An agent as an app registers it, every field the hub fills given its default. */
export function agentInfo(fields: Partial<AgentInfo> & { id: string }): AgentInfo {
  const app = fields.id.slice(0, fields.id.indexOf(":"));
  return {
    app,
    name: fields.id.slice(app.length + 1),
    systemPrompt: "You help the user.",
    tools: [],
    catalog: [],
    skills: [],
    browseContexts: false,
    searchHistory: false,
    attachedContexts: [],
    memory: false,
    resultPolicies: {},
    subagents: [],
    updatedAt: "2025-01-01T00:00:00.000Z",
    ...fields,
  };
}

/** One registered tool and what it answers (text, or a whole `ToolRun`); a throw is the app failing. */
export interface FakeTool {
  spec: ToolSpec;
  run: (args: unknown) => string | ToolRun;
}

export function toolSpec(name: string, description: string, properties: Record<string, unknown> = {}): ToolSpec {
  return { name, description, inputSchema: { type: "object", properties }, online: true };
}

/** One registered hook and the decision it answers; a throw is its app failing (the hook's fail mode decides). */
export interface FakeHook {
  spec: HookSpec;
  answer: (params: HookCallParams) => unknown;
}

export function hookSpec(id: string, point: HookPoint, fields: Partial<HookSpec> = {}): HookSpec {
  const [app, name] = id.split(":") as [string, string];
  return { id, app, name, point, agents: ["*"], tools: null, order: 0, deadlineMs: 1_000, failMode: "open", ...fields };
}

/** A context provider: `current` answers the attached context (null: nothing current), `get` one item; a throw is the app failing. */
export interface FakeProvider {
  info: ProviderInfo;
  current?: (conversationId: string) => ContextData | null;
  get?: (id: string) => ContextData | null;
  list?: () => ContextList;
}

export function provider(ref: string, answers: Omit<FakeProvider, "info">, name = ref.slice(ref.indexOf(":") + 1)): FakeProvider {
  const methods = (["current", "get", "list"] as const).filter((m) => answers[m] !== undefined);
  return { info: { id: ref, app: ref.slice(0, ref.indexOf(":")), name, description: `${name} provider`, methods: [...methods], notifies: false, online: true }, ...answers };
}

/** A call the conversation made to the apps: the method and its arguments, in the order made. */
export interface AppCall {
  method: keyof AppPort;
  args: unknown[];
}

/**
 * The user's apps as the hub would answer for them: agents, tools, skills, hooks and providers in maps the test fills.
 * The toolbox's version moves with every registration, and `prepareTurn` leaves the toolbox out while the caller's
 * is current, as the hub does.
 */
export class FakeApps implements AppPort {
  readonly agents = new Map<string, AgentInfo>();
  readonly tools = new Map<string, FakeTool>();
  readonly skills = new Map<string, SkillContent>();
  readonly hooks: FakeHook[] = [];
  readonly contextProviders = new Map<string, FakeProvider>();
  readonly calls: AppCall[] = [];
  /** What each `prepareTurn` answered, in order. */
  readonly prepared: PreparedTurn[] = [];
  private registry = 1;

  /** The calls made to one method, each as its arguments. */
  callsTo(method: keyof AppPort): unknown[][] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  addAgent(agent: AgentInfo): this {
    this.agents.set(agent.id, agent);
    return this.changed();
  }

  addTool(tool: FakeTool): this {
    this.tools.set(tool.spec.name, tool);
    return this.changed();
  }

  addSkill(skill: SkillContent): this {
    this.skills.set(skill.name, skill);
    return this.changed();
  }

  addHook(hook: FakeHook): this {
    this.hooks.push(hook);
    return this.changed();
  }

  addProvider(p: FakeProvider): this {
    this.contextProviders.set(p.info.id, p);
    return this;
  }

  /** What names the toolbox while no registration changes. */
  get toolboxVersion(): string {
    return `registry-${this.registry}`;
  }

  private changed(): this {
    this.registry++;
    return this;
  }

  private record(method: keyof AppPort, ...args: unknown[]): void {
    this.calls.push({ method, args });
  }

  agent(fullId: string): AgentInfo | null {
    this.record("agent", fullId);
    return this.agents.get(fullId) ?? null;
  }

  provider(ref: string): ProviderInfo | null {
    this.record("provider", ref);
    return this.contextProviders.get(ref)?.info ?? null;
  }

  providers(): ProviderInfo[] {
    this.record("providers");
    return [...this.contextProviders.values()].map((p) => p.info);
  }

  toolbox(agentId: string): Toolbox | null {
    this.record("toolbox", agentId);
    return this.build(agentId);
  }

  async prepareTurn(conversationId: string, agentId: string, runtime: { ref: string; itemId?: string | undefined }[] | null, active: boolean, knownToolbox: string | null): Promise<PreparedTurn | null> {
    this.record("prepareTurn", conversationId, agentId, runtime, active, knownToolbox);
    const box = this.build(agentId);
    if (!box) return null;
    const requests = runtime === null ? [] : mergeAttachments(box.agent.attachedContexts, runtime);
    const pulled = await Promise.all(requests.map((r) => this.pullOne(conversationId, r)));
    const answer = { toolbox: knownToolbox === this.toolboxVersion ? null : box, toolboxVersion: this.toolboxVersion, pulled };
    this.prepared.push(answer);
    return answer;
  }

  async readContext(ref: string, id: string | undefined, conversationId: string): Promise<Result<ContextData | null>> {
    this.record("readContext", ref, id, conversationId);
    return this.answer(ref, id === undefined ? "current" : "get", (p) => (id === undefined ? p.current!(conversationId) : p.get!(id)));
  }

  async listItems(ref: string, params: unknown): Promise<Result<ContextList>> {
    this.record("listItems", ref, params);
    return this.answer(ref, "list", (p) => p.list!());
  }

  async item(ref: string, id: string): Promise<Result<ContextData | null>> {
    this.record("item", ref, id);
    return this.answer(ref, "get", (p) => p.get!(id));
  }

  async callTool(name: string, args: unknown, meta: { conversationId: string; toolCallId: string }): Promise<ToolRun> {
    this.record("callTool", name, args, meta);
    const tool = this.tools.get(name);
    if (!tool) return { ok: false, reason: "unknown_tool", detail: `no app has registered tool '${name}'`, ms: 0 };
    try {
      const run = tool.run(args);
      return typeof run === "string" ? { ok: true, text: run, isError: false, ms: 1 } : run;
    } catch (error) {
      return { ok: false, reason: "error", detail: String(error), ms: 1 };
    }
  }

  async readSkill(name: string): Promise<Result<SkillContent>> {
    this.record("readSkill", name);
    const skill = this.skills.get(name);
    return skill ? ok(skill) : fail("not-found", `no app has registered skill '${name}'`);
  }

  async rankByMeaning(query: string, names: readonly string[]): Promise<null> {
    this.record("rankByMeaning", query, names);
    return null;
  }

  async callHook(hook: HookSpec, params: HookCallParams): Promise<HookAnswer> {
    this.record("callHook", hook, params);
    const registered = this.hooks.find((h) => h.spec.id === hook.id);
    if (!registered) return { ok: false, reason: "offline", detail: `no app serves hook '${hook.id}'`, ms: 0 };
    try {
      return { ok: true, value: registered.answer(params), ms: 1 };
    } catch (error) {
      return { ok: false, reason: "error", detail: String(error), ms: 1 };
    }
  }

  notifyHook(hook: HookSpec, params: HookCallParams): boolean {
    this.record("notifyHook", hook, params);
    return true;
  }

  conversationCreated(conversation: unknown, active?: boolean): void {
    this.record("conversationCreated", conversation, active);
  }

  conversationEnded(conversationId: string, endedAt?: string): void {
    this.record("conversationEnded", conversationId, endedAt);
  }

  notifyResourceRemoved(conversationId: string, fullId: string): void {
    this.record("notifyResourceRemoved", conversationId, fullId);
  }

  watchContext(conversationId: string, ref: string, watching: boolean): void {
    this.record("watchContext", conversationId, ref, watching);
  }

  gatewayHeadMoved(head: unknown): void {
    this.record("gatewayHeadMoved", head);
  }

  countMetrics(agent: string, counts: unknown): void {
    this.record("countMetrics", agent, counts);
  }

  /** The agent's toolbox from the registry: bound tools in its order, catalog and skills by pattern, its hooks. */
  private build(agentId: string): Toolbox | null {
    const agent = this.agents.get(agentId);
    if (!agent) return null;
    const matches = (patterns: readonly string[], name: string) => patterns.some((p) => globMatches(p, name));
    const bound = agent.tools.flatMap((name) => this.tools.get(name)?.spec ?? []);
    const catalog = [...this.tools.values()].map((t) => t.spec).filter((t) => matches(agent.catalog, t.name) && !agent.tools.includes(t.name)).sort((a, b) => a.name.localeCompare(b.name));
    const skills = [...this.skills.values()].filter((s) => matches(agent.skills, s.name)).map((s) => ({ name: s.name, description: s.description })).sort((a, b) => a.name.localeCompare(b.name));
    const unknown = [...agent.tools.filter((n) => !this.tools.has(n)), ...agent.skills.filter((p) => !p.includes("*") && !this.skills.has(p))];
    const hooks = this.hooks.map((h) => h.spec).filter((h) => matches(h.agents, agent.id)).sort((a, b) => a.order - b.order || a.id.localeCompare(b.id));
    const subagents = agent.subagents.flatMap((id) => {
      const sub = this.agents.get(id);
      return sub ? [{ id, name: sub.name, description: sub.description ?? "" }] : [];
    });
    return { agent, bound, catalog, skills, unknown, ...(subagents.length ? { subagents } : {}), ...(hooks.length ? { hooks } : {}) };
  }

  /** One context as the hub pulls it: a provider's answer becomes present, empty or missing. */
  private async pullOne(conversationId: string, request: { key: string; ref: string; itemId?: string }): Promise<PulledContext> {
    const base = { key: request.key, kind: "context" as const, ref: request.ref, ...(request.itemId !== undefined ? { itemId: request.itemId } : {}) };
    const p = this.contextProviders.get(request.ref);
    if (!p) return { ...base, status: "missing", reason: "unknown_provider", detail: `no app has registered provider '${request.ref}'` };
    let data: ContextData | null;
    try {
      data = request.itemId === undefined ? p.current!(conversationId) : p.get!(request.itemId);
    } catch (error) {
      return { ...base, status: "missing", reason: "error", detail: String(error) };
    }
    if (data === null) return { ...base, status: "empty" };
    const title = data.title?.trim() || (request.itemId === undefined ? p.info.name : `${p.info.name}: ${request.itemId}`);
    return { ...base, status: "present", title, version: data.version ?? (await sha256Hex(data.content)), content: data.content };
  }

  private answer<T>(ref: string, method: "current" | "get" | "list", read: (p: FakeProvider) => T): Result<T> {
    const p = this.contextProviders.get(ref);
    if (!p) return fail("not-found", `no app has registered provider '${ref}'`);
    if (!p.info.methods.includes(method)) return fail("invalid-request", `'${ref}' does not implement '${method}'`);
    try {
      return ok(read(p));
    } catch (error) {
      return fail("provider-unavailable", String(error));
    }
  }
}

/** Enough of Workers KV for src/memory: values with metadata, prefix listing in key order with cursors. */
export class FakeKV {
  readonly data = new Map<string, { value: string; metadata: unknown }>();

  async get(key: string, type?: "text" | "json"): Promise<unknown> {
    const entry = this.data.get(key);
    if (!entry) return null;
    return type === "json" ? JSON.parse(entry.value) : entry.value;
  }

  async put(key: string, value: string, options?: { metadata?: unknown }): Promise<void> {
    this.data.set(key, { value, metadata: options?.metadata ?? null });
  }

  async delete(key: string): Promise<void> {
    this.data.delete(key);
  }

  async list(options: { prefix?: string; cursor?: string; limit?: number } = {}) {
    const names = [...this.data.keys()].filter((k) => k.startsWith(options.prefix ?? "")).sort();
    const start = options.cursor ? Number(options.cursor) : 0;
    const end = start + (options.limit ?? 1_000);
    const keys = names.slice(start, end).map((name) => ({ name, metadata: this.data.get(name)!.metadata }));
    return end >= names.length ? { keys, list_complete: true as const, cacheStatus: null } : { keys, list_complete: false as const, cursor: String(end), cacheStatus: null };
  }
}

/** Enough of R2 for the results a compaction clears: text objects by key. */
export class FakeR2 {
  readonly objects = new Map<string, { text: string; contentType: string | undefined }>();

  async put(key: string, value: string, options?: { httpMetadata?: { contentType?: string } }): Promise<{ key: string }> {
    this.objects.set(key, { text: value, contentType: options?.httpMetadata?.contentType });
    return { key };
  }

  async get(key: string): Promise<{ key: string; text(): Promise<string> } | null> {
    const object = this.objects.get(key);
    return object ? { key, text: async () => object.text } : null;
  }
}

export interface FakeScopeOptions {
  conversationId?: string;
  owner?: Owner;
  /** The conversation's compaction policy, as POST /v1/conversations takes it. */
  compaction?: CompactionPolicyInput;
  /** The first clock reading; each reading after it is `stepMs` later. */
  start?: Date;
  stepMs?: number;
  /** Made with no nonce, as conversations were before nonces. */
  legacy?: boolean;
}

/** A conversation served in Node: its scope (read afresh per request, as the Conversation object reads its row) and every fake behind it. */
export interface FakeConversation {
  conversationId: string;
  owner: Owner;
  db: ConversationDb;
  apps: FakeApps;
  kv: FakeKV;
  artifacts: FakeR2;
  cache: TurnCache;
  /** The `delegate` calls that started a child conversation, in order. */
  delegations: DelegationStart[];
  /** The compaction policies the summariser was asked for: one per summary written. */
  summaries: CompactionPolicy[];
  /** The scope of one request, over the row as stored now. */
  scope(): ConversationScope;
}

export async function fakeConversation(options: FakeScopeOptions = {}): Promise<FakeConversation> {
  const { db } = memoryDatabase();
  const owner = options.owner ?? { tenant: "acme", user: "alice" };
  const conversationId = options.conversationId ?? "c-1";
  const start = (options.start ?? new Date("2025-03-01T09:00:00.000Z")).getTime();
  const step = options.stepMs ?? 1_000;
  let readings = 0;
  const compactionPolicy = options.compaction ? CompactionPolicy.parse(options.compaction) : DEFAULT_COMPACTION_POLICY;
  db.conversation.create({ conversationId, tenant: owner.tenant, user: owner.user, agent: null, agentContexts: [], resultPolicies: {}, compactionPolicy, createdAt: new Date(start).toISOString(), nonce: options.legacy ? null : newNonce() });
  const apps = new FakeApps();
  const kv = new FakeKV();
  const artifacts = new FakeR2();
  const cache = new TurnCache();
  const delegations: DelegationStart[] = [];
  const summaries: CompactionPolicy[] = [];
  const auditKey = tenantAuditKey("unit-test-secret", owner.tenant);
  const parts: Omit<ConversationScope, "meta"> = {
    owner,
    db,
    now: () => new Date(start + step * readings++),
    auditKey: () => auditKey,
    apps,
    models: {
      summariser: (policy) => (summaries.push(policy), chooseSummariser("digest", null)),
      askGuardModel: async () => ({ verdict: "allow", reason: "the fake guard allows every call", ms: 0 }),
    },
    conversations: {
      startDelegation: async (start) => (delegations.push(start), ok({ turnId: `child-turn-${delegations.length}` })),
      closeInParent: async () => fail("not-found", "no parent conversation in this test"),
    },
    memory: { kv: kv as unknown as KVNamespace, halfLifeHours: undefined },
    artifacts: artifacts as unknown as R2Bucket,
    cache,
  };
  return { conversationId, owner, db, apps, kv, artifacts, cache, delegations, summaries, scope: () => ({ ...parts, meta: db.conversation.get()! }) };
}
