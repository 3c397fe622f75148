/**
 * The model gateway's defects of issue 20, on both routes, streamed and not: a request whose new part is empty, a
 * refused request that must leave nothing behind, an empty user message after the full history, and a client that can
 * only set a base URL and key (no `X-Conversation-Id`) holding its conversation by resending its history.
 */
import { describe, expect, it } from "vitest";
import { LIMITS } from "../../src/protocol/limits";
import type { StoredMessage } from "../../src/protocol/frontend";
import { installFakeUpstream, upstream } from "./support/gateway-fake-upstream";
import { apiKey, BASE, freshIdentity, Frontend, withoutNonce, worker } from "./support/runtime";
import { ToolApp } from "./support/tool-app";

installFakeUpstream();

type Message = Record<string, unknown>;

/** One wire format, as its clients speak it: their messages, how they resend an answer, how they read an error. */
interface Dialect {
  name: string;
  path: string;
  body(messages: Message[], stream: boolean, tools?: boolean): Record<string, unknown>;
  user(content: string): Message;
  userParts(text: string, imageUrls: string[]): Message;
  toolResult(callId: string, text: string): Message;
  /** A request whose new part is empty, as each API lets a client send one. */
  empty: Message[];
  /** The answer as the client resends it, read from the response (streamed: put together from its events). */
  held(res: Response, stream: boolean): Promise<{ message: Message; toolCallIds: string[] }>;
  error(res: Response): Promise<{ code: string | undefined; message: string }>;
}

const CLIENT_TOOL = { name: "open_in_browser", description: "Open a URL in the user's browser.", parameters: { type: "object", properties: { url: { type: "string" } } } };

/** The `data:` payloads of an SSE body, comments and keep-alives left out. */
async function sseData(res: Response): Promise<unknown[]> {
  const text = await res.text();
  return text
    .split("\n\n")
    .flatMap((e) => e.split("\n").filter((l) => l.startsWith("data: ")))
    .map((l) => l.slice(6))
    .filter((d) => d !== "[DONE]")
    .map((d) => JSON.parse(d) as unknown);
}

const openai: Dialect = {
  name: "/v1/chat/completions",
  path: "/v1/chat/completions",
  body: (messages, stream, tools) => ({ model: "notes:assistant", messages, ...(stream ? { stream: true } : {}), ...(tools ? { tools: [{ type: "function", function: CLIENT_TOOL }] } : {}) }),
  user: (content) => ({ role: "user", content }),
  userParts: (text, urls) => ({ role: "user", content: [{ type: "text", text }, ...urls.map((url) => ({ type: "image_url", image_url: { url } }))] }),
  toolResult: (callId, text) => ({ role: "tool", tool_call_id: callId, content: text }),
  empty: [{ role: "system", content: "sys" }],
  async held(res, stream) {
    expect(res.status).toBe(200);
    if (!stream) {
      const message = ((await res.json()) as { choices: { message: Message & { tool_calls?: { id: string }[] } }[] }).choices[0]!.message;
      return { message, toolCallIds: (message.tool_calls ?? []).map((c) => c.id) };
    }
    let content: string | null = null;
    const calls: { id: string; type: string; function: { name: string; arguments: string } }[] = [];
    for (const chunk of (await sseData(res)) as { choices: { delta: { content?: string; tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[] } }[] }[]) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) content = (content ?? "") + delta.content;
      for (const d of delta?.tool_calls ?? []) {
        const call = (calls[d.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
        call.id += d.id ?? "";
        call.function.name += d.function?.name ?? "";
        call.function.arguments += d.function?.arguments ?? "";
      }
    }
    return { message: { role: "assistant", content, refusal: null, ...(calls.length ? { tool_calls: calls } : {}) }, toolCallIds: calls.map((c) => c.id) };
  },
  async error(res) {
    const body = (await res.json()) as { error: { code: string | null; message: string; type: string } };
    expect(body.error.type).toBe("invalid_request_error");
    return { code: body.error.code ?? undefined, message: body.error.message };
  },
};

const anthropic: Dialect = {
  name: "/v1/messages",
  path: "/v1/messages",
  body: (messages, stream, tools) => ({
    model: "notes:assistant",
    max_tokens: 1024,
    messages,
    ...(stream ? { stream: true } : {}),
    ...(tools ? { tools: [{ name: CLIENT_TOOL.name, description: CLIENT_TOOL.description, input_schema: CLIENT_TOOL.parameters }] } : {}),
  }),
  user: (content) => ({ role: "user", content }),
  userParts: (text, urls) => ({ role: "user", content: [{ type: "text", text }, ...urls.map((url) => ({ type: "image", source: { type: "url", url } }))] }),
  toolResult: (callId, text) => ({ role: "user", content: [{ type: "tool_result", tool_use_id: callId, content: text }] }),
  empty: [{ role: "user", content: [] }],
  async held(res, stream) {
    expect(res.status).toBe(200);
    let content: ({ type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: unknown })[];
    if (!stream) {
      content = ((await res.json()) as { content: typeof content }).content;
    } else {
      content = [];
      const json: Record<number, string> = {};
      for (const e of (await sseData(res)) as { type: string; index: number; content_block?: (typeof content)[number]; delta?: { type: string; text?: string; partial_json?: string } }[]) {
        if (e.type === "content_block_start") content[e.index] = { ...e.content_block! };
        if (e.type === "content_block_delta" && e.delta?.type === "text_delta") (content[e.index] as { text: string }).text += e.delta.text;
        if (e.type === "content_block_delta" && e.delta?.type === "input_json_delta") json[e.index] = (json[e.index] ?? "") + e.delta.partial_json;
      }
      for (const [i, j] of Object.entries(json)) (content[Number(i)] as { input: unknown }).input = JSON.parse(j);
    }
    return { message: { role: "assistant", content }, toolCallIds: content.flatMap((b) => (b.type === "tool_use" ? [b.id] : [])) };
  },
  async error(res) {
    const body = (await res.json()) as { type: string; error: { type: string; message: string; details?: { error_code?: string } } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("invalid_request_error");
    return { code: body.error.details?.error_code, message: body.error.message };
  },
};

async function setup(dialect: Dialect) {
  const id = freshIdentity();
  const app = await ToolApp.connect(
    id,
    "notes",
    {
      tools: [{ name: "lookup", description: "Look a word up in the user's notes.", inputSchema: { type: "object", properties: { q: { type: "string" } } } }],
      agents: [{ agentId: "assistant", name: "Notes Assistant", systemPrompt: "You are the Notes Assistant.", tools: ["lookup"] }],
    },
    (_params, _id, method) => (method === "tools/call" ? { result: { content: [{ type: "text", text: "buy lemons" }] } } : { result: {} }),
  );
  const frontend = await Frontend.for(id);
  const key = await apiKey(id);
  /** As a client that sets only a base URL and a key sends it: no X-Conversation-Id unless one is given. */
  const send = (messages: Message[], options: { stream?: boolean; conversation?: string; tools?: boolean } = {}) =>
    worker().fetch(`${BASE}${dialect.path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}`, ...(options.conversation ? { "X-Conversation-Id": options.conversation } : {}) },
      body: JSON.stringify(dialect.body(messages, options.stream === true, options.tools)),
    });
  const conversations = async () => (await frontend.json<{ conversations: { id: string }[] }>("GET", "/v1/conversations")).conversations.map((c) => c.id);
  const stored = async (conversation: string) =>
    (await frontend.json<{ messages: StoredMessage[] }>("GET", `/v1/conversations/${conversation}/messages`)).messages.map((m) => [
      m.message.role,
      withoutNonce(String(m.message.content ?? "")).split("\n")[0],
    ]);
  return { app, send, conversations, stored };
}

/** A refused request: its status, the API's error shape, and no conversation named. */
async function refused(dialect: Dialect, res: Response, status: number): Promise<{ code: string | undefined; message: string }> {
  expect(res.status).toBe(status);
  expect(res.headers.get("Content-Type")).toBe("application/json");
  expect(res.headers.get("X-Conversation-Id")).toBeNull();
  return dialect.error(res);
}

for (const dialect of [openai, anthropic]) {
  for (const stream of [false, true]) {
    describe(`${dialect.name}${stream ? ", streamed" : ""}`, () => {
      it("a request whose new part is empty is a 400 in the API's shape, with X-Conversation-Id or without: nothing stored, no upstream call", async () => {
        const { send, conversations, stored } = await setup(dialect);
        const alone = await refused(dialect, await send(dialect.empty, { stream }), 400);
        expect(alone.code).toBe("nothing_new");
        expect(await conversations()).toEqual([]);

        upstream.script = [{ text: "Hello." }];
        const first = await send([dialect.user("hi")], { stream });
        const conversation = first.headers.get("X-Conversation-Id")!;
        await dialect.held(first, stream);
        const named = await send(dialect.empty, { stream, conversation });
        expect(named.status).toBe(400);
        expect((await dialect.error(named)).code).toBe("nothing_new");
        expect(await stored(conversation)).toEqual([
          ["user", "hi"],
          ["assistant", "Hello."],
        ]);
        expect(upstream.requests).toHaveLength(1);
        expect(await conversations()).toEqual([conversation]);
      });

      it("a refused request without X-Conversation-Id leaves nothing behind: no conversation, no message, no upstream call", async () => {
        const { send, conversations } = await setup(dialect);
        const cases: [string, Message[], number][] = [
          ["an http image", [dialect.userParts("what is this?", ["http://images.example/cat.png"])], 400],
          ["too many images", [dialect.userParts("what are these?", Array.from({ length: LIMITS.imagesPerMessage + 1 }, (_, i) => `https://images.example/${i}.png`))], 400],
          ["an oversized message", [dialect.user("x".repeat(LIMITS.messageChars + 1))], 400],
          ["an empty message", [dialect.user("")], 400],
          ["a message of white space", [dialect.user("  \n ")], 400],
          ["a result for no open call", [dialect.toolResult("call_nobody_made", "42")], 400],
        ];
        for (const [what, messages, status] of cases) {
          const error = await refused(dialect, await send(messages, { stream }), status);
          expect(error.message, what).toBeTruthy();
        }
        expect(await conversations()).toEqual([]);
        expect(upstream.requests).toHaveLength(0);
      });

      it("an empty user message after the whole history is 400 nothing_new: the upstream is not called again, no second answer stored", async () => {
        const { send, stored } = await setup(dialect);
        upstream.script = [{ text: "Hello." }, { text: "A second answer nobody asked for." }];
        const first = await send([dialect.user("hi")], { stream });
        const conversation = first.headers.get("X-Conversation-Id")!;
        const { message: a1 } = await dialect.held(first, stream);
        for (const empty of ["", "   "]) {
          for (const named of [conversation, undefined]) {
            const res = await send([dialect.user("hi"), a1, dialect.user(empty)], { stream, ...(named ? { conversation: named } : {}) });
            expect(res.status).toBe(400);
            // Found by its history or named, the conversation is said: nothing was added to it.
            expect(res.headers.get("X-Conversation-Id")).toBe(conversation);
            const error = await dialect.error(res);
            expect(error.code).toBe("nothing_new");
            expect(error.message).toMatch(/empty/);
          }
        }
        expect(upstream.requests).toHaveLength(1);
        expect(await stored(conversation)).toEqual([
          ["user", "hi"],
          ["assistant", "Hello."],
        ]);
      });

      it("without X-Conversation-Id, a client resending its whole history continues its conversation, a tool step included: one conversation, nothing stored twice", async () => {
        const { send, conversations, stored } = await setup(dialect);
        upstream.script = [
          { text: "Hello." },
          { toolCalls: [{ name: "open_in_browser", arguments: { url: "https://example.com" } }] },
          { text: "Opened it." },
          { text: "You are welcome." },
        ];
        const history: Message[] = [dialect.user("hi")];
        const ids = new Set<string>();
        const take = async (tools = false) => {
          const res = await send(history, { stream, tools });
          const id = res.headers.get("X-Conversation-Id");
          expect(id).toBeTruthy();
          expect(res.headers.get("X-Conversation-Also-Matched")).toBeNull();
          ids.add(id!);
          const held = await dialect.held(res, stream);
          history.push(held.message);
          return held;
        };
        await take();
        history.push(dialect.user("open example.com"));
        const { toolCallIds } = await take(true);
        expect(toolCallIds).toHaveLength(1);
        history.push(dialect.toolResult(toolCallIds[0]!, "opened"));
        await take(true);
        history.push(dialect.user("thanks"));
        await take(true);
        expect(ids.size).toBe(1);
        const [conversation] = ids;
        expect(await conversations()).toEqual([conversation]);
        expect(await stored(conversation!)).toEqual([
          ["user", "hi"],
          ["assistant", "Hello."],
          ["user", "open example.com"],
          ["assistant", ""],
          ["tool", "opened"],
          ["assistant", "Opened it."],
          ["user", "thanks"],
          ["assistant", "You are welcome."],
        ]);

        // An earlier message edited, the rest as it was: the history's chain differs, a mismatch and not a continuation.
        const edited = [dialect.user("hello"), ...history.slice(1), dialect.user("more")];
        const mismatch = await refused(dialect, await send(edited, { stream, tools: true }), 409);
        expect(mismatch.code).toBe("history_mismatch");
        // The same with the conversation named: the diff rule reads the same chain.
        const named = await send(edited, { stream, tools: true, conversation: conversation! });
        expect(named.status).toBe(409);
        expect((await dialect.error(named)).code).toBe("history_mismatch");
        expect(await conversations()).toEqual([conversation]);
        expect(upstream.requests).toHaveLength(4);
      });

      it("without X-Conversation-Id, a history two conversations share continues the most recent, and the answer says which others matched", async () => {
        const { send, conversations, stored } = await setup(dialect);
        upstream.script = [{ text: "Hello." }, { text: "Hello." }, { text: "Sure." }];
        // Two conversations with the same exchange: a new chat that starts with the same words is a conversation of its
        // own (the first one's history already holds its answer).
        const a = await send([dialect.user("hi")], { stream });
        const first = a.headers.get("X-Conversation-Id")!;
        const { message: hello } = await dialect.held(a, stream);
        const b = await send([dialect.user("hi")], { stream });
        const second = b.headers.get("X-Conversation-Id")!;
        await dialect.held(b, stream);
        expect(second).not.toBe(first);

        const res = await send([dialect.user("hi"), hello, dialect.user("go on")], { stream });
        expect(res.headers.get("X-Conversation-Id")).toBe(second);
        expect(res.headers.get("X-Conversation-Also-Matched")).toBe(first);
        await dialect.held(res, stream);
        expect(await stored(second)).toHaveLength(4);
        expect(await stored(first)).toHaveLength(2);
        expect((await conversations()).sort()).toEqual([first, second].sort());
      });
    });
  }
}
