/** A `fetch` for ContextClient that keeps the runtime's own time from each answer's `Server-Timing: total;dur=…`. */
export function timedFetch(): { fetch: typeof fetch; lastServerMs: () => number } {
  let last = Number.NaN;
  return {
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      const match = /(?:^|,)\s*total;dur=([\d.]+)/.exec(response.headers.get("Server-Timing") ?? "");
      last = match ? Number(match[1]) : Number.NaN;
      return response;
    },
    lastServerMs: () => last,
  };
}

/** Round trips of a request the Worker answers without touching a Durable Object: the local stack's floor. */
export async function httpFloor(url: string, samples: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < samples + 20; i++) {
    const started = performance.now();
    await (await fetch(`${url}/health`)).text();
    if (i >= 20) times.push(performance.now() - started);
  }
  return times;
}
