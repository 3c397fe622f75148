/**
 * The model gateway's Anthropic Messages wire shapes (`POST /v1/messages`, docs/gateway.md): the request a client
 * sends, the answers it gets (a `message`, or its server-sent events), and the error body. Requests are taken as the
 * official `@anthropic-ai/sdk` sends them: keys the gateway does not use are dropped, never forwarded; those it cannot
 * honour are refused (the fidelity table in docs/gateway.md lists each one).
 */
import * as z from "zod";
import { FunctionName } from "./gateway-openai";

/** A content block as clients send it; which types the gateway takes is decided where it reads them. */
export const AnthropicBlock = z.looseObject({ type: z.string() });
export type AnthropicBlock = z.infer<typeof AnthropicBlock>;

export const AnthropicMessageParam = z.looseObject({
  role: z.enum(["user", "assistant"]),
  content: z.union([z.string(), z.array(AnthropicBlock)]),
});
export type AnthropicMessageParam = z.infer<typeof AnthropicMessageParam>;

export const AnthropicTool = z.looseObject({
  /** Client tools have no type, or `custom`; Anthropic's server tools (`web_search_…`, `bash_…`) are refused. */
  type: z.literal("custom", { error: "only client tools (no `type`, or `custom`) are supported: the upstream runs no Anthropic server tools" }).nullish(),
  name: FunctionName,
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal("object") }),
});
export type AnthropicTool = z.infer<typeof AnthropicTool>;

export const AnthropicToolChoice = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("auto"), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal("any"), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal("tool"), name: z.string(), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal("none") }),
]);
export type AnthropicToolChoice = z.infer<typeof AnthropicToolChoice>;

export const MessagesRequest = z.looseObject({
  model: z.string().min(1).max(300),
  max_tokens: z.number().int().min(1),
  messages: z.array(AnthropicMessageParam).min(1).max(10_000),
  /** Not used: the agent's system prompt stands (as `system` messages on the OpenAI side). */
  system: z.union([z.string(), z.array(AnthropicBlock)]).optional(),
  stream: z.boolean().optional(),
  tools: z.array(AnthropicTool).max(128).optional(),
  tool_choice: AnthropicToolChoice.optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  stop_sequences: z.array(z.string()).max(4, { error: "the upstream takes at most 4 stop sequences" }).optional(),
  metadata: z.looseObject({ user_id: z.string().max(256).nullish() }).optional(),
  /** Accepted and dropped: an OpenAI-compatible upstream has no such settings (docs/gateway.md#fidelity-messages). */
  top_k: z.number().int().min(0).optional(),
  thinking: z.looseObject({ type: z.string() }).optional(),
  service_tier: z.string().optional(),
  /** Refused: the gateway cannot honour them, and dropping them would change the answer. */
  mcp_servers: z.undefined({ error: "MCP servers are not supported by the gateway: the apps' tools are the runtime's" }).optional(),
  container: z.undefined({ error: "containers are not supported by the gateway" }).optional(),
  output_format: z.undefined({ error: "structured outputs are not supported by the gateway" }).optional(),
});
export type MessagesRequest = z.infer<typeof MessagesRequest>;

// ── what the gateway answers ──

export const AnthropicStopReason = z.enum(["end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal"]);
export type AnthropicStopReason = z.infer<typeof AnthropicStopReason>;

export const AnthropicUsage = z.object({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_creation_input_tokens: z.number(),
  cache_read_input_tokens: z.number(),
});
export type AnthropicUsage = z.infer<typeof AnthropicUsage>;

export const TextBlock = z.object({ type: z.literal("text"), text: z.string(), citations: z.null() });
export const ToolUseBlock = z.object({ type: z.literal("tool_use"), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) });
export const ContentBlock = z.discriminatedUnion("type", [TextBlock, ToolUseBlock]);
export type ContentBlock = z.infer<typeof ContentBlock>;

export const AnthropicMessage = z.object({
  id: z.string(),
  type: z.literal("message"),
  role: z.literal("assistant"),
  model: z.string(),
  content: z.array(ContentBlock),
  stop_reason: AnthropicStopReason.nullable(),
  stop_sequence: z.string().nullable(),
  usage: AnthropicUsage,
});
export type AnthropicMessage = z.infer<typeof AnthropicMessage>;

/** The server-sent events of a streamed answer, each sent as `event: <type>` with its JSON on the `data:` line. */
export const AnthropicStreamEvent = z.discriminatedUnion("type", [
  z.object({ type: z.literal("message_start"), message: AnthropicMessage }),
  z.object({ type: z.literal("ping") }),
  z.object({ type: z.literal("content_block_start"), index: z.number(), content_block: ContentBlock }),
  z.object({
    type: z.literal("content_block_delta"),
    index: z.number(),
    delta: z.discriminatedUnion("type", [z.object({ type: z.literal("text_delta"), text: z.string() }), z.object({ type: z.literal("input_json_delta"), partial_json: z.string() })]),
  }),
  z.object({ type: z.literal("content_block_stop"), index: z.number() }),
  z.object({
    type: z.literal("message_delta"),
    delta: z.object({ stop_reason: AnthropicStopReason, stop_sequence: z.string().nullable() }),
    usage: AnthropicUsage,
  }),
  z.object({ type: z.literal("message_stop") }),
  z.object({ type: z.literal("error"), error: z.object({ type: z.string(), message: z.string() }) }),
]);
export type AnthropicStreamEvent = z.infer<typeof AnthropicStreamEvent>;

/** Anthropic's error body, on this route for every failure; `details.error_code` is the gateway's code (the SDK reads it as `errorCode`). */
export const AnthropicError = z.object({
  type: z.literal("error"),
  error: z.object({ type: z.string(), message: z.string(), details: z.object({ error_code: z.string() }).optional() }),
});
export type AnthropicError = z.infer<typeof AnthropicError>;
