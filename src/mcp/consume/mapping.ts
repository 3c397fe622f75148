/**
 * What an MCP server's answers become in the runtime's own terms (docs/mcp.md, "Consume"): its tools are catalog tools,
 * its prompts skills, its resources contexts, and every failure a reason the turn can report. Pure: no session, no I/O.
 */
import type { CallToolResult, GetPromptResult, ListResourcesResult, Prompt, ReadResourceResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ContextData, ContextList } from "../../protocol/context-data";
import type { MissingReason } from "../../protocol/evidence";
import { issuesOf } from "../../protocol/jsonrpc";
import { LIMITS } from "../../protocol/limits";
import { MCP_CONSUME_LIMITS } from "../../protocol/mcp-servers";
import { ToolDeclaration } from "../../protocol/methods";
import { Name } from "../../protocol/names";
import { checkSchema } from "../../tools/validate";

/** A server's tool as the catalog keeps it (the name unqualified: the hub stores it under the server's name). */
export type CatalogTool = ReturnType<typeof ToolDeclaration.parse>;
export interface CatalogPrompt {
  name: string;
  description: string;
}
export interface Skipped {
  kind: "tool" | "prompt";
  name: string;
  reason: string;
}
export interface ServerCatalog {
  tools: CatalogTool[];
  prompts: CatalogPrompt[];
  skipped: Skipped[];
}

/**
 * The tools and prompts of a server's lists that the catalog can hold: each tool's name a catalog name and its input
 * schema usable JSON Schema, checked as an app's are; prompts without required arguments (a skill takes none). What is
 * left out is named with why, never silently dropped.
 */
export function catalogOf(tools: readonly Tool[], prompts: readonly Prompt[]): ServerCatalog {
  const skipped: Skipped[] = [];
  const catalogTools: CatalogTool[] = [];
  for (const tool of tools) {
    if (catalogTools.length >= MCP_CONSUME_LIMITS.toolsPerServer) {
      skipped.push({ kind: "tool", name: tool.name, reason: `past the ${MCP_CONSUME_LIMITS.toolsPerServer} tools one server may add` });
      continue;
    }
    const declared = ToolDeclaration.safeParse({
      name: tool.name,
      description: cut(tool.description ?? tool.title ?? "", LIMITS.toolDescriptionChars),
      inputSchema: tool.inputSchema,
      ...(tool.annotations ? { annotations: annotationsOf(tool.annotations) } : {}),
    });
    if (!declared.success) {
      skipped.push({ kind: "tool", name: tool.name, reason: issuesOf(declared.error).map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ") });
      continue;
    }
    const schema = checkSchema(declared.data.inputSchema);
    if (!schema.ok) skipped.push({ kind: "tool", name: tool.name, reason: schema.problem.detail });
    else catalogTools.push(declared.data);
  }
  const catalogPrompts: CatalogPrompt[] = [];
  for (const prompt of prompts) {
    const reason = !Name.safeParse(prompt.name).success
      ? "not a catalog name (letters, digits, '.', '_' or '-', at most 64)"
      : prompt.arguments?.some((a) => a.required)
        ? "it has required arguments; a skill is read without any"
        : catalogPrompts.length >= MCP_CONSUME_LIMITS.promptsPerServer
          ? `past the ${MCP_CONSUME_LIMITS.promptsPerServer} prompts one server may add`
          : null;
    if (reason) skipped.push({ kind: "prompt", name: prompt.name, reason });
    else catalogPrompts.push({ name: prompt.name, description: cut(prompt.description || prompt.title || prompt.name, LIMITS.skillDescriptionChars) });
  }
  return { tools: catalogTools, prompts: catalogPrompts, skipped };
}

/** The hints the runtime reads; a title too long for the catalog is cut. */
function annotationsOf(annotations: NonNullable<Tool["annotations"]>) {
  const { title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint } = annotations;
  const hints = { readOnlyHint, destructiveHint, idempotentHint, openWorldHint };
  return { ...(title ? { title: cut(title, LIMITS.titleChars) } : {}), ...Object.fromEntries(Object.entries(hints).filter(([, v]) => typeof v === "boolean")) };
}

/** A prompt's messages as a skill's manual: each message's text under its role; what is not text is named, not inlined. */
export function manualOf(result: GetPromptResult): string {
  const parts = result.messages.map((m) => `${m.role}: ${contentText(m.content)}`);
  return cut([result.description ?? "", ...parts].filter(Boolean).join("\n\n"), LIMITS.skillManualChars);
}

type Content = GetPromptResult["messages"][number]["content"] | CallToolResult["content"][number];

/** One content part as text: text as is, an embedded text resource's text, a link or a binary part by what it is. */
function contentText(part: Content): string {
  switch (part.type) {
    case "text":
      return part.text;
    case "resource":
      return "text" in part.resource ? part.resource.text : `[binary resource ${part.resource.uri}]`;
    case "resource_link":
      return `[resource ${part.uri}${part.name ? ` (${part.name})` : ""}]`;
    default:
      return `[${part.type}${"mimeType" in part && part.mimeType ? ` ${part.mimeType}` : ""}]`;
  }
}

/**
 * A tool's result as the model reads it, like an app's `tools/call` answer: the text of its parts (embedded text
 * resources included, links and binary parts named), or its structured content as JSON when it has no text.
 */
export function toolTextOf(result: CallToolResult): { text: string; isError: boolean } {
  const text = result.content.map(contentText).join("\n");
  const structured = text === "" && result.structuredContent !== undefined ? JSON.stringify(result.structuredContent) : "";
  return { text: text || structured, isError: result.isError === true };
}

/**
 * A resource's contents as a context, titled with the server and the URI: its text parts joined (a binary part is named, not inlined), cut at the
 * runtime's context limit with a note. The version is left to the hub: a hash of the content.
 */
export function contextOf(server: string, uri: string, result: ReadResourceResult): ContextData {
  const text = result.contents.map((c) => ("text" in c && typeof c.text === "string" ? c.text : `[binary ${c.mimeType ?? "content"} at ${c.uri}]`)).join("\n\n");
  const limit = LIMITS.contextContentChars;
  const note = `\n[cut at ${limit} characters]`;
  const content = text.length > limit ? text.slice(0, limit - note.length) + note : text;
  const mimeType = result.contents[0]?.mimeType;
  return { content, title: cut(`${server}: ${uri}`, LIMITS.titleChars), uri, ...(mimeType ? { mimeType: mimeType.slice(0, 128) } : {}) };
}

/**
 * One page of `resources/list` as a provider's list: each resource by its URI (the id `get` reads). MCP lists have no
 * query, so `query` filters the page by title, URI and description; resources whose URI is too long to be an id are left out.
 */
export function listOf(result: ListResourcesResult, query: string | undefined, limit: number): ContextList {
  const wanted = query?.trim().toLowerCase();
  const items = result.resources
    .filter((r) => r.uri.length <= LIMITS.itemIdChars)
    .filter((r) => !wanted || `${r.title ?? ""} ${r.name} ${r.uri} ${r.description ?? ""}`.toLowerCase().includes(wanted))
    .slice(0, limit)
    .map((r) => ({
      id: r.uri,
      title: cut(r.title || r.name || r.uri, LIMITS.titleChars),
      ...(r.description ? { summary: cut(r.description, LIMITS.summaryChars) } : {}),
      ...(r.mimeType ? { type: r.mimeType.slice(0, 64) } : {}),
    }));
  return { items, ...(result.nextCursor && result.nextCursor.length <= 1024 ? { nextCursor: result.nextCursor } : {}) };
}

/** Why a call to a server gave no answer, in the words a missing context or a failed tool run uses. */
export interface ServerFailure {
  reason: Extract<MissingReason, "offline" | "timeout" | "error" | "invalid">;
  detail: string;
}

/** The SDK's error codes the mapping reads (its ErrorCode enum, as numbers: this module imports no SDK code). */
const REQUEST_TIMEOUT = -32001;
const CONNECTION_CLOSED = -32000;

/**
 * Sorts a failed request: no connection or a dropped one is `offline`, the deadline `timeout`, an answer that is not
 * MCP (not JSON, the wrong media type, a result of the wrong shape) `invalid`, and an error the server answered `error`.
 */
export function failureOf(server: string, error: unknown): ServerFailure {
  const message = error instanceof Error ? error.message : String(error);
  const detail = `MCP server '${server}': ${cut(message, 400)}`;
  const code = typeof (error as { code?: unknown })?.code === "number" ? (error as { code: number }).code : undefined;
  const name = error instanceof Error ? error.name : "";
  if (code === REQUEST_TIMEOUT) return { reason: "timeout", detail };
  if (code === CONNECTION_CLOSED) return { reason: "offline", detail };
  if (name === "ZodError" || name === "SyntaxError" || Array.isArray((error as { issues?: unknown })?.issues) || /unexpected content type|invalid json|not valid json|parse/i.test(message)) {
    return { reason: "invalid", detail };
  }
  if (name === "McpError") return { reason: "error", detail };
  // The transport's own HTTP failures: an error status is the server's answer; anything else is no connection.
  if (/error posting|http \d{3}|status \d{3}|streamable http error/i.test(message)) return { reason: "error", detail };
  return { reason: "offline", detail };
}

/** The wait before reconnect attempt `failures` (1 after the first failure): doubling from the first, up to the most. */
export function backoffMs(failures: number): number {
  const { backoffFirstMs, backoffMaxMs } = MCP_CONSUME_LIMITS;
  return Math.min(backoffMaxMs, backoffFirstMs * 2 ** Math.max(0, Math.min(failures - 1, 20)));
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
