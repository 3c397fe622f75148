import { sign, verify } from "hono/jwt";
import * as z from "zod";
import { Name } from "../protocol/names";

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
    const parsed = Credential.safeParse(await verify(token, secret, "HS256"));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
