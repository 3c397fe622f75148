import { PROBLEMS, type Problem } from "../core/problem";
import type { ModelError } from "../model";
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

/** Statuses the client may see as they are: its request was refused for what it asked (not for the deployment's key). */
const PASSED_STATUSES = new Set([400, 404, 408, 409, 413, 422, 429]);

/** An upstream call's failure as the client sees it: a status it can act on, in OpenAI's shape. */
export function upstreamError(error: ModelError): GatewayError {
  switch (error.kind) {
    case "unreachable":
      return gatewayError(502, `the upstream model could not be reached: ${error.message}`, "upstream_unreachable");
    case "timeout":
      return gatewayError(504, `the upstream model did not answer within ${error.ms} ms`, "upstream_timeout");
    case "cancelled":
      return gatewayError(502, "the upstream call was cancelled", "upstream_cancelled");
    case "not-json":
      return gatewayError(502, "the upstream model answered with something that is not JSON", "upstream_invalid");
    case "invalid":
      return gatewayError(502, `the upstream model's answer is ${error.message}`, "upstream_invalid");
    case "broken":
      return gatewayError(502, `the upstream model's stream broke off: ${error.message}`, "upstream_stream_broken");
    case "failed":
      return gatewayError(502, `the upstream model failed mid-stream: ${error.message}`, "upstream_error");
    case "status": {
      const headers = error.retryAfter ? { headers: { "Retry-After": error.retryAfter } } : {};
      if (PASSED_STATUSES.has(error.status)) {
        return gatewayError(error.status, error.message, error.code, { ...(error.type ? { type: error.type } : {}), param: error.param, ...headers });
      }
      // The deployment's key refused, or the upstream failing: the client's request was fine, the gateway's upstream was not.
      const auth = error.status === 401 || error.status === 403;
      const why = auth ? "refused the deployment's key (UPSTREAM_KEY)" : "failed";
      // The gateway's own code: the upstream's (its `code`) names its API's failures, not this one's; the message keeps it.
      const theirs = error.code ? ` [${error.code}]` : "";
      return gatewayError(502, `the upstream model ${why} (HTTP ${error.status}${theirs}): ${error.message}`, auth ? "upstream_auth" : "upstream_error", headers);
    }
  }
}

export function errorResponse(error: GatewayError, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(error.body), { status: error.status, headers: { "Content-Type": "application/json", ...headers, ...error.headers } });
}
