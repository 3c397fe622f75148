import * as z from "zod";
import { LIMITS } from "./limits";
import { Name, QualifiedName } from "./names";
import { Text } from "./text";

/**
 * Hooks (docs/hooks.md): logic an app registers at a named point of the turn, called over its socket with
 * `hooks/call`. The schemas here are the registration, each point's payload and decision, and the evidence record.
 */

/** The points of a turn an app can intercept, in the order a turn reaches them. */
export const HookPoint = z.enum(["input", "memory", "assembled", "tool.before", "tool.after", "output", "compaction", "turn.end"]);
export type HookPoint = z.infer<typeof HookPoint>;

const NAME_PART = "[A-Za-z0-9][A-Za-z0-9._-]*";
/** `*` (every agent), `app:*`, `app:agent`, or a bare `agent` of the registering app. */
export const AgentPattern = z
  .string()
  .max(LIMITS.nameChars * 2 + 1)
  .regex(new RegExp(`^(\\*|(${NAME_PART}:)?(${NAME_PART}|\\*))$`), "expected '*', 'app:*', 'app:agent' or, for this app's own, 'agent'");

/** A tool glob for tool hooks: `app:tool`, `app:*`, `*`; `*` is any run of characters. */
export const ToolGlob = z
  .string()
  .min(1)
  .max(LIMITS.nameChars * 2 + 1)
  .regex(/^[A-Za-z0-9._:*?-]+$/, "a glob of letters, digits, '.', '_', '-', ':', '*' and '?'");

/** One hook as an app declares it in `initialize` (replaced, like its providers, at each initialize). */
export const HookDeclaration = z
  .object({
    name: Name,
    point: HookPoint,
    /** The agents whose turns it sees; this app's own agents when absent. */
    agents: z.array(AgentPattern).min(1).max(32).optional(),
    /** For `tool.before` and `tool.after`: the tools whose calls it sees (qualified or runtime names); all when absent. */
    tools: z.array(ToolGlob).min(1).max(32).optional(),
    /** Lower runs first; ties run by app name, then hook name. */
    order: z.number().int().min(-1000).max(1000).default(0),
    /** How long the runtime waits for its answer. */
    deadlineMs: z.number().int().min(1).max(LIMITS.hookDeadlineMaxMs).default(LIMITS.hookDeadlineMs),
    /** What a hook that does not answer in time (offline, late, failing, invalid) decides: `open` nothing, `closed` the strict verdict. */
    failMode: z.enum(["open", "closed"]).default("open"),
  })
  .refine((h) => h.tools === undefined || h.point === "tool.before" || h.point === "tool.after", { message: "tools applies to tool.before and tool.after hooks only", path: ["tools"] });
export type HookDeclaration = z.input<typeof HookDeclaration>;

/** A registered hook, as the hub keeps it and the turn runs it. */
export const HookSpec = z.object({
  /** `app:name`. */
  id: QualifiedName,
  app: Name,
  name: Name,
  point: HookPoint,
  agents: z.array(z.string()),
  tools: z.array(z.string()).nullable(),
  order: z.number().int(),
  deadlineMs: z.number().int(),
  failMode: z.enum(["open", "closed"]),
});
export type HookSpec = z.infer<typeof HookSpec>;

const Call = z.object({ id: z.string(), tool: z.string(), arguments: z.unknown() });

/** What each point's hook is sent: `hooks/call` params are `{hook, point, conversationId, turnId, agent, payload}`. */
export const HookPayloads = {
  /** The user's message as it arrived (after any earlier hook's rewrite). */
  input: z.object({ message: z.string() }),
  /** The memory recalled for the user's message. */
  memory: z.object({ message: z.string(), memory: z.array(z.object({ id: z.string(), text: z.string() })) }),
  /** The blocks the runtime is about to staple to the user's message (contexts, resources, memory, task state, notes). */
  assembled: z.object({
    blocks: z.array(z.object({ id: z.string(), kind: z.string(), title: z.string().optional(), text: z.string(), truncated: z.boolean() })),
  }),
  /** A call the runtime is about to run, with the user's request that led to it (never the model's reasoning). */
  "tool.before": z.object({ request: z.string().nullable(), call: Call, annotations: z.record(z.string(), z.unknown()).optional() }),
  /** A call's result before it is stored. */
  "tool.after": z.object({ call: Call, result: z.object({ text: z.string(), isError: z.boolean() }) }),
  /** The model's answer: its text and its calls. `attempt` counts regenerations (0 the first). */
  output: z.object({
    request: z.string().nullable(),
    answer: z.object({ content: z.string().nullable(), toolCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })) }),
    attempt: z.number().int(),
  }),
  /** The history a compaction folds into a summary, as text, and the summary it replaces. */
  compaction: z.object({ messages: z.array(z.object({ role: z.string(), text: z.string() })), previousSummary: z.string().nullable(), maxTokens: z.number().int(), maxChars: z.number().int() }),
  /** A notification after the turn is stored: nothing is answered. */
  "turn.end": z.object({ continuation: z.boolean(), toolCalls: z.array(z.object({ id: z.string(), tool: z.string(), outcome: z.string() })), tokens: z.number().int() }),
} as const satisfies Record<HookPoint, z.ZodType>;

export const HookCallParams = z.object({
  hook: Name,
  point: HookPoint,
  conversationId: z.string(),
  turnId: z.string(),
  agent: QualifiedName,
  payload: z.record(z.string(), z.unknown()),
});
export type HookCallParams = z.infer<typeof HookCallParams>;

const Continue = z.object({ action: z.literal("continue") });
const Reason = Text(LIMITS.summaryChars, 1);
const HookText = Text(LIMITS.hookTextChars, 1);

/** What each point's hook may answer. `continue` changes nothing, at every point. */
export const HookDecisions = {
  input: z.discriminatedUnion("action", [Continue, z.object({ action: z.literal("rewrite"), message: Text(LIMITS.messageChars, 1) }), z.object({ action: z.literal("refuse"), reason: Reason })]),
  memory: z.discriminatedUnion("action", [
    Continue,
    z.object({ action: z.literal("change"), keep: z.array(z.string()).max(256).optional(), add: z.array(HookText).max(32).optional() }),
  ]),
  assembled: z.discriminatedUnion("action", [
    Continue,
    z.object({
      action: z.literal("change"),
      remove: z.array(z.string()).max(256).optional(),
      add: z.array(z.object({ title: Text(LIMITS.titleChars, 1), content: HookText })).max(8).optional(),
    }),
  ]),
  "tool.before": z.discriminatedUnion("action", [
    Continue,
    z.object({ action: z.literal("deny"), reason: Reason }),
    z.object({ action: z.literal("patch"), arguments: z.record(z.string(), z.unknown()) }),
  ]),
  "tool.after": z.discriminatedUnion("action", [Continue, z.object({ action: z.literal("replace"), text: Text(LIMITS.toolResultChars), isError: z.boolean().optional() })]),
  output: z.discriminatedUnion("action", [Continue, z.object({ action: z.literal("reject"), note: Reason })]),
  compaction: z.discriminatedUnion("action", [Continue, z.object({ action: z.literal("summary"), summary: Text(LIMITS.hookTextChars, 1) })]),
  "turn.end": Continue,
} as const satisfies Record<HookPoint, z.ZodType>;
export type HookDecision<P extends HookPoint> = z.output<(typeof HookDecisions)[P]>;
export type HookPayload<P extends HookPoint> = z.input<(typeof HookPayloads)[P]>;

/** Why a hook's answer was not used. */
export const HookFailure = z.enum(["offline", "timeout", "error", "invalid"]);
export type HookFailure = z.infer<typeof HookFailure>;

/** One hook call, as the evidence records it (`envelope.hooks`): who, where, how long, and what it decided. */
export const HookCall = z.object({
  hook: QualifiedName,
  point: HookPoint,
  /** The tool call it was about, for tool hooks. */
  toolCallId: z.string().optional(),
  ms: z.number(),
  /** The action taken: the hook's own, or its fail mode's when it failed (`continue` open; `refuse`, `deny`, … closed). */
  verdict: z.string(),
  /** Why its answer was not used, when it was not. */
  failed: HookFailure.optional(),
  /** The failure, redacted and cut at 500 characters; for the model guard, its reason. */
  detail: z.string().optional(),
});
export type HookCall = z.infer<typeof HookCall>;
