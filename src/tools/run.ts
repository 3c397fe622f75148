import { contextKey } from "../core/attachments";
import { LIMITS } from "../protocol/limits";
import { contextVersion } from "../core/version";
import { fail, failWith, ok, type Result } from "../core/problem";
import type { Toolbox, ToolRun, ToolSpec } from "../protocol/tools";
import type { HistorySearched } from "../protocol/evidence";
import { SEARCH_LIMITS, ToolIndex, type CatalogHit } from "./catalog-search";
import { fuseRankings, type Ranker } from "./semantic-search";
import { modelToolName, toolsByModelName } from "./model-names";
import { isRuntimeTool, RUNTIME_TOOLS, type RuntimeToolName } from "./runtime-tools";
import { parseArguments, validateArguments } from "./validate";
import { inOrder, type HookScope } from "../hooks/chain";
import { gateCalls, reviewResult, type Gate } from "./gate";
import { renderSearch, type HistorySearchAnswer } from "../history/search";
import { redact } from "../protect";
import type { CallResult, ModelCall, RanCall, ToolHost } from "./calls";

export interface ToolRunReport {
  results: CallResult[];
  ran: RanCall[];
  /** Catalog tools search_tools loaded, in order (new ones only). */
  loaded: { name: string; query: string; toolCallId: string }[];
  /** Skills read_skill opened. */
  linked: { name: string; toolCallId: string }[];
  /** Contexts read_context read: the ledger records them like an injection. */
  contextsRead: { toolCallId: string; ref: string; itemId?: string; key: string; title: string; version: string }[];
  /** What each search_history call searched for (redacted) and the messages it found, best first. */
  searched: HistorySearched[];
}

/** What search_history reads: the conversation's own stored messages, through its index (a narrow interface, so this module knows no SQL). */
export interface HistorySearch {
  search(query: string, limit: number): HistorySearchAnswer;
}

export interface RunContext {
  toolbox: Toolbox;
  /** Tools loaded before this turn, in order. */
  loaded: readonly string[];
  host: ToolHost;
  conversationId: string;
  /** Neutralises text from outside that a runtime note quotes. */
  neutralize: (text: string) => string;
  /** The turn's hooks: `tool.before` on every call, `tool.after` on app tools' results (docs/hooks.md). */
  hooks?: HookScope | undefined;
  /** The user's request the calls serve, for the `tool.before` hooks. */
  request?: string | null | undefined;
  /** The verdicts already given on these calls (a turn gates its `delegate` calls with the rest, once). */
  gated?: Gate | undefined;
  /** The conversation's stored messages, when search_history is offered (docs/tools.md, "Searching earlier messages"). */
  history?: HistorySearch | undefined;
}

/**
 * The calls the runtime serves, among `calls`: the agent's bound and catalog tools, and the runtime's own it offers
 * (search_history when the conversation offers it, which the toolbox alone cannot tell: `history` is then given, as
 * it is to runCalls).
 */
export function servedCalls(calls: readonly ModelCall[], toolbox: Toolbox, history?: HistorySearch): ModelCall[] {
  const tools = [...toolbox.bound, ...toolbox.catalog];
  const names = new Set(tools.map((t) => modelToolName(t.name)));
  // A name in an app's form (`app__…`) for an app the agent uses is the runtime's to answer, made up or not: an app
  // whose tools it offers, or one its bindings name (whose tools may not be registered).
  const named = [...tools.map((t) => t.name), ...toolbox.agent.tools, ...toolbox.agent.catalog];
  const apps = new Set(named.map((name) => `${name.slice(0, name.indexOf(":"))}__`));
  const appForm = (name: string) => name.includes("__") && apps.has(name.slice(0, name.indexOf("__") + 2));
  return calls.filter((c) => names.has(c.name) || appForm(c.name) || (isRuntimeTool(c.name) && runtimeToolEnabled(c.name, toolbox, history !== undefined)));
}

function runtimeToolEnabled(name: RuntimeToolName, toolbox: Toolbox, searchHistory: boolean): boolean {
  if (name === "delegate") return (toolbox.subagents?.length ?? 0) > 0;
  if (name === "search_tools") return toolbox.catalog.length > 0;
  if (name === "search_history") return searchHistory;
  if (name === "read_skill") return toolbox.skills.length > 0;
  return toolbox.agent.browseContexts;
}

/**
 * Runs the calls the runtime serves: app tools in parallel (each under the hub's deadline, so none hangs), then the
 * runtime's own in call order (search_tools changes the loaded set, so order matters). Every call gets a result the
 * model can read, a failure included.
 */
export async function runCalls(all: readonly ModelCall[], ctx: RunContext): Promise<ToolRunReport> {
  const report: ToolRunReport = { results: [], ran: [], loaded: [], linked: [], contextsRead: [], searched: [] };
  // The guard and the `tool.before` hooks first: a denied call is not run, and nothing runs before every verdict is in.
  const { allowed: calls, denied } = ctx.gated ?? (await gateCalls(all, ctx));
  const byModelName = toolsByModelName(ctx.toolbox);
  const outcomes = new Map<string, { result: CallResult; ran: RanCall }>();
  // In parallel; the tool.after hooks' calls land in the evidence in the calls' order.
  const appCalls = calls.filter((c) => byModelName.has(c.name));
  const ran = await inOrder(ctx.hooks, appCalls, (call, own) => runAppTool(call, byModelName.get(call.name)!, { ...ctx, hooks: own }));
  appCalls.forEach((call, i) => outcomes.set(call.id, ran[i]!));
  const loaded = [...ctx.loaded];
  // A catalog tool the model called by its exact name joins the list, as if found: its schema is shown from now on.
  const bound = new Set(ctx.toolbox.bound.map((t) => t.name));
  for (const call of calls) {
    const spec = byModelName.get(call.name);
    if (spec && !bound.has(spec.name) && !loaded.includes(spec.name) && loaded.length < LIMITS.loadedToolsPerConversation) {
      loaded.push(spec.name);
      report.loaded.push({ name: spec.name, query: `called by name: ${call.name}`, toolCallId: call.id });
    }
  }
  const rankers = new Map<string, Ranker>();
  for (const call of calls) {
    if (!isRuntimeTool(call.name)) continue;
    const started = Date.now();
    const args = parseArguments(call.arguments);
    const checked = args.ok ? validateArguments(RUNTIME_TOOLS[call.name].parameters, args.value) : failWith([args.problem.detail]);
    const answer = checked.ok ? await runRuntimeTool(call, args.ok ? args.value : {}, ctx, loaded, report, rankers) : fail("invalid-request", invalidArguments(call.name, checked.problem));
    const ranker = rankers.get(call.id);
    const ran: RanCall = { toolCallId: call.id, tool: call.name, servedBy: call.name, outcome: answer.ok ? "ok" : !checked.ok ? "invalid_arguments" : call.name === "delegate" ? "refused" : "not_found", ms: Date.now() - started, ...(ranker ? { ranker } : {}) };
    const result: CallResult = answer.ok ? { toolCallId: call.id, content: answer.value, runtimeWritten: false } : { toolCallId: call.id, content: `[tool error: ${ctx.neutralize(answer.problem.detail)}]`, runtimeWritten: true };
    outcomes.set(call.id, { result, ran });
  }
  for (const d of denied) outcomes.set(d.ran.toolCallId, d);
  for (const call of all) {
    const outcome = outcomes.get(call.id) ?? {
      result: errorResult(call.id, `there is no tool named ${call.name}; call one of the tools in your list`, ctx),
      ran: { toolCallId: call.id, tool: call.name, servedBy: call.name, outcome: "unknown_tool" as const, ms: 0 },
    };
    report.results.push(outcome.result);
    report.ran.push(outcome.ran);
  }
  return report;
}

async function runAppTool(call: ModelCall, spec: ToolSpec, ctx: RunContext): Promise<{ result: CallResult; ran: RanCall }> {
  const args = parseArguments(call.arguments);
  const base = { toolCallId: call.id, tool: call.name, servedBy: spec.name };
  if (!args.ok) {
    return { result: errorResult(call.id, `${call.name}: ${args.problem.detail}; call it again with a JSON object`, ctx), ran: { ...base, outcome: "invalid_arguments", ms: 0 } };
  }
  const called = await ctx.host.callTool(spec.name, args.value, { conversationId: ctx.conversationId, toolCallId: call.id });
  const run = called.ok ? { ...called, ...(await reviewResult(ctx.hooks, { id: call.id, tool: spec.name, arguments: call.arguments }, { text: called.text, isError: called.isError })) } : called;
  if (run.ok && !run.isError) return { result: { toolCallId: call.id, content: run.text, runtimeWritten: false }, ran: { ...base, outcome: "ok", ms: run.ms } };
  // The tool's own failure, marked as one: a result carries no error flag the model could read.
  if (run.ok) return { result: errorResult(call.id, `${call.name} reported a failure: ${run.text}`, ctx), ran: { ...base, outcome: "tool_error", ms: run.ms } };
  return { result: errorResult(call.id, failureNote(call.name, spec, run), ctx), ran: { ...base, outcome: run.reason, ms: run.ms } };
}

function failureNote(tool: string, spec: ToolSpec, run: Extract<ToolRun, { ok: false }>): string {
  const app = spec.name.slice(0, spec.name.indexOf(":"));
  switch (run.reason) {
    case "invalid_arguments":
      return invalidArguments(tool, [run.detail]);
    case "offline":
      return `${tool} was not run: the app '${app}' that serves it is not connected. Tell the user, or go on without it`;
    case "disconnected":
      return `the app '${app}' disconnected while running ${tool}; it may have run, so check before calling it again`;
    case "timeout":
      return `${tool} did not answer in time (${run.detail}); it may still have run, so check before calling it again`;
    case "unknown_tool":
      return `${tool} is no longer served by the app '${app}'`;
    default:
      return `${tool} failed: ${run.detail}`;
  }
}

function invalidArguments(tool: string, errors: readonly string[]): string {
  return `the arguments do not match ${tool}'s schema: ${errors.join("; ")}. Fix them and call it again`;
}

function errorResult(toolCallId: string, note: string, ctx: RunContext): CallResult {
  return { toolCallId, content: `[tool error: ${ctx.neutralize(note)}]`, runtimeWritten: true };
}


async function runRuntimeTool(call: ModelCall, args: Record<string, unknown>, ctx: RunContext, loaded: string[], report: ToolRunReport, rankers: Map<string, Ranker>): Promise<Result<string>> {
  switch (call.name as RuntimeToolName) {
    case "search_tools": {
      const query = String(args.query);
      const limit = typeof args.limit === "number" ? args.limit : SEARCH_LIMITS.defaultResults;
      const { hits, ranker } = await rankCatalog(query, limit, ctx);
      rankers.set(call.id, ranker);
      return ok(searchTools(query, hits, call.id, ctx, loaded, report));
    }
    case "search_history":
      return searchHistory(String(args.query), typeof args.limit === "number" ? args.limit : 5, call.id, ctx, report);
    case "read_skill":
      return readSkill(String(args.name), call.id, ctx, report);
    case "list_contexts":
      return listContexts(args.provider as string | undefined, args.query as string | undefined, ctx);
    case "read_context":
      return readContext(String(args.provider), args.id as string | undefined, call.id, ctx, report);
    case "delegate":
      // A turn's run stage starts subagents itself (src/conversation/delegation.ts); elsewhere (POST …/tools/run) none starts.
      return fail("invalid-request", "delegate was not run: a subagent starts only when the model's reply comes in a turn (its `reply`)");
  }
}

/** Index per catalog: a conversation's turns search the same catalog again and again. */
const indexes = new WeakMap<readonly ToolSpec[], ToolIndex>();

/**
 * The catalog's best tools for a query: the lexical ranking, fused with the embedding model's by score where
 * the deployment has one and it answers in time (exact names first either way). `select:` names tools: lexical only.
 */
async function rankCatalog(query: string, limit: number, ctx: RunContext): Promise<{ hits: CatalogHit[]; ranker: Ranker }> {
  const catalog = ctx.toolbox.catalog;
  let index = indexes.get(catalog);
  if (!index) {
    index = new ToolIndex(catalog);
    indexes.set(catalog, index);
  }
  const lexical = () => ({ hits: index.search(query, limit), ranker: "lexical" as const });
  // A blank query finds nothing, and the model would still have nearest tools for it.
  if (!ctx.host.rankByMeaning || query.trim() === "" || /^\s*select:/i.test(query)) return lexical();
  const semantic = await ctx.host.rankByMeaning(query, catalog.map((t) => t.name)).catch(() => null);
  // No vector at all yet (none computed, or the model failed for every tool): the order is the lexical one, and says so.
  return semantic && semantic.length > 0 ? { hits: fuseRankings(index.search(query, SEARCH_LIMITS.maxResults), semantic, limit), ranker: "fused" } : lexical();
}

function searchTools(query: string, hits: readonly CatalogHit[], toolCallId: string, ctx: RunContext, loaded: string[], report: ToolRunReport): string {
  const catalog = ctx.toolbox.catalog;
  if (hits.length === 0) return `No tool matched "${query}". Describe the action in other words, or give an exact tool name.`;
  const specs = new Map(catalog.map((t) => [t.name, t]));
  let full = 0;
  const lines = hits.map((hit) => {
    const known = loaded.includes(hit.name);
    // The list stays bounded: past the limit a tool is named but not loaded.
    if (!known && loaded.length >= LIMITS.loadedToolsPerConversation) {
      full++;
      return `- ${modelToolName(hit.name)}: ${specs.get(hit.name)!.description} (not loaded: your list is full)`;
    }
    if (!known) {
      loaded.push(hit.name);
      report.loaded.push({ name: hit.name, query, toolCallId });
    }
    const offline = specs.get(hit.name)!.online ? "" : " (its app is not connected now: a call would fail)";
    return `- ${modelToolName(hit.name)}: ${specs.get(hit.name)!.description}${known ? " (already in your list)" : ""}${offline}`;
  });
  const note = full ? `\n(${LIMITS.loadedToolsPerConversation} tools are loaded already, the most a conversation holds: ${full} found here could not be added.)` : "";
  return `Tools for "${query}", now in your tool list for the rest of the conversation (call them by these names):\n${lines.join("\n")}${note}`;
}

/**
 * Searches the conversation's own stored messages. The hits are a record of what was said: the result is an ordinary
 * tool result, so it passes the tool-result envelope like any other. The evidence keeps the query redacted.
 */
function searchHistory(query: string, limit: number, toolCallId: string, ctx: RunContext, report: ToolRunReport): Result<string> {
  if (!ctx.history) return fail("not-found", "search_history is not offered in this conversation");
  const answer = ctx.history.search(query, limit);
  report.searched.push({ toolCallId, query: redact(query).text, hits: answer.hits.map((h) => ({ seq: h.seq, role: h.role })) });
  return ok(renderSearch(query, answer, new Date()));
}

async function readSkill(name: string, toolCallId: string, ctx: RunContext, report: ToolRunReport): Promise<Result<string>> {
  const skills = ctx.toolbox.skills;
  const skill = skills.find((s) => s.name === name) ?? uniqueBare(skills, name);
  if (!skill) return fail("not-found", `no skill '${name}' on your menu; the menu lists: ${skills.map((s) => s.name).join(", ")}`);
  const read = await ctx.host.readSkill(skill.name);
  if (!read.ok) return fail("not-found", `the skill '${skill.name}' could not be read: ${read.problem.detail}`);
  report.linked.push({ name: skill.name, toolCallId });
  const references = read.value.references.map((r) => `\n\n## Reference: ${r.name}\n\n${r.content}`).join("");
  return ok(`# Skill ${skill.name}\n\n${read.value.manual}${references}`);
}

function uniqueBare<T extends { name: string }>(items: readonly T[], bare: string): T | undefined {
  const matches = items.filter((s) => s.name.slice(s.name.indexOf(":") + 1) === bare);
  return matches.length === 1 ? matches[0] : undefined;
}

const LIST_LIMIT = 20;

async function listContexts(provider: string | undefined, query: string | undefined, ctx: RunContext): Promise<Result<string>> {
  if (provider === undefined) {
    const providers = (await ctx.host.providers()).filter((p) => p.methods.includes("list") || p.methods.includes("current"));
    if (providers.length === 0) return ok("No app offers contexts to browse.");
    const lines = providers.map((p) => `- ${p.id}: ${p.name}${p.description ? ` — ${p.description}` : ""}${p.methods.includes("list") ? "" : " (current state only: read_context without an id)"}${p.online ? "" : " (offline)"}`);
    return ok(`Contexts you can browse (list one's items with list_contexts and a provider; read with read_context):\n${lines.join("\n")}`);
  }
  const listed = await ctx.host.listItems(provider, { ...(query ? { query } : {}), limit: LIST_LIMIT });
  if (!listed.ok) return fail("not-found", listed.problem.detail);
  if (listed.value.items.length === 0) return ok(`${provider} has no items${query ? ` matching "${query}"` : ""}.`);
  const lines = listed.value.items.map((i) => `- ${i.id}: ${i.title}${i.summary ? ` — ${i.summary}` : ""}`);
  return ok(`Items of ${provider}${query ? ` matching "${query}"` : ""} (read one with read_context and its id):\n${lines.join("\n")}${listed.value.nextCursor ? "\n(more items exist: narrow the query)" : ""}`);
}

async function readContext(provider: string, id: string | undefined, toolCallId: string, ctx: RunContext, report: ToolRunReport): Promise<Result<string>> {
  const read = await ctx.host.readContext(provider, id, ctx.conversationId);
  if (!read.ok) return fail("not-found", read.problem.detail);
  if (read.value === null) return ok(`${provider}${id === undefined ? "" : ` has no item '${id}'`}${id === undefined ? " has nothing to show now" : ""}.`);
  const key = contextKey(provider, id);
  const title = read.value.title?.trim() || (id === undefined ? provider : `${provider}: ${id}`);
  report.contextsRead.push({ toolCallId, ref: provider, ...(id === undefined ? {} : { itemId: id }), key, title, version: await contextVersion(read.value) });
  return ok(`${title}\n\n${read.value.content}`);
}
