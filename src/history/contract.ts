/**
 * The context-manager contract (after amplifier's): what any keeper of a
 * conversation's history offers an agent loop. The Conversation Durable Object
 * implements it; stored history is append-only, so `setMessages` resumes into
 * an empty conversation, and `clear` and `compact` change the model's view,
 * never the stored messages. Its wire shapes (`CompactionStatus`, `RequestMessages`) are `src/protocol/history.ts`.
 */
import type { CompactionEvidence } from "../protocol/evidence";
import type { AppendableMessage, ChatMessage } from "../protocol/messages";
import type { Result } from "../core/problem";
import type { CompactionStatus, RequestMessages } from "../protocol/history";

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
