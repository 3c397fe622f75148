/**
 * Failures every layer can return without throwing: the API turns them into
 * `application/problem+json`, the hub into JSON-RPC errors.
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

export type Result<T> = { ok: true; value: T } | { ok: false; problem: Problem };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function fail<T = never>(type: ProblemType, detail: string, issues?: Problem["issues"]): Result<T> {
  return { ok: false, problem: issues ? { type, detail, issues } : { type, detail } };
}
