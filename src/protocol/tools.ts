/**
 * What the hub tells a Conversation about an agent's tools and skills, and what one tool call
 * came back with. JSON-serialisable: they cross Durable Object RPC.
 */
import type { ContextEnvelope } from "../core/evidence";
import type { AgentInfo } from "./frontend";
import type { ToolAnnotations } from "./methods";

/**
 * A JSON object, typed shallowly: Durable Object RPC's types turn `unknown` into `never`, and a recursive
 * JSON type (or `any`) into "type instantiation is excessively deep" at the caller.
 */
export type JsonObject = { [key: string]: string | number | boolean | null | object };

export interface ToolSpec {
  /** Qualified: `app:tool`. */
  name: string;
  description: string;
  /** A JSON Schema object (`type: "object"`), as the app declared it. */
  inputSchema: JsonObject;
  annotations?: ToolAnnotations;
  /** Whether the app serving it is connected now. */
  online: boolean;
}

export interface SkillSpec {
  /** Qualified: `app:skill`. */
  name: string;
  description: string;
}

export interface Toolbox {
  agent: AgentInfo;
  /** The agent's `tools`, in its order: what the prompt lists. */
  bound: ToolSpec[];
  /** Tools the agent's `catalog` patterns match, minus the bound ones, sorted by name: found with search_tools. */
  catalog: ToolSpec[];
  /** Skills the agent's `skills` patterns match, sorted by name. */
  skills: SkillSpec[];
  /** Names in the agent's `tools` and `skills` that no app has registered (skipped above). */
  unknown: string[];
}

/** A skill as the model reads it: its manual and references, from R2. */
export interface SkillContent {
  name: string;
  description: string;
  manual: string;
  references: { name: string; content: string }[];
}

/** `offline`: not sent (no app connected); `disconnected`: the app went away after the call was sent, so it may have run. */
export type ToolFailureReason = "unknown_tool" | "invalid_arguments" | "offline" | "disconnected" | "timeout" | "error" | "invalid";

/** One tool call's outcome. `ok: true` means the app answered; `isError` says whether its tool failed (the model reads `text` either way). */
export type ToolRun =
  | { ok: true; text: string; isError: boolean; ms: number }
  | { ok: false; reason: ToolFailureReason; detail: string; ms: number };

/** One tool as OpenAI's Chat Completions take it (`tools: [...]`); other APIs' formats are a rename away. */
export interface FunctionTool {
  type: "function";
  function: { name: string; description: string; parameters: JsonObject };
}

/** A tool of a turn's list, in the evidence: what the model calls it, where it comes from, what it costs. */
export interface OfferedTool {
  name: string;
  /** `app:tool`, or null for the runtime's own. */
  qualified: string | null;
  source: "bound" | "runtime" | "loaded";
  tokens: number;
}

/** One call the runtime ran: how it ended (`ok`, `tool_error` when the tool said it failed, or why it did not run) and how long it took. */
export type RanToolCall = NonNullable<NonNullable<ContextEnvelope["tools"]>["ran"]>[number];

/** `POST …/tools/run`: the calls run, what protecting each result did, and where the stored results end. */
export interface ToolRunResult {
  ran: RanToolCall[];
  toolResults: NonNullable<ContextEnvelope["tools"]>["results"];
  appended: number;
  lastSeq: number;
}
