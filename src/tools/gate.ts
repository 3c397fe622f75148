/**
 * What stands between a model's call and its tool (docs/hooks.md, docs/tools.md "The guard"): the agent's rule guard,
 * then its model guard on the calls no rule decided, then the `tool.before` hooks, each in turn, for every call the
 * runtime serves; nothing runs before every verdict is
 * in. A denial answers the call the way a user's denial does; a patch changes the arguments the tool runs with (checked
 * against its schema again by the hub). Then `tool.after` hooks may rewrite a result before it is stored.
 */
import { evidenceDetail, hooksAt, inOrder, runChain, type HookScope } from "../hooks/chain";
import type { CallResult, ModelCall, RanCall, ToolHost } from "./calls";
import { GuardModel } from "../protocol/methods";
import { needsGuardModel } from "./guard-model";
import { evaluateGuard } from "./guard";
import { toolsByModelName } from "./model-names";
import { isRuntimeTool } from "./runtime-tools";
import { parseArguments, validateArguments } from "./validate";
import { admitText } from "../protect";
import type { Toolbox } from "../protocol/tools";

export interface Gate {
  allowed: ModelCall[];
  denied: { result: CallResult; ran: RanCall }[];
}

export interface GateContext {
  toolbox: Toolbox;
  neutralize: (text: string) => string;
  hooks?: HookScope | undefined;
  /** Where the model guard is asked (the deployment's named upstreams). */
  host?: Pick<ToolHost, "askGuardModel"> | undefined;
  /** The user's request the calls serve: what the guards and `tool.before` hooks read beside the call (never the model's reasoning). */
  request?: string | null | undefined;
}

/** The model guard's id in `envelope.hooks`: it is the runtime's own tool.before hook (a denial's `deniedBy` is `model-guard`). */
export const MODEL_GUARD = "runtime:model-guard";

/** What the model reads for a call a hook denied; the hook's reason follows. */
export const HOOK_DENIED_RESULT = "[not run: a hook denied this tool call]";

export async function gateCalls(calls: readonly ModelCall[], ctx: GateContext): Promise<Gate> {
  const ruled = guardCalls(calls, ctx.toolbox, ctx.neutralize);
  const { allowed, denied } = await judgeCalls(ruled, ctx);
  const guarded: Gate = { allowed, denied };
  const scope = ctx.hooks;
  if (!scope || hooksAt(scope.hooks, "tool.before").length === 0) return guarded;
  const specs = toolsByModelName(ctx.toolbox);
  const verdicts = await inOrder(scope, guarded.allowed, async (call, own) => {
    const spec = specs.get(call.name);
    const tool = spec?.name ?? call.name;
    let patchedBy: string | undefined;
    const outcome = await runChain(own, "tool.before", call, {
      tool: { name: tool, toolCallId: call.id },
      payload: (c) => ({ request: ctx.request ?? null, call: { id: c.id, tool, arguments: parsed(c.arguments) }, ...(spec?.annotations ? { annotations: spec.annotations } : {}) }),
      apply: (c, decision, hook) => {
        if (decision.action !== "patch") return { state: c, stop: decision.action === "deny" };
        patchedBy = hook.id;
        return { state: { ...c, arguments: JSON.stringify(decision.arguments) } };
      },
      closed: (_, why) => ({ action: "deny", reason: why }),
    });
    const stopped = outcome.stoppedBy;
    const denial = (reason: string, by: string) => ({
      denied: {
        result: { toolCallId: call.id, content: `${HOOK_DENIED_RESULT} Its reason: ${reason}`, runtimeWritten: true },
        ran: { toolCallId: call.id, tool: call.name, servedBy: tool, outcome: "denied" as const, ms: 0, reason, deniedBy: by },
      },
    });
    // The hook's reason reaches the model, the evidence and the events: text from outside, past the boundary.
    if (stopped?.decision.action === "deny") return denial(admitText(ctx.neutralize(stopped.decision.reason)).text, stopped.hook.id);
    // A patch the tool's schema refuses is the hook's fault, not the model's: the call is not run, and the model is
    // told so rather than asked to fix arguments it did not write.
    const patched = patchedBy && spec ? validateArguments(spec.inputSchema, parsed(outcome.state.arguments)) : null;
    if (patched && !patched.ok) return denial(`${patchedBy}'s patch of its arguments does not match ${tool}'s schema (${patched.problem.join("; ")}); the call as made was not run`, patchedBy!);
    return { call: outcome.state };
  });
  return {
    allowed: verdicts.flatMap((v) => ("call" in v && v.call ? [v.call] : [])),
    denied: [...guarded.denied, ...verdicts.flatMap((v) => ("denied" in v && v.denied ? [v.denied] : []))],
  };
}

/**
 * The agent's model guard (docs/tools.md, "The model guard"), on the calls no rule decided: asked in parallel, and
 * nothing runs before every verdict is in. Each question lands in the evidence as a `tool.before` hook call.
 */
async function judgeCalls(ruled: Gate & { unruled: ModelCall[] }, ctx: GateContext): Promise<Gate> {
  const declared = ctx.toolbox.agent.guard?.model;
  const judge = ctx.host?.askGuardModel;
  if (!declared || !judge) return ruled;
  const config = GuardModel.parse(declared);
  const specs = toolsByModelName(ctx.toolbox);
  // The runtime's own tools but `delegate` only read: they are asked about as read-only tools are.
  const annotationsOf = (name: string) => specs.get(name)?.annotations ?? (isRuntimeTool(name) && name !== "delegate" ? { readOnlyHint: true } : undefined);
  const asked = ruled.unruled.filter((call) => needsGuardModel(config, annotationsOf(call.name)));
  if (asked.length === 0) return ruled;
  const verdicts = new Map(
    await Promise.all(
      asked.map(async (call) => {
        const tool = specs.get(call.name)?.name ?? call.name;
        const annotations = annotationsOf(call.name);
        const verdict = await judge(config, { agent: ctx.toolbox.agent.id, request: ctx.request ?? null, call: { tool, arguments: parsed(call.arguments), ...(annotations ? { annotations } : {}) } });
        // The model's reason is outside text: redacted before the model, the evidence or the events read it.
        const reason = admitText(ctx.neutralize(verdict.reason)).text;
        return [call.id, { verdict: { ...verdict, reason }, tool }] as const;
      }),
    ),
  );
  // In the calls' order, whichever answered first.
  for (const [id, { verdict }] of verdicts) {
    ctx.hooks?.log.push({ hook: MODEL_GUARD, point: "tool.before", toolCallId: id, ms: verdict.ms, verdict: verdict.verdict, ...(verdict.failed ? { failed: verdict.failed } : {}), detail: evidenceDetail(verdict.reason) });
  }
  const denied = ruled.allowed.filter((c) => verdicts.get(c.id)?.verdict.verdict === "deny");
  return {
    allowed: ruled.allowed.filter((c) => verdicts.get(c.id)?.verdict.verdict !== "deny"),
    denied: [
      ...ruled.denied,
      ...denied.map((call) => {
        const { verdict, tool } = verdicts.get(call.id)!;
        return {
          result: { toolCallId: call.id, content: `${GUARD_DENIED_RESULT} Its reason: ${verdict.reason}`, runtimeWritten: true },
          ran: { toolCallId: call.id, tool: call.name, servedBy: tool, outcome: "denied" as const, ms: verdict.ms, reason: verdict.reason, deniedBy: "model-guard" },
        };
      }),
    ],
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
export function guardCalls(calls: readonly ModelCall[], toolbox: Toolbox, neutralize: (text: string) => string): Gate & { unruled: ModelCall[] } {
  const guard = toolbox.agent.guard;
  const byModelName = toolsByModelName(toolbox);
  const known = (call: ModelCall) => byModelName.has(call.name) || isRuntimeTool(call.name);
  if (!guard || guard.rules.length === 0) return { allowed: [...calls], denied: [], unruled: calls.filter(known) };
  const unruled: ModelCall[] = [];
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
      if (verdict.rule === null) unruled.push(call);
      continue;
    }
    denied.push({
      result: { toolCallId: call.id, content: `${GUARD_DENIED_RESULT} Its reason: ${neutralize(verdict.reason)}`, runtimeWritten: true },
      ran: { toolCallId: call.id, tool: call.name, servedBy: spec?.name ?? call.name, outcome: "denied", ms: 0, reason: verdict.reason, deniedBy: "guard" },
    });
  }
  return { allowed, denied, unruled };
}

/** The arguments as the guards and hooks read them: the JSON object, or the model's text when it is not one. */
function parsed(args: string): unknown {
  const read = parseArguments(args);
  return read.ok ? read.value : args;
}
