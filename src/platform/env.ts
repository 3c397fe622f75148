/**
 * The Worker's bindings and variables, as types only. The Durable Object namespaces are untyped here, so this file
 * imports nothing of the house: each object's own module gives the typed stub (conversation/stub.ts, hub/stub.ts).
 * The variables are read in ./config.ts (AUTH_SECRET by src/http/auth.ts, CORS_ORIGINS by src/http/cors.ts).
 */
export interface Env {
  CONVERSATIONS: DurableObjectNamespace;
  APP_HUB: DurableObjectNamespace;
  MEMORY: KVNamespace;
  /** OAuth for `/mcp` (src/http/oauth.ts): clients, grants and tokens (hashed), as @cloudflare/workers-oauth-provider stores them. */
  OAUTH_KV: KVNamespace;
  ARTIFACTS: R2Bucket;
  /** Signs and verifies API keys and app tokens (HS256). */
  AUTH_SECRET: string;
  PROVIDER_DEADLINE_MS?: string;
  /** Deadline for each tool call an app answers (`tools/call`), in ms (default 30000). */
  TOOL_DEADLINE_MS?: string;
  /** How fast recalled memories fade with age: their weight halves every this many hours (default 720, 30 days). */
  MEMORY_HALF_LIFE_HOURS?: string;
  /** An OpenAI-compatible chat-completions URL for the optional model summariser, its model, and (a secret) its key. */
  SUMMARY_MODEL_URL?: string;
  SUMMARY_MODEL?: string;
  SUMMARY_MODEL_KEY?: string;
  /** The model gateway's upstream (docs/gateway.md): an OpenAI-compatible base URL, its default model, and (a secret) its key. */
  UPSTREAM_URL?: string;
  UPSTREAM_MODEL?: string;
  UPSTREAM_KEY?: string;
  /** The API the upstream speaks: `openai` (Chat Completions, the default) or `anthropic` (Messages: `<UPSTREAM_URL>/v1/messages`). */
  UPSTREAM_API?: string;
  /** Upstream calls one gateway request may make, the runtime's tool rounds included (default 8). */
  GATEWAY_MAX_STEPS?: string;
  /** How long a streamed gateway answer may stay silent before a keep-alive, in ms (default 10000; 0 sends none). */
  GATEWAY_KEEPALIVE_MS?: string;
  /**
   * Workers AI, optional: with it, search_tools also ranks the catalog by meaning (`@cf/baai/bge-m3`) and fuses that
   * with its lexical ranking (docs/tools.md, "Ranking by meaning"). Without it, the search is lexical.
   */
  AI?: Ai;
  /** Origins allowed to call the frontend API from a browser, comma-separated; `*` (any) is for local development only. */
  CORS_ORIGINS?: string;
  /** An OTLP/HTTP collector's base URL: each turn's spans go to `<it>/v1/traces` as JSON (docs/telemetry.md); none when unset. */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  /** Headers sent with every export, `key=value,key=value` (e.g. a collector's API key; keep it a secret). */
  OTEL_EXPORTER_OTLP_HEADERS?: string;
  /** Workers Analytics Engine, optional: the counters per tenant and agent are also written here (docs/telemetry.md). */
  METRICS?: AnalyticsEngineDataset;
}
