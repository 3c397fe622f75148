/**
 * What stands between a model's call and its tool (docs/hooks.md, docs/tools.md "The guard"): the agent's rule guard,
 * then the `tool.before` hooks, each in turn, for every call the runtime serves; nothing runs before every verdict is
 * in. A denial answers the call the way a user's denial does; a patch changes the arguments the tool runs with (checked
 * against its schema again by the hub). Then `tool.after` hooks may rewrite a result before it is stored.
 */
import { hooksAt, runChain, type HookScope } from "../hooks/chain";
import type { CallResult, ModelCall, RanCall } from "./run";
import { evaluateGuard } from "./guard";
import { modelToolName } from "./model-names";
import { isRuntimeTool } from "./runtime-tools";
import { parseArguments } from "./validate";
import type { Toolbox } from "../protocol/tools";

export interface Gate {
  allowed: ModelCall[];
  denied: { result: CallResult; ran: RanCall }[];
}

export interface GateContext {
  toolbox: Toolbox;
  neutralize: (text: string) => string;
  hooks?: HookScope | undefined;
  /** The user's request the calls serve: what a `tool.before` hook reads beside the call (never the model's reasoning). */
  request?: string | null | undefined;
}

/** What the model reads for a call a hook denied; the hook's reason follows. */
export const HOOK_DENIED_RESULT = "[not run: a hook denied this tool call]";

export async function gateCalls(calls: readonly ModelCall[], ctx: GateContext): Promise<Gate> {
  const guarded = guardCalls(calls, ctx.toolbox, ctx.neutralize);
  const scope = ctx.hooks;
  if (!scope || hooksAt(scope.hooks, "tool.before").length === 0) return guarded;
  const specs = new Map([...ctx.toolbox.bound, ...ctx.toolbox.catalog].map((t) => [modelToolName(t.name), t]));
  const verdicts = await Promise.all(
    guarded.allowed.map(async (call) => {
      const spec = specs.get(call.name);
      const tool = spec?.name ?? call.name;
      const outcome = await runChain(scope, "tool.before", call, {
        tool: { name: tool, toolCallId: call.id },
        payload: (c) => ({ request: ctx.request ?? null, call: { id: c.id, tool, arguments: parsed(c.arguments) }, ...(spec?.annotations ? { annotations: spec.annotations } : {}) }),
        apply: (c, decision) => (decision.action === "patch" ? { state: { ...c, arguments: JSON.stringify(decision.arguments) } } : { state: c, stop: decision.action === "deny" }),
        closed: (_, why) => ({ action: "deny", reason: why }),
      });
      const stopped = outcome.stoppedBy;
      if (stopped?.decision.action !== "deny") return { call: outcome.state };
      const reason = stopped.decision.reason;
      return {
        denied: {
          result: { toolCallId: call.id, content: `${HOOK_DENIED_RESULT} Its reason: ${ctx.neutralize(reason)}`, runtimeWritten: true },
          ran: { toolCallId: call.id, tool: call.name, servedBy: tool, outcome: "denied" as const, ms: 0, reason, deniedBy: stopped.hook.id },
        },
      };
    }),
  );
  return {
    allowed: verdicts.flatMap((v) => ("call" in v && v.call ? [v.call] : [])),
    denied: [...guarded.denied, ...verdicts.flatMap((v) => ("denied" in v && v.denied ? [v.denied] : []))],
  };
}

/** The `tool.after` hooks on one app tool's result: the result as the last hook left it (a hook failing closed withholds it). */
export async function reviewResult(scope: HookScope | undefined, call: { id: string; tool: string; arguments: string }, result: { text: string; isError: boolean }): Promise<{ text: string; isError: boolean }> {
  if (!scope || hooksAt(scope.hooks, "tool.after", call.tool).length === 0) return result;
  const outcome = await runChain(scope, "tool.after", result, {
    tool: { name: call.tool, toolCallId: call.id },
    payload: (r) => ({ call: { id: call.id, tool: call.tool, arguments: parsed(call.arguments) }, result: r }),
    apply: (r, decision) => ({ state: decision.action === "replace" ? { text: decision.text, isError: decision.isError ?? r.isError } : r }),
    closed: (hook) => ({ action: "replace", text: `[result withheld: ${hook.id} could not review it]`, isError: true }),
  });
  return outcome.state;
}

/** What the model reads for a call the agent's guard denied; the rule's reason follows. */
export const GUARD_DENIED_RESULT = "[not run: the guard denied this tool call]";

/**
 * The agent's guard on calls the runtime serves (docs/tools.md, "The guard"): those it allows, and a result and an
 * outcome for each it denies. It reads only the call (its tool's names and annotations, its arguments) and the
 * agent's rules. A call to a tool the runtime does not know is left alone: it is not run anyway.
 */
export function guardCalls(calls: readonly ModelCall[], toolbox: Toolbox, neutralize: (text: string) => string): { allowed: ModelCall[]; denied: { result: CallResult; ran: RanCall }[] } {
  const guard = toolbox.agent.guard;
  if (!guard || guard.rules.length === 0) return { allowed: [...calls], denied: [] };
  const byModelName = new Map([...toolbox.bound, ...toolbox.catalog].map((t) => [modelToolName(t.name), t]));
  const allowed: ModelCall[] = [];
  const denied: { result: CallResult; ran: RanCall }[] = [];
  for (const call of calls) {
    const spec = byModelName.get(call.name);
    if (!spec && !isRuntimeTool(call.name)) {
      allowed.push(call);
      continue;
    }
    const args = parseArguments(call.arguments);
    const verdict = evaluateGuard(guard, { name: call.name, qualified: spec?.name ?? call.name, ...(spec?.annotations ? { annotations: spec.annotations } : {}), arguments: args.ok ? args.value : null });
    if (verdict.verdict === "allow") {
      allowed.push(call);
      continue;
    }
    denied.push({
      result: { toolCallId: call.id, content: `${GUARD_DENIED_RESULT} Its reason: ${neutralize(verdict.reason)}`, runtimeWritten: true },
      ran: { toolCallId: call.id, tool: call.name, servedBy: spec?.name ?? call.name, outcome: "denied", ms: 0, reason: verdict.reason, deniedBy: "guard" },
    });
  }
  return { allowed, denied };
}

function parsed(args: string): unknown {
  try {
    return JSON.parse(args === "" ? "{}" : args);
  } catch {
    return args;
  }
}
