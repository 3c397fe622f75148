/**
 * Hooks an app serves (docs/hooks.md): each hook's declaration, sent in `initialize`, plus the handler that
 * answers the runtime's `hooks/call` at its point, with the params, the payload and the decision validated.
 */
import * as z from "zod";
import { HookCallParams, HookDecisions, HookPayloads, type HookDeclaration, type HookPoint } from "../protocol/hooks";
import { ErrorCode, issuesOf, rpcError, rpcResult } from "../protocol/jsonrpc";
import type { Reply } from "./rpc-link";

type Awaitable<T> = T | Promise<T>;

/** What a hook at point `P` is sent, as the SDK has checked it. */
export type HookPayloadOf<P extends HookPoint> = z.output<(typeof HookPayloads)[P]>;
/** What a hook at point `P` may answer; `{ action: "continue" }` (or `undefined`) changes nothing. */
export type HookDecisionOf<P extends HookPoint> = z.input<(typeof HookDecisions)[P]>;

/** Which turn a hook call is about. */
export interface HookCallInfo {
  conversationId: string;
  turnId: string;
  /** The qualified id (`app:agent`) of the agent whose turn it is. */
  agent: string;
  /** The hook's own name, as declared. */
  hook: string;
}

/** One hook at one point: its declaration plus the handler, whose payload and answer follow the point. */
export interface AppHookAt<P extends HookPoint> extends Omit<HookDeclaration, "point"> {
  point: P;
  /**
   * Answers the runtime's `hooks/call`: a decision, or nothing for `continue`. A throw, or an answer that is not
   * a decision of this point, is sent back as a JSON-RPC error and the runtime applies the hook's `failMode`.
   * `turn.end` is a notification: what its handler returns or throws is not sent anywhere.
   */
  handler: (payload: HookPayloadOf<P>, info: HookCallInfo) => Awaitable<HookDecisionOf<P> | undefined | void>;
}

/** A hook at any point; in an array, each literal's `point` types its handler. */
export type AppHook = { [P in HookPoint]: AppHookAt<P> }[HookPoint];

/** Types a hook declared on its own (outside the `hooks` array) by its point: `defineHook({ point: "input", … })`. */
export function defineHook<P extends HookPoint>(hook: AppHookAt<P>): AppHookAt<P> {
  return hook;
}

export type HooksByName = ReadonlyMap<string, AppHook>;

export function hookDeclaration({ handler: _handler, ...declared }: AppHook): HookDeclaration {
  return declared;
}

/** Refuses at construction a hook without a handler (two of one name the protocol's `InitializeParams` refuses). */
export function hooksByName(hooks: readonly AppHook[]): Map<string, AppHook> {
  const byName = new Map<string, AppHook>();
  for (const hook of hooks) {
    if (typeof hook.handler !== "function") throw new Error(`hook '${hook.name}' has no handler`);
    byName.set(hook.name, hook);
  }
  return byName;
}

type Outcome = { ok: true; decision: unknown } | { ok: false; code: ErrorCode; message: string; data?: unknown; warned?: true };

/** `hooks/call` as a request: the decision, or an error the runtime reads as the hook having failed. */
export async function answerHookCall(hooks: HooksByName, raw: unknown): Promise<Reply> {
  const outcome = await runHook(hooks, raw);
  if (outcome.ok) {
    const { decision } = outcome;
    return (id) => rpcResult(id, decision);
  }
  const { code, message, data } = outcome;
  return (id) => rpcError(id, code, message, data);
}

/** `hooks/call` as a notification (`turn.end`): the handler runs, nothing is sent; a failure is only logged. */
export async function runHookNotification(hooks: HooksByName, raw: unknown): Promise<void> {
  const outcome = await runHook(hooks, raw);
  if (!outcome.ok && !outcome.warned) console.warn(`hooks/call notification: ${outcome.message}`);
}

async function runHook(hooks: HooksByName, raw: unknown): Promise<Outcome> {
  const params = HookCallParams.safeParse(raw);
  if (!params.success) return { ok: false, code: ErrorCode.InvalidParams, message: "invalid params", data: { issues: issuesOf(params.error) } };
  const { hook: name, point, conversationId, turnId, agent } = params.data;
  const hook = hooks.get(name);
  if (!hook) return { ok: false, code: ErrorCode.InvalidParams, message: `unknown hook '${name}'` };
  if (hook.point !== point) return { ok: false, code: ErrorCode.InvalidParams, message: `hook '${name}' is registered for '${hook.point}', not '${point}'` };
  const payload = HookPayloads[point].safeParse(params.data.payload);
  if (!payload.success) {
    return { ok: false, code: ErrorCode.InvalidParams, message: `invalid payload for a '${point}' hook`, data: { issues: issuesOf(payload.error) } };
  }
  let answer: unknown;
  try {
    // The point was checked against the hook's own above, so the payload is the one its handler takes.
    const handler = hook.handler as (payload: unknown, info: HookCallInfo) => Awaitable<unknown>;
    answer = await handler(payload.data, { conversationId, turnId, agent, hook: name });
  } catch (error) {
    return { ok: false, code: ErrorCode.InternalError, message: error instanceof Error ? error.message : String(error) };
  }
  const decision = HookDecisions[point].safeParse(answer === undefined ? { action: "continue" } : answer);
  if (decision.success) return { ok: true, decision: decision.data };
  const issues = issuesOf(decision.error);
  const detail = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
  const message = `hook '${name}' returned an invalid '${point}' decision: ${detail}`;
  // The runtime only records the failure; the app's developer should see it too.
  console.warn(message);
  return { ok: false, code: ErrorCode.InternalError, message, data: { issues }, warned: true };
}
