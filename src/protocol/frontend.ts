/**
 * Response shapes of the frontend API, shared by the Worker and `ContextClient`.
 * Request shapes are the zod schemas in `src/protocol/http.ts`.
 */
import * as z from "zod";
import { CompactionEvidence, ContextEnvelope, MissingContext, OmissionReason, ToolResultEvidence, TurnUsage } from "./evidence";
import { JsonObject } from "./json";
import { ChatMessage } from "./messages";
import { Correctives, Guard } from "./methods";
import { TrimPolicy } from "./policies";

export const AgentInfo = z.object({
  id: z.string(),
  app: z.string(),
  name: z.string(),
  description: z.string().optional(),
  systemPrompt: z.string(),
  /** Tools bound to the prompt, qualified (`app:tool`), in the agent's order. */
  tools: z.array(z.string()),
  /** Patterns (`app:*`, `app:tool`) of tools the model can search for but that stay out of the prompt. */
  catalog: z.array(z.string()),
  /** Skill patterns (`app:skill`, `app:*`) for the model's skills menu. */
  skills: z.array(z.string()),
  /** Whether the model may browse the user's contexts (list_contexts / read_context). */
  browseContexts: z.boolean(),
  /** Whether the model may search earlier messages (search_history) from the first turn, not only once a summary or clear exists. */
  searchHistory: z.boolean(),
  attachedContexts: z.array(z.string()),
  memory: z.boolean(),
  resultPolicies: z.record(z.string(), TrimPolicy),
  /** Agents the model may delegate a task to (`delegate`), qualified, in the agent's order. */
  subagents: z.array(z.string()),
  /** The upstream model the gateway calls for this agent, when it names one. */
  model: z.string().optional(),
  /** The deployment's named upstream the gateway calls for this agent, when it names one. */
  upstream: z.string().optional(),
  /** The agent's corrective-note settings, when it sets any (docs/reminders.md). */
  correctives: Correctives.optional(),
  /** The agent's rule guard, when it sets one (docs/tools.md, "The guard"). */
  guard: Guard.optional(),
  /** What the model is told not to mention, when the agent lists anything (docs/reminders.md, "Stapled notes"). */
  dontMention: z.array(z.string()).optional(),
  /** Whether the agent's model sees images, when the agent says (docs/reminders.md, "Stapled notes"). */
  seesImages: z.boolean().optional(),
  updatedAt: z.string(),
});
export type AgentInfo = z.infer<typeof AgentInfo>;

/** One tool as OpenAI's Chat Completions take it (`tools: [...]`); other APIs' formats are a rename away. */
export const FunctionTool = z.object({
  type: z.literal("function"),
  function: z.object({ name: z.string(), description: z.string(), parameters: JsonObject }),
});
export type FunctionTool = z.infer<typeof FunctionTool>;

export const ProviderInfo = z.object({
  id: z.string(),
  app: z.string(),
  name: z.string(),
  description: z.string(),
  methods: z.array(z.enum(["current", "list", "get"])),
  /** The app tells the runtime when its `current` answer changes, so a turn may reuse the last one. */
  notifies: z.boolean(),
  online: z.boolean(),
});
export type ProviderInfo = z.infer<typeof ProviderInfo>;

export const ConversationInfo = z.object({
  id: z.string(),
  createdAt: z.string(),
  endedAt: z.string().nullable(),
  agent: z.string().nullable(),
  messageCount: z.number(),
  /** A subagent's conversation: the conversation whose `delegate` call started it, that call, and how deep it is (1 below a top-level one). */
  parent: z.object({ conversationId: z.string(), toolCallId: z.string(), depth: z.number() }).optional(),
});
export type ConversationInfo = z.infer<typeof ConversationInfo>;

export const TurnResult = z.object({
  turnId: z.string(),
  conversationId: z.string(),
  agent: z.object({ id: z.string(), name: z.string(), tools: z.array(z.string()) }),
  /** The full model input, OpenAI chat format. */
  messages: z.array(ChatMessage),
  /** The tools the model may call, in OpenAI's function format (pass as `tools`); absent when it has none. */
  tools: z.array(FunctionTool).optional(),
  usage: TurnUsage,
  missing: z.array(MissingContext),
  envelope: ContextEnvelope,
  /** True when this answer was stored by an earlier request with the same turnId. */
  replayed: z.boolean(),
});
export type TurnResult = z.infer<typeof TurnResult>;

export const StoredMessage = z.object({
  seq: z.number(),
  turnId: z.string().nullable(),
  createdAt: z.string(),
  message: ChatMessage,
});
export type StoredMessage = z.infer<typeof StoredMessage>;

/** One page of GET …/messages: ask again with `after=nextAfter` while `hasMore`. */
export const MessagePage = z.object({
  messages: z.array(StoredMessage),
  /** The seq of the last message on this page (the `after` given when it is empty). */
  nextAfter: z.number(),
  hasMore: z.boolean(),
});
export type MessagePage = z.infer<typeof MessagePage>;

export const AttachmentInfo = z.object({
  key: z.string(),
  context: z.string(),
  itemId: z.string().optional(),
  createdAt: z.string(),
});
export type AttachmentInfo = z.infer<typeof AttachmentInfo>;

export const ResourceInfo = z.object({
  fullId: z.string(),
  app: z.string(),
  title: z.string(),
  summary: z.string().optional(),
  type: z.string().optional(),
  version: z.string(),
  sizeChars: z.number(),
  updatedAt: z.string(),
});
export type ResourceInfo = z.infer<typeof ResourceInfo>;

/** The user's approval of one tool call: asked for, given, refused, or overtaken by a new message before it came. */
export const ApprovalInfo = z.object({
  toolCallId: z.string(),
  /** The assistant message that made the call: a model may use one id again in a later message. */
  callSeq: z.number(),
  tool: z.string(),
  state: z.enum(["requested", "approved", "denied", "expired"]),
  requestedAt: z.string(),
  decidedAt: z.string().nullable(),
});
export type ApprovalInfo = z.infer<typeof ApprovalInfo>;

export const ContextEvent = z.object({
  seq: z.number(),
  turnId: z.string().nullable(),
  type: z.string(),
  /** The type's former name, on the events renamed to the dotted style (`context.include` was `context:include`); kept for one version. */
  formerly: z.string().optional(),
  subject: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  at: z.string(),
});
export type ContextEvent = z.infer<typeof ContextEvent>;

export const ProblemDocument = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number(),
  detail: z.string(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});
export type ProblemDocument = z.infer<typeof ProblemDocument>;

// The answers that wrap the shapes above: each route's whole response body.

/** DELETE /v1/conversations/:id: the conversation, ended, and how many resources it dropped. */
export const EndedConversation = ConversationInfo.extend({ resourcesRemoved: z.number() });
export type EndedConversation = z.infer<typeof EndedConversation>;
/** PUT …/messages (resume): how many messages were stored and the last one's seq. */
export const Appended = z.object({ appended: z.number(), lastSeq: z.number() });
export type Appended = z.infer<typeof Appended>;
/** POST …/messages: as `Appended`, with what protecting each tool result did. */
export const AppendResult = Appended.extend({ toolResults: z.array(ToolResultEvidence) });
export type AppendResult = z.infer<typeof AppendResult>;
/** POST …/compact: the compaction it ran, or null when there was nothing to do. */
export const CompactResult = z.object({ compaction: CompactionEvidence.nullable() });
export type CompactResult = z.infer<typeof CompactResult>;
/** POST …/clear. */
export const ClearResult = z.object({ compaction: CompactionEvidence });
export type ClearResult = z.infer<typeof ClearResult>;
/** GET …/approvals. */
export const ApprovalList = z.object({ approvals: z.array(ApprovalInfo) });
export type ApprovalList = z.infer<typeof ApprovalList>;
/** POST …/approvals (201 when it asked now, 200 when it was already asked). */
export const ApprovalRequested = z.object({ approval: ApprovalInfo });
export type ApprovalRequested = z.infer<typeof ApprovalRequested>;
/** POST …/approvals/:toolCallId: `seq` is the stored denial's, or null when approved. */
export const ApprovalDecided = z.object({ approval: ApprovalInfo, seq: z.number().nullable() });
export type ApprovalDecided = z.infer<typeof ApprovalDecided>;
/** GET, POST and DELETE …/attachments: the attachments now. */
export const AttachmentList = z.object({ attachments: z.array(AttachmentInfo) });
export type AttachmentList = z.infer<typeof AttachmentList>;
/** GET …/resources. */
export const ResourceList = z.object({ resources: z.array(ResourceInfo) });
export type ResourceList = z.infer<typeof ResourceList>;
/** GET …/events: ask again with `after=nextAfter`. */
export const EventPage = z.object({ events: z.array(ContextEvent), nextAfter: z.number() });
export type EventPage = z.infer<typeof EventPage>;
/** GET /v1/agents. */
export const AgentList = z.object({ agents: z.array(AgentInfo) });
export type AgentList = z.infer<typeof AgentList>;
/** GET /v1/contexts. */
export const ProviderList = z.object({ providers: z.array(ProviderInfo) });
export type ProviderList = z.infer<typeof ProviderList>;

/** One conversation in GET /v1/conversations: `agent` is the one it was created with. */
export const ConversationSummary = ConversationInfo.omit({ messageCount: true });
export type ConversationSummary = z.infer<typeof ConversationSummary>;
/** GET /v1/conversations: newest first; ask again with `cursor=nextCursor` while it is not null. */
export const ConversationPage = z.object({ conversations: z.array(ConversationSummary), nextCursor: z.string().nullable() });
export type ConversationPage = z.infer<typeof ConversationPage>;

/** The model's real usage a frontend reported with a reply it appended (POST …/messages `usage`). */
export const UsageReport = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  cachedTokens: z.number().nullable(),
  /** Prompt tokens written to the upstream's cache (the gateway with an Anthropic upstream). */
  cacheWriteTokens: z.number().nullable().optional(),
  model: z.string().nullable(),
  /** The seq of the last message appended with the report (the gateway: the last stored before its call). */
  lastSeq: z.number(),
  /** Who reported it: a frontend's own loop (POST …/messages `usage`) or the model gateway (with its upstream call's `step`). */
  source: z.enum(["frontend", "gateway"]).optional(),
  step: z.number().optional(),
  at: z.string(),
});
export type UsageReport = z.infer<typeof UsageReport>;

/**
 * GET …/turns/{turnId}: the turn as it was answered (its model input rebuilt as it read then), when, and the usage
 * reported for it. A gateway request's first turn (X-Turn-Id's) names every step's turn, in order, in `gatewaySteps`.
 */
export const PastTurn = TurnResult.extend({ createdAt: z.string(), reportedUsage: z.array(UsageReport), gatewaySteps: z.array(z.string()).optional() });
export type PastTurn = z.infer<typeof PastTurn>;

/** One turn as `GET …/turns` lists it: enough to find the turn worth opening (`GET …/turns/{turnId}`). */
export const TurnSummary = z.object({
  turnId: z.string(),
  createdAt: z.string(),
  agent: z.string(),
  /** The model input's tokens, as the runtime counted them. */
  tokens: z.number(),
  /** The contexts injected (first, or updated). */
  selected: z.array(z.string()),
  /** Every context left out, and why; a missing one with its reason and detail. */
  leftOut: z.array(z.object({ id: z.string(), reason: OmissionReason, missing: MissingContext.pick({ reason: true, detail: true }).optional() })),
  toolCalls: z.number(),
  compacted: z.boolean(),
});
export type TurnSummary = z.infer<typeof TurnSummary>;
export const TurnPage = z.object({ turns: z.array(TurnSummary), nextCursor: z.string().nullable() });
export type TurnPage = z.infer<typeof TurnPage>;
