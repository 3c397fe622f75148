/**
 * `npm run bench:gateway`: what the model gateway adds. Starts the local fake model (test/e2e/fake-openai.ts), a real
 * `wrangler dev` whose UPSTREAM_URL is that fake, and an SDK app with a context provider (so every turn pulls a
 * context over the app's socket, as a real one does). Then, with the official `openai` client:
 *
 *   (a) through the gateway: `POST /v1/chat/completions` with `model: "notes:assistant"`, only the new message;
 *   (b) direct: the same client straight at the fake, with the very body the gateway sent upstream for that turn;
 *   (c) the overhead per turn, (a) − (b), pair by pair;
 *
 * plain and streamed (time to the first text delta, and to the end). The two alternate request by request, in
 * conversations of PER_CONVERSATION turns. TURNS=300 per figure by default.
 */
import OpenAI from "openai";
import { mintToken } from "../src/http/auth";
import { ContextApp } from "../src/sdk";
import { startLocalRuntime } from "../scripts/local-runtime";
import { startFakeOpenAI, type ChatRequest } from "../test/e2e/fake-openai";
import { summary } from "./stats";

const TURNS = Number(process.env.TURNS ?? 300);
const WARMUP = 20;
const PER_CONVERSATION = 20;
const ANSWER = "A short answer of a few words, streamed in pieces like a model does.";

async function main() {
  const fake = await startFakeOpenAI(() => ({ text: ANSWER }));
  const secret = `bench-${crypto.randomUUID()}`;
  const runtime = await startLocalRuntime(secret, { vars: { UPSTREAM_URL: fake.url, UPSTREAM_MODEL: "fake-gpt", UPSTREAM_KEY: "sk-bench" } });
  const app = new ContextApp({
    url: runtime.url,
    token: await mintToken(secret, { kind: "app", tenant: "bench", sub: "alice", app: "notes" }),
    app: { name: "notes", version: "1.0.0" },
    contexts: [{ id: "editor", name: "Editor", description: "The open note", getCurrent: async () => ({ title: "Editor", content: `Open note: Q4 plan (${Math.floor(Date.now() / 5000)})` }) }],
  });
  try {
    await app.connect();
    await app.createAgent({ agentId: "assistant", name: "Notes Assistant", systemPrompt: "You are the Notes Assistant.", attachedContexts: ["notes:editor"] });
    const apiKey = await mintToken(secret, { kind: "frontend", tenant: "bench", sub: "alice" });
    const direct = new OpenAI({ apiKey: "sk-bench", baseURL: fake.url, maxRetries: 0 });
    console.log(`gateway overhead: ${TURNS} turns per figure (after ${WARMUP} warm-up), conversations of ${PER_CONVERSATION} turns, one context provider over the app's socket`);

    for (const stream of [false, true]) {
      const gatewayMs: number[] = [];
      const directMs: number[] = [];
      const overhead: number[] = [];
      const gatewayFirst: number[] = [];
      const directFirst: number[] = [];
      let conversation: string | undefined;
      for (let i = 0; i < TURNS + WARMUP; i++) {
        if (i % PER_CONVERSATION === 0) conversation = undefined;
        const gateway = new OpenAI({ apiKey, baseURL: `${runtime.url}/v1`, maxRetries: 0, ...(conversation ? { defaultHeaders: { "X-Conversation-Id": conversation } } : {}) });
        const messages = [{ role: "user" as const, content: `Question ${i}: what am I working on?` }];
        const through = await timed(stream, (s) => gateway.chat.completions.create({ model: "notes:assistant", messages, stream: s } as never).withResponse());
        conversation ??= through.conversation ?? undefined;
        const sent = fake.requests.at(-1) as ChatRequest;
        const { stream: _s, stream_options: _o, ...body } = sent;
        const straight = await timed(stream, (s) => direct.chat.completions.create({ ...body, stream: s } as never).withResponse());
        if (i < WARMUP) continue;
        gatewayMs.push(through.total);
        directMs.push(straight.total);
        overhead.push(through.total - straight.total);
        if (stream) {
          gatewayFirst.push(through.first!);
          directFirst.push(straight.first!);
        }
      }
      console.log(`\n${stream ? "streamed" : "plain"}:`);
      console.log(`  (a) through the gateway  ${summary(gatewayMs)}`);
      console.log(`  (b) direct to the model  ${summary(directMs)}`);
      console.log(`  (c) overhead, (a) − (b)  ${summary(overhead)}`);
      if (stream) {
        console.log(`  first text delta, gateway ${summary(gatewayFirst)}`);
        console.log(`  first text delta, direct  ${summary(directFirst)}`);
      }
    }
    console.log(`\nupstream requests: ${fake.requests.length}`);
  } finally {
    await app.close();
    await runtime.stop();
    await fake.close();
  }
}

/** One request: total time, and (streamed) the time to the first text delta; the conversation header, when there is one. */
async function timed(
  stream: boolean,
  call: (stream: boolean) => Promise<{ data: unknown; response: Response }>,
): Promise<{ total: number; first: number | null; conversation: string | null }> {
  const started = performance.now();
  const { data, response } = await call(stream);
  let first: number | null = null;
  if (stream) {
    for await (const chunk of data as AsyncIterable<{ choices: { delta?: { content?: string | null } }[] }>) {
      if (first === null && chunk.choices[0]?.delta?.content) first = performance.now() - started;
    }
  }
  return { total: performance.now() - started, first, conversation: response.headers.get("x-conversation-id") };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
