import { countTokens } from "../core/tokens";
import type { OfferedTool } from "../protocol/evidence";
import type { FunctionTool } from "../protocol/frontend";
import type { SkillSpec, ToolSpec } from "../protocol/tools";
import { modelToolName } from "./model-names";
import { RUNTIME_TOOLS, type RuntimeToolName } from "./runtime-tools";

export interface ToolOffer {
  tools: FunctionTool[];
  offered: OfferedTool[];
  /** Tokens the list costs the model input: its tools' JSON, counted like text. */
  tokens: number;
  /** Tools left out, and why: another of the list already has the model name. */
  skipped: { qualified: string; reason: "duplicate_name" }[];
}

export interface OfferInput {
  /** The agent's bound tools, in its order. */
  bound: readonly ToolSpec[];
  /** The catalog the agent can search (search_tools is offered when it is not empty). */
  catalog: readonly ToolSpec[];
  /** Tools the conversation loaded from the catalog, in the order they were loaded. */
  loaded: readonly string[];
  skills: readonly SkillSpec[];
  browseContexts: boolean;
  /** The conversation offers search_history: from its first summary or clear on, or from the first turn when the agent asks. */
  searchHistory?: boolean;
  /** The agents `delegate` may hand a task to (it is offered when there is one), past the trust boundary. */
  subagents?: readonly { id: string; description: string }[];
}

/**
 * The tool list of a turn, in a fixed order so it changes only when the bindings do: the bound tools in the agent's
 * order, the runtime's own (search_tools, search_history, read_skill, list_contexts, read_context, delegate, each when
 * it applies), then the tools loaded from the catalog, in the order they were loaded. Loading only appends, so the
 * front stays cacheable; search_history arrives once, for good, with a compaction or a clear.
 */
export function offerTools(input: OfferInput): ToolOffer {
  const tools: FunctionTool[] = [];
  const offered: OfferedTool[] = [];
  const skipped: ToolOffer["skipped"] = [];
  const names = new Set<string>();
  const add = (tool: FunctionTool, qualified: string | null, source: OfferedTool["source"], annotations?: ToolSpec["annotations"]) => {
    if (names.has(tool.function.name)) {
      if (qualified) skipped.push({ qualified, reason: "duplicate_name" });
      return;
    }
    names.add(tool.function.name);
    tools.push(tool);
    offered.push({ name: tool.function.name, qualified, source, tokens: countTokens(JSON.stringify(tool)), ...(annotations ? { annotations } : {}) });
  };
  for (const spec of input.bound) add(functionTool(spec), spec.name, "bound", spec.annotations);
  const runtime: RuntimeToolName[] = [
    ...(input.catalog.length ? (["search_tools"] as const) : []),
    ...(input.searchHistory ? (["search_history"] as const) : []),
    ...(input.skills.length ? (["read_skill"] as const) : []),
    ...(input.browseContexts ? (["list_contexts", "read_context"] as const) : []),
  ];
  for (const name of runtime) add({ type: "function", function: { name, description: RUNTIME_TOOLS[name].description, parameters: RUNTIME_TOOLS[name].parameters } }, null, "runtime");
  if (input.subagents?.length) add(delegateTool(input.subagents), null, "runtime");
  const catalog = new Map(input.catalog.map((t) => [t.name, t]));
  for (const name of input.loaded) {
    const spec = catalog.get(name);
    if (spec) add(functionTool(spec), spec.name, "loaded", spec.annotations);
  }
  return { tools, offered, tokens: offered.reduce((sum, t) => sum + t.tokens, 0), skipped };
}

/**
 * `delegate`, for this agent's subagents: its `agent` argument is one of them (an enum), and its description lists
 * them with what each does. It changes only when the agent's subagents or their descriptions do.
 */
export function delegateTool(subagents: readonly { id: string; description: string }[]): FunctionTool {
  const { description, parameters } = RUNTIME_TOOLS.delegate;
  const lines = subagents.map((s) => `- ${s.id}${s.description ? `: ${s.description}` : ""}`);
  const agent = { ...parameters.properties.agent, enum: subagents.map((s) => s.id) };
  return {
    type: "function",
    function: { name: "delegate", description: `${description}\nYour subagents:\n${lines.join("\n")}`, parameters: { ...parameters, properties: { ...parameters.properties, agent } } as FunctionTool["function"]["parameters"] },
  };
}

export function functionTool(spec: ToolSpec): FunctionTool {
  return { type: "function", function: { name: modelToolName(spec.name), description: spec.description, parameters: spec.inputSchema } };
}
