/**
 * OAuth for /mcp in workerd (src/http/oauth.ts, src/http/consent.ts): the discovery documents, the 401 challenge, and
 * the consent page's refusals (a bad key, a missing field, a forged or replayed handle, another site's form). The whole
 * flow with the SDK's client is test/e2e/mcp-oauth.test.ts.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { worker as api } from "../../src/worker";
import { apiKey, BASE, freshIdentity, worker } from "./support/runtime";

const REDIRECT = "https://client.example/callback";

function call(path: string, init: RequestInit = {}): Promise<Response> {
  return worker().fetch(`${BASE}${path}`, { redirect: "manual", ...init });
}

async function register(name: string): Promise<string> {
  const res = await call("/oauth/register", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ client_name: name, redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

function base64url(bytes: ArrayBuffer): string {
  return btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** An authorization request as an MCP client sends it (PKCE S256, the resource, the scope). */
async function authorizePath(clientId: string): Promise<string> {
  const challenge = base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode("a-verifier-long-enough-for-pkce-0123456789")));
  const query = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: "mcp",
    state: "the-clients-state",
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: `${BASE}/mcp`,
  });
  return `/oauth/authorize?${query}`;
}

/** The consent page: its handle and the cookie that binds the handle to this browser. */
async function openPage(path: string): Promise<{ html: string; handle: string; cookie: string }> {
  const res = await call(path);
  expect(res.status).toBe(200);
  const html = await res.text();
  const handle = /name="handle" value="([^"]+)"/.exec(html)![1]!;
  const cookie = res.headers.get("Set-Cookie")!.split(";")[0]!;
  return { html, handle, cookie };
}

function submit(path: string, cookie: string | null, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return call(path, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...(cookie ? { Cookie: cookie } : {}), ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

describe("OAuth discovery for /mcp", () => {
  it("answers /mcp without a token with a 401 naming the protected resource metadata, which names this server", async () => {
    const res = await call("/mcp/notes/editor", { method: "POST" });
    expect(res.status).toBe(401);
    const challenge = res.headers.get("WWW-Authenticate")!;
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1]!;
    expect(metadataUrl).toBe(`${BASE}/.well-known/oauth-protected-resource/mcp`);

    const resource = (await (await call(new URL(metadataUrl).pathname)).json()) as Record<string, unknown>;
    expect(resource).toMatchObject({ resource: `${BASE}/mcp`, authorization_servers: [BASE], scopes_supported: ["mcp"] });
    const server = (await (await call("/.well-known/oauth-authorization-server")).json()) as Record<string, unknown>;
    expect(server).toMatchObject({
      issuer: BASE,
      authorization_endpoint: `${BASE}/oauth/authorize`,
      token_endpoint: `${BASE}/oauth/token`,
      registration_endpoint: `${BASE}/oauth/register`,
      code_challenge_methods_supported: expect.arrayContaining(["S256"]),
    });
  });

  it("refuses a garbage bearer token at /mcp with invalid_token", async () => {
    const res = await call("/mcp/notes/editor", { method: "POST", headers: { Authorization: "Bearer not-a-token" } });
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toMatch(/resource_metadata=".*\/.well-known\/oauth-protected-resource\/mcp".*error="invalid_token"/);
  });

  it("takes the owner only from the provider: a key that never passed through it is refused at /mcp", async () => {
    const headers = { Authorization: `Bearer ${await apiKey(freshIdentity())}`, "Content-Type": "application/json" };
    const direct = await api.request(`${BASE}/mcp/notes/editor`, { method: "POST", headers, body: "{}" }, env);
    expect(direct.status).toBe(401);
    expect(direct.headers.get("WWW-Authenticate")).toContain("Bearer");
  });

  it("leaves everything else alone: the Worker's answers byte for byte, as the app without OAuth gives them", async () => {
    const key = await apiKey(freshIdentity());
    const requests: [string, RequestInit][] = [
      ["/health", {}],
      ["/v1/conversations", {}],
      ["/v1/agents", { headers: { Authorization: `Bearer ${key}` } }],
      ["/v1/chat/completions", { method: "POST", headers: { Authorization: "Bearer nope" }, body: "{}" }],
      ["/v1/messages", { method: "POST", headers: { "x-api-key": "nope" }, body: "{}" }],
      ["/authorize", {}],
    ];
    // Durations differ, and each answer's request id is its own (its shape is the same).
    const untimed = (res: Response) => [...res.headers].filter(([name]) => name !== "server-timing").map(([name, value]) => [name, name === "request-id" ? value.replace(/^req_[0-9a-f]{32}$/, "req_…") : value]);
    for (const [path, init] of requests) {
      const [through, bare] = await Promise.all([call(path, init), api.request(`${BASE}${path}`, init, env)]);
      expect([through.status, untimed(through), await through.text()]).toEqual([bare.status, untimed(bare), await bare.text()]);
      expect(through.headers.get("WWW-Authenticate")).toBeNull();
    }
  });
});

describe("The consent page", () => {
  it("shows the client's name escaped, where access goes, and the scope", async () => {
    const path = await authorizePath(await register(`<img src=x onerror=alert(1)> & "Co"`));
    const { html } = await openPage(path);
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt; &amp; &quot;Co&quot;");
    expect(html).not.toContain("<img");
    expect(html).toContain("client.example");
    expect(html).toContain("mcp");
    const res = await call(path);
    expect(res.headers.get("X-Frame-Options")).toBe("DENY");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    // Under no-referrer a browser would post the form with `Origin: null`, which the page's same-origin check refuses.
    expect(res.headers.get("Referrer-Policy")).toBe("same-origin");
  });

  it("shows the page again with an error (400) for a bad key, then completes with a good one, redirecting with a code", async () => {
    const path = await authorizePath(await register("Good App"));
    const { handle, cookie } = await openPage(path);
    for (const key of ["", "not-a-key", await apiKey(freshIdentity()) + "x"]) {
      const bad = await submit(path, cookie, { handle, decision: "allow", key });
      expect(bad.status).toBe(400);
      const html = await bad.text();
      expect(html).toContain('role="alert"');
      expect(html).toContain(`value="${handle}"`); // the same form again: the handle is not used up
    }
    const good = await submit(path, cookie, { handle, decision: "allow", key: await apiKey(freshIdentity()) });
    expect(good.status).toBe(302);
    const location = new URL(good.headers.get("Location")!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get("code")).toBeTruthy();
    expect(location.searchParams.get("state")).toBe("the-clients-state");

    const replay = await submit(path, cookie, { handle, decision: "allow", key: await apiKey(freshIdentity()) });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain("expired or was already used");
  });

  it("declines with access_denied back to the client", async () => {
    const path = await authorizePath(await register("Declined App"));
    const { handle, cookie } = await openPage(path);
    const res = await submit(path, cookie, { handle, decision: "deny" });
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get("Location")!).searchParams.get("error")).toBe("access_denied");
  });

  it("refuses missing fields, a forged handle, a form without the browser's cookie, and another site's form", async () => {
    const path = await authorizePath(await register("Careful App"));
    const { handle, cookie } = await openPage(path);
    const key = await apiKey(freshIdentity());

    const missing = await submit(path, cookie, { handle, key });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain("incomplete");
    const notAForm = await call(path, { method: "POST", headers: { Cookie: cookie, "Content-Type": "application/json" }, body: "{}" });
    expect(notAForm.status).toBe(400);

    const forged = await submit(path, cookie, { handle: `${handle.slice(0, -2)}xx`, decision: "allow", key });
    expect(forged.status).toBe(400);
    const noCookie = await submit(path, null, { handle, decision: "allow", key });
    expect(noCookie.status).toBe(400);
    expect(await noCookie.text()).toContain("not started in this browser");
    const crossSite = await submit(path, cookie, { handle, decision: "allow", key }, { Origin: "https://evil.example" });
    expect(crossSite.status).toBe(403);

    // None of them used the handle up: the user's own submission still goes through.
    const own = await submit(path, cookie, { handle, decision: "allow", key }, { Origin: BASE });
    expect(own.status).toBe(302);
  });

  it("shows an invalid request here (400) and never redirects to a URI the client did not register", async () => {
    const clientId = await register("Strict App");
    const path = (await authorizePath(clientId)).replace(encodeURIComponent(REDIRECT), encodeURIComponent("https://evil.example/cb"));
    const res = await call(path);
    expect(res.status).toBe(400);
    expect(res.headers.get("Location")).toBeNull();
    expect(await res.text()).toContain("Invalid redirect URI");
    expect((await call("/oauth/authorize?client_id=nobody")).status).toBe(400);
  });
});
