import type { AppHub } from "./hub/app-hub";
import type { Conversation } from "./conversation/conversation";
import type { Owner } from "./protocol/owner";

export interface Env {
  CONVERSATIONS: DurableObjectNamespace<Conversation>;
  APP_HUB: DurableObjectNamespace<AppHub>;
  MEMORY: KVNamespace;
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
  /**
   * Workers AI, optional: with it, search_tools also ranks the catalog by meaning (`@cf/baai/bge-m3`) and fuses that
   * with its lexical ranking (docs/tools.md, "Ranking by meaning"). Without it, the search is lexical.
   */
  AI?: Ai;
  /** Origins allowed to call the frontend API from a browser, comma-separated; `*` (any) is for local development only. */
  CORS_ORIGINS?: string;
}

/** Storage names derive from the authenticated tenant, so one tenant can never address another's objects. */
export function conversationStub(env: Env, owner: Owner, conversationId: string) {
  return env.CONVERSATIONS.get(env.CONVERSATIONS.idFromName(`${owner.tenant}/${conversationId}`));
}

export function hubStub(env: Env, owner: Owner) {
  return env.APP_HUB.get(env.APP_HUB.idFromName(`${owner.tenant}/${owner.user}`));
}

/** The deployment's memory half-life, when it sets a valid one. */
export function memoryHalfLifeHours(env: Env): number | undefined {
  const parsed = Number(env.MEMORY_HALF_LIFE_HOURS);
  return Number.isFinite(parsed) && parsed > 0 ? parsed : undefined;
}

export function providerDeadlineMs(env: Env): number {
  const parsed = Number(env.PROVIDER_DEADLINE_MS);
  return Number.isFinite(parsed) && parsed > 0 ? parsed : 2000;
}

export function toolDeadlineMs(env: Env): number {
  const parsed = Number(env.TOOL_DEADLINE_MS);
  return Number.isFinite(parsed) && parsed > 0 ? parsed : 30_000;
}

/** The model summariser's endpoint, when the deployment configured all of it. */
export function summaryModel(env: Env): { url: string; model: string; apiKey: string } | null {
  const { SUMMARY_MODEL_URL: url, SUMMARY_MODEL: model, SUMMARY_MODEL_KEY: apiKey } = env;
  return url && model && apiKey ? { url, model, apiKey } : null;
}
