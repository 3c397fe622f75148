import { sha256Hex } from "../core/version";
import type { GatewayCursor } from "../conversation/gateway-store";
import type { ChatRequestMessage } from "../protocol/gateway-openai";
import { failWith, ok, type Result } from "../core/problem";
import { gatewayError, type GatewayError } from "./errors";

/** A message of the client's side of the conversation: what it sent, and the answers the gateway returned. */
type ClientMessage = ChatRequestMessage;

/** What a request brings that the conversation has not consumed yet, as a turn takes it. */
export type NewPart =
  | {
      kind: "new";
      /** The user's words (several user messages in a row are joined by a blank line); absent when only results came. */
      message?: string;
      images?: { url: string; detail?: "low" | "high" | "auto" }[];
      toolResults?: { tool_call_id: string; content: string }[];
      /** The cursor once the turn has taken it. */
      consumed: GatewayCursor;
    }
  /** Nothing new, and the model still owes an answer to what was consumed: continue (a retry after a failure). */
  | { kind: "retry"; consumed: GatewayCursor };

/** The client's messages the conversation is made of: system and developer messages are the client's own instructions, not turns. */
export function clientSide(messages: readonly ClientMessage[]): ClientMessage[] {
  return messages.filter((m) => m.role !== "system" && m.role !== "developer");
}

function textOf(content: ClientMessage["content"]): string {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content.flatMap((p) => (p.type === "text" && typeof p.text === "string" ? [p.text] : [])).join("\n");
}

/**
 * A message as the diff compares it: what the model would read of it, so the keys clients add or drop (`refusal:
 * null`, `annotations`, `name`, `type`) and `""` against `null` do not count as an edit.
 */
function canonical(m: ClientMessage): unknown {
  switch (m.role) {
    case "assistant":
      return ["assistant", textOf(m.content) || m.refusal || null, (m.tool_calls ?? []).map((c) => [c.id, c.function.name, c.function.arguments])];
    case "tool":
      return ["tool", m.tool_call_id ?? "", textOf(m.content)];
    default: {
      const images = Array.isArray(m.content) ? m.content.flatMap((p) => (p.type === "image_url" ? [JSON.stringify(p.image_url)] : [])) : [];
      return [m.role, textOf(m.content), images];
    }
  }
}

export function messageHash(m: ClientMessage): Promise<string> {
  return sha256Hex(JSON.stringify(canonical(m)));
}

/** The chain one message further: it names the whole history up to that message, so an earlier edit changes it too. */
export function chainLink(chain: string, hash: string): Promise<string> {
  return sha256Hex(chain + hash);
}

async function extend(chain: string, hashes: readonly string[]): Promise<string> {
  for (const hash of hashes) chain = await chainLink(chain, hash);
  return chain;
}

/** The client's side of a request as the diff reads it: its messages, each one's hash, and the chain after each. */
export interface ClientHistory {
  messages: ClientMessage[];
  hashes: string[];
  /** `chains[i]`: the chain of messages 0…i (from ""). */
  chains: string[];
}

export async function readHistory(all: readonly ClientMessage[]): Promise<ClientHistory> {
  const messages = clientSide(all);
  const hashes = await Promise.all(messages.map(messageHash));
  const chains: string[] = [];
  for (const hash of hashes) chains.push(await chainLink(chains.at(-1) ?? "", hash));
  return { messages, hashes, chains };
}

/**
 * The chains at which a conversation this request continues can have stopped: its new part holds no assistant
 * message, so the consumed history ends at the last assistant message (an answer the gateway returned) or after it
 * (a turn still owed its answer). Without any assistant message, anywhere.
 */
export function continuationChains(history: ClientHistory): string[] {
  const lastAnswer = history.messages.findLastIndex((m) => m.role === "assistant");
  return history.chains.slice(Math.max(lastAnswer, 0));
}

const nothingNew = (message: string) => failWith(gatewayError(400, message, "nothing_new", { param: "messages" }));

/**
 * The diff rule (docs/gateway.md#the-diff-rule). With `consumed` client messages taken so far, `lastHash` the hash of
 * the last of them and `chain` the chain of them all:
 * 1. the request holds at least that many and the chain of its first `consumed` is the same: the client resends its
 *    whole history, and what follows is new;
 * 2. else, a request without any assistant message sends only what is new;
 * 3. else the client's history differs from what the conversation consumed (edited, or another conversation's):
 *    409 `history_mismatch`.
 * When nothing is new (1), or the new part is the last consumed message again (2), and the model still owes an answer
 * (the last attempt failed), the request is a retry: the turn continues. Otherwise nothing new is a 400, and so is a
 * new part with no words and no results in it (an empty message).
 * A cursor written before chains were kept (`chain` null) is compared by its last message alone, and extended from a
 * resent history.
 */
export async function newPart(history: ClientHistory, cursor: GatewayCursor | null, where: (index: number) => string = (i) => `messages[${i}]`): Promise<Result<NewPart, GatewayError>> {
  const { messages, hashes, chains } = history;
  const consumed = cursor?.consumed ?? 0;
  let fresh: ClientMessage[];
  let chain: string | null;
  if (cursor && consumed > 0 && messages.length >= consumed && hashes[consumed - 1] === cursor.lastHash && (cursor.chain === null || chains[consumed - 1] === cursor.chain)) {
    fresh = messages.slice(consumed);
    if (fresh.length === 0) {
      if (cursor.awaiting) return ok({ kind: "retry", consumed: cursor });
      return nothingNew("the messages bring nothing new: end them with the user's next message or your tools' results");
    }
    chain = chains.at(-1)!;
  } else if (!messages.some((m) => m.role === "assistant")) {
    fresh = messages;
    if (fresh.length === 0) return nothingNew("the messages hold no user message and no tool result (system messages aside): nothing to answer");
    if (cursor?.awaiting && hashes.at(-1) === cursor.lastHash) return ok({ kind: "retry", consumed: cursor });
    // Only the new part came: the conversation's chain goes on over it (a new conversation's starts with it).
    chain = cursor === null ? chains.at(-1)! : cursor.chain === null ? null : await extend(cursor.chain, hashes);
  } else {
    return failWith(
      gatewayError(
        409,
        consumed === 0
          ? "no conversation has consumed this history (a message in it was edited, or this runtime never answered it): send only the new messages with X-Conversation-Id, or start a new conversation with only the user's message"
          : `the messages do not continue this conversation: message ${consumed} (system messages aside), or one before it, differs from the one it consumed, or is missing. Resend the history as you received it, send only the new messages, or start a new conversation`,
        "history_mismatch",
        { param: "messages" },
      ),
    );
  }
  return shape(fresh, { consumed: consumed + fresh.length, lastHash: hashes.at(-1)!, awaiting: true, chain }, messages.length - fresh.length, where);
}

/** The new part as a turn takes it: results of the client's tools first, then the user's message. */
function shape(fresh: ClientMessage[], consumed: GatewayCursor, offset: number, where: (index: number) => string): Result<NewPart, GatewayError> {
  const toolResults: { tool_call_id: string; content: string }[] = [];
  const words: string[] = [];
  const images: NonNullable<Extract<NewPart, { kind: "new" }>["images"]> = [];
  for (const [i, m] of fresh.entries()) {
    const param = where(offset + i);
    const bad = (message: string) => failWith(gatewayError(400, message, "invalid_message", { param }));
    if (m.role === "tool") {
      if (words.length) return bad("a tool result after the user's message: send results before the next user message");
      if (!m.tool_call_id) return bad("a tool message needs its tool_call_id");
      if (Array.isArray(m.content) && m.content.some((p) => p.type !== "text")) return bad("a tool result is text, or text parts");
      toolResults.push({ tool_call_id: m.tool_call_id, content: textOf(m.content) });
    } else if (m.role === "user") {
      for (const p of Array.isArray(m.content) ? m.content : []) {
        if (p.type === "image_url") {
          const image = p.image_url as { url?: unknown; detail?: unknown } | undefined;
          if (typeof image?.url !== "string") return bad("an image_url part needs image_url.url");
          images.push({ url: image.url, ...(image.detail === "low" || image.detail === "high" || image.detail === "auto" ? { detail: image.detail } : {}) });
        } else if (p.type !== "text") return bad(`content parts of type '${p.type}' are not supported: text and image_url are`);
      }
      const text = textOf(m.content);
      if (text.trim()) words.push(text);
    } else {
      return bad(
        m.role === "assistant"
          ? "an assistant message the conversation did not produce: the gateway stores the model's answers itself (send only user messages and tool results)"
          : `'${m.role}' messages are not supported`,
      );
    }
  }
  if (images.length && !words.length) return failWith(gatewayError(400, "images come with the user's words", "invalid_message", { param: "messages" }));
  if (!words.length && !toolResults.length) return nothingNew("the user's message is empty (no text) and no tool results come with it: nothing new to answer");
  return ok({
    kind: "new",
    ...(words.length ? { message: words.join("\n\n") } : {}),
    ...(images.length ? { images } : {}),
    ...(toolResults.length ? { toolResults } : {}),
    consumed,
  });
}
