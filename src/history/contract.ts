/**
 * The context-manager contract (after amplifier's): what any keeper of a
 * conversation's history offers an agent loop. The Conversation Durable Object
 * implements it; stored history is append-only, so `setMessages` resumes into
 * an empty conversation, and `clear` and `compact` change the model's view,
 * never the stored messages.
 */
import type { CompactionEvidence } from "../core/evidence";
import type { AppendableMessage, ChatMessage } from "../protocol/messages";
import type { Result } from "../core/problem";
import type { CompactionLimits, CompactionPolicy } from "../protocol/policies";
import type { SummaryTrust } from "./view";

export interface CompactionStatus {
  policy: CompactionPolicy;
  /** Null until the policy (or a turn) names the model's window. */
  limits: CompactionLimits | null;
  /** What the model would read now, before any new message: system, summary and the stored messages after it. */
  tokens: number;
  messageCount: number;
  shouldCompact: boolean;
  /**
   * The latest compaction, or null; `coveredThroughSeq` is the last message out of the model's view once it ran
   * (summarised, or hidden by a clear, by it or an earlier one), `summarised` whether it wrote a summary itself
   * (a compaction may only clear tool results).
   */
  latest: { id: number; reason: CompactionEvidence["reason"]; coveredThroughSeq: number | null; summarised: boolean; at: string } | null;
  /** The summary the model reads now, or null (none yet, or a clear hid it): the messages it stands for and who wrote it. */
  summary: { fromSeq: number; throughSeq: number; summariser: string; trust: SummaryTrust; compactionId: number } | null;
}

export interface RequestMessages {
  messages: ChatMessage[];
  tokens: number;
  /** History older than what `maxTokens` could hold, given up whole groups at a time. */
  truncated: { messages: number; tokens: number };
}

export interface ContextManager {
  addMessages(messages: AppendableMessage[]): Promise<Result<{ appended: number; lastSeq: number }>>;
  getMessagesForRequest(options: { maxTokens?: number | undefined }): Result<RequestMessages>;
  /** Stored messages a page at a time, oldest first: no read may near the Durable Object's RPC limit. */
  getMessages(page: { after: number; limit: number }): Result<{ messages: { seq: number; message: ChatMessage }[]; nextAfter: number; hasMore: boolean }>;
  setMessages(messages: Exclude<ChatMessage, { role: "system" }>[]): Promise<Result<{ appended: number; lastSeq: number }>>;
  clear(): Result<CompactionEvidence>;
  shouldCompact(): Result<CompactionStatus>;
  compact(options: { force?: boolean | undefined; contextWindow?: number | undefined }): Promise<Result<CompactionEvidence | null>>;
}
