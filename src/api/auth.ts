import { createMiddleware } from "hono/factory";
import type { TimingVariables } from "hono/timing";
import type { Env } from "../platform/env";
import type { Owner } from "../protocol/owner";
import { APP_SUBPROTOCOL, BEARER_SUBPROTOCOL_PREFIX } from "../protocol/methods";
import { verifyToken, type Credential } from "./credentials";
import { problemResponse } from "./problem-response";

export type ApiEnv = { Bindings: Env; Variables: { owner: Owner } & TimingVariables };

/** Frontends: `Authorization: Bearer <api key>`; the key names the tenant and user. */
export const requireApiKey = createMiddleware<ApiEnv>(async (c, next) => {
  const credential = await credentialFrom(c.env, bearer(c.req.header("Authorization")));
  if (credential?.kind !== "frontend") return problemResponse(c, { type: "unauthorized", detail: "send a frontend API key as 'Authorization: Bearer <key>'" });
  c.set("owner", { tenant: credential.tenant, user: credential.sub });
  await next();
});

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

function bearer(header: string | undefined | null): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? "");
  return match?.[1];
}

async function credentialFrom(env: Env, token: string | undefined): Promise<Credential | null> {
  if (!token || !env.AUTH_SECRET) return null;
  return verifyToken(env.AUTH_SECRET, token);
}
