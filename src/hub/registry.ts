import type { Owner } from "../protocol/owner";
import { LIMITS } from "../protocol/limits";
import { fail, ok, type Result } from "../core/problem";
import { qualify, splitQualified } from "../protocol/names";
import type { z } from "zod";
import type { AgentInfo, ConversationPage, ConversationSummary, ProviderInfo } from "../protocol/frontend";
import type { AgentDefinition, InitializeParams, ProviderMethod, ToolAnnotations } from "../protocol/methods";
import type { JsonObject } from "../protocol/json";
import type { SkillSpec, ToolSpec } from "../protocol/tools";
import type { HookPoint, HookSpec } from "../protocol/hooks";
import type { ServerCatalog } from "../mcp/consume/mapping";
import { MCP_RESOURCES_PROVIDER } from "../protocol/mcp-servers";

type ParsedInit = z.output<typeof InitializeParams>;
type ParsedAgent = z.output<typeof AgentDefinition>;
export type ProviderRecord = Omit<ProviderInfo, "online">;
export type ToolRecord = Omit<ToolSpec, "online"> & { app: string };
export type SkillRecord = SkillSpec & { app: string; references: { name: string; chars: number }[]; manualChars: number; sha256: string };
/** What `replaceApp` stores of each skill beside its declaration: the digest of what went to R2. */
export type SkillDigests = ReadonlyMap<string, string>;

interface ToolRow extends Record<string, SqlStorageValue> {
  app: string;
  name: string;
  description: string;
  input_schema: string;
  annotations: string | null;
}

interface SkillRow extends Record<string, SqlStorageValue> {
  app: string;
  name: string;
  description: string;
  references_meta: string;
  manual_chars: number;
  sha256: string;
}

interface HookRow extends Record<string, SqlStorageValue> {
  app: string;
  name: string;
  point: string;
  agents: string;
  tools: string | null;
  sort_order: number;
  deadline_ms: number;
  fail_mode: string;
}

interface ProviderRow extends Record<string, SqlStorageValue> {
  app: string;
  id: string;
  name: string;
  description: string;
  methods: string;
  notifies: number;
}

interface AgentRow extends Record<string, SqlStorageValue> {
  app: string;
  agent_id: string;
  name: string;
  description: string | null;
  system_prompt: string;
  tools: string;
  attached_contexts: string;
  memory: number;
  result_policies: string;
  catalog: string;
  skills: string;
  browse_contexts: number;
  subagents: string;
  model: string | null;
  upstream: string | null;
  correctives: string | null;
  guard: string | null;
  dont_mention: string | null;
  sees_images: number | null;
  search_history: number;
  updated_at: string;
}

/** The hub's SQLite: who it belongs to, which apps registered which providers and agents. */
export class Registry {
  private changes = 0;

  constructor(private readonly storage: DurableObjectStorage) {}

  /**
   * Counts the changes to what apps registered (providers, tools, skills, agents, hooks, mounts) since the object
   * started: what is derived from them (an agent's toolbox) is built again only when it moved.
   */
  get version(): number {
    return this.changes;
  }

  private get sql() {
    return this.storage.sql;
  }

  identity(): Owner | null {
    const row = this.sql.exec<{ tenant: string; user: string }>("SELECT tenant, user FROM hub_identity").toArray()[0];
    return row ? { tenant: row.tenant, user: row.user } : null;
  }

  rememberIdentity(owner: Owner): void {
    this.sql.exec("INSERT OR IGNORE INTO hub_identity (id, tenant, user) VALUES (1, ?, ?)", owner.tenant, owner.user);
  }

  /**
   * A (re)initialising app replaces everything it registered before: providers, tools, skills and agents
   * alike, atomically. `digests` gives each declared skill's sha256 (its content is already in R2).
   */
  replaceApp(init: ParsedInit, sessionId: string, digests: SkillDigests = new Map()): void {
    const { app, contexts, agents, tools, skills, hooks, mounts } = init;
    this.changes++;
    this.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM providers WHERE app = ?", app.name);
      this.sql.exec("DELETE FROM agents WHERE app = ?", app.name);
      this.sql.exec("DELETE FROM tools WHERE app = ?", app.name);
      this.sql.exec("DELETE FROM skills WHERE app = ?", app.name);
      this.sql.exec("DELETE FROM hooks WHERE app = ?", app.name);
      this.sql.exec("DELETE FROM mounts WHERE app = ?", app.name);
      this.sql.exec(
        "INSERT OR REPLACE INTO apps (name, version, display_name, session_id, initialized_at) VALUES (?, ?, ?, ?, ?)",
        app.name,
        app.version,
        app.displayName ?? null,
        sessionId,
        new Date().toISOString(),
      );
      for (const p of contexts) {
        this.sql.exec(
          "INSERT OR REPLACE INTO providers (app, id, name, description, methods, notifies) VALUES (?, ?, ?, ?, ?, ?)",
          app.name,
          p.id,
          p.name,
          p.description,
          JSON.stringify([...new Set(p.methods)]),
          p.notifies ? 1 : 0,
        );
      }
      for (const tool of tools) {
        this.sql.exec(
          "INSERT OR REPLACE INTO tools (app, name, description, input_schema, annotations) VALUES (?, ?, ?, ?, ?)",
          app.name,
          tool.name,
          tool.description,
          JSON.stringify(tool.inputSchema),
          tool.annotations ? JSON.stringify(tool.annotations) : null,
        );
      }
      for (const skill of skills) {
        this.sql.exec(
          "INSERT OR REPLACE INTO skills (app, name, description, references_meta, manual_chars, sha256) VALUES (?, ?, ?, ?, ?, ?)",
          app.name,
          skill.name,
          skill.description,
          JSON.stringify(skill.references.map((r) => ({ name: r.name, chars: r.content.length }))),
          skill.manual.length,
          digests.get(skill.name) ?? "",
        );
      }
      for (const agent of agents) this.writeAgent(app.name, agent);
      for (const hook of hooks) {
        this.sql.exec(
          "INSERT OR REPLACE INTO hooks (app, name, point, agents, tools, sort_order, deadline_ms, fail_mode) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
          app.name,
          hook.name,
          hook.point,
          // Bare agent names are the registering app's; none named means all of its own.
          JSON.stringify(agentPatterns(app.name, hook.agents)),
          hook.tools ? JSON.stringify(hook.tools) : null,
          hook.order,
          hook.deadlineMs,
          hook.failMode,
        );
      }
      for (const mount of mounts) {
        this.sql.exec(
          "INSERT OR REPLACE INTO mounts (app, path, permissions, description, agents) VALUES (?, ?, ?, ?, ?)",
          app.name,
          mount.path,
          JSON.stringify([...new Set(mount.permissions)]),
          mount.description ?? null,
          JSON.stringify(agentPatterns(app.name, mount.agents)),
        );
      }
    });
  }

  /** Whether an app of this name has registered (an MCP server may not take its name, nor it a server's). */
  hasApp(name: string): boolean {
    return this.sql.exec("SELECT 1 FROM apps WHERE name = ?", name).toArray().length > 0;
  }

  /**
   * An MCP server's lists, kept as an app's would be: its tools and prompts (as skills) under its name, and its
   * resources as the provider `name:resources` (list and get). Replaced whole at each listing.
   */
  replaceServerCatalog(server: string, catalog: Omit<ServerCatalog, "skipped">, hasResources: boolean): void {
    this.changes++;
    this.storage.transactionSync(() => {
      this.deleteServerRows(server);
      for (const tool of catalog.tools) {
        this.sql.exec(
          "INSERT OR REPLACE INTO tools (app, name, description, input_schema, annotations) VALUES (?, ?, ?, ?, ?)",
          server,
          tool.name,
          tool.description,
          JSON.stringify(tool.inputSchema),
          tool.annotations ? JSON.stringify(tool.annotations) : null,
        );
      }
      // A prompt's manual is what `prompts/get` answers when the skill is read: nothing of it is stored.
      for (const prompt of catalog.prompts) {
        this.sql.exec("INSERT OR REPLACE INTO skills (app, name, description, references_meta, manual_chars, sha256) VALUES (?, ?, ?, '[]', 0, '')", server, prompt.name, prompt.description);
      }
      if (hasResources) {
        this.sql.exec(
          "INSERT OR REPLACE INTO providers (app, id, name, description, methods) VALUES (?, ?, ?, ?, ?)",
          server,
          MCP_RESOURCES_PROVIDER,
          `${server} resources`,
          `The resources of MCP server '${server}', by URI`,
          JSON.stringify(["list", "get"]),
        );
      }
    });
  }

  /** A removed MCP server's tools, prompts and provider go with it. */
  removeServerCatalog(server: string): void {
    this.changes++;
    this.storage.transactionSync(() => this.deleteServerRows(server));
  }

  private deleteServerRows(server: string): void {
    this.sql.exec("DELETE FROM tools WHERE app = ?", server);
    this.sql.exec("DELETE FROM skills WHERE app = ?", server);
    this.sql.exec("DELETE FROM providers WHERE app = ?", server);
  }

  /** Every mounted folder, by app then path, with the agent patterns it is for. */
  mounts(): { app: string; path: string; permissions: string[]; description?: string; agents: string[] }[] {
    return this.sql.exec<{ app: string; path: string; permissions: string; description: string | null; agents: string }>("SELECT * FROM mounts ORDER BY app, path").toArray().map((row) => ({
      app: row.app,
      path: row.path,
      permissions: JSON.parse(row.permissions) as string[],
      ...(row.description === null ? {} : { description: row.description }),
      agents: JSON.parse(row.agents) as string[],
    }));
  }

  /** Every registered hook, in the order they run: `order`, then app, then name. */
  hooks(): HookSpec[] {
    return this.sql.exec<HookRow>("SELECT * FROM hooks ORDER BY sort_order, app, name").toArray().map((row) => ({
      id: qualify(row.app, row.name),
      app: row.app,
      name: row.name,
      point: row.point as HookPoint,
      agents: JSON.parse(row.agents) as string[],
      tools: row.tools === null ? null : (JSON.parse(row.tools) as string[]),
      order: row.sort_order,
      deadlineMs: row.deadline_ms,
      failMode: row.fail_mode === "closed" ? "closed" : "open",
    }));
  }

  tool(qualified: string): ToolRecord | null {
    const { app, name } = splitQualified(qualified);
    const row = this.sql.exec<ToolRow>("SELECT * FROM tools WHERE app = ? AND name = ?", app, name).toArray()[0];
    return row ? toolRecord(row) : null;
  }

  tools(): ToolRecord[] {
    return this.sql.exec<ToolRow>("SELECT * FROM tools ORDER BY app, name").toArray().map(toolRecord);
  }

  skill(qualified: string): SkillRecord | null {
    const { app, name } = splitQualified(qualified);
    const row = this.sql.exec<SkillRow>("SELECT * FROM skills WHERE app = ? AND name = ?", app, name).toArray()[0];
    return row ? skillRecord(row) : null;
  }

  skills(app?: string): SkillRecord[] {
    const rows = app === undefined ? this.sql.exec<SkillRow>("SELECT * FROM skills ORDER BY app, name") : this.sql.exec<SkillRow>("SELECT * FROM skills WHERE app = ? ORDER BY name", app);
    return rows.toArray().map(skillRecord);
  }

  provider(ref: string): ProviderRecord | null {
    const { app, name } = splitQualified(ref);
    const row = this.sql.exec<ProviderRow>("SELECT * FROM providers WHERE app = ? AND id = ?", app, name).toArray()[0];
    return row ? providerRecord(row) : null;
  }

  providers(): ProviderRecord[] {
    return this.sql.exec<ProviderRow>("SELECT * FROM providers ORDER BY app, id").toArray().map(providerRecord);
  }

  upsertAgent(app: string, def: ParsedAgent): Result<AgentInfo> {
    const count = this.sql
      .exec<{ n: number }>("SELECT COUNT(*) AS n FROM agents WHERE app = ? AND agent_id != ?", app, def.agentId)
      .one().n;
    if (count >= LIMITS.agentsPerApp) return fail("limit-exceeded", `an app may register at most ${LIMITS.agentsPerApp} agents`);
    this.writeAgent(app, def);
    return ok(this.agent(qualify(app, def.agentId))!);
  }

  private writeAgent(app: string, def: ParsedAgent): void {
    this.changes++;
    this.sql.exec(
      `INSERT OR REPLACE INTO agents (app, agent_id, name, description, system_prompt, tools, attached_contexts, memory, result_policies, catalog, skills, browse_contexts, subagents, model, upstream, correctives, guard, dont_mention, sees_images, search_history, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      app,
      def.agentId,
      def.name,
      def.description ?? null,
      def.systemPrompt,
      JSON.stringify(qualifyAll(app, def.tools)),
      JSON.stringify([...new Set(def.attachedContexts)]),
      def.memory ? 1 : 0,
      JSON.stringify(def.resultPolicies),
      JSON.stringify(qualifyAll(app, def.catalog)),
      JSON.stringify(qualifyAll(app, def.skills)),
      def.browseContexts ? 1 : 0,
      JSON.stringify(qualifyAll(app, def.subagents)),
      def.model ?? null,
      def.upstream ?? null,
      def.correctives ? JSON.stringify(def.correctives) : null,
      def.guard ? JSON.stringify(def.guard) : null,
      def.dontMention?.length ? JSON.stringify(def.dontMention) : null,
      def.seesImages === undefined ? null : def.seesImages ? 1 : 0,
      def.searchHistory ? 1 : 0,
      new Date().toISOString(),
    );
  }

  agent(fullId: string): AgentInfo | null {
    const { app, name } = splitQualified(fullId);
    const row = this.sql.exec<AgentRow>("SELECT * FROM agents WHERE app = ? AND agent_id = ?", app, name).toArray()[0];
    return row ? agentInfo(row) : null;
  }

  agents(): AgentInfo[] {
    return this.sql.exec<AgentRow>("SELECT * FROM agents ORDER BY app, agent_id").toArray().map(agentInfo);
  }

  activeConversation(): string | null {
    return this.sql.exec<{ conversation_id: string }>("SELECT conversation_id FROM active_conversation").toArray()[0]?.conversation_id ?? null;
  }

  clearActiveConversation(conversationId: string): void {
    this.sql.exec("DELETE FROM active_conversation WHERE conversation_id = ?", conversationId);
  }

  // ── the user's conversations, for GET /v1/conversations ──

  indexConversation(c: Pick<ConversationSummary, "id" | "agent" | "createdAt">): void {
    this.sql.exec("INSERT OR IGNORE INTO conversations (conversation_id, agent, created_at) VALUES (?, ?, ?)", c.id, c.agent, c.createdAt);
  }

  indexConversationEnded(conversationId: string, endedAt: string): void {
    this.sql.exec("UPDATE conversations SET ended_at = ? WHERE conversation_id = ?", endedAt, conversationId);
  }

  /** Newest first; `cursor` is the one a previous page gave (null: it was not one). */
  conversationPage(cursor: string | undefined, limit: number): ConversationPage | null {
    const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : decodeCursor(cursor);
    if (before === null) return null;
    const rows = this.sql.exec<ConversationRow>("SELECT * FROM conversations WHERE seq < ? ORDER BY seq DESC LIMIT ?", before, limit + 1).toArray();
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      conversations: page.map((r) => ({ id: r.conversation_id, createdAt: r.created_at, endedAt: r.ended_at, agent: r.agent })),
      nextCursor: rows.length > limit && last ? encodeCursor(last.seq) : null,
    };
  }

  setActiveConversation(conversationId: string): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO active_conversation (id, conversation_id, at) VALUES (1, ?, ?)",
      conversationId,
      new Date().toISOString(),
    );
  }
}

interface ConversationRow extends Record<string, SqlStorageValue> {
  seq: number;
  conversation_id: string;
  agent: string | null;
  created_at: string;
  ended_at: string | null;
}

/** A page's position, opaque to the caller: `c` and the seq of the page's last row, in base 36. */
function encodeCursor(seq: number): string {
  return `c${seq.toString(36)}`;
}

function decodeCursor(cursor: string): number | null {
  const match = /^c([0-9a-z]{1,11})$/.exec(cursor);
  const seq = match ? parseInt(match[1]!, 36) : NaN;
  return Number.isSafeInteger(seq) && seq > 0 ? seq : null;
}

function providerRecord(row: ProviderRow): ProviderRecord {
  return {
    id: qualify(row.app, row.id),
    app: row.app,
    name: row.name,
    description: row.description,
    methods: JSON.parse(row.methods) as ProviderMethod[],
    notifies: row.notifies === 1,
  };
}

function agentInfo(row: AgentRow): AgentInfo {
  const info: AgentInfo = {
    id: qualify(row.app, row.agent_id),
    app: row.app,
    name: row.name,
    systemPrompt: row.system_prompt,
    // Rows from before tools were qualified hold bare names: the agent's own app's.
    tools: qualifyAll(row.app, JSON.parse(row.tools) as string[]),
    catalog: JSON.parse(row.catalog) as string[],
    skills: JSON.parse(row.skills) as string[],
    browseContexts: row.browse_contexts === 1,
    searchHistory: row.search_history === 1,
    attachedContexts: JSON.parse(row.attached_contexts) as string[],
    memory: row.memory === 1,
    resultPolicies: JSON.parse(row.result_policies) as AgentInfo["resultPolicies"],
    subagents: JSON.parse(row.subagents) as string[],
    updatedAt: row.updated_at,
  };
  if (row.description !== null) info.description = row.description;
  if (row.model !== null) info.model = row.model;
  if (row.upstream !== null) info.upstream = row.upstream;
  if (row.correctives !== null) info.correctives = JSON.parse(row.correctives) as AgentInfo["correctives"];
  if (row.guard !== null) info.guard = JSON.parse(row.guard) as AgentInfo["guard"];
  if (row.dont_mention !== null) info.dontMention = JSON.parse(row.dont_mention) as string[];
  if (row.sees_images !== null) info.seesImages = row.sees_images === 1;
  return info;
}

/** Which agents a hook or a mount is for, stored qualified: bare names are the app's own; none named, all of its own. */
function agentPatterns(app: string, agents: readonly string[] | undefined): string[] {
  return agents ? qualifyAll(app, agents.map((a) => (a === "*" ? "*:*" : a))) : [qualify(app, "*")];
}

/** Bare names are the agent's own app's; duplicates collapse, first place kept. */
function qualifyAll(app: string, names: readonly string[]): string[] {
  return [...new Set(names.map((n) => (n.includes(":") ? n : qualify(app, n))))];
}

function toolRecord(row: ToolRow): ToolRecord {
  const record: ToolRecord = {
    name: qualify(row.app, row.name),
    app: row.app,
    description: row.description,
    inputSchema: JSON.parse(row.input_schema) as JsonObject,
  };
  if (row.annotations !== null) record.annotations = JSON.parse(row.annotations) as ToolAnnotations;
  return record;
}

function skillRecord(row: SkillRow): SkillRecord {
  return {
    name: qualify(row.app, row.name),
    app: row.app,
    description: row.description,
    references: JSON.parse(row.references_meta) as SkillRecord["references"],
    manualChars: row.manual_chars,
    sha256: row.sha256,
  };
}
