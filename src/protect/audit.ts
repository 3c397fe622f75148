/**
 * Audit records for redactions: which rule fired where, and a keyed hash of
 * the secret so the same leak can be recognised across records, never the
 * secret itself. The key is per tenant, so one tenant's hashes say nothing
 * about another's secrets.
 */
import * as z from "zod";
import type { SecretHit } from "./redact";

export const AuditRecord = z.object({
  rule: z.string(),
  offset: z.number().int().nonnegative(),
  length: z.number().int().positive(),
  path: z.string().optional(),
  /** First 16 hex digits of HMAC-SHA256(tenant key, secret). */
  hash: z.string().regex(/^[0-9a-f]{16}$/),
});
export type AuditRecord = z.infer<typeof AuditRecord>;

const encoder = new TextEncoder();
const HMAC_SHA256 = { name: "HMAC", hash: "SHA-256" } as const;

function importHmacKey(raw: BufferSource): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", raw, HMAC_SHA256, false, ["sign"]);
}

/** HMAC(secret, "audit:" + tenant), imported as the tenant's HMAC key. */
export async function tenantAuditKey(secret: string, tenant: string): Promise<CryptoKey> {
  if (secret.length === 0) throw new Error("tenantAuditKey: the deployment secret is empty");
  if (tenant.length === 0) throw new Error("tenantAuditKey: the tenant is empty");
  const root = await importHmacKey(encoder.encode(secret));
  return importHmacKey(await crypto.subtle.sign("HMAC", root, encoder.encode(`audit:${tenant}`)));
}

export async function auditRecords(hits: readonly SecretHit[], key: CryptoKey): Promise<AuditRecord[]> {
  return Promise.all(
    hits.map(async (hit) => {
      const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(hit.value)));
      const hash = Array.from(mac.subarray(0, 8), (byte) => byte.toString(16).padStart(2, "0")).join("");
      return { rule: hit.rule, offset: hit.offset, length: hit.length, ...(hit.path !== undefined ? { path: hit.path } : {}), hash };
    }),
  );
}
