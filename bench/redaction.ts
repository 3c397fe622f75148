/**
 * Redaction quality and speed: recall over the labelled corpus's secrets, the
 * share of look-alike samples wrongly touched, and throughput on a 1 MB tool
 * output of log lines with a few secrets in it. Prints nothing; bench/run.ts
 * decides how to show it.
 */
import { redact } from "../src/protect/redact";
import { NEGATIVE_SAMPLES, SECRET_SAMPLES } from "../test/fixtures/secret-corpus";

export interface RedactionBench {
  /** Share of the corpus's secret values absent from the redacted text. */
  recall: number;
  /** Share of look-alike samples in which anything was redacted. */
  falsePositiveRate: number;
  secrets: number;
  negatives: number;
  /** Median over timed runs on a 1 MiB log, after warm-up. */
  mbPerSecond: number;
}

const MIB = 1_048_576;

/** Log lines of a busy service, with a credential every few hundred lines. */
function syntheticToolOutput(): string {
  const secrets = SECRET_SAMPLES.filter((sample) => sample.carrier === "log" && sample.policy === undefined).map((sample) => sample.text);
  const lines: string[] = [];
  for (let i = 0, size = 0; size < MIB; i++) {
    const line =
      i % 499 === 0
        ? secrets[(i / 499) % secrets.length]!
        : `2026-11-23T10:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}.${String(i % 1000).padStart(3, "0")}Z INFO api request_id=${((i * 2654435761) >>> 0).toString(16)} method=GET path=/v1/items/${i}?page=${i % 7}&sort=asc status=${i % 50 === 0 ? 500 : 200} dur_ms=${(i * 37) % 400} cache_key=item:${i} user=u${i % 97}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n").slice(0, MIB);
}

export function benchRedaction(): RedactionBench {
  let secrets = 0;
  let removed = 0;
  for (const sample of SECRET_SAMPLES) {
    const { text } = redact(sample.text, sample.policy);
    for (const secret of sample.secrets) {
      secrets++;
      if (!text.includes(secret.value)) removed++;
    }
  }
  const falsePositives = NEGATIVE_SAMPLES.filter((sample) => redact(sample.text).hits.length > 0).length;

  const output = syntheticToolOutput();
  for (let i = 0; i < 3; i++) redact(output);
  const runs = Array.from({ length: 9 }, () => {
    const started = performance.now();
    redact(output);
    return performance.now() - started;
  }).sort((a, b) => a - b);
  const medianMs = runs[Math.floor(runs.length / 2)]!;

  return {
    recall: removed / secrets,
    falsePositiveRate: falsePositives / NEGATIVE_SAMPLES.length,
    secrets,
    negatives: NEGATIVE_SAMPLES.length,
    mbPerSecond: output.length / MIB / (medianMs / 1000),
  };
}
