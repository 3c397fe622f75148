/**
 * The user's MCP servers as apps of the hub (docs/mcp.md, "Consume"): one client session each, their lists kept in the
 * registry as an app's would be (`server:tool`, prompts as skills, `server:resources` as a provider), and the calls a
 * turn makes to them: a provider's `current`/`list`/`get`, a tool, a skill's manual. Every failure is a value with a
 * reason, as an app's is.
 */
import { fail, failWith, ok, type Result } from "../core/problem";
import { catalogOf, contextOf, listOf, manualOf, toolTextOf } from "../mcp/consume/mapping";
import { McpServerSession } from "../mcp/consume/session";
import type { ContextData, ContextList } from "../protocol/context-data";
import type { MissingReason } from "../protocol/evidence";
import type { ProviderInfo } from "../protocol/frontend";
import { MCP_CONSUME_LIMITS, MCP_RESOURCES_PROVIDER, pinnedUri, type McpServerDeclaration, type McpServerInfo } from "../protocol/mcp-servers";
import type { ProviderMethod } from "../protocol/methods";
import { qualify, splitQualified } from "../protocol/names";
import type { SkillContent, ToolRun } from "../protocol/tools";
import { McpServerStore, USER_DECLARED, type StoredServer } from "./mcp-server-store";
import type { Registry } from "./registry";

type ProviderRecord = Omit<ProviderInfo, "online">;

/** MCP's error code for a resource the server does not have. */
const RESOURCE_NOT_FOUND = -32002;
/** A provider's answer from a server: the context (or list) already in the runtime's shape, or why there is none. */
export type ServerProviderAnswer = Result<{ value: ContextData | ContextList | null; provider: ProviderRecord }, { reason: MissingReason; detail: string }>;

export interface McpServersHost {
  /** A server's tools were (re)listed: what the hub derives from tools (their vectors) is brought up to date. */
  toolsListed(server: string): void;
  /** A server said a resource changed: the conversations watching `server:uri` are told. */
  contextChanged(ref: string): void;
  /** Work that outlives the call that started it (a connection opened in the background). */
  background(work: Promise<unknown>): void;
}

export class McpServers {
  private readonly store: McpServerStore;
  private readonly sessions = new Map<string, McpServerSession>();
  /** Each server's catalog as last written, so a reconnect that lists the same moves nothing (toolbox versions stay). */
  private readonly written = new Map<string, string>();

  constructor(
    sql: SqlStorage,
    private readonly registry: Registry,
    private readonly host: McpServersHost,
  ) {
    this.store = new McpServerStore(sql);
  }

  /** The hub woke: a session for each server, opened in the background so their notifications flow again. */
  start(): void {
    for (const server of this.store.all()) this.host.background(this.session(server).connect(MCP_CONSUME_LIMITS.registerDeadlineMs));
  }

  /** Whether any session is being opened now. */
  get anyOpening(): boolean {
    for (const session of this.sessions.values()) if (session.opening) return true;
    return false;
  }

  /**
   * Waits, at most `deadlineMs`, for the sessions of `names` being opened: a turn right after an app declared its
   * servers (or the hub woke) then lists their tools, rather than naming them unknown. No wait when none is opening.
   */
  async opened(names: Iterable<string>, deadlineMs: number): Promise<void> {
    const opening = [...new Set(names)].flatMap((name) => {
      const pending = this.sessions.get(name)?.opening;
      return pending ? [pending] : [];
    });
    if (opening.length === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.allSettled(opening), new Promise((resolve) => (timer = setTimeout(resolve, deadlineMs)))]);
    clearTimeout(timer);
  }

  isServer(name: string): boolean {
    return this.sessions.has(name);
  }

  /** Whether a call would be tried now: a server waiting out its backoff after a failure is not. */
  available(name: string): boolean {
    return this.sessions.get(name)?.state !== "offline";
  }

  list(): McpServerInfo[] {
    return this.store.all().map((s) => this.infoOf(s));
  }

  /** `POST /v1/mcp-servers`: stored, then connected (bounded), and described as it is now: online or why not. */
  async register(declaration: McpServerDeclaration): Promise<Result<McpServerInfo>> {
    const taken = this.nameTaken(declaration.name, USER_DECLARED);
    if (taken) return fail("conflict", taken);
    if (this.store.countDeclaredBy(USER_DECLARED) >= MCP_CONSUME_LIMITS.serversPerUser) {
      return fail("limit-exceeded", `a user registers at most ${MCP_CONSUME_LIMITS.serversPerUser} MCP servers; DELETE one first`);
    }
    this.store.add(declaration, USER_DECLARED);
    const stored = this.store.get(declaration.name)!;
    await this.session(stored).connect(MCP_CONSUME_LIMITS.registerDeadlineMs);
    return ok(this.infoOf(this.store.get(declaration.name)!));
  }

  /** `DELETE /v1/mcp-servers/{name}`: only the user's own; an app's goes when the app declares it no more. */
  async remove(name: string): Promise<Result<{ removed: string }>> {
    const server = this.store.get(name);
    if (!server) return fail("not-found", `no MCP server '${name}' is registered`);
    if (server.declaredBy !== USER_DECLARED) return fail("conflict", `MCP server '${name}' was declared by app '${server.declaredBy}'; it goes when the app initializes without it`);
    await this.forget(name);
    return ok({ removed: name });
  }

  /**
   * An app's `initialize` declares its servers: checked first (a name of another app's, the user's or an app's own is
   * refused, and nothing changes), then they replace what it declared before. Sessions open in the background.
   */
  declare(app: string, declarations: readonly McpServerDeclaration[]): Result<true> {
    const own = this.store.get(app);
    if (own) return fail("conflict", `the name '${app}' is taken by an MCP server (declared by ${own.declaredBy === USER_DECLARED ? "the user" : `app '${own.declaredBy}'`})`);
    for (const declaration of declarations) {
      const taken = declaration.name === app ? `an MCP server may not take its app's own name '${app}'` : this.nameTaken(declaration.name, app);
      if (taken) return fail("conflict", taken, [{ path: `mcpServers.${declarations.indexOf(declaration)}.name`, message: taken }]);
    }
    const before = new Map(this.store.declaredBy(app).map((s) => [s.name, s]));
    const declared = new Set(declarations.map((d) => d.name));
    for (const name of before.keys()) if (!declared.has(name)) this.host.background(this.forget(name));
    for (const declaration of declarations) {
      const previous = before.get(declaration.name);
      const same = previous && previous.url === declaration.url && JSON.stringify(previous.headers) === JSON.stringify(declaration.headers ?? {});
      if (same) continue;
      this.store.add(declaration, app);
      // Another URL or other headers: the old session goes, a new one opens.
      const old = this.sessions.get(declaration.name);
      this.sessions.delete(declaration.name);
      this.written.delete(declaration.name);
      if (old) this.host.background(old.close());
      this.host.background(this.session(this.store.get(declaration.name)!).connect(MCP_CONSUME_LIMITS.registerDeadlineMs));
    }
    return ok(true);
  }

  /**
   * A context from a server: `server:resources` lists (`resources/list`) and gets by URI (`resources/read`); a pinned
   * `server:uri` is that resource's current contents (and the server is asked to say when it changes).
   */
  async provide(ref: string, method: ProviderMethod, params: { id?: string; query?: string; cursor?: string; limit?: number }, deadlineMs: number): Promise<ServerProviderAnswer> {
    const { app: server, name } = splitQualified(ref);
    const session = this.sessions.get(server)!;
    const uri = pinnedUri(ref);
    const provider: ProviderRecord = uri
      ? { id: ref, app: server, name: uri, description: `Resource ${uri} of MCP server '${server}'`, methods: ["current"], notifies: false }
      : { id: ref, app: server, name: `${server} resources`, description: `The resources of MCP server '${server}', by URI`, methods: ["list", "get"], notifies: false };
    if (!uri && name !== MCP_RESOURCES_PROVIDER) return failWith({ reason: "unknown_provider", detail: `MCP server '${server}' has no provider '${name}'; its resources are '${qualify(server, MCP_RESOURCES_PROVIDER)}'` });
    if (!provider.methods.includes(method)) return failWith({ reason: "unsupported", detail: `'${ref}' does not implement '${method}'` });
    if (method === "list") {
      const listed = await session.request(deadlineMs, (client, options) => client.listResources(params.cursor ? { cursor: params.cursor } : {}, options));
      return listed.ok ? ok({ value: listOf(listed.value, params.query, params.limit ?? 100), provider }) : listed;
    }
    const target = uri ?? params.id!;
    // MCP's resource-not-found is the server's "no such item", which a provider answers with null, not a failure.
    const read = await session.request(deadlineMs, (client, options) =>
      client.readResource({ uri: target }, options).catch((error: unknown) => {
        if ((error as { code?: unknown })?.code === RESOURCE_NOT_FOUND) return null;
        throw error;
      }),
    );
    if (!read.ok) return read;
    if (uri) session.watch(uri);
    return ok({ value: read.value === null ? null : contextOf(server, target, read.value), provider });
  }

  /** One tool call; `disconnected` when the session broke after the call went out (it may have run). */
  async callTool(qualified: string, args: Record<string, unknown>, deadlineMs: number): Promise<ToolRun> {
    const started = Date.now();
    const { app: server, name } = splitQualified(qualified);
    const session = this.sessions.get(server)!;
    const wasOnline = session.state === "online";
    const answer = await session.request(deadlineMs, (client, options) => client.callTool({ name, arguments: args }, undefined, options));
    const ms = Date.now() - started;
    if (answer.ok) return { ok: true, ...toolTextOf(answer.value as Parameters<typeof toolTextOf>[0]), ms };
    const { reason, detail } = answer.problem;
    return { ok: false, reason: reason === "offline" && wasOnline ? "disconnected" : reason, detail, ms };
  }

  /** A prompt as a skill: its manual is what `prompts/get` answers now. */
  async readPrompt(qualified: string, description: string, deadlineMs: number): Promise<Result<SkillContent>> {
    const { app: server, name } = splitQualified(qualified);
    const answer = await this.sessions.get(server)!.request(deadlineMs, (client, options) => client.getPrompt({ name }, options));
    if (!answer.ok) return fail("provider-unavailable", answer.problem.detail);
    return ok({ name: qualified, description, manual: manualOf(answer.value), references: [] });
  }

  /** Refused, or null: `name` may be a server declared by `by` (the user, or an app) unless an app or someone else has it. */
  private nameTaken(name: string, by: string): string | null {
    if (this.registry.hasApp(name)) return `an app named '${name}' is registered; an MCP server needs a name of its own`;
    const existing = this.store.get(name);
    if (!existing || existing.declaredBy === by && by !== USER_DECLARED) return null;
    return existing.declaredBy === USER_DECLARED ? `MCP server '${name}' is already registered; DELETE it first to change it` : `MCP server '${name}' is declared by app '${existing.declaredBy}'`;
  }

  private session(server: StoredServer): McpServerSession {
    const existing = this.sessions.get(server.name);
    if (existing) return existing;
    const session = new McpServerSession(server, {
      lists: (lists) => {
        const { skipped, ...catalog } = catalogOf(lists.tools, lists.prompts);
        const signature = JSON.stringify([catalog, lists.resources]);
        if (this.sessions.get(server.name) !== session || this.written.get(server.name) === signature) return;
        this.written.set(server.name, signature);
        this.registry.replaceServerCatalog(server.name, catalog, lists.resources);
        this.store.listed(server.name, skipped, lists.resources);
        this.host.toolsListed(server.name);
      },
      resourceUpdated: (uri) => this.host.contextChanged(qualify(server.name, uri)),
    });
    this.sessions.set(server.name, session);
    return session;
  }

  private async forget(name: string): Promise<void> {
    const session = this.sessions.get(name);
    this.sessions.delete(name);
    this.written.delete(name);
    this.store.remove(name);
    this.registry.removeServerCatalog(name);
    this.host.toolsListed(name);
    await session?.close();
  }

  private infoOf(server: StoredServer): McpServerInfo {
    const session = this.sessions.get(server.name);
    const detail = session?.detail;
    return {
      name: server.name,
      url: server.url,
      headerNames: Object.keys(server.headers),
      declaredBy: server.declaredBy,
      status: session?.state ?? "idle",
      ...(detail ? { detail } : {}),
      tools: this.registry.tools().filter((t) => t.app === server.name).length,
      prompts: this.registry.skills(server.name).length,
      resources: server.hasResources,
      skipped: server.skipped,
      createdAt: server.createdAt,
    };
  }
}
