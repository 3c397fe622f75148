/**
 * `npm run example:gateway`: the model gateway on one machine, with no network and no account.
 *
 * Starts a small local fake model (test/e2e/fake-openai.ts: an OpenAI-compatible `/v1/chat/completions`, plain and
 * streamed, on 127.0.0.1), its own runtime (`wrangler dev`) with the gateway pointed at it (UPSTREAM_URL,
 * UPSTREAM_MODEL, UPSTREAM_KEY), and the notes example app (examples/notes-app.ts: its contexts and its `search`
 * tool). Then the official `openai` client, unmodified, with `baseURL` at the runtime and `model: "notes:assistant"`,
 * plays three turns of a chat UI (each request resends the whole history) and prints, for each, what the client
 * sent, what the fake model received (the runtime's assembled input) and the answer the client got.
 *
 * The fake model follows three rules (examples/fake-model.ts).
 * A real upstream changes only UPSTREAM_URL, UPSTREAM_MODEL and the secret UPSTREAM_KEY (docs/gateway.md).
 */
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { startLocalRuntime } from "../scripts/local-runtime";
import { mintToken } from "../src/http/auth";
import { startFakeOpenAI } from "../test/e2e/fake-openai";
import { fakeModel, text, type Message } from "./fake-model";
import { createNotesApp } from "./notes-app";

const indent = (s: string, mark = "  │ ") => s.replace(/^/gm, mark);
const short = (s: string, max = 100) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);
function show(m: Message): string {
  if (m.tool_calls?.length) return `${m.role}: ${m.tool_calls.map((c) => `→ ${c.function.name} ${c.function.arguments} (${c.id})`).join(", ")}`;
  if (m.role === "tool") return `tool (${m.tool_call_id}): ${text(m.content)}`;
  return `${m.role}: ${short(JSON.stringify(text(m.content)))}`;
}

const fake = await startFakeOpenAI(fakeModel);
console.log(`fake model (OpenAI-compatible) at ${fake.url}`);
const secret = `example-${crypto.randomUUID()}`;
console.log("starting the runtime (wrangler dev) with UPSTREAM_URL at the fake model…");
const starting = startLocalRuntime(secret, { vars: { UPSTREAM_URL: fake.url, UPSTREAM_MODEL: "fake-gpt", UPSTREAM_KEY: "sk-fake" } });
let notes: ReturnType<typeof createNotesApp> | undefined;
let stopped: Promise<void> | undefined;
/** Stops everything, once: the app, the runtime (when it has started) and the fake model. */
const stopAll = () =>
  (stopped ??= (async () => {
    await notes?.app.close();
    await starting.then((r) => r.stop(), () => {});
    await fake.close();
  })());
// wrangler runs in its own process group, so Ctrl-C does not reach it: stop it here, even mid-start.
process.once("SIGINT", () => {
  console.log("\nstopping…");
  void stopAll().finally(() => process.exit(130));
});
const runtime = await starting;

try {
  const app = (notes = createNotesApp({ url: runtime.url, token: await mintToken(secret, { kind: "app", tenant: "local", sub: "dev", app: "notes" }) }));
  const agent = await app.start();
  const apiKey = await mintToken(secret, { kind: "frontend", tenant: "local", sub: "dev" });
  console.log(`runtime at ${runtime.url}; the notes app is connected, agent ${agent}`);

  const history: ChatCompletionMessageParam[] = [];
  let conversation: string | null = null;

  async function ask(title: string, message: string, stream: boolean) {
    const openai = new OpenAI({ baseURL: `${runtime.url}/v1`, apiKey, maxRetries: 0, ...(conversation ? { defaultHeaders: { "X-Conversation-Id": conversation } } : {}) });
    history.push({ role: "user", content: message });
    const [upstreamBefore, toolsBefore] = [fake.requests.length, app.toolCalls.length];
    console.log(`\n━━ ${title} ━━`);
    console.log(`client sent: model "${agent}", ${stream ? "stream: true, " : ""}${history.length} message${history.length > 1 ? "s" : ""}${conversation ? `, X-Conversation-Id ${conversation.slice(0, 8)}…` : ""}`);
    for (const m of history) console.log(`  ${show(m as Message)}`);

    let answer = "";
    let chunks = 0;
    let response: Response;
    if (stream) {
      const result = await openai.chat.completions.create({ model: agent, messages: history, stream: true }).withResponse();
      response = result.response;
      for await (const chunk of result.data) {
        chunks++;
        answer += chunk.choices[0]?.delta?.content ?? "";
      }
    } else {
      const result = await openai.chat.completions.create({ model: agent, messages: history }).withResponse();
      response = result.response;
      answer = result.data.choices[0]?.message.content ?? "";
    }
    conversation ??= response.headers.get("x-conversation-id");

    for (const [i, sent] of fake.requests.slice(upstreamBefore).entries()) {
      const messages = sent.messages as Message[];
      const tools = (sent.tools ?? []).map((t) => (t as { function: { name: string } }).function.name);
      console.log(`fake model received (upstream call ${i + 1}${sent.stream ? ", streamed" : ""}): model "${sent.model}", ${messages.length} messages, tools ${tools.join(", ") || "none"}`);
      const last = messages.at(-1)!;
      if (last.role === "tool") {
        for (const m of messages.slice(-2)) console.log(`  ${show(m)}`);
      } else {
        console.log(`  ${messages[0]!.role}: ${JSON.stringify(text(messages[0]!.content).split("\n")[0])} …`);
        console.log(`  last ${last.role} message:`);
        console.log(indent(text(last.content)));
        if (!text(last.content).includes("<system_reminder")) console.log("  (no <system_reminder>: nothing changed, so no context is injected again)");
      }
    }
    for (const c of app.toolCalls.slice(toolsBefore)) console.log(`the runtime ran the tool on the app: ${c.tool} ${JSON.stringify(c.args)} (${c.toolCallId})`);
    const steps = response.headers.get("x-gateway-steps");
    console.log(`client got${stream ? ` (streamed, ${chunks} chunks)` : ""}${steps ? ` (X-Gateway-Steps ${steps})` : ""}:`);
    console.log(indent(answer, "  « "));
    history.push({ role: "assistant", content: answer });
  }

  await ask("1. plain: the contexts are injected", "What am I working on?", false);
  await ask("2. plain: the model calls notes__search, the runtime runs it on the app", "Which of my notes mention latency?", false);
  app.editor.open("groceries");
  await ask("3. streamed: the user opened another note", "And now?", true);
  const keys = [...new Set(fake.headers.map((h) => h.authorization))];
  console.log(`\nthe fake model got ${fake.requests.length} calls, with Authorization: ${keys.join(" / ")} (the runtime's UPSTREAM_KEY, not the client's key)`);
} finally {
  await stopAll();
}
