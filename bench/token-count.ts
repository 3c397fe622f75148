/**
 * What `countTokens` charges against exact o200k (gpt-tokenizer) and how fast it counts, in ns per KB, on the token
 * samples (prose, code, JSON, logs, other scripts) and on 1 MB of logs; the first count in an isolate (building the
 * vocabulary) apart. Usage: npx tsx bench/token-count.ts
 */
import { countTokens as exactTokens } from "gpt-tokenizer/encoding/o200k_base";
import { countTokens } from "../src/core/tokens";
import { TOKEN_SAMPLES } from "../test/fixtures/token-samples";

let started = performance.now();
countTokens("a");
console.log(`first count (builds the vocabulary): ${(performance.now() - started).toFixed(1)} ms`);
const texts = { ...TOKEN_SAMPLES, "1 MB of logs": TOKEN_SAMPLES.logs!.repeat(Math.ceil(1_000_000 / TOKEN_SAMPLES.logs!.length)) };
console.log(`${"".padEnd(13)} ${"exact".padStart(7)} ${"bound".padStart(7)} ratio ${"ns/KB".padStart(7)}`);
for (const [kind, text] of Object.entries(texts)) {
  const kb = new TextEncoder().encode(text).length / 1024;
  const rounds = Math.max(3, Math.ceil(2_000 / kb));
  for (let i = 0; i < 3; i++) countTokens(text);
  started = performance.now();
  for (let i = 0; i < rounds; i++) countTokens(text);
  const speed = (1e6 * (performance.now() - started)) / rounds / kb;
  const [exact, bound] = [exactTokens(text), countTokens(text)];
  console.log(`${kind.padEnd(13)} ${String(exact).padStart(7)} ${String(bound).padStart(7)} ${(bound / exact).toFixed(2).padStart(5)} ${speed.toFixed(0).padStart(7)}`);
}
