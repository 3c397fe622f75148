import { countTokens as exactTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { countTokens } from "../../src/core/tokens";
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
});
