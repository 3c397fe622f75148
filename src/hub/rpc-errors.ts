import type { Problem } from "../core/problem";
import { ErrorCode } from "../protocol/jsonrpc";

export interface RpcFailure {
  code: ErrorCode;
  message: string;
  data?: unknown;
}

const CODE_FOR_PROBLEM: Partial<Record<Problem["type"], ErrorCode>> = {
  "invalid-request": ErrorCode.InvalidParams,
  unauthorized: ErrorCode.Unauthorized,
  forbidden: ErrorCode.Forbidden,
  "not-found": ErrorCode.NotFound,
  conflict: ErrorCode.Conflict,
  "payload-too-large": ErrorCode.TooLarge,
  "limit-exceeded": ErrorCode.LimitExceeded,
};

export function problemToRpc(problem: Problem): RpcFailure {
  const failure: RpcFailure = { code: CODE_FOR_PROBLEM[problem.type] ?? ErrorCode.InternalError, message: problem.detail };
  if (problem.issues) failure.data = { issues: problem.issues };
  return failure;
}
