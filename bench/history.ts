/**
 * History at scale and over time, against the local runtime:
 * - building the request for a 10,000-message conversation (loaded tail only);
 * - prefix stability over a scripted 50-turn session with compaction;
 * - tokens the model reads over a 200-turn session, with and without compaction.
 */
import type { ContextClient } from "../src/sdk";
import { ContextApp } from "../src/sdk";
import type { TurnResult } from "../src/protocol/frontend";
import { percentile } from "./stats";

const call = (id: string, name = "search") => ({ id, type: "function" as const, function: { name, arguments: `{"q":"${id}"}` } });
const output = (i: number, lines = 8) => `result ${i} from src/module-${i}.ts\n` + `line ${i} of the listing, status ok, ${i * 7} rows\n`.repeat(lines);

/** 2,500 groups of four: a question, a tool call, its result, a reply. */
export function longHistory(messages: number) {
  return Array.from({ length: messages / 4 }, (_, i) => [
    { role: "user" as const, content: `Question ${i}: what changed in module ${i}?` },
    { role: "assistant" as const, content: null, tool_calls: [call(`h${i}`)] },
    { role: "tool" as const, tool_call_id: `h${i}`, content: output(i).slice(0, 300) },
    { role: "assistant" as const, content: `Module ${i} changed its parser.` },
  ]).flat();
}

export interface LongConversationFigures {
  messages: number;
  storedTokens: number;
  /** GET /context with the window's budget: round trip and inside the Worker. */
  request: { p50: number; p99: number; serverP50: number; loadedMessages: number; loadedBytes: number };
  /** The same conversation read whole (no budget): what bounded loading avoids. */
  whole: { serverP50: number; bytes: number };
  /** Turns on it once compacted. */
  turn: { p50: number; serverP50: number; tokens: number };
}

export async function benchLongConversation(o: { url: string; appToken: string; client: ContextClient; lastServerMs: () => number }): Promise<LongConversationFigures> {
  const app = new ContextApp({ url: o.url, token: o.appToken, app: { name: "history", version: "1.0.0" } });
  await app.connect();
  const { agentId: agent } = await app.createAgent({ agentId: "long", name: "Long", systemPrompt: "You keep long conversations." });
  const compaction = { contextWindow: 128_000, outputReserve: 4_096 };
  const { id } = await o.client.createConversation({ agent, compaction });
  const messages = longHistory(10_000);
  await o.client.setMessages(id, messages);
  const status = await o.client.compactionStatus(id);

  const time = async (n: number, run: () => Promise<unknown>) => {
    const wall: number[] = [];
    const server: number[] = [];
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      await run();
      wall.push(performance.now() - started);
      server.push(o.lastServerMs());
    }
    return { p50: percentile(wall, 50), p99: percentile(wall, 99), serverP50: percentile(server, 50) };
  };
  const view = await o.client.requestMessages(id);
  const request = await time(50, () => o.client.requestMessages(id));
  const whole = await time(10, () => o.client.requestMessages(id, 2_000_000));
  const wholeView = await o.client.requestMessages(id, 2_000_000);

  let last: TurnResult | null = null;
  await o.client.turn(id, { agent, message: "Where were we?" });
  await o.client.appendMessages(id, [{ role: "assistant", content: "At module 2,499." }]);
  const turns: number[] = [];
  const server: number[] = [];
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    last = await o.client.turn(id, { agent, message: `And module ${i}?` });
    turns.push(performance.now() - started);
    server.push(o.lastServerMs());
    await o.client.appendMessages(id, [{ role: "assistant", content: `Module ${i} is fine.` }]);
  }
  const turn = { p50: percentile(turns, 50), serverP50: percentile(server, 50) };
  await app.close();
  return {
    messages: messages.length,
    storedTokens: status.tokens,
    request: { ...request, loadedMessages: view.messages.length - 1, loadedBytes: JSON.stringify(view.messages).length },
    whole: { serverP50: whole.serverP50, bytes: JSON.stringify(wholeView.messages).length },
    turn: { p50: turn.p50, serverP50: turn.serverP50, tokens: (last as TurnResult | null)?.usage.total ?? 0 },
  };
}

export interface SessionFigures {
  turns: number;
  compactions: number;
  /** Turns whose prompt is the previous prompt plus more, byte for byte. */
  extending: number;
  /** Bytes of all prompts that repeat the previous prompt's bytes from the start (what a prefix cache can reuse). */
  cacheableBytes: number;
  promptBytes: number;
  tokens: number;
}

/** One scripted session: `exchanges` × (question turn, tool result continuation); each result has `resultLines` lines of ~12 tokens. */
export async function benchSession(o: {
  url: string;
  app: string;
  appToken: string;
  client: ContextClient;
  exchanges: number;
  resultLines: number;
  compaction?: { contextWindow: number; outputReserve: number };
}): Promise<SessionFigures> {
  const app = new ContextApp({
    url: o.url,
    token: o.appToken,
    app: { name: o.app, version: "1.0.0" },
    contexts: [{ id: "editor", name: "Editor", description: "the open file", getCurrent: async () => ({ content: "cursor in src/app.ts, line 10", title: "Editor" }) }],
  });
  await app.connect();
  const { agentId: agent } = await app.createAgent({ agentId: "scripted", name: "Scripted", systemPrompt: "You help with code.", attachedContexts: [`${o.app}:editor`] });
  const { id } = await o.client.createConversation({ agent, ...(o.compaction ? { compaction: o.compaction } : {}) });
  const figures: SessionFigures = { turns: 0, compactions: 0, extending: 0, cacheableBytes: 0, promptBytes: 0, tokens: 0 };
  let previous = "";
  const record = (turn: TurnResult) => {
    // The prompt as a provider caches it: the serialised messages, in order.
    const prompt = turn.messages.map((m) => JSON.stringify(m)).join("\n");
    figures.turns++;
    figures.tokens += turn.usage.total;
    figures.promptBytes += prompt.length;
    if (turn.envelope.compaction) figures.compactions++;
    if (previous !== "" && prompt.startsWith(previous)) figures.extending++;
    figures.cacheableBytes += commonPrefix(prompt, previous);
    previous = prompt;
  };
  for (let i = 0; i < o.exchanges; i++) {
    record(await o.client.turn(id, { agent, message: i % 7 === 3 ? `Actually, use "variant ${i}" instead of the default.` : `Step ${i}: look at module ${i}.` }));
    await o.client.appendMessages(id, [{ role: "assistant", content: null, tool_calls: [call(`s${i}`)] }]);
    record(await o.client.turn(id, { agent, toolResults: [{ tool_call_id: `s${i}`, content: output(i, o.resultLines) }] }));
    await o.client.appendMessages(id, [{ role: "assistant", content: `Module ${i} reads the listing and returns ${i * 7} rows.` }]);
  }
  await app.close();
  return figures;
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}
