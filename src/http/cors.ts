import { cors } from "hono/cors";
import { createMiddleware } from "hono/factory";
import type { Env } from "../platform/env";

/**
 * CORS for frontends in the browser (`/v1/*` and `/openapi.json`), mounted before authentication so a preflight
 * never meets a 401. Allowed origins come from `CORS_ORIGINS` (comma-separated, e.g.
 * `https://app.example.com,http://localhost:5173`); `*` allows any origin and is meant for local development only.
 * Without `CORS_ORIGINS` no origin is allowed. A request from an origin not allowed gets no CORS header at all (a
 * preflight from one is answered 204, empty), so the browser refuses it; requests without `Origin` pass untouched.
 */

export const CORS_ALLOW_METHODS = ["GET", "POST", "PUT", "DELETE", "OPTIONS"];
/** What a page may read: the MCP session, the gateway's conversation, turn (the first step's, and every step's) and step headers, its request id, retry hints, timings. */
export const CORS_EXPOSE_HEADERS = ["Mcp-Session-Id", "X-Conversation-Id", "X-Conversation-Also-Matched", "X-Turn-Id", "X-Turn-Ids", "X-Gateway-Steps", "request-id", "Retry-After", "Server-Timing"];
/** Browsers may cache a preflight this long (Chromium caps it at 2 hours). */
export const CORS_MAX_AGE_SECONDS = 600;

export type AllowedOrigins = "*" | ReadonlySet<string>;

/** `CORS_ORIGINS` parsed: `*` anywhere in the list means any origin; entries that are not http(s) origins are ignored. */
export function allowedOrigins(setting: string | undefined): AllowedOrigins {
  const entries = (setting ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  if (entries.includes("*")) return "*";
  return new Set(entries.map(normalOrigin).filter((o): o is string => o !== null));
}

/** `scheme://host[:port]` as browsers send it in `Origin` (lower case, default port dropped), or null. */
export function normalOrigin(value: string): string | null {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : null;
  } catch {
    return null;
  }
}

let parsed: { setting: string | undefined; origins: AllowedOrigins } | null = null;

function originsOf(env: Env): AllowedOrigins {
  if (parsed === null || parsed.setting !== env.CORS_ORIGINS) parsed = { setting: env.CORS_ORIGINS, origins: allowedOrigins(env.CORS_ORIGINS) };
  return parsed.origins;
}

/** Whether `CORS_ORIGINS` names `origin` itself (its `*` does not count): the MCP endpoint's list (src/http/mcp-auth.ts). */
export function originListed(env: Env, origin: string): boolean {
  const origins = originsOf(env);
  const normal = normalOrigin(origin);
  return origins !== "*" && normal !== null && origins.has(normal);
}

/** The value of `Access-Control-Allow-Origin` for `origin`, or null when it is not allowed. */
export function allowOrigin(origins: AllowedOrigins, origin: string | undefined): string | null {
  if (!origin) return null;
  if (origins === "*") return "*";
  const normal = normalOrigin(origin);
  return normal !== null && origins.has(normal) ? origin : null;
}

const allowed = cors({
  origin: (origin, c) => allowOrigin(originsOf(c.env as Env), origin),
  allowMethods: CORS_ALLOW_METHODS,
  // The headers a preflight asks for are allowed (an allowed origin's page uses the official model SDKs, which send
  // their own: x-api-key, anthropic-version, x-stainless-*); the origin list and the key are what protect the API.
  allowHeaders: [],
  exposeHeaders: CORS_EXPOSE_HEADERS,
  maxAge: CORS_MAX_AGE_SECONDS,
});

export const corsForFrontends = createMiddleware<{ Bindings: Env }>(async (c, next) => {
  const origins = originsOf(c.env);
  if (allowOrigin(origins, c.req.header("Origin")) !== null) return allowed(c, next);
  // Not allowed (or not a browser): no CORS header. A preflight still never reaches authentication.
  if (c.req.method === "OPTIONS") return c.body(null, 204, { Vary: "Origin" });
  await next();
  if (origins !== "*") c.header("Vary", "Origin", { append: true });
});
