/**
 * Messages straight from a model SDK (the official `openai` client's `choices[0].message`, tool messages an app
 * built) are accepted as they are handed over and parse to the stored shape; our own bodies stay strict.
 */
import type { ChatCompletionMessage, ChatCompletionToolMessageParam } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { LIMITS } from "../../src/protocol/limits";
import { AppendMessagesBody, SetMessagesBody, ToolResult, TurnBody } from "../../src/protocol/http";
import { AppendableMessage } from "../../src/protocol/messages";

const call = { id: "call_1", type: "function" as const, function: { name: "search_notes", arguments: '{"q":"x"}' } };

/** What openai's `chat.completions.create` returns as `choices[0].message` (openai 6). */
const fromOpenAI = (over: Partial<ChatCompletionMessage> = {}): ChatCompletionMessage => ({ role: "assistant", content: "Hello.", refusal: null, annotations: [], ...over });

// The SDK's own types go in as they are: no cast between the client and the append.
const _assistant: z.input<typeof AppendableMessage> = fromOpenAI();
const _tool: z.input<typeof AppendableMessage> = { role: "tool", tool_call_id: "c", content: [{ type: "text", text: "x" }] } satisfies ChatCompletionToolMessageParam;
void _assistant;
void _tool;

const parse = (m: unknown) => AppendableMessage.safeParse(m);

describe("assistant messages as SDKs return them", () => {
  it("strips refusal, annotations, audio and function_call: only role, content and tool_calls are stored", () => {
    const m = { ...fromOpenAI({ audio: null, function_call: null }), annotations: [{ type: "url_citation", url_citation: { url: "https://x.example", title: "x", start_index: 0, end_index: 1 } }] };
    expect(parse(m)).toEqual({ success: true, data: { role: "assistant", content: "Hello." } });
  });

  it("keeps tool calls, stripping keys the runtime does not store", () => {
    const m = fromOpenAI({ content: null, tool_calls: [{ ...call, index: 0 } as typeof call] });
    expect(parse(m)).toEqual({ success: true, data: { role: "assistant", content: null, tool_calls: [call] } });
  });

  it("stores a refusal as what the model said when there is no content", () => {
    expect(parse(fromOpenAI({ content: null, refusal: "I can't help with that." })).data).toEqual({ role: "assistant", content: "I can't help with that." });
    expect(parse(fromOpenAI({ content: "Partly.", refusal: "No." })).data).toEqual({ role: "assistant", content: "Partly." });
    expect(parse({ role: "assistant", content: null, refusal: null }).data).toEqual({ role: "assistant", content: null });
  });

  it("reads tool_calls null or [] and a missing content as none", () => {
    expect(parse({ role: "assistant", content: "a", tool_calls: [] }).data).toEqual({ role: "assistant", content: "a" });
    expect(parse({ role: "assistant", content: "a", tool_calls: null }).data).toEqual({ role: "assistant", content: "a" });
    expect(parse({ role: "assistant", tool_calls: [call] }).data).toEqual({ role: "assistant", content: null, tool_calls: [call] });
  });

  it("keeps type 'function' required on a tool call and refuses custom tool calls", () => {
    const { type: _, ...untyped } = call;
    expect(parse({ role: "assistant", content: null, tool_calls: [untyped] }).success).toBe(false);
    const custom = parse({ role: "assistant", content: null, tool_calls: [{ id: "c", type: "custom", custom: { name: "x", input: "y" } }] });
    expect(custom.success).toBe(false);
    expect(custom.error?.issues[0]?.message).toContain("only function tool calls");
  });

  it("keeps the text limits on content and refusal", () => {
    const long = "a".repeat(LIMITS.messageChars + 1);
    expect(parse({ role: "assistant", content: long }).success).toBe(false);
    expect(parse({ role: "assistant", content: null, refusal: long }).success).toBe(false);
    expect(parse({ role: "assistant", content: "a".repeat(LIMITS.messageChars) }).success).toBe(true);
  });
});

describe("tool messages", () => {
  it("takes text content parts and stores their text joined by newlines", () => {
    const m = { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: "2 hits" }, { type: "text", text: "done" }] };
    expect(parse(m).data).toEqual({ role: "tool", tool_call_id: "call_1", content: "2 hits\ndone" });
  });

  it("strips name and other keys", () => {
    expect(parse({ role: "tool", tool_call_id: "call_1", name: "search_notes", content: "x" }).data).toEqual({ role: "tool", tool_call_id: "call_1", content: "x" });
  });

  it("refuses non-text parts and a joined text over the limit", () => {
    expect(parse({ role: "tool", tool_call_id: "c", content: [{ type: "image_url", image_url: { url: "https://i.example/a.png" } }] }).success).toBe(false);
    const half = "a".repeat(LIMITS.toolResultChars / 2);
    expect(parse({ role: "tool", tool_call_id: "c", content: [{ type: "text", text: half }, { type: "text", text: half }] }).success).toBe(false);
    expect(parse({ role: "tool", tool_call_id: "c", content: [{ type: "text", text: half }, { type: "text", text: half.slice(1) }] }).success).toBe(true);
    expect(parse({ role: "tool", tool_call_id: "c", content: "a".repeat(LIMITS.toolResultChars + 1) }).success).toBe(false);
  });
});

describe("bodies", () => {
  it("appends an assistant message with its calls and their results in one body", () => {
    const body = AppendMessagesBody.parse({
      messages: [fromOpenAI({ content: null, tool_calls: [call] }), { role: "tool", tool_call_id: "call_1", name: "search_notes", content: [{ type: "text", text: "2 hits" }] }],
    });
    expect(body.messages).toEqual([
      { role: "assistant", content: null, tool_calls: [call] },
      { role: "tool", tool_call_id: "call_1", content: "2 hits" },
    ]);
  });

  it("still refuses unknown keys on the append body itself and other roles", () => {
    expect(AppendMessagesBody.safeParse({ messages: [fromOpenAI()], extra: 1 }).success).toBe(false);
    expect(AppendMessagesBody.safeParse({ messages: [{ role: "user", content: "hi" }] }).success).toBe(false);
  });

  it("takes SDK-shaped messages in a resume, while user messages stay strict", () => {
    const ok = SetMessagesBody.safeParse({ messages: [{ role: "user", content: "hi" }, fromOpenAI({ content: null, refusal: "No." })] });
    expect(ok.data?.messages).toEqual([{ role: "user", content: "hi" }, { role: "assistant", content: "No." }]);
    expect(SetMessagesBody.safeParse({ messages: [{ role: "user", content: "hi", name: "x" }] }).success).toBe(false);
  });

  it("takes tool results in a turn as text parts or with a tool message's keys, while the turn body stays strict", () => {
    expect(ToolResult.parse({ role: "tool", tool_call_id: "c", name: "t", content: [{ type: "text", text: "r" }] })).toEqual({ tool_call_id: "c", content: "r" });
    const turn = TurnBody.parse({ agent: "notes:assistant", toolResults: [{ tool_call_id: "c", content: [{ type: "text", text: "r" }] }] });
    expect(turn.toolResults).toEqual([{ tool_call_id: "c", content: "r" }]);
    expect(TurnBody.safeParse({ agent: "notes:assistant", message: "hi", extra: 1 }).success).toBe(false);
    expect(TurnBody.safeParse({ agent: "notes:assistant", toolResults: [{ toolCallId: "c", content: "r" }] }).success).toBe(false);
  });
});
