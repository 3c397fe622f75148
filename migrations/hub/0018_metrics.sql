-- The user's counters per agent (src/telemetry/metrics.ts, docs/telemetry.md): GET /v1/metrics reads them.
CREATE TABLE metrics (
  agent TEXT PRIMARY KEY,
  turns INTEGER NOT NULL DEFAULT 0,
  runtime_tokens INTEGER NOT NULL DEFAULT 0,
  prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  cached_tokens INTEGER NOT NULL DEFAULT 0,
  compactions INTEGER NOT NULL DEFAULT 0,
  tool_calls INTEGER NOT NULL DEFAULT 0,
  tool_failures INTEGER NOT NULL DEFAULT 0,
  hook_failures INTEGER NOT NULL DEFAULT 0,
  reminders INTEGER NOT NULL DEFAULT 0,
  since TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
