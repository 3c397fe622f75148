/**
 * Hooks in gateway mode, end to end: a real `wrangler dev` whose upstream (UPSTREAM_URL) is the local fake model of
 * test/e2e/fake-openai.ts, an app on a real socket registering hooks through the SDK (`ContextApp({ hooks })`), and
 * the official `openai` client at `POST /v1/chat/completions`. The fake records every upstream request, so each test
 * asserts what the model was actually sent (docs/hooks.md: `input`, `tool.before` and `output` in the gateway).
 *
 * This file starts its own `wrangler dev` (the shared one has no upstream configured).
 */
import OpenAI, { APIError, UnprocessableEntityError } from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startLocalRuntime } from "../../scripts/local-runtime";
import { mintToken } from "../../src/http/auth";
import { ContextApp, ContextClient, type AppHook, type AppTool } from "../../src/sdk";
import { startFakeOpenAI, type ChatRequest, type FakeOpenAI, type ScriptedReply } from "./fake-openai";

const SECRET = `e2e-hooks-gateway-${crypto.randomUUID()}`;
let runtime: { url: string; stop: () => Promise<void> };
let fake: FakeOpenAI;
/** The replies the fake model gives, one per request, set by each test. */
let script: ScriptedReply[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAI(() => script.shift() ?? { error: { status: 500, message: "the test's script ran out", type: "server_error" } });
  runtime = await startLocalRuntime(SECRET, { vars: { UPSTREAM_URL: fake.url, UPSTREAM_MODEL: "fake-gpt", UPSTREAM_KEY: "sk-upstream-e2e" } });
}, 90_000);
afterAll(async () => {
  await runtime?.stop();
  await fake?.close();
});

const apps: ContextApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
  script = [];
});

const MODEL = "notes:assistant";

async function connect(tenant: string, name: string, options: { tools?: AppTool[]; hooks?: AppHook[] }): Promise<ContextApp> {
  const app = new ContextApp({ url: runtime.url, token: await mintToken(SECRET, { kind: "app", tenant, sub: "alice", app: name }), app: { name, version: "1.0.0" }, ...options });
  apps.push(app);
  await app.connect();
  return app;
}

/**
 * A fresh tenant: the `notes` app with its `assistant` agent (and `tools`, if any), and a separate `guardian` app whose
 * `hooks` stand for `notes:*` agents; the `openai` client pointed at the runtime, a ContextClient, and the upstream
 * requests made from here on.
 */
async function setup({ hooks, tools = [] }: { hooks: AppHook[]; tools?: AppTool[] }) {
  const tenant = `hg-${crypto.randomUUID().slice(0, 8)}`;
  const notes = await connect(tenant, "notes", { tools });
  await notes.createAgent({ agentId: "assistant", name: "Notes Assistant", systemPrompt: "You are the Notes Assistant.", tools: tools.map((t) => t.name) });
  await connect(tenant, "guardian", { hooks: hooks.map((h) => ({ agents: ["notes:*"], ...h }) as AppHook) });
  const apiKey = await mintToken(SECRET, { kind: "frontend", tenant, sub: "alice" });
  const openai = (conversation?: string) => new OpenAI({ apiKey, baseURL: `${runtime.url}/v1`, maxRetries: 0, ...(conversation ? { defaultHeaders: { "X-Conversation-Id": conversation } } : {}) });
  const client = new ContextClient({ url: runtime.url, apiKey });
  const from = fake.requests.length;
  return { openai, client, sent: (): ChatRequest[] => fake.requests.slice(from) };
}

/** A message's text content (string content only: the gateway sends the upstream strings). */
const text = (m: unknown): string => {
  const content = (m as { content?: unknown } | undefined)?.content;
  return typeof content === "string" ? content : JSON.stringify(content);
};
/** The user's words in an upstream user message, before the runtime's reminder appendix (if any). */
const words = (m: unknown): string => text(m).split("\n\n<system_reminder")[0]!;

/** The stored messages of a conversation, as [role, text before any appendix]. */
async function stored(client: ContextClient, conversation: string): Promise<[string, string][]> {
  const { messages } = await client.messages(conversation);
  return messages.map((m) => [m.message.role, words(m.message)]);
}

/** The caller's newest conversation, for a streamed answer whose headers the stream helper keeps to itself. */
async function latestConversation(openai: (c?: string) => OpenAI): Promise<string> {
  const page = (await openai().get("/conversations")) as { conversations: { id: string }[] };
  return page.conversations[0]!.id;
}

describe("input hooks in the gateway", () => {
  it("a rewrite is what the upstream model reads as the user's message, and what history stores", async () => {
    const seen: string[] = [];
    const { openai, client, sent } = await setup({
      hooks: [
        {
          name: "swap",
          point: "input",
          handler: ({ message }) => {
            seen.push(message);
            return { action: "rewrite", message: message.replace("cats", "dogs") };
          },
        },
      ],
    });
    script = [{ text: "Dogs are loyal." }];
    const { data, response } = await openai().chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "Tell me about cats" }] }).withResponse();
    const conversation = response.headers.get("x-conversation-id")!;

    expect(data.choices[0]!.message.content).toBe("Dogs are loyal.");
    expect(seen).toEqual(["Tell me about cats"]);
    const requests = sent();
    expect(requests).toHaveLength(1);
    const last = requests[0]!.messages.at(-1);
    expect((last as { role: string }).role).toBe("user");
    expect(words(last)).toBe("Tell me about dogs");
    expect(JSON.stringify(requests[0]!.messages)).not.toContain("cats");
    expect(await stored(client, conversation)).toEqual([
      ["user", "Tell me about dogs"],
      ["assistant", "Dogs are loyal."],
    ]);
  });

  it("a refusal is a 422 APIError with the hook's reason, the model is never asked, and nothing is stored", async () => {
    const { openai, client, sent } = await setup({
      hooks: [{ name: "calm", point: "input", handler: ({ message }) => (message.includes("!!!") ? { action: "refuse", reason: "no shouting, please" } : undefined) }],
    });
    const error = await openai()
      .chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "DO IT NOW!!!" }] })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    const api = error as APIError;
    expect(api.status).toBe(422);
    expect(api.code).toBe("not-accepted");
    expect(api.param).toBe("message");
    expect(api.message).toBe("422 hook 'guardian:calm' refused the message: no shouting, please (message: no shouting, please)");
    expect(sent()).toEqual([]);

    // The refused request left nothing behind: no conversation named, none listed.
    expect(api.headers?.get("x-conversation-id")).toBeNull();
    expect(((await openai().get("/conversations")) as { conversations: unknown[] }).conversations).toEqual([]);

    // A calm message goes through, in the only conversation, and is the only message stored.
    script = [{ text: "On it." }];
    const { data: ok, response } = await openai().chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "Please do it." }] }).withResponse();
    const conversation = response.headers.get("x-conversation-id");
    expect(ok.choices[0]!.message.content).toBe("On it.");
    expect(sent()).toHaveLength(1);
    expect(await stored(client, conversation!)).toEqual([
      ["user", "Please do it."],
      ["assistant", "On it."],
    ]);
  });
});

describe("tool.before hooks in the gateway", () => {
  it("a denied call of an app's tool never runs, and the next upstream request carries the denial with its reason", async () => {
    const ran: unknown[] = [];
    const payloads: unknown[] = [];
    const { openai, client, sent } = await setup({
      tools: [
        {
          name: "delete",
          description: "Delete a file.",
          inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
          handler: async (args) => {
            ran.push(args);
            return `deleted ${String(args.path)}`;
          },
        },
      ],
      hooks: [
        {
          name: "safety",
          point: "tool.before",
          tools: ["notes:*"],
          handler: (payload) => {
            payloads.push(payload);
            return String((payload.call.arguments as { path?: unknown }).path).startsWith("/etc/") ? { action: "deny", reason: "system files are off limits" } : undefined;
          },
        },
      ],
    });
    script = [{ toolCalls: [{ id: "call_etc", name: "notes__delete", arguments: { path: "/etc/passwd" } }] }, { text: "I may not delete that file." }];
    const { data, response } = await openai().chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "Delete /etc/passwd" }] }).withResponse();
    const conversation = response.headers.get("x-conversation-id")!;

    expect(data.choices[0]!.message.content).toBe("I may not delete that file.");
    expect(data.choices[0]!.finish_reason).toBe("stop");
    expect(ran).toEqual([]);
    expect(payloads).toEqual([{ request: "Delete /etc/passwd", call: { id: "call_etc", tool: "notes:delete", arguments: { path: "/etc/passwd" } } }]);
    const requests = sent();
    expect(requests).toHaveLength(2);
    expect(requests[1]!.messages.slice(0, requests[0]!.messages.length)).toEqual(requests[0]!.messages);
    expect(requests[1]!.messages.slice(requests[0]!.messages.length)).toEqual([
      { role: "assistant", content: null, tool_calls: [{ id: "call_etc", type: "function", function: { name: "notes__delete", arguments: JSON.stringify({ path: "/etc/passwd" }) } }] },
      { role: "tool", tool_call_id: "call_etc", content: "[not run: a hook denied this tool call] Its reason: system files are off limits" },
    ]);
    expect((await stored(client, conversation)).map(([role]) => role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });
});

describe("output hooks in the gateway", () => {
  const REJECTED = "Your returns are guaranteed.";
  const ACCEPTED = "Past returns do not predict future ones.";
  const NOTE = "do not promise returns";
  /** The regeneration's note as the model reads it, its nonce taken out. */
  const REMINDER = `<system_reminder kind="output_rejected">\nYour previous answer was not accepted (guardian:prudent): ${NOTE}\nAnswer again, taking this into account.\n</system_reminder>`;
  const noNonce = (s: string) => s.replace(/ nonce="[a-z0-9]{12}"/g, "");

  function prudent(attempts: { attempt: number; content: string | null }[]): AppHook {
    return {
      name: "prudent",
      point: "output",
      handler: ({ answer, attempt }) => {
        attempts.push({ attempt, content: answer.content });
        return answer.content?.includes("guaranteed") ? { action: "reject", note: NOTE } : undefined;
      },
    };
  }

  for (const stream of [false, true]) {
    it(`a rejected answer is asked again with the answer and the note; the client gets only the second${stream ? " (streamed)" : ""}`, async () => {
      const attempts: { attempt: number; content: string | null }[] = [];
      const { openai, client, sent } = await setup({ hooks: [prudent(attempts)] });
      script = [{ text: REJECTED }, { text: ACCEPTED }];
      const params = { model: MODEL, messages: [{ role: "user" as const, content: "Will my fund grow?" }] };
      let answer: string | null;
      let conversation: string;
      if (stream) {
        const runner = openai().chat.completions.stream(params);
        let streamed = "";
        for await (const chunk of runner) streamed += chunk.choices[0]?.delta.content ?? "";
        const done = await runner.finalChatCompletion();
        expect(streamed).toBe(ACCEPTED);
        answer = done.choices[0]!.message.content;
        expect(done.choices[0]!.finish_reason).toBe("stop");
        conversation = await latestConversation(openai);
      } else {
        const { data, response } = await openai().chat.completions.create(params).withResponse();
        answer = data.choices[0]!.message.content;
        expect(data.choices[0]!.finish_reason).toBe("stop");
        conversation = response.headers.get("x-conversation-id")!;
        // Both attempts were paid for: the usage adds them up (the fake counts prompt tokens as JSON length / 4).
        expect(data.usage!.prompt_tokens).toBe(sent().reduce((n, r) => n + Math.ceil(JSON.stringify(r.messages).length / 4), 0));
      }
      expect(answer).toBe(ACCEPTED);
      expect(attempts).toEqual([
        { attempt: 0, content: REJECTED },
        { attempt: 1, content: ACCEPTED },
      ]);

      const [first, second, ...more] = sent();
      expect(more).toEqual([]);
      expect(first!.stream ?? false).toBe(stream);
      expect(second!.stream ?? false).toBe(stream);
      const n = first!.messages.length;
      expect(second!.messages.slice(0, n)).toEqual(first!.messages);
      const tail = second!.messages.slice(n);
      expect(tail).toHaveLength(2);
      expect(tail[0]).toEqual({ role: "assistant", content: REJECTED });
      expect((tail[1] as { role: string }).role).toBe("user");
      expect(text(tail[1])).toMatch(/^<system_reminder kind="output_rejected" nonce="[a-z0-9]{12}">\n/);
      expect(noNonce(text(tail[1]))).toBe(REMINDER);

      // Neither the rejected answer nor the note is stored.
      expect(await stored(client, conversation)).toEqual([
        ["user", "Will my fund grow?"],
        ["assistant", ACCEPTED],
      ]);
    });
  }

  it("still rejected after 2 regenerations: 422 output_rejected, 3 upstream calls, no answer stored", async () => {
    const attempts: { attempt: number; content: string | null }[] = [];
    const { openai, client, sent } = await setup({ hooks: [prudent(attempts)] });
    script = [{ text: REJECTED }, { text: "Returns: guaranteed!" }, { text: "I guaranteed it." }, { text: ACCEPTED }];
    const error = await openai()
      .chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "Will my fund grow?" }] })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(APIError);
    const api = error as APIError;
    expect(api.status).toBe(422);
    expect(api.code).toBe("output_rejected");
    expect(api.message).toBe(`422 the model's answer was rejected by hook 'guardian:prudent' 3 times: ${NOTE}`);
    expect(attempts.map((a) => a.attempt)).toEqual([0, 1, 2]);
    expect(sent()).toHaveLength(3);
    expect(script).toEqual([{ text: ACCEPTED }]);
    const conversation = api.headers?.get("x-conversation-id");
    expect(conversation).toEqual(expect.any(String));
    // The turn's user message stays (a retry continues it); none of the rejected answers is stored.
    expect(await stored(client, conversation!)).toEqual([["user", "Will my fund grow?"]]);
  });
});
