/**
 * `npx tsx bench/tool-result-node.ts`: the tool-result path in Node, without starting a runtime: the 1 MB log
 * that `bench/tool-session.ts` sends inside workerd (log lines with a GitHub token every ~2,000 tokens),
 * neutralised, redacted and trimmed to the default policy as `admitMessages` does. Median of timed runs after
 * warm-up, and each stage alone.
 */
import { neutralize } from "../src/core/neutralize";
import { protectToolResult, redact, resolveTrimPolicy, trimText } from "../src/protect";
import { seededRandom } from "../test/fixtures/seeded-random";
import { toolOutput } from "./tool-session";

const MB = 1_000_000;
const RUNS = Number(process.env.RUNS ?? 15);
const random = seededRandom(9);
const hex = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join("");

/** The 1 MB output tool-session.ts times, parsed from a request body as the runtime receives it. */
function megabyte(): string {
  let text = "";
  while (text.length < MB) text += `${toolOutput(1, 2_000)}\nexport GITHUB_TOKEN=ghp_${hex(36)}\n`;
  return JSON.parse(JSON.stringify(text.slice(0, MB))) as string;
}

function mbPerSecond(pass: () => unknown): number {
  for (let i = 0; i < 3; i++) pass();
  const times = Array.from({ length: RUNS }, () => {
    const started = performance.now();
    pass();
    return performance.now() - started;
  }).sort((a, b) => a - b);
  return MB / 1e6 / (times[Math.floor(times.length / 2)]! / 1000);
}

const text = megabyte();
const policy = resolveTrimPolicy("logs", {});
const redacted = redact(text).text;
console.log(`A 1 MB tool output through the tool-result path, Node ${process.version} (median of ${RUNS} runs):`);
console.log(`  neutralise, redact, trim: ${mbPerSecond(() => protectToolResult(neutralize(text, "q7k2m9x4abcd"), { policy })).toFixed(1)} MB/s`);
console.log(`    neutralise alone: ${mbPerSecond(() => neutralize(text, "q7k2m9x4abcd")).toFixed(1)} MB/s`);
console.log(`    redact alone: ${mbPerSecond(() => redact(text)).toFixed(1)} MB/s`);
console.log(`    trim alone (the redacted text): ${mbPerSecond(() => trimText(redacted, policy)).toFixed(1)} MB/s`);
