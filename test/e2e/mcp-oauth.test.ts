/**
 * OAuth for /mcp end to end, against the real `wrangler dev` (docs/mcp.md, "Connecting a hosted client"): the official
 * SDK's client auth (`auth()` with an `OAuthClientProvider`) discovers the protected resource and its authorization
 * server from the 401, registers itself, sends the user to the consent page (here the test plays the user: it pastes a
 * frontend API key and follows the redirect), trades the code for a token, and initialises an MCP session with it
 * through `StreamableHTTPClientTransport`. A garbage token and a revoked one are refused with the 401 challenge.
 */
import {
  auth,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  type OAuthClientProvider,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { describe, expect, it } from "vitest";
import { apiKey, freshIdentity, runtimeUrl, startApp, type Identity } from "./support";

const REDIRECT = "http://127.0.0.1:9/callback"; // never opened: the test reads the code off the redirect

/** An MCP client's OAuth state, in memory, as a hosted client would keep it. */
class MemoryAuthProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;

  get redirectUrl(): string {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "E2E <Connector>", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  state(): string {
    return "state-from-the-client";
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** The user at the consent page: opens it, pastes their frontend API key, and allows; the code from the redirect. */
async function consent(authorizationUrl: URL, key: string): Promise<string> {
  const page = await fetch(authorizationUrl, { redirect: "manual" });
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain("E2E &lt;Connector&gt;");
  const handle = /name="handle" value="([^"]+)"/.exec(html)![1]!;
  const cookie = page.headers.get("Set-Cookie")!.split(";")[0]!;
  const form = (key: string) => new URLSearchParams({ handle, decision: "allow", key }).toString();
  const post = (key: string) =>
    fetch(authorizationUrl, { method: "POST", redirect: "manual", headers: { Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded", Origin: authorizationUrl.origin }, body: form(key) });

  const wrongKey = await post("not-a-key");
  expect(wrongKey.status).toBe(400);
  expect(await wrongKey.text()).toContain("not a valid frontend API key");

  const allowed = await post(key);
  expect(allowed.status).toBe(302);
  const redirect = new URL(allowed.headers.get("Location")!);
  expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT);
  expect(redirect.searchParams.get("state")).toBe("state-from-the-client");
  return redirect.searchParams.get("code")!;
}

/** The notes app with one agent: what `/mcp/notes/assistant` serves. */
async function notesAgent(id: Identity): Promise<URL> {
  const app = await startApp(id, {
    name: "notes",
    contexts: [{ id: "editor", name: "Editor", description: "The open note", getCurrent: async () => ({ title: "Editor", content: "Q4 plan" }) }],
  });
  await app.createAgent({ agentId: "assistant", name: "Notes Assistant", systemPrompt: "You help with notes.", attachedContexts: ["notes:editor"] });
  return new URL(`${runtimeUrl()}/mcp/notes/assistant`);
}

async function initialize(serverUrl: URL, options: { authProvider?: OAuthClientProvider; key?: string }): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(serverUrl, {
    ...(options.authProvider ? { authProvider: options.authProvider } : {}),
    ...(options.key ? { requestInit: { headers: { Authorization: `Bearer ${options.key}` } } } : {}),
  });
  const client = new Client({ name: "oauth-e2e", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

function postInitialize(serverUrl: URL, token?: string): Promise<Response> {
  return fetch(serverUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }),
  });
}

describe("OAuth for /mcp with the SDK's client auth", () => {
  it("discovers, registers, authorizes, gets a token and initialises a session; a garbage or revoked token gets the 401 challenge", async () => {
    const id = freshIdentity();
    const serverUrl = await notesAgent(id);

    // Discovery: the 401 names the protected resource metadata, which names the authorization server.
    const unauthenticated = await postInitialize(serverUrl);
    expect(unauthenticated.status).toBe(401);
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(unauthenticated);
    expect(resourceMetadataUrl?.href).toBe(`${runtimeUrl()}/.well-known/oauth-protected-resource/mcp`);
    expect(scope).toBe("mcp");
    const resource = await discoverOAuthProtectedResourceMetadata(serverUrl, { resourceMetadataUrl: resourceMetadataUrl! });
    expect(resource.resource).toBe(`${runtimeUrl()}/mcp`);
    expect(resource.authorization_servers).toEqual([runtimeUrl()]);
    const server = (await discoverAuthorizationServerMetadata(resource.authorization_servers![0]!))!;
    expect(server).toMatchObject({
      issuer: runtimeUrl(),
      authorization_endpoint: `${runtimeUrl()}/oauth/authorize`,
      token_endpoint: `${runtimeUrl()}/oauth/token`,
      registration_endpoint: `${runtimeUrl()}/oauth/register`,
      revocation_endpoint: `${runtimeUrl()}/oauth/token`,
    });

    // Registration and authorization: auth() registers the client and sends the user to the consent page.
    const provider = new MemoryAuthProvider();
    expect(await auth(provider, { serverUrl, resourceMetadataUrl: resourceMetadataUrl! })).toBe("REDIRECT");
    expect(provider.client?.client_id).toBeTruthy();
    const authorizationUrl = provider.authorizationUrl!;
    expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(`${runtimeUrl()}/oauth/authorize`);
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl.searchParams.get("resource")).toBe(`${runtimeUrl()}/mcp`);
    const code = await consent(authorizationUrl, await apiKey(id));

    // The token.
    expect(await auth(provider, { serverUrl, resourceMetadataUrl: resourceMetadataUrl!, authorizationCode: code })).toBe("AUTHORIZED");
    const tokens = provider.saved!;
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.scope).toBe("mcp");
    expect(tokens.refresh_token).toBeTruthy();

    // An MCP session with it, as the user who consented: the agent's context is theirs.
    const client = await initialize(serverUrl, { authProvider: provider });
    expect(client.getServerVersion()?.name).toBe("context-runtime");
    const read = await client.readResource({ uri: "ctx://notes/editor" });
    expect(JSON.stringify(read.contents)).toContain("Q4 plan");
    await client.close();

    // Refused: a garbage token, then the real one once revoked (RFC 7009 at the advertised endpoint).
    for (const token of ["garbage", `${tokens.access_token.slice(0, -4)}AAAA`]) {
      const refused = await postInitialize(serverUrl, token);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("WWW-Authenticate")).toContain(`resource_metadata="${resourceMetadataUrl!.href}"`);
      expect(refused.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    }
    expect((await postInitialize(serverUrl, tokens.access_token)).status).toBe(200);
    const revoked = await fetch(`${runtimeUrl()}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: tokens.access_token, token_type_hint: "access_token", client_id: provider.client!.client_id }),
    });
    expect(revoked.status).toBe(200);
    const afterRevoke = await postInitialize(serverUrl, tokens.access_token);
    expect(afterRevoke.status).toBe(401);
    expect(afterRevoke.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
  });

  it("still takes a frontend API key as the bearer token", async () => {
    const id = freshIdentity();
    const serverUrl = await notesAgent(id);
    const client = await initialize(serverUrl, { key: await apiKey(id) });
    expect(client.getServerVersion()?.name).toBe("context-runtime");
    await client.close();
  });
});
