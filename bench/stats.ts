export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

export function summary(samples: readonly number[]): string {
  const f = (n: number) => n.toFixed(2);
  return `p50 ${f(percentile(samples, 50))} ms · p90 ${f(percentile(samples, 90))} ms · p99 ${f(percentile(samples, 99))} ms · max ${f(Math.max(...samples))} ms (n=${samples.length})`;
}

/** A seeded PRNG, so every run scripts the same session. */
export function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
