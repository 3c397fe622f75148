/**
 * A tool-heavy session against the local runtime: three steps of three tool
 * calls each, every result ~6,500 tokens of realistic output, appended through
 * turns' `toolResults` (routed, redacted, trimmed). Compares what the model reads
 * at the end with the same history holding the raw results, and times how fast
 * the runtime redacts and trims a 1 MB tool output inside workerd.
 */
import { usageOf } from "../src/core/assemble";
import type { ChatMessage } from "../src/protocol/messages";
import { countTokens } from "../src/core/tokens";
import type { ContextClient } from "../src/sdk";
import { ContextApp } from "../src/sdk";
import { seededRandom } from "../test/fixtures/seeded-random";
import { percentile } from "./stats";

const random = seededRandom(9);
const hex = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join("");

/** ~`tokens` tokens of one of three kinds of tool output: search JSON, logs, or a web page's text. */
export function toolOutput(kind: number, tokens: number): string {
  const parts: string[] = [];
  for (let i = 0; countTokens(parts.join("\n")) < tokens; i++) {
    if (kind === 0) parts.push(JSON.stringify({ rank: i, title: `Cloud market report ${i}`, url: `https://example.com/r/${i}`, snippet: "Spending on public cloud grew 19% as AI workloads scaled across regions." }));
    else if (kind === 1) parts.push(`2026-11-23T10:${String(i % 60).padStart(2, "0")}:00Z INFO req=${hex(8)} GET /v1/items/${i} 200 ${i % 97}ms`);
    else parts.push(`Section ${i}. The provider reported quarterly revenue growth and new regions; analysts expect continued expansion in managed services and AI infrastructure.`);
  }
  return parts.join("\n");
}

export interface ToolSessionFigures {
  results: number;
  rawResultTokens: number;
  rawInputTokens: number;
  protectedInputTokens: number;
  redactMbPerSecond: number;
}

export async function benchToolSession(o: { url: string; appToken: string; client: ContextClient; lastServerMs: () => number }): Promise<ToolSessionFigures> {
  const app = new ContextApp({ url: o.url, token: o.appToken, app: { name: "tools", version: "1.0.0" } });
  await app.connect();
  const { agentId: agent } = await app.createAgent({ agentId: "researcher", name: "Researcher", systemPrompt: "You research cloud markets with tools." });
  const { id } = await o.client.createConversation({ agent });

  const raw: ChatMessage[] = [{ role: "system", content: "You research cloud markets with tools." }];
  const message = "Research the 2026 cloud market and summarise it.";
  const first = await o.client.turn(id, { agent, message });
  raw.push(first.messages.at(-1)!);
  let last = first;
  let rawResultTokens = 0;
  for (let step = 0; step < 3; step++) {
    const calls = [0, 1, 2].map((k) => ({ id: `s${step}c${k}`, type: "function" as const, function: { name: ["search", "logs", "fetch"][k]!, arguments: `{"step":${step}}` } }));
    const assistant = { role: "assistant" as const, content: null, tool_calls: calls };
    await o.client.appendMessages(id, [assistant]);
    const outputs = calls.map((c, k) => ({ tool_call_id: c.id, content: toolOutput(k, 6_500) }));
    rawResultTokens += outputs.reduce((sum, r) => sum + countTokens(r.content), 0);
    raw.push(assistant, ...outputs.map((r): ChatMessage => ({ role: "tool", ...r })));
    last = await o.client.turn(id, { agent, toolResults: outputs });
  }

  // Redaction and trimming inside workerd: the Worker's own time (Server-Timing) for a 1 MB result against a tiny one.
  const timeResult = async (content: string) => {
    const times: number[] = [];
    for (let i = 0; i < 7; i++) {
      const callId = `t${Math.floor(random() * 1e9)}`;
      await o.client.appendMessages(id, [{ role: "assistant", content: null, tool_calls: [{ id: callId, type: "function", function: { name: "logs", arguments: "{}" } }] }]);
      await o.client.turn(id, { agent, toolResults: [{ tool_call_id: callId, content }], budget: { maxTokens: 20_000 } });
      times.push(o.lastServerMs());
    }
    return percentile(times, 50);
  };
  let megabyte = "";
  while (megabyte.length < 1_000_000) megabyte += `${toolOutput(1, 2_000)}\nexport GITHUB_TOKEN=ghp_${hex(36)}\n`;
  megabyte = megabyte.slice(0, 1_000_000);
  const big = await timeResult(megabyte);
  const small = await timeResult("ok");
  await app.close();
  return {
    results: 9,
    rawResultTokens,
    rawInputTokens: usageOf(raw),
    protectedInputTokens: last.usage.total,
    redactMbPerSecond: 1 / ((big - small) / 1000),
  };
}
