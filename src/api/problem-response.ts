import type { Context } from "hono";
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

/** The same answer whether the conversation id is malformed, unknown or someone else's. */
export function noSuchConversation(c: Context): Response {
  return problemResponse(c, { type: "not-found", detail: "no such conversation" });
}
