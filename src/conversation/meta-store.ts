import * as z from "zod";
import type { CompactionPolicy, TrimPolicy } from "../protocol/policies";
import type { Database } from "../storage/database";
import { decodeRow, jsonText } from "../storage/decode";
import { AgentContexts, ResultPolicies, StoredCompactionPolicy } from "./columns";

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

/** The `conversation` row, as migrations 0001–0014 leave it. */
const MetaRow = z
  .object({
    conversation_id: z.string(),
    tenant: z.string(),
    user: z.string(),
    agent: z.string().nullable(),
    agent_contexts: jsonText(AgentContexts),
    result_policies: jsonText(ResultPolicies),
    identity: z.string().nullable(),
    persona_agent: z.string().nullable(),
    nonce: z.string().nullable(),
    compaction_policy: jsonText(StoredCompactionPolicy),
    created_at: z.string(),
    ended_at: z.string().nullable(),
    parent_conversation_id: z.string().nullable(),
    parent_tool_call_id: z.string().nullable(),
    depth: z.number(),
  })
  .transform(
    (r): ConversationMeta => ({
      conversationId: r.conversation_id,
      tenant: r.tenant,
      user: r.user,
      agent: r.agent,
      agentContexts: r.agent_contexts,
      resultPolicies: r.result_policies,
      identity: r.identity,
      personaAgent: r.persona_agent,
      nonce: r.nonce,
      compactionPolicy: r.compaction_policy,
      createdAt: r.created_at,
      endedAt: r.ended_at,
      parent: r.parent_conversation_id && r.parent_tool_call_id !== null ? { conversationId: r.parent_conversation_id, toolCallId: r.parent_tool_call_id } : null,
      depth: r.depth,
    }),
  );

/** The conversation's one `conversation` row: who owns it, its agent, policies, identity and nonce. */
export class MetaStore {
  constructor(private readonly sql: Database) {}

  get(): ConversationMeta | null {
    const row = this.sql.exec("SELECT * FROM conversation").toArray()[0];
    return row ? decodeRow(MetaRow, row, "conversation") : null;
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
    return this.get()?.nonce ?? null;
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
}
