/**
 * What the hub tells a Conversation about an agent's tools and skills, and what one tool call
 * came back with. JSON-serialisable: they cross Durable Object RPC. (`FunctionTool`, the tool list a turn
 * answers with, is in `frontend.ts`.)
 */
import * as z from "zod";
import { HistorySearched, RanToolCall, ToolResultEvidence } from "./evidence";
import { AgentInfo } from "./frontend";
import { JsonObject } from "./json";
import { ToolAnnotations } from "./methods";
import { HookCall, HookSpec } from "./hooks";

export const ToolSpec = z.object({
  /** Qualified: `app:tool`. */
  name: z.string(),
  description: z.string(),
  /** A JSON Schema object (`type: "object"`), as the app declared it. */
  inputSchema: JsonObject,
  annotations: ToolAnnotations.optional(),
  /** Whether the app serving it is connected now. */
  online: z.boolean(),
});
export type ToolSpec = z.infer<typeof ToolSpec>;

export const SkillSpec = z.object({
  /** Qualified: `app:skill`. */
  name: z.string(),
  description: z.string(),
});
export type SkillSpec = z.infer<typeof SkillSpec>;

export const Toolbox = z.object({
  agent: AgentInfo,
  /** The agent's `tools`, in its order: what the prompt lists. */
  bound: z.array(ToolSpec),
  /** Tools the agent's `catalog` patterns match, minus the bound ones, sorted by name: found with search_tools. */
  catalog: z.array(ToolSpec),
  /** Skills the agent's `skills` patterns match, sorted by name. */
  skills: z.array(SkillSpec),
  /** Names in the agent's `tools` and `skills` that no app has registered (skipped above). */
  unknown: z.array(z.string()),
  /** The agent's `subagents` that are registered, in its order: what `delegate` may hand a task to (absent when none). */
  subagents: z.array(z.object({ id: z.string(), name: z.string(), description: z.string() })).optional(),
  /** The folders apps mount for the agent, by app then path (absent when none). */
  mounts: z.array(z.object({ app: z.string(), path: z.string(), permissions: z.array(z.string()), description: z.string().optional() })).optional(),
  /** The hooks registered for the agent's turns, in the order they run (absent when none). */
  hooks: z.array(HookSpec).optional(),
});
export type Toolbox = z.infer<typeof Toolbox>;

/** A skill as the model reads it: its manual and references, from R2. */
export const SkillContent = z.object({
  name: z.string(),
  description: z.string(),
  manual: z.string(),
  references: z.array(z.object({ name: z.string(), content: z.string() })),
});
export type SkillContent = z.infer<typeof SkillContent>;

/** `offline`: not sent (no app connected); `disconnected`: the app went away after the call was sent, so it may have run. */
export const ToolFailureReason = z.enum(["unknown_tool", "invalid_arguments", "offline", "disconnected", "timeout", "error", "invalid"]);
export type ToolFailureReason = z.infer<typeof ToolFailureReason>;

/** One tool call's outcome. `ok: true` means the app answered; `isError` says whether its tool failed (the model reads `text` either way). */
export const ToolRun = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), text: z.string(), isError: z.boolean(), ms: z.number() }),
  z.object({ ok: z.literal(false), reason: ToolFailureReason, detail: z.string(), ms: z.number() }),
]);
export type ToolRun = z.infer<typeof ToolRun>;

/** `POST …/tools/run`: the calls run, what protecting each result did, and where the stored results end. */
export const ToolRunResult = z.object({
  ran: z.array(RanToolCall),
  toolResults: z.array(ToolResultEvidence),
  appended: z.number(),
  lastSeq: z.number(),
  /** What each search_history call searched for (redacted) and the messages it found (docs/tools.md). */
  searched: z.array(HistorySearched).optional(),
  /** The hooks called on the way (`tool.before`, `tool.after`), with their latency and verdict (docs/hooks.md). */
  hooks: z.array(HookCall).optional(),
});
export type ToolRunResult = z.infer<typeof ToolRunResult>;
