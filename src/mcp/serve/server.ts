/**
 * The runtime as an MCP server (docs/mcp.md, "Serve"): the official SDK's `Server`, answering from an agent's view.
 * This module knows no Durable Object and no storage: what the agent sees and what reading it records are the
 * `AgentView`'s (src/conversation/mcp-view.ts builds it over a conversation's scope).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Result } from "../../core/problem";

/** One resource's text as the client reads it: past the trust boundary, with the version it was read at. */
export interface ResourceText {
  uri: string;
  text: string;
  mimeType: string;
  version: string;
}

export interface ResourcePage {
  resources: Resource[];
  nextCursor?: string;
}

/** What an MCP session of one agent may see and do; every failure is a Problem, answered as a JSON-RPC error. */
export interface AgentView {
  resources(cursor: string | undefined): Promise<Result<ResourcePage>>;
  templates(): Promise<ResourceTemplate[]>;
  read(uri: string): Promise<Result<ResourceText>>;
  subscribe(uri: string, subscribed: boolean): Promise<Result<void>>;
  tools(): Promise<Tool[]>;
  callTool(name: string, args: Record<string, unknown>): Promise<Result<CallToolResult>>;
  prompts(): Promise<Prompt[]>;
  prompt(name: string): Promise<Result<{ description: string; text: string }>>;
}

export const SERVER_INFO = { name: "context-runtime", title: "Context Runtime", version: "0.1.0" };

/**
 * A server over `view`: resources (subscribable), tools (their list changes when search_tools loads more) and
 * prompts. `instructions` tells a client what the session is.
 */
export function agentServer(view: AgentView, instructions: string): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { resources: { subscribe: true, listChanged: false }, tools: { listChanged: true }, prompts: { listChanged: false } },
    instructions,
    // The SDK's default validator compiles schemas with `new Function`, which workerd forbids.
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
  });
  server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    const { resources, nextCursor } = answer(await view.resources(request.params?.cursor), ErrorCode.InvalidParams);
    return nextCursor === undefined ? { resources } : { resources, nextCursor };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: await view.templates() }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri, text, mimeType } = answer(await view.read(request.params.uri), RESOURCE_NOT_FOUND);
    return { contents: [{ uri, text, mimeType }] };
  });
  server.setRequestHandler(SubscribeRequestSchema, async (request) => (answer(await view.subscribe(request.params.uri, true), RESOURCE_NOT_FOUND), {}));
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => (answer(await view.subscribe(request.params.uri, false), RESOURCE_NOT_FOUND), {}));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await view.tools() }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => answer(await view.callTool(request.params.name, request.params.arguments ?? {}), ErrorCode.InvalidParams));
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: await view.prompts() }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    const { description, text } = answer(await view.prompt(request.params.name), ErrorCode.InvalidParams);
    return { description, messages: [{ role: "user", content: { type: "text", text } }] };
  });
  return server;
}

/**
 * A view's value, or its problem thrown as the JSON-RPC error the SDK answers with (it sends a thrown error's `code`
 * and `message`; McpError would prefix the message with its code, which clients then show twice). `notFound`: the
 * code for not-found.
 */
function answer<T>(result: Result<T>, notFound: number): T {
  if (result.ok) return result.value;
  const { type, detail } = result.problem;
  throw Object.assign(new Error(detail), { code: type === "not-found" ? notFound : type === "invalid-request" ? ErrorCode.InvalidParams : ErrorCode.InternalError });
}

/** MCP's own code for a resource that is not there (the spec's -32002). */
const RESOURCE_NOT_FOUND = -32002;
