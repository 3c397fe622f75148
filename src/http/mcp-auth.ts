import { createMiddleware } from "hono/factory";
import { mcpError } from "../mcp/serve/wire";
import { bearer, frontendOwner } from "./auth";
import { originAllowed } from "./cors";
import type { ApiEnv } from "./env";

/**
 * What an MCP request passes before its session (docs/mcp.md, "Authentication"). A browser page's `Origin` must be
 * the Worker's own or one `CORS_ORIGINS` allows: a page on a rebound DNS name reaching a local runtime is refused
 * (403). The owner comes from the bearer token: a frontend API key.
 */
export const mcpAuth = createMiddleware<ApiEnv>(async (c, next) => {
  const origin = c.req.header("Origin");
  if (origin !== undefined && origin !== new URL(c.req.url).origin && !originAllowed(c.env, origin)) {
    return mcpError(403, `Forbidden: origin '${origin}' is not allowed (CORS_ORIGINS)`);
  }
  const owner = await frontendOwner(c.env, bearer(c.req.header("Authorization")));
  if (!owner) {
    const refused = mcpError(401, "Unauthorized: send a frontend API key as 'Authorization: Bearer <key>'");
    refused.headers.set("WWW-Authenticate", 'Bearer realm="context-runtime"');
    return refused;
  }
  c.set("owner", owner);
  await next();
});
