import * as z from "zod";

/** JSON-RPC 2.0 framing. Standard codes, plus the server-defined range for runtime errors. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Server-defined (-32000 to -32099). */
  Unauthorized: -32001,
  NotFound: -32002,
  Forbidden: -32003,
  Conflict: -32004,
  TooLarge: -32005,
  NotInitialized: -32006,
  LimitExceeded: -32007,
  /** An answer not given within the deadline the request named. */
  Timeout: -32008,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export const JsonRpcId = z.union([z.string().min(1).max(128), z.number().int()]);
export type JsonRpcId = z.infer<typeof JsonRpcId>;

/** The error member has exactly these fields, like the envelope around it. */
export const JsonRpcError = z.strictObject({ code: z.number().int(), message: z.string(), data: z.unknown().optional() });
export type JsonRpcError = z.infer<typeof JsonRpcError>;

const version = z.literal("2.0");
const Method = z.string().min(1).max(64);

/*
 * Envelopes are strict: a member a shape does not name makes the frame invalid
 * (-32600), so a mixed or misspelt frame is never read as some other kind.
 */
export const JsonRpcRequest = z.strictObject({ jsonrpc: version, id: JsonRpcId, method: Method, params: z.unknown().optional() });
export type JsonRpcRequest = z.infer<typeof JsonRpcRequest>;

export const JsonRpcNotification = z.strictObject({ jsonrpc: version, method: Method, params: z.unknown().optional() });
export type JsonRpcNotification = z.infer<typeof JsonRpcNotification>;

/**
 * `result` must be present: only an explicit `null` means "nothing". An encoder
 * that drops null members (serde's skip_serializing_if, Swift's JSONEncoder)
 * sends an invalid answer, which must not pass for an empty one.
 */
export const JsonRpcSuccess = z.strictObject({
  jsonrpc: version,
  id: JsonRpcId,
  result: z.custom<unknown>((value) => value !== undefined, "an answer needs 'result' (null for nothing) or 'error'"),
});
export const JsonRpcFailure = z.strictObject({ jsonrpc: version, id: JsonRpcId.nullable(), error: JsonRpcError });
export type JsonRpcResponse = z.infer<typeof JsonRpcSuccess> | z.infer<typeof JsonRpcFailure>;

export interface FrameIssue {
  path: string;
  message: string;
}

/**
 * A received frame, sorted by its shape before it is validated: a frame with a
 * `method` is a request or notification whatever else it holds, and never answers
 * anything; one without is an answer, valid or not. `id` of an invalid frame is
 * its id when that is a valid id, else null.
 */
export type IncomingFrame =
  | { kind: "request"; frame: JsonRpcRequest }
  | { kind: "notification"; frame: JsonRpcNotification }
  | { kind: "response"; frame: JsonRpcResponse }
  | { kind: "invalid"; answer: boolean; id: JsonRpcId | null; issues: FrameIssue[] };

export function readFrame(data: unknown): IncomingFrame {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    const message = Array.isArray(data) ? "batches are not supported: send one message per frame" : "a JSON-RPC message is a JSON object";
    return { kind: "invalid", answer: false, id: null, issues: [{ path: "", message }] };
  }
  const answer = plainAnswer(data);
  if (answer) return { kind: "response", frame: answer };
  const parsedId = JsonRpcId.safeParse((data as { id?: unknown }).id);
  const id = parsedId.success ? parsedId.data : null;
  if ("method" in data) {
    if ("id" in data) {
      const request = JsonRpcRequest.safeParse(data);
      return request.success ? { kind: "request", frame: request.data } : { kind: "invalid", answer: false, id, issues: issuesOf(request.error) };
    }
    const notification = JsonRpcNotification.safeParse(data);
    return notification.success ? { kind: "notification", frame: notification.data } : { kind: "invalid", answer: false, id, issues: issuesOf(notification.error) };
  }
  const response = ("error" in data ? JsonRpcFailure : JsonRpcSuccess).safeParse(data);
  return response.success ? { kind: "response", frame: response.data } : { kind: "invalid", answer: true, id, issues: issuesOf(response.error) };
}

/**
 * The frame most often read, a well-formed result, checked without zod: exactly what JsonRpcSuccess yields for it
 * (its members in the schema's order, `result` as sent). Null for anything else, which zod then reads and reports.
 */
export function plainAnswer(data: object): z.output<typeof JsonRpcSuccess> | null {
  // As the strict schema sees members: every enumerable key, inherited ones too.
  let members = 0;
  for (const key in data) {
    if (key !== "jsonrpc" && key !== "id" && key !== "result") return null;
    members++;
  }
  const { jsonrpc, id, result } = data as { jsonrpc?: unknown; id?: unknown; result?: unknown };
  if (members !== 3 || jsonrpc !== "2.0" || result === undefined) return null;
  if (typeof id === "string" ? id.length < 1 || id.length > 128 : !Number.isSafeInteger(id)) return null;
  return { jsonrpc, id: id as JsonRpcId, result };
}

/** `undefined` is sent as `null`: JSON.stringify would drop the member, and an answer without `result` is invalid. */
export function rpcResult(id: JsonRpcId, result: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, result: result === undefined ? null : result });
}

export function rpcError(id: JsonRpcId | null, code: ErrorCode, message: string, data?: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } });
}

export function rpcRequest(id: JsonRpcId, method: string, params: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

export function rpcNotification(method: string, params: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", method, params });
}

/** zod issues, compact enough to travel in an error's `data`. */
export function issuesOf(error: z.ZodError): FrameIssue[] {
  return error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
}
