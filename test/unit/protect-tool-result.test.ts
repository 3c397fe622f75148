import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countTokens } from "../../src/core/tokens";
import { redact, protectToolResult } from "../../src/protect";
import { TrimPolicy } from "../../src/protocol/policies";
import { SECRET_SAMPLES } from "../fixtures/secret-corpus";

/** Everything protectToolResult returns, with the raw values the caller must hash and drop taken out. */
const returnedWithoutValues = (result: ReturnType<typeof protectToolResult>) =>
  JSON.stringify({ ...result, hits: result.hits.map(({ value: _value, ...rest }) => rest) });

const filler = (lines: number, seed: number) => Array.from({ length: lines }, (_, i) => `2026-11-23T10:${String((i + seed) % 60).padStart(2, "0")}:00Z INFO step ${i} done in ${(i * 7) % 90} ms`).join("\n");

describe("protectToolResult", () => {
  it.each(SECRET_SAMPLES.map((s) => [s.id, s] as const))("returns nothing of the secrets in %s but the hits' values, untrimmed or trimmed", (_id, sample) => {
    for (const policy of [undefined, TrimPolicy.parse({ maxTokens: 40 }), TrimPolicy.parse({ strategy: "head", maxTokens: 25 })]) {
      const content = `${filler(30, 1)}\n${sample.text}\n${filler(30, 2)}`;
      const result = protectToolResult(content, { redaction: sample.policy, ...(policy ? { policy } : {}) });
      const returned = returnedWithoutValues(result);
      for (const secret of sample.secrets) {
        expect(returned).not.toContain(secret.value);
        expect(result.hits.some((hit) => hit.value.includes(secret.value) && hit.rule === secret.rule)).toBe(true);
      }
    }
  });

  it("redacts before it trims, so a secret straddling the cut leaves no fragment", () => {
    const secret = "sk_live_4eC39HqLyjWDarjtT1zdp7dcAbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 10, max: 120 }), (at, maxTokens) => {
        const base = filler(20, 3);
        const content = `${base.slice(0, at)} ${secret} ${base.slice(at)}`;
        const result = protectToolResult(content, { policy: TrimPolicy.parse({ strategy: "head", maxTokens }) });
        // No 8-character piece of the secret's random part may survive anywhere.
        for (let i = 8; i + 8 <= secret.length; i++) expect(result.content).not.toContain(secret.slice(i, i + 8));
        expect(countTokens(result.content)).toBeLessThanOrEqual(maxTokens);
        expect(result.hits).toEqual([{ rule: "stripe-secret-key", offset: at + 1, length: secret.length, value: secret }]);
      }),
      { numRuns: 200 },
    );
  });

  it("keeps markers whole when it trims around them", () => {
    const token = "ghp_R8x2Lq9TzV4mN7bK1cW5yH3jP6dF0sA2gE8u";
    const content = Array.from({ length: 300 }, (_, i) => `line ${i} pushed with ${token}`).join("\n");
    const { content: out, trimmed } = protectToolResult(content, { policy: TrimPolicy.parse({ maxTokens: 120 }) });
    expect(trimmed?.strategy).toBe("head_tail");
    expect(out).toContain("[REDACTED:github-token]");
    expect(out.replace(/\[REDACTED:github-token\]/g, "")).not.toMatch(/\[RED|REDAC|ACTED|github|-token\]/);
  });

  it("applies the default budget when no policy is given, and passes a short clean result through", () => {
    expect(protectToolResult("3 hits")).toEqual({ content: "3 hits", hits: [], trimmed: null });
    const long = protectToolResult(filler(2000, 0));
    expect(long.trimmed).toMatchObject({ strategy: "head_tail" });
    expect(long.trimmed!.keptTokens).toBeLessThanOrEqual(800);
  });

  it("uses the redaction policy", () => {
    const content = "contact jane.doe@example.org";
    expect(protectToolResult(content).content).toBe(content);
    expect(protectToolResult(content, { redaction: { pii: { email: true } } }).content).toBe("contact [REDACTED:email]");
  });

  it("finds every secret in a 1 MB tool output (its speed is measured by npm run bench)", () => {
    const lines: string[] = [];
    let secrets = 0;
    for (let i = 0, size = 0; size < 1 << 20; i++) {
      const secret = i % 997 === 0;
      if (secret) secrets += 1;
      const line = secret ? `2026-11-23T10:00:00Z DEBUG retry with token=${"Zq8vK2pLm9xR4tW7".repeat(2)} user=svc` : `2026-11-23T10:00:${String(i % 60).padStart(2, "0")}Z INFO request_id=${(i * 2654435761) % 4294967296} path=/v1/items/${i} status=200 key=cache:${i}`;
      lines.push(line);
      size += line.length + 1;
    }
    const { text, hits } = redact(lines.join("\n"));
    expect(hits).toHaveLength(secrets);
    expect(text).not.toContain("Zq8vK2pLm9xR4tW7");
  });
});
