/**
 * The model gateway's OpenAI Chat Completions wire shapes (`POST /v1/chat/completions`, docs/gateway.md): the request
 * a client sends, the answers it gets (a `chat.completion`, or `chat.completion.chunk`s over SSE), the error body, and
 * what the gateway reads from an OpenAI-compatible upstream. Requests are taken as the official clients send them:
 * keys the gateway does not use are dropped, never forwarded (the fidelity table in docs/gateway.md lists each one).
 */
import * as z from "zod";

/** A content part as clients send it; which types the gateway takes is decided where it reads them (text, image_url). */
export const ContentPart = z.looseObject({ type: z.string() });
export const MessageContent = z.union([z.string(), z.array(ContentPart)]).nullish();

export const WireToolCall = z.looseObject({
  id: z.string().min(1).max(128),
  type: z.literal("function").optional(),
  function: z.looseObject({ name: z.string().min(1).max(128), arguments: z.string() }),
});
export type WireToolCall = z.infer<typeof WireToolCall>;

export const ChatRequestMessage = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
  content: MessageContent,
  refusal: z.string().nullish(),
  tool_calls: z.array(WireToolCall).nullish(),
  tool_call_id: z.string().min(1).max(128).optional(),
  name: z.string().optional(),
});
export type ChatRequestMessage = z.infer<typeof ChatRequestMessage>;

/** A function name as model APIs allow it. */
export const FunctionName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "a function name: 1-64 letters, digits, '_' or '-'");

export const ClientTool = z.looseObject({
  type: z.literal("function"),
  function: z.looseObject({
    name: FunctionName,
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});
export type ClientTool = z.infer<typeof ClientTool>;

export const ToolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.looseObject({ type: z.literal("function"), function: z.object({ name: z.string() }) }),
  z.looseObject({ type: z.literal("allowed_tools") }),
]);

/** Sampling and output settings passed to the upstream as they came (null means "not given"). */
export const PASSED_THROUGH = [
  "temperature",
  "top_p",
  "max_tokens",
  "max_completion_tokens",
  "stop",
  "presence_penalty",
  "frequency_penalty",
  "seed",
  "logit_bias",
  "response_format",
  "reasoning_effort",
  "verbosity",
  "service_tier",
  "parallel_tool_calls",
  "user",
  "safety_identifier",
  "prompt_cache_key",
] as const;

export const ChatCompletionRequest = z
  .looseObject({
    model: z.string().min(1).max(300),
    messages: z.array(ChatRequestMessage).min(1).max(10_000),
    stream: z.boolean().nullish(),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
    tools: z.array(ClientTool).max(128).nullish(),
    tool_choice: ToolChoice.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    max_tokens: z.number().int().min(1).nullish(),
    max_completion_tokens: z.number().int().min(1).nullish(),
    stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
    seed: z.number().int().nullish(),
    logit_bias: z.record(z.string(), z.number()).nullish(),
    response_format: z.looseObject({ type: z.enum(["text", "json_object", "json_schema"]) }).nullish(),
    reasoning_effort: z.string().max(32).nullish(),
    verbosity: z.string().max(32).nullish(),
    service_tier: z.string().max(32).nullish(),
    user: z.string().max(256).nullish(),
    safety_identifier: z.string().max(256).nullish(),
    prompt_cache_key: z.string().max(256).nullish(),
    /** One choice only: the runtime stores one reply per turn. */
    n: z.literal(1, { error: "the gateway answers one choice (n = 1)" }).nullish(),
    logprobs: z.literal(false, { error: "log probabilities are not supported by the gateway" }).nullish(),
    top_logprobs: z.null({ error: "log probabilities are not supported by the gateway" }).optional(),
    audio: z.null({ error: "audio output is not supported by the gateway" }).optional(),
    modalities: z.array(z.literal("text", { error: "the gateway answers text only" })).nullish(),
    functions: z.null({ error: "the deprecated `functions` are not supported: declare `tools`" }).optional(),
    function_call: z.null({ error: "the deprecated `function_call` is not supported: use `tool_choice`" }).optional(),
  });
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

// ── what the gateway answers ──

export const CompletionUsage = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  prompt_tokens_details: z.object({ cached_tokens: z.number() }).optional(),
  completion_tokens_details: z.object({ reasoning_tokens: z.number() }).optional(),
});
export type CompletionUsage = z.infer<typeof CompletionUsage>;

export const FinishReason = z.enum(["stop", "length", "tool_calls", "content_filter"]);
export type FinishReason = z.infer<typeof FinishReason>;

export const OutToolCall = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
export type OutToolCall = z.infer<typeof OutToolCall>;

export const ChatCompletion = z.object({
  id: z.string(),
  object: z.literal("chat.completion"),
  created: z.number(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number(),
      message: z.object({
        role: z.literal("assistant"),
        content: z.string().nullable(),
        refusal: z.string().nullable(),
        tool_calls: z.array(OutToolCall).optional(),
      }),
      logprobs: z.null(),
      finish_reason: FinishReason,
    }),
  ),
  usage: CompletionUsage,
});
export type ChatCompletion = z.infer<typeof ChatCompletion>;

export const ChunkToolCallDelta = z.object({
  index: z.number(),
  id: z.string().optional(),
  type: z.literal("function").optional(),
  function: z.object({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
});

export const ChatCompletionChunk = z.object({
  id: z.string(),
  object: z.literal("chat.completion.chunk"),
  created: z.number(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number(),
      delta: z.object({
        role: z.literal("assistant").optional(),
        content: z.string().nullable().optional(),
        refusal: z.string().nullable().optional(),
        tool_calls: z.array(ChunkToolCallDelta).optional(),
      }),
      logprobs: z.null(),
      finish_reason: FinishReason.nullable(),
    }),
  ),
  usage: CompletionUsage.nullable().optional(),
});
export type ChatCompletionChunk = z.infer<typeof ChatCompletionChunk>;

/** OpenAI's error body, on this route for every failure (never problem+json). */
export const OpenAIError = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
});
export type OpenAIError = z.infer<typeof OpenAIError>;

// ── what the gateway reads from the upstream (leniently: OpenAI-compatible servers differ in the details) ──

export const UpstreamUsage = z.looseObject({
  prompt_tokens: z.number().nullish(),
  completion_tokens: z.number().nullish(),
  prompt_tokens_details: z.looseObject({ cached_tokens: z.number().nullish() }).nullish(),
  completion_tokens_details: z.looseObject({ reasoning_tokens: z.number().nullish() }).nullish(),
});
export type UpstreamUsage = z.infer<typeof UpstreamUsage>;

export const UpstreamCompletion = z.looseObject({
  model: z.string().nullish(),
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({
          content: z.string().nullish(),
          refusal: z.string().nullish(),
          tool_calls: z.array(WireToolCall).nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: UpstreamUsage.nullish(),
});

export const UpstreamChunk = z.looseObject({
  model: z.string().nullish(),
  choices: z
    .array(
      z.looseObject({
        delta: z
          .looseObject({
            content: z.string().nullish(),
            refusal: z.string().nullish(),
            tool_calls: z
              .array(
                z.looseObject({
                  index: z.number().nullish(),
                  id: z.string().nullish(),
                  function: z.looseObject({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: UpstreamUsage.nullish(),
});
export type UpstreamChunk = z.infer<typeof UpstreamChunk>;
