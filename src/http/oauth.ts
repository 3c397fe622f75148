/**
 * OAuth 2.1 for `/mcp`, as the MCP authorization spec asks of a remote server (docs/mcp.md, "Connecting a hosted
 * client"): Cloudflare's `@cloudflare/workers-oauth-provider` serves the protected resource metadata (RFC 9728), the
 * authorization server metadata (RFC 8414), dynamic client registration (RFC 7591) and the token endpoint, and checks
 * every request to `/mcp` before the Worker's own route runs. Its authorize step is the consent page (./consent.ts),
 * where the user proves who they are with their frontend API key. A frontend API key also works at `/mcp` directly,
 * as a bearer token the provider hands to `resolveExternalToken`.
 *
 * Only the OAuth paths and `/mcp` pass through the provider; every other request goes straight to the Worker, so
 * the frontend API, the gateway and `/health` are untouched by it.
 */
import { getOAuthApi, OAuthProvider, type OAuthProviderOptions } from "@cloudflare/workers-oauth-provider";
import * as z from "zod";
import type { Env } from "../platform/env";
import { Name } from "../protocol/names";
import { frontendOwner } from "./auth";
import { consentPage } from "./consent";

export const MCP_PATH = "/mcp";
const AUTHORIZE_PATH = "/oauth/authorize";
const TOKEN_PATH = "/oauth/token";
const REGISTER_PATH = "/oauth/register";

/** The one scope: reading the contexts an agent sees and calling its tools, as the user who consented. */
export const MCP_SCOPE = "mcp";

/** What a grant (or a frontend API key) gives the `/mcp` handler as `ctx.props`: the user it acts for. */
export const OAuthProps = z.object({ tenant: Name, user: Name });
export type OAuthProps = z.infer<typeof OAuthProps>;

/** What the provider owns: `/mcp` (token checked first), `/oauth/*` and the `/.well-known/oauth-*` documents. */
const OAUTH_PATHS = /^(?:\/mcp(?:\/|$)|\/oauth\/|\/\.well-known\/oauth-)/;

type FetchHandler = { fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> };

/**
 * The Worker behind OAuth. The provider's resource is an absolute URL (`<origin>/mcp`, the tokens' audience), and a
 * Worker learns its origin only from requests, so one provider is built per origin the Worker is reached at (a
 * deployment has one or two: its custom domain, workers.dev). An origin the library refuses (plain http on a host
 * that is not loopback: OAuth 2.1 asks for https) gets no OAuth: its requests go to the Worker as they are.
 */
export function withOAuth(worker: FetchHandler): FetchHandler {
  const sites = new Map<string, Site | null>();
  const consent = consentPage({
    path: AUTHORIZE_PATH,
    scope: MCP_SCOPE,
    helpers: (env, origin) => {
      const site = siteFor(origin);
      if (!site) throw new Error(`no OAuth provider for ${origin}`); // the request came through one: unreachable
      return getOAuthApi(site.options, env);
    },
  });
  const defaultHandler: FetchHandler = { fetch: (request, env, ctx) => consent.fetch(request, env, ctx) };

  function siteFor(origin: string): Site | null {
    let site = sites.get(origin);
    if (site === undefined) {
      site = buildSite(origin, worker, defaultHandler);
      if (sites.size >= MAX_ORIGINS) sites.delete(sites.keys().next().value!); // a dev server may be reached at many hosts
      sites.set(origin, site);
    }
    return site;
  }

  return {
    async fetch(request, env, ctx) {
      const url = new URL(request.url);
      const site = OAUTH_PATHS.test(url.pathname) ? siteFor(url.origin) : null;
      if (!site) return worker.fetch(request, env, ctx);
      const answered = await site.provider.fetch(request, env, ctx);
      return url.pathname.startsWith(`${MCP_PATH}/`) ? exposingSession(answered) : answered;
    },
  };
}

const MAX_ORIGINS = 8;

/**
 * The provider answers `/mcp` with its own CORS headers, exposing only its challenge: a page the MCP route let through
 * (src/http/mcp-auth.ts) must also read the session's id.
 */
function exposingSession(response: Response): Response {
  const exposed = response.headers.get("Access-Control-Expose-Headers");
  if (exposed === null || /(^|,)\s*mcp-session-id\s*(,|$)/i.test(exposed)) return response;
  const headers = new Headers(response.headers);
  headers.set("Access-Control-Expose-Headers", `${exposed}, Mcp-Session-Id`);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers, ...(response.webSocket ? { webSocket: response.webSocket } : {}) });
}

interface Site {
  options: OAuthProviderOptions<Env>;
  provider: OAuthProvider<Env>;
}

function buildSite(origin: string, worker: FetchHandler, defaultHandler: FetchHandler): Site | null {
  const resource = `${origin}${MCP_PATH}`;
  const options: OAuthProviderOptions<Env> = {
    apiRoute: MCP_PATH,
    apiHandler: worker,
    defaultHandler,
    authorizeEndpoint: AUTHORIZE_PATH,
    tokenEndpoint: TOKEN_PATH,
    clientRegistrationEndpoint: REGISTER_PATH,
    scopesSupported: [MCP_SCOPE],
    requiredScopes: [MCP_SCOPE],
    resourceMetadata: { resource, resource_name: "Context Runtime" },
    // A frontend API key is as good as an access token at /mcp: the props are the same {tenant, user}.
    resolveExternalToken: async ({ token, env }) => {
      const owner = await frontendOwner(env, token);
      return owner ? { props: owner satisfies OAuthProps, audience: resource } : null;
    },
  };
  try {
    return { options, provider: new OAuthProvider<Env>(options) };
  } catch (error) {
    if (error instanceof TypeError) return null; // the library's refusal of this origin as a resource
    throw error;
  }
}
