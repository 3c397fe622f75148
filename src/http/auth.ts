import { createMiddleware } from "hono/factory";
import { sign, verify } from "hono/jwt";
import * as z from "zod";
import type { Env } from "../platform/env";
import { APP_SUBPROTOCOL, BEARER_SUBPROTOCOL_PREFIX } from "../protocol/methods";
import { Name } from "../protocol/names";
import type { Owner } from "../protocol/owner";
import type { ApiEnv } from "./env";
import { ProblemException } from "./problem";

/**
 * Credentials are HS256-signed tokens (hono's JWT helpers) carrying the tenant,
 * the user and, for apps, the app name. Nothing about identity is ever read
 * from a request body.
 */
export const Credential = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("frontend"), tenant: Name, sub: Name }),
  z.object({ kind: z.literal("app"), tenant: Name, sub: Name, app: Name }),
]);
export type Credential = z.infer<typeof Credential>;

export async function mintToken(secret: string, credential: Credential, ttlSeconds?: number): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  return sign({ ...credential, iat, ...(ttlSeconds ? { exp: iat + ttlSeconds } : {}) }, secret, "HS256");
}

export async function verifyToken(secret: string, token: string): Promise<Credential | null> {
  try {
    const parsed = Credential.safeParse(await verify(token, await verifyingKey(secret), "HS256"));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * The HMAC key of `secret`, imported once per isolate rather than on every request (hono's `verify` imports a string
 * secret each time; given a CryptoKey it checks the same header, algorithm, dates and signature). One secret is
 * configured per Worker, so only the last is kept.
 */
let imported: { secret: string; key: Promise<CryptoKey> } | null = null;
function verifyingKey(secret: string): Promise<CryptoKey> {
  if (imported?.secret !== secret) {
    imported = { secret, key: crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]) };
  }
  return imported.key;
}

/** Frontends: `Authorization: Bearer <api key>`; the key names the tenant and user. */
export const requireApiKey = createMiddleware<ApiEnv>(async (c, next) => {
  const owner = await frontendOwner(c.env, bearer(c.req.header("Authorization")));
  if (!owner) throw new ProblemException({ type: "unauthorized", detail: "send a frontend API key as 'Authorization: Bearer <key>'" });
  c.set("owner", owner);
  await next();
});

/** Who a frontend API key names, or null when `key` is missing, forged, expired or not a frontend's. */
export async function frontendOwner(env: Env, key: string | undefined): Promise<Owner | null> {
  const credential = await credentialFrom(env, key);
  return credential?.kind === "frontend" ? { tenant: credential.tenant, user: credential.sub } : null;
}

/** Apps: the token rides in `Authorization`, or (browsers) as a `bearer.<token>` WebSocket subprotocol. */
export async function appCredential(env: Env, headers: Headers): Promise<Extract<Credential, { kind: "app" }> | null> {
  const offered = (headers.get("Sec-WebSocket-Protocol") ?? "").split(",").map((p) => p.trim());
  const fromProtocol = offered.find((p) => p.startsWith(BEARER_SUBPROTOCOL_PREFIX))?.slice(BEARER_SUBPROTOCOL_PREFIX.length);
  const credential = await credentialFrom(env, bearer(headers.get("Authorization")) ?? fromProtocol);
  return credential?.kind === "app" ? credential : null;
}

export function offersAppSubprotocol(headers: Headers): boolean {
  return (headers.get("Sec-WebSocket-Protocol") ?? "").split(",").some((p) => p.trim() === APP_SUBPROTOCOL);
}

/** The token of `Authorization: Bearer <token>`. */
export function bearer(header: string | undefined | null): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? "");
  return match?.[1];
}

async function credentialFrom(env: Env, token: string | undefined): Promise<Credential | null> {
  if (!token || !env.AUTH_SECRET) return null;
  return verifyToken(env.AUTH_SECRET, token);
}
