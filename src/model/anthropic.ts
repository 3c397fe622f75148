/**
 * An Anthropic upstream (`UPSTREAM_API=anthropic`, docs/gateway.md "An Anthropic upstream"): the neutral chat-form
 * request converted to a Messages API request, with prompt-cache breakpoints at the end of the stable prefix; and the
 * Messages answer, whole or streamed, read into the same StepAnswer an OpenAI-compatible upstream gives.
 */
import { failWith, ok } from "../core/problem";
import type { UpstreamConfig } from "../platform/config";
import type { ModelClient, ModelError, ModelResult, StepAnswer, TextDeltaSink } from "./client";
import { clientFor } from "./http";

export const ANTHROPIC_VERSION = "2023-06-01";

/**
 * `max_tokens` when the client gave none (Anthropic requires it; Chat Completions clients often leave it out): 4096,
 * the largest output every Claude model accepts (Claude 3 Haiku's limit), so no model refuses the default.
 */
export const DEFAULT_MAX_TOKENS = 4096;

/** Anthropic allows at most 4 blocks with `cache_control` in one request. */
export const MAX_BREAKPOINTS = 4;

const EPHEMERAL = { type: "ephemeral" } as const;

/** The user turn put first when the model's input starts with the assistant's (Anthropic starts with the user). */
export const EARLIER_NOT_SHOWN = "[earlier messages of this conversation are not shown]";

type Json = Record<string, unknown>;

export function anthropicClient(config: UpstreamConfig, send: typeof fetch): ModelClient {
  return clientFor(
    config.url,
    {
      headers: (accept) => ({ "Content-Type": "application/json", Accept: accept, "anthropic-version": ANTHROPIC_VERSION, ...(config.key ? { "x-api-key": config.key } : {}) }),
      body: (request, stream) => anthropicRequest(stream ? { ...request, stream: true } : request),
      answer: readAnthropicMessage,
      streamed: readAnthropicStream,
    },
    send,
  );
}

export interface AnthropicBlock {
  type: string;
  cache_control?: { type: "ephemeral" };
  [key: string]: unknown;
}

export interface AnthropicTurn {
  role: "user" | "assistant";
  content: AnthropicBlock[];
}

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  system?: AnthropicBlock[];
  messages: AnthropicTurn[];
  tools?: { name: string; description?: string; input_schema: Json; cache_control?: { type: "ephemeral" } }[];
  tool_choice?: Json;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  metadata?: { user_id: string };
  stream?: true;
}

interface ChatToolCall {
  id: string;
  function: { name: string; arguments: string };
}

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: ChatToolCall[] | null;
  tool_call_id?: string;
}

/** Anthropic's ids are `^[a-zA-Z0-9_-]+$`: other characters become `_` (the same way in a call and its result, every turn). */
function toolId(id: string): string {
  const cleaned = id.replace(/[^a-zA-Z0-9_-]/g, "_");
  return cleaned || "call";
}

/** A call's arguments as the object Anthropic's `input` must be: `{}` when they are not a JSON object. */
function inputOf(args: string): Json {
  try {
    const parsed: unknown = JSON.parse(args || "{}");
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Json) : {};
  } catch {
    return {};
  }
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === "object" && typeof (p as Json).text === "string" ? ((p as Json).text as string) : "")).join("\n");
  return "";
}

/** A user message's content as blocks: text (empty text left out: Anthropic refuses it) and images by URL. */
function userBlocks(content: unknown): AnthropicBlock[] {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  if (!Array.isArray(content)) return [];
  const blocks: AnthropicBlock[] = [];
  for (const part of content as Json[]) {
    if (part?.type === "text" && typeof part.text === "string" && part.text) blocks.push({ type: "text", text: part.text });
    else if (part?.type === "image_url") {
      const url = (part.image_url as { url?: unknown } | undefined)?.url;
      if (typeof url === "string") blocks.push({ type: "image", source: { type: "url", url } });
    }
  }
  return blocks;
}

/**
 * The chat messages as Messages turns: system messages become `system`; a tool result becomes a `tool_result` block in
 * a user turn, and consecutive results (and a user message right after them) share one; an assistant's tool calls
 * become `tool_use` blocks after its text. Same-role neighbours are merged (Anthropic would merge them anyway), and
 * a message with nothing to send (an empty reply) is left out. `lastBlock[i]` is where chat message `i`'s last block
 * ended up, for the breakpoints.
 */
export function convertMessages(messages: readonly ChatMessage[]): { system: AnthropicBlock[]; turns: AnthropicTurn[]; lastBlock: ({ turn: number; block: number } | { system: number } | null)[] } {
  const system: AnthropicBlock[] = [];
  const turns: AnthropicTurn[] = [];
  const lastBlock: ({ turn: number; block: number } | { system: number } | null)[] = [];
  for (const m of messages) {
    if (m.role === "system" || m.role === "developer") {
      const text = textOf(m.content);
      if (text) system.push({ type: "text", text });
      lastBlock.push(system.length ? { system: system.length - 1 } : null);
      continue;
    }
    let role: "user" | "assistant";
    let blocks: AnthropicBlock[];
    if (m.role === "tool") {
      role = "user";
      const text = textOf(m.content);
      blocks = [{ type: "tool_result", tool_use_id: toolId(m.tool_call_id ?? ""), ...(text ? { content: text } : {}) }];
    } else if (m.role === "assistant") {
      role = "assistant";
      const text = textOf(m.content);
      blocks = [
        ...(text ? [{ type: "text", text }] : []),
        ...(m.tool_calls ?? []).map((c) => ({ type: "tool_use", id: toolId(c.id), name: c.function.name, input: inputOf(c.function.arguments) })),
      ];
    } else {
      role = "user";
      blocks = userBlocks(m.content);
    }
    if (!blocks.length) {
      lastBlock.push(null);
      continue;
    }
    const previous = turns.at(-1);
    if (previous && previous.role === role) previous.content.push(...blocks);
    else turns.push({ role, content: blocks });
    lastBlock.push({ turn: turns.length - 1, block: turns.at(-1)!.content.length - 1 });
  }
  // Anthropic wants a user turn first; a view that starts at an assistant's reply (the budget left out the messages
  // before it) gets a fixed stand-in, the same every time, so the prefix stays stable.
  if (turns[0]?.role === "assistant") {
    turns.unshift({ role: "user", content: [{ type: "text", text: EARLIER_NOT_SHOWN }] });
    return { system, turns, lastBlock: lastBlock.map((at) => (at && "turn" in at ? { turn: at.turn + 1, block: at.block } : at)) };
  }
  return { system, turns, lastBlock };
}

/** OpenAI's `tool_choice` (and `parallel_tool_calls: false`) in Anthropic's terms. */
export function toolChoiceOf(choice: unknown, parallel: unknown): Json | undefined {
  let mapped: Json | undefined;
  if (choice === "auto") mapped = { type: "auto" };
  else if (choice === "required") mapped = { type: "any" };
  else if (choice === "none") mapped = { type: "none" };
  else if (choice && typeof choice === "object") {
    const c = choice as { type?: unknown; function?: { name?: unknown }; allowed_tools?: { mode?: unknown } };
    if (c.type === "function" && typeof c.function?.name === "string") mapped = { type: "tool", name: c.function.name };
    // allowed_tools has no Anthropic counterpart: its mode is kept, the list of tools is not (it would change the cached tool list).
    else if (c.type === "allowed_tools") mapped = { type: c.allowed_tools?.mode === "required" ? "any" : "auto" };
  }
  if (parallel === false && mapped?.type !== "none") mapped = { ...(mapped ?? { type: "auto" }), disable_parallel_tool_use: true };
  return mapped;
}

/**
 * The Messages request for one step, from the neutral chat-form request (the gateway step's `upstreamBody`). Cache breakpoints mark the end
 * of the stable prefix (docs/history.md "A stable, cacheable prefix"), in Anthropic's cache order (tools, system,
 * messages): the last tool definition, the system block, the last block before the turn's new user message (the
 * history the previous turn already sent), and the request's last block (so the next step of the same turn, after
 * the runtime's tools ran, and the next turn read what this one wrote). Never more than four.
 */
export function anthropicRequest(body: Json): AnthropicRequest {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as ChatMessage[];
  const { system, turns, lastBlock } = convertMessages(messages);
  const request: AnthropicRequest = { model: String(body.model ?? ""), max_tokens: maxTokensOf(body), messages: turns };
  if (system.length) request.system = system;

  const tools = Array.isArray(body.tools) ? (body.tools as { function?: { name?: unknown; description?: unknown; parameters?: unknown } }[]) : [];
  if (tools.length) {
    request.tools = tools.map((t) => {
      const f = t.function ?? {};
      const schema = f.parameters && typeof f.parameters === "object" ? (f.parameters as Json) : { type: "object", properties: {} };
      return { name: String(f.name ?? ""), ...(typeof f.description === "string" && f.description ? { description: f.description } : {}), input_schema: schema };
    });
    const choice = toolChoiceOf(body.tool_choice, body.parallel_tool_calls);
    if (choice) request.tool_choice = choice;
  }

  const stop = typeof body.stop === "string" ? [body.stop] : Array.isArray(body.stop) ? (body.stop as unknown[]).filter((s): s is string => typeof s === "string" && s.length > 0) : [];
  if (stop.length) request.stop_sequences = stop;
  if (typeof body.temperature === "number") request.temperature = body.temperature;
  if (typeof body.top_p === "number") request.top_p = body.top_p;
  const user = typeof body.user === "string" ? body.user : typeof body.safety_identifier === "string" ? body.safety_identifier : null;
  if (user) request.metadata = { user_id: user };
  if (body.stream === true) request.stream = true;

  placeBreakpoints(request, messages, lastBlock);
  return request;
}

function maxTokensOf(body: Json): number {
  for (const key of ["max_completion_tokens", "max_tokens"]) {
    const n = body[key];
    if (typeof n === "number" && Number.isInteger(n) && n >= 1) return n;
  }
  return DEFAULT_MAX_TOKENS;
}

function placeBreakpoints(request: AnthropicRequest, messages: readonly ChatMessage[], lastBlock: ReturnType<typeof convertMessages>["lastBlock"]): void {
  const marked = new Set<object>();
  const mark = (target: { cache_control?: unknown } | undefined) => {
    if (!target || marked.has(target) || marked.size >= MAX_BREAKPOINTS) return;
    target.cache_control = EPHEMERAL;
    marked.add(target);
  };
  const blockAt = (at: ReturnType<typeof convertMessages>["lastBlock"][number] | undefined) =>
    !at ? undefined : "system" in at ? request.system?.[at.system] : request.messages[at.turn]?.content[at.block];

  mark(request.tools?.at(-1));
  mark(request.system?.at(-1));
  // The turn's new user message is the last user message (a turn that brings only tool results has none of its own:
  // then the previous user message stands, an earlier but still stable end).
  let newUser = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "user") {
      newUser = i;
      break;
    }
  }
  for (let i = newUser - 1; i >= 0; i--) {
    const at = lastBlock[i];
    if (at && !("system" in at)) {
      mark(blockAt(at));
      break;
    }
    if (at) break; // only the system message before it: already marked
  }
  mark(request.messages.at(-1)?.content.at(-1));
}

// ── the answer ───────────────────────────────────────────────────────────────

interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

const STOP: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};

/** Anthropic's stop reason as a chat-completions finish reason. */
export function finishReasonOf(stopReason: unknown, hasCalls: boolean): string {
  return (typeof stopReason === "string" ? STOP[stopReason] : undefined) ?? (hasCalls ? "tool_calls" : "stop");
}

/** prompt = input + cache reads + cache writes (Anthropic's `input_tokens` counts only what was neither). */
export function usageFrom(u: AnthropicUsage | null | undefined): StepAnswer["usage"] {
  if (!u) return null;
  const input = u.input_tokens ?? 0;
  const read = u.cache_read_input_tokens ?? 0;
  const write = u.cache_creation_input_tokens ?? 0;
  return { promptTokens: input + read + write, completionTokens: u.output_tokens ?? 0, cachedTokens: read, reasoningTokens: null, cacheWriteTokens: write };
}

/** A whole (non-streamed) Messages answer. */
export function readAnthropicMessage(json: unknown, status = 200): ModelResult<StepAnswer> {
  const invalid = (why: string) => failWith<ModelError>({ kind: "invalid", status, message: `not an Anthropic message: ${why}` });
  if (!json || typeof json !== "object") return invalid("not an object");
  const m = json as { type?: unknown; content?: unknown; stop_reason?: unknown; usage?: AnthropicUsage; model?: unknown };
  if (m.type !== "message" || !Array.isArray(m.content)) return invalid("no `content`");
  let text: string | null = null;
  const toolCalls: StepAnswer["toolCalls"] = [];
  for (const block of m.content as Json[]) {
    if (block?.type === "text" && typeof block.text === "string") text = (text ?? "") + block.text;
    else if (block?.type === "tool_use" && typeof block.id === "string" && typeof block.name === "string") {
      toolCalls.push({ id: block.id, type: "function", function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    }
    // thinking, redacted_thinking and server-tool blocks: nothing the gateway sends on
  }
  return ok({ content: text, refusal: null, toolCalls, finishReason: finishReasonOf(m.stop_reason, toolCalls.length > 0), usage: usageFrom(m.usage), model: typeof m.model === "string" ? m.model : null });
}

/**
 * A streamed Messages answer, read to its end from its events' data: `text_delta`s go to `onText` as they come;
 * `tool_use` blocks are put together from their `input_json_delta`s. Usage is `message_start`'s, updated by
 * `message_delta`'s (output tokens, and the input counts when it repeats them). A stream that ends before
 * `message_stop`, or carries an `error` event, is an error: nothing of it is a whole reply.
 */
export async function readAnthropicStream(events: AsyncIterable<string>, onText: TextDeltaSink): Promise<ModelResult<StepAnswer>> {
  const broken = (message: string) => failWith<ModelError>({ kind: "broken", message });
  let content: string | null = null;
  const blocks = new Map<number, { kind: "tool"; id: string; name: string; json: string } | { kind: "other" }>();
  const calls: { id: string; name: string; json: string }[] = [];
  let usage: AnthropicUsage | null = null;
  let stopReason: unknown = null;
  let model: string | null = null;
  let stopped = false;
  try {
    for await (const data of events) {
      let event: Json;
      try {
        event = JSON.parse(data) as Json;
      } catch {
        return broken("an event that is not JSON");
      }
      switch (event?.type) {
        case "message_start": {
          const message = (event.message ?? {}) as { model?: unknown; usage?: AnthropicUsage };
          model = typeof message.model === "string" ? message.model : null;
          usage = { ...(message.usage ?? {}) };
          break;
        }
        case "content_block_start": {
          const block = (event.content_block ?? {}) as Json;
          const index = Number(event.index);
          if (block.type === "tool_use") {
            const call = { kind: "tool" as const, id: String(block.id ?? ""), name: String(block.name ?? ""), json: "" };
            blocks.set(index, call);
            calls.push(call);
          } else {
            blocks.set(index, { kind: "other" });
            if (block.type === "text" && typeof block.text === "string" && block.text) {
              content = (content ?? "") + block.text;
              await onText({ content: block.text });
            }
          }
          break;
        }
        case "content_block_delta": {
          const delta = (event.delta ?? {}) as Json;
          if (delta.type === "text_delta" && typeof delta.text === "string") {
            content = (content ?? "") + delta.text;
            if (delta.text) await onText({ content: delta.text });
          } else if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") {
            const block = blocks.get(Number(event.index));
            if (block?.kind === "tool") block.json += delta.partial_json;
          }
          // thinking_delta, signature_delta, citations_delta: nothing the gateway sends on
          break;
        }
        case "message_delta": {
          const delta = (event.delta ?? {}) as Json;
          if (delta.stop_reason != null) stopReason = delta.stop_reason;
          const u = event.usage as AnthropicUsage | undefined;
          if (u) {
            usage ??= {};
            for (const key of ["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"] as const) if (typeof u[key] === "number") usage[key] = u[key];
          }
          break;
        }
        case "message_stop":
          stopped = true;
          break;
        case "error": {
          const e = (event.error ?? {}) as { message?: unknown; type?: unknown };
          const message = typeof e.message === "string" ? e.message : JSON.stringify(e);
          return failWith({ kind: "failed", message });
        }
        default:
          // ping, content_block_stop, and event types added later: nothing to read
          break;
      }
      if (stopped) break;
    }
  } catch (error) {
    return broken(error instanceof Error ? error.message : String(error));
  }
  if (!stopped) return broken("it ended before message_stop");
  const toolCalls = calls.map((c, i) => ({ id: c.id || `toolu_${i}`, type: "function" as const, function: { name: c.name, arguments: c.json || "{}" } }));
  return ok({ content, refusal: null, toolCalls, finishReason: finishReasonOf(stopReason, toolCalls.length > 0), usage: usageFrom(usage), model });
}
