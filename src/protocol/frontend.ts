/**
 * Response shapes of the frontend API, shared by the Worker and `ContextClient`.
 * Request shapes are the zod schemas in `src/protocol/http.ts`.
 */
import type { ContextEnvelope, MissingContext, TurnUsage } from "../core/evidence";
import type { ChatMessage } from "./messages";
import type { FunctionTool } from "./tools";
import type { TrimPolicy } from "./policies";

export interface AgentInfo {
  id: string;
  app: string;
  name: string;
  description?: string;
  systemPrompt: string;
  /** Tools bound to the prompt, qualified (`app:tool`), in the agent's order. */
  tools: string[];
  /** Patterns (`app:*`, `app:tool`) of tools the model can search for but that stay out of the prompt. */
  catalog: string[];
  /** Skill patterns (`app:skill`, `app:*`) for the model's skills menu. */
  skills: string[];
  /** Whether the model may browse the user's contexts (list_contexts / read_context). */
  browseContexts: boolean;
  attachedContexts: string[];
  memory: boolean;
  resultPolicies: Record<string, TrimPolicy>;
  updatedAt: string;
}

export type { FunctionTool, JsonObject, OfferedTool, SkillContent, SkillSpec, ToolFailureReason, ToolRun, ToolSpec, Toolbox } from "./tools";

export interface ProviderInfo {
  id: string;
  app: string;
  name: string;
  description: string;
  methods: ("current" | "list" | "get")[];
  online: boolean;
}

export interface ConversationInfo {
  id: string;
  createdAt: string;
  endedAt: string | null;
  agent: string | null;
  messageCount: number;
}

export interface TurnResult {
  turnId: string;
  conversationId: string;
  agent: { id: string; name: string; tools: string[] };
  /** The full model input, OpenAI chat format. */
  messages: ChatMessage[];
  /** The tools the model may call, in OpenAI's function format (pass as `tools`); absent when it has none. */
  tools?: FunctionTool[];
  usage: TurnUsage;
  missing: MissingContext[];
  envelope: ContextEnvelope;
  /** True when this answer was stored by an earlier request with the same turnId. */
  replayed: boolean;
}

export interface StoredMessage {
  seq: number;
  turnId: string | null;
  createdAt: string;
  message: ChatMessage;
}

/** One page of GET …/messages: ask again with `after=nextAfter` while `hasMore`. */
export interface MessagePage {
  messages: StoredMessage[];
  /** The seq of the last message on this page (the `after` given when it is empty). */
  nextAfter: number;
  hasMore: boolean;
}

export interface AttachmentInfo {
  key: string;
  context: string;
  itemId?: string;
  createdAt: string;
}

export interface ResourceInfo {
  fullId: string;
  app: string;
  title: string;
  summary?: string;
  type?: string;
  version: string;
  sizeChars: number;
  updatedAt: string;
}

/** The user's approval of one tool call: asked for, given, refused, or overtaken by a new message before it came. */
export interface ApprovalInfo {
  toolCallId: string;
  /** The assistant message that made the call: a model may use one id again in a later message. */
  callSeq: number;
  tool: string;
  state: "requested" | "approved" | "denied" | "expired";
  requestedAt: string;
  decidedAt: string | null;
}

export interface ContextEvent {
  seq: number;
  turnId: string | null;
  type: string;
  subject: string | null;
  data: Record<string, unknown>;
  at: string;
}

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  issues?: { path: string; message: string }[];
}
