import type { Context } from "hono";
import { PROBLEMS, type Problem } from "../core/problem";
import type { ProblemDocument } from "../protocol/frontend";

/** RFC 9457 problem details with a stable `type` per kind of failure. */
export function problemResponse(c: Context, problem: Problem): Response {
  const { status, title } = PROBLEMS[problem.type];
  const body: ProblemDocument = { type: `urn:context-runtime:problem:${problem.type}`, title, status, detail: problem.detail };
  if (problem.issues) body.issues = problem.issues;
  return c.body(JSON.stringify(body), status, { "Content-Type": "application/problem+json" });
}
