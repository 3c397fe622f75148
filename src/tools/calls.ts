/**
 * A round of tool calls as the runtime sees it: where the calls run (the apps, behind `ToolHost`), a call the model
 * made, and what running it gave. run.ts runs them; gate.ts decides first which may run.
 */
import type { Result } from "../core/problem";
import type { ContextData, ContextList } from "../protocol/context-data";
import type { ProviderInfo } from "../protocol/frontend";
import type { ContextsListParams } from "../protocol/methods";
import type { SkillContent, ToolRun } from "../protocol/tools";
import type { HookHost } from "../hooks/chain";
import type { GuardModel, GuardModelInput, GuardModelVerdict } from "./guard-model";
import type { Ranker, SemanticHit } from "./semantic-search";

/** What running tools needs from the apps' side (the hub): a narrow interface, so this module knows no Durable Object. */
export interface ToolHost extends HookHost {
  /** Asks the agent's model guard about one call (the deployment's upstream); absent where there is none to ask. */
  askGuardModel?(config: GuardModel, input: GuardModelInput): Promise<GuardModelVerdict>;
  callTool(name: string, args: unknown, meta: { conversationId: string; toolCallId: string }): Promise<ToolRun>;
  readSkill(name: string): Promise<Result<SkillContent>>;
  providers(): Promise<ProviderInfo[]> | ProviderInfo[];
  listItems(ref: string, params: Omit<ContextsListParams, "provider">): Promise<Result<ContextList>>;
  readContext(ref: string, id: string | undefined, conversationId: string): Promise<Result<ContextData | null>>;
  /**
   * The catalog tools among `tools` closest in meaning to `query`, best first, or null when the model did not answer:
   * present only where the deployment has an embedding model (docs/tools.md, "Ranking by meaning").
   */
  rankByMeaning?(query: string, tools: readonly string[]): Promise<SemanticHit[] | null>;
}

/** A call the model made, as its message holds it. */
export interface ModelCall {
  id: string;
  name: string;
  arguments: string;
}

export interface RanCall {
  toolCallId: string;
  /** What the model called it. */
  tool: string;
  /** `app:tool`, or the runtime tool's name. */
  servedBy: string;
  /**
   * `delegated`: a `delegate` call started its subagent (its result comes later); `refused`: a `delegate` call that may
   * not run; `denied`: the agent's guard denied it (not run), its rule's reason in `reason`.
   */
  outcome: "denied" | "ok" | "tool_error" | "unknown_tool" | "invalid_arguments" | "offline" | "disconnected" | "timeout" | "error" | "invalid" | "not_found" | "delegated" | "refused";
  ms: number;
  /** Why the call was denied: the rule's or the hook's reason. */
  reason?: string;
  /** Who denied it: `guard`, `model-guard`, or a hook's id. */
  deniedBy?: string;
  /** Which ranking answered a search_tools call. */
  ranker?: Ranker;
}

export interface CallResult {
  toolCallId: string;
  content: string;
  /** The runtime wrote it around text already neutralised (an error note): it is only redacted and trimmed. */
  runtimeWritten: boolean;
}
