/**
 * Everything one request to a conversation reaches, built once by the Conversation object's `serve`/`read` (or by a
 * test in Node, with fakes): its owner and row, its database, the clock and the audit key, the user's apps, the
 * models, the other conversations, memory and R2. Every part of the house that serves a conversation takes the scope,
 * or the narrow part of it it needs (`Pick<ConversationScope, …>`).
 */
import type { Result } from "../core/problem";
import type { Summariser } from "../history/summary";
import type { AppPort } from "../hub/port";
import type { Env } from "../platform/env";
import { conversationObject } from "../platform/objects";
import type { DelegationStart } from "../protocol/delegation";
import type { ToolResultEvidence } from "../protocol/evidence";
import type { Owner } from "../protocol/owner";
import type { CompactionPolicy } from "../protocol/policies";
import type { Toolbox, ToolSpec } from "../protocol/tools";
import type { GuardModel, GuardModelInput, GuardModelVerdict } from "../tools/guard-model";
import type { ToolHost } from "../tools/calls";
import type { SemanticHit } from "../tools/semantic-search";
import type { ConversationDb, ConversationMeta } from "./store";
import { CanonicalResults } from "../reminders/loops";

/** The models a conversation calls besides the agent's own (src/model/): the summariser, the tool guard, ranking by meaning. */
export interface ModelPort {
  summariser(policy: CompactionPolicy): Summariser;
  askGuardModel(config: GuardModel, input: GuardModelInput, nonce: string | null): Promise<GuardModelVerdict>;
  /** Present only where the deployment has an embedding model (docs/tools.md, "Ranking by meaning"). */
  rankByMeaning?(query: string, tools: readonly string[]): Promise<SemanticHit[] | null>;
}

/** What a subagent's final answer carries to its parent's `delegate` call. */
export interface ChildAnswer {
  childConversationId: string;
  toolCallId: string;
  answer: string | null;
  childTurnIds: string[];
}

/** The user's other conversations, each in a Durable Object of its own: a subagent's child, a child's parent. */
export interface ConversationPort {
  /** Creates the child conversation of a `delegate` call and takes its first turn. */
  startDelegation(start: DelegationStart): Promise<Result<{ turnId: string }>>;
  /** The parent's side of a child's final answer: it closes the parent's `delegate` call. */
  closeInParent(parentConversationId: string, done: ChildAnswer): Promise<Result<{ toolResult: ToolResultEvidence }>>;
}

/** What a Conversation object answers other conversations of its user (checked: the class implements it). */
export interface ConversationObject {
  startDelegation(owner: Owner, start: DelegationStart): Promise<Result<{ turnId: string }>>;
  closeDelegation(owner: Owner, done: ChildAnswer): Promise<Result<{ toolResult: ToolResultEvidence }>>;
}

/** The user's other conversations, through the namespace; storage names derive from the authenticated tenant. */
export function conversationPort(env: Env, owner: Owner): ConversationPort {
  const object = (conversationId: string) => conversationObject(env, owner, conversationId) as unknown as ConversationObject;
  return {
    startDelegation: (start) => object(start.childConversationId).startDelegation(owner, start),
    closeInParent: (parentConversationId, done) => object(parentConversationId).closeDelegation(owner, done),
  };
}

/** Memory in KV, read for a turn's appendix (src/memory/). */
export interface MemoryPort {
  kv: KVNamespace;
  halfLifeHours: number | undefined;
}

/**
 * What outlives a request, kept by the Conversation object while it lives: the apps' contexts and tool declarations
 * past the trust boundary, so an unchanged one is not redacted again every turn, and the agent's toolbox.
 */
export class TurnCache {
  /** Contexts by key, at the version last pulled. */
  readonly contexts = new Map<string, { version: string; title: string; content: string }>();
  /** Apps' tools by qualified name, with the declaration they were admitted from. */
  readonly tools = new Map<string, { raw: string; spec: ToolSpec }>();
  /** The agent's toolbox as the hub last sent it, and its version: the hub sends it again only when it changed. */
  toolbox: { agent: string; version: string; toolbox: Toolbox } | null = null;
  /** Tool results as the loop detector compares them: each turn reads the same stored results again. */
  readonly results = new CanonicalResults();
}

export interface ConversationScope {
  readonly owner: Owner;
  /** The conversation's row as the request found it (with its nonce, once a turn has given it one). */
  readonly meta: ConversationMeta;
  readonly db: ConversationDb;
  readonly now: () => Date;
  /** Audit hashes are keyed per tenant: the same secret hashes differently in another tenant's records. */
  readonly auditKey: () => Promise<CryptoKey>;
  readonly apps: AppPort;
  readonly models: ModelPort;
  readonly conversations: ConversationPort;
  readonly memory: MemoryPort;
  /** Where cleared tool results are kept in full (R2). */
  readonly artifacts: R2Bucket;
  readonly cache: TurnCache;
}

/** The tools the runtime serves run on the apps; the guard and ranking by meaning ask the models. */
export function toolHost(scope: Pick<ConversationScope, "apps" | "models" | "meta">): ToolHost {
  const { apps, models, meta } = scope;
  return {
    callTool: (name, args, call) => apps.callTool(name, args, call),
    readSkill: (name) => apps.readSkill(name),
    providers: () => apps.providers(),
    listItems: (ref, params) => apps.listItems(ref, params),
    readContext: (ref, id, conversationId) => apps.readContext(ref, id, conversationId),
    callHook: (hook, params) => apps.callHook(hook, params),
    askGuardModel: (config, input) => models.askGuardModel(config, input, meta.nonce),
    ...(models.rankByMeaning ? { rankByMeaning: models.rankByMeaning } : {}),
  };
}
