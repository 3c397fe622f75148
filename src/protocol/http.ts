import * as z from "zod";
import { LIMITS } from "./limits";
import { ArtifactRef, TaskId } from "./artifacts";
import { AppendableMessage, ImagePart, ModelAssistantMessage, ModelToolMessage, TextPart, ToolMessage, UserMessage } from "./messages";
import { Text } from "./text";
import { QualifiedName } from "./names";
import { CompactionPolicy } from "./policies";

/** Bodies and query strings of the frontend API (DESIGN §4). */
export const Attachment = z
  .object({
    context: QualifiedName,
    itemId: z.string().min(1).max(LIMITS.itemIdChars).optional(),
  })
  .strict();
export type Attachment = z.infer<typeof Attachment>;

/** A file the user uploaded with the message (docs/reminders.md, "Stapled notes"): the model is told it exists and where to read it, never its content. */
export const Upload = z
  .object({
    name: Text(LIMITS.titleChars, 1),
    /** Its MIME type. */
    type: z.string().regex(/^[\w.+-]+\/[\w.+-]+$/, "a MIME type such as text/csv").max(128),
    sizeBytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    /** Where to read it: a stored artifact, or a tool (by the name the model calls it) that reads it. */
    ref: z.union([ArtifactRef, z.object({ tool: z.string().min(1).max(LIMITS.nameChars * 2 + 1) }).strict()]),
  })
  .strict();
export type Upload = z.infer<typeof Upload>;

/** An item the user @-mentioned in the message: read through its provider's `get` for this turn only (not attached). */
export const Mention = z
  .object({
    context: QualifiedName,
    itemId: z.string().min(1).max(LIMITS.itemIdChars),
  })
  .strict();
export type Mention = z.infer<typeof Mention>;

export const CreateConversationBody = z
  .object({
    agent: QualifiedName.optional(),
    /** When and how this conversation's history is compacted; see docs/history.md. */
    compaction: CompactionPolicy.optional(),
  })
  .strict();

export const TurnId = z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/, "1-128 letters, digits, '_', '.', ':' or '-'");

/** A result for a tool call the model made (text or text parts; other keys, `role` among them, are stripped); it is redacted and trimmed before it is stored. */
export const ToolResult = ModelToolMessage.omit({ role: true });

export const TurnBudget = z
  .object({
    /** The whole model input, in tokens; defaults to the context window minus the output reserve. */
    maxTokens: z.number().int().min(64).max(2_000_000).optional(),
    /** What recalled memory may take (default 800); within maxTokens it is class 2. */
    memoryTokens: z.number().int().min(0).max(32_000).optional(),
    /** The model's window for this turn, overriding the conversation's compaction policy. */
    contextWindow: z.number().int().min(1_024).max(10_000_000).optional(),
    outputReserve: z.number().int().min(0).max(1_000_000).optional(),
  })
  .strict();

/** A tool call's id, as the model's `tool_calls[].id` gave it. */
export const ToolCallId = ToolMessage.shape.tool_call_id;

export const ApprovalRequestBody = z.object({ toolCallId: ToolCallId }).strict();

/** The user's decision on a tool call; a denial's reason is read by the model, redacted like any result. */
const Decision = z.object({ approved: z.boolean(), reason: Text(LIMITS.summaryChars, 1).optional() });
const reasonOnlyWithDenial = (d: z.infer<typeof Decision>) => !d.approved || d.reason === undefined;
const REASON_ONLY_WITH_DENIAL = { message: "a reason comes with a denial", path: ["reason"] };

export const ApprovalDecisionBody = Decision.strict().refine(reasonOnlyWithDenial, REASON_ONLY_WITH_DENIAL);
export type ApprovalDecisionBody = z.infer<typeof ApprovalDecisionBody>;

/** A decision riding on a turn, named by its call. */
export const ApprovalDecision = Decision.extend({ toolCallId: ToolCallId }).strict().refine(reasonOnlyWithDenial, REASON_ONLY_WITH_DENIAL);
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

export const TurnBody = z
  .object({
    turnId: TurnId.optional(),
    agent: QualifiedName,
    /** The user's new message; leave it out to continue (after a reply's tool calls, results, decisions, or tools run with POST …/tools/run). */
    message: Text(LIMITS.messageChars, 1).optional(),
    /**
     * The model's answer to the previous turn, as its SDK returned it (openai's `choices[0].message`): stored first.
     * The runtime runs its calls to the tools it serves (apps' tools, search_tools, read_skill, …) and the turn goes on
     * with their results; the frontend sends the results of its own tools in `toolResults`.
     */
    reply: ModelAssistantMessage.optional(),
    /** Images the user shares with the message, by https URL; they stay visible until a compaction hides them (all but the policy's `keepImages`). */
    images: z.array(ImagePart.shape.image_url).min(1).max(LIMITS.imagesPerMessage).optional(),
    attachments: z.array(Attachment).max(LIMITS.attachmentsPerConversation).optional(),
    toolResults: z.array(ToolResult).min(1).max(LIMITS.toolResultsPerTurn).optional(),
    /** The user's decisions on calls waiting for approval: a denial answers its call; an approved call runs (the runtime's tools) or its result comes in `toolResults`. */
    // Each decision is about one call, as each result is: the same bound.
    approvals: z.array(ApprovalDecision).min(1).max(LIMITS.toolResultsPerTurn).optional(),
    /** The task this turn works on: memory is read from its namespace chain. */
    task: TaskId.optional(),
    /** Artifacts the task has produced: the model reads their summaries and pointers, never the payloads. */
    taskState: z.array(ArtifactRef).max(LIMITS.taskStateRefs).optional(),
    budget: TurnBudget.optional(),
    /** Files uploaded with the message: a note names each (name, type, size, where to read it), never its content. */
    uploads: z.array(Upload).min(1).max(LIMITS.uploadsPerMessage).optional(),
    /** Items @-mentioned in the message: a note shows each as its provider's `get` returns it, this turn only. */
    mentions: z.array(Mention).min(1).max(LIMITS.mentionsPerMessage).optional(),
  })
  .strict()
  .refine((b) => b.reply === undefined || b.reply.tool_calls !== undefined || b.message !== undefined, {
    message: "a reply without tool calls ends the model's turn: send it with the user's next message (or append it)",
    path: ["reply"],
  })
  .refine((b) => b.images === undefined || b.message !== undefined, { message: "images come with a message", path: ["images"] })
  .refine((b) => b.uploads === undefined || b.message !== undefined, { message: "uploads come with a message", path: ["uploads"] })
  .refine((b) => b.mentions === undefined || b.message !== undefined, { message: "mentions come with a message", path: ["mentions"] })
  .superRefine((b, ctx) => {
    const results = new Set(b.toolResults?.map((r) => r.tool_call_id));
    const seen = new Set<string>();
    for (const [i, d] of (b.approvals ?? []).entries()) {
      const path = ["approvals", i, "toolCallId"];
      if (seen.has(d.toolCallId)) ctx.addIssue({ code: "custom", path, message: "one decision per call" });
      else if (!d.approved && results.has(d.toolCallId)) ctx.addIssue({ code: "custom", path, message: "a denied call was not run: send no result for it" });
      seen.add(d.toolCallId);
    }
  });
export type TurnBody = z.infer<typeof TurnBody>;

/** Runs the open calls the runtime serves, outside a turn: all of them, or those named. */
export const RunToolsBody = z
  .object({
    /** Whose tools: the agent that made the calls (default: the conversation's agent, the last one that took a turn). */
    agent: QualifiedName.optional(),
    toolCallIds: z.array(ToolCallId).min(1).max(LIMITS.toolResultsPerTurn).optional(),
  })
  .strict();
export type RunToolsBody = z.infer<typeof RunToolsBody>;

/** Token counts as large as any model's window allows, and then some. */
const TokenCount = z.number().int().min(0).max(1_000_000_000);

/**
 * The model's real usage for the reply a frontend's own loop appends (the provider's own counts, e.g. openai's
 * `usage.prompt_tokens`, `usage.completion_tokens` and `usage.prompt_tokens_details.cached_tokens`). It is recorded as
 * a `model.usage` event on the turn named, else on the conversation's latest turn.
 */
export const ReportedUsage = z
  .object({
    promptTokens: TokenCount,
    completionTokens: TokenCount,
    /** Prompt tokens the provider read from its cache (part of promptTokens). */
    cachedTokens: TokenCount.optional(),
    /** The model that answered, as the provider named it. */
    model: z.string().min(1).max(200).optional(),
    /** The turn whose model input the reply answers (default: the latest turn). */
    turnId: TurnId.optional(),
  })
  .strict()
  .refine((u) => u.cachedTokens === undefined || u.cachedTokens <= u.promptTokens, { message: "cached tokens are part of the prompt tokens", path: ["cachedTokens"] });
export type ReportedUsage = z.infer<typeof ReportedUsage>;

export const AppendMessagesBody = z
  .object({
    messages: z.array(AppendableMessage).min(1).max(LIMITS.messagesPerAppend),
    /** The model's real usage for this reply, when the frontend runs its own loop. */
    usage: ReportedUsage.optional(),
  })
  .strict();
export type AppendMessagesBody = z.infer<typeof AppendMessagesBody>;

/** Messages to resume from: the whole history of a conversation kept elsewhere, into one that has none. */
const ResumedMessage = z.discriminatedUnion("role", [
  UserMessage.extend({ content: z.union([Text(LIMITS.messageChars, 1), z.array(z.union([TextPart.extend({ text: Text(LIMITS.messageChars) }), ImagePart])).min(1).max(LIMITS.imagesPerMessage + 1)]) }).strict(),
  ModelAssistantMessage,
  ModelToolMessage,
]);
export const SetMessagesBody = z.object({ messages: z.array(ResumedMessage).min(1).max(LIMITS.messagesPerResume) }).strict();
export type SetMessagesBody = z.infer<typeof SetMessagesBody>;

export const CompactBody = z
  .object({
    /** Compact even below the trigger. */
    force: z.boolean().optional(),
    contextWindow: z.number().int().min(1_024).max(10_000_000).optional(),
  })
  .strict();
export type CompactBody = z.infer<typeof CompactBody>;

/** A page of stored messages: those after seq `after` (default 0), at most `limit` (default and most LIMITS.messagesPerPage). */
export const MessagesQuery = z
  .object({
    after: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
    limit: z.coerce.number().int().min(1).max(LIMITS.messagesPerPage).default(LIMITS.messagesPerPage),
  })
  .strict();
export type MessagesQuery = z.output<typeof MessagesQuery>;

export const RequestMessagesQuery = z.object({ maxTokens: z.coerce.number().int().min(64).max(2_000_000).optional() }).strict();

export const ItemsQuery = z
  .object({
    query: z.string().max(512).optional(),
    cursor: z.string().max(1024).optional(),
    limit: z.coerce.number().int().min(1).max(LIMITS.listItemsPerPage).optional(),
  })
  .strict();

export const EventsQuery = z
  .object({
    after: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(500).optional(),
  })
  .strict();
export type EventsQuery = z.infer<typeof EventsQuery>;

/** A page of a conversation's turns, oldest first: ask again with `cursor=nextCursor` while it is not null. */
export const TurnsQuery = z
  .object({
    cursor: z.string().regex(/^\d{1,9}$/, "a cursor from an earlier page").optional(),
    limit: z.coerce.number().int().min(1).max(LIMITS.listItemsPerPage).default(50),
  })
  .strict();
export type TurnsQuery = z.infer<typeof TurnsQuery>;

/** A page of the caller's conversations, newest first: ask again with `cursor=nextCursor` while it is not null. */
export const ConversationsQuery = z
  .object({
    cursor: z.string().min(1).max(512).optional(),
    limit: z.coerce.number().int().min(1).max(LIMITS.listItemsPerPage).default(20),
  })
  .strict();
export type ConversationsQuery = z.output<typeof ConversationsQuery>;
