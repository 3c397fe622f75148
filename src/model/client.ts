/**
 * One model client for every model call the runtime makes (the gateway's steps, the model guard, the model
 * summariser), the way the Vercel AI SDK's provider interface works: one neutral request, one answer, one error type,
 * and one implementation per API (openai.ts, anthropic.ts) chosen by the upstream's configuration (index.ts).
 */
import type { Result } from "../core/problem";

/**
 * The request, in the one shape every caller builds: a Chat Completions body (`model`, `messages`, `tools`, settings
 * in OpenAI's names). An OpenAI-compatible upstream gets it as it is; an Anthropic one gets it converted.
 */
export type ModelRequest = Record<string, unknown>;

/** The model's message from one call, its finish reason (in Chat Completions' terms) and its real usage. */
export interface StepAnswer {
  content: string | null;
  refusal: string | null;
  toolCalls: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  finishReason: string;
  /** `cacheWriteTokens`: prompt tokens written to the upstream's cache (an Anthropic upstream reports them; null otherwise). */
  usage: { promptTokens: number; completionTokens: number; cachedTokens: number | null; reasoningTokens: number | null; cacheWriteTokens?: number | null } | null;
  model: string | null;
}

/** Why a call gave no answer, whichever API the upstream speaks; each caller words it once, in its own terms. */
export type ModelError =
  /** The request never got an answer (DNS, connection, TLS). */
  | { kind: "unreachable"; message: string }
  /** `deadlineMs` passed first: the request was aborted. */
  | { kind: "timeout"; ms: number }
  /** The caller's signal aborted the call. */
  | { kind: "cancelled" }
  /** A status that is not 2xx, with what the upstream's error body says (both APIs put it under `error`). */
  | { kind: "status"; status: number; message: string; type: string | null; code: string | null; param: string | null; retryAfter: string | null; body: string }
  /** A 2xx whose body is not JSON. */
  | { kind: "not-json"; status: number }
  /** A 2xx whose JSON is not the API's answer: `message` says what it is not, `issue` where, when known. */
  | { kind: "invalid"; status: number; message: string; issue?: string }
  /** A stream that ended or broke before the answer was whole. */
  | { kind: "broken"; message: string }
  /** The upstream reported an error inside its stream. */
  | { kind: "failed"; message: string };

export type ModelResult<T> = Result<T, ModelError>;

/** Text and refusal deltas of a streamed answer, as they come. */
export type TextDeltaSink = (delta: { content?: string; refusal?: string }) => Promise<void> | void;

/** A streamed answer the upstream accepted: `read` reads it to its end. */
export interface AnswerStream {
  read(onText: TextDeltaSink): Promise<ModelResult<StepAnswer>>;
}

export interface CallOptions {
  /** Aborts the call (the answer is then `cancelled`). */
  signal?: AbortSignal;
  /** The whole call, answer read included, within this many ms (else `timeout`), even over a fetch that ignores its signal. */
  deadlineMs?: number;
}

export interface ModelClient {
  /** One call, its whole answer read. */
  complete(request: ModelRequest, options?: CallOptions): Promise<ModelResult<StepAnswer>>;
  /** One streamed call: an error status comes back here, before any of the answer is read. */
  stream(request: ModelRequest, options?: CallOptions): Promise<ModelResult<AnswerStream>>;
}
