/**
 * The evidence record of one turn, in the vocabulary of the draft Agent Context
 * standard: what was available (surface), what was chosen or left out and why
 * (selection), limits and use (budget), the ordered blocks (assembly), where each
 * became visible (injection), and what could not be read (missing).
 */
import * as z from "zod";
import { ToolAnnotations } from "./methods";
import { HookCall, HookPoint } from "./hooks";

/** Contexts (an app's provider) and resources (pushed by an app) are separate namespaces of the ledger. */
export const LedgerKind = z.enum(["context", "resource"]);
export type LedgerKind = z.infer<typeof LedgerKind>;

/** Why a context could not be read this turn. */
export const MissingReason = z.enum(["offline", "timeout", "error", "invalid", "unknown_provider", "unsupported", "withheld"]);
export type MissingReason = z.infer<typeof MissingReason>;

/** What a budget item is: the turn's parts the runtime may give up, whole, to fit. */
export const BudgetKind = z.enum(["identity", "user_message", "history", "tool_results", "task_state", "context", "resource", "memory"]);
export type BudgetKind = z.infer<typeof BudgetKind>;

/** A budget class: 0 identity and the current message (never given up), 1 current, 2 memory, 3 history. */
export const Priority = z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]);
export type Priority = z.infer<typeof Priority>;

/** One item given up to fit the budget. */
export const Truncation = z.object({
  id: z.string(),
  kind: BudgetKind,
  priority: Priority,
  tokens: z.number(),
});
export type Truncation = z.infer<typeof Truncation>;

export const OmissionReason = z.enum(["unchanged", "empty", "budget", "missing", "low_relevance", "hook"]);
export type OmissionReason = z.infer<typeof OmissionReason>;
export const InjectionMarker = z.enum(["first", "updated", "removed"]);
export type InjectionMarker = z.infer<typeof InjectionMarker>;

export const SurfaceItem = z.object({
  id: z.string(),
  kind: z.enum(["runtime_state", "external_resource"]),
  source: z.object({ ref: z.string(), itemId: z.string().optional(), digest: z.string().optional() }),
});
export type SurfaceItem = z.infer<typeof SurfaceItem>;

export const AssemblyBlock = z.object({
  kind: z.enum(["system_prompt", "tools", "session_history", "user_message", "context", "resource", "memory", "task_state"]),
  id: z.string().optional(),
  tokens: z.number(),
  target: z.enum(["system_prompt", "tool_definitions", "message_history", "user_message", "user_message_appendix"]),
});
export type AssemblyBlock = z.infer<typeof AssemblyBlock>;

export const MissingContext = z.object({
  id: z.string(),
  reason: MissingReason,
  detail: z.string(),
  severity: z.literal("warning"),
});
export type MissingContext = z.infer<typeof MissingContext>;

/** How far a summary may be believed: as far as its least trusted input (in this order, most trusted first). */
export const SummaryTrust = z.enum(["user", "assistant", "external"]);
export type SummaryTrust = z.infer<typeof SummaryTrust>;

/** Rule, place and keyed hash of one redacted secret; never the value. */
const Redaction = z.object({ rule: z.string(), offset: z.number(), length: z.number(), hash: z.string() });

/** One compaction, in the draft standard's terms: what it covered and what it knowingly lost. */
export const CompactionEvidence = z.object({
  id: z.number(),
  reason: z.enum(["auto", "manual", "clear"]),
  tokens: z.object({ before: z.number(), after: z.number(), trigger: z.number().nullable(), target: z.number().nullable() }),
  /**
   * The images it hid (all but the newest `keepImages` of the history): the messages through `hiddenThroughSeq` show
   * placeholders from now on; `messages`, `images` and `savedTokens` count those out of a new summary. Null or absent
   * when it hid none.
   */
  images: z.object({ hiddenThroughSeq: z.number(), messages: z.number(), images: z.number(), savedTokens: z.number() }).nullable().optional(),
  /** Tool results the model now reads as stubs, and where their full text is. */
  cleared: z.array(z.object({ seq: z.number(), savedTokens: z.number(), pointer: z.string() })),
  summary: z
    .object({
      coverage: z.object({ throughSeq: z.number(), messages: z.number(), groups: z.number(), tokens: z.number() }),
      summariser: z.string(),
      trust: SummaryTrust,
      loss: z.array(z.string()).readonly(),
    })
    .nullable(),
  /** Contexts whose injection the summary covered: they are injected again. */
  reinjected: z.array(z.string()),
  reachesTarget: z.boolean(),
});
export type CompactionEvidence = z.infer<typeof CompactionEvidence>;

/** A tool of a turn's list, in the evidence: what the model calls it, where it comes from, what it costs. */
export const OfferedTool = z.object({
  name: z.string(),
  /** `app:tool`, or null for the runtime's own. */
  qualified: z.string().nullable(),
  source: z.enum(["bound", "runtime", "loaded"]),
  tokens: z.number(),
  /** The app's hints (read-only, destructive, …): what a frontend may ask the user's approval on. */
  annotations: ToolAnnotations.optional(),
});
export type OfferedTool = z.infer<typeof OfferedTool>;

/** One call the runtime ran: how it ended (`ok`, `tool_error` when the tool said it failed, or why it did not run) and how long it took. */
export const RanToolCall = z.object({
  toolCallId: z.string(),
  tool: z.string(),
  servedBy: z.string(),
  outcome: z.string(),
  ms: z.number(),
  /** Why it was not run, when it was denied (the rule's or the hook's reason). */
  reason: z.string().optional(),
  /** Who denied it: `guard` (the agent's rules), `model-guard`, or a hook (`app:hook`). */
  deniedBy: z.string().optional(),
  /** A search_tools call's ranking: `lexical`, or `fused` with the embedding model's (docs/tools.md, "Ranking by meaning"). */
  ranker: z.enum(["lexical", "fused"]).optional(),
});
export type RanToolCall = z.infer<typeof RanToolCall>;

/** One search_history call: its query (redacted) and the messages it found, best first, by seq and role. */
export const HistorySearched = z.object({
  toolCallId: z.string(),
  query: z.string(),
  hits: z.array(z.object({ seq: z.number(), role: z.string() })),
});
export type HistorySearched = z.infer<typeof HistorySearched>;

/** What protecting one tool result did: its redactions (never the values) and its trim. */
export const ToolResultEvidence = z.object({
  toolCallId: z.string(),
  tool: z.string(),
  /** Rule, place and keyed hash of each redacted secret; never the value. */
  redactions: z.array(Redaction.extend({ path: z.string().optional() })),
  trimmed: z.object({ strategy: z.string(), originalTokens: z.number(), keptTokens: z.number() }).nullable(),
});
export type ToolResultEvidence = z.infer<typeof ToolResultEvidence>;

/** What one stage of the turn's pipeline decided, in a few figures or names, and how long it took (the Worker's clock). */
export const StageRecord = z.object({
  stage: z.string(),
  ms: z.number(),
  decided: z.record(z.string(), z.union([z.number(), z.string(), z.boolean(), z.array(z.string()).readonly()])),
});
export type StageRecord = z.infer<typeof StageRecord>;

export const ContextEnvelope = z.object({
  standard: z.literal("agent-context/draft"),
  turnId: z.string(),
  conversationId: z.string(),
  createdAt: z.string(),
  surface: z.object({ items: z.array(SurfaceItem) }),
  selection: z.object({
    selected: z.array(z.object({ id: z.string(), reason: z.enum(["first", "updated"]) })),
    omitted: z.array(z.object({ id: z.string(), reason: OmissionReason })),
    removed: z.array(z.object({ id: z.string(), reason: z.enum(["detached", "empty"]) })),
  }),
  budget: z.object({
    /** The turn's token budget, or null when none was given. */
    maxTokens: z.number().nullable(),
    usedTokens: z.number(),
    appendixChars: z.object({ limit: z.number(), used: z.number() }),
    /** What was given up to fit, lowest class and oldest first. */
    truncations: z.array(Truncation),
  }),
  assembly: z.object({ blocks: z.array(AssemblyBlock) }),
  injection: z.array(z.object({ id: z.string(), kind: LedgerKind, target: z.literal("user_message_appendix"), marker: InjectionMarker })),
  missing: z.array(MissingContext),
  /** What redacting the user's own message did: rule, place and keyed hash of each secret, never the value. */
  message: z.object({ redactions: z.array(Redaction) }).optional(),
  /** What redacting the apps' contexts and persona note this turn pulled did (`id`: the context, or `persona`); never the value. */
  contexts: z.object({ redactions: z.array(Redaction.extend({ id: z.string() })) }).optional(),
  /**
   * The history the model reads: the summary in effect, where the loaded messages begin, how many results are stubs,
   * and the image boundary (the images of messages through that seq are placeholders; only a compaction moves it).
   * Turns stored before boundaries existed have `earlierImages` instead: how many images of earlier messages stayed
   * visible (the policy's keepImages less the message's own); their replays use it.
   */
  history: z
    .object({
      summaryThroughSeq: z.number().nullable(),
      loadedFromSeq: z.number().nullable(),
      stubs: z.number(),
      imagesHiddenThroughSeq: z.number().optional(),
      earlierImages: z.number().optional(),
    })
    .optional(),
  /** The compaction this turn ran before it was assembled. */
  compaction: CompactionEvidence.optional(),
  /** Tool calls this turn closed without a result, and what protecting each result it carried did. */
  tools: z
    .object({
      /** `awaitingApproval`: the call was still waiting for the user's approval; the model reads that it was not run. */
      unanswered: z.array(z.object({ id: z.string(), name: z.string(), awaitingApproval: z.literal(true).optional() })),
      results: z.array(ToolResultEvidence),
      /** Results of the request's tool work the model read as a stand-in this turn (they did not fit); stored whole. */
      notShown: z.array(z.object({ seq: z.number(), toolCallId: z.string(), tool: z.string(), tokens: z.number() })).optional(),
      /** The tool list the model read, in order: each tool's model name, where it comes from, and its tokens. */
      offered: z.array(OfferedTool).optional(),
      /** Calls the runtime ran this turn (apps' tools and its own), with how each ended and how long it took. */
      ran: z.array(RanToolCall).optional(),
      /** Tools search_tools loaded this turn, and the query that found each. */
      loaded: z.array(z.object({ name: z.string(), query: z.string(), toolCallId: z.string() })).optional(),
      /**
       * `delegate` calls this turn started: each runs in a child conversation of its own, and its call stays open until
       * the child's final answer closes it (docs/tools.md, "Subagents"). `turnId` is the child's first turn.
       */
      delegated: z.array(z.object({ toolCallId: z.string(), childConversationId: z.string(), agent: z.string(), depth: z.number(), turnId: z.string() })).optional(),
      /** Skills read_skill opened this turn. */
      linked: z.array(z.object({ name: z.string(), toolCallId: z.string() })).optional(),
      /** What each search_history call searched for (redacted) and the messages it found, best first (docs/tools.md). */
      searched: z.array(HistorySearched).optional(),
      /** The skills menu: its tokens, its budget, and every description it shortened or left out, and why. */
      skillsMenu: z
        .object({
          tokens: z.number(),
          budgetTokens: z.number(),
          cut: z.array(z.object({ name: z.string(), reason: z.enum(["shortened", "name_only"]), keptChars: z.number(), droppedChars: z.number() })),
        })
        .optional(),
    })
    .optional(),
  /** Corrective and stapled state notes on the user's message this turn, in order, each with why it fired (docs/reminders.md). */
  reminders: z.array(z.object({ kind: z.enum(["loop", "done_without_action", "interrupted", "uploads", "mentions", "mounts", "dont_mention", "images", "hook"]), reason: z.string() })).optional(),
  /**
   * The hooks registered for the agent's turns (docs/hooks.md): the points they stand at, and every call made to them
   * this turn, in order, with its latency and verdict. Absent when the agent has none.
   */
  hooks: z.object({ points: z.array(HookPoint), calls: z.array(HookCall) }).optional(),
  /** The turn's pipeline, stage by stage, in order (load, pull, input, output, run, admit, recall, identify, tools, reminders, assembled, compact, assemble, commit). */
  stages: z.array(StageRecord).optional(),
});
export type ContextEnvelope = z.infer<typeof ContextEnvelope>;

export const TurnUsage = z.object({
  system: z.number(),
  /** The tool list (`TurnResult.tools`), counted like text. */
  tools: z.number(),
  history: z.number(),
  message: z.number(),
  contexts: z.number(),
  memory: z.number(),
  taskState: z.number(),
  total: z.number(),
});
export type TurnUsage = z.infer<typeof TurnUsage>;
