/**
 * An agent's view, as an MCP session reads it (docs/mcp.md, "Serve"): its contexts as resources, its tools, its skills
 * as prompts. Everything passes the trust boundary a turn's does, runs through the same guard, hooks and tool-result
 * envelope, and every access lands in the conversation's events under the session's id (`mcp:<session>`).
 */
import type { CallToolResult, Prompt, Resource, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import { contextKey } from "../core/attachments";
import { neutralize } from "../core/neutralize";
import { fail, ok, type Result } from "../core/problem";
import { contextVersion } from "../core/version";
import { admitText, auditRecords, protectToolResult, resolveTrimPolicy } from "../protect";
import { LIMITS } from "../protocol/limits";
import { MCP_RESOURCES_PROVIDER, pinnedUri } from "../protocol/mcp-servers";
import type { ProviderInfo } from "../protocol/frontend";
import type { Toolbox, ToolSpec } from "../protocol/tools";
import { modelToolName } from "../tools/model-names";
import { runCalls, servedCalls } from "../tools/run";
import { RUNTIME_TOOLS, type RuntimeToolName } from "../tools/runtime-tools";
import type { AgentView, ResourcePage, ResourceText } from "../mcp/serve/server";
import { contextUri, itemTemplate, parseContextUri, type ContextAddress } from "../mcp/serve/uris";
import type { McpSession } from "./mcp-session-store";
import { toolHost, type ConversationScope } from "./scope";
import { policiesByModelName } from "./tool-runs";

/** The runtime's own tools a session may call, where the agent offers them: the rest need a turn (delegate, search_history). */
const SESSION_RUNTIME_TOOLS: readonly RuntimeToolName[] = ["search_tools", "list_contexts", "read_context", "read_skill"];

/** What the view tells its session's client besides an answer: the tool list changed (search_tools loaded more). */
export interface ViewNotices {
  toolsChanged(): void;
}

/** `resources/list`'s cursor: which browsable provider the next page comes from, and that provider's own cursor. */
const Cursor = z.object({ p: z.number().int().min(0), c: z.string().max(1024).optional() });

export function agentView(scope: ConversationScope, session: McpSession, toolbox: Toolbox, notices: ViewNotices): AgentView {
  const { db, meta, apps } = scope;
  const agent = toolbox.agent;
  const runId = `mcp:${session.sessionId}`;
  const at = () => scope.now().toISOString();
  let providers: Promise<ProviderInfo[]> | null = null;
  const allProviders = () => (providers ??= Promise.resolve(apps.providers()));

  /**
   * The contexts pinned for the agent and the conversation, as `ctx://` resources. An MCP server's pinned resource
   * (`server:uri`) is the item `uri` of the provider `server:resources`, which reads it.
   */
  const attached = (): ContextAddress[] => {
    const seen = new Map<string, ContextAddress>();
    for (const ref of agent.attachedContexts) {
      const uri = pinnedUri(ref);
      const address = uri === null ? { ref } : { ref: `${ref.slice(0, ref.indexOf(":"))}:${MCP_RESOURCES_PROVIDER}`, itemId: uri };
      seen.set(contextKey(address.ref, address.itemId), address);
    }
    for (const a of db.attachments.list()) seen.set(a.key, a.itemId === undefined ? { ref: a.context } : { ref: a.context, itemId: a.itemId });
    return [...seen.values()];
  };

  /** The providers the agent may browse, with the method asked for: none unless it browses contexts (`browseContexts`). */
  const browsable = async (method: "list" | "get"): Promise<ProviderInfo[]> =>
    agent.browseContexts ? (await allProviders()).filter((p) => p.methods.includes(method)).sort((a, b) => (a.id < b.id ? -1 : 1)) : [];

  /** Whether the agent may read `address`: attached, or an item or state of a provider it browses. */
  const reachable = async (address: ContextAddress): Promise<boolean> => {
    if (attached().some((a) => a.ref === address.ref && a.itemId === address.itemId)) return true;
    if (!agent.browseContexts) return false;
    const provider = (await allProviders()).find((p) => p.id === address.ref);
    return provider !== undefined && provider.methods.includes(address.itemId === undefined ? "current" : "get");
  };

  const notFound = (uri: string) => fail<never>("not-found", `no resource '${uri}' in this agent's view`);

  /** A context's text now, past the trust boundary; its version is the provider's, or a hash of what it sent. */
  const readAddress = async (uri: string, address: ContextAddress): Promise<Result<ResourceText>> => {
    const answer = await apps.readContext(address.ref, address.itemId, meta.conversationId);
    if (!answer.ok) return answer;
    // An item the provider does not have is no resource; a provider with nothing current reads as empty text.
    if (answer.value === null && address.itemId !== undefined) return notFound(uri);
    const data = answer.value ?? { content: "" };
    const admitted = admitText(data.content, { nonce: meta.nonce });
    const version = await contextVersion(data);
    const redactions = await auditRecords(admitted.hits, await scope.auditKey());
    db.events.add(runId, "mcp.resource.read", uri, { ref: address.ref, ...(address.itemId !== undefined ? { itemId: address.itemId } : {}), version, chars: admitted.text.length, ...(redactions.length ? { redactions } : {}) }, at());
    return ok({ uri, text: admitted.text, mimeType: data.mimeType ?? "text/plain", version });
  };

  const describe = (address: ContextAddress, providersById: Map<string, ProviderInfo>): Resource => {
    const provider = providersById.get(address.ref);
    const name = address.itemId === undefined ? address.ref : `${address.ref}/${address.itemId}`;
    return { uri: contextUri(address.ref, address.itemId), name, ...(provider ? { title: provider.name, description: provider.description } : {}), mimeType: "text/plain" };
  };

  /** The tools the session lists: bound, loaded from the catalog, and the runtime's own the agent offers. */
  const listed = (): ToolSpec[] => {
    const loaded = new Set(db.toolState.loaded());
    return [...toolbox.bound, ...toolbox.catalog.filter((t) => loaded.has(t.name))];
  };

  /** The runtime's own tools the agent offers (search_tools with a catalog, the context tools when it browses, …). */
  const offered = () => SESSION_RUNTIME_TOOLS.filter((name) => servedCalls([{ id: name, name, arguments: "{}" }], toolbox).length > 0);

  return {
    async resources(cursor: string | undefined): Promise<Result<ResourcePage>> {
      const state = cursor === undefined ? { p: 0 } : decodeCursor(cursor);
      if (!state) return fail("invalid-request", "this cursor was not issued by this server; list again without it");
      const providersById = new Map((await allProviders()).map((p) => [p.id, p]));
      const resources = cursor === undefined ? attached().map((a) => describe(a, providersById)) : [];
      const sources = await browsable("list");
      // One browsable provider's page per call: a provider that does not answer is passed over, never failing the list.
      let next: z.infer<typeof Cursor> | null = null;
      for (let p = state.p; p < sources.length; p++) {
        const provider = sources[p]!;
        const page = await apps.listItems(provider.id, p === state.p && state.c !== undefined ? { cursor: state.c } : {});
        if (!page.ok) continue;
        resources.push(...page.value.items.map((item): Resource => ({ uri: contextUri(provider.id, item.id), name: `${provider.id}/${item.id}`, title: item.title, ...(item.summary ? { description: item.summary } : {}), mimeType: "text/plain" })));
        next = page.value.nextCursor !== undefined ? { p, c: page.value.nextCursor } : p + 1 < sources.length ? { p: p + 1 } : null;
        break;
      }
      db.events.add(runId, "mcp.resources.listed", null, { count: resources.length }, at());
      return ok(next ? { resources, nextCursor: encodeCursor(next) } : { resources });
    },

    async templates(): Promise<ResourceTemplate[]> {
      return (await browsable("get")).map((p) => ({ uriTemplate: itemTemplate(p.id), name: p.id, title: p.name, description: p.description, mimeType: "text/plain" }));
    },

    async read(uri: string): Promise<Result<ResourceText>> {
      const address = parseContextUri(uri);
      if (!address || !(await reachable(address))) return notFound(uri);
      const read = await readAddress(uri, address);
      // A subscriber that reads the resource has seen this version: the next change is announced against it.
      if (read.ok && db.mcp.subscriptions(session.sessionId).some((s) => s.uri === uri)) db.mcp.announced(session.sessionId, uri, read.value.version);
      return read;
    },

    async subscribe(uri: string, subscribed: boolean): Promise<Result<void>> {
      const address = parseContextUri(uri);
      // Unsubscribing needs only the subscription: the resource may have left the view since.
      if (!subscribed && address && db.mcp.subscriptions(session.sessionId).some((s) => s.uri === uri)) {
        const unwatched = db.mcp.unsubscribe(session.sessionId, uri, address.ref);
        if (unwatched) await apps.watchContext(meta.conversationId, unwatched, false);
        db.events.add(runId, "mcp.resource.unsubscribed", uri, { ref: address.ref }, at());
        return ok(undefined);
      }
      if (!address || !(await reachable(address))) return notFound(uri);
      if (!subscribed) return ok(undefined);
      const existing = db.mcp.subscriptions(session.sessionId);
      if (!existing.some((s) => s.uri === uri) && existing.length >= LIMITS.mcpSubscriptionsPerSession) {
        return fail("invalid-request", `a session subscribes to at most ${LIMITS.mcpSubscriptionsPerSession} resources; unsubscribe from one first`);
      }
      // The version now, so the first change is told against what the client could have read when it subscribed.
      const version = await versionNow(scope, address);
      db.mcp.subscribe({ sessionId: session.sessionId, uri, ref: address.ref, version });
      await apps.watchContext(meta.conversationId, address.ref, true);
      db.events.add(runId, "mcp.resource.subscribed", uri, { ref: address.ref, version }, at());
      return ok(undefined);
    },

    async tools(): Promise<Tool[]> {
      const own = offered();
      const tools = listed();
      db.events.add(runId, "mcp.tools.listed", null, { count: tools.length + own.length }, at());
      return [
        ...tools.map((t): Tool => ({ name: modelToolName(t.name), title: t.name, description: t.description, inputSchema: { ...t.inputSchema, type: "object" }, ...(t.annotations ? { annotations: t.annotations } : {}) })),
        ...own.map((name): Tool => {
          const schema = RUNTIME_TOOLS[name].parameters;
          return { name, description: RUNTIME_TOOLS[name].description, inputSchema: { ...schema, required: "required" in schema ? [...schema.required] : [] } };
        }),
      ];
    },

    async callTool(name: string, args: Record<string, unknown>): Promise<Result<CallToolResult>> {
      const call = { id: `mcp-${crypto.randomUUID()}`, name, arguments: JSON.stringify(args) };
      // The agent's own and catalog tools by name (a catalog tool called by name joins the list, as in a turn), and the
      // runtime's own the session offers; a name outside them is an error of the request, not a tool's result.
      const known = [...toolbox.bound, ...toolbox.catalog].some((t) => modelToolName(t.name) === name) || offered().includes(name as RuntimeToolName);
      if (!known) return fail("invalid-request", `no tool named '${name}' in this agent's view; tools/list names them`);
      const tools = toolHost(scope);
      const hooks = { host: tools, conversationId: meta.conversationId, turnId: runId, agent: agent.id, hooks: toolbox.hooks ?? [], log: [] };
      const loadedBefore = db.toolState.loaded();
      const report = await runCalls([call], { toolbox, loaded: loadedBefore, host: tools, conversationId: meta.conversationId, neutralize: (text) => neutralize(text, meta.nonce), hooks, request: null });
      const result = report.results[0]!;
      const ran = report.ran[0]!;
      // The tool-result envelope a turn's results pass: neutralised (unless the runtime wrote it), redacted, trimmed.
      const content = result.runtimeWritten ? result.content : neutralize(result.content, meta.nonce);
      const policy = resolveTrimPolicy(name, policiesByModelName(agent.resultPolicies, agent.app, toolbox));
      const envelope = protectToolResult(content, { policy });
      const redactions = await auditRecords(envelope.hits, await scope.auditKey());
      const when = at();
      db.transaction(() => {
        db.toolState.load(report.loaded, runId, when);
        db.events.add(runId, "tool.call.ran", call.id, { tool: ran.tool, servedBy: ran.servedBy, outcome: ran.outcome, ms: ran.ms, via: "mcp", ...(hooks.log.length ? { hooks: hooks.log } : {}) }, when);
        if (ran.outcome === "denied") db.events.add(runId, "tool.call.denied", call.id, { tool: ran.tool, servedBy: ran.servedBy, by: ran.deniedBy ?? "guard", reason: ran.reason }, when);
        if (redactions.length) db.events.add(runId, "tool.result.redacted", call.id, { tool: ran.tool, redactions }, when);
        if (envelope.trimmed) db.events.add(runId, "tool.result.trimmed", call.id, { tool: ran.tool, ...envelope.trimmed }, when);
      });
      if (report.loaded.length > 0) notices.toolsChanged();
      return ok({ content: [{ type: "text", text: envelope.content }], isError: ran.outcome !== "ok" });
    },

    async prompts(): Promise<Prompt[]> {
      db.events.add(runId, "mcp.prompts.listed", null, { count: toolbox.skills.length }, at());
      return toolbox.skills.map((s) => ({ name: s.name, description: s.description }));
    },

    async prompt(name: string): Promise<Result<{ description: string; text: string }>> {
      if (!toolbox.skills.some((s) => s.name === name)) return fail("not-found", `no prompt '${name}' in this agent's view; prompts/list names them`);
      const skill = await apps.readSkill(name);
      if (!skill.ok) return skill;
      const manual = [skill.value.manual, ...skill.value.references.map((r) => `## ${r.name}\n\n${r.content}`)].join("\n\n");
      const admitted = admitText(manual, { nonce: meta.nonce });
      const redactions = await auditRecords(admitted.hits, await scope.auditKey());
      db.events.add(runId, "mcp.prompt.read", name, { chars: admitted.text.length, ...(redactions.length ? { redactions } : {}) }, at());
      return ok({ description: skill.value.description, text: admitted.text });
    },
  };
}

/** A context's version now, as a turn versions what it pulls (nothing now is empty text); null when it cannot be read. */
export async function versionNow(scope: Pick<ConversationScope, "apps" | "meta">, address: ContextAddress): Promise<string | null> {
  const read = await scope.apps.readContext(address.ref, address.itemId, scope.meta.conversationId);
  return read.ok ? contextVersion(read.value ?? { content: "" }) : null;
}

function encodeCursor(state: z.infer<typeof Cursor>): string {
  return btoa(JSON.stringify(state));
}

function decodeCursor(cursor: string): z.infer<typeof Cursor> | null {
  try {
    const parsed = Cursor.safeParse(JSON.parse(atob(cursor)));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
