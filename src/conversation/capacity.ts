import { LIMITS } from "../protocol/limits";
import { imagesOf, textOf, type ChatMessage } from "../protocol/messages";
import { fail, ok, type Result } from "../core/problem";
import type { MessageStore } from "./message-store";

/**
 * A conversation's bounds (docs/history.md, "Bounds"): every read across the Durable Object's boundary stays far
 * below its 32 MiB RPC limit, and a conversation's stored messages stop at a cap. Each check runs before
 * anything is stored, so a refused request leaves the conversation as it was.
 */

const encoder = new TextEncoder();

/** A message's weight as the store counts it (MESSAGE_BYTES in message-store.ts): its stored text in UTF-8 bytes, plus 128. */
export function messageBytes(message: ChatMessage): number {
  const toolCalls = message.role === "assistant" && message.tool_calls ? JSON.stringify(message.tool_calls) : "";
  const images = imagesOf(message);
  return encoder.encode(textOf(message)).length + encoder.encode(toolCalls).length + (images.length ? encoder.encode(JSON.stringify(images)).length : 0) + 128;
}

/** A message's characters as a model input holds them: text, tool calls and image URLs. */
function messageChars(message: ChatMessage): number {
  const toolCalls = message.role === "assistant" && message.tool_calls ? JSON.stringify(message.tool_calls).length : 0;
  return textOf(message).length + toolCalls + imagesOf(message).reduce((sum, i) => sum + i.image_url.url.length, 0);
}

/** Refuses messages that would take the conversation's stored messages past LIMITS.conversationBytes. */
export function checkRoom(store: MessageStore, incoming: readonly ChatMessage[]): Result<true> {
  const adding = incoming.reduce((sum, m) => sum + messageBytes(m), 0);
  const stored = store.storedBytes();
  if (stored + adding <= LIMITS.conversationBytes) return ok(true);
  return fail(
    "limit-exceeded",
    `this conversation is full: its stored messages weigh ${stored} bytes, and these ${incoming.length} would take it past its cap of ${LIMITS.conversationBytes}. ` +
      "Nothing was stored. It stays readable (GET …/messages pages, GET …/context), and can be compacted, cleared and ended; " +
      "continue in a new conversation (PUT …/messages resumes one from GET …/context)",
  );
}

/**
 * A request without a token bound (no compaction window, no budget) reads the model's whole view of the history:
 * refused when that is more than one request may read.
 */
export function checkWholeView(store: MessageStore, coveredThrough: number): Result<true> {
  if (store.firstSeqWithinBytes(coveredThrough, LIMITS.historyReadBytes) <= coveredThrough + 1) return ok(true);
  return fail(
    "limit-exceeded",
    `the history the model would read is more than one request may read (${LIMITS.historyReadBytes} bytes). ` +
      "Give the conversation a compaction window (PUT …/compaction with contextWindow), so older messages are summarised, " +
      "pass a token budget (budget.maxTokens, or ?maxTokens=), or clear it (POST …/clear)",
  );
}

/** A turn's answer must cross the RPC boundary whole: its model input within LIMITS.modelInputChars, and room for what it stores. */
export function checkTurnFits(store: MessageStore, stored: readonly ChatMessage[], input: readonly ChatMessage[]): Result<true> {
  const chars = input.reduce((sum, m) => sum + messageChars(m), 0);
  if (chars > LIMITS.modelInputChars) {
    return fail("limit-exceeded", `this turn's model input would hold ${chars} characters, more than the ${LIMITS.modelInputChars} one turn may; pass a smaller budget.maxTokens or compaction window`);
  }
  return checkRoom(store, stored);
}
