import * as z from "zod";
import type { Database } from "../storage/database";
import { decodeRow } from "../storage/decode";
import { COUNTERS, type AgentMetrics, type Counter, type Counts } from "../telemetry/metrics";

/** Each counter's column (migration 0018). */
const COLUMN: Record<Counter, string> = {
  turns: "turns",
  runtimeTokens: "runtime_tokens",
  promptTokens: "prompt_tokens",
  completionTokens: "completion_tokens",
  cachedTokens: "cached_tokens",
  compactions: "compactions",
  toolCalls: "tool_calls",
  toolFailures: "tool_failures",
  hookFailures: "hook_failures",
  reminders: "reminders",
};

const MetricsRow = z
  .object({ agent: z.string(), since: z.string(), updated_at: z.string(), ...Object.fromEntries(COUNTERS.map((c) => [COLUMN[c], z.number()])) })
  .transform((r): AgentMetrics => {
    const row = r as unknown as Record<string, number> & { agent: string; since: string; updated_at: string };
    const counts = Object.fromEntries(COUNTERS.map((c) => [c, row[COLUMN[c]]!])) as Record<Counter, number>;
    return { agent: row.agent, ...counts, cachedShare: counts.promptTokens > 0 ? counts.cachedTokens / counts.promptTokens : null, since: row.since, updatedAt: row.updated_at };
  });

/** The user's counters per agent (`metrics`): added to after each turn and usage report, read by GET /v1/metrics. */
export class MetricsStore {
  constructor(private readonly sql: Database) {}

  add(agent: string, counts: Counts, at: string): void {
    const columns = COUNTERS.map((c) => COLUMN[c]);
    const values = COUNTERS.map((c) => Math.max(0, Math.round(counts[c] ?? 0)));
    this.sql.exec(
      `INSERT INTO metrics (agent, ${columns.join(", ")}, since, updated_at) VALUES (?, ${columns.map(() => "?").join(", ")}, ?, ?)
       ON CONFLICT (agent) DO UPDATE SET ${columns.map((c) => `${c} = ${c} + excluded.${c}`).join(", ")}, updated_at = excluded.updated_at`,
      agent,
      ...values,
      at,
      at,
    );
  }

  list(): AgentMetrics[] {
    return this.sql
      .exec("SELECT * FROM metrics ORDER BY agent")
      .toArray()
      .map((r) => decodeRow(MetricsRow, r, "metrics"));
  }
}
