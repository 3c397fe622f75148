/**
 * What leaves the Conversation object after a turn (docs/telemetry.md), under `waitUntil` so the answer never waits:
 * a frontend's turn's spans over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (a gateway request's turns are traced by
 * the gateway, src/gateway/trace.ts), and every turn's, usage report's and tool run's counts (Analytics Engine when
 * bound, and the user's hub).
 */
import type { Result } from "../core/problem";
import { otlpTarget } from "../platform/config";
import type { Env } from "../platform/env";
import type { TurnResult } from "../protocol/frontend";
import type { ToolRunResult } from "../protocol/tools";
import { addCounts, toolRunCounts, turnCounts, usageCounts, writeDataPoint, type Counts } from "../telemetry/metrics";
import { exportSpans, newTraceId } from "../telemetry/otlp";
import { turnSpans } from "../telemetry/spans";
import type { ConversationScope } from "./scope";

type Observed = Pick<ConversationScope, "owner" | "apps" | "meta">;
type WaitUntil = (work: Promise<unknown>) => void;

/** A turn taken: its counts, and (`traced`: a frontend's turn) its spans, from `start` to now. */
export function observeTurn(env: Env, waitUntil: WaitUntil, scope: Observed, turn: Result<TurnResult>, start: number, traced: boolean): void {
  if (!turn.ok || turn.value.replayed) return;
  count(env, waitUntil, scope, turnCounts(turn.value), turn.value.agent.id);
  const target = traced ? otlpTarget(env) : null;
  if (target) waitUntil(exportSpans(target, turnSpans(turn.value, { traceId: newTraceId(), start, end: Date.now(), tenant: scope.owner.tenant }, true)));
}

/** The upstream's reported usage, one report per call. */
export function observeUsage(env: Env, waitUntil: WaitUntil, scope: Observed, usage: readonly Parameters<typeof usageCounts>[0][]): void {
  if (usage.length) count(env, waitUntil, scope, addCounts(...usage.map(usageCounts)));
}

/** The runtime's calls run outside a turn. */
export function observeToolRun(env: Env, waitUntil: WaitUntil, scope: Observed, run: Result<ToolRunResult>): void {
  if (run.ok && run.value.ran.length) count(env, waitUntil, scope, toolRunCounts(run.value.ran, run.value.hooks));
}

function count(env: Env, waitUntil: WaitUntil, scope: Observed, counts: Counts, agent = scope.meta.agent ?? "-"): void {
  writeDataPoint(env.METRICS, scope.owner, agent, counts);
  waitUntil(
    Promise.resolve(scope.apps.countMetrics(agent, counts)).catch((error: unknown) => console.warn(`metrics: not counted in the hub: ${error instanceof Error ? error.message : String(error)}`)),
  );
}
