import * as z from "zod";
import { ContextData, ContextList } from "./context-data";
import { LIMITS } from "./limits";
import { Name, QualifiedName } from "./names";
import { Text } from "./text";
import { TrimPolicy } from "./policies";
import { parseJsonPointer } from "./json-pointer";
import { AgentPattern, HookDeclaration } from "./hooks";
import { AttachedContextRef, McpServerDeclarations } from "./mcp-servers";

/**
 * The app protocol's methods: each method's params and result, as zod schemas
 * that both the runtime (validating what apps send) and the SDK (validating what
 * the runtime sends) use.
 */
export const PROTOCOL_VERSION = "2026-11-01";

export const ConversationId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{8,64}$/, "a conversation id: 8-64 letters, digits, '_' or '-'");

export const ProviderMethod = z.enum(["current", "list", "get"]);
export type ProviderMethod = z.infer<typeof ProviderMethod>;

export const ProviderDeclaration = z.object({
  id: Name,
  name: z.string().min(1).max(LIMITS.titleChars),
  description: z.string().max(LIMITS.summaryChars).default(""),
  methods: z.array(ProviderMethod).min(1).max(3),
  /**
   * The app sends `contexts/changed` whenever this provider's `current` answer would differ: the runtime may then
   * reuse its last answer for a conversation instead of asking again each turn (docs/protocol.md).
   */
  notifies: z.boolean().default(false),
});
export type ProviderDeclaration = z.infer<typeof ProviderDeclaration>;

/** MCP's tool annotations: hints about a tool's behaviour, for frontends and approval policies; never trusted as guarantees. */
export const ToolAnnotations = z.object({
  title: z.string().max(LIMITS.titleChars).optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});
export type ToolAnnotations = z.infer<typeof ToolAnnotations>;

/** A tool an app serves: the model calls it by its qualified name `app:name`; the runtime sends the app `tools/call`. */
export const ToolDeclaration = z
  .object({
    name: Name,
    description: z.string().max(LIMITS.toolDescriptionChars).default(""),
    /**
     * A JSON Schema object (`type: "object"`) for the arguments. Its shape is checked here (an object of type
     * "object", at most `LIMITS.toolSchemaChars` as JSON); the runtime checks it as JSON Schema at `initialize`
     * (`checkSchema` in `src/tools/validate.ts`), so a broken one fails there, naming the tool.
     */
    inputSchema: z.record(z.string(), z.unknown()).default(() => ({ type: "object", properties: {} })),
    annotations: ToolAnnotations.optional(),
  })
  .superRefine((tool, ctx) => {
    const problem = schemaShapeProblem(tool.inputSchema);
    if (problem) ctx.addIssue({ code: "custom", path: ["inputSchema"], message: `tool '${tool.name}': ${problem}` });
  });

/** What is wrong with an input schema's shape (not JSON, too long, not of type "object"), or null. */
function schemaShapeProblem(schema: Record<string, unknown>): string | null {
  let json: string;
  try {
    json = JSON.stringify(schema);
  } catch {
    return "inputSchema is not JSON";
  }
  if (json.length > LIMITS.toolSchemaChars) return `inputSchema is ${json.length} characters as JSON; at most ${LIMITS.toolSchemaChars}`;
  if (schema.type !== "object") return `inputSchema.type must be "object" (tool arguments are an object)`;
  return null;
}
export type ToolDeclaration = z.input<typeof ToolDeclaration>;

/** One extra document a skill carries (a form, a reference table), read with the manual. */
export const SkillReference = z.object({ name: Name, content: Text(LIMITS.skillManualChars) });

/**
 * A skill an app serves: instructions the model loads when a task calls for them. The menu shows the
 * description; the manual (and references) are read on demand. All must fit in the `initialize` frame.
 */
export const SkillDeclaration = z.object({
  name: Name,
  description: Text(LIMITS.skillDescriptionChars, 1),
  manual: Text(LIMITS.skillManualChars),
  references: z.array(SkillReference).max(LIMITS.skillReferencesPerSkill).default([]),
});
export type SkillDeclaration = z.input<typeof SkillDeclaration>;

const NAME_PART = "[A-Za-z0-9][A-Za-z0-9._-]*";
/** A tool or skill an agent names: `app:name`, or a bare `name` for its own app's. */
export const ToolRef = z
  .string()
  .max(LIMITS.nameChars * 2 + 1)
  .regex(new RegExp(`^(${NAME_PART}:)?${NAME_PART}$`), "expected 'app:tool' or, for the agent's own app, 'tool'");
/** `app:*` (all of an app's) or `app:name`; a bare `name` means the agent's own app's. */
export const ToolPattern = z
  .string()
  .max(LIMITS.nameChars * 2 + 1)
  .regex(new RegExp(`^(${NAME_PART}:)?(${NAME_PART}|\\*)$`), "expected 'app:*', 'app:name' or, for the agent's own app, 'name'");

/**
 * When the runtime staples a corrective note to the user's message (docs/reminders.md). Each kind fires once, when its
 * condition newly holds.
 */
export const Correctives = z
  .object({
    /** Loop notes: how many times the same call (or a short cycle of calls) repeats, arguments and result alike; 0 turns them off. */
    loopRepeats: z.number().int().min(0).max(20).default(3),
    /** The longest cycle a loop may have (A-B-A-B is 2). */
    loopPeriod: z.number().int().min(1).max(5).default(3),
    /** Whether a new message that closes open calls or pending approvals gets a note naming them. */
    interrupted: z.boolean().default(true),
    /** The agent's task tool, by the name the model calls it (`todo_write`) or qualified (`app:tool`): turns on claimed-done notes. */
    taskTool: z.string().min(1).max(LIMITS.nameChars * 2).optional(),
    /**
     * What "marked done" means in the task tool's arguments: `field` equals `equals`, on each item of the array under
     * `list` (the arguments themselves when there is none), each task known by its `key` field.
     */
    doneWhen: z
      .object({
        list: z.string().min(1).max(64).optional(),
        key: z.string().min(1).max(64).optional(),
        field: z.string().min(1).max(64),
        equals: z.union([z.string().max(64), z.boolean(), z.number()]),
      })
      .optional(),
  })
  .refine((c) => (c.taskTool === undefined) === (c.doneWhen === undefined), "taskTool and doneWhen go together");
export type Correctives = z.output<typeof Correctives>;

/** The longest pattern a rule may hold. */
export const GUARD_PATTERN_CHARS = 256;
/** The longest value a pattern is tested on: a longer one matches a deny rule's pattern and never an allow rule's. */
export const GUARD_VALUE_CHARS = 512;
/** The most unbounded repeats (`*`, `+`, `{n,}`, `{n,m}`) one pattern may hold. */
const MAX_REPEATS = 2;

/**
 * Why a pattern is refused, or null when it is accepted: it must compile (with the `u` flag), stay within
 * GUARD_PATTERN_CHARS, hold no backreference, lookaround or quantified group that itself repeats or alternates (the
 * shapes that backtrack exponentially), and at most two repeats (so the work on a bounded value stays bounded).
 */
export function patternProblem(pattern: string): string | null {
  if (pattern.length > GUARD_PATTERN_CHARS) return `longer than ${GUARD_PATTERN_CHARS} characters`;
  try {
    new RegExp(pattern, "u");
  } catch (e) {
    return `not a valid regular expression: ${(e as Error).message}`;
  }
  // Each open group: whether it holds a repeat or an alternation.
  const groups: { risky: boolean }[] = [];
  let repeats = 0;
  let lastGroupRisky = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    const justClosed = lastGroupRisky;
    lastGroupRisky = false;
    if (c === "\\") {
      const next = pattern[i + 1] ?? "";
      if (/[1-9]/.test(next) || next === "k") return "a backreference";
      i++;
      continue;
    }
    if (c === "[") {
      // A class: skip to its end (escapes included).
      for (i++; i < pattern.length && pattern[i] !== "]"; i++) if (pattern[i] === "\\") i++;
      continue;
    }
    if (c === "(") {
      if (pattern.startsWith("(?=", i) || pattern.startsWith("(?!", i) || pattern.startsWith("(?<=", i) || pattern.startsWith("(?<!", i)) return "a lookaround";
      groups.push({ risky: false });
      continue;
    }
    if (c === ")") {
      const group = groups.pop();
      lastGroupRisky = group?.risky ?? false;
      if (lastGroupRisky && groups.length) groups[groups.length - 1]!.risky = true;
      continue;
    }
    if (c === "|") {
      if (groups.length) groups[groups.length - 1]!.risky = true;
      continue;
    }
    const unbounded = c === "*" || c === "+" || c === "{";
    if (unbounded || c === "?") {
      // `(?:`, `*?`, `+?`: not a quantifier of their own.
      if (c === "?" && (pattern[i - 1] === "(" || pattern[i - 1] === "*" || pattern[i - 1] === "+" || pattern[i - 1] === "}" || pattern[i - 1] === "?")) continue;
      if (justClosed) return "a repeated group that itself repeats or alternates (it can backtrack without end)";
      if (unbounded) repeats++;
      if (groups.length) groups[groups.length - 1]!.risky = true;
      if (c === "{") while (i < pattern.length && pattern[i] !== "}") i++;
    }
  }
  if (repeats > MAX_REPEATS) return `more than ${MAX_REPEATS} repeats (*, +, {…})`;
  return null;
}

/** One rule of an agent's guard (docs/tools.md, "The guard"): what it matches, and its verdict. */
export const GuardRule = z.object({
  /** A glob on the tool's model-facing (`calendar__delete_*`) or qualified (`calendar:delete_*`) name; `*` any run of characters, `?` one. */
  tool: z.string().min(1).max(LIMITS.nameChars * 2 + 1).optional(),
  /** Hints the tool must declare (an undeclared hint is false). */
  annotations: z.object({ destructiveHint: z.boolean().optional(), readOnlyHint: z.boolean().optional(), openWorldHint: z.boolean().optional() }).strict().optional(),
  /** Each must match: the value at `path` (a JSON Pointer into the arguments), a string or else its JSON, tested with `pattern`. */
  arguments: z
    .array(
      z.object({
        path: z.string().max(256).refine((p) => parseJsonPointer(p) !== null, "not a JSON Pointer"),
        pattern: z.string().min(1).superRefine((p, ctx) => {
          const problem = patternProblem(p);
          if (problem) ctx.addIssue({ code: "custom", message: `pattern refused: ${problem}` });
        }),
      }),
    )
    .max(8)
    .optional(),
  verdict: z.enum(["deny", "allow"]),
  /** Why: the model reads it with a denial, and the evidence records it. */
  reason: z.string().min(1).max(LIMITS.summaryChars),
});
/**
 * An agent's optional model guard (docs/tools.md, "The model guard"): for a call no rule matches, an
 * OpenAI-compatible model of the deployment answers allow or deny with a reason, reading only the user's request
 * and the proposed call.
 */
export const GuardModel = z.object({
  /** The deployment's named upstream that answers (`UPSTREAM_<NAME>_URL`, `_MODEL` and the secret `_KEY`); OpenAI-compatible only. */
  upstream: z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,31}$/, "a name of letters, digits and '_', as in UPSTREAM_<NAME>_URL"),
  /** The model id at that upstream; the upstream's own (`UPSTREAM_<NAME>_MODEL`) otherwise. */
  model: z.string().min(1).max(LIMITS.nameChars * 2).optional(),
  /** The agent's own policy, added to the guard's fixed instructions. */
  instructions: Text(LIMITS.summaryChars).optional(),
  /** When the model cannot decide (no upstream, an error, a timeout, an answer that does not parse): `closed` denies, `open` allows. */
  failMode: z.enum(["open", "closed"]).default("closed"),
  /** How long the guard waits for the verdict. */
  deadlineMs: z.number().int().min(1).max(LIMITS.hookDeadlineMaxMs).default(3_000),
  /** Whether calls to tools that declare `readOnlyHint` go to the model too; by default they skip it. */
  readOnly: z.boolean().default(false),
});
export type GuardModel = z.output<typeof GuardModel>;
/** An agent's guard: the first rule that matches a call gives the verdict (no match allows); then the model, when one is set. */
export const Guard = z.object({ rules: z.array(GuardRule).max(64).default([]), model: GuardModel.optional() });
export type Guard = z.output<typeof Guard>;

export const AgentDefinition = z.object({
  agentId: Name,
  name: z.string().min(1).max(LIMITS.titleChars),
  description: z.string().max(LIMITS.summaryChars).optional(),
  systemPrompt: Text(LIMITS.systemPromptChars),
  /** Tools the model sees in its prompt, in this order: `app:tool`, or a bare name for this app's own. */
  tools: z.array(ToolRef).max(LIMITS.toolsPerAgent).default([]),
  /** Tools the model can find with search_tools but that stay out of the prompt: `app:*` or `app:tool`. */
  catalog: z.array(ToolPattern).max(LIMITS.toolsPerAgent).default([]),
  /** Skills on the model's menu: `app:skill` or `app:*`. */
  skills: z.array(ToolPattern).max(LIMITS.skillsPerApp).default([]),
  /** Whether the model may browse the user's contexts itself (list_contexts / read_context). */
  browseContexts: z.boolean().default(false),
  /**
   * Whether the model may search the conversation's earlier messages (search_history) from the first turn; without
   * it, from the first summary or clear on (docs/tools.md, "Searching earlier messages").
   */
  searchHistory: z.boolean().default(false),
  /** Contexts read every turn: `app:provider`, or an MCP server's resource pinned by URI (`server:uri`). */
  attachedContexts: z.array(AttachedContextRef).max(LIMITS.attachedContextsPerAgent).default([]),
  /** Whether each turn reads the user's memory (recalled by relevance, fenced as hints). */
  memory: z.boolean().default(false),
  /** How each tool's results are trimmed, by tool name (bare or qualified); others get the default policy. */
  resultPolicies: z.record(ToolRef, TrimPolicy).default({}).refine((p) => Object.keys(p).length <= LIMITS.toolsPerAgent, "too many policies"),
  /**
   * Agents the model may hand a task to with the runtime's `delegate` tool: `app:agent`, or a bare name for this
   * app's own. Each runs in a conversation of its own (docs/tools.md, "Subagents").
   */
  subagents: z.array(ToolRef).max(LIMITS.subagentsPerAgent).default([]),
  /** The upstream model the gateway calls for this agent (an id at its upstream); the upstream's own model otherwise. */
  model: z.string().min(1).max(LIMITS.nameChars * 2).optional(),
  /**
   * A named upstream of the deployment the gateway calls for this agent (`UPSTREAM_<NAME>_URL`, `_API`, `_MODEL` and
   * the secret `_KEY`); the deployment's default upstream otherwise.
   */
  upstream: z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,31}$/, "a name of letters, digits and '_', as in UPSTREAM_<NAME>_URL").optional(),
  /** Corrective notes on the user's message: loops, tasks claimed done without action, interrupted work (docs/reminders.md). */
  correctives: Correctives.optional(),
  /** Rules checked before any tool the runtime serves runs: a denied call is not run (docs/tools.md, "The guard"). */
  guard: Guard.optional(),
  /** What the model is told not to mention (docs/reminders.md, "Stapled notes"): noted on the first message and when the list changes. */
  dontMention: z.array(z.string().min(1).max(LIMITS.dontMentionChars)).max(LIMITS.dontMentionPerAgent).optional(),
  /** Whether the agent's model sees images: a message with images then says they can be seen directly, or need a tool (docs/reminders.md). */
  seesImages: z.boolean().optional(),
});
export type AgentDefinition = z.input<typeof AgentDefinition>;
export const AgentCreateResult = z.object({ agentId: QualifiedName });

/** What the model may do in a mounted folder. */
export const MountPermission = z.enum(["read", "write", "execute"]);

/**
 * A folder an app makes available to agents (a file system, a workspace): the model is told it is mounted and what it
 * may do there, on its first message and whenever the mounts change (docs/reminders.md, "Stapled notes").
 */
export const MountDeclaration = z.object({
  path: Text(LIMITS.mountPathChars, 1),
  permissions: z.array(MountPermission).min(1).max(3),
  description: Text(LIMITS.titleChars).optional(),
  /** The agents whose turns are told of it; this app's own agents when absent. */
  agents: z.array(AgentPattern).min(1).max(32).optional(),
});
export type MountDeclaration = z.input<typeof MountDeclaration>;

/** Requests an app may answer beyond the base protocol; an app that leaves one out is asked the base way. */
export const AppCapabilities = z.object({ currentMany: z.boolean().optional() });

export const InitializeParams = z.object({
  protocolVersion: z.string().min(1).max(32),
  app: z.object({
    name: Name,
    version: z.string().min(1).max(64),
    displayName: z.string().max(LIMITS.titleChars).optional(),
  }),
  contexts: z.array(ProviderDeclaration).max(LIMITS.providersPerApp).default([]),
  tools: z.array(ToolDeclaration).max(LIMITS.toolsPerAgent).default([]),
  skills: z.array(SkillDeclaration).max(LIMITS.skillsPerApp).default([]),
  /** The app's agents, registered with its providers in one step, so a reconnect never leaves a gap without them. */
  agents: z.array(AgentDefinition).max(LIMITS.agentsPerApp).default([]),
  /** Logic at named points of the turn, called with `hooks/call` (docs/hooks.md); replaced at each initialize, like the rest. */
  hooks: z.array(HookDeclaration).max(LIMITS.hooksPerApp).default([]),
  /** Folders the app mounts for agents; replaced at each initialize, like the rest. */
  mounts: z.array(MountDeclaration).max(LIMITS.mountsPerApp).default([]),
  /** MCP servers the app brings (docs/mcp.md, "Consume"): each becomes an app of the user's hub under its own name. */
  mcpServers: McpServerDeclarations.default([]),
  /** What the app answers beyond the base protocol: `currentMany`, several providers' `contexts/current` in one request. */
  capabilities: AppCapabilities.default({}),
}).superRefine((init, ctx) => {
  // One of each: a second with the same name (path) would silently replace the first.
  const once = (items: readonly { key: string }[], field: string, what: string) =>
    items.forEach(({ key }, i) => {
      if (items.findIndex((other) => other.key === key) < i) ctx.addIssue({ code: "custom", path: [field, i], message: `${what} '${key}' is declared twice` });
    });
  once(init.hooks.map((h) => ({ key: h.name })), "hooks", "hook");
  once(init.mounts.map((m) => ({ key: m.path })), "mounts", "mount");
});
export type InitializeParams = z.input<typeof InitializeParams>;
export const InitializeResult = z.object({ protocolVersion: z.string(), sessionId: z.string() });
export type InitializeResult = z.infer<typeof InitializeResult>;


export const ResourceId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "use letters, digits, '.', '_' or '-'");

export const ResourcePushParams = z.object({
  id: ResourceId.optional(),
  conversationId: ConversationId.optional(),
  title: Text(LIMITS.titleChars, 1),
  content: Text(LIMITS.contextContentChars),
  summary: Text(LIMITS.summaryChars).optional(),
  type: z.string().max(64).optional(),
});
export type ResourcePushParams = z.infer<typeof ResourcePushParams>;
export const ResourcePushResult = z.object({ fullId: z.string(), conversationId: ConversationId });
export type ResourcePushResult = z.infer<typeof ResourcePushResult>;

export const FullResourceId = z.string().min(3).max(LIMITS.nameChars + 129);
export const ResourceRemoveParams = z.object({ fullId: FullResourceId, conversationId: ConversationId.optional() });
export const ContextsChangedParams = z.object({ provider: Name });

/** Runtime → app requests and notifications. */
export const ContextsCurrentParams = z.object({ provider: Name, conversationId: ConversationId });
/**
 * `contexts/currentMany`, to an app that declared `capabilities.currentMany`: several of its providers' current state
 * in one request and one answer, instead of a request each. Each answer is due within `deadlineMs` of the request's
 * arrival; one later is answered as a timeout, the others as they are.
 */
export const ContextsCurrentManyParams = z.object({
  requests: z.array(ContextsCurrentParams).min(1).max(LIMITS.providersPerApp),
  deadlineMs: z.number().int().min(1).max(60_000),
});
export type ContextsCurrentManyParams = z.infer<typeof ContextsCurrentManyParams>;
/** One answer per request, in order: the provider's `contexts/current` result, or the JSON-RPC error it would have answered. */
export const CurrentManyAnswer = z.union([
  z.object({ result: z.unknown() }).strict(),
  z.object({ error: z.object({ code: z.number().int(), message: z.string() }) }).strict(),
]);
/** The answers are read one by one (`CurrentManyAnswer`): a malformed one fails its provider alone. */
export const ContextsCurrentManyResult = z.object({ answers: z.array(z.unknown()) });
export type ContextsCurrentManyResult = z.infer<typeof ContextsCurrentManyResult>;
export const ContextsListParams = z.object({
  provider: Name,
  query: z.string().max(512).optional(),
  cursor: z.string().max(1024).optional(),
  limit: z.number().int().min(1).max(LIMITS.listItemsPerPage).optional(),
});
export type ContextsListParams = z.infer<typeof ContextsListParams>;
export const ContextsGetParams = z.object({ provider: Name, id: z.string().min(1).max(LIMITS.itemIdChars) });
export const ResourcesRemovedParams = z.object({ fullId: FullResourceId, conversationId: ConversationId });
export type ResourcesRemovedParams = z.infer<typeof ResourcesRemovedParams>;

/** Runtime → app: run one of the app's tools (its own, unqualified name) for a model's call. */
export const ToolsCallParams = z.object({
  name: Name,
  arguments: z.record(z.string(), z.unknown()),
  conversationId: ConversationId,
  toolCallId: z.string().min(1).max(LIMITS.itemIdChars),
});
export type ToolsCallParams = z.infer<typeof ToolsCallParams>;

/** MCP's CallToolResult: content parts (only text is read; other types are allowed and skipped) and whether the tool failed. */
export const ToolsCallResult = z.object({
  content: z.array(
    z
      .object({ type: z.string().min(1), text: z.unknown().optional() })
      .loose()
      .refine((part) => part.type !== "text" || typeof part.text === "string", { message: "a text part needs a string 'text'", path: ["text"] }),
  ),
  isError: z.boolean().optional(),
}).loose();
export type ToolsCallResult = z.infer<typeof ToolsCallResult>;

/** What apps must answer to each runtime → app request. */
export const ContextsCurrentResult = ContextData.nullable();
export const ContextsGetResult = ContextData.nullable();
export const ContextsListResult = ContextList;

/** The WebSocket subprotocol apps offer, with `bearer.<token>` beside it (the one way a browser can send a credential). */
export const APP_SUBPROTOCOL = "context-runtime.v1";
export const BEARER_SUBPROTOCOL_PREFIX = "bearer.";

/** Heartbeat text frames: the runtime answers `ping` with `pong` without waking the hub. */
export const HEARTBEAT = { ping: "ping", pong: "pong" } as const;

/** Close codes the runtime sends; after these an app must not reconnect with the same credentials. */
export const CloseCode = { Unauthorized: 4001, Forbidden: 4003 } as const;
