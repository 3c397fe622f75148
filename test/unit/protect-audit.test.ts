import { describe, expect, it } from "vitest";
import { AuditRecord, auditRecords, tenantAuditKey, redact, redactJson } from "../../src/protect";
import { SECRET_SAMPLES } from "../fixtures/secret-corpus";

const DEPLOYMENT_SECRET = "audit-test-deployment-secret";

/** Every substring of 8 characters: a record that held any of them would leak part of the value. */
const fragments = (value: string) => Array.from({ length: Math.max(0, value.length - 7) }, (_, i) => value.slice(i, i + 8));

describe("audit records", () => {
  it("keep the rule, the place and a 16-hex keyed hash, and no part of any corpus secret", { timeout: 60_000 }, async () => {
    const key = await tenantAuditKey(DEPLOYMENT_SECRET, "acme");
    for (const sample of SECRET_SAMPLES) {
      const { hits } = redact(sample.text, sample.policy);
      const records = await auditRecords(hits, key);
      expect(records).toHaveLength(hits.length);
      records.forEach((record, i) => {
        expect(AuditRecord.parse(record)).toEqual(record);
        expect(record).toEqual({ rule: hits[i]!.rule, offset: hits[i]!.offset, length: hits[i]!.length, hash: record.hash });
        expect(Object.keys(record)).not.toContain("value");
      });
      const serialised = JSON.stringify(records);
      for (const secret of sample.secrets) for (const fragment of fragments(secret.value)) expect(serialised).not.toContain(fragment);
    }
  });

  it("are stable for a tenant and differ across tenants and values", async () => {
    const value = "ghp_R8x2Lq9TzV4mN7bK1cW5yH3jP6dF0sA2gE8u";
    const hit = { rule: "github-token", offset: 0, length: value.length, value };
    const hashOf = async (tenant: string, v = value) => (await auditRecords([{ ...hit, value: v }], await tenantAuditKey(DEPLOYMENT_SECRET, tenant)))[0]!.hash;
    const acme = await hashOf("acme");
    expect(acme).toMatch(/^[0-9a-f]{16}$/);
    expect(await hashOf("acme")).toBe(acme);
    expect(await hashOf("globex")).not.toBe(acme);
    expect(await hashOf("acme", `${value.slice(0, -1)}v`)).not.toBe(acme);
    const otherDeployment = (await auditRecords([hit], await tenantAuditKey("another-secret", "acme")))[0]!.hash;
    expect(otherDeployment).not.toBe(acme);
  });

  it("is HMAC-SHA256 under HMAC(secret, 'audit:' + tenant)", async () => {
    const encoder = new TextEncoder();
    const hmac = async (key: Uint8Array | ArrayBuffer, data: string) =>
      new Uint8Array(await crypto.subtle.sign("HMAC", await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]), encoder.encode(data)));
    const tenantKey = await hmac(encoder.encode(DEPLOYMENT_SECRET), "audit:acme");
    const expected = Array.from((await hmac(tenantKey, "s3cr3t-value")).subarray(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
    const [record] = await auditRecords([{ rule: "secret-assignment", offset: 3, length: 12, value: "s3cr3t-value" }], await tenantAuditKey(DEPLOYMENT_SECRET, "acme"));
    expect(record!.hash).toBe(expected);
  });

  it("carry the JSON Pointer of hits from redactJson", async () => {
    const { hits } = redactJson({ config: { password: "hunter2!" } });
    const records = await auditRecords(hits, await tenantAuditKey(DEPLOYMENT_SECRET, "acme"));
    expect(records).toEqual([{ rule: "secret-assignment", offset: 0, length: 8, path: "/config/password", hash: expect.stringMatching(/^[0-9a-f]{16}$/) }]);
  });

  it("refuse an empty secret or tenant", async () => {
    await expect(tenantAuditKey("", "acme")).rejects.toThrow(/secret/);
    await expect(tenantAuditKey(DEPLOYMENT_SECRET, "")).rejects.toThrow(/tenant/);
  });
});
