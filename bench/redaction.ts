/**
 * Redaction quality and speed, in Node: recall over the labelled corpus's
 * secrets and the share of negative samples wrongly touched, each by shape,
 * and throughput on two 1 MiB tool outputs: a mixed one (log lines with code,
 * JSON, tables, prose, base64 and a secret in some of its disguises every
 * few hundred lines) and the plain service log this benchmark used before.
 * Prints nothing; its callers decide how to show it.
 */
import { admitText, redact } from "../src/protect";
import { NEGATIVE_SAMPLES, SECRET_SAMPLES, type SecretSample } from "../test/fixtures/secret-corpus";

export interface ShapeFigures {
  shape: string;
  /** Secrets (for negatives: samples) of this shape. */
  total: number;
  /** Secrets gone and named by the expected rule (for negatives: samples with any redaction). */
  count: number;
}

export interface RedactionBench {
  /** Share of the corpus's secret values gone from the redacted text and covered by a hit of the expected rule. */
  recall: number;
  /** Share of negative samples in which anything was redacted. */
  falsePositiveRate: number;
  secrets: number;
  negatives: number;
  recallByShape: ShapeFigures[];
  falsePositivesByKind: ShapeFigures[];
  /** Median over timed runs on a 1 MiB mixed output, after warm-up. */
  mbPerSecond: number;
  /** The same log through `admitText`: what every channel pays. */
  boundaryMbPerSecond: number;
  /** The same on the 1 MiB service log this benchmark used before the mixed one (log lines, a secret every 499). */
  serviceLogMbPerSecond: number;
}

const MIB = 1_048_576;

/** Whether a secret is gone from the redacted text and a hit of its rule covers where it was. */
function caught(sample: SecretSample, value: string, rule: string, result: ReturnType<typeof redact>): boolean {
  const start = sample.text.indexOf(value);
  return !result.text.includes(value) && result.hits.some((hit) => hit.rule === rule && hit.offset <= start && hit.offset + hit.length >= start + value.length);
}

function tally(figures: Map<string, ShapeFigures>, shape: string, counted: boolean): void {
  const entry = figures.get(shape) ?? { shape, total: 0, count: 0 };
  entry.total++;
  if (counted) entry.count++;
  figures.set(shape, entry);
}

/**
 * The text as a tool result arrives, parsed from a request body: a flat string. (A slice of a larger string,
 * as `slice` returns, costs V8 up to twice as much per character read when the text has non-ASCII in it.)
 */
function asParsed(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

/** Log lines of a busy service, with a plain credential every 499 lines. */
export function serviceLog(): string {
  const secrets = SECRET_SAMPLES.filter((sample) => sample.carrier === "log" && sample.shape === "plain" && sample.policy === undefined).map((sample) => sample.text);
  const lines: string[] = [];
  for (let i = 0, size = 0; size < MIB; i++) {
    const line = i % 499 === 0 ? secrets[(i / 499) % secrets.length]! : logLine(i);
    lines.push(line);
    size += line.length + 1;
  }
  return asParsed(lines.join("\n").slice(0, MIB));
}

function logLine(i: number): string {
  return `2026-11-23T10:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}.${String(i % 1000).padStart(3, "0")}Z INFO api request_id=${((i * 2654435761) >>> 0).toString(16)} method=GET path=/v1/items/${i}?page=${i % 7}&sort=asc status=${i % 50 === 0 ? 500 : 200} dur_ms=${(i * 37) % 400} cache_key=item:${i} user=u${i % 97}`;
}

/** A busy service's log, with a negative sample every 37 lines and a secret (plain or disguised) every 211. */
export function mixedToolOutput(): string {
  const secrets = SECRET_SAMPLES.filter((sample) => sample.policy === undefined).map((sample) => sample.text);
  const lines: string[] = [];
  for (let i = 0, size = 0; size < MIB; i++) {
    const line =
      i % 211 === 0
        ? secrets[((i / 211) * 7) % secrets.length]!
        : i % 37 === 0
          ? NEGATIVE_SAMPLES[(i / 37) % NEGATIVE_SAMPLES.length]!.text
          : logLine(i);
    lines.push(line);
    size += line.length + 1;
  }
  return asParsed(lines.join("\n").slice(0, MIB));
}

/** Median MB/s of `pass` (by default `redact`) over `text`, after warm-up. */
export function redactionThroughput(text: string, runs = 9, pass: (text: string) => unknown = redact): number {
  for (let i = 0; i < 3; i++) pass(text);
  const times = Array.from({ length: runs }, () => {
    const started = performance.now();
    pass(text);
    return performance.now() - started;
  }).sort((a, b) => a - b);
  return text.length / MIB / (times[Math.floor(times.length / 2)]! / 1000);
}

export function benchRedaction(): RedactionBench {
  const byShape = new Map<string, ShapeFigures>();
  for (const sample of SECRET_SAMPLES) {
    const result = redact(sample.text, sample.policy);
    for (const secret of sample.secrets) tally(byShape, sample.shape, caught(sample, secret.value, secret.rule, result));
  }
  const byKind = new Map<string, ShapeFigures>();
  for (const sample of NEGATIVE_SAMPLES) tally(byKind, sample.kind, redact(sample.text).hits.length > 0);

  const recallByShape = [...byShape.values()];
  const falsePositivesByKind = [...byKind.values()];
  const secrets = recallByShape.reduce((sum, f) => sum + f.total, 0);
  const falsePositives = falsePositivesByKind.reduce((sum, f) => sum + f.count, 0);
  return {
    recall: recallByShape.reduce((sum, f) => sum + f.count, 0) / secrets,
    falsePositiveRate: falsePositives / NEGATIVE_SAMPLES.length,
    secrets,
    negatives: NEGATIVE_SAMPLES.length,
    recallByShape,
    falsePositivesByKind,
    mbPerSecond: redactionThroughput(mixedToolOutput()),
    boundaryMbPerSecond: redactionThroughput(mixedToolOutput(), 9, (text) => admitText(text, { nonce: "q7k2m9x4abcd" })),
    serviceLogMbPerSecond: redactionThroughput(serviceLog()),
  };
}

const percent = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)} %`;

/** The figures as report lines: the totals against the targets, then recall by shape and false positives by kind. */
export function formatRedactionBench(r: RedactionBench): string[] {
  return [
    `  recall ${(100 * r.recall).toFixed(2)} % (target ≥ 99.5 %) · false positives ${(100 * r.falsePositiveRate).toFixed(2)} % of negatives (target ≤ 0.5 %)`,
    `  ${r.mbPerSecond.toFixed(1)} MB/s on a 1 MiB mixed log (log lines, code, JSON, tables, prose, base64, disguised secrets) · ${r.serviceLogMbPerSecond.toFixed(1)} MB/s on the 1 MiB service log (target ≥ 20 MB/s)`,
    `  the whole trust boundary (neutralise, then redact) on the mixed log: ${r.boundaryMbPerSecond.toFixed(1)} MB/s`,
    "  recall by shape:",
    ...r.recallByShape.map((f) => `    ${f.shape.padEnd(32)} ${String(f.count).padStart(4)} / ${String(f.total).padEnd(4)} ${percent(f.count, f.total)}`),
    "  false positives by kind of negative:",
    ...r.falsePositivesByKind.map((f) => `    ${f.shape.padEnd(32)} ${String(f.count).padStart(4)} / ${String(f.total).padEnd(4)} ${percent(f.count, f.total)}`),
  ];
}
