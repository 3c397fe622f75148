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
}

/**
 * The tool list of a turn, in a fixed order so it changes only when the bindings do: the bound tools in the agent's
 * order, the runtime's own (search_tools, read_skill, list_contexts, read_context, each when it applies), then the
 * tools loaded from the catalog, in the order they were loaded. Loading only appends, so the front stays cacheable.
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
    ...(input.skills.length ? (["read_skill"] as const) : []),
    ...(input.browseContexts ? (["list_contexts", "read_context"] as const) : []),
  ];
  for (const name of runtime) add({ type: "function", function: { name, description: RUNTIME_TOOLS[name].description, parameters: RUNTIME_TOOLS[name].parameters } }, null, "runtime");
  const catalog = new Map(input.catalog.map((t) => [t.name, t]));
  for (const name of input.loaded) {
    const spec = catalog.get(name);
    if (spec) add(functionTool(spec), spec.name, "loaded", spec.annotations);
  }
  return { tools, offered, tokens: offered.reduce((sum, t) => sum + t.tokens, 0), skipped };
}

export function functionTool(spec: ToolSpec): FunctionTool {
  return { type: "function", function: { name: modelToolName(spec.name), description: spec.description, parameters: spec.inputSchema } };
}
