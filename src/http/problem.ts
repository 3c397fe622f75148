import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { PROBLEMS, type Problem, type Result } from "../core/problem";
import type { ProblemDocument } from "../protocol/frontend";

/** RFC 9457 problem details with a stable `type` per kind of failure. */
export function problemResponse(c: Context, problem: Problem): Response {
  const { status, title } = PROBLEMS[problem.type];
  const body: ProblemDocument = { type: `urn:context-runtime:problem:${problem.type}`, title, status, detail: problem.detail };
  if (problem.issues) body.issues = problem.issues;
  return c.body(JSON.stringify(body), status, { "Content-Type": "application/problem+json" });
}

/** A result as an answer: its value as JSON, or its problem. */
export function reply<T>(c: Context, result: Result<T>, status: 200 | 201 = 200): Response {
  return result.ok ? c.json(result.value as object, status) : problemResponse(c, result.problem);
}

/**
 * A refusal from middleware (the API key, a validator, the conversation of `:id`), before any route runs: hono's way
 * is to throw it, and `onError` answers it as problem+json.
 */
export class ProblemException extends HTTPException {
  constructor(readonly problem: Problem) {
    super(PROBLEMS[problem.type].status, { message: problem.detail });
  }
}

/** The one place errors become answers: a refusal as its problem, anything else (a bug) as a 500. */
export function onError(error: Error, c: Context): Response {
  if (error instanceof ProblemException) return problemResponse(c, error.problem);
  // The message only: bodies may carry secrets and are never logged.
  console.error("unhandled error", error.message);
  return c.json({ type: "urn:context-runtime:problem:internal", title: "Internal error", status: 500, detail: "an unexpected error occurred" }, 500, {
    "Content-Type": "application/problem+json",
  });
}

export function notFound(c: Context): Response {
  return problemResponse(c, { type: "not-found", detail: `no route ${c.req.method} ${new URL(c.req.url).pathname}` });
}
