/**
 * What both APIs share: posting the request, the call's deadline and cancel, reading an error status, and a client
 * built from one API's headers, request and answer readers (openai.ts, anthropic.ts).
 */
import { failWith, ok } from "../core/problem";
import type { AnswerStream, CallOptions, ModelClient, ModelError, ModelRequest, ModelResult, StepAnswer, TextDeltaSink } from "./client";
import { sseEvents } from "./sse";

/** One API: its headers (the key included), its request from the neutral one, and its answer, whole or streamed. */
export interface ModelApi {
  headers(accept: string): Record<string, string>;
  body(request: ModelRequest, stream: boolean): unknown;
  answer(json: unknown, status: number): ModelResult<StepAnswer>;
  streamed(events: AsyncIterable<string>, onText: TextDeltaSink): Promise<ModelResult<StepAnswer>>;
}

/** The most of an error body kept (for callers that quote its start). */
const ERROR_BODY_CHARS = 1_000;

export function clientFor(url: string, api: ModelApi, send: typeof fetch): ModelClient {
  return {
    async complete(request, options) {
      const opened = await post(send, url, api.headers("application/json"), api.body(request, false), options);
      if (!opened.ok) return opened;
      const { res, within } = opened.value;
      return within(
        res.json().then(
          (json: unknown) => api.answer(json, res.status),
          () => failWith<ModelError>({ kind: "not-json", status: res.status }),
        ),
      );
    },
    async stream(request, options) {
      const opened = await post(send, url, api.headers("text/event-stream"), api.body(request, true), options);
      if (!opened.ok) return opened;
      const { res, within } = opened.value;
      const stream: AnswerStream = {
        read: (onText) => within(res.body ? api.streamed(sseEvents(res.body), onText) : Promise.resolve(failWith<ModelError>({ kind: "broken", message: "no body" }))),
      };
      return ok(stream);
    },
  };
}

interface Opened {
  res: Response;
  /** Reads the answer within the call's deadline and cancel, and ends the call. */
  within<T>(work: Promise<ModelResult<T>>): Promise<ModelResult<T>>;
}

/** Posts one request; a status that is not 2xx is an error, read from its body. */
async function post(send: typeof fetch, url: string, headers: Record<string, string>, body: unknown, options: CallOptions = {}): Promise<ModelResult<Opened>> {
  const { signal, deadlineMs } = options;
  if (signal?.aborted) return failWith({ kind: "cancelled" });
  const controller = new AbortController();
  let stop!: (error: ModelError) => void;
  // The deadline (or the caller's cancel) wins even over a fetch, or a body, that ignores its signal.
  const stopped = new Promise<ModelResult<never>>((resolve) => {
    stop = (error) => {
      resolve(failWith(error));
      controller.abort();
    };
  });
  const onAbort = () => stop({ kind: "cancelled" });
  signal?.addEventListener("abort", onAbort, { once: true });
  const timer = deadlineMs === undefined ? undefined : setTimeout(() => stop({ kind: "timeout", ms: deadlineMs }), deadlineMs);
  const end = () => {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  };
  const within = async <T>(work: Promise<ModelResult<T>>): Promise<ModelResult<T>> => {
    try {
      return await Promise.race([work, stopped]);
    } finally {
      end();
    }
  };
  const sent = await Promise.race([
    send(url, { method: "POST", headers, body: JSON.stringify(body), signal: controller.signal }).then(
      (res) => ok(res),
      (error: unknown) => failWith<ModelError>({ kind: "unreachable", message: error instanceof Error ? error.message : String(error) }),
    ),
    stopped,
  ]);
  if (!sent.ok) {
    end();
    return sent;
  }
  const res = sent.value;
  if (!res.ok) return within(statusError(res));
  return ok({ res, within });
}

/** An error status with what its body says: `{error: {message, type, param, code}}` (Anthropic's `{type: "error", error: {type, message}}` reads the same), `{error: "…"}`, or text. */
async function statusError(res: Response): Promise<ModelResult<never>> {
  const text = await res.text().catch(() => "");
  let upstream: { message?: unknown; type?: unknown; param?: unknown; code?: unknown } = {};
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (parsed && typeof parsed.error === "object" && parsed.error !== null) upstream = parsed.error as typeof upstream;
    else if (parsed && typeof parsed.error === "string") upstream = { message: parsed.error };
  } catch {
    // not JSON: the text itself, shortened, is the message
  }
  const string = (value: unknown) => (typeof value === "string" ? value : null);
  return failWith({
    kind: "status",
    status: res.status,
    message: string(upstream.message) ?? (text.slice(0, 500) || res.statusText || "no message"),
    type: string(upstream.type),
    code: string(upstream.code),
    param: string(upstream.param),
    retryAfter: res.headers.get("Retry-After"),
    body: text.slice(0, ERROR_BODY_CHARS),
  });
}
