/**
 * Running the hooks at one point of a turn (docs/hooks.md). Pure of Durable Objects: the hub is behind `HookHost`.
 * Hooks at a point run one after another, in their registered order, each on what the one before it left; the first
 * refusal (refuse, deny, reject, a summary) ends the chain. A hook that does not answer in time, or answers what its
 * point does not take, follows its fail mode: `open` changes nothing, `closed` gives the point's strict verdict.
 */
import { failWith, ok, type Result } from "../core/problem";
import { admitText, REDACTION_MARKER } from "../protect";
import { HookDecisions, type HookCall, type HookCallParams, type HookDecision, type HookFailure, type HookPayload, type HookPoint, type HookSpec } from "../protocol/hooks";

export type HookAnswer = { ok: true; value: unknown; ms: number } | { ok: false; reason: HookFailure; detail: string; ms: number };

/** Where hooks are called: the apps' sockets, through the hub. */
export interface HookHost {
  callHook(hook: HookSpec, params: HookCallParams): Promise<HookAnswer>;
}

/** One turn's hooks, and the evidence's record of every call made to them. */
export interface HookScope {
  host: HookHost;
  conversationId: string;
  turnId: string;
  agent: string;
  hooks: readonly HookSpec[];
  /** Every call, in the order made: the turn's `envelope.hooks`. */
  log: HookCall[];
}

/** The hooks registered at `point` (for a tool hook, those whose `tools` globs match the tool), in running order. */
export function hooksAt(hooks: readonly HookSpec[], point: HookPoint, tool?: string): HookSpec[] {
  return hooks.filter((h) => h.point === point && (tool === undefined || h.tools === null || h.tools.some((g) => globMatches(g, tool))));
}

export interface ChainOptions<P extends HookPoint, S> {
  /** For tool hooks: the call it is about (matched against each hook's `tools`, and named in the evidence). */
  tool?: { name: string; toolCallId: string };
  payload: (state: S) => HookPayload<P>;
  /** Applies one hook's decision; `stop` ends the chain there. */
  apply: (state: S, decision: HookDecision<P>, hook: HookSpec) => { state: S; stop?: boolean };
  /** What a hook failing closed decides. */
  closed: (hook: HookSpec, why: string) => HookDecision<P>;
}

export interface ChainOutcome<P extends HookPoint, S> {
  state: S;
  /** The hook whose decision ended the chain, and that decision. */
  stoppedBy?: { hook: HookSpec; decision: HookDecision<P> };
}

export async function runChain<P extends HookPoint, S>(scope: HookScope, point: P, state: S, options: ChainOptions<P, S>): Promise<ChainOutcome<P, S>> {
  for (const hook of hooksAt(scope.hooks, point, options.tool?.name)) {
    const params: HookCallParams = { hook: hook.name, point, conversationId: scope.conversationId, turnId: scope.turnId, agent: scope.agent, payload: options.payload(state) };
    // The hub itself failing (an RPC error) is a failure of the hook like any other: its fail mode decides.
    const answer = await scope.host.callHook(hook, params).catch((error: unknown): HookAnswer => ({ ok: false, reason: "error", detail: error instanceof Error ? error.message : String(error), ms: 0 }));
    const read = readDecision(point, answer);
    const decision = read.ok ? read.value : hook.failMode === "open" ? ({ action: "continue" } as HookDecision<P>) : options.closed(hook, `${hook.id} did not answer (${read.problem.failed}: ${cutAtSpace(read.problem.detail, REASON_DETAIL_CHARS)}) and fails closed`);
    scope.log.push({
      hook: hook.id,
      point,
      ...(options.tool ? { toolCallId: options.tool.toolCallId } : {}),
      ms: answer.ms,
      verdict: decision.action,
      // A failure's detail may quote the app (its error message): evidence holds no secret of it.
      ...(read.ok ? {} : { failed: read.problem.failed, detail: evidenceDetail(admitText(read.problem.detail).text) }),
    });
    const applied = options.apply(state, decision, hook);
    state = applied.state;
    if (applied.stop) return { state, stoppedBy: { hook, decision } };
  }
  return { state };
}

/**
 * Runs `run` on each item in parallel, each with a log of its own, then adds their logs to the scope's in the items'
 * order: the evidence's order never depends on which app answered first.
 */
export async function inOrder<I, T, S extends HookScope | undefined>(scope: S, items: readonly I[], run: (item: I, own: S) => Promise<T>): Promise<T[]> {
  const scopes = items.map(() => (scope ? { ...scope, log: [] } : scope) as S);
  const results = await Promise.all(items.map((item, i) => run(item, scopes[i]!)));
  for (const own of scopes) if (own && scope) scope.log.push(...own.log);
  return results;
}

function readDecision<P extends HookPoint>(point: P, answer: HookAnswer): Result<HookDecision<P>, { failed: HookFailure; detail: string }> {
  if (!answer.ok) return failWith({ failed: answer.reason, detail: answer.detail });
  const parsed = HookDecisions[point].safeParse(answer.value);
  if (parsed.success) return ok(parsed.data as HookDecision<P>);
  const detail = parsed.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
  return failWith({ failed: "invalid", detail: `not a decision '${point}' takes: ${detail}` });
}

/** How much of a failure's detail the evidence keeps. */
const DETAIL_CHARS = 500;
/** How much of it a fail-closed verdict's reason quotes (a reason is at most LIMITS.summaryChars). */
const REASON_DETAIL_CHARS = 1_500;

/**
 * Raw outside text cut at a space, not inside a word: whoever redacts it next still sees each secret whole. (A run of
 * more than 200 characters without a space is cut where it must be.)
 */
function cutAtSpace(text: string, max: number): string {
  if (text.length <= max) return text;
  const space = text.slice(0, max + 1).search(/\s\S*$/);
  return `${text.slice(0, space > max - 200 ? space : max)} …`;
}

/**
 * Redacted text as the evidence keeps it: cut, never inside a redaction marker. (Redact whole first: a secret cut
 * short is no longer recognised.)
 */
export function evidenceDetail(redacted: string): string {
  if (redacted.length <= DETAIL_CHARS) return redacted;
  const marker = [...redacted.matchAll(REDACTION_MARKER)].find((m) => m.index < DETAIL_CHARS && m.index + m[0].length > DETAIL_CHARS);
  return redacted.slice(0, marker ? marker.index : DETAIL_CHARS);
}

/** `*` any run of characters, `?` one; everything else itself. */
export function globMatches(glob: string, name: string): boolean {
  const source = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${source}$`).test(name);
}
