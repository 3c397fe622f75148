/**
 * Failures every layer can return without throwing: the API turns them into
 * `application/problem+json`, the hub into JSON-RPC errors, the gateway into
 * each model API's error shape. A throw is a bug, never an answer.
 */
export const PROBLEMS = {
  "invalid-request": { status: 400, title: "The request is not valid" },
  unauthorized: { status: 401, title: "Missing or invalid credentials" },
  forbidden: { status: 403, title: "Not allowed" },
  "not-found": { status: 404, title: "Not found" },
  "method-not-allowed": { status: 405, title: "Method not allowed" },
  conflict: { status: 409, title: "Conflicts with the current state" },
  "payload-too-large": { status: 413, title: "Payload too large" },
  "unsupported-media-type": { status: 415, title: "Send application/json" },
  "limit-exceeded": { status: 422, title: "A limit was reached" },
  "not-accepted": { status: 422, title: "The content was not accepted" },
  "provider-unavailable": { status: 424, title: "The app behind this provider did not answer" },
  "upgrade-required": { status: 426, title: "Upgrade to a WebSocket" },
} as const;

export type ProblemType = keyof typeof PROBLEMS;

export interface Problem {
  type: ProblemType;
  detail: string;
  issues?: { path: string; message: string }[];
}

/** A value, or why there is none: a `Problem` unless a layer names its own failure (e.g. an upstream's error). */
export type Result<T, E = Problem> = { ok: true; value: T } | { ok: false; problem: E };

export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

/** A failure of a layer's own kind (`fail` makes a Problem). */
export function failWith<E>(problem: E): { ok: false; problem: E } {
  return { ok: false, problem };
}

export function fail<T = never>(type: ProblemType, detail: string, issues?: Problem["issues"]): Result<T> {
  return { ok: false, problem: issues ? { type, detail, issues } : { type, detail } };
}
