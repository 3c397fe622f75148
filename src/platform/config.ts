/** The deployment's variables, read in one place (but AUTH_SECRET and CORS_ORIGINS, read at the edge, src/http/): a missing or malformed value is its documented default. */
import type { Env } from "./env";

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

/**
 * An upstream of the deployment, or null when its URL is not set: the default one (UPSTREAM_URL, UPSTREAM_API,
 * UPSTREAM_MODEL, the secret UPSTREAM_KEY), or, for an agent that names one, UPSTREAM_<NAME>_URL and the rest.
 */
export function upstreamConfig(env: Env, name?: string): UpstreamConfig | null {
  const vars = env as unknown as Record<string, string | undefined>;
  const read = (field: string) => vars[name === undefined ? `UPSTREAM_${field}` : `UPSTREAM_${name.toUpperCase()}_${field}`]?.trim() || null;
  const base = read("URL")?.replace(/\/+$/, "");
  if (!base) return null;
  const model = read("MODEL");
  const key = read("KEY");
  if (read("API")?.toLowerCase() === "anthropic") return { url: /\/v1$/.test(base) ? `${base}/messages` : `${base}/v1/messages`, model, key, api: "anthropic" };
  return { url: `${base}/chat/completions`, model, key };
}

/** The variable an upstream's URL is read from, for error messages. */
export function upstreamUrlVar(name?: string): string {
  return name === undefined ? "UPSTREAM_URL" : `UPSTREAM_${name.toUpperCase()}_URL`;
}

export const DEFAULT_MAX_STEPS = 8;

/** Upstream calls one gateway request may make (the model's call, then one per round of the runtime's tools). */
export function maxSteps(env: Env): number {
  const parsed = Number(env.GATEWAY_MAX_STEPS);
  return Number.isInteger(parsed) && parsed >= 1 && parsed <= 64 ? parsed : DEFAULT_MAX_STEPS;
}

export const DEFAULT_KEEPALIVE_MS = 10_000;

/**
 * How long a streamed answer may stay silent before the gateway sends a keep-alive (`GATEWAY_KEEPALIVE_MS`, in ms):
 * 0 sends none; anything but a whole number from 10 to 300000 (or 0) is the default, 10 s.
 */
export function keepAliveMs(env: Env): number {
  const raw = env.GATEWAY_KEEPALIVE_MS?.trim();
  const parsed = raw ? Number(raw) : NaN;
  return Number.isInteger(parsed) && (parsed === 0 || (parsed >= 10 && parsed <= 300_000)) ? parsed : DEFAULT_KEEPALIVE_MS;
}

/** Where spans go, when the deployment set an endpoint. */
export interface OtlpTarget {
  url: string;
  headers: Record<string, string>;
}

/** `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL: `/v1/traces` is added) and its headers; null when unset or not a URL. */
export function otlpTarget(env: Env): OtlpTarget | null {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return null;
  let url: URL;
  try {
    url = new URL(`${base.replace(/\/+$/, "")}/v1/traces`);
  } catch {
    return null;
  }
  const decode = (part: string) => {
    try {
      return decodeURIComponent(part.trim());
    } catch {
      return part.trim();
    }
  };
  const headers: Record<string, string> = {};
  for (const pair of (env.OTEL_EXPORTER_OTLP_HEADERS ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    headers[decode(pair.slice(0, at))] = decode(pair.slice(at + 1));
  }
  return { url: url.href, headers };
}
