/**
 * A small local OpenAI-compatible server for end-to-end tests: `POST /v1/chat/completions`, plain or streamed
 * (`stream: true`: SSE chunks of `choices[0].delta`, tool-call deltas by `index`, a last chunk with `finish_reason`
 * and `usage`, then `data: [DONE]`). It answers from a script, a queue of replies taken one per request (or a
 * function of the request), and records every request body, so a test can assert exactly what the model was sent.
 * Point the official `openai` client (or the runtime) at `url`.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** A tool call the fake model makes; `arguments` as JSON text, or a value to serialise. */
export interface ScriptedCall {
  name: string;
  arguments?: string | Record<string, unknown>;
  /** Defaults to `call_<n>`, counting from 1 over the server's life. */
  id?: string;
}

/** One reply: text, tool calls (with optional text before them), a refusal, or an HTTP error. */
export type ScriptedReply =
  | { text: string }
  | { toolCalls: ScriptedCall[]; text?: string }
  | { refusal: string }
  | { error: { status: number; message: string; type?: string } };

/** The parts of a chat-completions request body the fake reads; the whole body is recorded as sent. */
export interface ChatRequest {
  model: string;
  messages: unknown[];
  stream?: boolean;
  tools?: unknown[];
  [key: string]: unknown;
}

export type Script = ScriptedReply[] | ((request: ChatRequest, index: number) => ScriptedReply);

export interface FakeOpenAI {
  /** The base URL to give a client, ending in `/v1`. */
  url: string;
  /** Every request body received, in order (including ones answered with an error). */
  requests: ChatRequest[];
  /** The headers of each request, in the same order (e.g. to check `authorization`). */
  headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/** `port`: where to listen on 127.0.0.1 (default: a free port). */
export async function startFakeOpenAI(script: Script, options: { port?: number } = {}): Promise<FakeOpenAI> {
  const queue = Array.isArray(script) ? [...script] : null;
  const requests: ChatRequest[] = [];
  const headers: IncomingHttpHeaders[] = [];
  let calls = 0;
  let completions = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "Content-Type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.method !== "POST" || req.url?.split("?")[0] !== "/v1/chat/completions") {
        return json(404, { error: { message: `no route ${req.method} ${req.url}`, type: "invalid_request_error" } });
      }
      let body: ChatRequest;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequest;
      } catch {
        return json(400, { error: { message: "the body is not JSON", type: "invalid_request_error" } });
      }
      const index = requests.length;
      requests.push(body);
      headers.push(req.headers);
      const reply = queue ? queue.shift() : (script as Exclude<Script, ScriptedReply[]>)(body, index);
      if (!reply) return json(500, { error: { message: `the fake model's script has no reply for request ${index + 1}`, type: "server_error" } });
      if ("error" in reply) return json(reply.error.status, { error: { message: reply.error.message, type: reply.error.type ?? "invalid_request_error" } });

      const id = `chatcmpl-fake-${++completions}`;
      const created = Math.floor(Date.now() / 1000);
      const model = body.model;
      const toolCalls =
        "toolCalls" in reply
          ? reply.toolCalls.map((c) => ({
              id: c.id ?? `call_${++calls}`,
              type: "function" as const,
              function: { name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments ?? {}) },
            }))
          : [];
      const content = "text" in reply ? (reply.text ?? null) : null;
      const refusal = "refusal" in reply ? reply.refusal : null;
      const finish_reason = toolCalls.length ? "tool_calls" : "stop";
      const completionText = (content ?? "") + (refusal ?? "") + toolCalls.map((c) => c.function.name + c.function.arguments).join("");
      const usage = {
        prompt_tokens: Math.ceil(JSON.stringify(body.messages ?? []).length / 4),
        completion_tokens: Math.ceil(completionText.length / 4),
        total_tokens: 0,
      };
      usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;

      if (!body.stream) {
        const message = { role: "assistant", content, refusal, annotations: [], ...(toolCalls.length ? { tool_calls: toolCalls } : {}) };
        return json(200, { id, object: "chat.completion", created, model, choices: [{ index: 0, message, logprobs: null, finish_reason }], usage });
      }

      res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" });
      const send = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
        res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }], ...extra })}\n\n`);
      send({ role: "assistant", content: "", refusal: null });
      for (const piece of pieces(content ?? "")) send({ content: piece });
      for (const piece of pieces(refusal ?? "")) send({ refusal: piece });
      for (const [i, call] of toolCalls.entries()) {
        send({ tool_calls: [{ index: i, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] });
        for (const piece of pieces(call.function.arguments)) send({ tool_calls: [{ index: i, function: { arguments: piece } }] });
      }
      res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason }], usage })}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    headers,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** Text cut into a few deltas, as a model streams it (at least one piece for non-empty text). */
function pieces(text: string, size = 7): string[] {
  const chars = Array.from(text); // by code point: a delta never splits a surrogate pair
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}
