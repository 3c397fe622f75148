/**
 * Subagents (docs/tools.md, "Subagents"): the wire shapes of a delegation, between a parent conversation whose model
 * called `delegate` and the child conversation that works on the task.
 */
import * as z from "zod";
import { ToolResultEvidence } from "./evidence";
import { ModelAssistantMessage } from "./messages";

/**
 * POST /v1/conversations/{child}/delegation/complete: the child's final answer, the model's last message as its SDK
 * returned it (openai's `choices[0].message`), without tool calls. It is stored in the child, which then ends, and it
 * closes the parent's `delegate` call as that call's result.
 */
export const CompleteDelegationBody = z
  .object({ reply: ModelAssistantMessage })
  .strict()
  .refine((b) => b.reply.tool_calls === undefined, { message: "the final answer has no tool calls: send a reply with calls as the child's next turn", path: ["reply", "tool_calls"] });
export type CompleteDelegationBody = z.infer<typeof CompleteDelegationBody>;

/** What completing a delegation did: the parent's call it closed, what protecting the result did, and the child's turns. */
export const DelegationCompleted = z.object({
  parentConversationId: z.string(),
  toolCallId: z.string(),
  toolResult: ToolResultEvidence,
  /** The child's turns, oldest first. */
  childTurnIds: z.array(z.string()),
  endedAt: z.string(),
});
export type DelegationCompleted = z.infer<typeof DelegationCompleted>;

/** One `delegate` call of a conversation, and the child conversation it started. */
export const DelegationInfo = z.object({
  toolCallId: z.string(),
  childConversationId: z.string(),
  agent: z.string(),
  /** The child's depth: 1 for a top-level conversation's subagent. */
  depth: z.number(),
  /** The parent's turn that made the call. */
  turnId: z.string(),
  /**
   * `running` until the child's final answer closes the call (`completed`); `abandoned` when the parent moved on first
   * (a new user message closed the call), so the child's answer can no longer reach it.
   */
  status: z.enum(["running", "completed", "abandoned"]),
  /** The child's turns: its first one, then all of them once it completed. */
  childTurnIds: z.array(z.string()),
  createdAt: z.string(),
  completedAt: z.string().nullable(),
});
export type DelegationInfo = z.infer<typeof DelegationInfo>;

/** GET /v1/conversations/{id}/delegations: the conversation's delegations, oldest first. */
export const DelegationList = z.object({ delegations: z.array(DelegationInfo) });
export type DelegationList = z.infer<typeof DelegationList>;

/** What the parent hands the child when it starts it (between Durable Objects; not on the wire). */
export interface DelegationStart {
  childConversationId: string;
  agent: string;
  parent: { conversationId: string; toolCallId: string; depth: number };
  task: string;
  /** Text the delegating model passed as `context`: it passes the child's trust boundary and is fenced as hints. */
  context?: string;
  /** The parent's memory to slice for the task (its session's namespace chain), when the parent's agent reads memory. */
  memorySession: string | null;
}
