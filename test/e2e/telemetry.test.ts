/**
 * Spans out, end to end (docs/telemetry.md): a real `wrangler dev` with OTEL_EXPORTER_OTLP_ENDPOINT at a local OTLP/JSON
 * receiver, a gateway request whose model calls the app's tool, and a frontend's turn. The spans arrive after the
 * answers, with the GenAI conventions' names, parents and attributes; and no span carries a secret sent through any
 * channel (the user's message, a context, a tool result, the upstream's answer).
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalRuntime } from "../../scripts/local-runtime";
import { mintToken } from "../../src/http/auth";
import { ContextApp, ContextClient } from "../../src/sdk";
import { SECRET_SAMPLES } from "../fixtures/secret-corpus";
import { startFakeOpenAI, type FakeOpenAI, type ScriptedReply } from "./fake-openai";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "./otlp-receiver";

const SECRET = `e2e-telemetry-${crypto.randomUUID()}`;
let runtime: { url: string; stop: () => Promise<void> };
let fake: FakeOpenAI;
let receiver: OtlpReceiver;
let script: ScriptedReply[] = [];

/** One plain secret of each kind the corpus knows: the values that must not reach a span. */
const SAMPLES = [...new Map(SECRET_SAMPLES.filter((s) => s.shape === "plain").map((s) => [s.kind, s])).values()].slice(0, 12);
const SECRETS = SAMPLES.flatMap((s) => s.secrets.map((x) => x.value));
const CARRIER = SAMPLES.map((s) => s.text).join("\n");

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  fake = await startFakeOpenAI(() => script.shift() ?? { error: { status: 500, message: "the test's script ran out" } });
  runtime = await startLocalRuntime(SECRET, {
    vars: { UPSTREAM_URL: fake.url, UPSTREAM_MODEL: "fake-gpt", UPSTREAM_KEY: "sk-upstream-telemetry", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=collector-secret" },
  });
}, 90_000);
afterAll(async () => {
  await runtime?.stop();
  await fake?.close();
  await receiver?.close();
});

async function waitFor<T>(find: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const found = find();
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`never arrived: ${what}`);
}

describe("OpenTelemetry spans over OTLP/JSON", () => {
  it("exports a gateway request with a tool round as invoke_agent → chat, context.turn → execute_tool, and no secret in any attribute", async () => {
    const tenant = `otel-${crypto.randomUUID().slice(0, 8)}`;
    const app = new ContextApp({
      url: runtime.url,
      token: await mintToken(SECRET, { kind: "app", tenant, sub: "alice", app: "notes" }),
      app: { name: "notes", version: "1.0.0" },
      contexts: [{ id: "editor", name: "Editor", description: "The open note", getCurrent: async () => ({ title: "Editor", content: `Open note:\n${CARRIER}` }) }],
      tools: [{ name: "search", description: "Search the user's notes.", inputSchema: { type: "object", properties: { q: { type: "string" } } }, handler: async () => `found:\n${CARRIER}` }],
    });
    try {
      await app.connect();
      await app.createAgent({ agentId: "assistant", name: "Notes Assistant", systemPrompt: "You are the Notes Assistant.", attachedContexts: ["notes:editor"], tools: ["search"] });
      const apiKey = await mintToken(SECRET, { kind: "frontend", tenant, sub: "alice" });
      const openai = new OpenAI({ apiKey, baseURL: `${runtime.url}/v1`, maxRetries: 0 });
      script = [{ toolCalls: [{ name: "notes__search", arguments: { q: SECRETS[0] } }] }, { text: `Here it is: ${SECRETS[1]}` }];
      const { data, response } = await openai.chat.completions.create({ model: "notes:assistant", messages: [{ role: "user", content: `Find this:\n${CARRIER}` }] }).withResponse();
      expect(data.choices[0]!.finish_reason).toBe("stop");
      const turnIds = response.headers.get("x-turn-ids")!.split(", ");
      expect(turnIds).toHaveLength(2);
      expect(turnIds[0]).toBe(response.headers.get("x-turn-id"));
      const conversation = response.headers.get("x-conversation-id")!;

      const root = await waitFor(() => receiver.spans.find((s) => s.name === "invoke_agent Notes Assistant" && s.attributes["gen_ai.conversation.id"] === conversation && !s.parentSpanId), "the request's invoke_agent span");
      const trace = receiver.spans.filter((s) => s.traceId === root.traceId);
      const children = (parent: ReceivedSpan) => trace.filter((s) => s.parentSpanId === parent.spanId);
      expect(root.attributes).toMatchObject({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.id": "notes:assistant",
        "gen_ai.agent.name": "Notes Assistant",
        "gen_ai.request.model": "fake-gpt",
        "gen_ai.provider.name": "openai",
        "gen_ai.usage.input_tokens": data.usage!.prompt_tokens,
        "gen_ai.usage.output_tokens": data.usage!.completion_tokens,
        "context.gateway.steps": 2,
        "context.turn.ids": turnIds,
        "context.tenant": tenant,
      });

      const chats = children(root).filter((s) => s.name === "chat fake-gpt");
      expect(chats.map((c) => [c.kind, c.attributes["gen_ai.operation.name"], c.attributes["context.gateway.step"], c.attributes["context.turn.id"]])).toEqual([
        [3, "chat", 1, turnIds[0]],
        [3, "chat", 2, turnIds[1]],
      ]);
      expect(chats[0]!.attributes).toMatchObject({ "gen_ai.response.finish_reasons": ["tool_calls"], "gen_ai.conversation.id": conversation, "server.address": new URL(fake.url).host });
      expect(chats[1]!.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"]);
      expect((chats[0]!.attributes["gen_ai.usage.input_tokens"] as number) + (chats[1]!.attributes["gen_ai.usage.input_tokens"] as number)).toBe(data.usage!.prompt_tokens);

      const turns = children(root).filter((s) => s.name === "context.turn");
      expect(turns.map((t) => t.attributes["context.turn.id"])).toEqual(turnIds);
      // The second step's turn ran the model's call: its execute_tool span hangs there, named as the model called it.
      const [tool] = children(turns[1]!).filter((s) => s.name.startsWith("execute_tool"));
      const callId = (fake.requests.at(-1)!.messages[2] as { tool_calls: { id: string }[] }).tool_calls[0]!.id;
      expect(tool!.attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": callId, "gen_ai.tool.type": "function", "context.tool.outcome": "ok" });
      expect(children(turns[0]!).map((s) => s.name)).toContain("context.stage assemble");
      // Times nest: each child inside the request.
      for (const s of trace) expect(s.start >= root.start && s.end <= root.end + 1_000_000n, s.name).toBe(true);

      // Secrets: through the user's message, the context, the tool's result and the model's answer; none in a span.
      const everything = JSON.stringify(receiver.bodies);
      for (const secret of SECRETS) expect(everything.includes(secret), `a span carries ${SAMPLES.find((s) => s.secrets.some((x) => x.value === secret))!.kind}`).toBe(false);
      expect(everything).not.toContain("sk-upstream-telemetry");
      expect(everything).not.toContain("Find this");
      expect(receiver.headers.every((h) => h["x-collector-key"] === "collector-secret")).toBe(true);
    } finally {
      await app.close();
    }
  });

  it("exports a frontend's turn as its own invoke_agent trace, after the answer", async () => {
    const tenant = `otel-${crypto.randomUUID().slice(0, 8)}`;
    const app = new ContextApp({
      url: runtime.url,
      token: await mintToken(SECRET, { kind: "app", tenant, sub: "bob", app: "notes" }),
      app: { name: "notes", version: "1.0.0" },
      contexts: [{ id: "editor", name: "Editor", description: "The open note", getCurrent: async () => ({ title: "Editor", content: CARRIER }) }],
    });
    try {
      await app.connect();
      await app.createAgent({ agentId: "helper", name: "Helper", systemPrompt: "Help.", attachedContexts: ["notes:editor"] });
      const client = new ContextClient({ url: runtime.url, apiKey: await mintToken(SECRET, { kind: "frontend", tenant, sub: "bob" }) });
      const { id } = await client.createConversation({ agent: "notes:helper" });
      const turn = await client.turn(id, { agent: "notes:helper", message: `note ${SECRETS[2]}` });
      const root = await waitFor(() => receiver.spans.find((s) => s.attributes["context.turn.id"] === turn.turnId && !s.parentSpanId), "the turn's invoke_agent span");
      expect(root.name).toBe("invoke_agent Helper");
      expect(root.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.id": "notes:helper", "gen_ai.conversation.id": id, "context.tokens.total": turn.usage.total, "context.selected": 1 });
      const stages = receiver.spans.filter((s) => s.parentSpanId === root.spanId && s.name.startsWith("context.stage "));
      expect(stages.map((s) => s.attributes["context.stage"])).toEqual(turn.envelope.stages!.map((s) => s.stage));
      expect(JSON.stringify(receiver.bodies)).not.toContain(SECRETS[2]!);
    } finally {
      await app.close();
    }
  });
});
