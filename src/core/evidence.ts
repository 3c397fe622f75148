/**
 * The evidence record of one turn, in the vocabulary of the draft Agent Context
 * standard: what was available (surface), what was chosen or left out and why
 * (selection), limits and use (budget), the ordered blocks (assembly), where each
 * became visible (injection), and what could not be read (missing).
 */
import type { Truncation } from "./budget";
import type { LedgerKind, MissingReason } from "./ledger";

export type OmissionReason = "unchanged" | "empty" | "budget" | "missing" | "low_relevance";
export type InjectionMarker = "first" | "updated" | "removed";

export interface SurfaceItem {
  id: string;
  kind: "runtime_state" | "external_resource";
  source: { ref: string; itemId?: string; digest?: string };
}

export interface AssemblyBlock {
  kind: "system_prompt" | "tools" | "session_history" | "user_message" | "context" | "resource" | "memory" | "task_state";
  id?: string;
  tokens: number;
  target: "system_prompt" | "tool_definitions" | "message_history" | "user_message" | "user_message_appendix";
}

export interface MissingContext {
  id: string;
  reason: MissingReason;
  detail: string;
  severity: "warning";
}

export interface ContextEnvelope {
  standard: "agent-context/draft";
  turnId: string;
  conversationId: string;
  createdAt: string;
  surface: { items: SurfaceItem[] };
  selection: {
    selected: { id: string; reason: "first" | "updated" }[];
    omitted: { id: string; reason: OmissionReason }[];
    removed: { id: string; reason: "detached" | "empty" }[];
  };
  budget: {
    /** The turn's token budget, or null when none was given. */
    maxTokens: number | null;
    usedTokens: number;
    appendixChars: { limit: number; used: number };
    /** What was given up to fit, lowest class and oldest first. */
    truncations: Truncation[];
  };
  assembly: { blocks: AssemblyBlock[] };
  injection: { id: string; kind: LedgerKind; target: "user_message_appendix"; marker: InjectionMarker }[];
  missing: MissingContext[];
  /** What redacting the user's own message did: rule, place and keyed hash of each secret, never the value. */
  message?: { redactions: { rule: string; offset: number; length: number; hash: string }[] };
  /** What redacting the apps' contexts and persona note this turn pulled did (`id`: the context, or `persona`); never the value. */
  contexts?: { redactions: { id: string; rule: string; offset: number; length: number; hash: string }[] };
  /**
   * The history the model reads: the summary in effect, where the loaded messages begin, how many results are stubs,
   * and the image boundary (the images of messages through that seq are placeholders; only a compaction moves it).
   * Turns stored before boundaries existed have `earlierImages` instead: how many images of earlier messages stayed
   * visible (the policy's keepImages less the message's own); their replays use it.
   */
  history?: { summaryThroughSeq: number | null; loadedFromSeq: number | null; stubs: number; imagesHiddenThroughSeq?: number; earlierImages?: number };
  /** The compaction this turn ran before it was assembled. */
  compaction?: CompactionEvidence;
  /** Tool calls this turn closed without a result, and what protecting each result it carried did. */
  tools?: {
    /** `awaitingApproval`: the call was still waiting for the user's approval; the model reads that it was not run. */
    unanswered: { id: string; name: string; awaitingApproval?: true }[];
    results: {
      toolCallId: string;
      tool: string;
      /** Rule, place and keyed hash of each redacted secret; never the value. */
      redactions: { rule: string; offset: number; length: number; path?: string | undefined; hash: string }[];
      trimmed: { strategy: string; originalTokens: number; keptTokens: number } | null;
    }[];
    /** Results of the request's tool work the model read as a stand-in this turn (they did not fit); stored whole. */
    notShown?: { seq: number; toolCallId: string; tool: string; tokens: number }[];
    /** The tool list the model read, in order: each tool's model name, where it comes from, and its tokens. */
    offered?: { name: string; qualified: string | null; source: "bound" | "runtime" | "loaded"; tokens: number }[];
    /** Calls the runtime ran this turn (apps' tools and its own), with how each ended and how long it took. */
    ran?: { toolCallId: string; tool: string; servedBy: string; outcome: string; ms: number }[];
    /** Tools search_tools loaded this turn, and the query that found each. */
    loaded?: { name: string; query: string; toolCallId: string }[];
    /** Skills read_skill opened this turn. */
    linked?: { name: string; toolCallId: string }[];
    /** The skills menu: its tokens, its budget, and every description it shortened or left out, and why. */
    skillsMenu?: { tokens: number; budgetTokens: number; cut: { name: string; reason: "shortened" | "name_only"; keptChars: number; droppedChars: number }[] };
  };
  /** The turn's pipeline, stage by stage, in order (load, pull, admit, recall, identify, tools, reminders, compact, assemble, commit). */
  stages?: StageRecord[];
}

/** What one stage of the turn's pipeline decided, in a few figures or names, and how long it took (the Worker's clock). */
export interface StageRecord {
  stage: string;
  ms: number;
  decided: Record<string, number | string | boolean | readonly string[]>;
}

/** One compaction, in the draft standard's terms: what it covered and what it knowingly lost. */
export interface CompactionEvidence {
  id: number;
  reason: "auto" | "manual" | "clear";
  tokens: { before: number; after: number; trigger: number | null; target: number | null };
  /**
   * The images it hid (all but the newest `keepImages` of the history): the messages through `hiddenThroughSeq` show
   * placeholders from now on; `messages`, `images` and `savedTokens` count those out of a new summary. Null or absent
   * when it hid none.
   */
  images?: { hiddenThroughSeq: number; messages: number; images: number; savedTokens: number } | null;
  /** Tool results the model now reads as stubs, and where their full text is. */
  cleared: { seq: number; savedTokens: number; pointer: string }[];
  summary: {
    coverage: { throughSeq: number; messages: number; groups: number; tokens: number };
    summariser: string;
    trust: "user" | "assistant" | "external";
    loss: readonly string[];
  } | null;
  /** Contexts whose injection the summary covered: they are injected again. */
  reinjected: string[];
  reachesTarget: boolean;
}

export interface TurnUsage {
  system: number;
  /** The tool list (`TurnResult.tools`), counted like text. */
  tools: number;
  history: number;
  message: number;
  contexts: number;
  memory: number;
  taskState: number;
  total: number;
}
