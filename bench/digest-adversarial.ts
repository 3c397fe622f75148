/**
 * `npx tsx bench/digest-adversarial.ts`: the digest and the token count on 100 KB adversarial texts (each was
 * quadratic before issue 10's review: seconds to minutes). Prints milliseconds per input.
 */
import { countTokens } from "../src/core/tokens";
import { digest } from "../src/history/digest";
import { ADVERSARIAL_INPUTS } from "../test/fixtures/adversarial-text";

for (const [name, text] of Object.entries(ADVERSARIAL_INPUTS)) {
  const started = performance.now();
  digest({ previous: null, messages: [{ seq: 1, role: "user", content: text, createdAt: "2026-11-01T00:00:00Z" }], maxTokens: 2_000 });
  const digested = performance.now();
  countTokens(text);
  console.log(`${name.padEnd(28)} digest ${(digested - started).toFixed(0).padStart(6)} ms   countTokens ${(performance.now() - digested).toFixed(0).padStart(5)} ms`);
}
