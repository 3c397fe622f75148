import * as z from "zod";
import type { Database } from "../storage/database";
import { decodeRow, jsonText, numeric, text } from "../storage/decode";

/** Who initialised an MCP session: the client's own name for itself (`clientInfo`), for the events and the inspector. */
export const McpClientInfo = z.object({ name: z.string(), version: z.string() });
export type McpClientInfo = z.infer<typeof McpClientInfo>;

const SessionRow = z.object({
  session_id: z.string(),
  agent: z.string(),
  protocol_version: z.string(),
  client: jsonText(McpClientInfo),
  created_at: z.string(),
});

export interface McpSession {
  sessionId: string;
  agent: string;
  protocolVersion: string;
  client: McpClientInfo;
  createdAt: string;
}

/** A subscribed resource: its context's ref, and the version last read or announced (null before the first read). */
export interface McpSubscription {
  sessionId: string;
  uri: string;
  ref: string;
  version: string | null;
}

const SubscriptionRow = z.object({ session_id: z.string(), uri: z.string(), ref: z.string(), version: z.string().nullable() });

/** The MCP sessions served over this conversation and their subscriptions (migration 0019). */
export class McpSessionStore {
  constructor(private readonly sql: Database) {}

  get(sessionId: string): McpSession | null {
    const row = this.sql.exec("SELECT * FROM mcp_sessions WHERE session_id = ?", sessionId).toArray()[0];
    return row ? session(decodeRow(SessionRow, row, "mcp_sessions")) : null;
  }

  /** Oldest first. */
  list(): McpSession[] {
    return this.sql
      .exec("SELECT * FROM mcp_sessions ORDER BY created_at, session_id")
      .toArray()
      .map((row) => session(decodeRow(SessionRow, row, "mcp_sessions")));
  }

  add(s: McpSession): void {
    this.sql.exec(
      "INSERT INTO mcp_sessions (session_id, agent, protocol_version, client, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?)",
      s.sessionId,
      s.agent,
      s.protocolVersion,
      JSON.stringify(s.client),
      s.createdAt,
      s.createdAt,
    );
  }

  /** The session was used now. */
  seen(sessionId: string, at: string): void {
    this.sql.exec("UPDATE mcp_sessions SET last_seen_at = ? WHERE session_id = ?", at, sessionId);
  }

  /** The sessions last used before `before`, oldest first. */
  idleSince(before: string): McpSession[] {
    return this.sql
      .exec("SELECT * FROM mcp_sessions WHERE last_seen_at < ? ORDER BY last_seen_at", before)
      .toArray()
      .map((row) => session(decodeRow(SessionRow, row, "mcp_sessions")));
  }

  /** When the session used least recently was last used; null without sessions. */
  oldestSeen(): string | null {
    const row = this.sql.exec("SELECT MIN(last_seen_at) AS at FROM mcp_sessions").toArray()[0];
    return row && typeof row.at === "string" ? row.at : null;
  }

  /** The session and its subscriptions; the refs it alone watched, so the hub can stop telling this conversation of them. */
  remove(sessionId: string): string[] {
    const refs = this.subscriptions(sessionId).map((s) => s.ref);
    this.sql.exec("DELETE FROM mcp_subscriptions WHERE session_id = ?", sessionId);
    this.sql.exec("DELETE FROM mcp_stream_events WHERE session_id = ?", sessionId);
    this.sql.exec("DELETE FROM mcp_sessions WHERE session_id = ?", sessionId);
    return [...new Set(refs)].filter((ref) => this.watchers(ref).length === 0);
  }

  subscriptions(sessionId: string): McpSubscription[] {
    return this.sql
      .exec("SELECT * FROM mcp_subscriptions WHERE session_id = ? ORDER BY uri", sessionId)
      .toArray()
      .map((row) => subscription(decodeRow(SubscriptionRow, row, "mcp_subscriptions")));
  }

  /** Every session's subscriptions to resources of the context `ref`. */
  watchers(ref: string): McpSubscription[] {
    return this.sql
      .exec("SELECT * FROM mcp_subscriptions WHERE ref = ? ORDER BY session_id, uri", ref)
      .toArray()
      .map((row) => subscription(decodeRow(SubscriptionRow, row, "mcp_subscriptions")));
  }

  /** The contexts any session subscribed to. */
  watchedRefs(): string[] {
    return this.sql
      .exec("SELECT DISTINCT ref FROM mcp_subscriptions ORDER BY ref")
      .toArray()
      .map((r) => text(r, "ref"));
  }

  subscribe(s: McpSubscription): void {
    this.sql.exec("INSERT OR REPLACE INTO mcp_subscriptions (session_id, uri, ref, version) VALUES (?, ?, ?, ?)", s.sessionId, s.uri, s.ref, s.version);
  }

  /** The ref `uri` belonged to when no subscription of this conversation is left on it (the hub stops telling it), else null. */
  unsubscribe(sessionId: string, uri: string, ref: string): string | null {
    this.sql.exec("DELETE FROM mcp_subscriptions WHERE session_id = ? AND uri = ?", sessionId, uri);
    return this.watchers(ref).length === 0 ? ref : null;
  }

  announced(sessionId: string, uri: string, version: string): void {
    this.sql.exec("UPDATE mcp_subscriptions SET version = ? WHERE session_id = ? AND uri = ?", version, sessionId, uri);
  }
}

/** What a session's stream was sent (migration 0020), for a client that reconnects with Last-Event-ID. */
export interface StreamEvent {
  seq: number;
  streamId: string;
  message: string;
}

const StreamEventRow = z.object({ seq: z.number(), stream_id: z.string(), message: z.string() });

export class McpStreamEventStore {
  constructor(private readonly sql: Database) {}

  /**
   * Stores one message sent on a session's stream (`held`: while it had none open), keeping the session's last `keep`;
   * its sequence number. Numbers are the conversation's, shared by its sessions.
   */
  add(sessionId: string, streamId: string, message: string, keep: number, held = false): number {
    const seq = numeric(this.sql.exec("INSERT INTO mcp_stream_events (session_id, stream_id, message, held) VALUES (?, ?, ?, ?) RETURNING seq", sessionId, streamId, message, held ? 1 : 0).one(), "seq");
    this.sql.exec(
      "DELETE FROM mcp_stream_events WHERE session_id = ? AND seq < (SELECT MIN(seq) FROM (SELECT seq FROM mcp_stream_events WHERE session_id = ? ORDER BY seq DESC LIMIT ?))",
      sessionId,
      sessionId,
      keep,
    );
    return seq;
  }

  /** The highest number the session's stream was given; 0 before any. */
  last(sessionId: string): number {
    const row = this.sql.exec("SELECT MAX(seq) AS seq FROM mcp_stream_events WHERE session_id = ?", sessionId).toArray()[0];
    return row && typeof row.seq === "number" ? row.seq : 0;
  }

  /** What was kept while the session had no stream open, oldest first; no longer held once taken. */
  takeHeld(sessionId: string): StreamEvent[] {
    const held = this.sql
      .exec("SELECT seq, stream_id, message FROM mcp_stream_events WHERE session_id = ? AND held = 1 ORDER BY seq", sessionId)
      .toArray()
      .map((row) => {
        const r = decodeRow(StreamEventRow, row, "mcp_stream_events");
        return { seq: r.seq, streamId: r.stream_id, message: r.message };
      });
    this.sql.exec("UPDATE mcp_stream_events SET held = 0 WHERE session_id = ? AND held = 1", sessionId);
    return held;
  }

  /** What the session's stream was sent after `seq`, oldest first. */
  after(sessionId: string, streamId: string, seq: number): StreamEvent[] {
    return this.sql
      .exec("SELECT seq, stream_id, message FROM mcp_stream_events WHERE session_id = ? AND stream_id = ? AND seq > ? ORDER BY seq", sessionId, streamId, seq)
      .toArray()
      .map((row) => {
        const r = decodeRow(StreamEventRow, row, "mcp_stream_events");
        return { seq: r.seq, streamId: r.stream_id, message: r.message };
      });
  }
}

function session(r: z.output<typeof SessionRow>): McpSession {
  return { sessionId: r.session_id, agent: r.agent, protocolVersion: r.protocol_version, client: r.client, createdAt: r.created_at };
}

function subscription(r: z.output<typeof SubscriptionRow>): McpSubscription {
  return { sessionId: r.session_id, uri: r.uri, ref: r.ref, version: r.version };
}
