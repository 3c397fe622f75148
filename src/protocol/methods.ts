import { z } from "zod";
import { ContextData, ContextList } from "./context-data";
import { LIMITS } from "../core/limits";
import { Name, QualifiedName } from "./names";
import { Text } from "./text";
import { TrimPolicy } from "../protect/trim-policy";

/**
 * The app protocol's methods: each method's params and result, as zod schemas
 * that both the runtime (validating what apps send) and the SDK (validating what
 * the runtime sends) use.
 */
export const PROTOCOL_VERSION = "2026-11-01";

export const ConversationId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{8,64}$/, "a conversation id: 8-64 letters, digits, '_' or '-'");

export const ProviderMethod = z.enum(["current", "list", "get"]);
export type ProviderMethod = z.infer<typeof ProviderMethod>;

export const ProviderDeclaration = z.object({
  id: Name,
  name: z.string().min(1).max(LIMITS.titleChars),
  description: z.string().max(LIMITS.summaryChars).default(""),
  methods: z.array(ProviderMethod).min(1).max(3),
});
export type ProviderDeclaration = z.infer<typeof ProviderDeclaration>;

export const ToolDeclaration = z.object({
  name: Name,
  description: z.string().max(LIMITS.summaryChars).default(""),
});

export const AgentDefinition = z.object({
  agentId: Name,
  name: z.string().min(1).max(LIMITS.titleChars),
  description: z.string().max(LIMITS.summaryChars).optional(),
  systemPrompt: Text(LIMITS.systemPromptChars),
  tools: z.array(z.string().min(1).max(LIMITS.nameChars)).max(LIMITS.toolsPerAgent).default([]),
  attachedContexts: z.array(QualifiedName).max(LIMITS.attachedContextsPerAgent).default([]),
  /** Whether each turn reads the user's memory (recalled by relevance, fenced as hints). */
  memory: z.boolean().default(false),
  /** How each tool's results are trimmed, by tool name; others get the default policy. */
  resultPolicies: z.record(Name, TrimPolicy).default({}).refine((p) => Object.keys(p).length <= LIMITS.toolsPerAgent, "too many policies"),
});
export type AgentDefinition = z.input<typeof AgentDefinition>;
export const AgentCreateResult = z.object({ agentId: QualifiedName });

export const InitializeParams = z.object({
  protocolVersion: z.string().min(1).max(32),
  app: z.object({
    name: Name,
    version: z.string().min(1).max(64),
    displayName: z.string().max(LIMITS.titleChars).optional(),
  }),
  contexts: z.array(ProviderDeclaration).max(LIMITS.providersPerApp).default([]),
  tools: z.array(ToolDeclaration).max(LIMITS.toolsPerAgent).default([]),
  /** The app's agents, registered with its providers in one step, so a reconnect never leaves a gap without them. */
  agents: z.array(AgentDefinition).max(LIMITS.agentsPerApp).default([]),
});
export type InitializeParams = z.input<typeof InitializeParams>;
export const InitializeResult = z.object({ protocolVersion: z.string(), sessionId: z.string() });
export type InitializeResult = z.infer<typeof InitializeResult>;


export const ResourceId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "use letters, digits, '.', '_' or '-'");

export const ResourcePushParams = z.object({
  id: ResourceId.optional(),
  conversationId: ConversationId.optional(),
  title: Text(LIMITS.titleChars, 1),
  content: Text(LIMITS.contextContentChars),
  summary: Text(LIMITS.summaryChars).optional(),
  type: z.string().max(64).optional(),
});
export type ResourcePushParams = z.infer<typeof ResourcePushParams>;
export const ResourcePushResult = z.object({ fullId: z.string(), conversationId: ConversationId });
export type ResourcePushResult = z.infer<typeof ResourcePushResult>;

export const FullResourceId = z.string().min(3).max(LIMITS.nameChars + 129);
export const ResourceRemoveParams = z.object({ fullId: FullResourceId, conversationId: ConversationId.optional() });
export const ContextsChangedParams = z.object({ provider: Name });

/** Runtime → app requests and notifications. */
export const ContextsCurrentParams = z.object({ provider: Name, conversationId: ConversationId });
export const ContextsListParams = z.object({
  provider: Name,
  query: z.string().max(512).optional(),
  cursor: z.string().max(1024).optional(),
  limit: z.number().int().min(1).max(LIMITS.listItemsPerPage).optional(),
});
export type ContextsListParams = z.infer<typeof ContextsListParams>;
export const ContextsGetParams = z.object({ provider: Name, id: z.string().min(1).max(LIMITS.itemIdChars) });
export const ResourcesRemovedParams = z.object({ fullId: FullResourceId, conversationId: ConversationId });
export type ResourcesRemovedParams = z.infer<typeof ResourcesRemovedParams>;

/** What apps must answer to each runtime → app request. */
export const ContextsCurrentResult = ContextData.nullable();
export const ContextsGetResult = ContextData.nullable();
export const ContextsListResult = ContextList;

/** The WebSocket subprotocol apps offer, with `bearer.<token>` beside it (the one way a browser can send a credential). */
export const APP_SUBPROTOCOL = "context-runtime.v1";
export const BEARER_SUBPROTOCOL_PREFIX = "bearer.";

/** Heartbeat text frames: the runtime answers `ping` with `pong` without waking the hub. */
export const HEARTBEAT = { ping: "ping", pong: "pong" } as const;

/** Close codes the runtime sends; after these an app must not reconnect with the same credentials. */
export const CloseCode = { Unauthorized: 4001, Forbidden: 4003 } as const;
