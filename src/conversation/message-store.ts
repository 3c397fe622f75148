import { messageTokens, withKnownTokens } from "../core/assemble";
import { withoutAppendix } from "../core/reminder";
import { imagesOf, textOf, type ChatMessage, type ImagePart, type ToolCall } from "../protocol/messages";
import type { StoredMessage } from "../protocol/frontend";
import { HistorySearchStore } from "./history-search-store";

/** The open tool calls (id → tool name, in the order they were made) and the seq of the message that made them (0 when none is open). */
export interface OpenCalls {
  calls: Map<string, string>;
  seq: number;
}

type Row = Record<string, SqlStorageValue>;

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
  /** search_history's index: each message joins it as it is stored. */
  readonly searchIndex: HistorySearchStore;

  constructor(protected readonly storage: DurableObjectStorage) {
    this.searchIndex = new HistorySearchStore(storage.sql);
  }

  protected get sql() {
    return this.storage.sql;
  }

  transaction<T>(run: () => T): T {
    return this.storage.transactionSync(run);
  }

  appendMessage(turnId: string | null, message: ChatMessage, at: string): number {
    const toolCalls = message.role === "assistant" && message.tool_calls ? JSON.stringify(message.tool_calls) : null;
    const toolCallId = message.role === "tool" ? message.tool_call_id : null;
    const images = imagesOf(message);
    const tokens = messageTokens(message);
    const content = message.role === "user" ? textOf(message) : message.content;
    const imageJson = images.length ? JSON.stringify(images) : null;
    const last = "(SELECT running_tokens, running_bytes FROM messages ORDER BY seq DESC LIMIT 1)";
    const seq = this.sql
      .exec<{ seq: number }>(
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
      .one().seq;
    // Right after the insert, with no await between: in its transaction, so the index never misses a stored message.
    this.searchIndex.add(seq, { role: message.role, content, toolCalls: message.role === "assistant" ? message.tool_calls : null, toolCallId });
    return seq;
  }

  messages(throughSeq = Number.MAX_SAFE_INTEGER, fromSeq = 0): StoredMessage[] {
    return this.sql.exec<Row>("SELECT * FROM messages WHERE seq >= ? AND seq <= ? ORDER BY seq", fromSeq, throughSeq).toArray().map(storedMessage);
  }

  /** The messages after `afterSeq`, oldest first: at most `limit` of them, and no more than `maxBytes` (but at least one). */
  page(afterSeq: number, limit: number, maxBytes: number): { messages: StoredMessage[]; hasMore: boolean } {
    const messages: StoredMessage[] = [];
    let bytes = 0;
    for (const row of this.sql.exec<Row>(`SELECT *, ${MESSAGE_BYTES} AS bytes FROM messages WHERE seq > ? ORDER BY seq LIMIT ?`, afterSeq, limit + 1)) {
      bytes += row.bytes as number;
      if (messages.length === limit || (messages.length > 0 && bytes > maxBytes)) return { messages, hasMore: true };
      messages.push(storedMessage(row));
    }
    return { messages, hasMore: false };
  }

  /** Every stored message's weight (MESSAGE_BYTES), summed: what the conversation's cap counts, read from the last row's running total. */
  storedBytes(): number {
    return this.sql.exec<{ b: number }>("SELECT running_bytes AS b FROM messages ORDER BY seq DESC LIMIT 1").toArray()[0]?.b ?? 0;
  }

  /**
   * The first seq from which the messages after `afterSeq`, through `throughSeq`, weigh at most `maxBytes`
   * (MESSAGE_BYTES); one past them when not even the last one does. Read from the running totals.
   */
  firstSeqWithinBytes(afterSeq: number, maxBytes: number, throughSeq = Number.MAX_SAFE_INTEGER): number {
    const end = this.sql.exec<{ seq: number; b: number }>("SELECT seq, running_bytes AS b FROM messages WHERE seq <= ? ORDER BY seq DESC LIMIT 1", throughSeq).toArray()[0];
    if (end === undefined) return Math.min(throughSeq, this.lastSeq()) + 1;
    const first = this.sql
      .exec<{ seq: number | null }>(`SELECT MIN(seq) AS seq FROM messages WHERE seq > ? AND seq <= ? AND running_bytes - (${MESSAGE_BYTES}) >= ?`, afterSeq, end.seq, end.b - maxBytes)
      .one().seq;
    return first ?? end.seq + 1;
  }

  /** The first group start at or after `seq` (a tool result never opens a group); the last group's start when there is none. */
  groupStartFrom(seq: number): number {
    const next = this.sql.exec<{ seq: number | null }>("SELECT MIN(seq) AS seq FROM messages WHERE seq >= ? AND role != 'tool'", seq).one().seq;
    return next ?? this.sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM messages WHERE role != 'tool'").one().seq ?? seq;
  }

  /** The images of each message after `afterSeq` (through `throughSeq`) that carries any, oldest first; the messages' text is not read. */
  imagesAfter(afterSeq: number, throughSeq = Number.MAX_SAFE_INTEGER): ImagePart[][] {
    return this.sql
      .exec<{ images: string }>("SELECT images FROM messages WHERE images IS NOT NULL AND seq > ? AND seq <= ? ORDER BY seq", afterSeq, throughSeq)
      .toArray()
      .map((r) => JSON.parse(r.images) as ImagePart[]);
  }

  /** Stored tokens of the messages after `afterSeq`, from the running totals: two row reads. */
  tokensAfter(afterSeq: number): number {
    const last = this.sql.exec<{ t: number }>("SELECT running_tokens AS t FROM messages ORDER BY seq DESC LIMIT 1").toArray()[0]?.t ?? 0;
    const before = this.sql.exec<{ t: number }>("SELECT running_tokens AS t FROM messages WHERE seq <= ? ORDER BY seq DESC LIMIT 1", afterSeq).toArray()[0]?.t ?? 0;
    return last - before;
  }

  /**
   * The first seq a request needs when it can read at most `maxTokens` of the
   * messages after `afterSeq`: older messages could not fit. It is moved back
   * to the start of its group, so a tool result never arrives without its call.
   */
  firstSeqWithin(afterSeq: number, maxTokens: number): number {
    const last = this.sql.exec<{ t: number }>("SELECT running_tokens AS t FROM messages ORDER BY seq DESC LIMIT 1").toArray()[0]?.t ?? 0;
    const first = this.sql.exec<{ seq: number | null }>("SELECT MIN(seq) AS seq FROM messages WHERE seq > ? AND running_tokens - tokens >= ?", afterSeq, last - maxTokens).one().seq;
    // When not even the last message fits, its group is still what a request needs.
    const from = first ?? this.lastSeq();
    const groupStart = this.sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM messages WHERE seq <= ? AND role != 'tool'", from).one().seq;
    return Math.max(afterSeq + 1, groupStart ?? from);
  }

  /** The last message a turn stored (its user message, reply or results); what came after was appended outside any turn. */
  lastTurnSeq(): number {
    // Walked back from the newest row, it stops at the first a turn stored: a few rows, not the whole table.
    return this.sql.exec<{ seq: number }>("SELECT seq FROM messages WHERE turn_id IS NOT NULL ORDER BY seq DESC LIMIT 1").toArray()[0]?.seq ?? 0;
  }

  lastUserSeq(): number {
    return this.sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM messages WHERE role = 'user'").one().seq ?? 0;
  }

  /** The words of the last user message, without the appendix the runtime stapled to it (null: there is none). */
  lastUserText(): string | null {
    const seq = this.lastUserSeq();
    const stored = seq === 0 ? undefined : this.messages(seq, seq)[0];
    return stored ? withoutAppendix(textOf(stored.message)) : null;
  }

  lastSeq(): number {
    return this.sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM messages").one().seq ?? 0;
  }

  messageCount(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM messages").one().n;
  }

  /**
   * Tool calls the assistant made that have no result yet (id → tool name, in
   * the order they were made), and the seq of the message that made them (0
   * when none is open). Nothing may be stored between calls and their results
   * (the envelope refuses it, and a turn closes what is left open), so only the
   * latest calls can be open: this reads them, not the whole history.
   */
  openCalls(): OpenCalls {
    const last = this.sql.exec<Row>("SELECT seq, tool_calls FROM messages WHERE tool_calls IS NOT NULL ORDER BY seq DESC LIMIT 1").toArray()[0];
    if (!last) return { calls: new Map(), seq: 0 };
    const open = new Map((JSON.parse(last.tool_calls as string) as ToolCall[]).map((call) => [call.id, call.function.name]));
    for (const row of this.sql.exec<Row>("SELECT tool_call_id FROM messages WHERE seq > ? AND role = 'tool'", last.seq)) open.delete(row.tool_call_id as string);
    return { calls: open, seq: open.size ? (last.seq as number) : 0 };
  }

  /** The newest calls stored (open or answered): a reply that repeats them exactly was stored already. */
  lastCalls(): ToolCall[] {
    const last = this.sql.exec<Row>("SELECT tool_calls FROM messages WHERE tool_calls IS NOT NULL ORDER BY seq DESC LIMIT 1").toArray()[0];
    return last ? (JSON.parse(last.tool_calls as string) as ToolCall[]) : [];
  }

  /** The newest assistant message that made a call with this id, or null: ids may repeat across messages. */
  lastCallSeq(toolCallId: string): number | null {
    return this.sql
      .exec<{ seq: number | null }>(
        // instr() spares parsing the calls of messages that cannot name it.
        "SELECT MAX(m.seq) AS seq FROM messages m, json_each(m.tool_calls) c WHERE m.tool_calls IS NOT NULL AND instr(m.tool_calls, ?) > 0 AND json_extract(c.value, '$.id') = ?",
        JSON.stringify(toolCallId),
        toolCallId,
      )
      .one().seq;
  }
}

export function backfillTokenCounts(storage: DurableObjectStorage): void {
  let running = 0;
  for (const row of storage.sql.exec<Row>("SELECT * FROM messages ORDER BY seq").toArray()) {
    const tokens = messageTokens(chatMessage(row));
    running += tokens;
    storage.sql.exec("UPDATE messages SET tokens = ?, running_tokens = ? WHERE seq = ?", tokens, running, row.seq as number);
  }
}

function storedMessage(row: Row): StoredMessage {
  return { seq: row.seq as number, turnId: row.turn_id as string | null, createdAt: row.created_at as string, message: withKnownTokens(chatMessage(row), row.tokens as number) };
}

function chatMessage(row: Row): ChatMessage {
  switch (row.role) {
    case "assistant":
      return row.tool_calls
        ? { role: "assistant", content: row.content as string | null, tool_calls: JSON.parse(row.tool_calls as string) as ToolCall[] }
        : { role: "assistant", content: row.content as string | null };
    case "tool":
      return { role: "tool", tool_call_id: row.tool_call_id as string, content: row.content as string };
    case "system":
      return { role: "system", content: row.content as string };
    default:
      return row.images
        ? { role: "user", content: [{ type: "text", text: row.content as string }, ...(JSON.parse(row.images as string) as ImagePart[])] }
        : { role: "user", content: row.content as string };
  }
}
