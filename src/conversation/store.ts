import type { LedgerEntry } from "../core/ledger";
import type { LedgerKind } from "../protocol/evidence";
import { DEFAULT_COMPACTION_POLICY } from "../history/policy";
import type { CompactionPolicy } from "../protocol/policies";
import type { TrimPolicy } from "../protocol/policies";
import type { AttachmentInfo, ContextEvent, ResourceInfo } from "../protocol/frontend";
import { MessageStore } from "./message-store";

export interface ConversationMeta {
  conversationId: string;
  tenant: string;
  user: string;
  agent: string | null;
  agentContexts: string[];
  /** The agent's tool-result policies as of its latest turn. */
  resultPolicies: Record<string, TrimPolicy>;
  /** The frozen system message, once the first turn has set it. */
  identity: string | null;
  /** The agent whose persona the model has been told to take. */
  personaAgent: string | null;
  /** What the runtime's own tags carry (src/core/runtime-tag.ts); null for conversations started before nonces. */
  nonce: string | null;
  compactionPolicy: CompactionPolicy;
  createdAt: string;
  endedAt: string | null;
  /** A subagent's conversation: the conversation and `delegate` call that started it; null for one nobody delegated. */
  parent: { conversationId: string; toolCallId: string } | null;
  /** How deep it is among subagents: 0 unless a `delegate` call started it (then its parent's depth + 1). */
  depth: number;
}

export interface InjectedEntry extends LedgerEntry {
  messageSeq: number;
}

export interface ResourceRecord extends ResourceInfo {
  content: string;
}

export interface TurnRecord {
  turnId: string;
  requestDigest: string;
  systemPrompt: string;
  /** The turn's last stored message. */
  userSeq: number;
  /** The stored messages the model read, as [from, to] seq ranges (seq 0 is the summary); empty when it read all up to `userSeq`. */
  historyView: [number, number][];
  /** The latest compaction when the turn was built: its summary and stubs are what the turn read. */
  compactionId: number;
  result: string;
}

type Row = Record<string, SqlStorageValue>;

/**
 * The Conversation object's SQLite, one method per question or change; no
 * policy lives here. Messages are in `MessageStore`; this adds the rest.
 */
export class ConversationStore extends MessageStore {
  meta(): ConversationMeta | null {
    const row = this.sql.exec<Row>("SELECT * FROM conversation").toArray()[0];
    if (!row) return null;
    return {
      conversationId: row.conversation_id as string,
      tenant: row.tenant as string,
      user: row.user as string,
      agent: row.agent as string | null,
      agentContexts: JSON.parse(row.agent_contexts as string) as string[],
      resultPolicies: JSON.parse(row.result_policies as string) as Record<string, TrimPolicy>,
      identity: row.identity as string | null,
      personaAgent: row.persona_agent as string | null,
      nonce: (row.nonce as string | null) ?? null,
      compactionPolicy: { ...DEFAULT_COMPACTION_POLICY, ...(JSON.parse(row.compaction_policy as string) as Partial<CompactionPolicy>) },
      createdAt: row.created_at as string,
      endedAt: row.ended_at as string | null,
      parent: row.parent_conversation_id ? { conversationId: row.parent_conversation_id as string, toolCallId: row.parent_tool_call_id as string } : null,
      depth: (row.depth as number | null) ?? 0,
    };
  }

  create(meta: Omit<ConversationMeta, "endedAt" | "identity" | "personaAgent" | "parent" | "depth"> & Partial<Pick<ConversationMeta, "parent" | "depth">>): void {
    this.sql.exec(
      "INSERT INTO conversation (id, conversation_id, tenant, user, agent, agent_contexts, result_policies, compaction_policy, created_at, nonce, parent_conversation_id, parent_tool_call_id, depth) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      meta.conversationId,
      meta.tenant,
      meta.user,
      meta.agent,
      JSON.stringify(meta.agentContexts),
      JSON.stringify(meta.resultPolicies),
      JSON.stringify(meta.compactionPolicy),
      meta.createdAt,
      meta.nonce,
      meta.parent?.conversationId ?? null,
      meta.parent?.toolCallId ?? null,
      meta.depth ?? 0,
    );
  }

  setCompactionPolicy(policy: CompactionPolicy): void {
    this.sql.exec("UPDATE conversation SET compaction_policy = ?", JSON.stringify(policy));
  }

  /** A conversation created before nonces gets one, unless its identity block (which would have to name it) is frozen. */
  giveNonce(nonce: string): string | null {
    this.sql.exec("UPDATE conversation SET nonce = ? WHERE nonce IS NULL AND identity IS NULL", nonce);
    return this.meta()?.nonce ?? null;
  }

  setIdentity(identity: string, personaAgent: string): void {
    this.sql.exec("UPDATE conversation SET identity = COALESCE(identity, ?), persona_agent = ?", identity, personaAgent);
  }

  /** The message that carries the latest persona switch note. */
  setPersonaSeq(seq: number): void {
    this.sql.exec("UPDATE conversation SET persona_seq = ?", seq);
  }

  /**
   * When the message with the persona switch note is summarised or cleared
   * away, the persona in effect is unknown again (''), so the next turn adds
   * the note once more; the frozen identity block alone would name the first agent.
   */
  forgetPersonaThrough(throughSeq: number): void {
    this.sql.exec("UPDATE conversation SET persona_agent = '', persona_seq = NULL WHERE persona_seq <= ?", throughSeq);
  }

  setAgent(agent: string, contexts: readonly string[], resultPolicies: Record<string, TrimPolicy>): void {
    this.sql.exec("UPDATE conversation SET agent = ?, agent_contexts = ?, result_policies = ?", agent, JSON.stringify(contexts), JSON.stringify(resultPolicies));
  }

  end(at: string): void {
    this.sql.exec("UPDATE conversation SET ended_at = ? WHERE ended_at IS NULL", at);
  }

  // ── the context ledger ──

  /** The ledger, each entry with the seq of the message that carried its injection. */
  ledger(): InjectedEntry[] {
    return this.sql
      .exec<Row>("SELECT kind, key, title, version, message_seq FROM context_versions")
      .toArray()
      .map((r) => ({ kind: r.kind as LedgerKind, key: r.key as string, title: r.title as string, version: r.version as string, messageSeq: r.message_seq as number }));
  }

  recordInjection(entry: LedgerEntry, turnId: string, messageSeq: number, at: string): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO context_versions (kind, key, title, version, turn_id, message_seq, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      entry.kind,
      entry.key,
      entry.title,
      entry.version,
      turnId,
      messageSeq,
      at,
    );
  }

  forget(kind: LedgerKind, key: string): void {
    this.sql.exec("DELETE FROM context_versions WHERE kind = ? AND key = ?", kind, key);
  }

  /** Forgets the contexts whose injection is in none of `shown`: the model can no longer read it, so it is injected again. */
  forgetInjectedOutside(shown: ReadonlySet<number>): void {
    for (const row of this.sql.exec<Row>("SELECT kind, key, message_seq FROM context_versions").toArray()) {
      if (!shown.has(row.message_seq as number)) this.forget(row.kind as LedgerKind, row.key as string);
    }
  }

  /** Forgets the contexts whose injection is in messages 1..`throughSeq`, so their current value is injected again. */
  forgetInjectedThrough(throughSeq: number): string[] {
    return this.sql.exec<Row>("DELETE FROM context_versions WHERE message_seq <= ? RETURNING key", throughSeq).toArray().map((r) => r.key as string);
  }

  // ── runtime attachments ──

  attachments(): AttachmentInfo[] {
    return this.sql
      .exec<Row>("SELECT * FROM attachments ORDER BY created_at, key")
      .toArray()
      .map((r) => ({
        key: r.key as string,
        context: r.ref as string,
        ...(r.item_id === null ? {} : { itemId: r.item_id as string }),
        createdAt: r.created_at as string,
      }));
  }

  attach(key: string, ref: string, itemId: string | undefined, at: string): boolean {
    return this.sql.exec("INSERT OR IGNORE INTO attachments (key, ref, item_id, created_at) VALUES (?, ?, ?, ?)", key, ref, itemId ?? null, at)
      .rowsWritten > 0;
  }

  detach(key: string): boolean {
    return this.sql.exec("DELETE FROM attachments WHERE key = ?", key).rowsWritten > 0;
  }

  // ── session resources ──

  resources(): ResourceRecord[] {
    return this.sql.exec<Row>("SELECT * FROM resources ORDER BY updated_at, full_id").toArray().map(resourceRecord);
  }

  resource(fullId: string): ResourceRecord | null {
    const row = this.sql.exec<Row>("SELECT * FROM resources WHERE full_id = ?", fullId).toArray()[0];
    return row ? resourceRecord(row) : null;
  }

  putResource(r: Omit<ResourceRecord, "sizeChars">): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO resources (full_id, app, title, content, summary, type, version, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      r.fullId,
      r.app,
      r.title,
      r.content,
      r.summary ?? null,
      r.type ?? null,
      r.version,
      r.updatedAt,
    );
  }

  deleteResource(fullId: string): boolean {
    return this.sql.exec("DELETE FROM resources WHERE full_id = ?", fullId).rowsWritten > 0;
  }

  // ── turns ──

  /** The turn that read the newest user message (the last stored one when several did): the one a model's answer follows. */
  latestTurnId(): string | null {
    return this.sql.exec<{ turn_id: string }>("SELECT turn_id FROM turns ORDER BY user_seq DESC, created_at DESC LIMIT 1").toArray()[0]?.turn_id ?? null;
  }

  turn(turnId: string): TurnRecord | null {
    const row = this.sql.exec<Row>("SELECT * FROM turns WHERE turn_id = ?", turnId).toArray()[0];
    if (!row) return null;
    return {
      turnId: row.turn_id as string,
      requestDigest: row.request_digest as string,
      systemPrompt: row.system_prompt as string,
      userSeq: row.user_seq as number,
      historyView: JSON.parse(row.history_view as string) as [number, number][],
      compactionId: row.compaction_id as number,
      result: row.result as string,
    };
  }

  /** The system message the latest turn gave the model, or null before the first turn. */
  latestSystemPrompt(): string | null {
    const row = this.sql.exec<{ p: string }>("SELECT system_prompt AS p FROM turns ORDER BY user_seq DESC, created_at DESC LIMIT 1").toArray()[0];
    return row?.p ?? null;
  }

  saveTurn(t: TurnRecord, at: string): void {
    this.sql.exec(
      "INSERT INTO turns (turn_id, request_digest, system_prompt, user_seq, history_view, compaction_id, result, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      t.turnId,
      t.requestDigest,
      t.systemPrompt,
      t.userSeq,
      JSON.stringify(t.historyView),
      t.compactionId,
      t.result,
      at,
    );
  }

  // ── events ──

  addEvent(turnId: string | null, type: string, subject: string | null, data: Record<string, unknown>, at: string): void {
    this.sql.exec("INSERT INTO events (turn_id, type, subject, data, at) VALUES (?, ?, ?, ?, ?)", turnId, type, subject, JSON.stringify(data), at);
  }

  /** The latest `reminder.fired` event's reason among those of this kind that `matches` accepts, newest first; null when none. */
  lastReminderReason(kind: string, matches: (reason: string) => boolean): string | null {
    for (const r of this.sql.exec<{ data: string }>("SELECT data FROM events WHERE type = 'reminder.fired' AND subject = ? ORDER BY seq DESC", kind)) {
      const reason = (JSON.parse(r.data) as { reason?: unknown }).reason;
      if (typeof reason === "string" && matches(reason)) return reason;
    }
    return null;
  }

  /**
   * The corrective notes continuations fired since the user message at `userSeq` (`kind\0reason`): the next user
   * message does not note the same again.
   */
  continuationReminders(userSeq: number): Set<string> {
    const rows = this.sql.exec<{ subject: string; data: string }>(
      "SELECT subject, data FROM events WHERE type = 'reminder.fired' AND json_extract(data, '$.continuation') = 1 AND json_extract(data, '$.userSeq') = ?",
      userSeq,
    );
    return new Set(rows.toArray().map((r) => `${r.subject}\u0000${String((JSON.parse(r.data) as { reason?: unknown }).reason)}`));
  }

  events(after: number, limit: number): ContextEvent[] {
    return this.sql
      .exec<Row>("SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?", after, limit)
      .toArray()
      .map((r) => ({
        seq: r.seq as number,
        turnId: r.turn_id as string | null,
        type: r.type as string,
        subject: r.subject as string | null,
        data: JSON.parse(r.data as string) as Record<string, unknown>,
        at: r.at as string,
      }));
  }
}

/** Token counts and running totals for messages stored before rows carried them (migration 0004). */
function resourceRecord(row: Row): ResourceRecord {
  const content = row.content as string;
  return {
    fullId: row.full_id as string,
    app: row.app as string,
    title: row.title as string,
    content,
    ...(row.summary === null ? {} : { summary: row.summary as string }),
    ...(row.type === null ? {} : { type: row.type as string }),
    version: row.version as string,
    sizeChars: content.length,
    updatedAt: row.updated_at as string,
  };
}
