import { messageTokens, withKnownTokens } from "../core/assemble";
import { withoutAppendix } from "../core/reminder";
import { imagesOf, textOf, type ChatMessage, type ImagePart, type ToolCall } from "../protocol/messages";
import type { StoredMessage } from "../protocol/frontend";
import type { Database, Row } from "../storage/database";
import { numeric, numericOrNull, json, text, textOrNull } from "../storage/decode";
import { Images, ToolCalls } from "./columns";
import type { HistorySearchStore } from "./history-search-store";

/** The open tool calls (id → tool name, in the order they were made) and the seq of the message that made them (0 when none is open). */
export interface OpenCalls {
  calls: Map<string, string>;
  seq: number;
}

/**
 * What one message weighs against the read and storage limits (src/protocol/limits.ts): its stored text in UTF-8
 * bytes, plus 128 for its seq, ids and dates, so many tiny messages weigh too. octet_length reads a row's
 * header, not its text.
 */
const MESSAGE_BYTES = "IFNULL(octet_length(content), 0) + IFNULL(octet_length(tool_calls), 0) + IFNULL(octet_length(images), 0) + 128";

/**
 * The conversation's messages in its SQLite: only ever appended to. Each row
 * keeps its token count and the running total through it, so a request can
 * tell what fits without reading the messages.
 */
export class MessageStore {
  /** `searchIndex`: search_history's index, which each message joins as it is stored. */
  constructor(
    private readonly sql: Database,
    private readonly searchIndex: HistorySearchStore,
  ) {}

  append(turnId: string | null, message: ChatMessage, at: string): number {
    const toolCalls = message.role === "assistant" && message.tool_calls ? JSON.stringify(message.tool_calls) : null;
    const toolCallId = message.role === "tool" ? message.tool_call_id : null;
    const images = imagesOf(message);
    const tokens = messageTokens(message);
    const content = message.role === "user" ? textOf(message) : message.content;
    const imageJson = images.length ? JSON.stringify(images) : null;
    const last = "(SELECT running_tokens, running_bytes FROM messages ORDER BY seq DESC LIMIT 1)";
    const row = this.sql
      .exec(
        `INSERT INTO messages (turn_id, role, content, tool_calls, tool_call_id, created_at, images, tokens, running_tokens, running_bytes)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ? + COALESCE((SELECT running_tokens FROM ${last}), 0),
                 IFNULL(octet_length(?), 0) + IFNULL(octet_length(?), 0) + IFNULL(octet_length(?), 0) + 128 + COALESCE((SELECT running_bytes FROM ${last}), 0))
         RETURNING seq`,
        turnId,
        message.role,
        content,
        toolCalls,
        toolCallId,
        at,
        imageJson,
        tokens,
        tokens,
        content,
        toolCalls,
        imageJson,
      )
      .one();
    const seq = numeric(row, "seq");
    // Right after the insert, with no await between: in its transaction, so the index never misses a stored message.
    this.searchIndex.add(seq, { role: message.role, content, toolCalls: message.role === "assistant" ? message.tool_calls : null, toolCallId });
    return seq;
  }

  list(throughSeq = Number.MAX_SAFE_INTEGER, fromSeq = 0): StoredMessage[] {
    return this.sql.exec("SELECT * FROM messages WHERE seq >= ? AND seq <= ? ORDER BY seq", fromSeq, throughSeq).toArray().map(storedMessage);
  }

  /** The messages after `afterSeq`, oldest first: at most `limit` of them, and no more than `maxBytes` (but at least one). */
  page(afterSeq: number, limit: number, maxBytes: number): { messages: StoredMessage[]; hasMore: boolean } {
    const messages: StoredMessage[] = [];
    let bytes = 0;
    for (const row of this.sql.exec(`SELECT *, ${MESSAGE_BYTES} AS bytes FROM messages WHERE seq > ? ORDER BY seq LIMIT ?`, afterSeq, limit + 1)) {
      bytes += numeric(row, "bytes");
      if (messages.length === limit || (messages.length > 0 && bytes > maxBytes)) return { messages, hasMore: true };
      messages.push(storedMessage(row));
    }
    return { messages, hasMore: false };
  }

  /** Every stored message's weight (MESSAGE_BYTES), summed: what the conversation's cap counts, read from the last row's running total. */
  storedBytes(): number {
    return this.newest("running_bytes") ?? 0;
  }

  /**
   * The first seq from which the messages after `afterSeq`, through `throughSeq`, weigh at most `maxBytes`
   * (MESSAGE_BYTES); one past them when not even the last one does. Read from the running totals.
   */
  firstSeqWithinBytes(afterSeq: number, maxBytes: number, throughSeq = Number.MAX_SAFE_INTEGER): number {
    const end = this.sql.exec("SELECT seq, running_bytes AS b FROM messages WHERE seq <= ? ORDER BY seq DESC LIMIT 1", throughSeq).toArray()[0];
    if (end === undefined) return Math.min(throughSeq, this.lastSeq()) + 1;
    const endSeq = numeric(end, "seq");
    const first = this.seqOf(`SELECT MIN(seq) AS seq FROM messages WHERE seq > ? AND seq <= ? AND running_bytes - (${MESSAGE_BYTES}) >= ?`, afterSeq, endSeq, numeric(end, "b") - maxBytes);
    return first ?? endSeq + 1;
  }

  /** The first group start at or after `seq` (a tool result never opens a group); the last group's start when there is none. */
  groupStartFrom(seq: number): number {
    return this.seqOf("SELECT MIN(seq) AS seq FROM messages WHERE seq >= ? AND role != 'tool'", seq) ?? this.seqOf("SELECT MAX(seq) AS seq FROM messages WHERE role != 'tool'") ?? seq;
  }

  /** The images of each message after `afterSeq` (through `throughSeq`) that carries any, oldest first; the messages' text is not read. */
  imagesAfter(afterSeq: number, throughSeq = Number.MAX_SAFE_INTEGER): ImagePart[][] {
    return this.sql
      .exec("SELECT images FROM messages WHERE images IS NOT NULL AND seq > ? AND seq <= ? ORDER BY seq", afterSeq, throughSeq)
      .toArray()
      .map((r) => json(Images, r, "images"));
  }

  /** Stored tokens of the messages after `afterSeq`, from the running totals: two row reads. */
  tokensAfter(afterSeq: number): number {
    const before = this.sql.exec("SELECT running_tokens AS t FROM messages WHERE seq <= ? ORDER BY seq DESC LIMIT 1", afterSeq).toArray()[0];
    return (this.newest("running_tokens") ?? 0) - (before ? numeric(before, "t") : 0);
  }

  /**
   * The first seq a request needs when it can read at most `maxTokens` of the
   * messages after `afterSeq`: older messages could not fit. It is moved back
   * to the start of its group, so a tool result never arrives without its call.
   */
  firstSeqWithin(afterSeq: number, maxTokens: number): number {
    const last = this.newest("running_tokens") ?? 0;
    const first = this.seqOf("SELECT MIN(seq) AS seq FROM messages WHERE seq > ? AND running_tokens - tokens >= ?", afterSeq, last - maxTokens);
    // When not even the last message fits, its group is still what a request needs.
    const from = first ?? this.lastSeq();
    const groupStart = this.seqOf("SELECT MAX(seq) AS seq FROM messages WHERE seq <= ? AND role != 'tool'", from);
    return Math.max(afterSeq + 1, groupStart ?? from);
  }

  /** The last message a turn stored (its user message, reply or results); what came after was appended outside any turn. */
  lastTurnSeq(): number {
    // Walked back from the newest row, it stops at the first a turn stored: a few rows, not the whole table.
    return this.seqOf("SELECT seq FROM messages WHERE turn_id IS NOT NULL ORDER BY seq DESC LIMIT 1") ?? 0;
  }

  lastUserSeq(): number {
    return this.seqOf("SELECT MAX(seq) AS seq FROM messages WHERE role = 'user'") ?? 0;
  }

  /** The words of the last user message, without the appendix the runtime stapled to it (null: there is none). */
  lastUserText(): string | null {
    const seq = this.lastUserSeq();
    const stored = seq === 0 ? undefined : this.list(seq, seq)[0];
    return stored ? withoutAppendix(textOf(stored.message)) : null;
  }

  lastSeq(): number {
    return this.seqOf("SELECT MAX(seq) AS seq FROM messages") ?? 0;
  }

  count(): number {
    return numeric(this.sql.exec("SELECT COUNT(*) AS n FROM messages").one(), "n");
  }

  /**
   * Tool calls the assistant made that have no result yet (id → tool name, in
   * the order they were made), and the seq of the message that made them (0
   * when none is open). Nothing may be stored between calls and their results
   * (the envelope refuses it, and a turn closes what is left open), so only the
   * latest calls can be open: this reads them, not the whole history.
   */
  openCalls(): OpenCalls {
    const last = this.sql.exec("SELECT seq, tool_calls FROM messages WHERE tool_calls IS NOT NULL ORDER BY seq DESC LIMIT 1").toArray()[0];
    if (!last) return { calls: new Map(), seq: 0 };
    const seq = numeric(last, "seq");
    const open = new Map(json(ToolCalls, last, "tool_calls").map((call) => [call.id, call.function.name]));
    for (const row of this.sql.exec("SELECT tool_call_id FROM messages WHERE seq > ? AND role = 'tool'", seq)) open.delete(text(row, "tool_call_id"));
    return { calls: open, seq: open.size ? seq : 0 };
  }

  /** The newest calls stored (open or answered): a reply that repeats them exactly was stored already. */
  lastCalls(): ToolCall[] {
    const last = this.sql.exec("SELECT tool_calls FROM messages WHERE tool_calls IS NOT NULL ORDER BY seq DESC LIMIT 1").toArray()[0];
    return last ? json(ToolCalls, last, "tool_calls") : [];
  }

  /** The newest assistant message that made a call with this id, or null: ids may repeat across messages. */
  lastCallSeq(toolCallId: string): number | null {
    return this.seqOf(
      // instr() spares parsing the calls of messages that cannot name it.
      "SELECT MAX(m.seq) AS seq FROM messages m, json_each(m.tool_calls) c WHERE m.tool_calls IS NOT NULL AND instr(m.tool_calls, ?) > 0 AND json_extract(c.value, '$.id') = ?",
      JSON.stringify(toolCallId),
      toolCallId,
    );
  }

  /** Migration 0004's step: token counts and running totals for the messages stored before rows carried them. */
  backfillTokens(): void {
    let running = 0;
    for (const row of this.sql.exec("SELECT * FROM messages ORDER BY seq").toArray()) {
      const tokens = messageTokens(chatMessage(row));
      running += tokens;
      this.sql.exec("UPDATE messages SET tokens = ?, running_tokens = ? WHERE seq = ?", tokens, running, numeric(row, "seq"));
    }
  }

  /** The `column` of the newest message, or null when there is none. */
  private newest(column: "running_tokens" | "running_bytes"): number | null {
    const row = this.sql.exec(`SELECT ${column} AS n FROM messages ORDER BY seq DESC LIMIT 1`).toArray()[0];
    return row ? numeric(row, "n") : null;
  }

  /** The `seq` of a query's one row, or null when it has none or its seq is NULL (an aggregate over no rows). */
  private seqOf(query: string, ...bindings: (string | number)[]): number | null {
    const row = this.sql.exec(query, ...bindings).toArray()[0];
    return row ? numericOrNull(row, "seq") : null;
  }
}

function storedMessage(row: Row): StoredMessage {
  return { seq: numeric(row, "seq"), turnId: textOrNull(row, "turn_id"), createdAt: text(row, "created_at"), message: withKnownTokens(chatMessage(row), numeric(row, "tokens")) };
}

function chatMessage(row: Row): ChatMessage {
  switch (row.role) {
    case "assistant":
      return row.tool_calls
        ? { role: "assistant", content: textOrNull(row, "content"), tool_calls: json(ToolCalls, row, "tool_calls") }
        : { role: "assistant", content: textOrNull(row, "content") };
    case "tool":
      return { role: "tool", tool_call_id: text(row, "tool_call_id"), content: text(row, "content") };
    case "system":
      return { role: "system", content: text(row, "content") };
    default:
      return row.images
        ? { role: "user", content: [{ type: "text", text: text(row, "content") }, ...json(Images, row, "images")] }
        : { role: "user", content: text(row, "content") };
  }
}
