import type { Env } from "../env";

/** Which API the upstream speaks: OpenAI Chat Completions (the default) or Anthropic Messages (`UPSTREAM_API=anthropic`). */
export type UpstreamApi = "openai" | "anthropic";

export interface UpstreamConfig {
  /**
   * The URL the gateway posts to: UPSTREAM_URL (an OpenAI-compatible base URL) + `/chat/completions`; for an Anthropic
   * upstream, UPSTREAM_URL + `/v1/messages` (or + `/messages` when UPSTREAM_URL already ends in `/v1`).
   */
  url: string;
  /** The upstream model used unless the request's `model` names one (`app:agent@model`). */
  model: string | null;
  key: string | null;
  /** Absent means `openai`. */
  api?: UpstreamApi;
}

/** The deployment's upstream, or null when UPSTREAM_URL is not set. */
export function upstreamConfig(env: Env): UpstreamConfig | null {
  const base = env.UPSTREAM_URL?.trim().replace(/\/+$/, "");
  if (!base) return null;
  const model = env.UPSTREAM_MODEL?.trim() || null;
  const key = env.UPSTREAM_KEY?.trim() || null;
  if (upstreamApi(env) === "anthropic") return { url: /\/v1$/.test(base) ? `${base}/messages` : `${base}/v1/messages`, model, key, api: "anthropic" };
  return { url: `${base}/chat/completions`, model, key };
}

/** UPSTREAM_API: `anthropic`, or `openai` (the default; anything else is taken as `openai` too). */
export function upstreamApi(env: Env): UpstreamApi {
  return env.UPSTREAM_API?.trim().toLowerCase() === "anthropic" ? "anthropic" : "openai";
}

export const DEFAULT_MAX_STEPS = 8;

/** Upstream calls one gateway request may make (the model's call, then one per round of the runtime's tools). */
export function maxSteps(env: Env): number {
  const parsed = Number(env.GATEWAY_MAX_STEPS);
  return Number.isInteger(parsed) && parsed >= 1 && parsed <= 64 ? parsed : DEFAULT_MAX_STEPS;
}
