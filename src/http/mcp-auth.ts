import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { mcpError } from "../mcp/serve/wire";
import { normalOrigin, originListed } from "./cors";
import type { ApiEnv } from "./env";
import { OAuthProps } from "./oauth";

/**
 * What an MCP request passes before its session (docs/mcp.md, "Authentication"). A browser page's `Origin` must be
 * one `CORS_ORIGINS` names, or a loopback page's reaching a loopback runtime: a page on a rebound DNS name reaching a
 * local runtime is refused (403). The owner is the one the OAuth provider in front of `/mcp` (./oauth.ts) verified: it checks the bearer token
 * (an OAuth access token, or a frontend API key) and answers a missing or refused one with the 401 challenge naming
 * the protected resource metadata, so a request reaches here only with the token's props `{tenant, user}`. One
 * without them did not come through the provider (an origin it does not serve: plain http on a host that is not
 * loopback) and is refused the same way.
 */
export const mcpAuth = createMiddleware<ApiEnv>(async (c, next) => {
  const origin = c.req.header("Origin");
  if (origin !== undefined && !mcpOriginAllowed(c.env, origin, c.req.url)) {
    return mcpError(403, `Forbidden: origin '${origin}' is not allowed (CORS_ORIGINS)`);
  }
  const owner = OAuthProps.safeParse(propsOf(c));
  if (!owner.success) {
    const refused = mcpError(401, "Unauthorized: /mcp takes an OAuth access token or a frontend API key as 'Authorization: Bearer <token>', over https or on a loopback host");
    refused.headers.set("WWW-Authenticate", 'Bearer realm="context-runtime"');
    return refused;
  }
  c.set("owner", owner.data);
  await next();
});

/** `ctx.props` as the provider set it; hono throws when the request came with no execution context at all. */
function propsOf(c: Context<ApiEnv>): unknown {
  try {
    return c.executionCtx.props;
  } catch {
    return undefined;
  }
}

/**
 * Whether a browser page at `origin` may reach the MCP endpoint (DNS rebinding): a page `CORS_ORIGINS` names, or a
 * loopback page reaching a runtime on a loopback host (local development). The request's own origin does not count:
 * behind a rebound DNS name, it is the attacker's.
 */
function mcpOriginAllowed(env: ApiEnv["Bindings"], origin: string, requestUrl: string): boolean {
  if (originListed(env, origin)) return true;
  const normal = normalOrigin(origin);
  return normal !== null && isLoopback(new URL(normal).hostname) && isLoopback(new URL(requestUrl).hostname);
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "127.0.0.1" || hostname === "[::1]";
}
