import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { worker as api } from "../../src/worker";
import { allowedOrigins, allowOrigin } from "../../src/http/cors";
import { apiKey, BASE, freshIdentity } from "./support/runtime";

const APP = "https://app.example.com";
const DEV = "http://localhost:5173";

/** The Worker with `CORS_ORIGINS` set as a deployment would set it (the test config leaves it unset). */
const CONFIGURED = `${APP}, ${DEV}/`;

function call(path: string, init: RequestInit, corsOrigins: string | null = CONFIGURED): Promise<Response> {
  return Promise.resolve(api.request(`${BASE}${path}`, init, { ...env, ...(corsOrigins === null ? {} : { CORS_ORIGINS: corsOrigins }) }));
}

function preflight(origin: string, path = "/v1/conversations", method = "POST", headers = "authorization,content-type,x-conversation-id", corsOrigins: string | null = CONFIGURED) {
  return call(path, { method: "OPTIONS", headers: { Origin: origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers } }, corsOrigins);
}

const corsHeaders = (res: Response) => [...res.headers.keys()].filter((k) => k.startsWith("access-control-"));

describe("CORS for frontends in the browser", () => {
  it("answers an allowed origin's preflight before authentication, with the API's methods and headers", async () => {
    for (const path of ["/v1/conversations", "/v1/conversations/abc/turns", "/v1/memories/search", "/v1/no-such-route"]) {
      const res = await preflight(APP, path);
      expect(res.status).toBe(204);
      expect(res.headers.get("Access-Control-Allow-Origin")).toBe(APP);
      expect(res.headers.get("Access-Control-Allow-Methods")!.split(",")).toEqual(expect.arrayContaining(["GET", "POST", "PUT", "DELETE"]));
      const allowHeaders = res.headers.get("Access-Control-Allow-Headers")!.toLowerCase().split(",");
      expect(allowHeaders).toEqual(expect.arrayContaining(["authorization", "content-type", "x-conversation-id"]));
      expect(res.headers.get("Access-Control-Max-Age")).toBe("600");
      expect(res.headers.get("Vary")).toContain("Origin");
      expect(res.headers.get("Access-Control-Allow-Credentials")).toBeNull();
    }
  });

  it("allows the headers the official model SDKs send from a page, and exposes the gateway's", async () => {
    const asked = "authorization,content-type,x-api-key,anthropic-version,x-stainless-os,x-stainless-retry-count,x-conversation-id";
    const res = await preflight(APP, "/v1/messages", "POST", asked);
    expect(res.headers.get("Access-Control-Allow-Headers")!.toLowerCase().split(",")).toEqual(expect.arrayContaining(asked.split(",")));
    expect(res.headers.get("Vary")).toContain("Access-Control-Request-Headers");
    const refused = await preflight("https://evil.example", "/v1/messages", "POST", asked);
    expect(refused.headers.get("Access-Control-Allow-Headers")).toBeNull();
  });

  it("matches origins as browsers send them (a trailing slash or upper case in the setting does not matter)", async () => {
    expect((await preflight(DEV)).headers.get("Access-Control-Allow-Origin")).toBe(DEV);
    expect((await preflight(APP, "/v1/conversations", "GET", "authorization", " HTTPS://App.Example.com/ ")).headers.get("Access-Control-Allow-Origin")).toBe(APP);
    expect(allowedOrigins("https://a.example, not an origin, ftp://b.example,, http://c.example:8080/path")).toEqual(new Set(["https://a.example", "http://c.example:8080"]));
    expect(allowOrigin(allowedOrigins(""), APP)).toBeNull();
    expect(allowOrigin(allowedOrigins("https://a.example,*"), "https://anything.test")).toBe("*");
  });

  it("gives an origin that is not allowed no CORS header, preflight or request, and never a 401 on a preflight", async () => {
    for (const origin of ["https://evil.example", "https://app.example.com.evil.example", "http://app.example.com", "null"]) {
      const pre = await preflight(origin);
      expect(pre.status).toBe(204);
      expect(corsHeaders(pre)).toEqual([]);
      const res = await call("/v1/agents", { headers: { Origin: origin, Authorization: `Bearer ${await apiKey(freshIdentity())}` } });
      expect(res.status).toBe(200);
      expect(corsHeaders(res)).toEqual([]);
    }
    // Without CORS_ORIGINS no origin is allowed.
    const unset = await preflight(APP, "/v1/conversations", "POST", "authorization", null);
    expect(unset.status).toBe(204);
    expect(corsHeaders(unset)).toEqual([]);
  });

  it("puts the CORS headers on answers, errors included, and exposes the gateway's headers and Server-Timing", async () => {
    const key = await apiKey(freshIdentity());
    const created = await call("/v1/conversations", { method: "POST", headers: { Origin: APP, Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: "{}" });
    expect(created.status).toBe(201);
    expect(created.headers.get("Access-Control-Allow-Origin")).toBe(APP);
    expect(created.headers.get("Access-Control-Expose-Headers")!.split(",")).toEqual(["Mcp-Session-Id", "X-Conversation-Id", "X-Conversation-Also-Matched", "X-Turn-Id", "X-Turn-Ids", "X-Gateway-Steps", "request-id", "Retry-After", "Server-Timing"]);
    expect(created.headers.get("Server-Timing")).toMatch(/total;dur=/);
    expect(created.headers.get("Vary")).toContain("Origin");
    // A browser can read why it was refused.
    const unauthorized = await call("/v1/agents", { headers: { Origin: APP } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("Access-Control-Allow-Origin")).toBe(APP);
    const notFound = await call("/v1/conversations/nope", { headers: { Origin: APP, Authorization: `Bearer ${key}` } });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get("Access-Control-Allow-Origin")).toBe(APP);
  });

  it("with `*` (development only) allows any origin, without credentials", async () => {
    const res = await preflight("http://127.0.0.1:4000", "/v1/conversations", "POST", "authorization", "*");
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(res.headers.get("Access-Control-Allow-Credentials")).toBeNull();
  });

  it("leaves requests without Origin (servers, the SDK in Node) as they were", async () => {
    const res = await call("/v1/agents", { headers: { Authorization: `Bearer ${await apiKey(freshIdentity())}` } });
    expect(res.status).toBe(200);
    expect(corsHeaders(res)).toEqual([]);
    const options = await call("/v1/agents", { method: "OPTIONS" });
    expect(options.status).toBe(204);
  });
});
