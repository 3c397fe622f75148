import { PROBLEMS, type Problem } from "../core/problem";
import type { OpenAIError } from "../protocol/gateway-openai";

/** A failure in OpenAI's shape, with the HTTP status it goes out with (and headers worth passing on, e.g. Retry-After). */
export interface GatewayError {
  status: number;
  body: OpenAIError;
  headers?: Record<string, string>;
}

export function gatewayError(status: number, message: string, code: string | null, options: { type?: string; param?: string | null; headers?: Record<string, string> } = {}): GatewayError {
  const type = options.type ?? (status >= 500 ? "server_error" : status === 401 ? "authentication_error" : status === 404 ? "not_found_error" : "invalid_request_error");
  return { status, body: { error: { message, type, param: options.param ?? null, code } }, ...(options.headers ? { headers: options.headers } : {}) };
}

/** A runtime problem (from the turn, the store, the hub) in OpenAI's shape: the status it has on the rest of the API. */
export function fromProblem(problem: Problem): GatewayError {
  const { status } = PROBLEMS[problem.type];
  const issue = problem.issues?.[0];
  const message = issue ? `${problem.detail} (${issue.path}: ${issue.message})` : problem.detail;
  return gatewayError(status, message, problem.type, { param: issue?.path ?? null });
}

export function errorResponse(error: GatewayError, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(error.body), { status: error.status, headers: { "Content-Type": "application/json", ...headers, ...error.headers } });
}
