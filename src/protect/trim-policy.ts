/**
 * Which trim policy a tool's result gets: the agent's override for that tool (defaults filling its gaps), else
 * the default (head and tail, 800 tokens). The policy's schema is `src/protocol/policies.ts`.
 */
import { TrimPolicy, type TrimPolicyInput } from "../protocol/policies";

export const DEFAULT_TRIM_POLICY: TrimPolicy = TrimPolicy.parse({});

/** The policy for one tool: its override when there is one (defaults filling the gaps), else the default. */
export function resolveTrimPolicy(toolName: string, overrides?: Readonly<Record<string, TrimPolicyInput>>): TrimPolicy {
  if (overrides === undefined || !Object.hasOwn(overrides, toolName)) return DEFAULT_TRIM_POLICY;
  return TrimPolicy.parse(overrides[toolName]);
}
