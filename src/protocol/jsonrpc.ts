import { z } from "zod";

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
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export const JsonRpcId = z.union([z.string().min(1).max(128), z.number().int()]);
export type JsonRpcId = z.infer<typeof JsonRpcId>;

export const JsonRpcError = z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() });
export type JsonRpcError = z.infer<typeof JsonRpcError>;

const version = z.literal("2.0");

export const JsonRpcRequest = z.object({
  jsonrpc: version,
  id: JsonRpcId,
  method: z.string().min(1).max(64),
  params: z.unknown().optional(),
});
export type JsonRpcRequest = z.infer<typeof JsonRpcRequest>;

export const JsonRpcNotification = z.object({
  jsonrpc: version,
  id: z.never().optional(),
  method: z.string().min(1).max(64),
  params: z.unknown().optional(),
});
export type JsonRpcNotification = z.infer<typeof JsonRpcNotification>;

/** `result` may be missing: encoders that drop null members (serde, Swift) send `null` that way. Read it as `result ?? null`. */
export const JsonRpcSuccess = z.object({ jsonrpc: version, id: JsonRpcId, result: z.unknown().optional() });
export const JsonRpcFailure = z.object({ jsonrpc: version, id: JsonRpcId.nullable(), error: JsonRpcError });
export type JsonRpcFailure = z.infer<typeof JsonRpcFailure>;

/**
 * Any frame either side may send. Unknown members are ignored (as JSON-RPC
 * implementations commonly add them); a failure is tried before a success so
 * an `error` member is never dropped.
 */
export const JsonRpcFrame = z.union([JsonRpcRequest, JsonRpcNotification, JsonRpcFailure, JsonRpcSuccess]);
export type JsonRpcFrame = z.infer<typeof JsonRpcFrame>;

export function isResponse(frame: JsonRpcFrame): frame is z.infer<typeof JsonRpcSuccess> | JsonRpcFailure {
  return !("method" in frame);
}

export function rpcResult(id: JsonRpcId, result: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, result });
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
export function issuesOf(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
}
