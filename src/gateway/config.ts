import type { Env } from "../env";

export interface UpstreamConfig {
  /** The chat-completions URL: UPSTREAM_URL (an OpenAI-compatible base URL) + `/chat/completions`. */
  url: string;
  /** The upstream model used unless the request's `model` names one (`app:agent@model`). */
  model: string | null;
  key: string | null;
}

/** The deployment's upstream, or null when UPSTREAM_URL is not set. */
export function upstreamConfig(env: Env): UpstreamConfig | null {
  const base = env.UPSTREAM_URL?.trim();
  if (!base) return null;
  return { url: `${base.replace(/\/+$/, "")}/chat/completions`, model: env.UPSTREAM_MODEL?.trim() || null, key: env.UPSTREAM_KEY?.trim() || null };
}

export const DEFAULT_MAX_STEPS = 8;

/** Upstream calls one gateway request may make (the model's call, then one per round of the runtime's tools). */
export function maxSteps(env: Env): number {
  const parsed = Number(env.GATEWAY_MAX_STEPS);
  return Number.isInteger(parsed) && parsed >= 1 && parsed <= 64 ? parsed : DEFAULT_MAX_STEPS;
}
