/**
 * Turn latency end to end: a frontend (ContextClient over HTTP) asks for turns
 * while an SDK app answers three attached providers over its WebSocket, against
 * a real local `wrangler dev`.
 */
import type { ContextClient } from "../src/sdk";
import { ContextApp } from "../src/sdk";
import { summary } from "./stats";

export interface TurnBenchOptions {
  url: string;
  appToken: string;
  client: ContextClient;
  /** The runtime's own time for the client's last request (its Server-Timing header). */
  lastServerMs: () => number;
  /** Simulated work per provider (ms); the runtime's overhead is measured net of the slowest. */
  providerDelaysMs: [number, number, number];
  conversations: number;
  turnsPerConversation: number;
  /**
   * The providers declare `notifies: true`, and the editor changes before every turn (its app says so with
   * `notifyChanged`): the runtime asks the editor each turn and reuses the calendar's and the browser's answers.
   */
  notifies?: boolean;
}

export interface TurnBench {
  latency: number[];
  overhead: number[];
  server: number[];
}

export async function benchTurns(o: TurnBenchOptions): Promise<TurnBench> {
  let slowest = 0;
  let edits = 0;
  const provider = (id: string, delayMs: number) => ({
    id,
    name: id,
    description: `${id} (answers in ~${delayMs} ms)`,
    ...(o.notifies ? { notifies: true } : {}),
    getCurrent: async () => {
      const started = performance.now();
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      slowest = Math.max(slowest, performance.now() - started);
      return { title: id, content: `${id} state${id === "editor" && o.notifies ? ` after ${edits} edits` : ""}: ${"lorem ipsum ".repeat(40)}` };
    },
  });
  const [a, b, c] = o.providerDelaysMs;
  const app = new ContextApp({
    url: o.url,
    token: o.appToken,
    app: { name: "bench", version: "1.0.0" },
    contexts: [provider("editor", a), provider("calendar", b), provider("browser", c)],
  });
  await app.connect();
  const { agentId } = await app.createAgent({
    agentId: "assistant",
    name: "Bench",
    systemPrompt: "You are a benchmark.",
    attachedContexts: ["bench:editor", "bench:calendar", "bench:browser"],
  });

  const latency: number[] = [];
  const overhead: number[] = [];
  const server: number[] = [];
  for (let conv = 0; conv < o.conversations; conv++) {
    const { id } = await o.client.createConversation({ agent: agentId });
    for (let t = 0; t < o.turnsPerConversation; t++) {
      slowest = 0;
      if (o.notifies) {
        edits++;
        app.notifyChanged("editor");
      }
      const started = performance.now();
      await o.client.turn(id, { agent: agentId, message: `turn ${t}` });
      const elapsed = performance.now() - started;
      if (conv > 0 || t >= 5) {
        // the first few turns warm up the isolate and are not counted
        latency.push(elapsed);
        overhead.push(elapsed - slowest);
        server.push(o.lastServerMs());
      }
    }
  }
  await app.close();
  return { latency, overhead, server };
}

export function printTurnBench(title: string, r: TurnBench): void {
  console.log(`\n${title}`);
  console.log(`  turn latency     ${summary(r.latency)}`);
  console.log(`  runtime overhead ${summary(r.overhead)}  (latency − slowest provider's answer time)`);
  console.log(`  inside the Worker ${summary(r.server)}  (Server-Timing: from the request's arrival to its answer)`);
}
