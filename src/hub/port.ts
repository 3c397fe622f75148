/**
 * What a conversation reaches of the user's apps: the hub, behind a narrow interface. The Conversation object holds
 * the hub's stub as an `AppPort`; tests of the turn in Node give it a fake. This module imports no Durable Object, so
 * the conversation and the hub never import each other.
 */
import type { Counts } from "../telemetry/metrics";
import type { Observation } from "../core/ledger";
import type { Result } from "../core/problem";
import type { HookAnswer, HookHost } from "../hooks/chain";
import type { Env } from "../platform/env";
import { conversationObject, hubObject } from "../platform/objects";
import type { ContextData, ContextList } from "../protocol/context-data";
import type { AgentInfo, ConversationSummary, ProviderInfo, ResourceInfo } from "../protocol/frontend";
import type { HookCallParams, HookSpec } from "../protocol/hooks";
import type { ContextsListParams } from "../protocol/methods";
import type { Owner } from "../protocol/owner";
import type { SkillContent, ToolRun, Toolbox } from "../protocol/tools";
import type { SemanticHit } from "../tools/semantic-search";
import type { GatewayHead } from "./gateway-heads";

/** A context pulled for a turn, as the conversation will diff it. */
/** `kept`: the hub's kept answer of a provider that notifies its changes, not asked again this turn. */
export type PulledContext = Observation & { ref: string; itemId?: string; kept?: true };

export interface PreparedTurn {
  /** The agent, with its tools, skills, hooks and mounts as registered now; null when the caller's is still current. */
  toolbox: Toolbox | null;
  /** Names this toolbox while it stays current: a change to any registration, or to an app's socket, moves it. */
  toolboxVersion: string;
  pulled: PulledContext[];
}

/** A value, or the promise of one: the hub answers some calls at once, and through its stub every answer is a promise. */
type Answer<T> = T | Promise<T>;

export interface AppPort extends HookHost {
  agent(fullId: string): Answer<AgentInfo | null>;
  provider(ref: string): Answer<ProviderInfo | null>;
  providers(): Answer<ProviderInfo[]>;
  /** An agent's tools, skills, hooks and mounts as registered now; null for an unknown agent. */
  toolbox(agentId: string): Answer<Toolbox | null>;
  /**
   * Everything a turn needs from the apps in one call: the agent's toolbox and every context it and the user attached
   * (none when `runtime` is null), pulled in parallel under the deadline. `active`: the conversation becomes the one
   * the user's apps push resources to. `knownToolbox`: the version of the toolbox the caller keeps, not sent again
   * while it is current.
   */
  prepareTurn(conversationId: string, agentId: string, runtime: { ref: string; itemId?: string | undefined }[] | null, active: boolean, knownToolbox: string | null): Promise<PreparedTurn | null>;
  readContext(ref: string, id: string | undefined, conversationId: string): Promise<Result<ContextData | null>>;
  listItems(ref: string, params: Omit<ContextsListParams, "provider">): Promise<Result<ContextList>>;
  item(ref: string, id: string): Promise<Result<ContextData | null>>;
  callTool(name: string, args: unknown, meta: { conversationId: string; toolCallId: string }): Promise<ToolRun>;
  readSkill(name: string): Promise<Result<SkillContent>>;
  /** The catalog tools among `names` closest in meaning to `query`, best first; null when no embedding model answered. */
  rankByMeaning(query: string, names: readonly string[]): Promise<SemanticHit[] | null>;
  callHook(hook: HookSpec, params: HookCallParams): Promise<HookAnswer>;
  /** A hook told of something without waiting for its answer (`turn.end`): false when its app is not connected. */
  notifyHook(hook: HookSpec, params: HookCallParams): Answer<boolean>;
  conversationCreated(conversation: Pick<ConversationSummary, "id" | "agent" | "createdAt">, active?: boolean): Answer<void>;
  conversationEnded(conversationId: string, endedAt?: string): Answer<void>;
  notifyResourceRemoved(conversationId: string, fullId: string): Answer<void>;
  gatewayHeadMoved(head: GatewayHead): Answer<void>;
  /** Counts added to the agent's counters (src/telemetry/metrics.ts): after a turn, a usage report, a tool run. */
  countMetrics(agent: string, counts: Counts): Answer<void>;
  /** The conversation starts (or stops) being told when the context `ref`'s app says it changed (`contextChanged`). */
  watchContext(conversationId: string, ref: string, watching: boolean): Answer<void>;
}

/** A session resource an app pushes into a conversation (docs/protocol.md, `resources/push`). */
export interface PushedResource {
  fullId: string;
  title: string;
  content: string;
  summary?: string | undefined;
  type?: string | undefined;
}

/** What the hub asks of a conversation for its apps: the Conversation object implements it. */
export interface ConversationInbox {
  pushResource(owner: Owner, app: string, resource: PushedResource): Promise<Result<ResourceInfo>>;
  removeResource(owner: Owner, fullId: string, options: { notifyApp: boolean }): Promise<Result<{ removed: string }>>;
  /** The app of a context this conversation watches says it changed (`contexts/changed`): read it again, tell subscribers. */
  contextChanged(owner: Owner, ref: string): Promise<void>;
}

/** A conversation of the hub's user, as the hub reaches it: named from the authenticated tenant, never from a frame. */
export function conversationInbox(env: Env, owner: Owner, conversationId: string): ConversationInbox {
  // The stub's methods are the Conversation object's, which implements ConversationInbox; typed here without importing it.
  return conversationObject(env, owner, conversationId) as unknown as ConversationInbox;
}

/** The user's hub as a conversation reaches it (the same object src/hub/stub.ts types as the AppHub class). */
export function appPort(env: Env, owner: Owner): AppPort {
  // The stub's methods are the AppHub's, which implements AppPort; typed here without importing the class.
  return hubObject(env, owner) as unknown as AppPort;
}
