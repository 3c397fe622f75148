import { messageTokens, withKnownTokens } from "../core/assemble";
import { withoutAppendix } from "../core/reminder";
import { imagesOf, textOf, type ChatMessage, type ImagePart, type ToolCall } from "../protocol/messages";
import type { StoredMessage } from "../protocol/frontend";
import type { Database } from "../storage/database";
import { numeric, numericOrNull, json, jsonCell, numericCell, text, textCell, textOrNullCell } from "../storage/decode";
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

/** The columns `storedMessage` reads, in its order: a read of thousands of rows decodes each row's values by position. */
const STORED = "seq, turn_id, created_at, tokens, role, content, tool_calls, tool_call_id, images";
const STORED_COLUMNS = 9;

/**
 * The conversation's messages in its SQLite: only ever appended to. Each row
 * keeps its token count and the running total through it, so a request can
 * tell what fits without reading the messages.
 */
/** What a `POST …/tools/run` stores carries its own id under this prefix (`tools-run:<uuid>`): work outside any turn. */
export const TOOLS_RUN_PREFIX = "tools-run:";

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
    const stored: StoredMessage[] = [];
    for (const cells of this.sql.exec(`SELECT ${STORED} FROM messages WHERE seq >= ? AND seq <= ? ORDER BY seq`, fromSeq, throughSeq).raw()) stored.push(storedMessage(cells));
    return stored;
  }

  /** The messages after `afterSeq`, oldest first: at most `limit` of them, and no more than `maxBytes` (but at least one). */
  page(afterSeq: number, limit: number, maxBytes: number): { messages: StoredMessage[]; hasMore: boolean } {
    const messages: StoredMessage[] = [];
    let bytes = 0;
    for (const cells of this.sql.exec(`SELECT ${STORED}, ${MESSAGE_BYTES} AS bytes FROM messages WHERE seq > ? ORDER BY seq LIMIT ?`, afterSeq, limit + 1).raw()) {
      bytes += numericCell(cells[STORED_COLUMNS], "bytes");
      if (messages.length === limit || (messages.length > 0 && bytes > maxBytes)) return { messages, hasMore: true };
      messages.push(storedMessage(cells));
    }
    return { messages, hasMore: false };
  }

  /** Every stored message's weight (MESSAGE_BYTES), summed: what the conversation's cap counts, read from the last row's running total. */
  storedBytes(): number {
    const newest = this.sql.exec("SELECT running_bytes AS n FROM messages ORDER BY seq DESC LIMIT 1").toArray()[0];
    return newest ? numeric(newest, "n") : 0;
  }

  /**
   * The first seq from which the messages after `afterSeq`, through `throughSeq`, weigh at most `maxBytes`
   * (MESSAGE_BYTES); one past them when not even the last one does. Read from the running totals.
   */
  firstSeqWithinBytes(afterSeq: number, maxBytes: number, throughSeq = Number.MAX_SAFE_INTEGER): number {
    const end = this.sql.exec("SELECT seq, running_bytes AS b FROM messages WHERE seq <= ? ORDER BY seq DESC LIMIT 1", throughSeq).toArray()[0];
    if (end === undefined) return Math.min(throughSeq, this.lastSeq()) + 1;
    const endSeq = numeric(end, "seq");
    return this.firstReaching(`running_bytes - (${MESSAGE_BYTES})`, afterSeq, endSeq, numeric(end, "b") - maxBytes) ?? endSeq + 1;
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

  /** Stored tokens of the messages after `afterSeq`, from the running totals. */
  tokensAfter(afterSeq: number): number {
    return this.tokensBetween(afterSeq, Number.MAX_SAFE_INTEGER);
  }

  /** Stored tokens of the messages after `afterSeq` through `throughSeq`: the difference of two running totals, in one read. */
  tokensBetween(afterSeq: number, throughSeq: number): number {
    const through = "COALESCE((SELECT running_tokens FROM messages WHERE seq <= ? ORDER BY seq DESC LIMIT 1), 0)";
    return numeric(this.sql.exec(`SELECT ${through} - ${through} AS n`, throughSeq, afterSeq).one(), "n");
  }

  /**
   * The first seq a request needs when it can read at most `maxTokens` of the
   * messages after `afterSeq`: older messages could not fit. It is moved back
   * to the start of its group, so a tool result never arrives without its call.
   */
  firstSeqWithin(afterSeq: number, maxTokens: number): number {
    const newest = this.sql.exec("SELECT seq, running_tokens AS t FROM messages ORDER BY seq DESC LIMIT 1").toArray()[0];
    if (newest === undefined) return afterSeq + 1;
    const lastSeq = numeric(newest, "seq");
    // When not even the last message fits, its group is still what a request needs.
    const from = this.firstReaching("running_tokens - tokens", afterSeq, lastSeq, numeric(newest, "t") - maxTokens) ?? lastSeq;
    const groupStart = this.seqOf("SELECT MAX(seq) AS seq FROM messages WHERE seq <= ? AND role != 'tool'", from);
    return Math.max(afterSeq + 1, groupStart ?? from);
  }

  /** The last message a turn stored (its user message, reply or results); what came after was appended outside any turn. */
  lastTurnSeq(): number {
    // Walked back from the newest row, it stops at the first a turn stored: a few rows, not the whole table. What
    // `POST …/tools/run` stored no model has read yet: not a turn's.
    return this.seqOf("SELECT seq FROM messages WHERE turn_id IS NOT NULL AND turn_id NOT LIKE ? ORDER BY seq DESC LIMIT 1", `${TOOLS_RUN_PREFIX}%`) ?? 0;
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
      const tokens = messageTokens(chatMessage(row.role, row.content, row.tool_calls, row.tool_call_id, row.images));
      running += tokens;
      this.sql.exec("UPDATE messages SET tokens = ?, running_tokens = ? WHERE seq = ?", tokens, running, numeric(row, "seq"));
    }
  }

  /**
   * The first seq after `afterSeq`, through `throughSeq`, whose `before` (a running total less the row's own part,
   * which never decreases along seq) is at least `threshold`; null when there is none. Found by halving the seqs
   * between, a primary-key lookup per step, where MIN(seq) … WHERE would read every row up to it: thousands in a
   * long conversation.
   */
  private firstReaching(before: string, afterSeq: number, throughSeq: number, threshold: number): number | null {
    // Whether the first row from seq `mid` on has reached it (no row left: it counts as reached). The bounds are cast:
    // a bound number may arrive as REAL, and (lo + hi) / 2 must halve in integers.
    const reached = `COALESCE((SELECT ${before} >= ? FROM messages WHERE seq >= (lo + hi) / 2 AND seq <= ? ORDER BY seq LIMIT 1), 1)`;
    return this.seqOf(
      `WITH RECURSIVE search(lo, hi) AS (
         SELECT CAST(? AS INTEGER), CAST(? AS INTEGER)
         UNION ALL
         SELECT CASE WHEN ${reached} THEN lo ELSE (lo + hi) / 2 + 1 END, CASE WHEN ${reached} THEN (lo + hi) / 2 ELSE hi END FROM search WHERE lo < hi
       )
       SELECT MIN(seq) AS seq FROM messages WHERE seq >= (SELECT lo FROM search WHERE lo = hi) AND seq <= ?`,
      afterSeq + 1,
      throughSeq + 1,
      threshold,
      throughSeq,
      threshold,
      throughSeq,
      throughSeq,
    );
  }

  /** The `seq` of a query's one row, or null when it has none or its seq is NULL (an aggregate over no rows). */
  private seqOf(query: string, ...bindings: (string | number)[]): number | null {
    const row = this.sql.exec(query, ...bindings).toArray()[0];
    return row ? numericOrNull(row, "seq") : null;
  }
}

/** A row of `SELECT ${STORED}`. */
function storedMessage(cells: readonly unknown[]): StoredMessage {
  return {
    seq: numericCell(cells[0], "seq"),
    turnId: textOrNullCell(cells[1], "turn_id"),
    createdAt: textCell(cells[2], "created_at"),
    message: withKnownTokens(chatMessage(cells[4], cells[5], cells[6], cells[7], cells[8]), numericCell(cells[3], "tokens")),
  };
}

/** The message of a row's role, content, tool_calls, tool_call_id and images (undefined before migration 0005 added it). */
function chatMessage(role: unknown, content: unknown, toolCalls: unknown, toolCallId: unknown, images: unknown): ChatMessage {
  switch (role) {
    case "assistant":
      return toolCalls
        ? { role: "assistant", content: textOrNullCell(content, "content"), tool_calls: jsonCell(ToolCalls, toolCalls, "tool_calls") }
        : { role: "assistant", content: textOrNullCell(content, "content") };
    case "tool":
      return { role: "tool", tool_call_id: textCell(toolCallId, "tool_call_id"), content: textCell(content, "content") };
    case "system":
      return { role: "system", content: textCell(content, "content") };
    default:
      return images
        ? { role: "user", content: [{ type: "text", text: textCell(content, "content") }, ...jsonCell(Images, images, "images")] }
        : { role: "user", content: textCell(content, "content") };
  }
}
