/**
 * The OpenAPI 3.1 document of the frontend API, generated from the zod schemas the routes validate with and the
 * responses `ContextClient` parses: one table (`ROUTES`) says, for each route, its query, body and answers. Served at
 * `GET /openapi.json`; test/workers/openapi.test.ts checks the table against the routes hono registers under /v1.
 *
 * JSON Schema is generated with `io: "input"` for bodies, queries and answers alike: it describes the JSON on the
 * wire, before zod's transforms (text normalised, messages reshaped) and defaults. Refinements across fields
 * (`cachedTokens ≤ promptTokens`, …) have no JSON Schema form and are only in the descriptions and the 400s.
 */
import * as z from "zod";
import { ResolveBody } from "../artifacts/declare-fields";
import { StoreArtifactBody } from "../artifacts/store";
import { ArtifactRef } from "../protocol/artifacts";
import { ContextList } from "../protocol/context-data";
import {
  AgentList,
  Appended,
  AppendResult,
  ApprovalDecided,
  ApprovalList,
  ApprovalRequested,
  AttachmentList,
  ClearResult,
  CompactResult,
  ConversationInfo,
  ConversationPage,
  EndedConversation,
  EventPage,
  MessagePage,
  PastTurn,
  ProblemDocument,
  ProviderList,
  ResourceList,
  TurnPage,
  TurnResult,
} from "../protocol/frontend";
import { CompactionStatus, RequestMessages } from "../protocol/history";
import {
  AppendMessagesBody,
  ApprovalDecisionBody,
  ApprovalRequestBody,
  Attachment,
  CompactBody,
  ConversationsQuery,
  CreateConversationBody,
  EventsQuery,
  ItemsQuery,
  MessagesQuery,
  RequestMessagesQuery,
  RunToolsBody,
  SetMessagesBody,
  TurnBody,
  TurnsQuery,
} from "../protocol/http";
import { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, OpenAIError } from "../protocol/gateway-openai";
import { AnthropicError, AnthropicMessage, AnthropicStreamEvent, MessagesRequest } from "../protocol/gateway-anthropic";
import { ChatMessage } from "../protocol/messages";
import { CompleteDelegationBody, DelegationCompleted, DelegationList } from "../protocol/delegation";
import { CompactionPolicy } from "../protocol/policies";
import { ToolRunResult } from "../protocol/tools";
import { RefQuery } from "./artifacts";
import { TurnExport } from "../protocol/turn-export";
import { WhatIfAnswer, WhatIfBody } from "../protocol/what-if";
import { MetricsPage } from "../telemetry/metrics";
import { BatchBody, DeleteQuery, ListQuery, SearchQuery, WriteBody } from "./memory";
import { McpServerDeclaration, McpServerInfo, McpServerList } from "../protocol/mcp-servers";

// ── answers that are not in src/protocol (memories and artifacts keep theirs in their modules, as TypeScript) ──

const StoredMemory = z.object({
  id: z.string(),
  level: z.enum(["user", "session", "task"]),
  session: z.string().optional(),
  task: z.string().optional(),
  text: z.string(),
  source: z.string(),
  trust: z.enum(["curated", "captured"]),
  createdAt: z.string(),
  reinforcedAt: z.string().optional(),
  reinforcement: z.number(),
  tokens: z.number(),
});
const MemoryCreated = z.object({ memory: StoredMemory });
const MemoryReinforced = z.object({ reinforced: StoredMemory, similarity: z.number() });
const WriteOutcome = z.union([
  z.object({ status: z.literal("created"), memory: StoredMemory }),
  z.object({ status: z.literal("reinforced"), memory: StoredMemory, similarity: z.number() }),
  z.object({ status: z.literal("refused"), reason: z.string(), signal: z.string(), detail: z.string() }),
]);
const MemoryBatchResult = z.object({ results: z.array(WriteOutcome), created: z.number(), reinforced: z.number(), refused: z.number() });
const MemorySearchResult = z.object({
  results: z.array(z.object({ memory: StoredMemory, score: z.number(), relevance: z.number(), recency: z.number() })),
  candidates: z.number(),
  matched: z.number(),
});
const MemoryPage = z.object({ memories: z.array(StoredMemory), cursor: z.string().optional() });
const MemoryDeleted = z.object({ deleted: StoredMemory });
const Resolution = z.object({
  values: z.record(z.string(), z.unknown()),
  from: z.record(z.string(), z.string()),
  shadowed: z.record(z.string(), z.array(z.string())),
  missing: z.array(z.object({ field: z.string(), reason: z.enum(["not-found", "not-a-list", "too-large", "over-budget"]), detail: z.string() })),
  read: z.array(z.string()),
  tokens: z.number(),
});
const ResourceRemoved = z.object({ removed: z.string() });
const McpServerRemoved = z.object({ removed: z.string() });

/** Every schema the document names, by its name under `components.schemas`. */
const SCHEMAS = {
  ChatMessage,
  ProblemDocument,
  CreateConversationBody,
  ConversationsQuery,
  ConversationInfo,
  ConversationPage,
  EndedConversation,
  TurnBody,
  TurnResult,
  TurnsQuery,
  TurnPage,
  PastTurn,
  TurnExport,
  WhatIfBody,
  WhatIfAnswer,
  MetricsPage,
  RunToolsBody,
  ToolRunResult,
  MessagesQuery,
  MessagePage,
  AppendMessagesBody,
  AppendResult,
  SetMessagesBody,
  Appended,
  Attachment,
  AttachmentList,
  ResourceList,
  ResourceRemoved,
  ItemsQuery,
  ContextList,
  EventsQuery,
  EventPage,
  RequestMessagesQuery,
  RequestMessages,
  CompactionStatus,
  CompactionPolicy,
  CompactBody,
  CompactResult,
  ClearResult,
  ApprovalList,
  ApprovalRequestBody,
  ApprovalRequested,
  ApprovalDecisionBody,
  ApprovalDecided,
  CompleteDelegationBody,
  DelegationCompleted,
  DelegationList,
  MemoryWriteBody: WriteBody,
  MemoryBatchBody: BatchBody,
  MemorySearchQuery: SearchQuery,
  MemoryListQuery: ListQuery,
  MemoryDeleteQuery: DeleteQuery,
  MemoryCreated,
  MemoryReinforced,
  MemoryBatchResult,
  MemorySearchResult,
  MemoryPage,
  MemoryDeleted,
  StoreArtifactBody,
  ResolveBody,
  ArtifactRefQuery: RefQuery,
  ArtifactRef,
  Resolution,
  AgentList,
  ProviderList,
  McpServerDeclaration,
  McpServerInfo,
  McpServerList,
  McpServerRemoved,
  ChatCompletionRequest,
  ChatCompletion,
  ChatCompletionChunk,
  OpenAIError,
  MessagesRequest,
  AnthropicMessage,
  AnthropicStreamEvent,
  AnthropicError,
} satisfies Record<string, z.ZodType>;
type SchemaName = keyof typeof SCHEMAS;

type Method = "get" | "post" | "put" | "delete";

export interface RouteDoc {
  method: Method;
  /** The path as OpenAPI writes it (`/v1/conversations/{id}`). */
  path: string;
  summary: string;
  query?: SchemaName;
  body?: SchemaName;
  /** An empty body is read as `{}`. */
  bodyOptional?: boolean;
  /** Status → the answer's schema; `text` for plain text, `null` for no JSON body. */
  responses: Record<number, SchemaName | "text" | null>;
  /** Also answers with server-sent events of this schema (one JSON object per `data:` line) when asked to stream. */
  stream?: SchemaName;
  /** Request headers the route reads, and answer headers it sets. */
  headers?: { request?: Record<string, string>; response?: Record<string, string> };
  /** Failures other than 401 in this schema, as `application/json` (the gateway answers in OpenAI's error shape). */
  errors?: SchemaName;
  /** The 401 too is in `errors`' schema (the Anthropic side answers every failure in its API's shape). */
  ownAuthErrors?: boolean;
  /** How the event stream is framed, when not `data:` lines ended by `data: [DONE]`. */
  streamFraming?: string;
  /** Only `/v1/apps/connect` (app tokens); every other route takes a frontend API key. */
  security?: "appToken";
}

const C = "/v1/conversations/{id}";

/** The frontend API, route by route: the one place that says what each route takes and answers. */
export const ROUTES: RouteDoc[] = [
  { method: "get", path: "/v1/apps/connect", summary: "Apps connect here (WebSocket upgrade, JSON-RPC 2.0; docs/protocol.md)", responses: { 101: null, 426: "ProblemDocument" }, security: "appToken" },
  { method: "post", path: "/v1/conversations", summary: "Create a conversation", body: "CreateConversationBody", bodyOptional: true, responses: { 201: "ConversationInfo" } },
  { method: "get", path: "/v1/conversations", summary: "The caller's conversations, newest first, a page at a time", query: "ConversationsQuery", responses: { 200: "ConversationPage" } },
  { method: "get", path: C, summary: "Describe a conversation", responses: { 200: "ConversationInfo" } },
  { method: "delete", path: C, summary: "End a conversation (resources cleared, apps told)", responses: { 200: "EndedConversation" } },
  { method: "post", path: `${C}/turns`, summary: "The model input for this turn", body: "TurnBody", responses: { 200: "TurnResult" } },
  { method: "get", path: `${C}/turns`, summary: "The conversation's turns, oldest first, a page at a time: each one's tokens, contexts injected and left out (and why), tool calls, compaction", query: "TurnsQuery", responses: { 200: "TurnPage" } },
  { method: "get", path: `${C}/turns/{turnId}`, summary: "A past turn as it was answered", responses: { 200: "PastTurn" } },
  { method: "get", path: `${C}/turns/{turnId}/export`, summary: "A past turn's evidence in the Agent Context draft's vocabulary, with its exact model input (docs/telemetry.md)", responses: { 200: "TurnExport" } },
  { method: "post", path: `${C}/turns/{turnId}/what-if`, summary: "A past turn fitted again under another budget, window or compaction policy; nothing stored (docs/inspector.md)", body: "WhatIfBody", bodyOptional: true, responses: { 200: "WhatIfAnswer" } },
  { method: "post", path: `${C}/tools/run`, summary: "Run the open calls the runtime serves, outside a turn", body: "RunToolsBody", bodyOptional: true, responses: { 200: "ToolRunResult" } },
  { method: "get", path: `${C}/messages`, summary: "Stored history, a page at a time", query: "MessagesQuery", responses: { 200: "MessagePage" } },
  { method: "post", path: `${C}/messages`, summary: "Append the model's reply, tool calls and results (and the model's real usage)", body: "AppendMessagesBody", responses: { 201: "AppendResult" } },
  { method: "put", path: `${C}/messages`, summary: "Resume a history kept elsewhere", body: "SetMessagesBody", responses: { 201: "Appended" } },
  { method: "get", path: `${C}/context`, summary: "What the model would read before a new message", query: "RequestMessagesQuery", responses: { 200: "RequestMessages" } },
  { method: "get", path: `${C}/compaction`, summary: "Should-compact status and the policy", responses: { 200: "CompactionStatus" } },
  { method: "put", path: `${C}/compaction`, summary: "Replace the compaction policy", body: "CompactionPolicy", responses: { 200: "CompactionStatus" } },
  { method: "post", path: `${C}/compact`, summary: "Compact now", body: "CompactBody", bodyOptional: true, responses: { 200: "CompactResult" } },
  { method: "post", path: `${C}/clear`, summary: "Clear the model's view (stored messages stay)", responses: { 200: "ClearResult" } },
  { method: "get", path: `${C}/results/{seq}`, summary: "The full text of a tool result compaction replaced by a stub", responses: { 200: "text" } },
  { method: "get", path: `${C}/approvals`, summary: "Approvals of the calls still open", responses: { 200: "ApprovalList" } },
  { method: "post", path: `${C}/approvals`, summary: "Ask for the user's approval of a call", body: "ApprovalRequestBody", responses: { 200: "ApprovalRequested", 201: "ApprovalRequested" } },
  { method: "post", path: `${C}/approvals/{toolCallId}`, summary: "Record the user's decision", body: "ApprovalDecisionBody", responses: { 200: "ApprovalDecided" } },
  { method: "post", path: `${C}/delegation/complete`, summary: "A subagent's final answer: closes its parent's delegate call", body: "CompleteDelegationBody", responses: { 200: "DelegationCompleted" } },
  { method: "get", path: `${C}/delegations`, summary: "The conversation's delegate calls and their child conversations", responses: { 200: "DelegationList" } },
  { method: "get", path: `${C}/attachments`, summary: "Runtime attachments", responses: { 200: "AttachmentList" } },
  { method: "post", path: `${C}/attachments`, summary: "Attach a context or an item", body: "Attachment", responses: { 201: "AttachmentList" } },
  { method: "delete", path: `${C}/attachments`, summary: "Detach", body: "Attachment", responses: { 200: "AttachmentList" } },
  { method: "get", path: `${C}/resources`, summary: "Session resources the apps pushed", responses: { 200: "ResourceList" } },
  { method: "delete", path: `${C}/resources/{fullId}`, summary: "Remove a resource (its app is told)", responses: { 200: "ResourceRemoved" } },
  { method: "get", path: `${C}/contexts/{provider}/items`, summary: "Browse a provider (the + menu)", query: "ItemsQuery", responses: { 200: "ContextList" } },
  { method: "get", path: `${C}/events`, summary: "Context events", query: "EventsQuery", responses: { 200: "EventPage" } },
  { method: "post", path: `${C}/artifacts`, summary: "Store a JSON artifact and get its ref", body: "StoreArtifactBody", responses: { 201: "ArtifactRef" } },
  { method: "post", path: `${C}/artifacts/resolve`, summary: "Resolve fields from refs", body: "ResolveBody", responses: { 200: "Resolution" } },
  { method: "get", path: `${C}/artifacts/{artifactId}`, summary: "Read a ref", query: "ArtifactRefQuery", responses: { 200: "ArtifactRef" } },
  { method: "post", path: "/v1/memories", summary: "Write a memory (through the write gate)", body: "MemoryWriteBody", responses: { 201: "MemoryCreated", 200: "MemoryReinforced" } },
  { method: "post", path: "/v1/memories/batch", summary: "Write up to 100 memories", body: "MemoryBatchBody", responses: { 200: "MemoryBatchResult" } },
  { method: "get", path: "/v1/memories/search", summary: "Search memories", query: "MemorySearchQuery", responses: { 200: "MemorySearchResult" } },
  { method: "get", path: "/v1/memories", summary: "List a level's memories", query: "MemoryListQuery", responses: { 200: "MemoryPage" } },
  { method: "delete", path: "/v1/memories/{id}", summary: "Delete a memory", query: "MemoryDeleteQuery", responses: { 200: "MemoryDeleted" } },
  { method: "get", path: "/v1/agents", summary: "Registered agents", responses: { 200: "AgentList" } },
  { method: "get", path: "/v1/metrics", summary: "The caller's counters per agent: turns, tokens, cached share, compactions, tool calls and failures, hook failures, reminders (docs/telemetry.md)", responses: { 200: "MetricsPage" } },
  { method: "get", path: "/v1/contexts", summary: "Providers and whether their app is online", responses: { 200: "ProviderList" } },
  { method: "get", path: "/v1/mcp-servers", summary: "The MCP servers the user's hub consumes as apps (header names, never values)", responses: { 200: "McpServerList" } },
  {
    method: "post",
    path: "/v1/mcp-servers",
    summary: "Register an MCP server (Streamable HTTP): its tools, prompts and resources join the catalog as `name:…` (docs/mcp.md)",
    body: "McpServerDeclaration",
    responses: { 201: "McpServerInfo" },
  },
  { method: "delete", path: "/v1/mcp-servers/{name}", summary: "Remove an MCP server the user registered", responses: { 200: "McpServerRemoved" } },
  {
    method: "post",
    path: "/v1/chat/completions",
    summary: "The model gateway, OpenAI Chat Completions (docs/gateway.md): `model` names the agent",
    body: "ChatCompletionRequest",
    responses: { 200: "ChatCompletion" },
    stream: "ChatCompletionChunk",
    headers: { request: { "X-Conversation-Id": "The conversation (default: a new one)" }, response: { "X-Conversation-Id": "The conversation the request ran in" } },
    errors: "OpenAIError",
  },
  {
    method: "post",
    path: "/v1/messages",
    summary: "The model gateway, Anthropic Messages (docs/gateway.md): `model` names the agent; the key as `x-api-key` or a bearer token",
    body: "MessagesRequest",
    responses: { 200: "AnthropicMessage" },
    stream: "AnthropicStreamEvent",
    streamFraming: "Server-sent events, each an `event: <type>` line and a `data:` line with an AnthropicStreamEvent of that type, from message_start to message_stop (or an `error` event)",
    headers: {
      request: { "X-Conversation-Id": "The conversation (default: a new one)", "x-api-key": "The frontend API key (or send it as Authorization: Bearer)" },
      response: { "X-Conversation-Id": "The conversation the request ran in", "request-id": "This request's id" },
    },
    errors: "AnthropicError",
    ownAuthErrors: true,
  },
];

type JsonSchema = Record<string, unknown>;

/** The wire form of every named schema; shared pieces registered here (ChatMessage) become `$ref`s. */
function componentSchemas(): Record<SchemaName, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [name, schema] of Object.entries(SCHEMAS)) registry.add(schema, { id: name });
  const { schemas } = z.toJSONSchema(registry, {
    target: "draft-2020-12",
    io: "input",
    // z.custom (a JSON value inside JsonObject) has no JSON Schema form: any value.
    unrepresentable: "any",
    uri: (id) => `#/components/schemas/${id}`,
  });
  for (const schema of Object.values(schemas)) delete (schema as JsonSchema).$schema;
  return schemas as Record<SchemaName, JsonSchema>;
}

const ref = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` });

const PROBLEM = (description: string) => ({ description, content: { "application/problem+json": { schema: ref("ProblemDocument") } } });

function operation(route: RouteDoc, schemas: Record<SchemaName, JsonSchema>) {
  const parameters: object[] = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({ name, in: "path", required: true, schema: { type: "string" } }));
  for (const [name, description] of Object.entries(route.headers?.request ?? {})) parameters.push({ name, in: "header", required: false, description, schema: { type: "string" } });
  const headers = route.headers?.response ? { headers: Object.fromEntries(Object.entries(route.headers.response).map(([name, description]) => [name, { description, schema: { type: "string" } }])) } : {};
  if (route.query) {
    const query = schemas[route.query] as { properties?: Record<string, object>; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      parameters.push({ name, in: "query", required: query.required?.includes(name) ?? false, schema });
    }
  }
  const responses: Record<string, object> = {};
  for (const [status, answer] of Object.entries(route.responses)) {
    const description = status === "101" ? "Switching Protocols (WebSocket)" : status === "201" ? "Created" : "OK";
    const content: Record<string, object> =
      answer === null ? {} : answer === "text" ? { "text/plain": { schema: { type: "string" } } } : { "application/json": { schema: ref(answer) } };
    if (route.stream && status === "200") {
      const eventSchema = ref(route.stream).$ref;
      const framing = route.streamFraming ?? `Server-sent events: each \`data:\` line is a ${eventSchema.split("/").pop()} (${eventSchema}), then \`data: [DONE]\``;
      content["text/event-stream"] = { schema: { type: "string", description: framing } };
    }
    responses[status] = { description, ...headers, ...(Object.keys(content).length ? { content } : {}) };
  }
  const failure = (description: string) => (route.errors ? { description, content: { "application/json": { schema: ref(route.errors) } } } : PROBLEM(description));
  if (route.body || route.query) responses["400"] = failure("Invalid input");
  if (route.security !== "appToken") responses["401"] = route.ownAuthErrors ? failure("No valid frontend API key") : PROBLEM("No valid frontend API key");
  if (route.path.includes("{")) responses["404"] = PROBLEM("Not found (or another tenant's or user's)");
  responses["default"] = failure(route.errors ? "Any other failure, in the API's own error shape" : "Any other problem (RFC 9457; `type` is stable)");
  return {
    operationId: operationId(route),
    summary: route.summary,
    ...(parameters.length ? { parameters } : {}),
    ...(route.body ? { requestBody: { required: !route.bodyOptional, content: { "application/json": { schema: ref(route.body) } } } } : {}),
    responses,
    ...(route.security === "appToken" ? { security: [{ appToken: [] }] } : {}),
  };
}

function operationId(route: RouteDoc): string {
  const words = route.path.replace(/^\/v1\//, "").split("/").map((part) => (part.startsWith("{") ? `by-${part.slice(1, -1)}` : part));
  return [route.method, ...words].join("-").replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
}

let built: object | null = null;

/** The whole document (built once per isolate). */
export function openApiDocument(): object {
  if (built) return built;
  const schemas = componentSchemas();
  const paths: Record<string, Record<string, object>> = {};
  for (const route of ROUTES) (paths[route.path] ??= {})[route.method] = operation(route, schemas);
  built = {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    info: {
      title: "Context Runtime frontend API",
      version: "1",
      description: "What the model reads each turn. Errors are application/problem+json (RFC 9457). Generated from the zod schemas in src/protocol.",
    },
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKey: { type: "http", scheme: "bearer", description: "A frontend API key (names the tenant and user)" },
        appToken: { type: "http", scheme: "bearer", description: "An app token (or, from a browser, the `bearer.<token>` WebSocket subprotocol)" },
      },
    },
    security: [{ apiKey: [] }],
  };
  return built;
}
