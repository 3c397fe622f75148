/** An OpenAI-compatible upstream (Chat Completions, the default): the neutral request is its body as it is. */
import { failWith, ok } from "../core/problem";
import type { UpstreamConfig } from "../platform/config";
import { UpstreamChunk, UpstreamCompletion, type UpstreamUsage, type WireToolCall } from "../protocol/gateway-openai";
import type { ModelClient, ModelError, ModelResult, StepAnswer, TextDeltaSink } from "./client";
import { clientFor } from "./http";

export function openAIClient(config: UpstreamConfig, send: typeof fetch): ModelClient {
  return clientFor(
    config.url,
    {
      headers: (accept) => ({ "Content-Type": "application/json", Accept: accept, ...(config.key ? { Authorization: `Bearer ${config.key}` } : {}) }),
      body: (request, stream) => (stream ? { ...request, stream: true, stream_options: { include_usage: true } } : request),
      answer: readCompletion,
      streamed: readChunks,
    },
    send,
  );
}

function usageOf(u: UpstreamUsage | null | undefined): StepAnswer["usage"] {
  if (!u) return null;
  return {
    promptTokens: u.prompt_tokens ?? 0,
    completionTokens: u.completion_tokens ?? 0,
    cachedTokens: u.prompt_tokens_details?.cached_tokens ?? null,
    reasoningTokens: u.completion_tokens_details?.reasoning_tokens ?? null,
    cacheWriteTokens: null,
  };
}

function toolCallsOf(calls: readonly WireToolCall[] | null | undefined): StepAnswer["toolCalls"] {
  return (calls ?? []).map((c) => ({ id: c.id, type: "function" as const, function: { name: c.function.name, arguments: c.function.arguments } }));
}

/** A whole (non-streamed) answer. */
export function readCompletion(json: unknown, status: number): ModelResult<StepAnswer> {
  const parsed = UpstreamCompletion.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return failWith({ kind: "invalid", status, message: "not a chat completion", ...(issue ? { issue: `${issue.path.join(".")}: ${issue.message}` } : {}) });
  }
  const choice = parsed.data.choices[0]!;
  const toolCalls = toolCallsOf(choice.message.tool_calls);
  return ok({
    content: choice.message.content ?? null,
    refusal: choice.message.refusal ?? null,
    toolCalls,
    finishReason: choice.finish_reason ?? (toolCalls.length ? "tool_calls" : "stop"),
    usage: usageOf(parsed.data.usage),
    model: parsed.data.model ?? null,
  });
}

/**
 * A streamed answer, read to its end: text and refusal deltas go to `onText` as they come; tool-call deltas are put
 * together by `index` (by `id` when an upstream leaves the index out, a known compatibility bug). A stream that ends
 * before its finish reason and `[DONE]`, or breaks, or carries an error, is an error: nothing of it is a whole reply.
 */
export async function readChunks(events: AsyncIterable<string>, onText: TextDeltaSink): Promise<ModelResult<StepAnswer>> {
  const broken = (message: string) => failWith<ModelError>({ kind: "broken", message });
  let content: string | null = null;
  let refusal: string | null = null;
  const calls: { id: string; name: string; arguments: string }[] = [];
  let finishReason: string | null = null;
  let usage: StepAnswer["usage"] = null;
  let model: string | null = null;
  let done = false;
  try {
    for await (const data of events) {
      if (data.trim() === "[DONE]") {
        done = true;
        break;
      }
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        return broken("an event that is not JSON");
      }
      if (json && typeof json === "object" && "error" in json) {
        const e = (json as { error: { message?: unknown } }).error;
        return failWith({ kind: "failed", message: typeof e?.message === "string" ? e.message : JSON.stringify(e) });
      }
      const chunk = UpstreamChunk.safeParse(json);
      if (!chunk.success) return broken("an event that is not a chat.completion.chunk");
      model ??= chunk.data.model ?? null;
      if (chunk.data.usage) usage = usageOf(chunk.data.usage);
      const choice = chunk.data.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta;
      if (delta?.content) {
        content = (content ?? "") + delta.content;
        await onText({ content: delta.content });
      }
      if (delta?.refusal) {
        refusal = (refusal ?? "") + delta.refusal;
        await onText({ refusal: delta.refusal });
      }
      for (const d of delta?.tool_calls ?? []) {
        let at = d.index ?? -1;
        if (at < 0) at = d.id && !calls.some((c) => c.id === d.id) ? calls.length : Math.max(calls.length - 1, 0);
        const call = (calls[at] ??= { id: "", name: "", arguments: "" });
        if (d.id) call.id = d.id;
        if (d.function?.name) call.name += d.function.name;
        if (d.function?.arguments) call.arguments += d.function.arguments;
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  } catch (error) {
    return broken(error instanceof Error ? error.message : String(error));
  }
  // Some compatible servers end without [DONE]; a finish reason says the answer is whole all the same.
  if (!finishReason) return broken(done ? "it ended without a finish reason" : "it ended before the answer finished");
  const toolCalls = calls.filter(Boolean).map((c, i) => ({ id: c.id || `call_${i}`, type: "function" as const, function: { name: c.name, arguments: c.arguments } }));
  return ok({ content, refusal, toolCalls, finishReason, usage, model });
}
