/**
 * Counters per tenant and agent (docs/telemetry.md): turns, the runtime's tokens, the upstream's tokens (prompt,
 * completion, cached: the cached share is cached ÷ prompt), compactions, tool calls and failures, hook failures and
 * reminders fired. Each turn's and each usage report's counts go to Workers Analytics Engine when `METRICS` is bound,
 * and to the user's hub, whose SQLite keeps them for `GET /v1/metrics`.
 */
import * as z from "zod";
import type { UsageReport } from "../protocol/frontend";
import type { Owner } from "../protocol/owner";
import type { TracedTurn } from "./spans";

export const COUNTERS = ["turns", "runtimeTokens", "promptTokens", "completionTokens", "cachedTokens", "compactions", "toolCalls", "toolFailures", "hookFailures", "reminders"] as const;
export type Counter = (typeof COUNTERS)[number];
export type Counts = Partial<Record<Counter, number>>;

/** What one turn adds, from its evidence. */
export function turnCounts(turn: TracedTurn): Counts {
  const { envelope } = turn;
  const ran = envelope.tools?.ran ?? [];
  return {
    turns: 1,
    runtimeTokens: turn.usage.total,
    compactions: envelope.compaction ? 1 : 0,
    toolCalls: ran.length,
    toolFailures: ran.filter((r) => r.outcome !== "ok").length,
    hookFailures: (envelope.hooks?.calls ?? []).filter((c) => c.failed !== undefined).length,
    reminders: envelope.reminders?.length ?? 0,
  };
}

/** What the runtime's calls run outside a turn add. */
export function toolRunCounts(ran: readonly { outcome: string }[], hooks: readonly { failed?: unknown }[] = []): Counts {
  return { toolCalls: ran.length, toolFailures: ran.filter((r) => r.outcome !== "ok").length, hookFailures: hooks.filter((h) => h.failed !== undefined).length };
}

/** What one upstream call's reported usage adds. */
export function usageCounts(usage: Pick<UsageReport, "promptTokens" | "completionTokens"> & { cachedTokens?: number | null | undefined }): Counts {
  return { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens, cachedTokens: usage.cachedTokens ?? 0 };
}

/** Adds counts up, counter by counter. */
export function addCounts(...all: Counts[]): Counts {
  const sum: Counts = {};
  for (const counts of all) for (const c of COUNTERS) if (counts[c]) sum[c] = (sum[c] ?? 0) + counts[c];
  return sum;
}

/**
 * One data point in Analytics Engine: blobs [tenant, agent], the counters as doubles in COUNTERS' order, the tenant as
 * the index (sampling keeps a tenant's points together). Query: `SELECT blob2 AS agent, SUM(double1) AS turns … WHERE
 * index1 = '<tenant>'`.
 */
export function writeDataPoint(dataset: AnalyticsEngineDataset | undefined, owner: Owner, agent: string, counts: Counts): void {
  if (!dataset) return;
  try {
    dataset.writeDataPoint({ indexes: [owner.tenant], blobs: [owner.tenant, agent], doubles: COUNTERS.map((c) => counts[c] ?? 0) });
  } catch (error) {
    console.warn(`metrics: a data point was not written: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** One agent's counters, as `GET /v1/metrics` answers them. */
export const AgentMetrics = z.object({
  /** `app:agent`, or `-` for conversations without an agent. */
  agent: z.string(),
  turns: z.number(),
  /** The runtime's count of the model input it assembled, summed over the turns. */
  runtimeTokens: z.number(),
  /** What the upstream reported (the gateway's calls, a frontend's appended `usage`). */
  promptTokens: z.number(),
  completionTokens: z.number(),
  cachedTokens: z.number(),
  /** cachedTokens ÷ promptTokens; null before any usage was reported. */
  cachedShare: z.number().nullable(),
  compactions: z.number(),
  toolCalls: z.number(),
  toolFailures: z.number(),
  hookFailures: z.number(),
  reminders: z.number(),
  since: z.string(),
  updatedAt: z.string(),
});
export type AgentMetrics = z.infer<typeof AgentMetrics>;

/** `GET /v1/metrics`: the caller's own counters, one row per agent. */
export const MetricsPage = z.object({ agents: z.array(AgentMetrics) });
export type MetricsPage = z.infer<typeof MetricsPage>;
