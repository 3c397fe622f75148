import type { AppHub } from "../../hub/app-hub";
import type { CompactionPolicy } from "../../protocol/policies";
import type { Summariser } from "../../history/summary";
import type { TurnResult } from "../../protocol/frontend";
import type { ApprovalStore } from "../approval-store";
import type { History } from "../history";
import type { ConversationMeta, ConversationDb } from "../store";
import type { TurnSections } from "../turn-sections";
import type { ToolStateStore } from "../tool-state-store";
import type { ToolHost } from "../../tools/run";
import type { ToolSpec } from "../../protocol/tools";
import type { DelegationStart } from "../../protocol/delegation";
import type { Result } from "../../core/problem";
import type { DelegationStore } from "../delegation-store";

/** What a turn reaches outside itself: the conversation's storage, the hub, the clock and the readers of KV and R2. */
export interface TurnDeps {
  store: ConversationDb;
  hub: DurableObjectStub<AppHub>;
  meta: ConversationMeta;
  auditKey: CryptoKey;
  now: () => Date;
  history: History;
  approvals: ApprovalStore;
  /** The tools the conversation loaded from its catalog and the skills it read. */
  toolState: ToolStateStore;
  /** Where the tools the runtime serves run: the apps, through the hub. */
  tools: ToolHost;
  summariser: (policy: CompactionPolicy) => Summariser;
  /** Contexts past the trust boundary, by key, at the version last pulled (kept by the Conversation object while it lives). */
  admittedContexts: Map<string, { version: string; title: string; content: string }>;
  /** Apps' tools past the trust boundary, by qualified name, with the declaration they were admitted from. */
  admittedTools: Map<string, { raw: string; spec: ToolSpec }>;
  /** The conversation's `delegate` calls and the children they started. */
  delegations: DelegationStore;
  /** Starts a subagent in a child conversation of its own and takes its first turn (the Conversation object's, through its namespace). */
  delegate?: (start: DelegationStart) => Promise<Result<{ turnId: string }>>;
  /** Memory and task state for this turn's appendix, read by the caller (KV, R2). */
  sections?: (agent: { memory: boolean }, message: string | undefined) => Promise<TurnSections>;
  /** The gateway checked the reply with the output hooks already: the turn does not check it again. */
  outputReviewed?: boolean;
  /** A gateway answer still in progress when this message came: the interrupted-work note names it. */
  interruptedRun?: { runId: string; turnId: string };
}

/** A turn's result as stored: the model input is rebuilt from the history on a replay. */
export type StoredTurnResult = Omit<TurnResult, "messages" | "replayed">;
