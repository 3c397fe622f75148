/**
 * Memory search latency against the size of one user namespace. Writes
 * memories through the HTTP API (`POST /v1/memories/batch`, 100 at a time:
 * every one goes through the write gate and the duplicate check, as a user's
 * import would), then times `GET /v1/memories/search` at each size.
 *
 * `counts` must ascend; the namespace grows from one size to the next, so the
 * API key's user should start with no user-level memories. Prints nothing.
 */
import { MEMORY_LIMITS } from "../src/memory/limits";
import { seededRandom } from "../test/fixtures/seeded-random";
import { percentile } from "./stats";

export interface MemorySearchFigures {
  count: number;
  /** Round trip of a search, ms, with the level's listing cached in the isolate (the steady state). */
  p50: number;
  p90: number;
  p99: number;
  /** Time inside the Worker (Server-Timing), median, ms. */
  serverP50: number;
  /** The first search after the cached listing was dropped: the level listed from KV again. */
  coldMs: number;
  /** Memories written to reach `count`, and how long that took. */
  written: number;
  writeMs: number;
  samples: number;
}

const SUBJECTS = ["The user", "The team", "Alice", "The design group", "The on-call engineer", "The client", "Our manager", "The data team", "The support desk", "The mobile squad"];
const VERBS = ["prefers", "uses", "avoids", "reviews", "deploys", "schedules", "documents", "maintains", "tests", "migrates", "archives", "tracks", "plans", "approves", "monitors"];
const ADJECTIVES = ["quarterly", "nightly", "shared", "legacy", "encrypted", "regional", "weekly", "internal", "public", "staging", "primary", "backup", "draft", "pinned", "urgent", "archived", "mobile", "annual", "remote", "audited"];
const NOUNS = ["invoices", "dashboards", "reports", "pipelines", "backups", "contracts", "roadmaps", "budgets", "releases", "migrations", "tickets", "surveys", "runbooks", "forecasts", "datasets", "playbooks", "calendars", "templates", "workspaces", "checklists", "notebooks", "benchmarks", "audits", "invoices", "screenshots"];
const PLACES = ["Lisbon", "Berlin", "Osaka", "Toronto", "Nairobi", "Lima", "Oslo", "Austin", "Seoul", "Dublin", "Prague", "Denver", "Perth", "Bogota", "Cairo", "Madrid"];
const TOOLS = ["wrangler", "pnpm", "Figma", "Notion", "Grafana", "Postgres", "Terraform", "Jira", "Linear", "Slack", "Vitest", "Kafka", "Redis", "Airflow", "dbt", "Sentry", "Docker", "GitHub"];
const WHEN = ["on Mondays", "every Friday afternoon", "before each release", "after the standup", "at the end of the month", "during the quarterly review", "when the build fails", "twice a week", "every morning", "before holidays"];

/** The i-th memory of a seeded stream: readable sentences, distinct enough that the duplicate check keeps them all. */
export function benchMemoryText(random: () => number, i: number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  return `${pick(SUBJECTS)} ${pick(VERBS)} the ${pick(ADJECTIVES)} ${pick(NOUNS)} for project ${pick(PLACES).toLowerCase()}-${i} with ${pick(TOOLS)} ${pick(WHEN)}.`;
}

function benchQuery(random: () => number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const parts = [pick(NOUNS), pick(TOOLS), pick(ADJECTIVES), pick(VERBS)];
  return parts.slice(0, 2 + Math.floor(random() * 3)).join(" ");
}

export async function benchMemorySearch(opts: { url: string; apiKey: string; counts: number[]; searches?: number }): Promise<MemorySearchFigures[]> {
  const headers = { Authorization: `Bearer ${opts.apiKey}`, "Content-Type": "application/json" };
  const searches = opts.searches ?? 300;
  const random = seededRandom(7);
  const figures: MemorySearchFigures[] = [];
  let stored = 0;
  let index = 0;
  for (const count of opts.counts) {
    const started = performance.now();
    let written = 0;
    while (stored < count) {
      const n = Math.min(100, count - stored);
      const memories = Array.from({ length: n }, () => ({ text: benchMemoryText(random, index++), source: "bench" }));
      const res = await fetch(`${opts.url}/v1/memories/batch`, { method: "POST", headers, body: JSON.stringify({ memories }) });
      if (!res.ok) throw new Error(`seeding memories: ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { created: number };
      stored += body.created;
      written += n;
      if (body.created === 0) throw new Error("seeding memories: the write gate refused a whole batch");
    }
    const writeMs = performance.now() - started;

    const search = async (q: string) => {
      const t0 = performance.now();
      const res = await fetch(`${opts.url}/v1/memories/search?q=${encodeURIComponent(q)}&limit=10`, { headers });
      await res.text();
      if (!res.ok) throw new Error(`search: ${res.status}`);
      const server = /(?:^|,)\s*total;dur=([\d.]+)/.exec(res.headers.get("Server-Timing") ?? "");
      return { ms: performance.now() - t0, serverMs: server ? Number(server[1]) : Number.NaN };
    };
    // The listing the writes left cached expires on its own; wait it out once so the first search lists KV afresh.
    await new Promise((r) => setTimeout(r, MEMORY_LIMITS.listingTtlMs + 500));
    const cold = await search(benchQuery(random));
    for (let i = 0; i < 20; i++) await search(benchQuery(random));
    const times: number[] = [];
    const server: number[] = [];
    for (let i = 0; i < searches; i++) {
      const t = await search(benchQuery(random));
      times.push(t.ms);
      server.push(t.serverMs);
    }
    figures.push({
      count,
      p50: percentile(times, 50),
      p90: percentile(times, 90),
      p99: percentile(times, 99),
      serverP50: percentile(server, 50),
      coldMs: cold.ms,
      written,
      writeMs,
      samples: times.length,
    });
  }
  return figures;
}
