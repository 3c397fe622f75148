export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

export function summary(samples: readonly number[]): string {
  const f = (n: number) => n.toFixed(2);
  // The mean too: the Worker's clock counts whole milliseconds, so a change under one moves its percentiles only now and then.
  const mean = samples.reduce((sum, x) => sum + x, 0) / samples.length;
  return `p50 ${f(percentile(samples, 50))} ms · p90 ${f(percentile(samples, 90))} ms · p99 ${f(percentile(samples, 99))} ms · max ${f(Math.max(...samples))} ms · mean ${f(mean)} ms (n=${samples.length})`;
}
