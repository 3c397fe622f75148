import fc from "fast-check";
import { countTokens as exactTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { countByPattern, countTokens } from "../../src/core/tokens";
import { TOKEN_SAMPLES } from "../fixtures/token-samples";

describe("the token estimate", () => {
  it.each(Object.entries(TOKEN_SAMPLES))("counts %s at 1.0–1.3× the exact o200k count, never under", (_kind, text) => {
    const ratio = countTokens(text) / exactTokens(text);
    expect(ratio).toBeGreaterThanOrEqual(1);
    expect(ratio).toBeLessThanOrEqual(1.3);
  });

  it("counts nothing as nothing and grows with the text", () => {
    expect(countTokens("")).toBe(0);
    const text = TOKEN_SAMPLES.english!;
    // Only the seam between the copies may merge.
    expect(Math.abs(countTokens(text + text) - 2 * countTokens(text))).toBeLessThanOrEqual(1);
  });

  it("counts ASCII text with its fast scanner exactly as the pattern does (property)", () => {
    const ascii = fc.array(fc.constantFrom(..."aeB3 _-+/=\n\r\t'\"{}:,.xyzQW90Zk7", "ghp_", "re", "Hello", "1234567"), { maxLength: 80 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(ascii, (text) => {
        expect(countTokens(text)).toBe(countByPattern(text));
      }),
      { numRuns: 5000 },
    );
    for (const text of Object.values(TOKEN_SAMPLES)) if (!/[^\x00-\x7f]/.test(text)) expect(countTokens(text)).toBe(countByPattern(text));
  });
});
